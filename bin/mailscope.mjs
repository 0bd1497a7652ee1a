#!/usr/bin/env node
// The `mailscope` command. Written to run on any Node (even the machine's old
// one): it starts the CLI under a Node that can strip types — this one when new
// enough, else the project's pinned Node from tools/node, fetched on first use.
// The CLI is the built bundle (dist-cli/, `npm run build`) when it is up to date
// with the sources, else the TypeScript sources (bin/cliEntry.mjs); either way
// with Node's compile cache (its worker threads too), so a second start skips compiling what it runs;
// `run` and `check` of the build with a code cache made after a run (bin/cliEntry.mjs `startEngine`).
import { existsSync } from "node:fs";
import module from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cliEntry, enableCompileCache, startEngine } from "./cliEntry.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [major, minor] = process.versions.node.split(".").map(Number);
// Type stripping is on by default from Node 22.18 and 23.6.
// MAILSCOPE_REEXEC=1 runs under the pinned Node even so (the tests of this wrapper use it).
const canStripTypes =
  process.env.MAILSCOPE_REEXEC !== "1" && (major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18));

if (canStripTypes) {
  // The cache lives in the OS's temporary folder (or NODE_COMPILE_CACHE); it never changes what runs.
  enableCompileCache(module);
  const argv = process.argv.slice(2);
  const entry = cliEntry(root);
  // `run` and `check` of the build: its one-file build with a code cache of the command (bin/cliEntry.mjs).
  const engine = entry.built ? startEngine(dirname(entry.path), argv) : undefined;
  const { main } = engine ?? (await import(pathToFileURL(entry.path).href));
  process.exitCode = await main(argv);
  engine?.saveCodeCache(process.exitCode);
} else {
  // Loaded here only: node:child_process cost a command run in this process ~15 % of its instructions (0295).
  const { spawn, spawnSync } = await import("node:child_process");
  const { constants: osConstants } = await import("node:os");
  const arch = process.arch === "x64" ? "x64" : process.arch;
  const pinned = join(root, "tools", "node", "node_modules", `node-${process.platform}-${arch}`, "bin", "node");
  if (!existsSync(pinned)) {
    const setup = spawnSync("bash", ["-c", `source "${join(root, "scripts", "env.sh")}"`], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (setup.status !== 0 || !existsSync(pinned)) {
      console.error(
        `mailscope: needs Node.js 22.18 or newer (this is ${process.version}); run \`npm test\` or \`npm start\` once to set up the pinned Node.`,
      );
      process.exit(1);
    }
  }
  runUnder(pinned, spawn, osConstants.signals);
}

/**
 * Runs this command again under `node` and becomes its stand-in: every signal
 * sent to this process goes to the child, and this process exits as the child
 * did (with its code, or killed by the same signal), so that `kill <pid>` or
 * Ctrl-C stops `mailscope serve` and not only this wrapper.
 *
 * On POSIX the child gets a process group of its own (`detached`), so that a
 * signal a terminal sends to the whole foreground group (Ctrl-C) reaches it
 * once, through here, not twice (for `serve`, a second SIGINT cuts the
 * connections in flight). Ctrl-Z stops both, and `fg` resumes both.
 */
function runUnder(node, spawn, signals) {
  const posix = process.platform !== "win32";
  const env = { ...process.env };
  delete env.MAILSCOPE_REEXEC;
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    detached: posix,
    env,
  });
  const forwarded = posix ? ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH"] : ["SIGINT", "SIGBREAK"];
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of forwarded) process.on(signal, forward);
  if (posix) {
    process.on("SIGTSTP", () => {
      forward("SIGSTOP");
      process.kill(process.pid, "SIGSTOP");
    });
    process.on("SIGCONT", () => forward("SIGCONT"));
  }
  child.on("error", (error) => {
    console.error(`mailscope: cannot start ${node}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Killed by a signal: end the same way, so that the caller (a shell, a supervisor) sees it.
    for (const name of [...forwarded, "SIGTSTP", "SIGCONT"]) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (signals[signal] ?? 0)), 1000).unref();
  });
}
