import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { giveUpCheckInShortWindow, noSeriousViolations, openScenario, runToEnd, SHOTS } from "./support.ts";

/**
 * Finding things in a run (note 0090), through what a person sees: the outcomes table sorted and
 * filtered, the log searched with several event kinds and only its evidence rows, the timeline's lanes
 * filtered ("went to SMTP", "bounced"), and permalinks to an event (`#seq=N`), with the wrong moves (a link
 * to an event the trace lacks, a bad seq, a filter on and then a link followed).
 */

test.use({ viewport: { width: 1440, height: 1000 } });

const outcomes = (page: Page) => page.getByRole("region", { name: "Outcomes" });
const outcomeRows = (page: Page) => outcomes(page).locator("tbody tr:not([aria-hidden])");
const log = (page: Page) => page.getByRole("region", { name: "Log" });
const logRows = (page: Page) => page.getByTestId("log-row");
const timeline = (page: Page) => page.getByRole("region", { name: "Delivery timeline" });

/** The texts of one column of the outcomes table, top to bottom. */
async function column(page: Page, index: number): Promise<string[]> {
  return outcomeRows(page).evaluateAll(
    (rows, i) => rows.map((r) => (r as HTMLTableRowElement).cells[i]?.textContent?.trim() ?? ""),
    index,
  );
}

test("the outcomes table sorts by a header (click or Enter) and filters by outcome, domain, message, attempts", async ({
  page,
}) => {
  await openScenario(page, "teach-mixed-recipient-results");
  await runToEnd(page);
  const count = outcomes(page).getByTestId("outcomes-count");
  const total = await outcomeRows(page).count();
  expect(total).toBeGreaterThan(2);
  await expect(count).toHaveText(`showing ${total} of ${total}`);
  // Sort by recipient: a click sorts ascending, Enter on the focused header descending.
  const header = outcomes(page).getByRole("columnheader", { name: /Recipient/ });
  await expect(header).toHaveAttribute("aria-sort", "none");
  await header.getByRole("button").click();
  await expect(header).toHaveAttribute("aria-sort", "ascending");
  const asc = await column(page, 1);
  expect(asc).toEqual([...asc].sort((a, b) => a.localeCompare(b, "en", { numeric: true })));
  await header.getByRole("button").focus();
  await page.keyboard.press("Enter");
  await expect(header).toHaveAttribute("aria-sort", "descending");
  expect(await column(page, 1)).toEqual([...asc].reverse());
  // Only the rejected recipients.
  await outcomes(page).getByLabel("Filter by outcome").selectOption("rejected");
  const rejected = await column(page, 2);
  expect(rejected.length).toBeGreaterThan(0);
  expect(rejected.length).toBeLessThan(total);
  for (const o of rejected) expect(o).toMatch(/^rejected/);
  await expect(count).toHaveText(`showing ${rejected.length} of ${total}`);
  await noSeriousViolations(page, "section[aria-labelledby=outcomes-heading]");
  await outcomes(page).screenshot({ path: `${SHOTS}/find-outcomes-filtered.png` });
  // More attempts than any recipient had: nothing passes, and the table says so.
  await outcomes(page).getByLabel("Attempts more than").fill("50");
  await expect(outcomes(page)).toContainText("No recipient passes these filters.");
  await expect(count).toHaveText(`showing 0 of ${total}`);
  await outcomes(page).getByRole("button", { name: "Clear filters" }).click();
  await expect(count).toHaveText(`showing ${total} of ${total}`);
  // By the message's words: none of this run's messages is called "nope".
  await outcomes(page).getByLabel("Message").fill("nope");
  await expect(count).toHaveText(`showing 0 of ${total}`);
  await outcomes(page).getByLabel("Message").fill("");
  // By the recipient's domain: each row shown is of it.
  const domain =
    (await outcomes(page).getByLabel("Filter by recipient domain").locator("option").nth(1).textContent()) ?? "";
  await outcomes(page).getByLabel("Filter by recipient domain").selectOption(domain);
  for (const r of await column(page, 1)) expect(r.endsWith(`@${domain}`)).toBe(true);
});

