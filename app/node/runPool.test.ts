/**
 * The sweep's worker threads (note 0155): a point run in a thread
 * is the run this thread makes of it, hash for hash; and the pool of
 * `mailscope sweep` starts its threads when the runs left are worth them,
 * every one for a sweep of unknown size.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { inThisRealm } from "../sim/runHere.ts";
import { poolOf } from "../sim/runPool.ts";
import { runSweep, type RunPool } from "../sim/sweep.ts";
import { planSweep } from "../sim/sweepPlan.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";
import { availableParallelism } from "node:os";
import { createRunPool, startThread, THREAD_START_ESTIMATE_MS, threadStartEstimate } from "./runPool.ts";

const FILE = "scenarios/receiver-down-past-fallback-window.yaml";

async function hashes(pool: RunPool): Promise<(string | undefined)[]> {
  const text = await readFile(FILE, "utf8");
  const planned = planSweep(text, [
    { path: "faults.network[b-down].until", values: "1h,2h30m" },
    { path: "G16.fallback-window", values: "1h..3h/1h" },
  ]);
  if (!planned.ok) throw new Error("no plan");
  try {
    const result = await runSweep(planned.plan, { text, file: FILE, pool });
    return result.points.map((p) => (p.runs[0]?.ok === true ? p.runs[0].hash : undefined));
  } finally {
    pool.close();
  }
}

describe("the sweep's worker threads", () => {
  it("a point run in a thread has the hash of its run here", { timeout: 120_000 }, async () => {
    const stop = useCryptoProvider(nodeCryptoProvider());
    try {
      const here = await hashes(inThisRealm());
      const threads = poolOf([startThread(), startThread()]);
      expect(await hashes(threads)).toEqual(here);
      // How many of the two threads got a point depends on which was ready first (machine speed): one or both.
      expect(threads.used).toBeGreaterThanOrEqual(1);
      expect(threads.used).toBeLessThanOrEqual(2);
      expect(here).toHaveLength(6);
      expect(here.every((h) => h !== undefined)).toBe(true);
    } finally {
      stop();
    }
  });

  it("a pool of one worker is this thread; of unknown size, it is worth every worker", () => {
    expect(createRunPool(1).size).toBe(1);
    const pool = createRunPool(4);
    expect(pool.size).toBe(4);
    expect(pool.used).toBe(0);
    pool.close();
  });

  it("a thread's start is estimated by its module, stretched by the load per core", () => {
    const cores = availableParallelism();
    const built = new URL("file:///x/dist-cli/runPoolThread.js");
    const sources = new URL("file:///x/app/node/runPoolThread.ts");
    expect(threadStartEstimate(built, 0)).toBe(THREAD_START_ESTIMATE_MS.built);
    expect(threadStartEstimate(sources, cores / 2)).toBe(THREAD_START_ESTIMATE_MS.sources);
    expect(threadStartEstimate(built, cores * 10)).toBe(THREAD_START_ESTIMATE_MS.built * 10);
  });
});
