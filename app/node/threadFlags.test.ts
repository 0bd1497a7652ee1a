import { describe, expect, it } from "vitest";
import { refusedFlags, startThread, threadExecArgv } from "./threadFlags.ts";

describe("a worker thread's Node flags", () => {
  it("are the process's, without the -e string and what says its type", () => {
    expect(threadExecArgv(["--input-type", "module", "-e", "code", "--cpu-prof"])).toEqual(["--cpu-prof"]);
    expect(threadExecArgv(["--input-type=module", "--eval=code", "--max-old-space-size=900"])).toEqual([
      "--max-old-space-size=900",
    ]);
    expect(threadExecArgv(["-p", "1+1", "--conditions", "x"])).toEqual(["--conditions", "x"]);
    expect(threadExecArgv([])).toEqual([]);
  });

  it("leave out what Node refuses a thread (V8's and the process's own flags), and keep the rest", async () => {
    const flags = ["--conditions=x", "--max-old-space-size=900", "--single-threaded-gc", "--expose-gc"];
    const thread = startThread(
      "const { parentPort } = require('node:worker_threads'); parentPort.postMessage(process.execArgv);",
      { eval: true },
      flags,
    );
    const seen = await new Promise<unknown>((resolve, reject) => {
      thread.once("message", resolve);
      thread.once("error", reject);
    });
    await thread.terminate();
    expect(seen).toEqual(["--conditions=x"]);
  });

  it("are read from Node's refusal by name, so a flag's value is never taken for another flag", () => {
    expect(
      refusedFlags("Initiated Worker with invalid execArgv flags: --max-old-space-size=900, --title", [
        "--cpu-prof",
        "--max-old-space-size=900",
        "--title",
      ]),
    ).toEqual(["--max-old-space-size=900", "--title"]);
    expect(refusedFlags("something else", ["--cpu-prof"])).toEqual([]);
  });
});
