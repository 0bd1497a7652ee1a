/**
 * Issue 15 "Compare and fork", as a person sees it: from the run view,
 * Compare… runs the G16 scenario (b.example's receiver down for 2.5 hours,
 * jitter off) under a 1-hour and a 4-hour fallback window, each in a worker
 * of its own, and shows "smtp at +1:03:00" against "accepted at +3:03:00";
 * a fork at +0:30:00 that ends the outage delivers while the original goes to
 * SMTP, and the two runs are identical before the fork.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";

const SHOTS = "test-results/screenshots";

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

async function open(page: Page, name: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
}

test.describe("compare and fork", () => {
  test("G16 fallback window 1h vs 4h: smtp at +1:03:00 against accepted at +3:03:00, the differences highlighted", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await open(page, "gap-G16-fallback-window-4h");
    await page.getByRole("button", { name: "Compare…" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "Compare: gap-G16-fallback-window-4h" })).toBeVisible();
    const form = page.getByRole("form", { name: "What to compare" });
    await expect(form.getByRole("button", { name: "Two readings" })).toHaveAttribute("aria-pressed", "true");
    await form.getByLabel("Gap").selectOption("G16 fallback-window");
    await form.getByLabel("Reading A").selectOption("1h");
    await form.getByLabel("Reading B").selectOption("4h");
    await form.getByRole("button", { name: "Run both" }).click();

    const verdict = page.getByTestId("verdict");
    await expect(verdict).toHaveText("m1 bob@b.example: smtp at +1:03:00 vs accepted at +3:03:00", {
      timeout: 120_000,
    });
    await expect(page.getByTestId("compare-summary")).toHaveText("Differ: 1 of 1 recipient ended differently.");
    const table = page.getByRole("table");
    const a = table.locator('tr[data-run="A"]');
    const b = table.locator('tr[data-run="B"]');
    await expect(a.locator('[data-field="outcome"]')).toHaveText("smtp (fallback) (differs)");
    await expect(b.locator('[data-field="outcome"]')).toHaveText("accepted (differs)");
    await expect(a.locator('[data-field="time"]')).toHaveText("+1:03:00 (differs)");
    await expect(b.locator('[data-field="time"]')).toHaveText("+3:03:00 (differs)");
    await expect(b.locator('[data-field="attempts"]')).toHaveAttribute("data-differs", "true");

    // The two timelines, stacked on one time axis: the same window, from the start to after the later run's end.
    const runA = page.getByRole("region", { name: "Run A: G16 fallback window 1h" });
    const runB = page.getByRole("region", { name: "Run B: G16 fallback window 4h" });
    await expect(runA.getByRole("heading", { name: "Delivery timeline" })).toBeVisible();
    await expect(runB.getByRole("heading", { name: "Delivery timeline" })).toBeVisible();
    const windowA = await runA.getByTestId("timeline-window").textContent();
    expect(windowA).toMatch(/^\+0:00:00 – \+3:\d\d:\d\d$/);
    await expect(runB.getByTestId("timeline-window")).toHaveText(windowA ?? "");
    await page.screenshot({ path: `${SHOTS}/compare-g16-1h-vs-4h.png`, fullPage: true });
    await noSeriousViolations(page);
    expect(errors).toEqual([]);
  });

  test("fork at +0:30:00 ending the outage: the fork delivers while the original goes to SMTP, identical before the fork", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await open(page, "gap-G16-fallback-window-2h");
    // The playhead at +0:30:00 is where the fork starts.
    await page.getByLabel("Jump to").fill("+0:30:00");
    await page.getByRole("button", { name: "Go", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Paused", { timeout: 60_000 });
    await page.getByRole("button", { name: "Compare…" }).click();
    const form = page.getByRole("form", { name: "What to compare" });
    await form.getByRole("button", { name: "Fork at a time" }).click();
    await expect(form.getByLabel("Fork at")).toHaveValue("+0:30:00");
    await form.getByLabel("Change").selectOption({ label: "End fault b-down (connection-refused) now" });
    await form.getByRole("button", { name: "Run the fork beside the original" }).click();

    await expect(page.getByTestId("verdict")).toHaveText("m1 bob@b.example: smtp at +2:03:00 vs accepted at +0:31:00", {
      timeout: 120_000,
    });
    await expect(page.getByTestId("prefix-check")).toHaveText(
      /^Before the fork: identical before \+0:30:00 \(\d+ events, prefix hash [0-9a-f]{12}\)$/,
    );
    await expect(page.getByRole("region", { name: "Run A: original" })).toBeVisible();
    await expect(page.getByRole("region", { name: "Run B: fork at +0:30:00: ended fault b-down" })).toBeVisible();

    // The fork saves as a scenario file (a download in the browser).
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Save the fork…" }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe("gap-G16-fallback-window-2h-fork-30m.yaml");
    await page.screenshot({ path: `${SHOTS}/compare-fork-end-outage.png`, fullPage: true });
    await noSeriousViolations(page);

    // A fork that cannot be made says why: no fault is active after the outage.
    await form.getByLabel("Fork at").fill("+3:00:00");
    await form
      .getByLabel("Change")
      .selectOption({ label: "Submit a message from alice@a.example to bob@b.example now" });
    await expect(form.getByRole("option", { name: "End fault b-down (connection-refused) now" })).toHaveCount(0);
    expect(errors).toEqual([]);
  });
});
