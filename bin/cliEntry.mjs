// Which `mailscope` to run: the built CLI (dist-cli/main.js, scripts/build-cli.mjs)
// when it is there and newer than every source file it was built from, else the
// TypeScript sources (app/cli/main.ts). So a checkout that was never built, or
// whose sources changed since the last build, still runs what its sources say.
// MAILSCOPE_CLI=sources or MAILSCOPE_CLI=built chooses without looking.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** The module to import for `main` under `root`, and whether it is the built one. */
export function cliEntry(root, choice = process.env.MAILSCOPE_CLI) {
  const sources = { path: join(root, "app", "cli", "main.ts"), built: false };
  const built = { path: join(root, "dist-cli", "main.js"), built: true };
  if (choice === "sources") return sources;
  if (choice === "built") return built;
  try {
    const builtAt = statSync(built.path).mtimeMs;
    const inputs = JSON.parse(readFileSync(join(root, "dist-cli", "inputs.json"), "utf8"));
    for (const input of [...inputs, "package.json", "package-lock.json"]) {
      if (statSync(join(root, input)).mtimeMs > builtAt) return sources;
    }
    return built;
  } catch {
    // No build, or a source it was built from is gone.
    return sources;
  }
}

/**
 * Turns on Node's compile cache (`module.enableCompileCache()`: the OS's temporary folder, or
 * NODE_COMPILE_CACHE) for this process and for the worker threads it starts (explore's workers, the sweep's
 * pool, `run`'s thread): a thread gets the cache only from NODE_COMPILE_CACHE in the environment it starts
 * with, so the directory enabled here is put there when it is not set. Returns that directory, or undefined
 * when this Node has no cache or it could not be enabled. The cache never changes what runs.
 */
export function enableCompileCache(nodeModule, env = process.env) {
  const directory = nodeModule.enableCompileCache?.()?.directory;
  if (directory !== undefined && env.NODE_COMPILE_CACHE === undefined) env.NODE_COMPILE_CACHE = directory;
  return directory;
}
