import { describe, expect, it } from "vitest";
import { threadExecArgv } from "./threadFlags.ts";

describe("a worker thread's Node flags", () => {
  it("are the process's, without the -e string and what says its type", () => {
    expect(threadExecArgv(["--input-type", "module", "-e", "code", "--cpu-prof"])).toEqual(["--cpu-prof"]);
    expect(threadExecArgv(["--input-type=module", "--eval=code", "--max-old-space-size=900"])).toEqual([
      "--max-old-space-size=900",
    ]);
    expect(threadExecArgv(["-p", "1+1", "--conditions", "x"])).toEqual(["--conditions", "x"]);
    expect(threadExecArgv([])).toEqual([]);
  });
});
