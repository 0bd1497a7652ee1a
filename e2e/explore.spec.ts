import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";

/**
 * Issue 26 item 8: the Explore view — start and stop an exploration in Web
 * Workers, its progress and coverage-growth chart, a violation's shrunk
 * scenario opened in the run view and the editor, the behaviour gallery's
 * worlds opened, and a properties file's mistake at its line and column.
 */

const SHOTS = "test-results/screenshots";
/** A property every world violates, so the view has a violation to shrink and open. */
const NOTHING_SUBMITTED = "properties:\n  - id: nothing-submitted\n    never: message.submitted\n";

test.use({ viewport: { width: 1440, height: 1000 } });

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).include(".explore").analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

const nav = (page: Page) => page.getByRole("navigation", { name: "Views" });
const form = (page: Page) => page.getByRole("form", { name: "Exploration" });
const phase = (page: Page) => page.getByTestId("explore-phase");

async function explore(page: Page, runs: number, properties = ""): Promise<void> {
  await nav(page).getByRole("button", { name: "Explore" }).click();
  await form(page).getByLabel("Runs").fill(String(runs));
  await form(page).getByLabel("Workers").fill("2");
  if (properties !== "") {
    await form(page).getByText("Your properties (YAML)").click();
    await form(page).getByRole("textbox", { name: "Your properties (YAML)" }).fill(properties);
  }
  await form(page).getByRole("button", { name: "Start" }).click();
}

test.describe("the Explore view", () => {
  test("explores in workers, charts the coverage, and opens a violation's shrunk scenario and a gallery world", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    // The page's Content-Security-Policy allows no eval: the explorer's code (zod schemas) must not probe it.
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { cspViolations?: string[] }).cspViolations?.push(e.violatedDirective),
      );
      (window as unknown as { cspViolations: string[] }).cspViolations = [];
    });
    await page.goto("/");
    await explore(page, 12, NOTHING_SUBMITTED);
    // The page answers while the workers run: another view opens and the exploration goes on behind it.
    await nav(page).getByRole("button", { name: "Rules" }).click();
    await nav(page).getByRole("button", { name: "Explore" }).click();
    await expect(phase(page)).toHaveText("done", { timeout: 170_000 });
    await expect(page.getByTestId("explore-progress")).toContainText("12 of 12 runs");
    await expect(page.getByTestId("explore-progress")).toContainText("1 property violated");
    await expect(page.getByTestId("explore-coverage")).toContainText(/Delivery machine: \d+ of \d+ transitions/);
    // The chart: a line of behaviours against runs, drawn from the report's growth points.
    const chart = page.getByRole("figure", { name: "Coverage growth: behaviours seen against runs" });
    await expect(chart.locator(".recharts-line path").first()).toBeVisible();
    expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThan(1);
    // The axis titles are drawn whole, inside the chart (the turned "behaviours" once ran off its top).
    const svg = await chart.locator("svg.recharts-surface").boundingBox();
    for (const title of ["behaviours", "runs"]) {
      const box = await chart.locator(".recharts-label", { hasText: title }).boundingBox();
      expect(box, title).not.toBeNull();
      expect(svg).not.toBeNull();
      if (box === null || svg === null) continue;
      expect(box.y, title).toBeGreaterThanOrEqual(svg.y);
      expect(box.y + box.height, title).toBeLessThanOrEqual(svg.y + svg.height);
    }

    const violation = page.locator('.explore-violations li[data-property="nothing-submitted"]');
    await expect(violation).toContainText("12 runs; first run 0");
    await expect(violation).toContainText("Shrunk in");
    await expect(violation).toContainText("to 1 domain, 1 message, 1 recipient, 0 faults");
    const gallery = page.getByRole("table").filter({ hasText: "Path through the delivery machine" });
    await expect(gallery.getByRole("row").nth(1)).toBeVisible();

    await noSeriousViolations(page);
    await page.screenshot({ path: `${SHOTS}/explore-light.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: `${SHOTS}/explore-dark.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "light" });

    // The shrunk scenario in the run view: it runs there like any scenario.
    await violation.getByRole("button", { name: "Open shrunk scenario" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "explore-nothing-submitted" })).toBeVisible();
    // … and in the editor, with the comment saying what it violates.
    await nav(page).getByRole("button", { name: "Explore" }).click();
    await violation.getByRole("button", { name: "Edit shrunk scenario" }).click();
    const editor = page.getByRole("region", { name: "Scenario editor" });
    await expect(editor).toBeVisible();
    await expect(editor).toContainText("mailscope explore: this scenario violates nothing-submitted");
    // A gallery world opens in the run view under its run's name.
    await nav(page).getByRole("button", { name: "Explore" }).click();
    const seed = await gallery.getByRole("row").nth(1).getAttribute("data-seed");
    await gallery.getByRole("button", { name: "Open world 1 in the run view" }).click();
    await expect(
      page.getByRole("heading", { level: 2, name: `explore-${String(seed).replace(/[^A-Za-z0-9.-]+/g, "-")}` }),
    ).toBeVisible();
    expect(errors).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
  });

  test("Stop ends the exploration after the runs under way, with the report of the runs made", async ({ page }) => {
    await page.goto("/");
    await explore(page, 100_000);
    await expect(page.getByTestId("explore-progress")).toContainText(/^[1-9]\d* of 100000 runs/, { timeout: 120_000 });
    await form(page).getByRole("button", { name: "Stop" }).click();
    await expect(phase(page)).toHaveText("done", { timeout: 170_000 });
    const text = (await page.getByTestId("explore-progress").textContent()) ?? "";
    const runs = Number(/^(\d+) of 100000 runs/.exec(text)?.[1]);
    expect(runs).toBeGreaterThan(0);
    expect(runs).toBeLessThan(100_000);
    await expect(page.getByTestId("explore-coverage")).toBeVisible();
  });

  test("a properties mistake is shown at its line and column, and nothing starts", async ({ page }) => {
    await page.goto("/");
    await explore(page, 5, "properties:\n  - id: x\n    never: smtp.handof\n");
    const alert = form(page).getByRole("alert");
    await expect(alert).toContainText(
      'properties.yaml:3:12: properties[0].never: unknown event "smtp.handof" (did you mean smtp.handoff?)',
    );
    await expect(page.getByTestId("explore-phase")).toHaveCount(0);
    await noSeriousViolations(page);
    await page.screenshot({ path: `${SHOTS}/explore-properties-error.png` });
  });
});
