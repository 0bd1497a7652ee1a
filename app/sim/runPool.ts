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
  /**
   * Settles once the worker can run (a thread has loaded the engine); until
   * then it is given nothing, so that a slow start delays no run the other
   * workers could do. Absent: ready at once.
   */
  readonly ready?: Promise<void>;
  /**
   * Requests it holds at once (default 1): a thread given a second while it
   * runs one starts it from its own queue, without waiting for the pool's
   * thread to hand it over (that thread may be busy running one itself). It
   * still runs them one at a time.
   */
  readonly capacity?: number;
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
  // Each worker's requests in flight, oldest first (it answers them in order).
  const busy = new Map<PoolWorker, Job[]>(workers.map((w) => [w, []]));
  const alive = new Set(workers);
  const ready = new Set(workers.filter((w) => w.ready === undefined));
  let closed = false;
  const fail = (job: Job, message: string): void =>
    job.resolve({ type: "error", ...(job.request.id !== undefined && { id: job.request.id }), message });
  const held = (worker: PoolWorker): Job[] => busy.get(worker) ?? [];
  /** Hands `worker` the requests waiting, up to its capacity. */
  const feed = (worker: PoolWorker): void => {
    if (closed || !alive.has(worker) || !ready.has(worker)) return;
    const jobs = held(worker);
    while (jobs.length < (worker.capacity ?? 1)) {
      const job = queue.shift();
      if (job === undefined) return;
      jobs.push(job);
      worker.post(job.request);
    }
  };
  /** The first worker free, else the first with room. */
  const place = (): void => {
    const candidates = [...ready].filter((w) => alive.has(w));
    const free = candidates.find((w) => held(w).length === 0);
    const target = free ?? candidates.find((w) => held(w).length < (w.capacity ?? 1));
    if (target !== undefined) feed(target);
  };
  for (const worker of workers) {
    worker.listen(
      (reply) => {
        held(worker).shift()?.resolve(reply);
        // A worker that just finished is free: it takes the next waiting request first.
        feed(worker);
      },
      (message) => {
        alive.delete(worker);
        for (const job of held(worker).splice(0)) fail(job, `the simulation worker failed: ${message}`);
        if (alive.size === 0) for (const waiting of queue.splice(0)) fail(waiting, "no simulation worker is left");
      },
    );
    void worker.ready?.then(() => {
      ready.add(worker);
      feed(worker);
    });
  }
  return {
    size: workers.length,
    run(request) {
      return new Promise((resolve) => {
        const job = { request, resolve };
        if (closed || alive.size === 0)
          return fail(job, closed ? "the pool is closed" : "no simulation worker is left");
        queue.push(job);
        place();
      });
    },
    close() {
      closed = true;
      for (const waiting of queue.splice(0)) fail(waiting, "cancelled");
      for (const jobs of busy.values()) for (const job of jobs.splice(0)) fail(job, "cancelled");
      for (const worker of workers) worker.terminate();
    },
  };
}
