import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";

/** The delivery machine, live (note 0014): the statechart, its history and why, the rules as evidence. */

const SHOTS = "test-results/screenshots";

test.use({ viewport: { width: 1600, height: 1100 } });

async function noSeriousViolations(page: Page, include?: string): Promise<void> {
  const builder = new AxeBuilder({ page });
  const results = await (include ? builder.include(include) : builder).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

async function open(page: Page, name: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
}

async function jumpTo(page: Page, at: string): Promise<void> {
  await page.getByRole("button", { name: "Speed max" }).click();
  await page.getByLabel("Jump to").fill(at);
  await page.getByRole("button", { name: "Go" }).click();
  await expect(page.getByTestId("clock")).toHaveText(at, { timeout: 60_000 });
}

async function runToEnd(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Speed max" }).click();
  const play = page.getByRole("button", { name: "Play", exact: true });
  if (await play.isEnabled()) await play.click();
  await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
}

const machine = (page: Page) => page.getByRole("region", { name: "Delivery machine" });
const history = (page: Page) => page.getByRole("region", { name: "Transition history" });
const historyItem = (page: Page, name: string) => history(page).getByRole("listitem").filter({ hasText: name });
const edgeLabel = (page: Page, name: string) => machine(page).locator(`.sc-edge-label[data-transition="${name}"]`);

test.describe("the statechart view", () => {
  // rate-limited-then-down is 127 attempts over 5 virtual days: played at max speed, then checked.
  test.setTimeout(300_000);
  test("rate-limited-then-down: retryScheduled at +0:00:30 after the 429, the give-up into bounced at +5d 0:00:00", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await open(page, "rate-limited-then-down");
    await jumpTo(page, "+0:00:30");
    await expect(page.getByTestId("active-state")).toHaveText("retryScheduled");
    await expect(machine(page).locator('[data-state-id="retryScheduled"]')).toHaveAttribute("data-active", "true");
    const limited = historyItem(page, "retryNotFallbackEligible").first();
    await expect(limited).toContainText("(row 4)");
    await expect(limited).toContainText("attempt 1 not fallback-eligible (429 rate_limited)");
    await expect(edgeLabel(page, "retryNotFallbackEligible")).toHaveAttribute("data-last", "true");
    await expect(edgeLabel(page, "retryNotFallbackEligible")).toHaveAttribute("data-count", "1");
    await expect(edgeLabel(page, "fallBackToSmtpAfterWindow")).toHaveClass(/sc-dimmed/);
    await page.screenshot({ path: `${SHOTS}/statechart-rate-limited-0030.png`, fullPage: true });

    await runToEnd(page);
    await expect(page.getByTestId("active-state")).toHaveText("bounced");
    const giveUp = historyItem(page, "giveUpWhileRetrying");
    await expect(giveUp).toContainText("+5d 0:00:00");
    await expect(giveUp).toContainText("(row 6)");
    await expect(giveUp).toContainText("→ bounced");
    await expect(edgeLabel(page, "giveUpWhileRetrying")).toHaveAttribute("data-last", "true");
    await expect(edgeLabel(page, "retrySameDelivery")).toHaveAttribute("data-count", "126");
    await machine(page).scrollIntoViewIfNeeded();
    await machine(page).screenshot({ path: `${SHOTS}/statechart-rate-limited-end.png` });
    // A wider window, where the labels read at a glance (the README's picture: e2e/readme.screenshots.ts).
    await page.setViewportSize({ width: 1920, height: 1200 });
    await machine(page).scrollIntoViewIfNeeded();
    // The title bar is sticky: let it scroll away for the picture, so it does not cover the panel's head.
    await machine(page).screenshot({
      path: `${SHOTS}/statechart-rate-limited-end-wide.png`,
      style: ".titlebar { position: static !important; }",
    });
    await page.setViewportSize({ width: 1600, height: 1100 });

    // A history row shows the machine right after it, and marks its event in the log.
    await limited.getByRole("button", { name: /Show the machine after retryNotFallbackEligible/ }).click();
    await expect(page.getByTestId("active-state")).toHaveText("retryScheduled");
    await expect(page.getByTestId("statechart-status")).toContainText("pinned");
    // … and selects the attempt it belongs to in the timeline, with its exchanges in the inspector (attempt 1: x1, x2).
    await expect(page.locator("[data-kind=attempt][data-attempt='1'][aria-pressed=true]")).toHaveCount(1);
    await expect(
      page
        .getByRole("region", { name: "Exchange inspector" })
        .getByRole("group", { name: "Exchanges of the selected attempt" })
        .getByRole("button"),
    ).toHaveText(["x1", "x2"]);
    await page.getByRole("button", { name: "Follow the playhead" }).click();
    await expect(page.getByTestId("active-state")).toHaveText("bounced");
    await noSeriousViolations(page, ".statechart");
    expect(errors).toEqual([]);
  });

  test("receiver-down-past-fallback-window: fallBackToSmtpAfterWindow (row 2) and why", async ({ page }) => {
    await open(page, "receiver-down-past-fallback-window");
    await runToEnd(page);
    const fallback = historyItem(page, "fallBackToSmtpAfterWindow");
    await expect(fallback).toContainText("(row 2)");
    await expect(fallback).toContainText("attempt 8 at +2:03:00 ≥ window end +2:00:00, every attempt eligible");
    await expect(page.getByTestId("active-state")).toHaveText("handedToSmtp");
    // The view (machine and history) is taller than the window: a window as tall as it, so that the page's
    // sticky header is not drawn over it in the picture.
    const box = await machine(page).boundingBox();
    await page.setViewportSize({
      width: page.viewportSize()?.width ?? 1280,
      height: Math.ceil((box?.height ?? 900) + 200),
    });
    await machine(page).scrollIntoViewIfNeeded();
    await machine(page).screenshot({ path: `${SHOTS}/statechart-fallback.png` });
  });
});

