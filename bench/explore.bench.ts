/**
 * `npm run bench explore` (issue 26): what `mailscope explore` reaches, in
 * runs and ratios — never a timed test.
 *
 * - Small worlds (≤ 2 domains, ≤ 3 messages): the same runs from the same
 *   seed with 1 and then 2 worker threads, side by side: runs per minute with
 *   2 workers (target ≥ 1,000), and the speed-up 1 → 2 (target ≥ 1.8×). The
 *   two runs make the same worlds (the report is the same for any number of
 *   workers; both in worker threads), so the ratio compares like with like. The machine's load
 *   average and the CPU time used are printed with them: on a machine shared
 *   with other work, wall time says as much about the others as about this.
 *   The CPU time is read for the whole process and for each worker thread
 *   (the rest is V8's GC and compiler threads), and from them the speed-up
 *   the two passes would show on free cores (decision note 0120).
 *   On Linux the threads are also read by name (/proc/self/task) after the
 *   first 500 runs: the work beside a worker thread once V8 has tiered its
 *   code up, and the speed-up 2 cores allow at that share (decision 0230).
 * - Each planted bug (app/sender/plantedBugs.ts): the runs until explore
 *   found it, and the size it shrank to (targets: within 200 runs; at most 2
 *   domains, 1 message, 2 faults).
 * - Coverage: 10,000 runs from one seed with the default options (2
 *   workers): the delivery machine's transitions reached (target: every one a
 *   world can reach), the rules the bundled scenarios' events cite that the
 *   exploration did not (target 0), and the rule coverage reached (target:
 *   more than `mailscope check --coverage` of the bundled scenarios, measured
 *   here in the same run).
 *
 * `EXPLORE_BENCH_RUNS` (small-world runs, default 2000) and
 * `EXPLORE_COVERAGE_RUNS` (default 10000) make it shorter.
 */
