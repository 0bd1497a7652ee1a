/**
 * Issue 30 "Where is the boundary?", as a person sees it: from the run view of
 * receiver-down-past-fallback-window (b.example's receiver down for 3 hours,
 * jitter off, a 2-hour fallback window), Sweep… varies the outage's end from
 * 1h to 3h in 30-minute steps, each point a run in a pool of workers. The
 * charts draw a band per outcome; the table says accepted up to 2h, then smtp
 * at +2:03:00 after 8 attempts (STATE-3), and the boundary between 2h and
 * 2h30m. A point opens its run in the run view; the boundary opens Compare of
 * its two sides, which says where they part. A sweep of the draft's own
 * backoff cap (RETRY-2.cap) says its runs depart from SPEC.md, and the run
 * opened from it says so too.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";

const SHOTS = "test-results/screenshots";

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

async function openSweep(page: Page, name: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
  await page.getByRole("button", { name: "Sweep…" }).click();
  await expect(page.getByRole("heading", { level: 2, name: `Sweep: ${name}` })).toBeVisible();
}

test.describe("sweep", () => {
  test("the outage's end from 1h to 3h: accepted up to 2h, then smtp at +2:03:00; the point and the boundary open", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await openSweep(page, "receiver-down-past-fallback-window");
    const form = page.getByRole("form", { name: "What to sweep" });
    // The form starts on the scenario's first field with a range around its value.
    await form.getByLabel("Field").selectOption("faults.network[b-down].until");
    await expect(form.getByLabel("From", { exact: true })).toHaveValue("1h");
    await expect(form.getByLabel("To", { exact: true })).toHaveValue("6h");
    await form.getByLabel("To", { exact: true }).fill("3h");
    await page.screenshot({ path: `${SHOTS}/sweep-form.png`, fullPage: true });
    await noSeriousViolations(page);
    await form.getByRole("button", { name: "Run the sweep" }).click();

    await expect(page.getByTestId("sweep-progress")).toHaveText("Done: 5 runs, 5 points, 1 boundary.", {
      timeout: 120_000,
    });
    const rows = page.getByTestId("sweep-point");
    await expect(rows).toHaveCount(5);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "smtp",
      "smtp",
    ]);
    const smtp = rows.nth(3);
    await expect(smtp.locator("td").nth(0)).toHaveText("2h30m");
    await expect(smtp.locator("td").nth(2)).toHaveText("+2:03:00");
    await expect(smtp.locator("td").nth(3)).toHaveText("8");
    await expect(page.getByTestId("boundary")).toHaveCount(1);
    await expect(page.getByTestId("boundary")).toContainText("boundary between 2h and 2h30m: accepted → smtp");
    // One band per outcome in the outcome chart, and a dot per point in the time chart.
    const bands = page.getByTestId("outcome-bands");
    await expect(bands.locator(".recharts-area")).toHaveCount(2);
    await expect(bands.locator(".recharts-legend-item-text")).toHaveText(["accepted", "smtp"]);
    // A band changes only between measured values: every corner of its outline sits at a point's x (the dots),
    // none halfway between 2h and 2h30m (a step there claimed a boundary at 2h15m that no run measured).
    const measuredX = await bands
      .locator(".recharts-area-dots")
      .first()
      .locator("circle")
      .evaluateAll((dots) => dots.map((d) => Math.round(Number(d.getAttribute("cx")))));
    expect(measuredX).toHaveLength(5);
    for (const curve of await bands.locator(".recharts-area-curve").all()) {
      const corners = [...((await curve.getAttribute("d")) ?? "").matchAll(/[ML]\s*([\d.]+)[ ,]/g)].map((m) =>
        Math.round(Number(m[1])),
      );
      expect(corners.length).toBeGreaterThan(0);
      for (const x of corners) expect(measuredX).toContain(x);
    }
    // Each dot is a button named by its point and value (what a keyboard user reaches by Tab).
    await expect(page.getByTestId("time-chart").getByRole("button", { name: /^Time at / })).toHaveCount(5);
    await expect(page.getByTestId("time-chart").getByRole("button", { name: "Time at 2h30m: +2:03:00" })).toBeVisible();
    // The charts draw one per frame: the last (attempts) has its points before the screenshots.
    await expect(page.getByTestId("attempts-chart").getByRole("button", { name: /^Attempts at / })).toHaveCount(5);
    await page.screenshot({ path: `${SHOTS}/sweep-outage-end.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: `${SHOTS}/sweep-outage-end-dark.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "light" });

    // A point opens its run in the run view: the 2h30m outage goes to SMTP at +2:03:00.
    await page.getByRole("button", { name: "Open run at 2h30m" }).click();
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=2h30m",
      }),
    ).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=2h30m",
      }),
    ).toBeVisible();
    // Back in the Sweep view, the results are still there.
    await page.getByRole("button", { name: "Back to the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText("Done: 5 runs, 5 points, 1 boundary.");

    // The boundary opens Compare of its two sides, which says where they part.
    await page.getByRole("button", { name: "Compare 2h and 2h30m" }).click();
    await expect(page.getByTestId("verdict")).toHaveText(
      "m1 bob@b.example: different outcome: accepted at +2:03:00 vs smtp at +2:03:00",
      {
        timeout: 120_000,
      },
    );
    // What is compared is the boundary's two points, said first; the form (whose fields would name something
    // else: its first gap) is folded away until asked for.
    await expect(page.getByTestId("compare-preset")).toHaveText(
      "The sweep's boundary: A faults.network[b-down].until=2h · B faults.network[b-down].until=2h30m.",
    );
    const compareForm = page.getByRole("form", { name: "What to compare" });
    await expect(compareForm).toBeHidden();
    await page.screenshot({ path: `${SHOTS}/sweep-boundary-compare.png`, fullPage: true });
    await noSeriousViolations(page);
    // Compare something else from there: the line about the boundary goes with the boundary's result.
    await page.getByText("Compare something else").click();
    await expect(compareForm).toBeVisible();
    await compareForm.getByRole("button", { name: "Two seeds" }).click();
    await compareForm.getByRole("button", { name: "Run both" }).click();
    await expect(page.getByRole("region", { name: "Verdicts" })).toContainText(/A: seed \d+ · B: seed \d+/, {
      timeout: 120_000,
    });
    await expect(page.getByTestId("compare-preset")).toHaveCount(0);
    await page.getByRole("button", { name: "Back to the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText("Done: 5 runs, 5 points, 1 boundary.");
    expect(errors).toEqual([]);
  });

  test("RETRY-3: gap-G16-jitter-on's window 1h..3h under 5 seeds: shares, spread and a box per point, by recipient", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await openSweep(page, "gap-G16-jitter-on");
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Field").selectOption("G16.fallback-window");
    await form.getByLabel("To", { exact: true }).fill("3h");
    await form.getByLabel("Step", { exact: true }).fill("1h");
    await form.getByLabel("Seeds", { exact: true }).fill("5");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText("Done: 15 runs, 3 points, 3 boundaries.", {
      timeout: 120_000,
    });
    // m1's times spread with the draws (the same as `mailscope sweep --seeds 1..5` prints).
    const rows = page.getByTestId("sweep-point");
    await expect(rows.nth(0).locator("td").nth(2)).toHaveText("+1:04:44 … +1:53:51 (median +1:06:39, p90 +1:53:51)");
    await expect(rows.nth(0).locator("td").nth(3)).toHaveText("7 (7–8)");
    const boxes = page.getByTestId("box-chart").locator("g.box");
    await expect(boxes).toHaveCount(3);
    await expect(boxes.first()).toHaveAttribute("data-value", "1h");
    await expect(page.getByTestId("boundary")).toHaveText([/m1 bob@b\.example: boundary between 2h and 3h/]);
    // Another recipient: carol at 2h is accepted in 2 of 5 runs.
    await page.getByLabel("Recipient", { exact: true }).selectOption("m2 carol@c.example");
    await expect(rows.nth(1).locator("td").nth(1)).toHaveText("accepted 40 % · smtp 60 %");
    await expect(page.getByTestId("boundary")).toHaveText([/m2 carol@c\.example: boundary between 2h and 3h/]);
    // The list says whose boundaries it shows, of the 3 the progress line counts.
    await expect(
      page.getByRole("heading", { level: 3, name: /^Boundaries of m2 carol@c\.example: 1 of the sweep's 3/ }),
    ).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/sweep-jitter-seeds.png`, fullPage: true });
    await noSeriousViolations(page);
    expect(errors).toEqual([]);
  });

  test("RETRY-2.cap, one of the draft's numbers: the sweep's runs depart from SPEC.md, and the run opened says so", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await openSweep(page, "receiver-down-past-fallback-window");
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Field").selectOption("RETRY-2.cap");
    await expect(form.getByRole("note")).toHaveText(
      "Every point changes the draft's RETRY-2.cap: its runs depart from SPEC.md, and say so.",
    );
    await form.getByLabel("From", { exact: true }).fill("30m");
    await form.getByLabel("To", { exact: true }).fill("1h");
    await form.getByLabel("Step", { exact: true }).fill("30m");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText(/^Done: 2 runs, 2 points, \d+ boundar(y|ies)\.$/, {
      timeout: 120_000,
    });
    await page.screenshot({ path: `${SHOTS}/sweep-retry-cap.png`, fullPage: true });
    await page.getByRole("button", { name: "Open run at 30m" }).click();
    await expect(page.getByTestId("departs-from-spec")).toContainText("This run departs from SPEC.md: RETRY-2.cap 30m");
    await expect(page.getByTestId("phase")).toContainText("Ready");
    await expect(
      page.getByRole("heading", { level: 2, name: "receiver-down-past-fallback-window at RETRY-2.cap=30m" }),
    ).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/sweep-point-departs.png`, fullPage: true });
    await noSeriousViolations(page);
    expect(errors).toEqual([]);
  });

  test("a grid: the outage's end by the fallback window, a small chart and a line per window; leave, stop, come back", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await openSweep(page, "receiver-down-past-fallback-window");
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Field").selectOption("faults.network[b-down].until");
    await form.getByLabel("To", { exact: true }).fill("3h");
    await form.getByLabel("Step", { exact: true }).fill("1h");
    await form.getByLabel("Series by").selectOption("G16.fallback-window");
    await expect(form.getByLabel("Series from")).toHaveValue("1h");
    await form.getByLabel("Series to").fill("3h");
    await form.getByLabel("Series step").fill("2h");
    // A wrong move: start, then stop at once; the points that ran are kept and said. Under 20 seeds a point
    // is 20 runs, so that the sweep is still running when Stop is clicked, however fast the machine.
    await form.getByLabel("Seeds").fill("20");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await form.getByRole("button", { name: "Stop" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText(/^Stopped: \d of 6 points ran\.$/, {
      timeout: 120_000,
    });
    await expect(form.getByRole("button", { name: "Run the sweep" })).toBeEnabled();
    await form.getByLabel("Seeds").fill("1");
    // Another: start again, go back to the run and come back while it runs; it goes on, and ends.
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await page.getByRole("button", { name: "Back to the run" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "receiver-down-past-fallback-window" })).toBeVisible();
    await page.getByRole("button", { name: "Sweep…" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText("Done: 6 runs, 6 points, 3 boundaries.", {
      timeout: 120_000,
    });
    await expect(form.getByLabel("Series by")).toHaveValue("G16.fallback-window");
    // STATE-3 and RETRY-5: a 1h window sends outages past 1h to SMTP; a 3h window accepts all three.
    const rows = page.getByTestId("sweep-point");
    await expect(rows).toHaveCount(6);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).toEqual([
      "accepted",
      "smtp",
      "smtp",
      "accepted",
      "accepted",
      "accepted",
    ]);
    await expect(page.getByRole("columnheader", { name: "G16.fallback-window" })).toBeVisible();
    await expect(rows.nth(4).locator("td").nth(1)).toHaveText("3h");
    // One small chart of the outcome bands per window, one line per window in the time and attempts charts.
    const small = page.getByTestId("outcome-band");
    await expect(small).toHaveCount(2);
    await expect(small.locator("figcaption")).toHaveText(["G16.fallback-window = 1h", "G16.fallback-window = 3h"]);
    await expect(page.getByTestId("outcome-bands").getByRole("list", { name: "Outcomes" })).toHaveText(
      /accepted\s*smtp/,
    );
    await expect(page.getByTestId("time-chart").locator(".recharts-legend-item-text")).toHaveText([
      "G16.fallback-window 1h",
      "G16.fallback-window 3h",
    ]);
    await expect(page.getByTestId("attempts-chart").locator(".recharts-line")).toHaveCount(2);
    await expect(page.getByTestId("attempts-chart").getByRole("button", { name: /^Attempts at / })).toHaveCount(6);
    await expect(page.getByTestId("boundary")).toHaveText([
      /^boundary between 1h and 2h \(faults\.network\[b-down\]\.until; G16\.fallback-window 1h\): accepted → smtp Compare 1h and 2h at G16\.fallback-window 1h$/,
      /boundary between 1h and 3h \(G16\.fallback-window; faults\.network\[b-down\]\.until 2h\): smtp → accepted/,
      /boundary between 1h and 3h \(G16\.fallback-window; faults\.network\[b-down\]\.until 3h\): smtp → accepted/,
    ]);
    // The table puts a boundary only between its two rows (along the outage's end, in the 1h window's block);
    // those along the window join rows of two blocks and are listed under the table.
    await expect(page.locator(".boundary-row")).toHaveText([/^↳ boundary between 1h and 2h \(faults/]);
    await expect(page.locator(".boundary-row + tr td").first()).toHaveText("2h");
    await expect(page.getByTestId("boundaries-apart").getByRole("listitem")).toHaveText([
      /between 1h and 3h \(G16\.fallback-window; faults\.network\[b-down\]\.until 2h\)/,
      /between 1h and 3h \(G16\.fallback-window; faults\.network\[b-down\]\.until 3h\)/,
    ]);
    await page.screenshot({ path: `${SHOTS}/sweep-grid.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: `${SHOTS}/sweep-grid-dark.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "light" });

    // A wrong move: a boundary first, then a point. The boundary opens Compare of its sides with the window held.
    await page.getByRole("button", { name: "Compare 1h and 2h at G16.fallback-window 1h" }).click();
    await expect(page.getByTestId("verdict")).toContainText("different outcome", { timeout: 120_000 });
    await page.getByRole("button", { name: "Back to the sweep" }).click();
    // The right end of the 3h window's small chart is its 3h outage: its run opens with both values.
    const surface = small.nth(1).locator(".recharts-surface");
    await surface.scrollIntoViewIfNeeded();
    const box = await surface.boundingBox();
    if (box === null) throw new Error("no small chart");
    // As a person does: the pointer rests on the point (its tooltip shows), then clicks.
    const at = { x: box.width - 26, y: box.height / 2 };
    await surface.hover({ position: at });
    await expect(small.nth(1).locator(".recharts-tooltip-wrapper")).toContainText("3h");
    await surface.click({ position: at });
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=3h, G16.fallback-window=3h",
      }),
    ).toBeVisible();
    await page.getByRole("button", { name: "Back to the sweep" }).click();
    await page.getByRole("button", { name: "Open run at 2h, G16.fallback-window 1h" }).click();
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=2h, G16.fallback-window=1h",
      }),
    ).toBeVisible();
    await page.getByRole("button", { name: "Back to the sweep" }).click();

    // A dot of a grid's line opens its own point, not the x's first: the 3h window's line at 2h in the time chart.
    const timeDots = page.getByTestId("time-chart").getByRole("button");
    await expect(timeDots).toHaveCount(6);
    const dot = page
      .getByTestId("time-chart")
      .getByRole("button", { name: /^Time at 2h, G16\.fallback-window 3h: \+/ });
    await expect(dot).toHaveCount(1);
    await dot.click();
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=2h, G16.fallback-window=3h",
      }),
    ).toBeVisible();
    await page.getByRole("button", { name: "Back to the sweep" }).click();
    // By keyboard: Tab from one dot of the attempts chart reaches the next on its line; Enter opens it.
    const attempts = page.getByTestId("attempts-chart");
    const next = attempts.getByRole("button", { name: /^Attempts at 3h, G16\.fallback-window 1h: \d+$/ });
    // Back from a run, the charts are drawn again one per frame, and a redraw lays a line's dots out anew: the
    // dot drawn in the focused one's place takes the focus back, so Tab goes on from where the user was.
    await expect(next).toBeVisible();
    await attempts.getByRole("button", { name: /^Attempts at 2h, G16\.fallback-window 1h: \d+$/ }).focus();
    await page.keyboard.press("Tab");
    await expect(next).toBeFocused();
    // A wrong move: the window resized while a dot has the focus (a full-page screenshot resizes the page too).
    const viewport = page.viewportSize();
    await page.setViewportSize({ width: 1000, height: 760 });
    await expect(next).toBeFocused();
    if (viewport !== null) await page.setViewportSize(viewport);
    await page.screenshot({ path: `${SHOTS}/sweep-grid-dot-focused.png`, fullPage: true });
    await expect(next).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(
      page.getByRole("heading", {
        level: 2,
        name: "receiver-down-past-fallback-window at faults.network[b-down].until=3h, G16.fallback-window=1h",
      }),
    ).toBeVisible();
    expect(errors).toEqual([]);
  });

  test("a grid's second field of more than 8 values is refused before anything runs", async ({ page }) => {
    await openSweep(page, "receiver-down-past-fallback-window");
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Series by").selectOption("G16.fallback-window");
    await form.getByLabel("Series from").fill("1h");
    await form.getByLabel("Series to").fill("5h");
    await form.getByLabel("Series step").fill("30m");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(page.getByRole("alert", { name: "Cannot sweep" })).toHaveText(
      "G16.fallback-window takes 9 values; the second field of a grid takes at most 8 in the app (one line or small chart each)",
    );
    await expect(page.getByTestId("sweep-point")).toHaveCount(0);
  });

  test("bad input says what and where, and runs nothing", async ({ page }) => {
    await openSweep(page, "receiver-down-past-fallback-window");
    const form = page.getByRole("form", { name: "What to sweep" });
    await form.getByLabel("Field").selectOption("faults.network[b-down].until");
    await form.getByLabel("From", { exact: true }).fill("3h");
    await form.getByLabel("To", { exact: true }).fill("1h");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    const alert = page.getByRole("alert", { name: "Cannot sweep" });
    await expect(alert).toContainText("faults.network[b-down].until:");
    await expect(page.getByTestId("sweep-point")).toHaveCount(0);
    await form.getByLabel("Seeds", { exact: true }).fill("0");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(alert).toContainText('Seeds: "0" is not a whole number from 1 to 1000.');
    await form.getByLabel("Seeds", { exact: true }).fill("1");
    // A value of the wrong kind, and a sweep over the limit: said before anything runs.
    await form.getByLabel("From", { exact: true }).fill("soon");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(alert).toContainText('faults.network[b-down].until: "soon"');
    await form.getByLabel("From", { exact: true }).fill("1s");
    await form.getByLabel("To", { exact: true }).fill("6h");
    await form.getByLabel("Step", { exact: true }).fill("1s");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(alert).toContainText("a sweep has at most 10000 points");
    await expect(page.getByTestId("sweep-point")).toHaveCount(0);
    await noSeriousViolations(page);
    // RETRY-5: a point whose scenario fails validation (a 30m window) is that point's error; the others run.
    await form.getByLabel("Field").selectOption("G16.fallback-window");
    await form.getByLabel("From", { exact: true }).fill("30m");
    await form.getByLabel("To", { exact: true }).fill("1h");
    await form.getByLabel("Step", { exact: true }).fill("30m");
    await form.getByRole("button", { name: "Run the sweep" }).click();
    await expect(page.getByTestId("sweep-progress")).toHaveText(/^Done: 2 runs, 2 points/, { timeout: 120_000 });
    const rows = page.getByTestId("sweep-point");
    await expect(rows.nth(0)).toHaveAttribute("data-outcome", "error");
    await expect(rows.nth(0)).toContainText("G16: fallback-window is 30m; it must be within 1h and 4h (RETRY-5)");
    await expect(rows.nth(1)).toHaveAttribute("data-outcome", "smtp");
    await noSeriousViolations(page);
  });
});