/** The size on screen of the drawing's smallest words (its transitions' row and trigger lines), in px. */
const smallestText = (page: Page) =>
  machine(page)
    .locator(".sc-edge-label .sc-edge-trigger")
    .evaluateAll((els) => {
      const viewport = document.querySelector(".sc-canvas .react-flow__viewport");
      const scale = viewport ? new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a : 1;
      return els.reduce((min, e) => Math.min(min, parseFloat(getComputedStyle(e).fontSize) * scale), Infinity);
    });

test.describe("the machine's words read at its default view", () => {
  for (const width of [1280, 1600])
    test(`a ${width} px window: the transitions' labels at 11 px or more, the active state in view`, async ({
      page,
    }) => {
      await page.setViewportSize({ width, height: 1000 });
      await open(page, "receiver-down-past-fallback-window");
      await jumpTo(page, "+0:30:00");
      await expect(page.getByTestId("active-state")).toHaveText("retryScheduled");
      await expect(machine(page).locator(".sc-edge-label").first()).toBeVisible();
      await expect.poll(() => smallestText(page)).toBeGreaterThanOrEqual(11);
      const canvas = (await machine(page).locator(".sc-canvas").boundingBox())!;
      const active = (await machine(page).locator('[data-state-id="retryScheduled"]').boundingBox())!;
      expect(active.x).toBeGreaterThanOrEqual(canvas.x);
      expect(active.x + active.width).toBeLessThanOrEqual(canvas.x + canvas.width);
      expect(active.y).toBeGreaterThanOrEqual(canvas.y);
      expect(active.y + active.height).toBeLessThanOrEqual(canvas.y + canvas.height);
      await machine(page).scrollIntoViewIfNeeded();
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await machine(page).screenshot({
          path: `${SHOTS}/statechart-readable-${width}-${scheme}.png`,
          style: ".titlebar { position: static !important; }",
        });
      }
      await page.emulateMedia({ colorScheme: "light" });
      await noSeriousViolations(page, ".statechart");
    });
});

