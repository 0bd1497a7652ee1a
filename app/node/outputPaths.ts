/**
 * Output files are checked before the work that fills them: `run --trace
 * missing/t.json` must fail at once, not after the whole run. A path is
 * writable when its folder exists (and is a folder we may write in) and the
 * path itself is not a folder or a file we may not write. Nothing is created.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/**
 * Why `path` cannot be written, in words (`the folder out does not exist`),
 * or undefined when it can.
 */
export async function unwritableReason(path: string): Promise<string | undefined> {
  if (path === "") return "no file named";
  const full = resolve(path);
  const existing = await stat(full).catch(() => undefined);
  if (existing !== undefined) {
    if (existing.isDirectory()) return "it is a folder";
    return (await access(full, constants.W_OK).then(
      () => true,
      () => false,
    ))
      ? undefined
      : "the file may not be written (permission denied)";
  }
  const folder = dirname(full);
  const parent = await stat(folder).catch(() => undefined);
  if (parent === undefined) return `the folder ${dirname(path)} does not exist`;
  if (!parent.isDirectory()) return `${dirname(path)} is not a folder`;
  const writable = await access(folder, constants.W_OK).then(
    () => true,
    () => false,
  );
  return writable ? undefined : `the folder ${dirname(path)} may not be written in (permission denied)`;
}

/**
 * The first output option whose path cannot be written, as `--trace
 * out/t.json: the folder out does not exist`; undefined when all can.
 * Options not given (undefined) are skipped.
 */
export async function checkOutputPaths(
  outputs: readonly (readonly [option: string, path: string | undefined])[],
): Promise<string | undefined> {
  for (const [option, path] of outputs) {
    if (path === undefined) continue;
    const reason = await unwritableReason(path);
    if (reason !== undefined) return `${option} ${path}: cannot be written: ${reason}`;
  }
  return undefined;
}
