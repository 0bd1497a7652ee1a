/**
 * `mailscope sweep <scenario> --vary <path>=<values> …` (note 0066): where
 * does the outcome change? Every point of the grid the `--vary`s make is a
 * full run with its invariants (under every seed of `--seeds`), run in worker
 * threads; the table has a row per point (and recipient) with its outcome,
 * its time, attempts and POSTs — distributions with seeds — and says where
 * an outcome changes (`boundary between 2h and 2h30m: accepted → smtp`).
 * `--refine` bisects each boundary down to a resolution; `--json` and
 * `--csv` print the same as data. Exit 0 when every run happened and held
 * every invariant, 1 when not, 2 for bad input.
 */
import { maxOf } from "../protocol/lists.ts";
import { Command, CommanderError } from "commander";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import { createRunPool, defaultWorkers } from "../node/runPool.ts";
import { formatScenarioError, parseSetArgument, resolveReadings } from "../sim/scenario.ts";
import {
  checksText,
  countText,
  outcomeText,
  runSweep,
  timeText,
  type Distribution,
  type SweepResult,
} from "../sim/sweep.ts";
import { parseResolution, parseSeeds, parseVaryArgument, planSweep, type SweepAxis } from "../sim/sweepPlan.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { PROGRESS_INTERVAL_MS, progressWanted } from "./progress.ts";
import { formatOffset } from "../trace/offset.ts";
import { mailscopeVersion } from "./run.ts";

export { parseResolution };

/** Exit codes: 0 every run held its invariants, 1 not (or a point failed), 2 bad input. */
export const SWEEP_EXIT = { passed: 0, failed: 1, badInput: 2 } as const;

/** The options of `sweep`, as commander hands them over. */
export interface SweepOptions {
  readonly vary?: readonly string[];
  readonly seeds?: string;
  readonly set?: readonly string[];
  readonly refine?: string;
  readonly workers?: string;
  readonly json?: boolean;
  readonly csv?: boolean;
  readonly progress?: boolean;
}

/** Runs the sweep of `file`; resolves to the exit code. */
export async function sweepCommandAction(file: string, options: SweepOptions, io: CliIo = consoleIo): Promise<number> {
  const bad = (message: string): number => {
    io.err(`mailscope sweep: ${message}`);
    return SWEEP_EXIT.badInput;
  };
  if (options.json === true && options.csv === true) return bad("--json and --csv: give one");
  const varies: { path: string; values: string }[] = [];
  for (const v of options.vary ?? []) {
    const parsed = parseVaryArgument(v);
    if (parsed === undefined)
      return bad(
        `--vary takes <path>=<values>, e.g. G16.fallback-window=1h..4h/1h or messages[0].at=0,30m; not "${v}"`,
      );
    varies.push(parsed);
  }
  let settings: [string, string][];
  try {
    settings = (options.set ?? []).map(parseSetArgument);
  } catch (error) {
    return bad((error as Error).message);
  }
  const check = resolveReadings(settings);
  if (!check.ok) return bad(`--set ${check.id}: ${check.message}`);
  let seeds: (number | string)[] | undefined;
  if (options.seeds !== undefined) {
    const parsed = parseSeeds(options.seeds);
    if (!parsed.ok) return bad(parsed.message);
    seeds = parsed.value;
  }
  const refine = options.refine !== undefined ? parseResolution(options.refine) : undefined;
  if (refine !== undefined && !refine.ok) return bad(refine.message);
  let workers = defaultWorkers();
  if (options.workers !== undefined) {
    if (!/^\d+$/.test(options.workers) || Number(options.workers) < 1)
      return bad(`--workers takes a whole number ≥ 1, not "${options.workers}"`);
    workers = Number(options.workers);
  }
  const load = await loadScenarioFile(file);
  if (!load.ok) {
    for (const error of load.errors) io.err(formatScenarioError(error));
    return SWEEP_EXIT.badInput;
  }
  if (load.loaded.emls.size > 0) {
    return bad(
      `${file}: a sweep of a scenario with eml: messages is not supported (its points run from the text alone)`,
    );
  }
  const planned = planSweep(load.loaded.source, varies, seeds);
  if (!planned.ok) {
    for (const e of planned.errors)
      io.err(
        `mailscope sweep: ${e.path === "--vary" || e.path === "--seeds" ? e.path : `--vary ${e.path}`}: ${e.message}`,
      );
    return SWEEP_EXIT.badInput;
  }
  const { plan } = planned;
  const runs = plan.points.length * (plan.seeds?.length ?? 1);
  const pool = createRunPool(workers, runs);
  const now = io.now ?? ((): number => performance.now());
  const started = now();
  let lastProgress = started;
  const wantProgress = progressWanted(options.progress, io);
  let result: SweepResult;
  try {
    result = await runSweep(plan, {
      text: load.loaded.source,
      file,
      pool,
      settings,
      mailscope: mailscopeVersion(),
      ...(refine?.ok === true && { refine: refine.value }),
      onRun: (done, total) => {
        if (!wantProgress) return;
        const t = now();
        if (t - lastProgress < PROGRESS_INTERVAL_MS) return;
        lastProgress = t;
        io.err(
          `sweep: ${done} of ${total} runs, ${pool.used} worker${pool.used === 1 ? "" : "s"}, ${((t - started) / 1000).toFixed(1)} s`,
        );
      },
    });
  } finally {
    pool.close();
  }
  const wallMs = now() - started;
  if (options.json === true)
    io.out(JSON.stringify(sweepJson(result, file, load.loaded.scenario.name, pool.used, wallMs), null, 2));
  else if (options.csv === true) for (const line of sweepCsv(result)) io.out(line);
  else for (const line of sweepTable(result, file, load.loaded.scenario.name, pool.used, wallMs)) io.out(line);
  return result.passed ? SWEEP_EXIT.passed : SWEEP_EXIT.failed;
}