test.describe("the machine before the run, in a 1280 × 800 window", () => {
  test("the drawing takes the whole width (nothing goes beside it yet), where deliveries start in view, its words at 11 px or more", async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await open(page, "receiver-down-past-fallback-window");
    await expect(machine(page).locator(".sc-edge-label").first()).toBeVisible();
    // Measured: states 14.7 px, transitions' names 12.6 px, their row and trigger lines 11 px on screen.
    await expect.poll(() => smallestText(page)).toBeGreaterThanOrEqual(11);
    const section = (await machine(page).boundingBox())!;
    const canvas = (await machine(page).locator(".sc-canvas").boundingBox())!;
    expect(canvas.width).toBeGreaterThan(section.width * 0.9);
    for (const state of [
      "attemptingOverService.discovering",
      "attemptingOverService.posting",
      "attemptingOverService.judging",
    ]) {
      const box = (await machine(page).locator(`[data-state-id="${state}"]`).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(canvas.x);
      expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
      expect(box.y).toBeGreaterThanOrEqual(canvas.y);
      expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height);
    }
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await machine(page).screenshot({
        path: `${SHOTS}/statechart-before-run-1280-${scheme}.png`,
        style: ".titlebar, .controls { position: static !important; }",
      });
    }
    await noSeriousViolations(page, ".statechart");
  });
});

