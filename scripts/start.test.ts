/**
 * `npm start` (scripts/start.mjs): what it decides on a machine, from that machine's facts.
 * Electron's binary cannot be had here, so the launch itself is in docs/desktop-checklist.md; these
 * tests pin the decisions — the Ubuntu 24.04 sandbox above all, where Electron would abort with a
 * SIGTRAP and no word of why.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { displayProblem, electronBinary, parseStartArgs, sandboxProblem, userNamespacesRefused } from "./start.mjs";
import { nodeIsNewEnough } from "./project-env.mjs";

/** /proc/sys as a machine has it. */
const proc =
  (files: Record<string, string>) =>
  (path: string): string | undefined =>
    files[path];
const UBUNTU_24_04 = proc({
  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
  "/proc/sys/kernel/unprivileged_userns_clone": "1\n",
  "/proc/sys/user/max_user_namespaces": "63448\n",
});
const FEDORA = proc({ "/proc/sys/user/max_user_namespaces": "63448\n" });
const HELPER = "node_modules/electron/dist/chrome-sandbox";
/** chrome-sandbox as `npm install` leaves it (the user's, 0755), and as the fix makes it (root's, 4755). */
const AS_INSTALLED = { uid: 1000, mode: 0o100755 };
const SET_UP = { uid: 0, mode: 0o104755 };

describe("npm start (scripts/start.mjs)", () => {
  it("takes --browser and --no-sandbox (opt-in only); passes files on to the app", () => {
    expect(parseStartArgs([])).toEqual({ browser: false, noSandbox: false, appArgs: [] });
    expect(parseStartArgs(["--", "--no-sandbox", "scenarios/a.yaml", "--browser"])).toEqual({
      browser: true,
      noSandbox: true,
      appArgs: ["scenarios/a.yaml"],
    });
  });

  it("a Linux with no display falls back to the browser; macOS and Windows always have one", () => {
    expect(displayProblem("linux", {})).toBe(
      "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set)",
    );
    expect(displayProblem("linux", { WAYLAND_DISPLAY: "wayland-0" })).toBeUndefined();
    expect(displayProblem("freebsd", { DISPLAY: ":0" })).toBeUndefined();
    expect(displayProblem("darwin", {})).toBeUndefined();
    expect(displayProblem("win32", {})).toBeUndefined();
  });

  it("Ubuntu 24.04 (user namespaces restricted) with chrome-sandbox as installed: one line, the fix, and the browser", () => {
    expect(userNamespacesRefused(UBUNTU_24_04)).toBe("kernel.apparmor_restrict_unprivileged_userns=1");
    const problem = sandboxProblem({ readProc: UBUNTU_24_04, helper: AS_INSTALLED, helperPath: HELPER, uid: 1000 });
    expect(problem).toBe(
      "Chromium's sandbox cannot start: this Linux refuses unprivileged user namespaces " +
        "(kernel.apparmor_restrict_unprivileged_userns=1) and node_modules/electron/dist/chrome-sandbox is not " +
        "root-owned with mode 4755; fix: sudo chown root:root node_modules/electron/dist/chrome-sandbox && " +
        "sudo chmod 4755 node_modules/electron/dist/chrome-sandbox (or `npm start -- --no-sandbox` for development)",
    );
    expect(problem).not.toContain("\n");
    // A helper root's but not setuid, or setuid but not root's, is not set up either; absent neither.
    for (const helper of [{ uid: 0, mode: 0o100755 }, { uid: 1000, mode: 0o104755 }, undefined])
      expect(sandboxProblem({ readProc: UBUNTU_24_04, helper, helperPath: HELPER, uid: 1000 })).toBeDefined();
    // Once fixed, Electron starts.
    expect(sandboxProblem({ readProc: UBUNTU_24_04, helper: SET_UP, helperPath: HELPER, uid: 1000 })).toBeUndefined();
  });

  it("user namespaces available (Fedora, Ubuntu 22.04): Chromium sandboxes itself, whatever chrome-sandbox is", () => {
    expect(userNamespacesRefused(FEDORA)).toBeUndefined();
    expect(userNamespacesRefused(proc({}))).toBeUndefined();
    expect(sandboxProblem({ readProc: FEDORA, helper: AS_INSTALLED, helperPath: HELPER, uid: 1000 })).toBeUndefined();
  });

  it("older switches that turn user namespaces off are read too (Debian's clone switch, max_user_namespaces 0)", () => {
    expect(userNamespacesRefused(proc({ "/proc/sys/kernel/unprivileged_userns_clone": "0" }))).toBe(
      "kernel.unprivileged_userns_clone=0",
    );
    expect(userNamespacesRefused(proc({ "/proc/sys/user/max_user_namespaces": "0" }))).toBe(
      "user.max_user_namespaces=0",
    );
  });

  it("as root, Chromium refuses its sandbox: said in one line, --no-sandbox only as an opt-in", () => {
    expect(sandboxProblem({ readProc: FEDORA, helper: SET_UP, helperPath: HELPER, uid: 0 })).toBe(
      "Electron does not run as root with Chromium's sandbox: run npm start as your own user (or `npm start -- --no-sandbox` for development)",
    );
  });

  it("finds Electron's binary where the electron package puts it (path.txt, dist/), or ELECTRON_OVERRIDE_DIST_PATH's", () => {
    const root = mkdtempSync(join(tmpdir(), "mailscope-start-"));
    const pkg = join(root, "node_modules", "electron");
    mkdirSync(join(pkg, "dist"), { recursive: true });
    expect(electronBinary(root, {})).toBeUndefined();
    writeFileSync(join(pkg, "path.txt"), "electron");
    expect(electronBinary(root, {})).toBeUndefined();
    writeFileSync(join(pkg, "dist", "electron"), "");
    expect(electronBinary(root, {})).toBe(join(pkg, "dist", "electron"));
    const other = mkdtempSync(join(tmpdir(), "mailscope-electron-"));
    writeFileSync(join(other, "electron"), "");
    expect(electronBinary(root, { ELECTRON_OVERRIDE_DIST_PATH: other })).toBe(join(other, "electron"));
  });

  it("Windows: Node 22.12 or newer", () => {
    expect(nodeIsNewEnough("v22.12.0")).toBe(true);
    expect(nodeIsNewEnough("v24.1.0")).toBe(true);
    expect(nodeIsNewEnough("v22.11.9")).toBe(false);
    expect(nodeIsNewEnough("v20.18.1")).toBe(false);
  });
});
