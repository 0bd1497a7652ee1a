import { readFileSync } from "node:fs";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { noSeriousViolations, openScenario, overlappingLabels, runToEnd, SHOTS } from "./support.ts";

/**
 * Issue 24, item 3: readable long runs (docs/decisions/0095, 0096). rate-limited-then-down runs 5 days: 127
 * attempts of m1, the first ones minutes apart (429 with Retry-After 120 s, then the schedule's doubling), the
 * rest about an hour apart (the 1 h cap, RETRY-2, jittered, RETRY-3) until the give-up (STATE-7). Its axis
 * compresses the idle spans between them by default: each attempt is drawn apart from the next, each break is
 * drawn and says the time it hides, and every mark sits where the axis says its time is.
 */

test.use({ viewport: { width: 1440, height: 1000 } });

const timeline = (page: Page) => page.getByRole("region", { name: "Delivery timeline" });
const lane = (page: Page, label: string) => timeline(page).locator(".lane").filter({ hasText: label });
const tools = (page: Page) => timeline(page).getByRole("group", { name: "Timeline scale" });

/** The x of the axis at `timeMs` (from the start), read off the axis' own ticks and breaks as drawn. */
async function axisX(page: Page, timeMs: number): Promise<number> {
  const points = await timeline(page)
    .locator("svg.axis")
    .evaluate((svg) => {
      const out: [number, number][] = [];
      for (const t of svg.querySelectorAll(".axis-tick"))
        out.push([Number(t.getAttribute("data-time-ms")), Number(t.getAttribute("data-x"))]);
      for (const b of svg.querySelectorAll("g.axis-break")) {
        out.push([Number(b.getAttribute("data-from-ms")), Number(b.getAttribute("data-x1"))]);
        out.push([Number(b.getAttribute("data-until-ms")), Number(b.getAttribute("data-x2"))]);
      }
      return out.sort((a, b) => a[0] - b[0]);
    });
  // The axis is linear between the points it states (a break's ends, the ticks): read the time there.
  const before = points.filter(([t]) => t <= timeMs).at(-1);
  const after = points.find(([t]) => t >= timeMs);
  if (!before || !after) throw new Error(`no axis point around ${timeMs}`);
  if (after[0] === before[0]) return before[1];
  return before[1] + ((timeMs - before[0]) / (after[0] - before[0])) * (after[1] - before[1]);
}

/** The attempts of a lane as drawn: number, time from the start, x. */
async function attempts(row: Locator): Promise<{ attempt: number; timeMs: number; x: number }[]> {
  return row.locator("[data-kind=attempt]").evaluateAll((els) =>
    els.map((e) => ({
      attempt: Number(e.getAttribute("data-attempt")),
      timeMs: Number(e.getAttribute("data-time-ms")),
      x: Number(e.getAttribute("data-x")),
    })),
  );
}

