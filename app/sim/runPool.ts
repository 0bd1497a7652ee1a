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

/** A pool that can take more workers while it runs (app/node/runPool.ts starts threads when the work is worth them). */
export interface GrowingPool extends RunPool {
  /** Adds a worker: it is fed once ready. */
  add(worker: PoolWorker): void;
}

/**
 * A pool over `workers` (at least one), which may grow to `size` workers
 * (runSweep keeps twice that many points in hand).
 */
export function poolOf(workers: readonly PoolWorker[], size = workers.length): GrowingPool {
  const queue: Job[] = [];
  const all: PoolWorker[] = [];
  // Each worker's requests in flight, oldest first (it answers them in order).
  const busy = new Map<PoolWorker, Job[]>();
  const alive = new Set<PoolWorker>();
  const ready = new Set<PoolWorker>();
  // The workers that ran at least one request: the workers a sweep used.
  const used = new Set<PoolWorker>();
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
      used.add(worker);
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
  const attach = (worker: PoolWorker): void => {
    all.push(worker);
    busy.set(worker, []);
    alive.add(worker);
    if (worker.ready === undefined) ready.add(worker);
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
  };
  for (const worker of workers) attach(worker);
  return {
    size: Math.max(size, workers.length),
    get used() {
      return used.size;
    },
    add(worker) {
      if (closed) return worker.terminate();
      attach(worker);
      feed(worker);
    },
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
      for (const worker of all) worker.terminate();
    },
  };
}

/** What a pool knows when it weighs starting more workers (app/node/runPool.ts, after each run in its own thread). */
export interface WorkersWorthInput {
  /** Runs planned and not yet answered. */
  readonly runsLeft: number;
  /** How long a run has taken, on average, in the calling thread (a worker too). */
  readonly msPerRun: number;
  /** How long a new worker takes to its first reply: starting, loading the engine, a first (cold) run. */
  readonly startMs: number;
  /** The workers the pool has, and the most it may have (one per core). */
  readonly workers: number;
  readonly most: number;
}

/**
 * How many workers the runs left are worth (never fewer than the pool has:
 * a started worker is kept). A new worker is ready only after `startMs`,
 * while the workers there are go on; with n workers the work left after that
 * is shared n ways. A worker is worth starting when its share is at least
 * half its start: (work − startMs) / n ≥ startMs / 2. So a small sweep
 * (a few hundred ms of runs, as a thread's start costs) runs in the calling
 * thread alone, and a large one gets every worker.
 */
export function workersWorth({ runsLeft, msPerRun, startMs, workers, most }: WorkersWorthInput): number {
  const have = Math.max(1, Math.min(workers, most));
  if (!(runsLeft > 0) || !(msPerRun > 0)) return have;
  if (!(startMs > 0)) return Math.max(have, most);
  const work = runsLeft * msPerRun;
  const worth = Math.floor((2 * (work - startMs)) / startMs);
  return Math.max(have, Math.min(most, worth));
}
