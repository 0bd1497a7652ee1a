/**
 * bin/cliEntry.mjs `enableCompileCache`: the `mailscope` wrapper's compile cache reaches the worker threads the
 * CLI starts (explore's workers, the sweep's pool, `run`'s thread), which Node gives a thread only through
 * NODE_COMPILE_CACHE (decision 0200). No spec rule: how the CLI starts, not what it does.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { enableCompileCache } from "../../bin/cliEntry.mjs";

const CLI_ENTRY = fileURLToPath(new URL("../../bin/cliEntry.mjs", import.meta.url));
const folder = mkdtempSync(join(tmpdir(), "mailscope-compile-cache-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** What a worker thread started after `enableCompileCache` says its compile cache is, and the main thread's. */
const SCRIPT = `
import module from "node:module";
import { Worker } from "node:worker_threads";
const { enableCompileCache } = await import(process.argv[1]);
const main = enableCompileCache(module);
const worker = new Worker('import m from "node:module"; import { parentPort } from "node:worker_threads"; parentPort.postMessage(m.getCompileCacheDir() ?? null);', { eval: true });
worker.once("message", (thread) => { console.log(JSON.stringify({ main, mainDir: module.getCompileCacheDir(), thread })); void worker.terminate(); });
`;

describe("the CLI's compile cache", () => {
  it("is the worker threads' too", () => {
    const env = { ...process.env };
    delete env["NODE_COMPILE_CACHE"];
    delete env["NODE_DISABLE_COMPILE_CACHE"];
    // The default folder is under the OS's temporary folder: one of this test's own.
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", SCRIPT, CLI_ENTRY], {
      encoding: "utf8",
      env: { ...env, TMPDIR: folder },
    });
    const { main, mainDir, thread } = JSON.parse(out) as { main?: string; mainDir?: string; thread: string | null };
    expect(main).toBe(join(folder, "node-compile-cache"));
    // Node's folder for this version under it, the same for the thread as for the main thread.
    expect(mainDir?.startsWith(join(folder, "node-compile-cache"))).toBe(true);
    expect(thread).toBe(mainDir);
  });

  it("leaves a NODE_COMPILE_CACHE the user set, and the environment alone when there is no cache", () => {
    const set = { NODE_COMPILE_CACHE: "/elsewhere" };
    expect(enableCompileCache({ enableCompileCache: () => ({ directory: "/elsewhere" }) }, set)).toBe("/elsewhere");
    expect(set.NODE_COMPILE_CACHE).toBe("/elsewhere");
    const none: Record<string, string | undefined> = {};
    expect(enableCompileCache({}, none)).toBeUndefined();
    expect(enableCompileCache({ enableCompileCache: () => ({}) }, none)).toBeUndefined();
    expect(none).toEqual({});
  });
});
