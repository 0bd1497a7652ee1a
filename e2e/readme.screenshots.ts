/**
 * The README's pictures (docs/screenshots/*.png), made by `npm run screenshots` and by nothing else: `npm test`
 * never writes a tracked file (note 0039: a test run leaves the work tree as it was). One test per picture, named after its file; the picture is what the
 * test shows when it ends (`shot`). To add a picture to the README: add a test here named `<file>.png`, put
 * the picture in README.md (or a doc) as `docs/screenshots/<file>.png`, run `npm run screenshots`.
 * scripts/screenshots.test.ts checks that the docs and this file name the same pictures.
 *
 * The test project "readme" (playwright.config.ts) exists only when MAILSCOPE_README_SCREENSHOTS=1, which
 * `npm run screenshots` sets: a plain `playwright test` does not run this file.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { writeFileSync } from "node:fs";
import { runProbe } from "../app/probe/probe.ts";
import { inProcessProbe } from "../app/probe/testing.ts";
import { exportJson } from "../app/trace/exportJson.ts";
import { writeDifferingBundle } from "./differingBundle.ts";

test.use({ viewport: { width: 1440, height: 1000 } });

/** Saves the picture of this test (named after it) into docs/screenshots: the page's viewport, or an element. */
async function shot(page: Page, of?: Locator): Promise<void> {
  const path = `docs/screenshots/${test.info().title}`;
  await page.mouse.move(0, 0);
  if (of === undefined) return void (await page.screenshot({ path }));
  // The title bar and the playback bar are sticky: let them scroll away, so that they do not cover the element.
  await page.addStyleTag({ content: ".titlebar, .controls { position: static !important; }" });
  await of.scrollIntoViewIfNeeded();
  await of.screenshot({ path });
}

const library = (page: Page) => page.getByRole("navigation", { name: "Scenarios" });
const outcomeRow = (page: Page, recipient: string) =>
  page.getByRole("table").first().getByRole("row").filter({ hasText: recipient });