test.describe("readable long runs", () => {
  test("rate-limited-then-down: 127 attempts over 5 days told apart at the default zoom; marks where the axis says", async ({
    page,
  }) => {
    test.setTimeout(300_000);
    await openScenario(page, "rate-limited-then-down");
    await runToEnd(page);
    const m1 = lane(page, "m1 → b.example");
    const compress = tools(page).getByRole("button", { name: "Compress idle time" });
    // On by default: the run is longer than a day.
    await expect(compress).toHaveAttribute("aria-pressed", "true");
    // (The timeline takes the last events a moment after the log on a busy machine.)
    await expect(m1.locator("[data-kind=attempt]")).toHaveCount(127);
    await expect(m1.locator("[data-kind=bounce]")).toHaveCount(1);
    const drawn = await attempts(m1);
    // Every attempt drawn, each apart from the next (none merged into another's pixel column).
    expect(drawn.map((a) => a.attempt)).toEqual(Array.from({ length: 127 }, (_, i) => i + 1));
    const gaps = drawn.slice(1).map((a, i) => a.x - (drawn[i]?.x ?? 0));
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(5);
    // Each dot fits in its room: no two attempts' dots overlap.
    const dots = await m1.locator("[data-kind=attempt] .attempt-shape").evaluateAll((els) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return [r.left, r.right] as const;
      }),
    );
    for (let i = 1; i < dots.length; i++) expect(dots[i]![0]).toBeGreaterThanOrEqual(dots[i - 1]![1] - 0.01);
    // Breaks drawn between them, each saying the time it hides.
    const breaks = timeline(page).locator("svg.axis g.axis-break");
    expect(await breaks.count()).toBeGreaterThan(100);
    const hidden = await breaks.first().getAttribute("data-hidden");
    expect(hidden).toMatch(/^\d+ (min|h|s)/);
    // Marks' positions are claims: attempt 2 (+0:02:00, after the Retry-After) and the last attempts (days on,
    // after a hundred breaks) sit where the axis says their times are.
    for (const a of [drawn[1]!, drawn[2]!, drawn[60]!, drawn.at(-1)!])
      expect(Math.abs((await axisX(page, a.timeMs)) - a.x)).toBeLessThan(1);
    // The bounce at +5d 0:00:00 too.
    const bounce = m1.locator("[data-kind=bounce]");
    expect(Math.abs((await axisX(page, 5 * 86_400_000)) - Number(await bounce.getAttribute("data-x")))).toBeLessThan(1);

    await page.mouse.move(0, 0);
    // Element screenshots without the sticky bars over them.
    await page.addStyleTag({ content: ".titlebar, .controls { position: static !important; }" });
    await timeline(page).scrollIntoViewIfNeeded();
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-compressed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    await page.emulateMedia({ colorScheme: "dark" });
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-compressed-dark.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    await page.emulateMedia({ colorScheme: "light" });

    // Keyboard: → walks m1's attempts in time order, across the breaks.
    await m1.locator("[data-kind=attempt][data-attempt='60']").click();
    await page.keyboard.press("ArrowRight");
    await expect(m1.locator("[data-kind=attempt][data-attempt='61']")).toBeFocused();
    await expect(m1.locator("[data-kind=attempt][data-attempt='61']")).toHaveAttribute("aria-pressed", "true");

    // The retry chart of the selected lane (attempt number against the delay, no time axis): as before.
    const retry = page.getByRole("region", { name: "Retry delays of m1 → b.example" });
    await expect(retry.locator("tr[data-attempt='2']")).toHaveAttribute("data-decided-by", "retry-after");

    // The exported image draws the axis as the page does: its breaks, each with the time it hides.
    const download = page.waitForEvent("download");
    await tools(page).getByRole("button", { name: "Export SVG" }).click();
    const svg = readFileSync(await (await download).path(), "utf8");
    expect((svg.match(/<g data-break=""/g) ?? []).length).toBe(await breaks.count());
    expect(svg).toContain("drawn short: no mark from +0:02:00 to +0:04:0");

    // A brush over the overview zooms to the times under it. Its first 15 px (to about +0:03:40; the axis keeps
    // 32 px after the run's end): the first attempts, wide apart, the first arc saying the 429's Retry-After
    // decided its wait (RETRY-7).
    const overview = timeline(page).getByTestId("overview");
    const brush = async (from: number, to: number) => {
      // In the middle of the window.
      await overview.evaluate((e) => e.scrollIntoView({ block: "center" }));
      const plot = (await m1.locator("svg.lane-plot").boundingBox())!;
      const ob = (await overview.boundingBox())!;
      await page.mouse.move(plot.x + 4 + from, ob.y + ob.height / 2);
      await page.mouse.down();
      await page.mouse.move(plot.x + 4 + (from + to) / 2, ob.y + ob.height / 2, { steps: 4 });
      await page.mouse.move(plot.x + 4 + to, ob.y + ob.height / 2, { steps: 4 });
      await page.mouse.up();
      await expect(timeline(page).getByTestId("timeline-window")).toContainText("(zoomed)");
      await page.mouse.move(0, 0);
    };
    await brush(15, -3);
    const start = await attempts(m1);
    expect(start[0]?.attempt).toBe(1);
    for (const a of start.slice(1)) expect(Math.abs((await axisX(page, a.timeMs)) - a.x)).toBeLessThan(1);
    await expect(m1.locator("[data-kind=retry-wait-label][data-retry='1'] text")).toHaveText("Retry-After 2 min");
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-zoomed-start.png` });
    // Further on, the hourly retries: each arc says its wait and that the schedule was at its cap (RETRY-2).
    await tools(page).getByRole("button", { name: "Reset zoom" }).click();
    await brush(300, 330);
    const later = await attempts(m1);
    expect(later.length).toBeGreaterThanOrEqual(3);
    for (const a of later) expect(Math.abs((await axisX(page, a.timeMs)) - a.x)).toBeLessThan(1);
    const words = m1.locator("[data-kind=retry-wait-label] text");
    await expect(words.filter({ hasText: /^\+(1 h )?\d+ min \(1 h cap\)$/ }).first()).toBeVisible();
    // Its breaks wide enough to say the time each hides.
    await expect(timeline(page).locator("svg.axis .break-label").first()).toHaveText(/^(… )?\d+ (min|h)\b.*$/);
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-zoomed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    await page.emulateMedia({ colorScheme: "dark" });
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-zoomed-dark.png` });
    await page.emulateMedia({ colorScheme: "light" });
    // Zoomed out by the keyboard (−) from there: a wider window.
    const before = await timeline(page).getByTestId("timeline-window").textContent();
    await m1.locator("[data-kind=attempt]").first().focus();
    await page.keyboard.press("-");
    await expect(timeline(page).getByTestId("timeline-window")).not.toHaveText(before ?? "");
    await tools(page).getByRole("button", { name: "Reset zoom" }).click();

    // Off: the linear axis of before, no break; on again.
    await compress.click();
    await expect(compress).toHaveAttribute("aria-pressed", "false");
    await expect(breaks).toHaveCount(0);
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-linear.png` });
    await compress.click();
    await expect(compress).toHaveAttribute("aria-pressed", "true");
  });
});

test("receiver-down, compressed: the doubling waits at their length, the long idle spans as labelled breaks; +0:03:00 where the axis says", async ({
  page,
}) => {
  await openScenario(page, "receiver-down-past-fallback-window");
  await runToEnd(page);
  const compress = tools(page).getByRole("button", { name: "Compress idle time" });
  // Off by default: the run is 2 hours long.
  await expect(compress).toHaveAttribute("aria-pressed", "false");
  await compress.click();
  const m1 = lane(page, "m1 → b.example");
  await expect(timeline(page).locator("svg.axis .break-label")).toHaveText(["… 16 min …", "… 32 min …", "… 57 min …"]);
  const drawn = await attempts(m1);
  expect(drawn.map((a) => a.timeMs / 60_000)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
  // RETRY-2: the attempt at +0:03:00 sits where the axis' +0:00:00 and +0:10:00 put it; +1:03:00, after two
  // breaks, at its own tick.
  // (Attempt 8, at +2:03:00, is past the axis' last stated point, +2:00:00.)
  for (const a of drawn.slice(0, 7)) expect(Math.abs((await axisX(page, a.timeMs)) - a.x)).toBeLessThan(1);
  await expect(timeline(page).locator("svg.axis .axis-tick").filter({ hasText: "+1:03:00" })).toHaveAttribute(
    "data-x",
    drawn[6]!.x.toFixed(1),
  );
  // The waits over the arcs, from timer.set (RETRY-1, RETRY-2: no jitter in this scenario).
  await expect(m1.locator("[data-kind=retry-wait-label][data-retry='3'] text")).toHaveText("+4 min");
  await expect(m1.locator("[data-kind=retry-wait-label][data-retry='5'] text")).toHaveText("+16 min");
  await page.addStyleTag({ content: ".titlebar, .controls { position: static !important; }" });
  await timeline(page).scrollIntoViewIfNeeded();
  await page.mouse.move(0, 0);
  await timeline(page).screenshot({ path: `${SHOTS}/receiver-down-compressed.png` });
  await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
  await page.emulateMedia({ colorScheme: "dark" });
  await timeline(page).screenshot({ path: `${SHOTS}/receiver-down-compressed-dark.png` });
  await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
});

test("rate-limited-then-down at the default zoom in 800, 1000 and 1280 px windows: attempt 127's number written under its dot, beside the lane's end; marks where the axis says", async ({
  page,
}) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1000, height: 900 });
  await openScenario(page, "rate-limited-then-down");
  await runToEnd(page);
  const m1 = lane(page, "m1 → b.example");
  await expect(tools(page).getByRole("button", { name: "Compress idle time" })).toHaveAttribute("aria-pressed", "true");
  await page.addStyleTag({ content: ".titlebar, .controls { position: static !important; }" });
  for (const width of [800, 1000, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    // The view lays the lanes out again for its new width.
    const plot = m1.locator("svg.lane-plot");
    await expect.poll(async () => Number(await plot.getAttribute("width"))).toBeLessThan(width - 200);
    // STATE-7 (the outcome says 127 attempts): the lane's last attempt says its number on screen, under its dot,
    // and the first keeps its own.
    for (const n of [1, 127]) {
      const attempt = m1.locator(`[data-kind=attempt][data-attempt='${n}']`);
      const number = attempt.getByTestId("attempt-number");
      await expect(number, `${width} px`).toHaveText(String(n));
      await expect(number).toBeVisible();
      const box = (await number.boundingBox())!;
      const dot = (await attempt.locator(".attempt-shape").boundingBox())!;
      // Under its dot; the last one's may end up to 8 px before it, left of the DSN's box at the lane's end.
      expect(box.x, `${n} at ${width} px`).toBeLessThanOrEqual(dot.x + dot.width);
      expect(box.x + box.width + (n === 1 ? 0 : 8)).toBeGreaterThanOrEqual(dot.x + dot.width / 2);
      expect(box.y + box.height / 2).toBeGreaterThan(dot.y + dot.height / 2);
      // Inside the plot.
      const plotBox = (await plot.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(plotBox.x + plotBox.width);
    }
    // The lane's end keeps its words, and no two words meet (nor a word the DSN's box).
    await expect(m1.locator("[data-kind=bounce] text")).toHaveText("bounced");
    await expect(m1.locator("[data-kind=dsn] text").first()).toHaveText("DSN");
    expect(await overlappingLabels(plot, "text"), `${width} px`).toEqual([]);
    // Positions are claims: attempts 2, 126, 127 and the bounce where the axis says their times are.
    const drawn = await attempts(m1);
    for (const a of [drawn[1]!, drawn.at(-2)!, drawn.at(-1)!])
      expect(Math.abs((await axisX(page, a.timeMs)) - a.x), `attempt ${a.attempt}`).toBeLessThan(1);
    const bounce = m1.locator("[data-kind=bounce]");
    expect(Math.abs((await axisX(page, 5 * 86_400_000)) - Number(await bounce.getAttribute("data-x")))).toBeLessThan(1);
    await page.mouse.move(0, 0);
    await timeline(page).scrollIntoViewIfNeeded();
    await timeline(page).screenshot({ path: `${SHOTS}/long-run-end-${width}.png` });
  }
  await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
});
