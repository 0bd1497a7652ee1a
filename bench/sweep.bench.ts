/**
 * Issue 30's sweep target: a 44-point sweep of
 * `scenarios/receiver-down-past-fallback-window.yaml` (the outage's end 1 h
 * to 6 h in 30-minute steps × fallback windows of 1, 2, 3 and 4 h) in the
 * pool `mailscope sweep` uses (this thread and worker threads, one worker per
 * core) finishes within 2 × the sum of its single runs' engine time divided
 * by the workers used.
 *
 * The single runs are the same 44 requests run one after the other in this
 * thread (a pool of one, `inThisRealm`: `handleWorkerRequest` per point, the
 * engine a worker runs), with the Node crypto provider the worker threads
 * use. Rounds alternate the one-worker and the pooled sweep; the medians
 * count, so a slow moment of the shared machine weighs on both alike.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { createRunPool, defaultWorkers } from "../app/node/runPool.ts";
import { useCryptoProvider } from "../app/protocol/webCrypto.ts";
import { inThisRealm } from "../app/sim/runHere.ts";
import { runSweep, type RunPool } from "../app/sim/sweep.ts";
import { planSweep } from "../app/sim/sweepPlan.ts";
import type { Bench, BenchResult } from "./types.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const FILE = "scenarios/receiver-down-past-fallback-window.yaml";
const VARY = [
  { path: "faults.network[b-down].until", values: "1h..6h/30m" },
  { path: "G16.fallback-window", values: "1h,2h,3h,4h" },
];
const ROUNDS = 3;
const TARGET_RATIO = 2;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function run(): Promise<BenchResult[]> {
  const stop = useCryptoProvider(nodeCryptoProvider());
  try {
    const text = await readFile(join(root, FILE), "utf8");
    const planned = planSweep(text, VARY);
    if (!planned.ok) throw new Error(planned.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
    const { plan } = planned;
    const points = plan.points.length;
    const timed = async (pool: RunPool): Promise<number> => {
      const started = performance.now();
      try {
        const result = await runSweep(plan, { text, file: FILE, pool });
        if (result.runs !== points || result.points.some((p) => p.runs.some((r) => !r.ok))) {
          throw new Error("a point of the bench's sweep failed");
        }
      } finally {
        pool.close();
      }
      return performance.now() - started;
    };
    const workers = Math.min(defaultWorkers(), points);
    const alone: number[] = [];
    const pooled: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(await timed(inThisRealm()));
      pooled.push(await timed(createRunPool(workers, points)));
    }
    const single = median(alone);
    const sweep = median(pooled);
    const ratio = sweep / (single / workers);
    return [
      {
        name: `sweep of ${points} points, ${workers} workers`,
        value: Math.round(sweep),
        unit: "ms",
        note: `median of ${ROUNDS}; the single runs one after the other: ${Math.round(single)} ms`,
      },
      {
        name: "sweep ÷ (single runs ÷ workers)",
        value: Number(ratio.toFixed(2)),
        unit: "ratio",
        target: { op: "<=", value: TARGET_RATIO, label: `≤ ${TARGET_RATIO}` },
        note: `${FILE}, outage 1h..6h/30m × 4 windows, rounds alternated`,
      },
    ];
  } finally {
    stop();
  }
}

export const bench: Bench = {
  name: "sweep",
  description: "a 44-point sweep in the pool of workers against its single runs one after the other (issue 30)",
  run,
};
