/**
 * How much making a file costs on a disk right now, for benches whose
 * numbers depend on it (the .eml store, `serve`).
 *
 * On ext4 without a journal (as on the project's dev VMs), making a file skips
 * every inode of its block group freed in the last one to six minutes, looking
 * each one up (`recently_deleted` in fs/ext4/ialloc.c): after a clean-up of
 * thousands of files (another bench run's, a test run's) `open` costs hundreds
 * of µs of system CPU instead of ~15, for any store. The probe says which case
 * a run was in.
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

/** The CPU µs one empty file costs to make in a new folder `dir` (made here; the caller removes it). */
export function fileCreationProbe(dir: string, files = 200): number {
  mkdirSync(dir);
  const cpu = process.cpuUsage();
  for (let i = 0; i < files; i++) closeSync(openSync(join(dir, `p${i}`), "wx"));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / files;
}
