// @ts-check
// `npm start`: builds the app and opens the Mailscope desktop app (Electron), on Linux, macOS and
// Windows alike (a Node script: Windows needs no bash). Where the desktop app cannot open — Electron's binary
// cannot be had, there is no display, Chromium's sandbox cannot start — it says why in one line (and
// what to run to fix it) and serves the same UI in the browser instead.
//   npm start -- --browser          always serve in the browser
//   npm start -- --no-sandbox       development only: Electron without Chromium's sandbox
//   npm start -- scenarios/x.yaml   files to open (passed to the app)
//   MAILSCOPE_PORT=5173             the browser port
//
// The project's Node and dependencies are made ready first (scripts/project-env.mjs).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { projectEnvironment, ROOT, runNodeScript, say } from "./project-env.mjs";

/**
 * What `npm start` was asked.
 * @param {readonly string[]} args
 * @returns {{ browser: boolean, noSandbox: boolean, appArgs: string[] }}
 */
export function parseStartArgs(args) {
  return {
    browser: args.includes("--browser"),
    noSandbox: args.includes("--no-sandbox"),
    appArgs: args.filter((a) => a !== "--browser" && a !== "--no-sandbox" && a !== "--"),
  };
}

/**
 * Why no window can open here, or undefined: a Linux (or other X11/Wayland system) with neither
 * DISPLAY nor WAYLAND_DISPLAY set. macOS and Windows always have a display for a logged-in user.
 * @param {NodeJS.Platform} platform
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {string | undefined}
 */
export function displayProblem(platform, env) {
  if (platform === "darwin" || platform === "win32") return undefined;
  if (env["DISPLAY"] || env["WAYLAND_DISPLAY"]) return undefined;
  return "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)";
}

/**
 * What the Linux machine says about the sandbox Chromium needs: reads of /proc and of the SUID helper.
 * @typedef {object} SandboxFacts
 * @property {(path: string) => string | undefined} readProc a /proc/sys file's text, undefined when absent
 * @property {{ uid: number, mode: number } | undefined} helper chrome-sandbox's owner and mode, undefined when absent
 * @property {string} helperPath where chrome-sandbox is (for the fix)
 * @property {number | undefined} uid this user's id
 */

/**
 * Whether unprivileged user namespaces are refused here (Chromium's own sandbox needs them, or else
 * the SUID helper chrome-sandbox): Ubuntu 23.10+ (24.04 by default) restricts them through AppArmor;
 * Debian's old kernels had a switch; max_user_namespaces 0 turns them off.
 * @param {SandboxFacts["readProc"]} readProc
 * @returns {string | undefined} which setting refuses them
 */
