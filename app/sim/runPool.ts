/**
 * A pool of simulation workers for independent runs (a sweep's points): each
 * worker runs app/sim/worker.ts's one-shot `run` requests one at a time (a
 * run is deterministic only alone in its realm: see app/sim/worker.ts), and
 * the next request waiting goes to whichever worker is free first. Node's
 * worker threads (app/node/runPool.ts) and the app's Web Workers
 * (renderer/src/session/runPool.ts) each adapt their workers to
 * {@link PoolWorker}; app/sim/runHere.ts is a worker that is the caller's
 * realm. This module loads no engine: the app's page imports it.
 */
import type { RunPool } from "./sweep.ts";
import type { WorkerReply, WorkerRequest } from "./worker.ts";

/** What the pool needs of one worker. */
export interface PoolWorker {
  post(request: WorkerRequest): void;
  /** Listens to its replies and to its failure (the worker is then gone). */
  listen(onReply: (reply: WorkerReply) => void, onFailure: (message: string) => void): void;
  terminate(): void;
}

interface Job {
  readonly request: WorkerRequest;
  readonly resolve: (reply: WorkerReply) => void;
}

/** A pool over `workers` (at least one). */
export function poolOf(workers: readonly PoolWorker[]): RunPool {
  const queue: Job[] = [];
  const busy = new Map<PoolWorker, Job>();
  const alive = new Set(workers);
  let closed = false;
  const fail = (job: Job, message: string): void =>
    job.resolve({ type: "error", ...(job.request.id !== undefined && { id: job.request.id }), message });
  const next = (worker: PoolWorker): void => {
    const job = queue.shift();
    if (job === undefined) return;
    busy.set(worker, job);
    worker.post(job.request);
  };
  for (const worker of workers) {
    worker.listen(
      (reply) => {
        const job = busy.get(worker);
        busy.delete(worker);
        job?.resolve(reply);
        if (!closed) next(worker);
      },
      (message) => {
        alive.delete(worker);
        const job = busy.get(worker);
        busy.delete(worker);
        if (job !== undefined) fail(job, `the simulation worker failed: ${message}`);
        if (alive.size === 0) for (const waiting of queue.splice(0)) fail(waiting, "no simulation worker is left");
      },
    );
  }
  return {
    size: workers.length,
    run(request) {
      return new Promise((resolve) => {
        const job = { request, resolve };
        if (closed || alive.size === 0)
          return fail(job, closed ? "the pool is closed" : "no simulation worker is left");
        queue.push(job);
        for (const worker of alive) if (!busy.has(worker)) return next(worker);
      });
    },
    close() {
      closed = true;
      for (const waiting of queue.splice(0)) fail(waiting, "cancelled");
      for (const [, job] of busy) fail(job, "cancelled");
      busy.clear();
      for (const worker of workers) worker.terminate();
    },
  };
}
