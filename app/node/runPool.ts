/**
 * The sweep's runs in worker threads (the points are independent,
 * so they use every worker): each thread (app/node/runPoolThread.ts) runs
 * app/sim/worker.ts's one-shot requests with the Node crypto provider the CLI
 * uses, one at a time, and app/sim/runPool.ts hands the next request to the
 * first worker free; this thread is one of the workers.
 *
 * This is the small interface (`RunPool`) a later common pool (`explore` has
 * one too) can stand behind.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { inThisRealm, thisRealmWorker } from "../sim/runHere.ts";
import { poolOf, type PoolWorker } from "../sim/runPool.ts";
import type { RunPool } from "../sim/sweep.ts";
import type { WorkerReply, WorkerRequest } from "../sim/worker.ts";
import { threadExecArgv } from "./threadFlags.ts";

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
 * A pool of `workers` (at most `runs`: a thread is not started for nothing):
 * this thread and `workers − 1` worker threads. This thread works from the
 * first run while the others start (loading the engine takes a thread a
 * moment).
 */
export function createRunPool(
  workers: number,
  runs = Number.POSITIVE_INFINITY,
  /** The threads' module, if not this build's (a bench runs the built CLI's from the sources). */
  threadModule: URL = THREAD_MODULE,
): RunPool {
  const count = Math.max(1, Math.min(Math.floor(workers), runs));
  if (count === 1) return inThisRealm();
  const threads: PoolWorker[] = Array.from({ length: count - 1 }, () => {
    const thread = new Worker(threadModule, { execArgv: threadExecArgv() });
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
  });
  return poolOf([thisRealmWorker(), ...threads]);
}