// ---------------------------------------------------------------------------
// Output

const at = (ms: number): string => formatOffset(ms, 0);

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The head line: what was varied, how often each point ran, on how many workers. */
function headLine(result: SweepResult, file: string, name: string, workers: number): string {
  const { plan } = result;
  const axes = plan.axes.map((a) => `${a.path} ${plural(a.values.length, "value")}`).join(" × ");
  const seeds = plan.seeds === undefined ? "1 run each" : `${plural(plan.seeds.length, "seed")} each`;
  return `${name} (${file}): ${plural(plan.points.length, "point")} (${axes}), ${seeds}; ${plural(workers, "worker")}`;
}

/** The printed table: a row per point and recipient, a boundary row where an outcome changes, a summary. */
export function sweepTable(result: SweepResult, file: string, name: string, workers: number, wallMs: number): string[] {
  const { plan, points, boundaries } = result;
  const many = new Set(points.flatMap((p) => p.recipients.map((r) => `${r.message} ${r.recipient}`))).size > 1;
  const header = [
    ...plan.axes.map((a) => a.path),
    ...(many ? ["recipient"] : []),
    "outcome",
    "at",
    "attempts",
    "POSTs",
    "checks",
  ];
  type Row = { readonly cells: string[] } | { readonly boundary: string };
  const rows: Row[] = [];
  const lastAxis = plan.axes.length - 1;
  for (const p of points) {
    const values = p.point.values.map((v) => v.text);
    const recipients = p.recipients.length > 0 ? p.recipients : [undefined];
    recipients.forEach((r, k) => {
      rows.push({
        cells: [
          ...(k === 0 ? values : values.map(() => "")),
          ...(many ? [r === undefined ? "" : `${r.message} ${r.recipient}`] : []),
          r === undefined ? "—" : outcomeText(r),
          timeText(r?.time, at),
          countText(r?.attempts),
          countText(r?.posts),
          k === 0 ? checksText(p) : "",
        ],
      });
    });
    for (const b of boundaries) {
      if (b.fromPoint !== p.point.index || b.axis !== lastAxis) continue;
      rows.push({ boundary: `  ↳ ${b.text}` });
    }
  }
  const widths = header.map((h, i) =>
    maxOf(
      rows.map((r) => ("cells" in r ? (r.cells[i] ?? "").length : 0)),
      h.length,
    ),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const out = [headLine(result, file, name, workers), "", line(header)];
  for (const r of rows) out.push("cells" in r ? line(r.cells) : r.boundary);
  const listed = boundaries.filter((b) => b.axis !== lastAxis || b.refined !== undefined);
  if (listed.length > 0 || result.refineNotes.length > 0) {
    out.push("", "boundaries:");
    for (const b of boundaries) {
      if (b.axis === lastAxis && b.refined === undefined) continue;
      out.push(`  ${b.text}`);
      if (b.refined !== undefined) out.push(`    ${b.refined.text}`);
    }
    for (const note of result.refineNotes) out.push(`  ${note}`);
  }
  const failedRuns = points.flatMap((p) => p.runs).filter((r) => !r.ok || r.invariantsFailed.length > 0).length;
  out.push(
    "",
    `${result.passed ? "passed" : "FAILED"}: ${plural(result.runs, "run")} in ${(wallMs / 1000).toFixed(2)} s; ${boundaries.length} boundar${boundaries.length === 1 ? "y" : "ies"}; ${
      failedRuns === 0 ? "every run held its invariants" : `${plural(failedRuns, "run")} failed or broke an invariant`
    }`,
  );
  return out;
}

function distributionJson(d: Distribution | undefined, time = false): Record<string, unknown> | null {
  if (d === undefined) return null;
  const f = (v: number): number | string => (time ? at(v) : v);
  return {
    n: d.n,
    min: f(d.min),
    median: f(d.median),
    p90: f(d.p90),
    max: f(d.max),
    ...(time && { minMs: d.min, medianMs: d.median, p90Ms: d.p90, maxMs: d.max }),
  };
}

function axisJson(a: SweepAxis): Record<string, unknown> {
  return { path: a.path, kind: a.kind, target: a.target.kind, values: a.values.map((v) => v.text) };
}

/** `--json`: the axes, every point with its runs and distributions, the boundaries. */
export function sweepJson(
  result: SweepResult,
  file: string,
  name: string,
  workers: number,
  wallMs: number,
): Record<string, unknown> {
  const { plan } = result;
  const valuesOf = (values: readonly { text: string }[]): Record<string, string> =>
    Object.fromEntries(plan.axes.map((a, i) => [a.path, values[i]?.text ?? ""]));
  return {
    scenario: name,
    file,
    axes: plan.axes.map(axisJson),
    seeds: plan.seeds ?? null,
    workers,
    runs: result.runs,
    wallMs: Math.round(wallMs),
    passed: result.passed,
    points: result.points.map((p) => ({
      index: p.point.index,
      values: valuesOf(p.point.values),
      recipients: p.recipients.map((r) => ({
        message: r.message,
        recipient: r.recipient,
        outcome: r.mode,
        counts: r.counts,
        ...(r.outcomeText !== undefined && { outcomeText: r.outcomeText }),
        ...(r.rule !== undefined && { rule: r.rule }),
        time: distributionJson(r.time, true),
        attempts: distributionJson(r.attempts),
        posts: distributionJson(r.posts),
      })),
      runs: p.runs.map((r) =>
        r.ok
          ? {
              ...(r.seed !== undefined && { seed: r.seed }),
              hash: r.hash,
              passed: r.passed,
              invariantsFailed: r.invariantsFailed,
              expectationsFailed: r.expectationsFailed,
              events: r.events,
              outcomes: r.outcomes.map((o) => ({ ...o, ...(o.atMs !== undefined && { at: at(o.atMs) }) })),
            }
          : { ...(r.seed !== undefined && { seed: r.seed }), error: r.error },
      ),
    })),
    boundaries: result.boundaries.map((b) => ({
      axis: plan.axes[b.axis]?.path,
      from: b.from.text,
      to: b.to.text,
      held: Object.fromEntries(
        plan.axes.flatMap((a, k) =>
          k === b.axis ? [] : [[a.path, result.points[b.fromPoint]?.point.values[k]?.text ?? ""]],
        ),
      ),
      message: b.message,
      recipient: b.recipient,
      before: b.before,
      after: b.after,
      text: b.text,
      ...(b.refined !== undefined && {
        refined: {
          from: b.refined.from.text,
          to: b.refined.to.text,
          before: b.refined.before,
          after: b.refined.after,
          runs: b.refined.runs,
          resolution: b.refined.resolution,
          text: b.refined.text,
        },
      }),
    })),
    ...(result.refineNotes.length > 0 && { refineNotes: result.refineNotes }),
  };
}

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
function csvField(value: unknown): string {
  const s = value === undefined || value === null ? "" : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** `--csv`: one row per run and recipient (a failed run: one row with its error). */
export function sweepCsv(result: SweepResult): string[] {
  const { plan } = result;
  const header = [
    "point",
    ...plan.axes.map((a) => a.path),
    "seed",
    "message",
    "recipient",
    "outcome",
    "outcome_text",
    "at_ms",
    "at",
    "attempts",
    "posts",
    "rule",
    "invariants_failed",
    "expectations_failed",
    "error",
  ];
  const out = [header.map(csvField).join(",")];
  for (const p of result.points) {
    const values = p.point.values.map((v) => v.text);
    for (const r of p.runs) {
      const head = [p.point.index, ...values, r.seed ?? ""];
      if (!r.ok) {
        out.push([...head, "", "", "error", "", "", "", "", "", "", "", "", r.error].map(csvField).join(","));
        continue;
      }
      for (const o of r.outcomes) {
        out.push(
          [
            ...head,
            o.message,
            o.recipient,
            o.outcome,
            o.outcomeText,
            o.atMs ?? "",
            o.atMs !== undefined ? at(o.atMs) : "",
            o.attempts,
            o.posts,
            o.rule ?? "",
            r.invariantsFailed.join(" "),
            r.expectationsFailed.join(" "),
            "",
          ]
            .map(csvField)
            .join(","),
        );
      }
    }
  }
  return out;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `mailscope sweep <scenario> --vary <path>=<values>… [--seeds 1..N] [--set …] [--refine <res>] [--workers N] [--json|--csv]`. */
export function sweepCommand(): Command {
  return new Command("sweep")
    .description(
      "run a scenario over a range of values (a grid with several --vary) and show where the outcome changes; exit 0 when every run held its invariants, 1 when not, 2 for bad input",
    )
    .argument("<scenario>", "a scenario file (YAML)")
    .option(
      "--vary <path=values>",
      "a number or duration of the scenario (faults.network[b-down].until, messages[0].at), a gap reading (G16.fallback-window) or a draft number (RETRY-2.cap), over a range with a step (1h..6h/30m, 60..5400/60) or a list (1h,2h,4h); repeat for a grid",
      collect,
    )
    .option("--seeds <seeds>", "run every point under each seed (1..20, or 3,7,9) and report distributions")
    .option(
      "--set <gap=reading|knob=value>",
      "a reading or draft number for every point, as run --set (repeatable)",
      collect,
    )
    .option("--refine <resolution>", "bisect each boundary down to this resolution (1m for durations, 1 for numbers)")
    .option(
      "--workers <n>",
      "the most workers: this thread and threads, started when the runs left are worth them (default: one per core)",
    )
    .option("--json", "print JSON: every point, its runs and distributions, the boundaries")
    .option("--csv", "print CSV: one row per run and recipient")
    .option("--progress", "print progress to stderr about once a second (default when stderr is a terminal)")
    .option("--no-progress", "print no progress")
    .action(async (file: string, options: SweepOptions) => {
      const code = await sweepCommandAction(file, options);
      if (code !== 0) throw new CommanderError(code, "mailscope.sweep.exit", "");
    });
}
