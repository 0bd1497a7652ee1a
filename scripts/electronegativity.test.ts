/**
 * Electronegativity runs in the lint step and holds the app to zero findings; an
 * exception needs a reason and must still match a finding.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("./electronegativity.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mailscope-electronegativity-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the electronegativity step", () => {
  it("fails on a window without a permission handler, and on an exception that matches nothing", () => {
    mkdirSync(join(dir, "main"));
    writeFileSync(
      join(dir, "main", "main.js"),
      [
        'const { app, BrowserWindow } = require("electron");',
        "app.on('web-contents-created', (_e, c) => { c.on('will-navigate', (e) => e.preventDefault()); c.setWindowOpenHandler(() => ({ action: 'deny' })); });",
        "new BrowserWindow({ webPreferences: { contextIsolation: true, sandbox: true, disableBlinkFeatures: 'Auxclick' } });",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "electronegativity.json"),
      JSON.stringify({
        inputs: ["main"],
        excludedChecks: { AvailableSecurityFixesGlobalCheck: "offline" },
        exceptions: [{ check: "PRELOAD_JS_CHECK", file: "main/main.js", why: "none here" }],
      }),
    );
    const run = spawnSync(process.execPath, [SCRIPT, "--config", join(dir, "electronegativity.json")], {
      encoding: "utf8",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK");
    expect(run.stderr).toMatch(/exception PRELOAD_JS_CHECK in main\/main\.js matches no finding any more/);
    expect(run.stderr).not.toContain("LIMIT_NAVIGATION_GLOBAL_CHECK");
  }, 120_000); // a ceiling against a hang, not a target
});
