/**
 * Runs in the caller's realm (app/sim/runPool.ts): a {@link PoolWorker} that
 * is this thread, and a pool of just that. The engine comes with it, so the
 * app's page does not import this module (its runs go to Web Workers).
 */
import { poolOf, type PoolWorker } from "./runPool.ts";
import type { RunPool } from "./sweep.ts";
import { handleWorkerRequest, type WorkerReply } from "./worker.ts";

/**
 * A worker that is this realm: each request runs here, when the pool hands it
 * one (one at a time, as every worker). A pool of threads keeps one of these
 * beside them, so that the caller's core works while the threads start.
 */
export function thisRealmWorker(): PoolWorker {
  let onReply: ((reply: WorkerReply) => void) | undefined;
  let ended = false;
  return {
    post(request) {
      void handleWorkerRequest(request).then((reply) => {
        if (!ended) onReply?.(reply);
      });
    },
    listen(reply) {
      onReply = reply;
    },
    terminate() {
      ended = true;
    },
  };
}

/** Runs in this realm, one request after the other (a pool of one, without a thread). */
export function inThisRealm(): RunPool {
  return poolOf([thisRealmWorker()]);
}
