import { expect, test, type Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { EML_BYTES, EML_SCENARIO, EML_TEXT } from "../app/sim/testing.ts";

/**
 * Decision 0029: the desktop app's main reads an opened scenario's `eml:` files and hands their bytes with
 * the file (main/scenarioEmls.test.ts tests main). Electron's binary is absent here, so this test runs the
 * renderer in Chromium with a stand-in for the preload's API (`window.mailscope`) handing the file as main
 * would: the run takes the bytes, Compare is offered, and the bug bundle exported holds them.
 */

const SHOTS = "test-results/screenshots";

test.use({ viewport: { width: 1440, height: 1000 } });

interface StandInFile {
  readonly path: string;
  readonly eml?: string;
  readonly emlError?: string;
}

/** The preload's API as main answers it: `filesPending` gives the scenario (as from the command line) once. */
async function standInShell(page: Page, file: StandInFile): Promise<void> {
  await page.addInitScript(
    ({ file, text }) => {
      const saved: { name: string; contents: string }[] = [];
      let pending = true;
      const opened = {
        kind: "scenario",
        name: "raw.yaml",
        path: file.path,
        text,
        ...(file.eml !== undefined && { emls: { "mail/hello.eml": new TextEncoder().encode(file.eml) } }),
        ...(file.emlError !== undefined && { emlErrors: { "mail/hello.eml": file.emlError } }),
      };
      const w = window as unknown as { mailscope: unknown; saved: typeof saved };
      w.saved = saved;
      w.mailscope = {
        appInfo: async () => ({ name: "Mailscope", version: "0.0.0-test", shell: "electron" }),
        scenariosList: async () => [],
        fileSave: async (name: string, contents: string) => {
          saved.push({ name, contents });
          return { saved: true, path: `/s/${name}` };
        },
        fileSaveBytes: async () => ({ saved: false }),
        fileOpen: async () => ({ opened: false }),
        filesPending: async () => {
          const files = pending ? [opened] : [];
          pending = false;
          return files;
        },
        recentList: async () => [],
        recentOpen: async () => opened,
        openDropped: async () => opened,
        scenarioSave: async () => ({ saved: false }),
        scenarioSaveAs: async () => ({ saved: false }),
        onAppCommand: () => () => undefined,
      };
    },
    { file, text: EML_SCENARIO },
  );
}

test.describe("the desktop app's eml: files (main reads them; here a stand-in for main)", () => {
  test("POST-9: a scenario opened with its eml: bytes runs; Compare is offered; its bug bundle holds them and reproduces", async ({
    page,
  }, info) => {
    await standInShell(page, { path: "/s/raw.yaml", eml: EML_TEXT });
    await page.goto("/");
    await expect(page.getByRole("heading", { level: 2, name: "raw" })).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
    const row = page.getByRole("table").getByRole("row").filter({ hasText: "bob@b.example" });
    await expect(row.getByRole("cell").nth(2)).toHaveText("accepted", { timeout: 30_000 });
    await expect(page.getByRole("button", { name: "Compare…" })).toBeVisible();
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}/desktop-eml-scenario-run.png`, fullPage: true });

    await page.getByRole("group", { name: "Export" }).getByRole("button", { name: "Bug bundle" }).click();
    await expect.poll(() => page.evaluate(() => (window as unknown as { saved: unknown[] }).saved.length)).toBe(1);
    const [bundle] = await page.evaluate(() => (window as unknown as { saved: { contents: string }[] }).saved);
    const value = JSON.parse(bundle!.contents) as { version: number; emls: Record<string, string> };
    expect(value).toMatchObject({ version: 2, emls: { "mail/hello.eml": Buffer.from(EML_BYTES).toString("base64") } });
    const file = info.outputPath("desktop.msbundle");
    writeFileSync(file, bundle!.contents);
    const replay = spawnSync(process.execPath, ["bin/mailscope.mjs", "replay", file], { encoding: "utf8" });
    expect(replay.stdout).toContain("reproduced: the re-run's trace hash is the bundle's");
    expect(replay.status).toBe(0);
  });

  test("a scenario whose eml: file main could not read opens, and its run names the file and why", async ({ page }) => {
    await standInShell(page, { path: "/s/raw.yaml", emlError: "no such file (/s/mail/hello.eml)" });
    await page.goto("/");
    const errors = page.getByRole("alert").filter({ hasText: "This scenario has errors" });
    await expect(errors).toContainText(
      "raw.yaml:6:62: messages[0].eml: cannot read mail/hello.eml: no such file (/s/mail/hello.eml)",
    );
    await expect(errors).not.toContainText("the app does not read eml: files");
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}/desktop-eml-missing.png`, fullPage: true });
  });
});
