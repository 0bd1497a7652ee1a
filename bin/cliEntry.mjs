// Which `mailscope` to run: the built CLI (dist-cli/main.js, scripts/build-cli.mjs)
// when it is there and newer than every source file it was built from, else the
// TypeScript sources (app/cli/main.ts). So a checkout that was never built, or
// whose sources changed since the last build, still runs what its sources say.
// MAILSCOPE_CLI=sources or MAILSCOPE_CLI=built chooses without looking.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import vm from "node:vm";

/** The built CLI's one-file build, under its folder (scripts/build-cli.mjs), that `run` and `check` start from. */
export const ENGINE_FILE = join("chunks", "engine.cjs");

/** The commands started from {@link ENGINE_FILE}: the ones that load the simulator. */
const ENGINE_COMMANDS = ["run", "check"];

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

/**
 * The built CLI's `main` from its one-file build (`dist`/{@link ENGINE_FILE}) when `argv` runs one of
 * {@link ENGINE_COMMANDS}, compiled with a V8 code cache of that command; undefined for another command or when
 * the file is not there (the caller imports `dist`/main.js then).
 *
 * Node's compile cache keeps a module's top level: every function a run calls is compiled again in each fresh
 * process. A cache made by `vm.Script#createCachedData` after a run holds the functions the run compiled too
 * (decision 0295). It lives in `dist`/code-cache/ (a new build empties the folder), one file per command, named
 * by this Node's version and architecture and the file's size and time (V8 also refuses a cache of another V8 or
 * other flags). `saveCodeCache(exitCode)` writes it after a command that ran (exit 0 or 1, not `--help`) when there was none or
 * V8 refused it; a folder that cannot be written is no error. The cache changes how fast the code starts, never
 * what it does.
 */
export function startEngine(dist, argv) {
  const command = argv[0];
  if (!ENGINE_COMMANDS.includes(command)) return undefined;
  const file = resolve(dist, ENGINE_FILE);
  let source;
  let stats;
  try {
    stats = statSync(file);
    source = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const cacheFile = join(
    dirname(dirname(file)),
    "code-cache",
    `${command}-${process.version}-${process.arch}-${stats.size}-${Math.trunc(stats.mtimeMs)}.bin`,
  );
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // None yet.
  }
  // A CommonJS module's wrapper, on one line with the source's first: its line numbers stay the file's.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  const cache = cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "taken";
  return {
    main: module.exports.main,
    /** Whether a code cache was there and V8 took it: "none", "taken" or "rejected". */
    cache,
    /** Writes the code cache after a command that ran (exit code 0 or 1, not its help), unless one was taken; the file written, if any. */
    saveCodeCache(exitCode) {
      if (cache === "taken" || (exitCode !== 0 && exitCode !== 1) || argv.includes("-h") || argv.includes("--help"))
        return undefined;
      try {
        mkdirSync(dirname(cacheFile), { recursive: true });
        // Whole or not at all: another process may be reading it.
        const partial = `${cacheFile}.${process.pid}`;
        writeFileSync(partial, script.createCachedData());
        renameSync(partial, cacheFile);
        return cacheFile;
      } catch {
        return undefined;
      }
    },
  };
}