test.describe("the delivery machine as a learner reads it", () => {
  test.setTimeout(120_000);
  for (const scheme of ["light", "dark"] as const) {
    test(`drawn before the run; a headline and the context at the step, beside the drawing at 1280 px (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 1280, height: 900 });
      await open(page, "receiver-down-past-fallback-window");
      // Before the run: the machine is drawn, nothing active.
      await expect(machine(page).locator('[data-state-id="retryScheduled"]')).toBeVisible();
      await expect(machine(page).locator('[data-active="true"]')).toHaveCount(0);
      await expect(page.getByTestId("statechart-status")).toContainText("No delivery has started yet");
      // STATE-2: at +1:00:00 it waits inside the window for attempt 7 (jitter off: 0, 1, 3, 7, 15, 31, 63 min).
      await jumpTo(page, "+1:00:00");
      await expect(page.getByTestId("statechart-headline")).toHaveText(
        "bob@b.example is in retryScheduled; attempt 7 at +1:03:00",
      );
      const context = page.getByTestId("statechart-context");
      await expect(context).toContainText("Fallback window ends+2:00:00 (in 1:00:00)");
      await expect(context).toContainText("Next attemptretry 6, +1:03:00 (in 0:03:00)");
      await expect(context).toContainText(
        "SMTP fallbackstill possible: every attempt so far fallback-eligible; not before the window ends at +2:00:00 (STATE-2)",
      );
      // A value's event, in the log.
      await context.getByRole("button", { name: /^Next attempt: event #\d+ in the log$/ }).click();
      await expect(page.locator("[data-testid=log-row][data-evidence]")).toContainText("attempt 7 in 32m");
      // Beside the drawing, not under it.
      const canvas = await machine(page).locator(".sc-canvas").boundingBox();
      const side = await context.boundingBox();
      expect(side!.x).toBeGreaterThan(canvas!.x + canvas!.width - 1);
      expect(side!.y).toBeLessThan(canvas!.y + canvas!.height);
      await machine(page).scrollIntoViewIfNeeded();
      await noSeriousViolations(page);
      await machine(page).screenshot({ path: `${SHOTS}/statechart-context-${scheme}.png` });
      // STATE-3: handed over at +2:03:00; SMTP taken.
      await runToEnd(page);
      await expect(page.getByTestId("statechart-headline")).toHaveText(
        "m1@a.example→b.example is in handedToSmtp: handed to SMTP at +2:03:00",
      );
      await expect(page.getByTestId("active-state")).toHaveText("handedToSmtp");
      await expect(context).toContainText("SMTP fallbacktaken: handed to SMTP");
    });
  }
});

test("with 30 deliveries, the statechart's picker is narrowed by the words typed", async ({ page }) => {
  const messages = Array.from(
    { length: 30 },
    (_, i) => `  - { id: m${i + 1}, at: ${i * 1000}, from: alice@a.example, to: bob@b.example }`,
  );
  const text = `name: thirty\ndomains:\n  a.example: { mailboxes: [alice] }\n  b.example: { mailboxes: [bob] }\nmessages:\n${messages.join("\n")}\n`;
  await page.goto("/");
  await page.getByLabel("Open scenario…").setInputFiles({
    name: "thirty.yaml",
    mimeType: "text/yaml",
    buffer: Buffer.from(text),
  });
  await expect(page.getByTestId("phase")).toContainText("Ready");
  await runToEnd(page);
  const picker = machine(page).getByRole("combobox", { name: "Delivery shown in the statechart" });
  await expect(picker.getByRole("option")).toHaveCount(30);
  await machine(page).getByRole("searchbox", { name: "Find a delivery" }).fill("m2");
  // m2 and m20–m29, and the delivery shown (m1's) kept.
  await expect(picker.getByRole("option")).toHaveCount(12);
  await picker.selectOption("m27@a.example→b.example");
  await expect(page.getByTestId("statechart-headline")).toHaveText(/^m27@a\.example→b\.example is finished at /);
  await noSeriousViolations(page, ".statechart");
  await machine(page)
    .locator(".panel-head")
    .screenshot({ path: `${SHOTS}/statechart-picker.png` });
});

test.describe("the rules as evidence", () => {
  test.setTimeout(300_000);

  test("rate-limited-then-down: STATE-7 fired, and links to the bounce; fired in this run", async ({ page }) => {
    await open(page, "rate-limited-then-down");
    await runToEnd(page);
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Rules" }).click();
    await page.getByLabel("Search rules").fill("STATE-7");
    await page.getByLabel(/^STATE-7: cited by \d+ events of this run$/).click();
    const citing = page.getByRole("list", { name: "Events citing STATE-7" });
    await expect(citing.locator('[data-event="delivery.bounced"]')).toContainText("+5d 0:00:00");
    await expect(citing.locator('[data-event="delivery.bounced"]')).toContainText(
      "gave up on bob@b.example after 127 attempts: bounced",
    );
    // The readings in force, each with the events it decided.
    const readings = page.getByRole("region", { name: "Readings in force in this run" });
    await expect(readings.getByLabel(/^G16: cited by \d+ events of this run$/)).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/rules-state-7.png` });
    await page.getByLabel("Search rules").fill("");
    await page.getByLabel(/Fired in this run/).check();
    await expect(page.getByTestId("rule-count")).not.toHaveText(/^(\d+) of \1 rules$/);
    await expect(page.getByRole("cell", { name: "STATE-3", exact: true })).toHaveCount(0);
    await expect(page.getByRole("cell", { name: "STATE-5", exact: true })).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/rules-fired.png` });
    await noSeriousViolations(page);
  });

  test("coverage across the scenario library, computed in the app: the rules no scenario exercises", async ({
    page,
  }) => {
    // Every bundled scenario runs once, in a worker.
    test.setTimeout(300_000);
    await page.goto("/");
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Rules" }).click();
    await page.getByRole("button", { name: "Run every scenario and count the rules they exercise" }).click();
    await expect(page.getByTestId("library-coverage")).toContainText(
      /\d+ of \d+ rules are cited by some scenario's events/,
      {
        timeout: 200_000,
      },
    );
    await page.getByLabel("Exercised by no scenario").check();
    await expect(page.getByRole("cell", { name: "SVC-1", exact: true })).toBeVisible();
    await expect(page.getByRole("cell", { name: "STATE-7", exact: true })).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/rules-library-coverage.png` });
    await noSeriousViolations(page);
  });
});
