import { expect, test, type Page } from "@playwright/test";
import { noSeriousViolations, openScenario as open, SHOTS } from "./support.ts";

/**
 * Issue 24, item 2: the playback bar. It stays in view; Step goes to the next event, attempt or decision and
 * says which; a play or a step stops at the breakpoints, listed, ticked and cleared like a debugger's; the
 * scrubber spans the run and shows where its events are. On receiver-down-past-fallback-window: eight attempts
 * judged within the fallback window and retried (STATE-2), then the hand-off to SMTP (STATE-3).
 */

test.use({ viewport: { width: 1440, height: 1000 } });

const bar = (page: Page) => page.getByRole("toolbar", { name: "Playback" });
const stop = (page: Page) => page.getByTestId("stop");
const events = async (page: Page) =>
  Number((await page.getByTestId("phase").textContent())?.match(/(\d+) events/)?.[1]);
/** The seq the stop line cites. */
const stopSeq = async (page: Page) => Number((await stop(page).textContent())?.match(/#(\d+) /)?.[1]);

/** gap-G16-fallback-window-4h compared under a 1-hour and a 4-hour window: A hands off at +1:03:00, B does not. */
async function compareWindows(page: Page): Promise<void> {
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
}

test.describe("the playback bar", () => {
  test("STATE-2: Step by attempt stops at each verdict; a breakpoint on m1 entering retryScheduled stops Play there; untick it and Play runs to the end", async ({
    page,
  }) => {
    await open(page, "receiver-down-past-fallback-window");
    const levels = bar(page).getByRole("group", { name: "Step to the next" });
    await expect(levels.getByRole("button", { name: "Event" })).toHaveAttribute("aria-pressed", "true");
    await levels.getByRole("button", { name: "Attempt" }).click();
    await expect(levels.getByRole("button", { name: "Attempt" })).toHaveAttribute("aria-pressed", "true");
    const step = bar(page).getByRole("button", { name: "Step", exact: true });
    await expect(step).toHaveAccessibleDescription(
      "Step runs to the next attempt's verdict, or to a breakpoint before it.",
    );
    await step.click();
    await expect(stop(page)).toHaveText(/^Stepped to the next attempt's verdict: #\d+ attempt\.judged at \+0:00:00/);
    // The run shows every event up to the one cited, and none after: its seq is the count less one.
    const first = await stopSeq(page);
    await expect.poll(() => events(page)).toBe(first + 1);
    await step.click();
    await expect(stop(page)).toHaveText(/^Stepped to the next attempt's verdict: #\d+ attempt\.judged at \+0:0/);
    const second = await stopSeq(page);
    expect(second).toBeGreaterThan(first);
    await expect.poll(() => events(page)).toBe(second + 1);

    // A breakpoint, added from the list's form: m1 entering retryScheduled.
    await bar(page).getByRole("button", { name: "Breakpoints" }).click();
    const list = page.getByRole("region", { name: "Breakpoints" });
    await expect(list).toContainText("No breakpoints");
    await list.getByRole("combobox", { name: "Pause at" }).selectOption({ label: "a delivery enters a state" });
    await list.getByRole("combobox", { name: "Message", exact: true }).selectOption({ label: "m1" });
    await list.getByRole("combobox", { name: "State", exact: true }).selectOption("retryScheduled");
    await list.getByRole("button", { name: "Add breakpoint" }).click();
    const m1 = list.getByRole("checkbox", { name: "m1 enters retryScheduled" });
    await expect(m1).toBeChecked();
    await expect(bar(page).getByRole("button", { name: "Breakpoints (1/1)" })).toBeVisible();
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(stop(page)).toHaveText(
      /^Stopped at breakpoint "m1 enters retryScheduled": #\d+ machine\.transition at \+0:0\d:\d\d/,
    );
    await expect(page.getByTestId("phase")).toContainText("Paused");
    const atBreak = await stopSeq(page);
    expect(atBreak).toBeGreaterThan(second);
    await expect.poll(() => events(page)).toBe(atBreak + 1);
    await expect(list.getByRole("listitem").filter({ hasText: "m1 enters retryScheduled" })).toContainText(
      "stopped here",
    );
    await page.screenshot({ path: `${SHOTS}/playbar-breakpoint.png` });
    await noSeriousViolations(page);
    // Play on: the next retry of m1 stops it again, later.
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect.poll(() => stopSeq(page)).toBeGreaterThan(atBreak);
    await expect(stop(page)).toHaveText(/^Stopped at breakpoint "m1 enters retryScheduled"/);
    // Unticked, it stops nothing: Play runs to the end.
    await m1.uncheck();
    await expect(bar(page).getByRole("button", { name: "Breakpoints (0/1)" })).toBeVisible();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
    await expect(stop(page)).toHaveText("");
    // Cleared: the list says there are none.
    await list.getByRole("button", { name: "Clear all" }).click();
    await expect(list).toContainText("No breakpoints");
    await noSeriousViolations(page);
  });

  test("the bar stays in view; the scrubber spans the run, draws where its events are and jumps back; keys L, B and →", async ({
    page,
  }) => {
    await open(page, "receiver-down-past-fallback-window");
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
    // The span is the run's: its end is the clock's at the end.
    const end = await page.getByTestId("clock").textContent();
    await expect(page.getByTestId("scrubber-end")).toHaveText(`${end} end`);
    const seek = bar(page).getByRole("slider", { name: "Seek" });
    await expect(seek).toHaveAttribute("aria-valuetext", end ?? "");
    // Bars where the events are: the attempts at the start and the hand-off at the end.
    const bars = page.getByTestId("scrubber-events").locator("rect");
    // The bars follow the events a frame or so after the phase says Finished (the log and the bar redraw throttled).
    await expect.poll(() => bars.count()).toBeGreaterThan(2);
    const drawn = await bars.count();
    await expect(bars.first()).toHaveAttribute("x", "0");
    await expect(bars.last()).toHaveAttribute("x", "159");
    // Scrolled to the log at the bottom, the bar is still on screen, under the title bar.
    await page.getByRole("log", { name: "Event log" }).scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const box = await bar(page).boundingBox();
    expect(box?.y).toBeGreaterThanOrEqual(40);
    expect(box?.y).toBeLessThan(80);
    await page.screenshot({ path: `${SHOTS}/playbar-scrolled.png` });
    // Home on the scrubber: back to the start (the run is run again to there), the bar says so.
    await seek.focus();
    await page.keyboard.press("Home");
    await expect(page.getByTestId("clock")).toHaveText("+0:00:00");
    await expect(page.getByTestId("phase")).toContainText("Paused");
    // What the run has shown stays drawn after the jump back (it comes again the same: the run is deterministic),
    // the part ahead of the clock dimmed (docs/decisions/0097).
    await expect(bars).toHaveCount(drawn);
    await expect(bars.last()).toHaveAttribute("x", "159");
    await expect(bars.last()).toHaveAttribute("data-ahead", "true");
    await expect(bars.first()).toHaveAttribute("data-ahead", "false");
    // Keys: L goes round the levels; → steps at the level; B puts a breakpoint like the stopped event.
    await page.getByRole("log", { name: "Event log" }).focus();
    const levels = bar(page).getByRole("group", { name: "Step to the next" });
    await page.keyboard.press("l");
    await page.keyboard.press("l");
    await expect(levels.getByRole("button", { name: "Decision" })).toHaveAttribute("aria-pressed", "true");
    await page.keyboard.press("ArrowRight");
    await expect(stop(page)).toHaveText(
      /^Stepped to the next decision of a delivery machine: #\d+ machine\.transition/,
    );
    await page.keyboard.press("b");
    await expect(bar(page).getByRole("button", { name: "Breakpoints (1/1)" })).toBeVisible();
    await bar(page).getByRole("button", { name: "Breakpoints (1/1)" }).click();
    await expect(page.getByRole("region", { name: "Breakpoints" }).getByRole("checkbox")).toHaveAccessibleName(
      /^m1 enters /,
    );
    await page.keyboard.press("b");
    await expect(page.getByRole("region", { name: "Breakpoints" })).toContainText("No breakpoints");
  });

  test("a step past the last attempt stops at the end and says so; the next one ends the run", async ({ page }) => {
    await open(page, "receiver-down-past-fallback-window");
    await bar(page).getByRole("group", { name: "Step to the next" }).getByRole("button", { name: "Attempt" }).click();
    const step = bar(page).getByRole("button", { name: /^Step/ });
    for (let i = 1; i <= 8; i++) {
      await step.click();
      await expect(stop(page)).toContainText(/attempt\.judged/);
      await expect(page.getByTestId("phase")).toContainText("Paused");
    }
    await step.click();
    await expect(stop(page)).toHaveText(
      "No attempt is left before the end: the next Step or Play ends the run and checks it.",
    );
    await expect(step).toHaveText("Step · ends the run");
    await expect(step).toHaveAccessibleDescription("Nothing is left to run: Step ends the run and checks it.");
    await expect(page.getByTestId("phase")).toContainText("Paused");
    await page.screenshot({ path: `${SHOTS}/playbar-at-end.png` });
    await noSeriousViolations(page);
    await step.click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
  });

  test("dark theme: the bar with its breakpoints open", async ({ page }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    await open(page, "receiver-down-past-fallback-window");
    await bar(page).getByRole("button", { name: "Breakpoints" }).click();
    const list = page.getByRole("region", { name: "Breakpoints" });
    await list.getByRole("button", { name: "Add breakpoint" }).click();
    await list.getByRole("combobox", { name: "Pause at" }).selectOption({ label: "the clock reaches a time" });
    await list.getByRole("textbox", { name: "Time" }).fill("2h");
    await list.getByRole("button", { name: "Add breakpoint" }).click();
    await expect(list.getByRole("checkbox", { name: "every fallback decision" })).toBeChecked();
    await expect(list.getByRole("checkbox", { name: "at +2:00:00" })).toBeChecked();
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(stop(page)).toHaveText(/^Stopped at breakpoint "every fallback decision": #\d+ machine\.transition/);
    await page.screenshot({ path: `${SHOTS}/playbar-dark.png` });
    await noSeriousViolations(page);
  });

  test("Compare: one clock over both runs; Step by attempt goes to the next verdict of either run; the hand-off shows once the clock passes it", async ({
    page,
  }) => {
    await compareWindows(page);
    const both = page.getByRole("toolbar", { name: "Playback of both runs" });
    const runA = page.getByRole("region", { name: /^Run A/ });
    // Whole runs at first: A's hand-off to SMTP at +1:03:00 is drawn.
    await expect(page.getByTestId("compare-clock")).toHaveText("whole runs");
    await expect(runA.locator("[data-kind=handoff]")).toHaveCount(1);
    await expect(
      both.getByRole("group", { name: "Step to the next" }).getByRole("button", { name: "Attempt" }),
    ).toHaveAttribute("aria-pressed", "true");
    await both.getByRole("button", { name: "Step", exact: true }).click();
    await expect(page.getByTestId("compare-stop")).toHaveText(/^Run [AB]: #\d+ attempt\.judged at \+0:00:00/);
    await expect(page.getByTestId("compare-clock")).toHaveText("+0:00:00");
    // Up to the clock, A has not handed off yet.
    await expect(runA.locator("[data-kind=handoff]")).toHaveCount(0);
    // The scrubber to its end (End key), then let go: both whole again, the hand-off drawn.
    await both.getByRole("slider", { name: "Seek" }).focus();
    await page.keyboard.press("End");
    await expect(page.getByTestId("compare-clock")).toHaveText("+3:03:00");
    await expect(runA.locator("[data-kind=handoff]")).toHaveCount(1);
    await page.screenshot({ path: `${SHOTS}/playbar-compare.png` });
    await noSeriousViolations(page);
    await both.getByRole("button", { name: "Whole runs" }).click();
    await expect(page.getByTestId("compare-clock")).toHaveText("whole runs");
  });

  for (const scheme of ["light", "dark"] as const) {
    test(`Compare's breakpoints: one list for both runs; Play stops both where either hits one and says which; a seek back forgets the hits after it (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      await compareWindows(page);
      const both = page.getByRole("toolbar", { name: "Playback of both runs" });
      const runA = page.getByRole("region", { name: /^Run A/ });
      const said = page.getByTestId("compare-stop");
      await both.getByRole("button", { name: /^Breakpoints/ }).click();
      const list = both.getByRole("region", { name: "Breakpoints" });
      await list.getByRole("combobox", { name: "Pause at" }).selectOption({ label: "an event of a kind" });
      await list.getByRole("combobox", { name: "Kind" }).selectOption("smtp.handoff");
      await list.getByRole("button", { name: "Add breakpoint" }).click();
      await expect(list.getByRole("checkbox", { name: "every smtp.handoff" })).toBeChecked();
      await both.getByRole("button", { name: "Speed max" }).click();
      await both.getByRole("button", { name: "Play", exact: true }).click();
      // Run A hands off at +1:03:00 (its window is 1 h): both runs stop there, A's hand-off drawn.
      await expect(said).toHaveText(
        /^Run A stopped at breakpoint "every smtp\.handoff": #\d+ smtp\.handoff at \+1:03:00/,
      );
      await expect(page.getByTestId("compare-clock")).toHaveText("+1:03:00");
      await expect(runA.locator("[data-kind=handoff]")).toHaveCount(1);
      const item = list.getByRole("listitem").first();
      await expect(item).toContainText("hit once");
      await expect(item).toContainText("stopped here");
      await noSeriousViolations(page);
      await page.screenshot({ path: `${SHOTS}/playbar-compare-breakpoint-${scheme}.png` });
      // Back to the start: the hit is after the clock, so not counted; Play stops at it again, once.
      await both.getByRole("slider", { name: "Seek" }).focus();
      await page.keyboard.press("Home");
      await expect(page.getByTestId("compare-clock")).toHaveText("+0:00:00");
      await expect(item).not.toContainText("hit");
      await both.getByRole("button", { name: "Play", exact: true }).click();
      await expect(page.getByTestId("compare-clock")).toHaveText("+1:03:00");
      await expect(item).toContainText("hit once");
      // Unticked while stopped on it, Play runs both to the end (B never hands off).
      await list.getByRole("checkbox", { name: "every smtp.handoff" }).uncheck();
      await both.getByRole("button", { name: "Play", exact: true }).click();
      await expect(page.getByTestId("compare-clock")).toHaveText("+3:03:00");
      // One list: the run view's playback bar has it too.
      await page.getByRole("button", { name: "Back to the run" }).click();
      await expect(bar(page).getByRole("button", { name: "Breakpoints (0/1)" })).toBeVisible();
    });
  }
});
