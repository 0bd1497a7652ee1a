/**
 * CPU time of this process's threads by name, from Linux's
 * `/proc/self/task/<tid>/stat` (decision 0230): a worker thread is
 * `WorkerThread`, V8's GC helpers and concurrent compilers share the
 * platform's `V8Worker` threads, libuv's pool is `libuv-worker`, and the
 * main thread is the task whose id is the process's. Elsewhere (no /proc)
 * there are none, and the bench goes without the rows built on them.
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU ms of each thread, by thread id, with its name. */
export type ThreadTimes = ReadonlyMap<string, { readonly name: string; readonly ms: number }>;

/** The clock ticks `/proc` counts in (USER_HZ: 100 on every Linux Node runs on). */
const TICK_MS = 10;

/** Every thread of this process now; empty where there is no `/proc`. */
export function threadTimes(): ThreadTimes {
  const out = new Map<string, { name: string; ms: number }>();
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // `pid (comm) state …`: the name may hold spaces and parentheses, so it ends at the last ")".
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    const name = tid === String(process.pid) ? "main" : stat.slice(stat.indexOf("(") + 1, close);
    // utime and stime are fields 14 and 15 of stat, the 12th and 13th after the name.
    out.set(tid, { name, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
  }
  return out;
}

/** The CPU ms each name of thread used between `from` and `to` (threads that ended in between are not counted). */
export function cpuByName(from: ThreadTimes, to: ThreadTimes): Map<string, number> {
  const out = new Map<string, number>();
  for (const [tid, { name, ms }] of to) out.set(name, (out.get(name) ?? 0) + ms - (from.get(tid)?.ms ?? 0));
  return out;
}
