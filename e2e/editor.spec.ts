import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Issue 15, scenario editor: write a scenario in the app with completion and inline errors, and run it. */

const SHOTS = "test-results/screenshots";

test.use({ viewport: { width: 1440, height: 1000 } });

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** Content-Security-Policy violations of the page (eval, inline script…), and its uncaught errors. */
async function watch(page: Page): Promise<{ csp: () => Promise<string[]>; errors: string[] }> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (/Content.Security.Policy|unsafe-eval/i.test(m.text())) errors.push(m.text());
  });
  return {
    csp: () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations),
    errors,
  };
}

const library = (page: Page) => page.getByRole("navigation", { name: "Scenarios" });
const editorRegion = (page: Page) => page.getByRole("region", { name: "Scenario editor" });
const text = (page: Page) => page.getByRole("textbox", { name: "Scenario text (YAML)" });
const line = (page: Page, content: string) => page.locator(".cm-line").filter({ hasText: content });

/** Types one line below the cursor at its own indentation (the editor's auto-indent is replaced). */
async function typeLine(page: Page, content: string): Promise<void> {
  await page.keyboard.press("Enter");
  await page.keyboard.press("Shift+Home");
  await page.keyboard.type(content);
  await page.keyboard.press("Escape");
}

test.describe("the scenario editor", () => {
  test("an unknown fault kind is marked at its line as the CLI says it; fixed with completion, it runs", async ({
    page,
  }) => {
    const watched = await watch(page);
    await page.goto("/");
    await library(page).getByRole("button", { name: "New scenario…" }).click();
    await expect(editorRegion(page)).toBeVisible();
    await expect(page.getByTestId("editor-file")).toHaveText("my-scenario.yaml");
    const problems = page.getByRole("region", { name: "Problems" });
    await expect(problems.getByRole("heading")).toHaveText("No problems");

    // faults.network: [] becomes a block list with one fault, its kind misspelt.
    await line(page, "network: []").click();
    await page.keyboard.press("End");
    for (let i = 0; i < 3; i++) await page.keyboard.press("Backspace");
    await typeLine(page, "    - kind: conection-refused");
    await typeLine(page, "      until: 30m");
    await expect(page.getByTestId("unsaved")).toBeVisible();

    // The parser's error, inline at the end of the fault's line, and in the problems list as the CLI prints it.
    const inline = page.locator(".cm-inline-problem");
    await expect(inline).toHaveCount(1);
    await expect(inline).toContainText('faults.network[0].kind: unknown kind "conection-refused"; the kinds are');
    await expect(line(page, "- kind: conection-refused").locator(".cm-inline-problem")).toHaveCount(1);
    const problem = problems.getByRole("button");
    await expect(problem).toHaveText(/^my-scenario\.yaml:19:13: faults\.network\[0\]\.kind: unknown kind/);
    await expect(inline).toHaveAttribute("data-line", "19");
    await expect(page.locator(".cm-lint-marker-error")).toHaveCount(1);
    await expect(problems.getByRole("heading")).toHaveText("1 problem");
    await page.screenshot({ path: `${SHOTS}/editor-error.png` });

    // Saved (a download in the browser), the CLI says the same of the file.
    const download = page.waitForEvent("download");
    await page.keyboard.press("Control+s");
    const saved = await download;
    expect(saved.suggestedFilename()).toBe("my-scenario.yaml");
    const dir = mkdtempSync(join(tmpdir(), "mailscope-editor-"));
    await saved.saveAs(join(dir, "my-scenario.yaml"));
    await expect(page.getByTestId("unsaved")).toHaveCount(0);
    const cli = spawnSync(process.execPath, [join(process.cwd(), "bin/mailscope.mjs"), "run", "my-scenario.yaml"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(cli.stderr.trim()).toBe((await problem.textContent())?.trim());

    // Run refuses the text while it has a problem.
    await page.keyboard.press("Control+Enter");
    await expect(problems.getByRole("heading")).toContainText("fix it to run the scenario");
    await expect(editorRegion(page)).toBeVisible();

    // The fix: the kind typed again, taken from the completion list.
    await line(page, "- kind: conection-refused").click();
    await page.keyboard.press("End");
    for (let i = 0; i < "conection-refused".length; i++) await page.keyboard.press("Backspace");
    await page.keyboard.type("conn");
    const completion = page.getByRole("listbox");
    await expect(completion.getByRole("option", { name: "connection-refused", exact: true })).toBeVisible();
    await expect(completion.getByRole("option", { name: "connection-reset", exact: true })).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/editor-completion.png` });
    await completion.getByRole("option", { name: "connection-refused", exact: true }).click();
    await expect(line(page, "- kind: connection-refused")).toBeVisible();
    await expect(inline).toHaveCount(0);
    await expect(problems.getByRole("heading")).toHaveText("No problems");
    await noSeriousViolations(page);

    // Run: the run view plays the edited text.
    await text(page).focus();
    await page.keyboard.press("Control+Enter");
    await expect(page.getByTestId("phase")).toContainText("Ready");
    await expect(page.getByRole("heading", { level: 2, name: "my-scenario" })).toBeVisible();
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 120_000 });
    const bob = page.getByRole("table").getByRole("row").filter({ hasText: "bob@b.example" });
    await expect(bob.getByRole("cell").nth(2)).toHaveText("accepted");
    await expect(page.getByTestId("checks-summary")).toHaveText(/^passed: all \d+ checks$/);

    // Back in the editor, the text is as it was left.
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Editor" }).click();
    await expect(line(page, "until: 30m")).toBeVisible();
    expect(await watched.csp()).toEqual([]);
    expect(watched.errors).toEqual([]);
  });

  test("a teaching scenario duplicates into the editor; hover docs; unsaved changes are asked about", async ({
    page,
  }) => {
    const watched = await watch(page);
    await page.goto("/");
    const row = library(page).getByRole("listitem").filter({ hasText: "teach-no-common-version" });
    await row.getByRole("button", { name: "Duplicate" }).click();
    await expect(page.getByTestId("editor-file")).toHaveText("teach-no-common-version-copy.yaml");
    await expect(line(page, "name: teach-no-common-version-copy")).toBeVisible();
    await expect(line(page, "capabilities: { versions: [v2]")).toBeVisible();
    await expect(page.getByRole("region", { name: "Problems" }).getByRole("heading")).toHaveText("No problems");
    await expect(page.getByTestId("unsaved")).toHaveCount(0);

    // Hover on a key: its path, type and description from the schema.
    await line(page, "seed: 22").getByText("seed").hover();
    const hover = page.locator(".cm-schema-hover");
    await expect(hover).toContainText("seed");
    await expect(hover).toContainText("integer ≥ 0 or string");
    await expect(hover).toContainText("--seed overrides it");
    await page.screenshot({ path: `${SHOTS}/editor-hover.png` });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: `${SHOTS}/editor-dark.png` });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "light" });

    // An edit, then New scenario: asked first; Cancel keeps the copy, Don't save replaces it.
    await line(page, "seed: 22").click();
    await page.keyboard.press("End");
    await page.keyboard.type("3");
    await expect(page.getByTestId("unsaved")).toBeVisible();
    await library(page).getByRole("button", { name: "New scenario…" }).click();
    const dialog = page.getByRole("dialog", { name: "Unsaved changes" });
    await expect(dialog).toContainText("Save changes to teach-no-common-version-copy.yaml?");
    await page.screenshot({ path: `${SHOTS}/editor-unsaved.png` });
    await noSeriousViolations(page);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toHaveCount(0);
    await expect(line(page, "seed: 223")).toBeVisible();
    await library(page).getByRole("button", { name: "New scenario…" }).click();
    await page.getByRole("dialog", { name: "Unsaved changes" }).getByRole("button", { name: "Don’t save" }).click();
    await expect(page.getByTestId("editor-file")).toHaveText("my-scenario.yaml");

    // Save as in the browser: a name, then a download of the text.
    await line(page, "seed: 1").click();
    await page.keyboard.press("End");
    await page.keyboard.type("7");
    await editorRegion(page).getByRole("button", { name: "Save as…" }).click();
    const saveAs = page.getByRole("dialog", { name: "Save as" });
    await saveAs.getByLabel("File name").fill("outage");
    const download = page.waitForEvent("download");
    await saveAs.getByRole("button", { name: "Save" }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe("outage.yaml");
    expect(readFileSync(await saved.path(), "utf8")).toMatch(/^seed: 17$/m);
    await expect(page.getByTestId("editor-file")).toHaveText("outage.yaml");
    await expect(page.getByTestId("unsaved")).toHaveCount(0);

    // Close with nothing unsaved asks nothing; the editor offers the templates again.
    await editorRegion(page).getByRole("button", { name: "Close" }).click();
    await expect(page.getByRole("region", { name: "New scenario" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Duplicate teach-no-common-version into the editor" })).toBeVisible();
    await noSeriousViolations(page);

    // A file the user opened is edited in place: the editor has its name and its text, nothing unsaved.
    await page.getByLabel("Open scenario…").setInputFiles({
      name: "mine.yaml",
      mimeType: "application/yaml",
      buffer: Buffer.from(readFileSync("scenarios/happy-path.yaml", "utf8").replace("name: happy-path", "name: mine")),
    });
    await expect(page.getByRole("heading", { level: 2, name: "mine" })).toBeVisible();
    const opened = library(page).getByRole("listitem").filter({ hasText: "mine" });
    await opened.getByRole("button", { name: "Edit" }).click();
    await expect(page.getByTestId("editor-file")).toHaveText("mine.yaml");
    await expect(line(page, "name: mine")).toBeVisible();
    await expect(page.getByTestId("unsaved")).toHaveCount(0);
    expect(await watched.csp()).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
