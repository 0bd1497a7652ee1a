import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page } from "@playwright/test";

/**
 * What the end-to-end specs do alike: check a region with axe, open a bundled scenario, play it to its end.
 * (The older specs still hold copies of these; a spec written now imports them from here.)
 */

/** Where the tests write their pictures: an ignored folder, never over tracked files. */
export const SHOTS = "test-results/screenshots";

/** No serious or critical axe violation on the page, or within `include` (a CSS selector). */
export async function noSeriousViolations(page: Page, include?: string): Promise<void> {
  const builder = new AxeBuilder({ page });
  const results = await (include ? builder.include(include) : builder).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** Opens the bundled scenario `name` from the library, ready to play. */
export async function openScenario(page: Page, name: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
}

/** Plays the open scenario at speed max until it is finished. */
export async function runToEnd(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Speed max" }).click();
  const play = page.getByRole("button", { name: "Play", exact: true });
  if (await play.isEnabled()) await play.click();
  await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 120_000 });
}

/**
 * A short window (1440 × 500) scrolled to its top, so the log sits below the fold, and the Checks panel's list
 * item of `rate-limited-then-down`'s give-up check (`give-up-at-5-days`): where a check's evidence link is followed
 * from when the page must move to show it.
 */
export async function giveUpCheckInShortWindow(page: Page): Promise<Locator> {
  await page.setViewportSize({ width: 1440, height: 500 });
  await page.evaluate(() => window.scrollTo(0, 0));
  return page.getByRole("region", { name: "Checks" }).getByRole("listitem").filter({ hasText: "give-up-at-5-days" });
}

/**
 * The pairs of words that overlap on screen inside each of `plots` (a lane's or a sub-lane's plot), and the
 * words that overlap a mark's box drawn beside its dot (`shapes`: a DSN's envelope).
 */
export async function overlappingLabels(plots: Locator, texts: string, shapes = ".dsn-shape"): Promise<string[]> {
  return plots.evaluateAll(
    (els, [textSel, shapeSel]) =>
      els.flatMap((plot) => {
        const box = (e: Element, name: string) => ({ name, r: e.getBoundingClientRect() });
        const words = [...plot.querySelectorAll(textSel)].map((t) => box(t, t.textContent ?? ""));
        const boxes = [...plot.querySelectorAll(shapeSel)].map((t) => box(t, `<${t.getAttribute("class")}>`));
        const out: string[] = [];
        const meet = (a: DOMRect, b: DOMRect) =>
          Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
        words.forEach((a, i) =>
          [...words.slice(i + 1), ...boxes].forEach((b) => {
            if (meet(a.r, b.r)) out.push(`${a.name} × ${b.name}`);
          }),
        );
        return out;
      }),
    [texts, shapes] as const,
  );
}
