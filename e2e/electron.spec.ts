import { _electron as electron, expect, test } from "@playwright/test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { preloadApiNames } from "../main/channels.ts";
import { displayProblem, electronBinary, sandboxFacts, sandboxProblem } from "../scripts/start.mjs";

// Where Electron's binary is (node_modules/electron/dist/<path.txt>, present only once `npx install-electron`,
// run by postinstall and npm start, could download it), and whether it can open a window here: the checks of
// `npm start` (scripts/start.mjs).
const binary = electronBinary(fileURLToPath(new URL("..", import.meta.url)), process.env);
/** How long to wait for a window or a navigation that must not happen: far longer than either takes. */
const WAIT_FOR_NOTHING_MS = 2_000;
const noDisplay = displayProblem(process.platform, process.env);
const noSandbox =
  binary !== undefined && process.platform === "linux" ? sandboxProblem(sandboxFacts(binary)) : undefined;

test.describe("the desktop app (Electron)", () => {
  test.skip(
    binary === undefined,
    "Electron's binary is not installed on this machine (it could not be downloaded); the same UI is tested in Chromium",
  );
  test.skip(noDisplay !== undefined, `${noDisplay}: run under xvfb-run to test the desktop window`);
  test.skip(noSandbox !== undefined, `${noSandbox}`);

  test("opens the window with the preload API only: no Node, no new windows, no navigation", async () => {
    const app = await electron.launch({ executablePath: binary!, args: ["."] });
    try {
      const page = await app.firstWindow();
      await expect(page).toHaveTitle("Mailscope");
      await expect(page.getByTestId("shell")).toContainText("electron");
      // The renderer has no Node (nodeIntegration off, sandboxed): no require, no process.
      expect(await page.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe("undefined");
      expect(await page.evaluate(() => typeof (globalThis as { process?: unknown }).process)).toBe("undefined");
      // The preload's API, derived from the channel map, is all the page gets.
      expect(
        await page.evaluate(() => Object.keys((globalThis as { mailscope?: object }).mailscope ?? {}).sort()),
      ).toEqual(preloadApiNames);
      // New windows are denied: open() returns null, and no window appears in the time one would
      // take to open (waited for, not just counted at once, since a window opens asynchronously).
      const ownUrl = page.url();
      const windowOpened = app.waitForEvent("window", { timeout: WAIT_FOR_NOTHING_MS }).then(
        () => true,
        () => false,
      );
      expect(await page.evaluate(() => globalThis.open("https://example.org/") === null)).toBe(true);
      expect(await windowOpened).toBe(false);
      expect(app.windows()).toHaveLength(1);
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
      // Navigation away is blocked: no navigation happens in that time, and the page stays where it was.
      const navigated = page.waitForEvent("framenavigated", { timeout: WAIT_FOR_NOTHING_MS }).then(
        (frame) => frame.url(),
        () => undefined,
      );
      await page.evaluate(() => {
        globalThis.location.href = "https://example.org/";
      });
      expect(await navigated).toBeUndefined();
      expect(page.url()).toBe(ownUrl);
      await expect(page).toHaveTitle("Mailscope");
    } finally {
      await app.close();
    }
  });

  test("opens a scenario given on the command line over app://, runs it in the worker and shows the outcome", async () => {
    const app = await electron.launch({ executablePath: binary!, args: [".", "scenarios/happy-path.yaml"] });
    try {
      const page = await app.firstWindow();
      expect(page.url()).toMatch(/^app:\/\/mailscope\//);
      await expect(page.getByRole("heading", { level: 2, name: "happy-path" })).toBeVisible();
      await expect(page.getByTestId("phase")).toContainText("Ready");
      await page.getByRole("button", { name: "Speed max" }).click();
      await page.getByRole("button", { name: "Play", exact: true }).click();
      await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
      await expect(page.getByRole("table").getByRole("row").filter({ hasText: "bob@b.example" })).toContainText(
        "accepted",
      );
      await expect(page.getByTestId("checks-summary")).toHaveText(/^passed: /);
    } finally {
      await app.close();
    }
  });

  test("File ▸ Open Recent and the library's Opened are one list, kept between launches (note 0015)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-recent-e2e-"));
    const file = join(dir, "recent-check.yaml");
    writeFileSync(
      file,
      readFileSync("scenarios/happy-path.yaml", "utf8").replace("name: happy-path", "name: recent-check"),
    );
    const recentMenu = (app: Awaited<ReturnType<typeof electron.launch>>) =>
      app.evaluate(({ Menu }) =>
        Menu.getApplicationMenu()
          ?.items.find((i) => i.label.replace("&", "") === "File")
          ?.submenu?.items.find((i) => i.label === "Open Recent")
          ?.submenu?.items.map((i) => i.label),
      );
    const first = await electron.launch({ executablePath: binary!, args: [".", file] });
    try {
      const page = await first.firstWindow();
      await expect(page.getByRole("heading", { level: 2, name: "recent-check" })).toBeVisible();
      const library = page.getByRole("navigation", { name: "Scenarios" });
      await expect(library.getByRole("heading", { level: 3, name: "Opened" })).toBeVisible();
      await expect(library.getByRole("button", { name: "recent-check" })).toBeVisible();
      expect((await recentMenu(first))?.[0]).toBe("recent-check.yaml");
    } finally {
      await first.close();
    }
    const second = await electron.launch({ executablePath: binary!, args: ["."] });
    try {
      const page = await second.firstWindow();
      expect(await recentMenu(second)).toContain("recent-check.yaml");
      await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name: "recent-check" }).click();
      await expect(page.getByRole("heading", { level: 2, name: "recent-check" })).toBeVisible();
      await expect(page.getByTestId("phase")).toContainText("Ready");
    } finally {
      await second.close();
    }
  });
});
