import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * The Node flags a worker thread of this process starts with: the process's
 * own (`--cpu-prof`, `--conditions`, a loader …), but not those that say what
 * an `-e` string is and hold it (`--input-type`, `-e`, `-p`). A thread runs a
 * file, and Node refuses to start one with `--input-type`
 * (ERR_INPUT_TYPE_NOT_ALLOWED) — so without this, `node --input-type=module
 * -e '…'` could not start the threads of `mailscope explore --workers` or
 * `sweep`.
 */
export function threadExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] as string;
    const name = flag.split("=", 1)[0] as string;
    if (!STRING_INPUT.has(name)) kept.push(flag);
    else if (name === flag) i++; // the value is the next argument
  }
  return kept;
}

const STRING_INPUT = new Set(["--input-type", "-e", "--eval", "-p", "--print"]);

/**
 * Starts a worker thread with this process's flags ({@link threadExecArgv}),
 * leaving out those Node allows a process but not a thread. V8's flags
 * (`--max-old-space-size`, `--single-threaded-gc`, `--expose-gc`) and the
 * process's own (`--title`) make `new Worker` throw
 * ERR_WORKER_INVALID_EXEC_ARGV, and Node has no list of which flags a thread
 * takes, so the flags it names in that error are dropped and the thread is
 * started again: the process's V8 flags apply to its threads' isolates anyway.
 * With `node --single-threaded-gc` or `--max-old-space-size`, `mailscope
 * explore --workers 2` and `sweep` used to stop at that error.
 */
export function startThread(
  module: URL | string,
  options: Omit<WorkerOptions, "execArgv"> = {},
  execArgv: readonly string[] = threadExecArgv(),
): Worker {
  let flags = [...execArgv];
  for (;;) {
    try {
      return new Worker(module, { ...options, execArgv: flags });
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ERR_WORKER_INVALID_EXEC_ARGV" || flags.length === 0) throw error;
      const refused = refusedFlags(error instanceof Error ? error.message : "", flags);
      // A message this code cannot read: start the thread with none of the process's flags rather than not at all.
      flags = refused.length > 0 ? flags.filter((flag) => !refused.includes(flag)) : [];
    }
  }
}

/** The flags of `flags` that Node's "Initiated Worker with invalid execArgv flags: a, b" message names. */
export function refusedFlags(message: string, flags: readonly string[]): string[] {
  const listed = message
    .slice(message.indexOf(":") + 1)
    .split(",")
    .map((flag) => flag.trim());
  return flags.filter((flag) => listed.includes(flag));
}
