/**
 * The sweep's runs in worker threads (the points are independent,
 * so they use every worker): each thread (app/node/runPoolThread.ts) runs
 * app/sim/worker.ts's one-shot requests with the Node crypto provider the CLI
 * uses, one at a time, and app/sim/runPool.ts hands the next request to the
 * first worker free; this thread is one of the workers, and the first: the
 * threads start only when the work left is worth them (note 0155).
 *
 * This is the small interface (`RunPool`) a later common pool (`explore` has
 * one too) can stand behind.
 */
import { availableParallelism, loadavg } from "node:os";
import { inThisRealm, thisRealmWorker } from "../sim/runHere.ts";
import { poolOf, workersWorth, type PoolWorker } from "../sim/runPool.ts";
import type { RunPool } from "../sim/sweep.ts";
import type { WorkerReply, WorkerRequest } from "../sim/worker.ts";
import { startThread as startNodeThread } from "./threadFlags.ts";

/**
 * The threads' module: the TypeScript beside this file, or in the built CLI
 * (scripts/build-cli.mjs) the entry `dist-cli/runPoolThread.js`, this module
 * being bundled into a chunk of `dist-cli/chunks/`.
 */
const THREAD_MODULE = import.meta.url.endsWith(".ts")
  ? new URL("./runPoolThread.ts", import.meta.url)
  : new URL("../runPoolThread.js", import.meta.url);

/** The workers a machine gives a sweep by default: one per core it offers. */
export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}

/**
 * How long a thread of each module takes to its first reply before one has
 * been measured in this process: starting, loading the engine, its first
 * (cold) run, on a quiet machine. Measured at a load of 30 on 2 cores (niced), ready
 * alone: the built CLI's bundle 120–250 ms, the TypeScript sources 570–910 ms
 * (note 0155); {@link threadStartEstimate} stretches it by the load.
 */
export const THREAD_START_ESTIMATE_MS = { built: 250, sources: 1000 } as const;

/**
 * How long a thread of `threadModule` would take to its first reply now: the
 * quiet machine's estimate, stretched by the load per core (on a machine
 * whose cores are shared by other work, a thread's start gets its share of a
 * core, as do the runs here that it is weighed against).
 */
export function threadStartEstimate(threadModule: URL = THREAD_MODULE, load = loadavg()[0] ?? 0): number {
  const quiet = THREAD_START_ESTIMATE_MS[threadModule.pathname.endsWith(".ts") ? "sources" : "built"];
  return quiet * Math.max(1, load / availableParallelism());
}

/**
 * A pool of up to `workers` (at most `runs`: a thread is not started for
 * nothing): this thread, and worker threads started when the runs left are
 * worth them (`workersWorth`, weighed after each run here with how long this
 * thread's runs take). A sweep of a few hundred ms of runs ends in this thread
 * before a thread could have loaded the engine, so it starts none; a large one
 * starts every thread after its first runs, which go on here meanwhile.
 */
export function createRunPool(
  workers: number,
  runs = Number.POSITIVE_INFINITY,
  /** The threads' module, if not this build's (a bench runs the built CLI's from the sources). */
  threadModule: URL = THREAD_MODULE,
): RunPool {
  const count = Math.max(1, Math.min(Math.floor(workers), runs));
  if (count === 1) return inThisRealm();
  let startMs = threadStartEstimate(threadModule);
  let startMeasured = false;
  let answered = 0;
  // This thread's runs: the first, and the sum and count of the others.
  const times = { first: 0, sum: 0, count: 0 };
  let threads = 0;
  const weigh = (): void => {
    if (1 + threads >= count) return;
    // A realm's first run is cold (the engine compiles as it goes): the later ones say what a run costs.
    const want = workersWorth({
      runsLeft: runs - answered,
      msPerRun: times.count > 0 ? times.sum / times.count : times.first,
      startMs,
      workers: 1 + threads,
      most: count,
    });
    for (; 1 + threads < want; threads++) {
      const started = performance.now();
      pool.add(
        startThread(threadModule, () => {
          answered++;
          if (!startMeasured) {
            startMeasured = true;
            startMs = performance.now() - started;
          }
        }),
      );
    }
  };
  const pool = poolOf([timedHere(weigh, times, () => answered++)], count);
  return pool;
}

/** This thread as a worker, each run timed into `times`; `weigh` after each. */
function timedHere(
  weigh: () => void,
  times: { first: number; sum: number; count: number },
  onAnswer: () => void,
): PoolWorker {
  let runs = 0;
  const here = thisRealmWorker();
  let started = 0;
  return {
    post(request) {
      started = performance.now();
      here.post(request);
    },
    listen(onReply, onFailure) {
      here.listen((reply) => {
        const ms = performance.now() - started;
        if (runs++ === 0) times.first = ms;
        else {
          times.sum += ms;
          times.count++;
        }
        onAnswer();
        weigh();
        onReply(reply);
      }, onFailure);
    },
    terminate: () => here.terminate(),
  };
}

/** A worker thread of `threadModule`, ready once it has loaded the engine; `onAnswer` after each reply. */
export function startThread(threadModule: URL = THREAD_MODULE, onAnswer: () => void = () => undefined): PoolWorker {
  const thread = startNodeThread(threadModule);
  // A thread waiting for work does not keep the process alive; one running does (it is referenced while busy).
  thread.unref();
  let loaded: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (loaded = resolve));
  let holding = 0;
  return {
    // It says when it has loaded the engine (its first message): the pool gives it nothing before.
    ready,
    // A second request waits in its own queue, so that it goes on without this (busy) thread's hand-over.
    capacity: 2,
    post(request: WorkerRequest) {
      holding++;
      thread.ref();
      thread.postMessage(request);
    },
    listen(onReply: (reply: WorkerReply) => void, onFailure: (message: string) => void) {
      thread.on("message", (reply: WorkerReply | { type: "ready" }) => {
        if (reply.type === "ready") return loaded();
        holding--;
        if (holding === 0) thread.unref();
        onAnswer();
        onReply(reply);
      });
      thread.on("error", (error: Error) => onFailure(error.message));
      thread.on("exit", (code) => {
        if (code !== 0) onFailure(`its thread stopped with exit code ${code}`);
      });
    },
    terminate() {
      void thread.terminate();
    },
  };
}