async function open(page: Page, name: string): Promise<void> {
  await page.goto("/");
  // An entry is named by its title and its file's name (note 0080): the one whose name ends with this file's.
  const file = new RegExp(`(^| )${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
  await library(page).getByRole("button", { name: file }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
}

async function runToEnd(page: Page, name: string): Promise<void> {
  await open(page, name);
  await page.getByRole("button", { name: "Speed max" }).click();
  await page.getByRole("button", { name: "Play", exact: true }).click();
  await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
}

async function jump(page: Page, to: string): Promise<void> {
  await page.getByLabel("Jump to").fill(to);
  await page.getByRole("button", { name: "Go", exact: true }).click();
  await expect(page.getByTestId("phase")).toContainText("Paused", { timeout: 60_000 });
}

const region = (page: Page, name: string) => page.getByRole("region", { name });

test.describe("the README's screenshots", () => {
  test("run-rate-limited-then-down.png", async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 1260 });
    await runToEnd(page, "rate-limited-then-down");
    await expect(outcomeRow(page, "bob@b.example")).toContainText("bounced");
    await expect(page.getByTestId("checks-summary")).toBeVisible();
    await shot(page);
  });

  test("run-paused.png", async ({ page }) => {
    await open(page, "rate-limited-then-down");
    await jump(page, "+2:00:00");
    for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Step", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Paused");
    await shot(page);
  });

  test("run-dark.png", async ({ page }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.setViewportSize({ width: 1440, height: 1300 });
    await runToEnd(page, "gap-G16-fallback-window-2h");
    await page.getByText("Readings of the spec's gaps").click();
    await expect(page.getByLabel("G16 fallback window")).toBeVisible();
    await shot(page);
  });

  test("scenario-errors.png", async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Open scenario…").setInputFiles("e2e/fixtures/broken.yaml");
    await expect(page.getByRole("alert")).toContainText("broken.yaml:7:9: messages[0].to:");
    await shot(page);
  });

  test("opened-trace.png", async ({ page }, info) => {
    await page.setViewportSize({ width: 1440, height: 1200 });
    await runToEnd(page, "rate-limited-then-down");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Trace JSON" }).click(),
    ]);
    const file = info.outputPath("rate-limited-then-down.mailscope-trace.json");
    await download.saveAs(file);
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(file);
    await expect(page.getByText("opened trace")).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Finished");
    await shot(page);
  });

  test("why.png", async ({ page }) => {
    await runToEnd(page, "rate-limited-then-down");
    await page.getByRole("button", { name: /^Why\? bob@b\.example of m1: bounced$/ }).click();
    const why = page.getByTestId("why-panel");
    await expect(page.getByTestId("why-headline")).toHaveText("bounced at +5d 0:00:00");
    await shot(page, why);
  });

  test("timeline.png", async ({ page }) => {
    await runToEnd(page, "rate-limited-then-down");
    // The delivery chosen in the outcomes: its retry delays drawn under the lanes.
    await outcomeRow(page, "bob@b.example").getByRole("button", { name: "m1", exact: true }).click();
    await expect(region(page, "Retry delays of m1 → b.example")).toBeVisible();
    await shot(page, region(page, "Delivery timeline"));
  });

  test("sequence.png", async ({ page }) => {
    await runToEnd(page, "teach-mixed-recipient-results");
    const sequence = region(page, "Sequence diagram");
    await sequence.getByRole("combobox", { name: "Message" }).selectOption({ label: "m1" });
    await sequence.getByText("Mermaid text").click();
    await expect(sequence.getByTestId("sequence-mermaid")).toContainText("sequenceDiagram");
    await shot(page, sequence);
  });

  test("inspector.png", async ({ page }) => {
    await runToEnd(page, "rate-limited-then-down");
    const lane = region(page, "Delivery timeline").locator(".lane").filter({ hasText: "m1 → b.example" });
    await lane.locator("[data-kind=attempt][data-attempt='1']").click();
    const inspector = region(page, "Exchange inspector");
    await expect(inspector.getByTestId("exchange-title")).toContainText("POST /v1/messages");
    await shot(page, inspector);
  });

  test("statechart.png", async ({ page }) => {
    // A wide window, where the labels read at a glance.
    await page.setViewportSize({ width: 1920, height: 1200 });
    await runToEnd(page, "rate-limited-then-down");
    await expect(page.getByTestId("active-state")).toHaveText("bounced");
    await shot(page, region(page, "Delivery machine"));
  });

  test("rules-fired.png", async ({ page }) => {
    await page.setViewportSize({ width: 1600, height: 1100 });
    await runToEnd(page, "rate-limited-then-down");
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Rules" }).click();
    await page.getByLabel("Search rules").fill("STATE-7");
    await page.getByLabel(/^STATE-7: cited by \d+ events of this run$/).click();
    await expect(page.getByRole("list", { name: "Events citing STATE-7" })).toBeVisible();
    await page.getByLabel("Search rules").fill("");
    await page.getByLabel(/Fired in this run/).check();
    await shot(page);
  });

  test("sweep.png", async ({ page }) => {
    await open(page, "receiver-down-past-fallback-window");
    await page.getByRole("button", { name: "Sweep…" }).click();
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Field").selectOption("faults.network[b-down].until");
    await form.getByLabel("To", { exact: true }).fill("3h");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText(/^Done: /, { timeout: 120_000 });
    // The charts draw one per frame after the results: the last of them has its 5 points.
    await expect(page.getByTestId("attempts-chart").getByRole("button", { name: /^Attempts at / })).toHaveCount(5);
    await shot(page);
  });

  test("probe-report.png", async ({ page }, info) => {
    // A probe of a receiver that takes a signature created an hour ago: one MUST case fails (as in e2e/probe.spec.ts).
    const { options, ports } = await inProcessProbe("stale-accepted");
    const run = await runProbe(options, ports);
    const file = info.outputPath("probe.mstrace");
    writeFileSync(file, exportJson(run.trace, { full: true }));
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(file);
    await expect(page.getByTestId("probe-case")).toContainText("FAIL signature-stale · MUST");
    await expect(region(page, "Exchange inspector").getByText(/created \d+ is 3600 s old/)).toBeVisible();
    await shot(page);
  });

  test.describe("the scenario editor", () => {
    const line = (page: Page, content: string) => page.locator(".cm-line").filter({ hasText: content });
    const typeLine = async (page: Page, content: string) => {
      await page.keyboard.press("Enter");
      await page.keyboard.press("Shift+Home");
      await page.keyboard.type(content);
      await page.keyboard.press("Escape");
    };
    /** A new scenario whose one network fault has its kind misspelt. */
    const misspelt = async (page: Page) => {
      await page.goto("/");
      await library(page).getByRole("button", { name: "New scenario…" }).click();
      await line(page, "network: []").click();
      await page.keyboard.press("End");
      for (let i = 0; i < 3; i++) await page.keyboard.press("Backspace");
      await typeLine(page, "    - kind: conection-refused");
      await typeLine(page, "      until: 30m");
      await expect(page.locator(".cm-inline-problem")).toContainText('unknown kind "conection-refused"');
    };

    test("editor-error.png", async ({ page }) => {
      await misspelt(page);
      await shot(page);
    });

    test("editor-completion.png", async ({ page }) => {
      await misspelt(page);
      await line(page, "- kind: conection-refused").click();
      await page.keyboard.press("End");
      for (let i = 0; i < "conection-refused".length; i++) await page.keyboard.press("Backspace");
      await page.keyboard.type("conn");
      await expect(
        page.getByRole("listbox").getByRole("option", { name: "connection-refused", exact: true }),
      ).toBeVisible();
      await shot(page);
    });
  });

  test.describe("compare", () => {
    test.use({ viewport: { width: 1280, height: 1180 } });

    test("compare-readings.png", async ({ page }) => {
      await open(page, "gap-G16-fallback-window-4h");
      await page.getByRole("button", { name: "Compare…" }).click();
      const form = page.getByRole("form", { name: "What to compare" });
      await form.getByLabel("Gap").selectOption("G16 fallback-window");
      await form.getByLabel("Reading A").selectOption("1h");
      await form.getByLabel("Reading B").selectOption("4h");
      await form.getByRole("button", { name: "Run both" }).click();
      await expect(page.getByTestId("verdict")).toContainText("smtp at +1:03:00 vs accepted at +3:03:00", {
        timeout: 120_000,
      });
      await shot(page);
    });

    test("compare-fork.png", async ({ page }) => {
      await open(page, "gap-G16-fallback-window-2h");
      await jump(page, "+0:30:00");
      await page.getByRole("button", { name: "Compare…" }).click();
      const form = page.getByRole("form", { name: "What to compare" });
      await form.getByRole("button", { name: "Fork at a time" }).click();
      await form.getByLabel("Change").selectOption({ label: "End fault b-down (connection-refused) now" });
      await form.getByRole("button", { name: "Run the fork beside the original" }).click();
      await expect(page.getByTestId("prefix-check")).toContainText("identical before +0:30:00", { timeout: 120_000 });
      await shot(page);
    });
  });

  test.describe("bug bundles", () => {
    const rerun = async (page: Page, file: string, reproduced: boolean) => {
      await page.goto("/");
      await page.getByLabel("Open trace…").setInputFiles(file);
      const panel = region(page, "Bug bundle");
      await panel.getByRole("button", { name: "Re-run and compare" }).click();
      await expect(page.getByTestId("replay-verdict")).toHaveAttribute("data-reproduced", String(reproduced), {
        timeout: 60_000,
      });
      await shot(page, panel);
    };

    test("bundle-reproduced.png", async ({ page }, info) => {
      const name = "state-1-temporary-failure-retried";
      await runToEnd(page, name);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("group", { name: "Export" }).getByRole("button", { name: "Bug bundle" }).click(),
      ]);
      const file = info.outputPath(`${name}.mailscope-bundle.json`);
      await download.saveAs(file);
      await rerun(page, file, true);
    });

    test("bundle-not-reproduced.png", async ({ page }, info) => {
      // A consistent bundle of a run its scenario text does not make (the receiver unavailable 3 times, not 2).
      const file = info.outputPath("state-1-temporary-failure-retried.mailscope-bundle.json");
      writeDifferingBundle(file);
      await rerun(page, file, false);
    });
  });
});
