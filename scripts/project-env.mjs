// @ts-check
// The project's Node.js and dependencies, made ready for a script that npm runs (npm start, npm run
// dist) on Linux, macOS and Windows alike. Linux and macOS: scripts/with-node.sh does it (the pinned
// Node where the machine's is older than 22.12, `npm ci` when the lockfile changed) and runs the
// script again under it. Windows (no bash needed): the Node version is checked, and `npm ci` run when
// the lockfile changed, here.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { dependencyStamp } from "./deps-stamp.mjs";

/** The project's folder. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Prints one line of Mailscope's own, as scripts/env.sh does. */
export const say = (/** @type {string} */ line) => console.error(`mailscope: ${line}`);

/** Node 22.12 or newer (the project's floor, as scripts/env.sh checks). */
export function nodeIsNewEnough(/** @type {string} */ version) {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/** Windows: the Node version and the dependencies; whether to go on. */
function windowsEnvironment() {
  if (!nodeIsNewEnough(process.version)) {
    say(`Node.js 22.12 or newer is needed (this is ${process.version}): install it from https://nodejs.org/`);
    return false;
  }
  const stampFile = join(ROOT, "node_modules", ".mailscope-lock");
  const want = dependencyStamp(ROOT, process.version);
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === want) return true;
  say("installing dependencies (npm ci)");
  const ci = ["ci", "--no-audit", "--no-fund", "--loglevel=error"];
  const npm = process.env["npm_execpath"];
  const run = npm
    ? spawnSync(process.execPath, [npm, ...ci], { cwd: ROOT, stdio: "inherit" })
    : spawnSync("npm.cmd", ci, { cwd: ROOT, stdio: "inherit", shell: true });
  if (run.status !== 0) return false;
  writeFileSync(stampFile, want);
  return true;
}

/**
 * Makes the project's Node and dependencies ready for the script at `scriptUrl` (its
 * `import.meta.url`), run with `args`; then the working folder is the project's.
 * @param {string} scriptUrl
 * @param {readonly string[]} args
 * @returns {{ ready: true } | { exit: number }} go on, or exit with this code (the script ran
 * again under the project's Node and ended so, or the environment could not be made ready)
 */
export function projectEnvironment(scriptUrl, args) {
  if (process.platform === "win32") {
    if (!windowsEnvironment()) return { exit: 1 };
  } else if (process.env["MAILSCOPE_ENV_READY"] !== "1") {
    const run = spawnSync("bash", [join(ROOT, "scripts", "with-node.sh"), "node", fileURLToPath(scriptUrl), ...args], {
      cwd: ROOT,
      stdio: "inherit",
      env: { ...process.env, MAILSCOPE_ENV_READY: "1" },
    });
    return { exit: run.status ?? 1 };
  }
  // The build's and Vite's paths are the project's (npm runs scripts there; `node scripts/x.mjs` may not be).
  process.chdir(ROOT);
  return { ready: true };
}

/** Runs a Node script of the project's to its end (inheriting the terminal); exits when it fails. */
export function runNodeScript(/** @type {string} */ file, /** @type {readonly string[]} */ args = []) {
  const run = spawnSync(process.execPath, [file, ...args], { cwd: ROOT, stdio: "inherit" });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
