import AxeBuilder from "@axe-core/playwright";
import { readFileSync } from "node:fs";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { parseOffset } from "../app/trace/offset.ts";
import { overlappingLabels } from "./support.ts";

/** The delivery timeline and the retry-delay chart, through the browser build. */

const SHOTS = "test-results/screenshots";
/** How far a label's box on screen reaches past its words: its halo (3 px wide, half outside the glyphs). */
const HALO = 1.5;
const MIN = 60_000;

test.use({ viewport: { width: 1440, height: 1000 } });

async function noSeriousViolations(page: Page, include?: string): Promise<void> {
  const builder = new AxeBuilder({ page });
  if (include) builder.include(include);
  const results = await builder.analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** Element screenshots without the sticky title bar over them. */
async function unstick(page: Page): Promise<void> {
  await page.addStyleTag({ content: ".titlebar { position: static !important; }" });
}

/** Opens a scenario and runs it to the end as fast as possible. */
async function runToEnd(page: Page, name: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
  await page.getByRole("button", { name: "Speed max" }).click();
  await page.getByRole("button", { name: "Play", exact: true }).click();
  await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
}

const timeline = (page: Page) => page.getByRole("region", { name: "Delivery timeline" });

/** A run longer than a day has its idle spans compressed by default (note 0095): back to the plain linear axis. */
async function linearAxis(page: Page): Promise<void> {
  const compress = timeline(page).getByRole("button", { name: "Compress idle time" });
  await expect(compress).toHaveAttribute("aria-pressed", "true");
  await compress.click();
  await expect(compress).toHaveAttribute("aria-pressed", "false");
}
const lane = (page: Page, label: string) => timeline(page).locator(`.lane`).filter({ hasText: label });

/** The exported SVG of the timeline, parsed in the page: its lanes, sub-lanes, colours and words. */
async function exportedTimeline(page: Page) {
  const download = page.waitForEvent("download");
  await timeline(page).getByRole("button", { name: "Export SVG" }).click();
  const svg = readFileSync(await (await download).path(), "utf8");
  // Once saved, what the image left out is said beside the buttons (note 0039): wait for it before the test
  // points at marks by their boxes.
  await expect(timeline(page).getByTestId("image-export-note")).toBeVisible();
  const parsed = await page.evaluate((text) => {
    const root = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    return {
      error: root.querySelector("parsererror")?.textContent ?? null,
      lanes: [...root.querySelectorAll("[data-lane]")].map((e) => e.getAttribute("data-lane") ?? ""),
      recipients: [...root.querySelectorAll("[data-recipient]")].map((e) => e.getAttribute("data-recipient") ?? ""),
      background: root.querySelector("[data-background]")?.getAttribute("fill"),
      bandFill: root.querySelector("[data-band=fallback-window]")?.getAttribute("fill"),
      labelFills: [...new Set([...root.querySelectorAll("[data-label]")].map((e) => e.getAttribute("fill")))],
      text: root.textContent ?? "",
    };
  }, svg);
  return { svg, ...parsed };
}

/**
 * The labels of a lane whose halo (paint-order stroke) or backing is not in the lane's own background as the
 * page paints it (the selected lane's tint, else the panel's surface), and the labels drawn under the playhead.
 */
async function labelsOffLaneBackground(laneRow: Locator): Promise<string[]> {
  return laneRow.evaluate((lane) => {
    let bg = "";
    for (let e: Element | null = lane; e && !bg; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") bg = c;
    }
    const out: string[] = [];
    const playhead = lane.querySelector("[data-testid=playhead]");
    for (const t of lane.querySelectorAll("svg.lane-plot text.mark-label")) {
      const css = getComputedStyle(t);
      const name = t.textContent ?? "";
      if (!css.paintOrder.startsWith("stroke")) out.push(`${name}: paint-order ${css.paintOrder}`);
      if (css.stroke !== bg) out.push(`${name}: halo ${css.stroke} on ${bg}`);
      if (parseFloat(css.strokeWidth) < 2) out.push(`${name}: halo ${css.strokeWidth}`);
      if (playhead && !(playhead.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING))
        out.push(`${name}: under the playhead`);
    }
    for (const b of lane.querySelectorAll("rect.label-backing")) {
      const fill = getComputedStyle(b).fill;
      if (fill !== bg) out.push(`backing ${fill} on ${bg}`);
    }
    return out;
  });
}

/** The window's ends in ms from the start, from its text (`+0:00:00 – +5d 5:00:00 (zoomed)`). */
function offsets(text: string | null): [number, number] {
  const m = /^(\+[^–]+?) – (\+(?:\d+d )?[\d:.]+)/.exec(text ?? "");
  const [from, to] = [parseOffset(m?.[1] ?? ""), parseOffset(m?.[2] ?? "")];
  if (from === undefined || to === undefined) throw new Error(`no window in ${text}`);
  return [from, to];
}

async function numbers(marks: Locator, attr: string): Promise<number[]> {
  return (await marks.evaluateAll((els, a) => els.map((e) => Number(e.getAttribute(a))), attr)) as number[];
}

test.describe("the delivery timeline", () => {
  test("receiver-down-past-fallback-window: attempts at 0, 1, 3 … 123 min, the window to +2:00:00, SMTP at +2:03:00", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await runToEnd(page, "receiver-down-past-fallback-window");
    const m1 = lane(page, "m1 → b.example");
    await expect(m1).toHaveCount(1);
    const attempts = m1.locator("[data-kind=attempt]");
    await expect(attempts).toHaveCount(8);
    expect(await numbers(attempts, "data-attempt")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const times = await numbers(attempts, "data-time-ms");
    expect(times.map((t) => t / MIN)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    expect(new Set(await attempts.evaluateAll((els) => els.map((e) => e.getAttribute("data-outcome"))))).toEqual(
      new Set(["temporary-eligible"]),
    );
    // Positions on a linear axis: x grows with time, in proportion (the first attempt at the axis' origin).
    const xs = await numbers(attempts, "data-x");
    const perMin = (xs[7]! - xs[0]!) / 123;
    xs.forEach((x, i) => expect(Math.abs(x - xs[0]! - (times[i]! / MIN) * perMin)).toBeLessThan(1));
    // The same on screen: the marks' boxes sit where their data says.
    const boxes = await m1
      .locator("[data-kind=attempt] .attempt-shape")
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().x + e.getBoundingClientRect().width / 2));
    boxes.forEach((b, i) => expect(Math.abs(b - boxes[0]! - (xs[i]! - xs[0]!))).toBeLessThan(1.5));

    const band = m1.locator("[data-band=fallback-window]");
    await expect(band).toHaveAttribute("data-from-ms", "0");
    await expect(band).toHaveAttribute("data-until-ms", String(120 * MIN));
    // The exported image draws the window in the colours of the theme shown.
    const bandFills: string[] = [];
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const image = await exportedTimeline(page);
      expect(image.bandFill, scheme).toBeTruthy();
      bandFills.push(image.bandFill ?? "");
    }
    expect(bandFills[1]).not.toBe(bandFills[0]);
    await page.emulateMedia({ colorScheme: "light" });
    const fault = m1.locator("[data-band=fault]");
    await expect(fault).toHaveAttribute("data-until-ms", String(180 * MIN));
    const handoff = m1.locator("[data-kind=handoff]");
    await expect(handoff).toHaveAttribute("data-time-ms", String(123 * MIN));
    await expect(handoff).toHaveAttribute("aria-label", "SMTP fallback: handed to SMTP at +2:03:00 [STATE-3]");
    expect(Math.abs(Number(await handoff.getAttribute("data-x")) - xs[7]!)).toBeLessThan(0.5);
    // STATE-3: attempt 8 ended in the hand-off, its dot under the diamond: every attempt's number is still written,
    // attempt 8's under the diamond and clear of it.
    const attemptNumbers = m1.getByTestId("attempt-number");
    await expect(attemptNumbers).toHaveText(["1", "2", "3", "4", "5", "6", "7", "8"]);
    for (const n of await attemptNumbers.all()) await expect(n).toBeVisible();
    const diamondBox = (await handoff.locator(".handoff-shape").boundingBox())!;
    const eightBox = (await m1
      .locator("[data-kind=attempt][data-attempt='8']")
      .getByTestId("attempt-number")
      .boundingBox())!;
    expect(eightBox.y + HALO).toBeGreaterThanOrEqual(diamondBox.y + diamondBox.height - 1);
    expect(Math.abs(eightBox.x + eightBox.width / 2 - (diamondBox.x + diamondBox.width / 2))).toBeLessThan(2);
    // The overview's deliveries in flight: its line spans the lanes' plot, from its left edge to its right edge.
    const lanePlot = (await m1.locator("svg.lane-plot").boundingBox())!;
    const flightBox = (await timeline(page).locator("figure.overview svg.in-flight-layer").boundingBox())!;
    expect(Math.abs(flightBox.x - (lanePlot.x + 4))).toBeLessThan(0.5);
    expect(Math.abs(flightBox.x + flightBox.width - (lanePlot.x + lanePlot.width - 4))).toBeLessThan(0.5);
    const flightLine = await timeline(page)
      .locator("figure.overview path.in-flight")
      .evaluate((p: SVGPathElement) => ({ x: p.getBBox().x, width: p.getBBox().width }));
    expect(flightLine.x).toBe(0);
    expect(Math.abs(flightLine.width - flightBox.width)).toBeLessThan(0.1);
    // At the end, the playhead runs through attempt 8's number and the DSN lane's `1`: they are written over it,
    // on a halo of the lane's background (and `SMTP fallback` on a backing in it), in both themes.
    const playheadX = Number(await m1.getByTestId("playhead").getAttribute("data-x"));
    expect(Math.abs(playheadX - xs[7]!)).toBeLessThan(12);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const row of await timeline(page).locator(".lane").all())
        expect(await labelsOffLaneBackground(row), scheme).toEqual([]);
      // The overview's hand-off bar is in the page's text colour, as the lanes' diamond: readable in both themes.
      const handoffBar = timeline(page).locator(".overview-handoffs path, .overview-handoffs rect").first();
      await expect(handoffBar).toBeAttached();
      const [barFill, textColour] = await handoffBar.evaluate((el) => [
        getComputedStyle(el).fill,
        getComputedStyle(el.closest("section")!).color,
      ]);
      expect(barFill, scheme).toBe(textColour);
    }
    await page.emulateMedia({ colorScheme: "light" });

    // Hover: the summary. Click: selected, and the lane's retry chart opens.
    await attempts.nth(2).hover();
    await expect(page.getByRole("tooltip")).toHaveText(
      /^attempt 3 at \+0:03:00: temporary failure, fallback-eligible .*\[GET-9\]$/,
    );
    await attempts.nth(2).click();
    await expect(attempts.nth(2)).toHaveAttribute("aria-pressed", "true");
    const retry = page.getByRole("region", { name: "Retry delays of m1 → b.example" });
    await expect(retry).toBeVisible();
    await expect(retry.getByTestId("retry-window-end")).toContainText("Attempt 8 is the first at or after");
    // Keyboard: → moves to attempt 4.
    await page.keyboard.press("ArrowRight");
    await expect(attempts.nth(3)).toHaveAttribute("aria-pressed", "true");
    await expect(attempts.nth(3)).toBeFocused();
    // Selected, the lane is tinted: its labels' halos and backings take the tint (light and dark).
    await expect(m1).toHaveClass(/selected/);
    await expect(m1.locator("rect.label-backing")).not.toHaveCount(0);
    for (const scheme of ["dark", "light"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await labelsOffLaneBackground(m1), scheme).toEqual([]);
      await timeline(page).screenshot({ path: `${SHOTS}/timeline-receiver-down-end-${scheme}.png` });
    }
    await page.screenshot({ path: `${SHOTS}/timeline-receiver-down.png`, fullPage: true });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");

    // Brush to zoom onto the first 10 minutes; double-click to reset.
    const plot = m1.locator("svg.lane-plot");
    const box = (await plot.boundingBox())!;
    const x0 = box.x + 4 + xs[0]!;
    await page.mouse.move(box.x + 1, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(x0 + perMin * 10, box.y + 5, { steps: 5 });
    await page.mouse.up();
    await expect(page.getByTestId("timeline-window")).toContainText("(zoomed)");
    await expect(attempts).toHaveCount(4);
    const zoomedXs = await numbers(attempts, "data-x");
    expect(zoomedXs[3]! - zoomedXs[0]!).toBeGreaterThan(6 * perMin * 7);
    // Issue 13: once zoomed, a drag pans: 100 px to the left shows later times, the marks move 100 px left.
    const windowText = async () => (await page.getByTestId("timeline-window").textContent()) ?? "";
    const zoomedWindow = await windowText();
    const a4 = m1.locator("[data-kind=attempt][data-attempt='4']");
    const a4x = Number(await a4.getAttribute("data-x"));
    await page.mouse.move(box.x + box.width / 2, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 100, box.y + 5, { steps: 4 });
    await page.mouse.up();
    await expect.poll(windowText).not.toBe(zoomedWindow);
    expect(Math.abs(Number(await a4.getAttribute("data-x")) - (a4x - 100))).toBeLessThan(1);
    // Shift+wheel pans on (later times), and Shift+← pans back by a tenth of the view.
    const panned = await windowText();
    await page.mouse.move(box.x + box.width / 2, box.y + 5);
    await page.keyboard.down("Shift");
    await page.mouse.wheel(0, 120);
    await page.keyboard.up("Shift");
    await expect.poll(windowText).not.toBe(panned);
    const wheeled = Number(await a4.getAttribute("data-x"));
    expect(wheeled).toBeLessThan(a4x - 100 - 60);
    await a4.focus();
    await page.keyboard.press("Shift+ArrowLeft");
    await expect.poll(async () => Number(await a4.getAttribute("data-x"))).toBeGreaterThan(wheeled + 50);
    await expect(page.getByTestId("timeline-window")).toContainText("(zoomed)");
    await plot.dblclick({ position: { x: box.width - 10, y: 5 } });
    await expect(page.getByTestId("timeline-window")).not.toContainText("(zoomed)");
    await expect(attempts).toHaveCount(8);
    // Log scale: the 1-minute retry sits far from the first attempt.
    await timeline(page).getByRole("button", { name: "Log" }).click();
    const logXs = await numbers(attempts, "data-x");
    expect(logXs[1]! - logXs[0]!).toBeGreaterThan(100);
    expect(errors).toEqual([]);
  });

  test("rate-limited-then-down: the first retry waited for Retry-After; 5 days of an outage reach the 1 h cap", async ({
    page,
  }) => {
    // Three accessibility scans of 128 attempts' marks: slow when the shared machine is busy.
    test.setTimeout(360_000);
    await runToEnd(page, "rate-limited-then-down");
    // The linear axis of a 5-day run (its compressed axis, on by default, is longRuns.spec.ts').
    await linearAxis(page);
    const m1 = lane(page, "m1 → b.example");
    await expect(lane(page, "DSN of m1 → a.example")).toHaveCount(1);
    const first = m1.locator("[data-kind=attempt][data-attempt='1']");
    await expect(first).toHaveAttribute("data-outcome", "temporary");
    await expect(first).toHaveAttribute("aria-label", /429 rate_limited/);
    await expect(m1.locator("[data-kind=bounce]")).toHaveAttribute("data-time-ms", String(5 * 24 * 60 * MIN));
    await expect(m1.locator("[data-kind=give-up]")).toHaveAttribute("data-time-ms", String(5 * 24 * 60 * MIN));
    // Issue 13: the first attempt's number ("1+": attempt 2 shares its pixel) sits inside the plot, not clipped.
    const plotBox = (await m1.locator("svg.lane-plot").boundingBox())!;
    const number = first.getByTestId("attempt-number");
    await expect(number).toHaveText("1+");
    const numberBox = (await number.boundingBox())!;
    // (Its box on screen includes its halo, which may reach past the plot's edge: the words do not.)
    expect(numberBox.x + 2 * HALO).toBeGreaterThanOrEqual(plotBox.x);
    await m1.getByRole("button", { name: "m1 → b.example", exact: true }).click();
    const retry = page.getByRole("region", { name: "Retry delays of m1 → b.example" });
    const firstRetry = retry.locator("tr[data-attempt='2']");
    await expect(firstRetry).toHaveAttribute("data-decided-by", "retry-after");
    await expect(firstRetry.getByRole("cell").nth(5)).toHaveText("Retry-After lower bound");
    await expect(firstRetry.getByRole("cell").nth(3)).toHaveText("2 min");
    // Issue 22: the cap comes before the jitter, and the chart says so beside waits of more than an hour.
    await expect(retry.getByTestId("retry-cap")).toHaveText(
      /^The delay is capped at 1 h \(RETRY-2\) before the ±20 % jitter \(RETRY-3, G16\): the capped waits here ran from 4\d min( \d+ s)? to 1 h 1\d min\. ?$/,
    );
    await expect(retry.locator("svg").getByText("1 h cap (before jitter)", { exact: true })).toBeVisible();
    // The delay axis in even steps (not 0/20/40/70).
    const yTicks = await retry
      .locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value")
      .evaluateAll((els) => els.map((e) => e.textContent));
    expect(yTicks).toEqual(["0", "15", "30", "45", "60", "75"]);
    await expect(retry.getByTestId("retry-give-up")).toContainText("+5d 0:00:00");
    // Issue 22: attempt 1's 429 ruled SMTP out (ERR-23): no fallback window on the lane, none of its words in the
    // chart; the lane marks where and why instead.
    await expect(retry.getByTestId("retry-ruled-out")).toHaveText(
      "SMTP ruled out at attempt 1: 429 rate_limited, ERR-23 (+0:00:00): the fallback window's end decides nothing for this delivery.",
    );
    await expect(retry.getByTestId("retry-window-end")).toHaveCount(0);
    await expect(retry.getByText("fallback window ends")).toHaveCount(0);
    await expect(m1.locator("[data-band=fallback-window]")).toHaveCount(0);
    const ruledOut = m1.locator("[data-kind=ruled-out]");
    await expect(ruledOut).toHaveCount(1);
    await expect(ruledOut).toHaveAttribute("data-time-ms", "0");
    await expect(ruledOut).toHaveAttribute(
      "aria-label",
      /^SMTP ruled out at attempt 1: 429 rate_limited, ERR-23 \(\+0:00:00\): no SMTP fallback for this delivery/,
    );
    await expect(ruledOut.locator("text")).toHaveText("SMTP ruled out");
    // Its ring sits around attempt 1's dot.
    const ringBox = (await ruledOut.locator(".ruled-out-shape").boundingBox())!;
    const oneDot = (await first.locator(".attempt-shape").boundingBox())!;
    expect(Math.abs(ringBox.x + ringBox.width / 2 - (oneDot.x + oneDot.width / 2))).toBeLessThan(1);
    // The DSN's delivery was accepted at its first attempt: no give-up line, no window on its lane.
    const dsnLane = lane(page, "DSN of m1 → a.example");
    await expect(dsnLane.locator("[data-kind=give-up]")).toHaveCount(0);
    await expect(dsnLane.locator("[data-band=fallback-window]")).toHaveCount(0);
    // The exported image says the same.
    const image = await exportedTimeline(page);
    expect(image.svg).not.toContain('data-band="fallback-window"');
    expect(image.svg.match(/data-kind="give-up"/g)).toHaveLength(1);
    expect(image.text).toContain("SMTP ruled out at attempt 1: 429 rate_limited, ERR-23");
    // Hover a mark near the right edge (the bounce at +5d 0:00:00): its text is flipped to the pointer's left,
    // inside the lanes (it ran off the screen).
    await m1.locator("[data-kind=bounce] .bounce-shape").hover();
    const tip = page.getByRole("tooltip");
    await expect(tip).toHaveText(/^bounced at \+5d 0:00:00 after 127 attempts/);
    await expect(tip).toHaveAttribute("data-side", "left");
    const tipBox = (await tip.boundingBox())!;
    const wrapBox = (await timeline(page).locator(".lanes-wrap").boundingBox())!;
    expect(tipBox.x).toBeGreaterThanOrEqual(wrapBox.x);
    expect(tipBox.x + tipBox.width).toBeLessThanOrEqual(wrapBox.x + wrapBox.width + 0.5);
    expect(tipBox.x + tipBox.width).toBeLessThanOrEqual(page.viewportSize()!.width);
    // A mark near the left edge keeps its text on the right (attempt 1's dot, at its left where no other is drawn).
    // (Measured again: the export's note above the lanes may have moved them.)
    const dot = (await first.locator(".attempt-shape").boundingBox())!;
    await page.mouse.move(dot.x + 1.5, dot.y + dot.height / 2);
    await expect(tip).toHaveText(/^attempt 1 at \+0:00:00/);
    await expect(tip).toHaveAttribute("data-side", "right");
    await unstick(page);
    await timeline(page).scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${SHOTS}/timeline-rate-limited.png`, fullPage: true });
    await timeline(page).screenshot({ path: `${SHOTS}/timeline-rate-limited-end.png` });
    await retry.screenshot({ path: `${SHOTS}/retry-chart-rate-limited.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    // The dark theme, following the system.
    await page.emulateMedia({ colorScheme: "dark" });
    await timeline(page).screenshot({ path: `${SHOTS}/timeline-rate-limited-dark.png` });
    await retry.screenshot({ path: `${SHOTS}/retry-chart-rate-limited-dark.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    await page.emulateMedia({ colorScheme: "light" });

    // Issue 22: a drag that starts on the row of marks brushes too (in a dense lane there is a mark under every
    // pixel): from attempt 60's dot, 200 px on. A press on a mark that does not move still selects it.
    const a60 = m1.locator("[data-kind=attempt][data-attempt='60']");
    await a60.scrollIntoViewIfNeeded();
    const dotBox = (await a60.locator(".attempt-shape").boundingBox())!;
    const from = { x: dotBox.x + dotBox.width / 2, y: dotBox.y + dotBox.height / 2 };
    const plot = (await m1.locator("svg.lane-plot").boundingBox())!;
    const msPerPx =
      (Number(await m1.locator("[data-kind=bounce]").getAttribute("data-time-ms")) -
        Number(await a60.getAttribute("data-time-ms"))) /
      (Number(await m1.locator("[data-kind=bounce]").getAttribute("data-x")) -
        Number(await a60.getAttribute("data-x")));
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x + 200, from.y, { steps: 8 });
    await expect(timeline(page).locator(".brush")).toBeVisible();
    await page.mouse.up();
    const windowText = page.getByTestId("timeline-window");
    await expect(windowText).toContainText("(zoomed)");
    const [fromMs, toMs] = offsets(await windowText.textContent());
    const startAt = Number(await a60.getAttribute("data-time-ms"));
    expect(Math.abs(fromMs - startAt)).toBeLessThan(3 * msPerPx);
    expect(Math.abs(toMs - fromMs - 200 * msPerPx)).toBeLessThan(3 * msPerPx);
    expect(plot.width).toBeGreaterThan(600);
    await expect(a60).toHaveAttribute("aria-pressed", "false");
    await timeline(page).getByRole("button", { name: "Reset zoom" }).click();
    await expect(windowText).not.toContainText("(zoomed)");

    // Issue 22: a drag across the overview zooms the lanes to the range dragged, not to one bucket.
    const overview = timeline(page).getByTestId("overview");
    // In the middle of the window: not under the playback bar, which stays in view at the top.
    await overview.evaluate((el) => el.scrollIntoView({ block: "center" }));
    const flight = (await overview.locator("svg.in-flight-layer").boundingBox())!;
    const full = offsets(await windowText.textContent());
    await page.mouse.move(flight.x + flight.width * 0.25, flight.y + 10);
    await page.mouse.down();
    await page.mouse.move(flight.x + flight.width * 0.5, flight.y + 10, { steps: 8 });
    await expect(overview.locator(".brush")).toBeVisible();
    await page.mouse.up();
    await expect(windowText).toContainText("(zoomed)");
    const brushed = offsets(await windowText.textContent());
    const span = full[1] - full[0];
    expect(Math.abs(brushed[0] - (full[0] + span * 0.25))).toBeLessThan(span * 0.01);
    expect(Math.abs(brushed[1] - (full[0] + span * 0.5))).toBeLessThan(span * 0.01);
    await expect(overview.getByTestId("overview-window")).toBeVisible();
    // A click on a bar is its bucket (one of 120).
    await timeline(page).getByRole("button", { name: "Reset zoom" }).click();
    await page.mouse.click(flight.x + flight.width * 0.1, flight.y + 10);
    await expect(windowText).toContainText("(zoomed)");
    const bucket = offsets(await windowText.textContent());
    expect(bucket[1] - bucket[0]).toBeLessThan(span / 100);
    expect(bucket[0]).toBeLessThanOrEqual(full[0] + span * 0.1);
    expect(bucket[1]).toBeGreaterThanOrEqual(full[0] + span * 0.1 - 1000);
  });
});

test.describe("following the playhead, sub-lanes, ranges, export", () => {
  test("receiver-down-past-fallback-window, run live: the view follows the playhead until the user zooms", async ({
    page,
  }) => {
    await page.goto("/");
    const name = "receiver-down-past-fallback-window";
    await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    const jump = async (to: string) => {
      await page.getByLabel("Jump to").fill(to);
      await page.getByRole("button", { name: "Go", exact: true }).click();
      await expect(page.getByTestId("clock")).toHaveText(to);
    };
    const windowText = page.getByTestId("timeline-window");
    const playhead = lane(page, "m1 → b.example").getByTestId("playhead");
    const plotWidth = async () =>
      (await lane(page, "m1 → b.example").locator("svg.lane-plot").boundingBox())!.width - 8;
    await jump("+0:30:00");
    // The whole run so far, the playhead near the right edge.
    await expect(windowText).toHaveText(/^\+0:00:00 – \+0:31:12$/);
    expect(Number(await playhead.getAttribute("data-x"))).toBeGreaterThan((await plotWidth()) * 0.9);
    await jump("+1:00:00");
    await expect(windowText).toHaveText(/^\+0:00:00 – \+1:02:24$/);
    expect(Number(await playhead.getAttribute("data-x"))).toBeGreaterThan((await plotWidth()) * 0.9);
    // The user zooms (keyboard: + zooms around the middle): the window stays put while the run goes on.
    await lane(page, "m1 → b.example").locator("[data-kind=attempt]").first().focus();
    await page.keyboard.press("+");
    await expect(windowText).toContainText("(zoomed)");
    const zoomed = await windowText.textContent();
    await jump("+1:30:00");
    await expect(windowText).toHaveText(zoomed ?? "");
    await expect(playhead).toHaveCount(0);
    // Reset: following again.
    await page.getByRole("button", { name: "Reset zoom" }).click();
    await expect(windowText).toHaveText(/^\+0:00:00 – \+1:33:36$/);
    expect(Number(await playhead.getAttribute("data-x"))).toBeGreaterThan((await plotWidth()) * 0.9);
  });

  test("teach-mixed-recipient-results: recipients' sub-lanes, the sequence of the timeline's window, the message and what was in force; SVG export", async ({
    page,
  }) => {
    await runToEnd(page, "teach-mixed-recipient-results");
    // bob is deferred for 5 days: the linear axis (its compressed axis, on by default, is longRuns.spec.ts').
    await linearAxis(page);
    const m1 = lane(page, "m1 → b.example");
    const fold = m1.getByRole("button", { name: "Recipients of m1 → b.example" });
    // Several recipients, few lanes: unfolded at first; each recipient's result at each attempt, and its outcome.
    await expect(fold).toHaveAttribute("aria-expanded", "true");
    const sub = (r: string) => m1.locator(`.sub-lane[data-recipient="${r}"]`);
    await expect(m1.locator(".sub-lane")).toHaveCount(4);
    await expect(sub("nobody@b.example")).toHaveAttribute("data-outcome", "rejected");
    await expect(sub("nobody@b.example").locator("[data-kind=recipient-result]")).toHaveAttribute(
      "data-status",
      "rejected",
    );
    const carol = sub("carol@b.example").locator("[data-kind=recipient-result]");
    expect(await carol.evaluateAll((els) => els.map((e) => e.getAttribute("data-status")))).toEqual([
      "deferred",
      "accepted",
    ]);
    // Each result sits under its attempt's mark.
    const attemptXs = await numbers(m1.locator("[data-kind=attempt]"), "data-x");
    const carolXs = await numbers(carol, "data-x");
    expect(Math.abs(carolXs[0]! - attemptXs[0]!)).toBeLessThan(0.5);
    await expect(sub("carol@b.example")).toContainText("accepted");
    // dave was deferred at every attempt until the give-up: his sub-lane says so over its bar (ERR-9, ERR-23).
    const daveRun = sub("dave@b.example").locator("[data-kind=result-run]");
    await expect(daveRun).toHaveCount(1);
    await expect(daveRun).toHaveText(/^deferred ×\d{3} \(mailbox_full\)$/);
    const daveResults = await sub("dave@b.example").locator("[data-kind=recipient-result]").count();
    await expect(daveRun).toHaveAttribute("data-count", String(daveResults));
    const subPlot = (await sub("dave@b.example").locator("svg.sub-plot").boundingBox())!;
    const runBox = (await daveRun.locator("text").boundingBox())!;
    expect(runBox.x).toBeGreaterThanOrEqual(subPlot.x);
    expect(runBox.x + runBox.width).toBeLessThanOrEqual(subPlot.x + subPlot.width);
    // The words of one lane never overlap: m1's first attempt and the DSN to alice share a pixel column; the DSN's
    // word is beside its box, and attempt 1's number, its place under the dot taken by the box, over the dot.
    expect(await overlappingLabels(timeline(page).locator("svg.lane-plot"), "text")).toEqual([]);
    expect(await overlappingLabels(timeline(page).locator("svg.sub-plot"), "text")).toEqual([]);
    await expect(m1.locator("[data-kind=dsn]").first().locator("text")).toHaveText("DSN");
    const first = m1.locator("[data-kind=attempt][data-attempt='1']");
    await expect(first).toHaveAttribute("aria-label", /^attempt 1 at /);
    await expect(first.getByTestId("attempt-number")).toHaveText("1");
    await expect(first.getByTestId("attempt-number")).toBeVisible();
    const oneBox = (await first.getByTestId("attempt-number").boundingBox())!;
    const dotBox = (await first.locator(".attempt-shape").boundingBox())!;
    expect(oneBox.y + oneBox.height - HALO).toBeLessThanOrEqual(dotBox.y);
    expect(oneBox.x).toBeLessThanOrEqual(dotBox.x + dotBox.width);
    expect(oneBox.x + oneBox.width).toBeGreaterThanOrEqual(dotBox.x);
    // Every number written is visible, and they are m1's attempts' in time order.
    const written = m1.locator("svg.lane-plot").getByTestId("attempt-number");
    expect(await written.count()).toBeGreaterThan(20);
    for (const n of await written.all()) await expect(n).toBeVisible();
    const order = await numbers(m1.locator("[data-kind=attempt]:has([data-testid=attempt-number])"), "data-attempt");
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBe(1);
    // Issue 22: m1's first answer (per-recipient results) ruled SMTP out (ERR-23): `SMTP ruled out` is written where
    // the retries' arcs run, on a backing, in the place `stored` (bob's mailbox, whose triangle and name stay) had.
    await expect(m1.locator("[data-kind=receiver]").first()).toHaveAttribute("aria-label", /stored in bob@b\.example/);
    const stored = m1.locator("[data-kind=ruled-out]");
    await expect(stored).toHaveAttribute("aria-label", /^SMTP ruled out at attempt 1: per-recipient results: /);
    await expect(stored.locator("text")).toHaveText("SMTP ruled out");
    await expect(stored.locator("rect.label-backing")).toHaveCount(1);
    const backingBox = (await stored.locator("rect.label-backing").boundingBox())!;
    const storedBox = (await stored.locator("text").boundingBox())!;
    expect(backingBox.x).toBeLessThanOrEqual(storedBox.x + HALO);
    // (Less a little for the canvas's measure of the words against the page's drawing of them.)
    expect(backingBox.x + backingBox.width).toBeGreaterThanOrEqual(storedBox.x + storedBox.width - HALO - 0.5);
    // m0 was accepted by its first POST: neither a give-up line nor a fallback window on its lane.
    const m0 = lane(page, "m0 → b.example");
    await expect(m0.locator("[data-kind=attempt]")).toHaveCount(1);
    await expect(m0.locator("[data-kind=give-up]")).toHaveCount(0);
    await expect(m0.locator("[data-band=fallback-window]")).toHaveCount(0);
    await expect(m1.locator("[data-kind=give-up]")).toHaveCount(1);
    await unstick(page);
    await timeline(page).scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await timeline(page).screenshot({ path: `${SHOTS}/timeline-teach-mixed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
    // The keyboard folds it.
    await fold.focus();
    await page.keyboard.press("Enter");
    await expect(fold).toHaveAttribute("aria-expanded", "false");
    await expect(m1.locator(".sub-lane")).toHaveCount(0);
    await page.keyboard.press("Space");
    await expect(m1.locator(".sub-lane")).toHaveCount(4);

    // The overview shows the deliveries in flight.
    await expect(timeline(page).locator("figure.overview")).toHaveAttribute(
      "aria-label",
      /at most [1-9]\d* deliveries in flight/,
    );
    await expect(timeline(page).locator("figure.overview .in-flight")).toHaveCount(1);
    // In a colour of its own (not the deferred bars' blue), the legend's the same: pink, lighter in the dark.
    const inFlightStrokes = () =>
      timeline(page)
        .locator(".in-flight")
        .evaluateAll((els) => els.map((e) => getComputedStyle(e).stroke));
    expect(await inFlightStrokes()).toEqual(["rgb(219, 39, 119)", "rgb(219, 39, 119)"]);
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await inFlightStrokes()).toEqual(["rgb(244, 114, 182)", "rgb(244, 114, 182)"]);
    await page.emulateMedia({ colorScheme: "light" });

    // Export as SVG: the file is an SVG with the marks, in the light theme's colours.
    const light = await exportedTimeline(page);
    expect(light.error).toBeNull();
    expect(light.svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(light.svg.match(/data-kind="attempt"/g)?.length).toBe(
      await timeline(page).locator("[data-kind=attempt]").count(),
    );
    expect(light.svg).toContain('data-kind="recipient-result"');
    expect(light.text).toContain("m1 → b.example");
    expect(light.text).toContain("nobody@b.example");
    expect(light.text).toMatch(/deferred ×\d{3} \(mailbox_full\)/);
    expect(light.lanes).toHaveLength(4);
    expect(light.background).toBe("#f6f7f9");
    expect(light.labelFills).toEqual(["#1d2330"]);
    // The page in the dark: the image is what the user sees, the dark theme's colours.
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await exportedTimeline(page);
    await page.mouse.move(0, 0);
    await timeline(page).screenshot({ path: `${SHOTS}/timeline-teach-mixed-dark.png` });
    expect(dark.background).toBe("#15181e");
    expect(dark.labelFills).toEqual(["#e3e6ec"]);
    expect(dark.svg).not.toContain("#1d2330");
    // Issue 22: no delivery of this run had a fallback window that applied (m0 accepted at once, m1's first answer
    // ruled SMTP out, the DSNs accepted at once): the image draws none either.
    expect(light.bandFill).toBeUndefined();
    expect(dark.bandFill).toBeUndefined();
    await page.emulateMedia({ colorScheme: "light" });

    // The sequence of the timeline's window: every message's exchanges, each request marked with its message.
    await timeline(page).getByRole("button", { name: "Sequence of this window" }).click();
    const sequence = page.getByRole("region", { name: "Sequence diagram" });
    await expect(sequence.getByRole("combobox", { name: "Message" })).toHaveValue("\u0000range");
    await expect(sequence.getByTestId("sequence-count")).toContainText(" in +0:00:00 – ");
    await expect(sequence.locator("[data-kind=request]").filter({ hasText: "[m0]" }).first()).toBeVisible();
    const m1Post = sequence.locator("[data-kind=request]").filter({ hasText: "POST /v1/messages [m1]" }).first();
    await expect(m1Post).toBeVisible();
    await sequence.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await sequence.screenshot({ path: `${SHOTS}/sequence-range-teach-mixed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=sequence-heading]");
    // A request opens in the inspector: the message it carried, the DNS answers and capabilities in force.
    // (The arrow's group has no fill of its own: the click goes to it directly.)
    await m1Post.dispatchEvent("click");
    const inspector = page.getByRole("region", { name: "Exchange inspector" });
    await expect(inspector.getByTestId("message")).toContainText("Message m1");
    await expect(inspector.getByTestId("message-preview")).toHaveText("This is message m1, generated by Mailscope.");
    const dns = inspector.getByTestId("in-force");
    await expect(dns.locator("tr[data-name='_svc.b.example']")).toContainText("1 mx.b.example:443");
    await expect(dns.locator("tr[data-name='s1._svckey.a.example']")).toContainText("v=svc1; k=ed25519");
    await expect(inspector.getByTestId("capabilities-in-force")).toContainText("Capabilities of https://mx.b.example");
    await inspector.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await inspector.screenshot({ path: `${SHOTS}/inspector-teach-mixed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=inspector-heading]");
    // Back to one message.
    await sequence.getByRole("button", { name: "Clear range" }).click();
    await expect(sequence.getByTestId("sequence-count")).not.toContainText(" in ");
  });
});

test.describe("the timeline's image has every lane", () => {
  test("fourteen deliveries, more lanes than the view shows: the SVG has all of them, one unfolded as on screen", async ({
    page,
  }) => {
    // Fourteen messages a minute apart, each to bob and carol: one lane each, folded at first (more than eight).
    const messages = Array.from(
      { length: 14 },
      (_, i) =>
        `  - id: m${i + 1}\n    at: ${i}m\n    from: alice@a.example\n    to: [bob@b.example, carol@b.example]\n`,
    ).join("");
    const yaml = `name: many-lanes\ndescription: Fourteen messages, one lane each.\nseed: 3\ndomains:\n  a.example:\n    mailboxes: [alice]\n  b.example:\n    mailboxes: [bob, carol]\nmessages:\n${messages}`;
    await page.goto("/");
    await page.getByLabel("Open scenario…").setInputFiles({
      name: "many-lanes.yaml",
      mimeType: "application/yaml",
      buffer: Buffer.from(yaml),
    });
    await expect(page.getByRole("heading", { level: 2, name: "many-lanes" })).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
    // The view draws the lanes in and near its viewport only.
    await expect(lane(page, "m1 → b.example")).toHaveCount(1);
    const drawn = await timeline(page).locator(".lane").count();
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThan(14);
    const fold = lane(page, "m1 → b.example").getByRole("button", { name: "Recipients of m1 → b.example" });
    await expect(fold).toHaveAttribute("aria-expanded", "false");
    await fold.click();
    await expect(lane(page, "m1 → b.example").locator(".sub-lane")).toHaveCount(2);
    const image = await exportedTimeline(page);
    expect(image.error).toBeNull();
    expect(image.lanes).toHaveLength(14);
    expect(image.text).toContain("m14 → b.example");
    expect(image.recipients).toEqual(["bob@b.example", "carol@b.example"]);
    // The lanes' words do not overlap in the image either.
    await page.setContent(image.svg);
    expect(await overlappingLabels(page.locator("[data-lane]"), "[data-label-for]")).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/timeline-image-many-lanes.png`, fullPage: true });
  });
});

test.describe("the sequence diagram and the exchange inspector", () => {
  test("teach-mixed-recipient-results: m1's POST answered with four per-recipient results; Mermaid export", async ({
    page,
  }) => {
    await runToEnd(page, "teach-mixed-recipient-results");
    const sequence = page.getByRole("region", { name: "Sequence diagram" });
    await sequence.getByRole("combobox", { name: "Message" }).selectOption({ label: "m1" });
    const first = sequence.locator("[data-kind=response]").filter({ hasText: "bob@b.example" }).first();
    await expect(first).toHaveAttribute(
      "aria-label",
      /200 — bob@b\.example accepted, nobody@b\.example rejected, carol@b\.example deferred, dave@b\.example deferred$/,
    );
    await expect(first).toContainText("nobody@b.example rejected");
    await expect(sequence.locator("[data-kind=gap]").first()).toContainText(/^… \d+ min …$/);
    await expect(sequence.locator("[data-kind=dsn]").first()).toContainText("DSN (rejected) to alice@a.example");
    // Issue 22: the receiver's key lookup while it handles the POST, from its own column; the DSN's delivery too.
    await expect(
      sequence.locator("[data-kind=dns-query]").filter({ hasText: "TXT s1._svckey.a.example?" }),
    ).not.toHaveCount(0);
    await expect(
      sequence.locator("[data-kind=request]").filter({ hasText: "POST /v1/messages [DSN]" }),
    ).not.toHaveCount(0);
    await sequence.getByText("Mermaid text").click();
    await expect(sequence.getByTestId("sequence-mermaid")).toContainText("sequenceDiagram");
    await expect(sequence.getByTestId("sequence-mermaid")).toContainText("nobody@b.example rejected");
    await unstick(page);
    await sequence.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await sequence.screenshot({ path: `${SHOTS}/sequence-teach-mixed.png` });
    await noSeriousViolations(page, "section[aria-labelledby=sequence-heading]");

    // Clicking the response opens its exchange: the per-recipient results in the inspector.
    await first.click();
    const inspector = page.getByRole("region", { name: "Exchange inspector" });
    await expect(inspector.getByRole("table", { name: "Per-recipient results" }).getByRole("row")).toHaveCount(5);
    await expect(
      inspector
        .getByRole("table", { name: "Per-recipient results" })
        .getByRole("row")
        .filter({ hasText: "carol@b.example" }),
    ).toContainText("deferred");
  });

  test("rate-limited-then-down: clicking attempt 1 opens its exchange — verified signature and digest, the 429 problem", async ({
    page,
  }) => {
    await runToEnd(page, "rate-limited-then-down");
    const m1 = lane(page, "m1 → b.example");
    await m1.locator("[data-kind=attempt][data-attempt='1']").click();
    const inspector = page.getByRole("region", { name: "Exchange inspector" });
    // Attempt 1 fetched the capabilities (x1) and POSTed (x2); the POST is shown first.
    await expect(
      inspector.getByRole("group", { name: "Exchanges of the selected attempt" }).getByRole("button"),
    ).toHaveText(["x1", "x2"]);
    await expect(inspector.getByTestId("exchange-title")).toContainText("POST /v1/messages HTTP/1.1");
    await expect(inspector.getByTestId("signature-input")).toContainText("s1._svckey.a.example");
    await expect(inspector.getByTestId("signature-input")).toContainText(
      "@method @target-uri content-type content-digest idempotency-key",
    );
    await expect(inspector.getByTestId("signature-base")).toContainText('"@signature-params": ("@method"');
    await expect(inspector.getByTestId("envelope")).toContainText('"from": "alice@a.example"');
    await expect(inspector.getByTestId("response-head")).toContainText("HTTP/1.1 429 (fault rate-limited-once)");
    await expect(inspector.getByTestId("problem")).toContainText("problems/rate_limited");
    // Issue 22: in force when it was sent — the service record answered then; not the key's TXT answered at
    // +5d 0:00:00 (the 429 came from a fault: the receiver never saw the request, nor looked its key up).
    const inForce = inspector.getByTestId("in-force");
    await expect(inForce.locator("tr[data-name='_svc.b.example']")).toContainText("+0:00:00");
    await expect(inForce.locator("tr[data-name='s1._svckey.a.example']")).toHaveCount(0);
    await expect(inForce).not.toContainText("+5d 0:00:00");
    const checks = inspector.getByTestId("receiver-checks").getByRole("listitem");
    const check = (name: string) =>
      checks.filter({ has: page.locator("strong", { hasText: new RegExp(`^${name}$`) }) });
    await expect(check("signature")).toHaveAttribute("data-status", "pass");
    await expect(check("digest")).toHaveAttribute("data-status", "pass");
    await expect(inspector.getByTestId("receiver-checks").locator("[data-status=fail]")).toHaveCount(0);
    await expect(inspector.getByRole("button", { name: "Copy as raw HTTP" })).toBeVisible();
    await expect(inspector.getByRole("button", { name: "Copy problem JSON" })).toBeVisible();
    await unstick(page);
    await inspector.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await inspector.screenshot({ path: `${SHOTS}/inspector-rate-limited.png` });
    await noSeriousViolations(page, "section[aria-labelledby=inspector-heading]");
    // A refused attempt: the failure. Attempt 2 shares attempt 1's pixel at this zoom; → selects where SMTP was
    // ruled out (attempt 1's answer, its exchanges), → again attempt 2.
    await m1.locator("[data-kind=attempt][data-attempt='1']").click();
    await page.keyboard.press("ArrowRight");
    await expect(m1.locator("[data-kind=ruled-out]")).toHaveAttribute("aria-pressed", "true");
    await page.keyboard.press("ArrowRight");
    await expect(inspector.getByTestId("exchange-failure")).toHaveText(/^connection-refused: .* \(fault b-down\)$/);
  });
});
