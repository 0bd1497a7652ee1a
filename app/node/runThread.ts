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

/**
 * The young generation of a run's thread: 24 MiB in V8's count is 8 MiB semi-spaces, 16 MiB of new space.
 *
 * Its old generation at most 1,900 MiB (decision 0195), not the 4 GiB V8 gives a thread on a large machine:
 * V8 lets the old generation grow to the live size times a factor that is 4 for a limit of 2 GiB or more and
 * ~1.9 at 1,900 MiB, so a fleet that holds ~60 MiB (its trace kept encoded) peaked anywhere from 400 to 580 MiB
 * RSS by the machine's load, and at ~330–345 MiB with this limit, for 6–12 % more CPU. A run that holds more than
 * the limit stops with an out-of-memory error (~30 fleets' worth); V8 gives a process on a machine with 8 GiB
 * about 2 GiB by default anyway.
 */
export const RUN_THREAD_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 24, maxOldGenerationSizeMb: 1_900 } as const;

/** Starts `module` in a worker thread with {@link RUN_THREAD_RESOURCE_LIMITS}, Node's flags and `workerData`. */
export function startRunThread(module: URL, workerData: unknown): Worker {
  return startThread(module, { workerData, resourceLimits: RUN_THREAD_RESOURCE_LIMITS });
}