import { readdir, readFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { exploreOptions, type ExploreOptions } from "../app/explore/options.ts";
import { buildReport, exploreHeader } from "../app/explore/report.ts";
import { shardLanes, type ExploreConfig } from "../app/explore/search.ts";
import { CAUGHT_BY, HUNT_BUDGET, huntPlantedBug } from "../app/explore/testing.ts";
import { machineGraph } from "../app/explore/coverage.ts";
import { maxOf } from "../app/protocol/lists.ts";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { runLanesInWorkers } from "../app/node/exploreWorkers.ts";
import { useCryptoProvider } from "../app/protocol/webCrypto.ts";
import { PLANTED_BUG_NAMES } from "../app/sender/plantedBugs.ts";
import { runScenarioText } from "../app/sim/runScenario.ts";
import { ruleCoverage } from "../app/trace/ruleEvidence.ts";
import type { RecordedEvent } from "../app/trace/schema.ts";
import { cpuByName, threadTimes, type ThreadTimes } from "./lib/threadCpu.ts";
import type { Bench, BenchResult } from "./types.ts";

// A run's first seconds in a thread are slower (its modules load, V8 compiles).
// Two minutes' worth at the target, so that the threads' start-up (~2 s each, decision 0120) weighs ~5 % of a pass.
const SMALL_RUNS = Number(process.env["EXPLORE_BENCH_RUNS"] ?? 2000);
const COVERAGE_RUNS = Number(process.env["EXPLORE_COVERAGE_RUNS"] ?? 10_000);
const SMALL = exploreOptions({ domains: { max: 2 }, messages: { max: 3 } });
// V8 tiers a worker's code up over its first ~500 runs (decision 0200); the threads' CPU is also read after them.
const WARM_UP = Math.min(500, Math.floor(SMALL_RUNS / 2));

function config(options: ExploreOptions, runs: number, seed: number): ExploreConfig {
  return { seed, runs, options, properties: [], corpus: [], mailscope: "bench" };
}

interface Timed {
  readonly wallMs: number;
  /** CPU time of the whole process: the workers, the main thread, and V8's own threads (GC, the compiler). */
  readonly cpuMs: number;
  /** CPU time of each worker thread. */
  readonly threadCpuMs: readonly number[];
  /** CPU time of the main thread: the pool's own work (starting threads, dealing lanes, taking their messages). */
  readonly mainCpuMs: number;
  readonly load: number;
  /** Each name of thread's CPU ms over the runs after the first {@link WARM_UP} (none without /proc). */
  readonly warm: ReadonlyMap<string, number>;
  /** The same over the first {@link WARM_UP} runs. */
  readonly cold: ReadonlyMap<string, number>;
}

/** Runs `runs` small worlds over `workers` threads: wall ms and CPU ms (this process, and each worker thread). */
async function timed(workers: number): Promise<Timed> {
  const load = loadavg()[0] ?? 0;
  const cpu = process.cpuUsage();
  const main = process.threadCpuUsage();
  const started = performance.now();
  // Worker threads for 1 as for 2 ("always"): the ratio compares threads with threads.
  const lanes = shardLanes(SMALL.lanes, { index: 1, count: 1 });
  // The threads' CPU by name at the start, after the warm-up's runs and at the last run (before the threads end).
  const marks: ThreadTimes[] = [threadTimes()];
  let runs = 0;
  const onRun = (): void => {
    runs++;
    if (runs === WARM_UP || runs === SMALL_RUNS) marks.push(threadTimes());
  };
  const run = runLanesInWorkers(config(SMALL, SMALL_RUNS, 1), lanes, workers, onRun, "always");
  await run.results;
  const [start, warmed, end] = marks;
  const used = process.cpuUsage(cpu);
  const mainUsed = process.threadCpuUsage(main);
  return {
    wallMs: performance.now() - started,
    cpuMs: (used.user + used.system) / 1000,
    mainCpuMs: (mainUsed.user + mainUsed.system) / 1000,
    threadCpuMs: await run.threadCpuMs,
    load,
    cold: start && warmed ? cpuByName(start, warmed) : new Map(),
    warm: warmed && end ? cpuByName(warmed, end) : new Map(),
  };
}

/**
 * The wall time `t` would take on free cores, from its CPU times: no less than its busiest worker thread,
 * nor than its whole CPU time spread over the cores.
 */
function freeCoresMs(t: Timed, cores: number): number {
  return Math.max(maxOf(t.threadCpuMs, 0), t.cpuMs / cores);
}

async function throughput(): Promise<BenchResult[]> {
  const one = await timed(1);
  const two = await timed(2);
  const perMinute = (ms: number): number => (SMALL_RUNS / ms) * 60_000;
  const cores = availableParallelism();
  const busy = `load average ${one.load.toFixed(1)} / ${two.load.toFixed(1)} on ${cores} cores`;
  const perRun = (ms: number): string => `${(ms / SMALL_RUNS).toFixed(1)}`;
  const sum = (list: readonly number[]): number => list.reduce((a, b) => a + b, 0);
  const free = Math.min(2, cores);
  return [
    {
      name: "small worlds, 2 workers",
      value: perMinute(two.wallMs),
      unit: "runs/min",
      target: { op: ">=", value: 1000, label: "≥ 1,000 runs/min" },
      note: `${SMALL_RUNS} runs (≤ 2 domains, ≤ 3 messages) in ${(two.wallMs / 1000).toFixed(1)} s; ${busy}`,
    },
    {
      name: "small worlds, CPU per run",
      value: two.cpuMs / SMALL_RUNS,
      unit: "ms/run",
      note: `with 2 workers (${(one.cpuMs / SMALL_RUNS).toFixed(0)} ms with 1): 2 free cores would run ${Math.round((2 * 60_000) / (two.cpuMs / SMALL_RUNS))} runs/min at this cost; CPU busy ${(one.cpuMs / one.wallMs).toFixed(2)} cores with 1 worker, ${(two.cpuMs / two.wallMs).toFixed(2)} with 2`,
    },
    {
      name: "small worlds, CPU per run in threads",
      value: sum(two.threadCpuMs) / SMALL_RUNS,
      unit: "ms/run",
      note: `the worker threads' own CPU with 2 workers (${perRun(sum(one.threadCpuMs))} with 1); the rest of the process's (V8's GC and compiler threads, the main thread): ${perRun(two.cpuMs - sum(two.threadCpuMs))} with 2, ${perRun(one.cpuMs - sum(one.threadCpuMs))} with 1; the 2 workers' CPU ${two.threadCpuMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(" / ")}`,
    },
    {
      name: "speed-up 1 → 2 workers",
      value: one.wallMs / two.wallMs,
      unit: "ratio",
      target: { op: ">=", value: 1.8, label: "≥ 1.8×" },
      note: `the same ${SMALL_RUNS} runs: ${(one.wallMs / 1000).toFixed(1)} s with 1, ${(two.wallMs / 1000).toFixed(1)} s with 2; ${busy}`,
    },
    {
      name: "CPU-busy cores, 1 → 2 workers",
      value: two.cpuMs / two.wallMs,
      unit: "cores",
      note: `the process's CPU over the wall time: ${(one.cpuMs / one.wallMs).toFixed(2)} cores with 1 worker, ${(two.cpuMs / two.wallMs).toFixed(2)} with 2, on ${cores} cores; the main thread (the pool: threads started, lanes dealt, runs' messages taken) ${perRun(one.mainCpuMs)} / ${perRun(two.mainCpuMs)} ms per run`,
    },
    {
      name: "speed-up 1 → 2 workers, most possible on 2 cores",
      value: one.threadCpuMs.length > 0 ? (free * sum(one.threadCpuMs)) / one.cpuMs : Number.NaN,
      unit: "ratio",
      note: `with 1 worker its thread is the pass's critical path and V8's own threads (GC, the compiler) run beside it on the other core; with 2 they take their share of 2 cores: at most ${free} × the worker's CPU over the process's (${perRun(sum(one.threadCpuMs))} of ${perRun(one.cpuMs)} ms per run), whatever the pool does (decision 0160)`,
    },
    ...besideRows(one, two),
    {
      name: "speed-up 1 → 2 workers on free cores, from CPU times",
      value: freeCoresMs(one, free) / freeCoresMs(two, free),
      unit: "ratio",
      note: `what the wall ratio would be on ${free} idle cores: each pass takes no less than its busiest worker thread nor than its CPU spread over ${free} cores (${(freeCoresMs(one, free) / 1000).toFixed(1)} s with 1, ${(freeCoresMs(two, free) / 1000).toFixed(1)} s with 2)`,
    },
  ];
}

/** CPU ms by name of thread: the worker threads, V8's helpers (GC and concurrent compilers), the rest. */
function split(byName: ReadonlyMap<string, number>): { thread: number; v8: number; rest: number } {
  let thread = 0;
  let v8 = 0;
  let rest = 0;
  for (const [name, ms] of byName) {
    if (name === "WorkerThread") thread += ms;
    else if (name === "V8Worker") v8 += ms;
    else rest += ms;
  }
  return { thread, v8, rest };
}

/**
 * The work beside a worker thread once V8 has tiered its code up (decision 0230): the 1-worker pass's threads by
 * name after its first {@link WARM_UP} runs, and what 2 cores would allow at that share. None without /proc.
 */
function besideRows(one: Timed, two: Timed): BenchResult[] {
  const warm = split(one.warm);
  const cold = split(one.cold);
  if (warm.thread <= 0 || cold.thread <= 0) return [];
  const warmRuns = SMALL_RUNS - WARM_UP;
  const ms = (value: number, runs: number): string => (value / runs).toFixed(1);
  // V8's helpers live as long as the process; a worker thread that ended before the pass's last run is gone from
  // /proc, so the 2 workers' own CPU is their Worker#cpuUsage.
  const twoV8 = (two.cold.get("V8Worker") ?? 0) + (two.warm.get("V8Worker") ?? 0);
  const twoThreads = two.threadCpuMs.reduce((a, b) => a + b, 0);
  return [
    {
      name: "work beside a warm worker thread, 1 worker",
      value: (100 * (warm.v8 + warm.rest)) / warm.thread,
      unit: "% of the thread",
      note: `runs ${WARM_UP}–${SMALL_RUNS}, per run: the thread ${ms(warm.thread, warmRuns)} ms, V8's helpers (GC, concurrent compilers) ${ms(warm.v8, warmRuns)}, the main thread and the rest ${ms(warm.rest, warmRuns)}; over the first ${WARM_UP} runs the thread ${ms(cold.thread, WARM_UP)} and the helpers ${ms(cold.v8, WARM_UP)} ms a run (${((100 * cold.v8) / cold.thread).toFixed(0)} %); with 2 workers, each warming up its own code, the helpers ${twoThreads > 0 ? ((100 * twoV8) / twoThreads).toFixed(0) : "-"} % of the threads over the pass; 1.8× needs under 11 %`,
    },
    {
      name: "speed-up 1 → 2 workers, most possible on 2 cores once warm",
      value: (2 * warm.thread) / (warm.thread + warm.v8 + warm.rest),
      unit: "ratio",
      note: `the row above's bound from runs ${WARM_UP}–${SMALL_RUNS} only, by /proc/self/task's threads: what passes long enough for each worker's warm-up not to count could reach (decision 0230)`,
    },
  ];
}

async function plantedBugs(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const bug of PLANTED_BUG_NAMES) {
    const { finding, runs } = await huntPlantedBug(bug);
    const size = finding?.shrunkSize;
    const small = size !== undefined && size.domains <= 2 && size.messages <= 1 && size.faults <= 2;
    out.push(
      {
        name: `planted ${bug}: runs to find`,
        value: finding === undefined ? Number.POSITIVE_INFINITY : runs,
        unit: "runs",
        target: { op: "<=", value: HUNT_BUDGET, label: `≤ ${HUNT_BUDGET} runs` },
        note: `caught by ${CAUGHT_BY[bug]}; shrunk in ${finding?.shrinkRuns ?? "-"} runs`,
      },
      {
        name: `planted ${bug}: shrunk small`,
        value: small ? 1 : 0,
        unit: "yes",
        target: { op: ">=", value: 1, label: "≤ 2 domains, 1 message, 2 faults" },
        note:
          size === undefined
            ? "not found"
            : `${size.domains} domains, ${size.messages} message, ${size.recipients} recipients, ${size.faults} faults`,
      },
    );
  }
  return out;
}

