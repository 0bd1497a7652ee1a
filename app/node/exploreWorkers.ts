/**
 * The lanes of an exploration run over K worker threads (`--workers K`):
 * lane l goes to worker l mod K, each worker runs its lanes one run at a
 * time (app/node/exploreWorker.ts), and the results come back to be merged
 * (app/explore/report.ts). With K = 1 the lanes run in this thread. Which
 * worker runs a lane changes nothing in what it finds: the report is the
 * same for any K.
 */
import { Worker } from "node:worker_threads";
import { runLanes, type ExploreConfig, type LaneResult, type RunReport } from "../explore/search.ts";
import type { ExploreWorkerReply, ExploreWorkerRequest } from "../explore/workerProtocol.ts";

/**
 * The module a worker thread starts: beside this file in the sources; in the
 * built CLI (scripts/build-cli.mjs), the entry `exploreWorker.js` at the
 * bundle's root, this code being in `main.js` there or in a chunk under
 * `chunks/`.
 */
export function exploreWorkerUrl(here: string = import.meta.url): URL {
  if (/\.[cm]?ts$/.test(new URL(here).pathname)) return new URL("./exploreWorker.ts", here);
  return new URL(/\/chunks\/[^/]*$/.test(here) ? "../exploreWorker.js" : "./exploreWorker.js", here);
}

/** A running exploration: its results, and a way to stop it early (the runs under way finish). */
export interface LaneRun {
  readonly results: Promise<LaneResult[]>;
  stop(): void;
}

/**
 * Runs `lanes` of `config` over `workers` threads; `onRun` hears every run
 * as it ends. One worker runs in this thread unless `inThreads` says
 * `always` (the bench compares 1 and 2 worker threads like for like).
 */
export function runLanesInWorkers(
  config: ExploreConfig,
  lanes: readonly number[],
  workers: number,
  onRun: (report: RunReport) => void = () => {},
  inThreads: "auto" | "always" = "auto",
): LaneRun {
  const count = Math.max(1, Math.min(workers, lanes.length));
  if (count === 1 && inThreads === "auto") {
    let stopped = false;
    return {
      results: runLanes(config, lanes, { onRun, shouldStop: () => stopped }),
      stop: () => {
        stopped = true;
      },
    };
  }
  const threads: Worker[] = [];
  const parts = Array.from({ length: count }, (_, w) => lanes.filter((_, i) => i % count === w));
  const results = Promise.all(
    parts.map(
      (part) =>
        new Promise<readonly LaneResult[]>((resolve, reject) => {
          const start: ExploreWorkerRequest = { type: "start", config, lanes: part };
          const worker = new Worker(exploreWorkerUrl(), { workerData: start });
          threads.push(worker);
          worker.on("message", (reply: ExploreWorkerReply) => {
            if (reply.type === "run") onRun(reply.report);
            else if (reply.type === "done") {
              resolve(reply.results);
              void worker.terminate();
            } else reject(new Error(`a worker of the exploration failed: ${reply.message}`));
          });
          worker.on("error", (error) => reject(error));
          worker.on("exit", (code) => {
            if (code !== 0) reject(new Error(`a worker of the exploration stopped with exit code ${code}`));
          });
        }),
    ),
  ).then((all) => all.flat());
  return {
    results,
    stop: () => {
      for (const t of threads) t.postMessage({ type: "stop" } satisfies ExploreWorkerRequest);
    },
  };
}
