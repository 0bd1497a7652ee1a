/**
 * Issue 15 "Compare and fork", as a person sees it: from the run view,
 * Compare… runs the G16 scenario (b.example's receiver down for 2.5 hours,
 * jitter off) under a 1-hour and a 4-hour fallback window, each in a worker
 * of its own, and shows "smtp at +1:03:00" against "accepted at +3:03:00";
 * a fork at +0:30:00 that ends the outage delivers while the original goes to
 * SMTP, and the two runs are identical before the fork. The two timelines
 * share one axis: each overview's bars sit over its lanes' times, and a zoom,
 * pan or reset of either timeline is of both.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Locator, type Page } from "@playwright/test";

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

/** The axis labels of a timeline, left to right. */
const tickLabels = (run: Locator): Promise<string[]> => run.locator("svg.axis text.tick").allTextContents();

/** The middle x (page pixels) of each of an overview's bars, left to right. */
async function barXs(run: Locator): Promise<number[]> {
  const xs: number[] = [];
  for (const bar of await run.locator("figure.overview .recharts-bar-rectangle").all()) {
    const box = await bar.boundingBox();
    if (box) xs.push(box.x + box.width / 2);
  }
  return xs.sort((a, b) => a - b);
}

/** Where a mark is drawn (page pixels): its lane's plot, 4 px in, and its x there. */
async function markX(run: Locator, selector: string): Promise<number> {
  const mark = run.locator(selector);
  const plot = (await run.locator("svg.lane-plot").first().boundingBox())!;
  return plot.x + 4 + Number(await mark.getAttribute("data-x"));
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
    await expect(verdict).toHaveText("m1 bob@b.example: different outcome: smtp at +1:03:00 vs accepted at +3:03:00", {
      timeout: 120_000,
    });
    await expect(page.getByTestId("compare-summary")).toHaveText("Differ: 1 of 1 recipient ended differently.");
    // Where the runs part: 13 decisions alike (7 attempts judged, 6 retries timed), then A hands off and B
    // retries, where the 1 h window ends — not at attempt 1, judged under another window but alike (note 0039).
    const parting = page.getByTestId("parting");
    await expect(parting).toContainText("Where they part: at +1:03:00, after 13 decisions alike.");
    await expect(parting.getByRole("definition").first()).toContainText(
      "+1:03:00 handed bob@b.example to SMTP (fallback)",
    );
    await expect(parting.getByRole("definition").last()).toContainText("attempt 8 in 1h [RETRY-2]");
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
    // Issue 22: each timeline is a region of its own name (not two named "Delivery timeline"), as each retry chart.
    await expect(runA.getByRole("region", { name: "Delivery timeline of run A", exact: true })).toHaveCount(1);
    await expect(runB.getByRole("region", { name: "Delivery timeline of run B", exact: true })).toHaveCount(1);
    await runA.getByRole("button", { name: "m1@a.example → b.example", exact: true }).click();
    await runB.getByRole("button", { name: "m1@a.example → b.example", exact: true }).click();
    await expect(
      runA.getByRole("region", { name: "Retry delays of m1@a.example → b.example (of run A)" }),
    ).toBeVisible();
    await expect(
      runB.getByRole("region", { name: "Retry delays of m1@a.example → b.example (of run B)" }),
    ).toBeVisible();
    const landmarks = await new AxeBuilder({ page }).withRules(["landmark-unique"]).analyze();
    expect(landmarks.violations.flatMap((v) => v.nodes.map((n) => n.target.join(" ")))).toEqual([]);
    const windowA = await runA.getByTestId("timeline-window").textContent();
    expect(windowA).toMatch(/^\+0:00:00 – \+3:\d\d:\d\d$/);
    await expect(runB.getByTestId("timeline-window")).toHaveText(windowA ?? "");
    expect(await tickLabels(runB)).toEqual(await tickLabels(runA));
    // RETRY-5: B accepted at +3:03:00 inside its 4-hour window; its band ends there, not at +4:00:00.
    await expect(runB.locator('[data-band="fallback-window"]')).toHaveAttribute("data-until-ms", String(183 * 60_000));
    await expect(runA.locator('[data-band="fallback-window"]')).toHaveAttribute("data-until-ms", String(60 * 60_000));
    await page.screenshot({ path: `${SHOTS}/compare-g16-1h-vs-4h.png`, fullPage: true });

    // One view window for both: zooming A (keyboard +) zooms B alike, a pan of B pans A, a reset of A resets B.
    const wholeTicks = await tickLabels(runA);
    await runA.locator("[data-kind=attempt]").first().focus();
    await page.keyboard.press("+");
    await expect(runA.getByTestId("timeline-window")).toContainText("(zoomed)");
    const zoomedA = await runA.getByTestId("timeline-window").textContent();
    await expect(runB.getByTestId("timeline-window")).toHaveText(zoomedA ?? "");
    expect(await tickLabels(runA)).not.toEqual(wholeTicks);
    expect(await tickLabels(runB)).toEqual(await tickLabels(runA));
    await runB.locator("[data-kind=attempt]").first().focus();
    await page.keyboard.press("Shift+ArrowRight");
    await expect(runB.getByTestId("timeline-window")).not.toHaveText(zoomedA ?? "");
    const pannedB = await runB.getByTestId("timeline-window").textContent();
    await expect(runA.getByTestId("timeline-window")).toHaveText(pannedB ?? "");
    expect(await tickLabels(runA)).toEqual(await tickLabels(runB));
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/compare-g16-zoomed-together.png`, fullPage: true });
    // Log scale is shared too.
    await runB.getByRole("button", { name: "Log" }).click();
    await expect(runA.getByRole("button", { name: "Log" })).toHaveAttribute("aria-pressed", "true");
    expect(await tickLabels(runA)).toEqual(await tickLabels(runB));
    await runA.getByRole("button", { name: "Linear" }).click();
    await runA.getByRole("button", { name: "Reset zoom" }).click();
    await expect(runA.getByTestId("timeline-window")).toHaveText(windowA ?? "");
    await expect(runB.getByTestId("timeline-window")).toHaveText(windowA ?? "");
    await expect(runB.getByRole("button", { name: "Reset zoom" })).toBeDisabled();
    expect(await tickLabels(runB)).toEqual(wholeTicks);
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

    await expect(page.getByTestId("verdict")).toHaveText(
      "m1 bob@b.example: different outcome: smtp at +2:03:00 vs accepted at +0:31:00",
      { timeout: 120_000 },
    );
    // Where they part, after the fork: the original's attempt at +0:31:00 finds the receiver down, the fork's is accepted.
    const parting = page.getByTestId("parting");
    await expect(parting).toContainText(/^Where they part: at \+0:31:00, after \d+ decisions alike\./);
    await expect(parting.getByRole("definition").first()).toHaveText(
      /^\+0:31:00 m1@a\.example→b\.example: attempt 6 over at capabilities \(temporary, fallback-eligible/,
    );
    await expect(parting.getByRole("definition").last()).toHaveText(
      "+0:31:00 m1@a.example→b.example: bob@b.example: accepted",
    );
    await expect(page.getByTestId("prefix-check")).toHaveText(
      /^Before the fork: identical before \+0:30:00 \(\d+ events, prefix hash [0-9a-f]{12}\)$/,
    );
    const runA = page.getByRole("region", { name: "Run A: original" });
    const runB = page.getByRole("region", { name: "Run B: fork at +0:30:00: ended fault b-down" });
    await expect(runA).toBeVisible();
    await expect(runB).toBeVisible();

    // Both overviews draw their bars on the lanes' shared axis: B's accepted attempt at +0:31:00 sits under its
    // last bar (a bucket is about 8 px wide), not stretched out to the right edge over the original's +2:03:00.
    await expect(runA.locator("figure.overview .recharts-bar-rectangle")).not.toHaveCount(0);
    await expect(runB.locator("figure.overview .recharts-bar-rectangle")).not.toHaveCount(0);
    const lastBarB = (await barXs(runB)).at(-1)!;
    expect(Math.abs(lastBarB - (await markX(runB, "[data-kind=attempt][data-outcome=accepted]")))).toBeLessThan(10);
    const lastBarA = (await barXs(runA)).at(-1)!;
    expect(Math.abs(lastBarA - (await markX(runA, "[data-kind=handoff]")))).toBeLessThan(10);

    // RETRY-5: the fork's message was accepted at +0:31:00, so its fallback window band ends there, while the
    // original's runs its whole two hours (it was handed to SMTP at +2:03:00, after the window).
    await expect(runB.locator('[data-band="fallback-window"]')).toHaveAttribute("data-until-ms", String(31 * 60_000));
    await expect(runA.locator('[data-band="fallback-window"]')).toHaveAttribute("data-until-ms", String(120 * 60_000));

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

  test("two seeds that bounce alike — same outcome, the DSNs matched by what they report on, and where they part", async ({
    page,
  }) => {
    await open(page, "state-6-give-up-after-5-days");
    await page.getByRole("button", { name: "Compare…" }).click();
    const form = page.getByRole("form", { name: "What to compare" });
    await form.getByRole("button", { name: "Two seeds" }).click();
    await form.getByLabel("Seed A").fill("1");
    await form.getByLabel("Seed B").fill("2");
    await form.getByRole("button", { name: "Run both" }).click();
    const verdicts = page.getByTestId("verdict");
    await expect(verdicts).toHaveCount(2, { timeout: 120_000 });
    await expect(verdicts.first()).toHaveAttribute("data-kind", "same-outcome");
    await expect(verdicts.first()).toContainText(
      /^m1 bob@b\.example: same outcome, different time or attempts: bounced at \+5d 0:00:00 in both; attempts \d+ vs \d+/,
    );
    await expect(verdicts.last()).toHaveText(
      "DSN of m1 (bounced: bob@b.example) alice@a.example: same: accepted at +5d 0:00:00",
    );
    await expect(page.getByTestId("compare-summary")).toHaveText(
      "Same outcomes: all 2 recipients ended the same way, 1 of them at another time or after other attempts.",
    );
    const parting = page.getByTestId("parting");
    await expect(parting).toContainText(/^Where they part: at \+0:\d\d:\d\d/);
    await expect(parting.getByRole("definition").first()).toContainText(/attempt \d+ in/);
    await page.screenshot({ path: `${SHOTS}/compare-two-seeds.png`, fullPage: true });
    await noSeriousViolations(page);
  });
});