/** The rules the bundled scenarios' events cite (`mailscope check --coverage`'s). */
async function bundledRules(): Promise<{ covered: Set<string>; percent: number }> {
  const runs: { name: string; events: readonly RecordedEvent[] }[] = [];
  for (const file of (await readdir("scenarios")).filter((f) => f.endsWith(".yaml")).sort()) {
    const result = await runScenarioText(await readFile(`scenarios/${file}`, "utf8"), { file });
    if (result.ok) runs.push({ name: file, events: result.run.trace.events });
  }
  const coverage = ruleCoverage(runs);
  return {
    covered: new Set(coverage.rules.filter((r) => r.events > 0).map((r) => r.id)),
    percent: Math.round((100 * coverage.covered) / coverage.total),
  };
}

async function coverage(): Promise<BenchResult[]> {
  const options = exploreOptions();
  const cfg = config(options, COVERAGE_RUNS, 1);
  const started = performance.now();
  const lanes = await runLanesInWorkers(cfg, shardLanes(options.lanes, { index: 1, count: 1 }), 2).results;
  const seconds = (performance.now() - started) / 1000;
  const report = buildReport(exploreHeader({ ...cfg, runs: COVERAGE_RUNS }), lanes);
  // Transitions no world can take: those out of an invoked actor's failure (the sender's own code or its SMTP port throwing).
  const reachable = machineGraph().transitions.filter((t) => t.trigger !== "error").length;
  const bundled = await bundledRules();
  const reached = new Set(report.coverage.rules.ids);
  const missing = [...bundled.covered].filter((id) => !reached.has(id));
  const where = `${report.runs} runs from seed 1 in ${seconds.toFixed(0)} s`;
  return [
    {
      name: "coverage: delivery machine transitions",
      value: report.coverage.transitions.covered,
      unit: `of ${report.coverage.transitions.total}`,
      target: { op: ">=", value: reachable, label: `every one a world can reach (${reachable})` },
      note: `${where}; not reached: ${report.coverage.transitions.missing.join("; ") || "none"}`,
    },
    {
      name: "coverage: bundled scenarios' rules not reached",
      value: missing.length,
      unit: "rules",
      target: { op: "<=", value: 0, label: "0" },
      note: missing.length === 0 ? `all ${bundled.covered.size} reached` : missing.join(", "),
    },
    {
      name: "coverage: rules cited",
      value: report.coverage.rules.percent,
      unit: "%",
      target: { op: ">=", value: bundled.percent + 1, label: `> check --coverage (${bundled.percent} %)` },
      note: `${report.coverage.rules.covered} of ${report.coverage.rules.total} rules; ${report.coverage.keys} behaviours, ${report.gallery.length} paths; ${report.violations.length === 0 ? "no violation" : `violated: ${report.violations.map((v) => v.property).join(", ")}`}`,
    },
  ];
}

export const bench: Bench = {
  name: "explore",
  description:
    "mailscope explore: small-world runs per minute and the 1 → 2 worker speed-up, the planted bugs, 10,000-run coverage",
  run: async () => {
    useCryptoProvider(nodeCryptoProvider());
    return [...(await throughput()), ...(await plantedBugs()), ...(await coverage())];
  },
};
