// Builds the `mailscope` command (app/cli/main.ts) into one bundle with a chunk
// per command (esbuild, ESM with code splitting → dist-cli/), so that a fresh
// process parses and runs only the command it was asked for, as plain
// JavaScript (no type stripping). bin/mailscope.mjs runs it when it is newer
// than every source file it was built from (dist-cli/inputs.json lists them),
// else the TypeScript sources.
//
// `run` and `check` start from a second build of the same program, one CommonJS
// file (dist-cli/chunks/engine.cjs, bin/cliEntry.mjs `startEngine`): it is
// compiled through node:vm with a V8 code cache made after a run, which holds
// the functions the run compiled, not only the top level Node's compile cache
// keeps (decision 0295). The build makes those caches (`makeCodeCaches`).
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ENGINE_FILE } from "../bin/cliEntry.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const CLI_ENTRY = join(root, "bin", "cliEntry.mjs");

/** Where the built CLI goes by default. */
export const CLI_OUTDIR = join(root, "dist-cli");

/** Builds the CLI into `outdir` (emptied first); resolves to the source files it was built from, relative to the root. */
export async function buildCli(outdir = CLI_OUTDIR) {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    // Worker threads start a file of their own: explore's (app/node/exploreWorkers.ts) and the sweep's pool
    // (app/node/runPool.ts finds it beside chunks/), and `run`'s (app/cli/runCommand.ts, the same way).
    entryPoints: {
      main: "app/cli/main.ts",
      runCommandThread: "app/cli/runCommandThread.ts",
      exploreWorker: "app/node/exploreWorker.ts",
      runPoolThread: "app/node/runPoolThread.ts",
    },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    // A few dependencies are CommonJS that require Node's modules: give the ES chunks a require.
    banner: {
      js: 'import { createRequire as __mailscopeRequire } from "node:module"; const require = __mailscopeRequire(import.meta.url);',
    },
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
  });
  const engine = await build({
    absWorkingDir: root,
    entryPoints: ["app/cli/main.ts"],
    // Under chunks/, as the ES chunks are: a module that finds a thread's entry beside itself finds it the same way.
    outfile: join(outdir, ENGINE_FILE),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node22",
    define: { "import.meta.url": "__mailscopeModuleUrl" },
    // Without comments and spaces: 2.4 MB, not 3.3; and ASCII (non-ASCII characters of strings are escaped,
    // those of comments went with them), which V8 holds as a one-byte string, half the bytes of a two-byte one.
    minifyWhitespace: true,
    banner: { js: 'const __mailscopeModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
  });
  const inputs = [...new Set([...Object.keys(result.metafile.inputs), ...Object.keys(engine.metafile.inputs)])]
    .filter((file) => !file.includes("node_modules/"))
    .map((file) => relative(root, resolve(root, file)))
    .sort();
  await writeFile(join(outdir, "inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);
  makeCodeCaches(outdir);
  return inputs;
}

/** Runs `main` of the one-file build under argv[2] with argv[3…], as bin/mailscope.mjs does, and saves its code cache. */
const MAKE_CODE_CACHE = `
const { startEngine } = await import(process.argv[1]);
const args = process.argv.slice(3);
const engine = startEngine(process.argv[2], args);
engine.saveCodeCache(await engine.main(args));
`;

/**
 * The code caches of `run` and `check` of the build (bin/cliEntry.mjs `startEngine`), each made by that command
 * on scenarios/happy-path.yaml under this Node: what a plain run compiles, not what a user's first command after
 * the build happened to (a cache made by a run with other options held other functions and measured 20 % more
 * instructions for happy-path, decision 0295). Under another Node the first run makes its own.
 */
function makeCodeCaches(outdir) {
  const scenario = join(root, "scenarios", "happy-path.yaml");
  for (const command of ["run", "check"]) {
    const args = [command, scenario, "--no-progress"];
    execFileSync(process.execPath, ["--input-type=module", "-e", MAKE_CODE_CACHE, CLI_ENTRY, outdir, ...args], {
      cwd: root,
      stdio: "ignore",
    });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCli(process.argv[2] ?? CLI_OUTDIR);
}
