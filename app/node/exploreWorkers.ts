/**
 * The lanes of an exploration run over K worker threads (`--workers K`),
 * each worker running its lanes one run at a time
 * (app/node/exploreWorker.ts), and the results come back to be merged
 * (app/explore/report.ts). With K = 1 the lanes run in this thread. Which
 * worker runs a lane changes nothing in what it finds: the report is the
 * same for any K.
 *
 * An exploration of a fixed number of runs deals its lanes one at a time to
 * whichever worker is free (a lane's runs cost from milliseconds to seconds,
 * so lanes dealt in advance, l mod K, left one worker idle while the other
 * ran the longer half). One that runs until stopped (`--time`) gives each
 * worker its lanes l mod K from the start, all run in turn, so that every
 * lane has made about as many runs when it stops.
 */
import type { Worker } from "node:worker_threads";
import { Lane, runLanes, type ExploreConfig, type LaneResult, type RunReport } from "../explore/search.ts";
import type { ExploreWorkerReply, ExploreWorkerRequest } from "../explore/workerProtocol.ts";
import { pushAll } from "../protocol/lists.ts";
import { startThread } from "./threadFlags.ts";

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
  /**
   * The CPU time each worker thread used, in ms (with `results`; none when the lanes ran in this thread):
   * the bench reads the work's balance and the process's other threads (GC, the compiler) from it.
   */
  readonly threadCpuMs: Promise<readonly number[]>;
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
      threadCpuMs: Promise.resolve([]),
      stop: () => {
        stopped = true;
      },
    };
  }
  const threads: Worker[] = [];
  const threadCpuMs: number[] = [];
  // A fixed number of runs: lanes dealt one at a time to a free worker. Until stopped: all at once, l mod K.
  const queue = config.runs !== undefined ? [...lanes] : [];
  let stopped = false;
  const firsts =
    config.runs !== undefined
      ? Array.from({ length: count }, () => [queue.shift() as number])
      : Array.from({ length: count }, (_, w) => lanes.filter((_, i) => i % count === w));
  const results = Promise.all(
    firsts.map(
      (first, w) =>
        new Promise<readonly LaneResult[]>((resolve, reject) => {
          const done: LaneResult[] = [];
          const start: ExploreWorkerRequest = { type: "start", config, lanes: first, more: config.runs !== undefined };
          const worker = startThread(exploreWorkerUrl(), { workerData: start });
          threads.push(worker);
          worker.on("message", (reply: ExploreWorkerReply) => {
            if (reply.type === "run") onRun(reply.report);
            else if (reply.type === "done") {
              pushAll(done, reply.results);
              const next = start.more === true && !stopped ? queue.shift() : undefined;
              if (next !== undefined) {
                worker.postMessage({ type: "lanes", lanes: [next] } satisfies ExploreWorkerRequest);
                return;
              }
              // Nothing more: the thread waits for lanes, and is ended here once its CPU time is read
              // (Worker#cpuUsage is recent, Node 24.6: on an older Node the bench goes without).
              const used =
                typeof worker.cpuUsage === "function" ? worker.cpuUsage() : Promise.reject(new Error("no cpuUsage"));
              void used
                .then(
                  (usage) => (threadCpuMs[w] = (usage.user + usage.system) / 1000),
                  () => {},
                )
                .finally(() => {
                  resolve(done);
                  void worker.terminate();
                });
            } else reject(new Error(`a worker of the exploration failed: ${reply.message}`));
          });
          worker.on("error", (error) => reject(error));
          worker.on("exit", (code) => {
            if (code !== 0) reject(new Error(`a worker of the exploration stopped with exit code ${code}`));
          });
        }),
    ),
  ).then((all) =>
    // Lanes a stop left unstarted made no run.
    [...all.flat(), ...queue.map((l) => new Lane(config, l).result())].sort((a, b) => a.lane - b.lane),
  );
  return {
    results,
    threadCpuMs: results.then(() => threadCpuMs),
    stop: () => {
      stopped = true;
      for (const t of threads) t.postMessage({ type: "stop" } satisfies ExploreWorkerRequest);
    },
  };
}
