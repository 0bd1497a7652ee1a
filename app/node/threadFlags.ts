/**
 * The Node flags a worker thread of this process starts with: the process's
 * own (`--cpu-prof`, `--max-old-space-size`, a loader …), but not those that
 * say what an `-e` string is and hold it (`--input-type`, `-e`, `-p`). A
 * thread runs a file, and Node refuses to start one with `--input-type`
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