test("the log: free-text search, several event kinds, only evidence rows", async ({ page }) => {
  await openScenario(page, "rate-limited-then-down");
  await runToEnd(page);
  const count = page.getByTestId("log-count");
  const all = Number((await count.textContent())?.match(/^(\d+)/)?.[1]);
  // Search: every line shown holds the words, in any case (ERR-8: the 429's Retry-After).
  await log(page).getByLabel("Search").fill("RETRY-after");
  // The search answers between frames: wait until the count says fewer lines than the whole log.
  await expect
    .poll(async () => Number((await count.textContent())?.match(/^(\d+)/)?.[1]), { timeout: 30_000 })
    .toBeLessThan(all);
  await expect(log(page).getByText(/searching: /)).toHaveCount(0);
  await expect(logRows(page).first()).toBeVisible();
  for (const text of await logRows(page).allTextContents()) expect(text.toLowerCase()).toContain("retry-after");
  await log(page).getByLabel("Search").fill("");
  // Two kinds at once, from the event kinds' checkboxes.
  await log(page).getByText("Events: every kind").click();
  const kinds = log(page).getByRole("group", { name: /Event kinds shown/ });
  await kinds.getByLabel("attempt.ended").check();
  await kinds.getByLabel("delivery.bounced").check();
  await expect(log(page).getByText("Events: 2 kinds")).toBeVisible();
  await expect
    .poll(async () =>
      [...new Set(await logRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind"))))].sort(),
    )
    .toEqual(["attempt.ended", "delivery.bounced"]);
  await noSeriousViolations(page, "section[aria-labelledby=log-heading]");
  await log(page).screenshot({ path: `${SHOTS}/find-log-kinds.png` });
  await kinds.getByRole("button", { name: "Every kind" }).click();
  await log(page).getByText("Events: every kind").click();
  // Only the evidence rows: fewer lines, each citing a rule or gap of the spec.
  await log(page).getByLabel("Only evidence rows").check();
  await expect
    .poll(async () => Number((await count.textContent())?.match(/^(\d+)/)?.[1]), { timeout: 30_000 })
    .toBeLessThan(all);
  const evidence = Number((await count.textContent())?.match(/^(\d+)/)?.[1]);
  expect(evidence).toBeGreaterThan(0);
  for (const row of await logRows(page).all())
    await expect(row.getByRole("button", { name: /^[A-Z]+-\d+$|^G\d+$/ }).first()).toBeVisible();
  await noSeriousViolations(page, "section[aria-labelledby=log-heading]");
});

test("lanes filtered and searched: went to SMTP, bounced, a DSN by its words", async ({ page }) => {
  await openScenario(page, "rate-limited-then-down");
  await runToEnd(page);
  const count = timeline(page).getByTestId("lanes-count");
  await expect(count).toHaveText("2 of 2 lanes");
  await timeline(page).getByLabel("Deliveries that went").selectOption({ label: "bounced" });
  await expect(count).toHaveText("1 of 2 lanes");
  await expect(timeline(page).locator(".lane")).toHaveCount(1);
  await expect(timeline(page).locator(".lane-label")).toHaveText("m1 → b.example");
  await noSeriousViolations(page, "section[aria-labelledby=timeline-heading]");
  await timeline(page).screenshot({ path: `${SHOTS}/find-lanes-bounced.png` });
  await timeline(page).getByRole("button", { name: "Show every lane" }).click();
  await timeline(page).getByLabel("Find lanes").fill("dsn");
  await expect(count).toHaveText("1 of 2 lanes");
  await expect(timeline(page).locator(".lane-label")).toContainText("DSN of m1");
  await timeline(page).getByLabel("Find lanes").fill("nobody-here");
  await expect(timeline(page)).toContainText("No lane passes these filters.");
  await expect(count).toHaveText("0 of 2 lanes");

  await openScenario(page, "receiver-down-past-fallback-window");
  await runToEnd(page);
  await timeline(page).getByLabel("Deliveries that went").selectOption({ label: "went to SMTP" });
  await expect(timeline(page).locator(".lane")).not.toHaveCount(0);
  const lanes = await timeline(page).locator(".lane").count();
  await expect(count).toHaveText(new RegExp(`^${lanes} of \\d+ lanes$`));
  // Each lane shown has its hand-off's mark.
  for (const lane of await timeline(page).locator(".lane").all())
    await expect(lane.locator("[data-kind=handoff]").first()).toBeAttached();
});

test("a permalink: copied from a log line, reopens the same trace there; wrong links say so", async ({
  page,
  context,
}, info) => {
  // A run, an export and an opening of its trace: minutes on the loaded machine; the limit ends a hang.
  test.setTimeout(600_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await openScenario(page, "rate-limited-then-down");
  await runToEnd(page);
  // Select an attempt's end by its time, and copy its link.
  const row = page.locator("[data-testid=log-row][data-kind='attempt.ended']").first();
  const seq = Number(await row.getAttribute("data-seq"));
  await row.getByRole("button", { name: /^\+/ }).click();
  const bar = page.getByRole("region", { name: "Link to this place" });
  await expect(bar).toContainText(`Selected: event #${seq}, attempt.ended at +`);
  await bar.getByRole("button", { name: `Copy link to event #${seq}` }).click();
  await expect(bar).toContainText(`Link copied: #seq=${seq}`);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(new RegExp(`#seq=${seq}$`));
  expect(new URL(page.url()).hash).toBe(`#seq=${seq}`);
  await noSeriousViolations(page);
  // Export the trace; open the link in a fresh page, then the trace: the event is selected, its line in view.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Trace JSON" }).click(),
  ]);
  const file = info.outputPath("rate-limited.mailscope-trace.json");
  await download.saveAs(file);
  const last = (JSON.parse(readFileSync(file, "utf8")) as { events: { seq: number }[] }).events.at(-1)?.seq ?? 0;
  await page.goto("about:blank");
  await page.goto(`/#seq=${seq}`);
  await page.getByLabel("Open trace…").setInputFiles(file);
  await expect(page.getByTestId("phase")).toContainText("Finished");
  await expect(bar).toContainText(`Selected: event #${seq}, attempt.ended`);
  const selected = page.locator("[data-testid=log-row][data-selected=true]");
  await expect(selected).toHaveAttribute("data-seq", String(seq));
  await expect(selected).toBeInViewport();
  // A filter on, then a link followed to a line it hides: the log says what hides it, and shows it on request.
  await log(page).getByLabel("Search").fill("bounced");
  const other = seq + 1;
  await page.evaluate((s) => (window.location.hash = `#seq=${s}`), other);
  const hidden = page.getByTestId("log-hidden");
  await expect(hidden).toContainText(`Event #${other} is selected, but the log hides its line:`);
  await expect(hidden).toContainText("the search “bounced”");
  await noSeriousViolations(page);
  await page.screenshot({ path: `${SHOTS}/find-permalink-hidden.png` });
  await hidden.getByRole("button", { name: "Show it" }).click();
  await expect(hidden).toBeHidden();
  // Show it cleared the filter that hid the line (the search), nothing else.
  await expect(log(page).getByLabel("Search")).toHaveValue("");
  await expect(page.locator("[data-testid=log-row][data-selected=true]")).toHaveAttribute("data-seq", String(other));
  // A link to an event this trace does not have, and one that names no event: clear words, no crash.
  await page.evaluate((s) => (window.location.hash = `#seq=${s}`), last + 1000);
  await expect(page.getByRole("alert")).toHaveText(
    `The link points at event #${last + 1000}, but this trace has events #0–#${last} only: is it a link to another trace? Dismiss`,
  );
  await page.evaluate(() => (window.location.hash = "#seq=abc"));
  await expect(page.getByRole("alert")).toContainText("This link's #seq=abc names no event");
  await page.getByRole("alert").getByRole("button", { name: "Dismiss" }).click();
  await expect(page.getByRole("alert")).toBeHidden();
  expect(new URL(page.url()).hash).toBe("");
});

test("a link to an event a run has not reached yet waits for it", async ({ page }) => {
  await page.goto("/#seq=40");
  await page
    .getByRole("navigation", { name: "Scenarios" })
    .getByRole("button", { name: "rate-limited-then-down" })
    .click();
  await expect(page.getByTestId("phase")).toContainText("Ready");
  await expect(page.getByRole("alert")).toContainText("The link points at event #40; this run has not got there yet");
  await runToEnd(page);
  await expect(page.getByRole("alert")).toBeHidden();
  await expect(page.getByRole("region", { name: "Link to this place" })).toContainText("Selected: event #40");
});

test("a filter on, then a check's evidence or a Why clause's log followed: the log says what hides the lines, and shows them", async ({
  page,
}) => {
  await openScenario(page, "rate-limited-then-down");
  await runToEnd(page);
  // The rule filter at ERR-8: one line of the log (attempt 1's 429); the give-up's evidence (STATE-7) is not it.
  await log(page).getByLabel("Filter by rule").selectOption("ERR-8");
  await expect(page.getByTestId("log-count")).toHaveText(/^1 of \d+ lines$/);
  // A short window scrolled to its top (the log below the fold), and the check's evidence followed by the keyboard.
  const giveUp = await giveUpCheckInShortWindow(page);
  await giveUp.getByRole("button", { name: "evidence (1)" }).focus();
  await page.keyboard.press("Enter");
  // The log says which filter hides the marked line, and the focus is on its Show it, in the window.
  const hidden = page.getByTestId("log-marked-hidden");
  await expect(hidden).toHaveText(
    "The log's filters hide the line marked as evidence: the rule filter (ERR-8). Show it",
  );
  const show = hidden.getByRole("button", { name: "Show it" });
  await expect(show).toBeFocused();
  await expect(show).toHaveAccessibleDescription(
    "The log's filters hide the line marked as evidence: the rule filter (ERR-8).",
  );
  await expect(show).toBeInViewport();
  await noSeriousViolations(page);
  await page.screenshot({ path: `${SHOTS}/find-evidence-hidden.png` });
  // Show it (Enter): the rule filter goes, the marked line is in the window, the focus on the log that shows it.
  await page.keyboard.press("Enter");
  await expect(hidden).toBeHidden();
  await expect(log(page).getByLabel("Filter by rule")).toHaveValue("");
  const marked = page.locator("[data-testid=log-row][data-evidence=true]");
  await expect(marked).toHaveCount(1);
  await expect(marked).toContainText("+5d 0:00:00");
  await expect(marked).toBeInViewport();
  await expect(page.getByRole("log", { name: "Event log" })).toBeFocused();
  await noSeriousViolations(page);
  await page.screenshot({ path: `${SHOTS}/find-evidence-shown.png` });

  // A Why clause's log: the delivery machine's steps among its events, hidden while the wire and state machine are
  // off (as the log opens); the rule filter again hides one more.
  await page.setViewportSize({ width: 1440, height: 1000 });
  await log(page).getByLabel("Filter by rule").selectOption("ERR-8");
  await outcomes(page)
    .getByRole("button", { name: /^Why\? bob@b\.example of m1: bounced$/ })
    .click();
  await page
    .getByTestId("why-panel")
    .getByRole("listitem")
    .first()
    .getByRole("button", { name: /^Log: \d+ events$/ })
    .click();
  await expect(hidden).toHaveText(
    "The log's filters hide 4 of the 5 lines marked as evidence: 3 by “Wire and state machine” (off), 3 by the rule filter (ERR-8). Show them",
  );
  await expect(hidden.getByRole("button", { name: "Show them" })).toBeFocused();
  await noSeriousViolations(page, "section[aria-labelledby=log-heading]");
  await log(page).screenshot({ path: `${SHOTS}/find-evidence-hidden-why.png` });
  await hidden.getByRole("button", { name: "Show them" }).click();
  await expect(hidden).toBeHidden();
  await expect(log(page).getByLabel("Wire and state machine")).toBeChecked();
  await expect(log(page).getByLabel("Filter by rule")).toHaveValue("");
  await expect(marked).toHaveCount(5);
  await expect(marked.first()).toBeInViewport();
  await noSeriousViolations(page);
});

for (const scheme of ["light", "dark"] as const)
  test(`finding things reads well in the ${scheme} theme`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await openScenario(page, "rate-limited-then-down");
    await runToEnd(page);
    await outcomes(page)
      .getByRole("columnheader", { name: /Attempts/ })
      .getByRole("button")
      .click();
    await outcomes(page).getByLabel("Filter by outcome").selectOption("bounced");
    await timeline(page).getByLabel("Deliveries that went").selectOption({ label: "bounced" });
    await log(page).getByLabel("Search").fill("attempt");
    await logRows(page).nth(2).getByRole("button", { name: /^\+/ }).click();
    await log(page).getByText("Events: every kind").click();
    await log(page)
      .getByRole("group", { name: /Event kinds shown/ })
      .getByLabel("attempt.ended")
      .check();
    await noSeriousViolations(page);
    await page.addStyleTag({ content: ".titlebar, .controls { position: static !important; }" });
    await page
      .getByRole("region", { name: "Link to this place" })
      .screenshot({ path: `${SHOTS}/find-${scheme}-link.png` });
    await outcomes(page).screenshot({ path: `${SHOTS}/find-${scheme}-outcomes.png` });
    await timeline(page).screenshot({ path: `${SHOTS}/find-${scheme}-lanes.png` });
    await log(page).screenshot({ path: `${SHOTS}/find-${scheme}-log.png` });
  });
