/**
 * The command line's start and a short run (issue 25): how long a person
 * waits for `mailscope`, and how long a warm engine takes for a scenario.
 *
 * 1. `mailscope --version` and `mailscope run scenarios/happy-path.yaml`, each
 *    a fresh process of `bin/mailscope.mjs` under this Node, as `npx mailscope`
 *    runs after set-up: the CLI is built first (scripts/build-cli.mjs, as
 *    `npm run build` does), so the wrapper runs the bundle (`run` its
 *    one-file build, bin/cliEntry.mjs `startEngine`), with Node's compile
 *    cache and `run`'s code cache made by the first (uncounted) round, as a
 *    user's first run makes them. Rounds alternate
 *    with `node -e 0`, a fresh Node that does nothing, measured side by side:
 *    its median is printed beside, and the ratio of each command to it.
 *    Wall time from spawn to exit, medians of {@link ROUNDS} rounds.
 * 2. `rate-limited-then-down` (127 attempts over 5 virtual days) with
 *    `runScenarioText` in this process, its JIT warmed by {@link WARM_UP}
 *    runs first, with the Node crypto provider (what the CLI installs):
 *    the engine's cost for a scenario, start-up excluded. Warm means the
 *    steady state: on a 2.45 GHz host the runs after 5 warm-ups were still
 *    getting faster (runs 36–50 took 0.77 of runs 6–20's time, median of
 *    10 processes, faster in 9; decision 0310), so 35.
 *
 * `node bench/cli.bench.ts` runs it alone.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { useCryptoProvider } from "../app/protocol/webCrypto.ts";
import { runScenarioText } from "../app/sim/runScenario.ts";
import { buildCli } from "../scripts/build-cli.mjs";
import type { Bench, BenchResult } from "./types.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(root, "bin", "mailscope.mjs");
const ROUNDS = 11;
const WARM_UP = 35;
const WARM_ROUNDS = 15;
const SCENARIO = "scenarios/rate-limited-then-down.yaml";

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** Wall ms from spawn to exit of `node args…` run from the repository's root; rejects on a non-zero exit. */
function timed(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${args.join(" ")} exited ${code}: ${err.trim()}`));
    });
  });
}

/** Medians of fresh processes of each command, the commands in turn round after round (the first round not counted). */
async function sideBySide(commands: Readonly<Record<string, readonly string[]>>): Promise<Record<string, number[]>> {
  const took: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, args] of Object.entries(commands)) {
      const ms = await timed(args);
      if (round > 0) took[name]?.push(ms);
    }
  }
  return took;
}

export async function cli(): Promise<BenchResult[]> {
  await buildCli();
  const took = await sideBySide({
    node: ["-e", "0"],
    version: [BIN, "--version"],
    run: [BIN, "run", "scenarios/happy-path.yaml", "--no-progress"],
  });
  const node = median(took["node"] ?? []);
  const version = median(took["version"] ?? []);
  const run = median(took["run"] ?? []);
  const list = (values: readonly number[] | undefined): string => (values ?? []).map((v) => v.toFixed(0)).join(", ");

  const stopProvider = useCryptoProvider(nodeCryptoProvider());
  const text = readFileSync(join(root, SCENARIO), "utf8");
  const warm: number[] = [];
  // What the note says of the run, read from its trace: the bounced delivery's attempts (the give-up's own count),
  // and how many of them reached a POST (the others ended at the capabilities fetch while the receiver was down).
  let attempts = "?";
  let posts = 0;
  try {
    for (let i = 0; i < WARM_UP + WARM_ROUNDS; i++) {
      const started = performance.now();
      const outcome = await runScenarioText(text, { file: SCENARIO, mailscope: "bench" });
      const ms = performance.now() - started;
      if (!outcome.ok) throw new Error(`${SCENARIO} does not load`);
      if (i >= WARM_UP) warm.push(ms);
      const events = outcome.run.trace.events;
      const bounced = events.find((e) => e.name === "delivery.bounced");
      attempts = String((bounced?.data as { attempts?: unknown } | undefined)?.attempts ?? "?");
      const deliveryOf = (e: (typeof events)[number]): unknown => (e.data as { deliveryId?: unknown }).deliveryId;
      const first = events.find((e) => e.name === "attempt.started");
      posts = events.filter((e) => e.name === "attempt.started" && deliveryOf(e) === deliveryOf(first ?? e)).length;
    }
  } finally {
    stopProvider();
  }

  return [
    {
      name: "mailscope --version, fresh process",
      value: version,
      unit: "ms",
      target: { op: "<=", value: 150, label: "< 150 ms" },
      note: `bin/mailscope.mjs running the built CLI; ${(version / node).toFixed(1)} × \`node -e 0\` (${node.toFixed(0)} ms) measured in turn; median of ${ROUNDS} (${list(took["version"])} ms)`,
    },
    {
      name: "mailscope run scenarios/happy-path.yaml, fresh process",
      value: run,
      unit: "ms",
      target: { op: "<=", value: 300, label: "< 300 ms" },
      note: `the same way; ${(run / node).toFixed(1)} × \`node -e 0\`; median of ${ROUNDS} (${list(took["run"])} ms)`,
    },
    {
      name: "node -e 0, fresh process",
      value: node,
      unit: "ms",
      note: "the floor of any fresh process on this machine now, measured in turn with the two above",
    },
    {
      name: "rate-limited-then-down, warm, in process",
      value: median(warm),
      unit: "ms",
      target: { op: "<=", value: 50, label: "< 50 ms" },
      note: `runScenarioText (load, run, checks; ${attempts} attempts over 5 virtual days, ${posts} of them a POST, then the DSN), Node provider, after ${WARM_UP} warm-up runs; median of ${WARM_ROUNDS} (${list(warm)} ms)`,
    },
  ];
}

export const bench: Bench = {
  name: "cli",
  description: "mailscope --version and a small run in fresh processes; a scenario run warm in process",
  run: cli,
};

if (import.meta.main) {
  const { formatTable } = await import("./run.ts");
  console.log(formatTable((await cli()).map((result) => ({ bench: "cli", result }))));
}