export function userNamespacesRefused(readProc) {
  const value = (/** @type {string} */ path) => readProc(path)?.trim();
  if (value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1")
    return "kernel.apparmor_restrict_unprivileged_userns=1";
  if (value("/proc/sys/kernel/unprivileged_userns_clone") === "0") return "kernel.unprivileged_userns_clone=0";
  if (value("/proc/sys/user/max_user_namespaces") === "0") return "user.max_user_namespaces=0";
  return undefined;
}

/**
 * Why Electron would abort at start on this Linux (Chromium's sandbox), with the one command that
 * fixes it; undefined when it can start. Running as root: Chromium refuses without --no-sandbox.
 * No user namespaces and chrome-sandbox not root-owned with mode 4755 (as an npm install leaves it):
 * Chromium aborts with SIGTRAP and no word of why.
 * @param {SandboxFacts} facts
 * @returns {string | undefined}
 */
export function sandboxProblem(facts) {
  if (facts.uid === 0)
    return "Electron does not run as root with Chromium's sandbox: run npm start as your own user (or `npm start -- --no-sandbox` for development)";
  const refused = userNamespacesRefused(facts.readProc);
  if (refused === undefined) return undefined;
  const helper = facts.helper;
  if (helper !== undefined && helper.uid === 0 && (helper.mode & 0o7777) === 0o4755) return undefined;
  return (
    `Chromium's sandbox cannot start: this Linux refuses unprivileged user namespaces (${refused}) and ${facts.helperPath} is not root-owned with mode 4755; ` +
    `fix: sudo chown root:root ${facts.helperPath} && sudo chmod 4755 ${facts.helperPath} (or \`npm start -- --no-sandbox\` for development)`
  );
}

/**
 * Electron's binary as the electron package installs it (node_modules/electron/path.txt, dist/),
 * or ELECTRON_OVERRIDE_DIST_PATH's; undefined when it is not there.
 * @param {string} root
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {string | undefined}
 */
export function electronBinary(root, env) {
  // As the electron package's own index.js finds it.
  const pkg = join(root, "node_modules", "electron");
  const pathFile = join(pkg, "path.txt");
  const name = existsSync(pathFile) ? readFileSync(pathFile, "utf8") : undefined;
  const override = env["ELECTRON_OVERRIDE_DIST_PATH"];
  const binary = override ? join(override, name || "electron") : name && join(pkg, "dist", name);
  return binary && existsSync(binary) ? binary : undefined;
}

/**
 * Electron's binary, downloaded where it is missing (node_modules/electron/install.js, as the
 * postinstall does); why not, in words.
 * @returns {{ binary: string } | { reason: string }}
 */
function fetchElectron() {
  const present = electronBinary(ROOT, process.env);
  if (present !== undefined) return { binary: present };
  const installer = join(ROOT, "node_modules", "electron", "install.js");
  if (!existsSync(installer)) return { reason: "the electron package is not installed (run npm install)" };
  const run = spawnSync(process.execPath, [installer], { cwd: ROOT, encoding: "utf8" });
  const binary = electronBinary(ROOT, process.env);
  if (run.status === 0 && binary !== undefined) return { binary };
  const why = `${run.stderr ?? ""}${run.stdout ?? ""}`.trim().split("\n").pop() || `exit ${run.status}`;
  return { reason: `Electron's binary could not be downloaded (${why})` };
}

/**
 * The facts of this machine for {@link sandboxProblem} (also the Electron end-to-end test's).
 * @param {string} binary Electron's binary (chrome-sandbox is beside it)
 * @returns {SandboxFacts}
 */
export function sandboxFacts(binary) {
  const helperPath = join(binary, "..", "chrome-sandbox");
  let helper;
  try {
    const stat = statSync(helperPath);
    helper = { uid: stat.uid, mode: stat.mode };
  } catch {
    helper = undefined;
  }
  return {
    readProc: (path) => {
      try {
        return readFileSync(path, "utf8");
      } catch {
        return undefined;
      }
    },
    helper,
    helperPath: relative(process.cwd(), helperPath) || helperPath,
    uid: process.getuid?.(),
  };
}

/** Serves the built UI (dist/renderer) in the browser with Vite's preview server. */
async function serveInBrowser(/** @type {string} */ reason) {
  const port = Number(process.env["MAILSCOPE_PORT"] ?? 5173);
  say(`desktop app unavailable: ${reason}; serving the same UI in the browser at http://127.0.0.1:${port}/`);
  const { preview } = await import("vite");
  await preview({
    configFile: join(ROOT, "vite.config.ts"),
    logLevel: "warn",
    preview: { host: "127.0.0.1", port, strictPort: true, open: false },
  });
}

/** Runs Electron on the app; its exit is npm start's. */
function runElectron(/** @type {string} */ binary, /** @type {string[]} */ args) {
  const child = spawn(binary, [".", ...args], { cwd: ROOT, stdio: "inherit", windowsHide: false });
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"]))
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
  child.on("close", (code, signal) => {
    if (signal !== null) {
      say(
        `Electron stopped with ${signal}` +
          (process.platform === "linux" && signal === "SIGTRAP"
            ? " (Chromium aborting at start: often its sandbox; see README, Desktop app on Linux)"
            : ""),
      );
      process.exit(1);
    }
    process.exit(code ?? 1);
  });
}

async function main() {
  const args = process.argv.slice(2);
  const env = projectEnvironment(import.meta.url, args);
  if ("exit" in env) process.exit(env.exit);
  const options = parseStartArgs(args);
  runNodeScript(join(ROOT, "scripts", "build.mjs"));

  if (options.browser) return serveInBrowser("--browser given");
  const noDisplay = displayProblem(process.platform, process.env);
  if (noDisplay !== undefined) return serveInBrowser(noDisplay);
  const electron = fetchElectron();
  if ("reason" in electron) return serveInBrowser(electron.reason);
  if (options.noSandbox) say("Chromium's sandbox is off (--no-sandbox): for development only");
  else if (process.platform === "linux") {
    const problem = sandboxProblem(sandboxFacts(electron.binary));
    if (problem !== undefined) return serveInBrowser(problem);
  }
  runElectron(electron.binary, [...(options.noSandbox ? ["--no-sandbox"] : []), ...options.appArgs]);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
