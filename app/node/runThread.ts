/**
 * Where a large run lives (decision 0130): a worker thread whose
 * young generation V8 may not grow past a few MiB. A run keeps most of what it
 * makes (every trace event survives), so on the main thread V8 grows the
 * young generation to its maximum (128 MiB reserved for a fleet) for objects
 * that are promoted anyway; a small one holds the same run in ~90 MiB less at
 * the same CPU time. The bound can only be set when an isolate is made (a
 * command-line flag, or a Worker's `resourceLimits`), not by a running
 * process, so `mailscope run` and the fleet bench's measured run start their
 * run in such a thread.
 */
import type { Worker } from "node:worker_threads";
import { startThread } from "./threadFlags.ts";

/** The young generation of a run's thread: 24 MiB in V8's count is 8 MiB semi-spaces, 16 MiB of new space. */
export const RUN_THREAD_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 24 } as const;

/** Starts `module` in a worker thread with {@link RUN_THREAD_RESOURCE_LIMITS}, Node's flags and `workerData`. */
export function startRunThread(module: URL, workerData: unknown): Worker {
  return startThread(module, { workerData, resourceLimits: RUN_THREAD_RESOURCE_LIMITS });
}
