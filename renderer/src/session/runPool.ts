/**
 * The app's pool of simulation workers for independent runs (a sweep's
 * points): each a Web Worker of app/sim/worker.ts answering one-shot `run`
 * requests, one at a time (app/sim/runPool.ts hands the next request to the
 * first one free). The page only sends requests and reads replies: every run
 * happens in a worker.
 */
import { poolOf } from "../../../app/sim/runPool.ts";
import type { RunPool } from "../../../app/sim/sweep.ts";
import type { WorkerReply } from "../../../app/sim/worker.ts";
import type { WorkerLike } from "./port.ts";

/** How many workers a sweep gets: one per core the browser reports (at least 2, at most 8). */
export function poolSize(cores: number | undefined = globalThis.navigator?.hardwareConcurrency): number {
  return Math.max(2, Math.min(8, cores ?? 2));
}

/** A pool of `size` workers made by `make`. */
export function workerRunPool(make: () => WorkerLike, size: number): RunPool {
  return poolOf(
    Array.from({ length: Math.max(1, size) }, () => {
      const worker = make();
      return {
        post: (request) => worker.postMessage(request),
        listen(onReply: (reply: WorkerReply) => void, onFailure: (message: string) => void) {
          worker.addEventListener("message", (event) => onReply(event.data as WorkerReply));
          worker.addEventListener("error", (event) => onFailure(event.message ?? "unknown error"));
        },
        terminate: () => worker.terminate(),
      };
    }),
  );
}
