import { expect, test, type Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { noSeriousViolations, openScenario, runToEnd, SHOTS } from "./support.ts";

/**
 * "Why?" for every recipient outcome (note 0035): the Why panel says what `mailscope run --explain` says, word for
 * word, and its links lead to the evidence — the attempt on the timeline, the events in the log, the step of the
 * delivery machine.
 */

test.use({ viewport: { width: 1600, height: 1100 } });

/** What `mailscope run --json` says of each recipient: its explanation's headline and clauses. */
function cliWhys(scenario: string): Map<string, { headline: string; clauses: string[] }> {
  const cli = spawnSync(process.execPath, ["bin/mailscope.mjs", "run", `scenarios/${scenario}.yaml`, "--json"], {
    encoding: "utf8",
  });
  const summary = JSON.parse(cli.stdout) as {
    outcomes: { messageId: string; recipient: string; why: { headline: string; clauses: { text: string }[] } }[];
  };
  return new Map(
    summary.outcomes.map((o) => [
      `${o.messageId} ${o.recipient}`,
      { headline: o.why.headline, clauses: o.why.clauses.map((c) => c.text) },
    ]),
  );
}

const outcomes = (page: Page) => page.getByRole("region", { name: "Outcomes" });
const panel = (page: Page) => page.getByTestId("why-panel");
const clause = (page: Page, n: number) => panel(page).getByRole("listitem").nth(n);

test.describe("Why? beside each outcome", () => {
  test.setTimeout(300_000);

  test("rate-limited-then-down: the Why panel says what mailscope run --explain says, and leads to the evidence", async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await openScenario(page, "rate-limited-then-down");
    await runToEnd(page);
    const cli = cliWhys("rate-limited-then-down").get("m1@a.example bob@b.example");
    expect(cli?.clauses.length).toBe(5);

    const why = outcomes(page).getByRole("button", { name: /^Why\? bob@b\.example of m1: bounced$/ });
    await why.click();
    await expect(why).toHaveAttribute("aria-pressed", "true");
    await expect(panel(page).getByRole("heading", { name: "Why? bob@b.example of m1" })).toBeVisible();
    await expect(page.getByTestId("why-headline")).toHaveText("bounced at +5d 0:00:00");
    await expect(page.getByTestId("why-headline")).toHaveText(cli?.headline ?? "?");
    // The same words as the CLI, clause for clause.
    await expect(panel(page).locator(".why-text")).toHaveText(cli?.clauses ?? []);
    await expect(clause(page, 0)).toContainText(
      "attempt 1 at +0:00:00 got 429 rate_limited, which is not fallback-eligible (ERR-23), so SMTP was ruled out for this message",
    );
    await expect(clause(page, 3)).toContainText(
      "at +5d 0:00:00 the sender gave up, 5 days after the first attempt, after 127 attempts, and bounced it (STATE-7)",
    );
    await noSeriousViolations(page, "[data-testid=why-panel]");
    await panel(page).scrollIntoViewIfNeeded();
    await panel(page).screenshot({ path: `${SHOTS}/why-rate-limited-then-down.png` });

    // Timeline: attempts 7–127 select attempt 7's mark, its delivery, and the inspector shows its exchanges.
    await clause(page, 2).getByRole("button", { name: "Timeline: attempt 7" }).click();
    await expect(page.locator("[data-kind=attempt][data-attempt='7'][aria-pressed=true]")).toHaveCount(1);
    // Log: the clause's events are marked and brought into view.
    await clause(page, 0)
      .getByRole("button", { name: /^Log: \d+ events$/ })
      .click();
    const log = page.getByRole("log", { name: "Event log" });
    await expect(log.locator("[data-evidence=true]").first()).toBeVisible();
    await expect(log.locator("[data-evidence=true]").first()).toContainText("attempt 1: 429 rate_limited");
    // Machine: the delivery machine right after attempt 1 was judged, pinned there, row 4 of the table.
    await clause(page, 0)
      .getByRole("button", { name: /^Machine/ })
      .click();
    await expect(page.getByTestId("statechart-status")).toContainText("pinned");
    await expect(page.getByTestId("statechart-status")).toContainText("retryNotFallbackEligible (row 4)");
    await expect(page.getByTestId("active-state")).toHaveText("retryScheduled");
    await expect(page.locator("[data-kind=attempt][data-attempt='1'][aria-pressed=true]")).toHaveCount(1);
    // A rule opens the rule.
    await clause(page, 0).getByRole("button", { name: "ERR-23", exact: true }).click();
    await expect(page.getByLabel("Search rules")).toHaveValue("ERR-23");
    expect(errors).toEqual([]);
  });

  test("teach-mixed-recipient-results: each recipient's own story and counts; axe with a Why panel and a delivery selected", async ({
    page,
  }) => {
    await openScenario(page, "teach-mixed-recipient-results");
    await runToEnd(page);
    const cli = cliWhys("teach-mixed-recipient-results");
    // bob: accepted at once, 1 attempt and 1 POST (not his delivery's 125).
    const bob = outcomes(page).getByRole("row").filter({ hasText: "bob@b.example" });
    await expect(bob.getByRole("cell").nth(4)).toHaveText("1");
    await expect(bob.getByRole("cell").nth(5)).toHaveText("1");
    const dave = outcomes(page).getByRole("row").filter({ hasText: "dave@b.example" }).filter({ hasText: "bounced" });
    await expect(dave.getByRole("cell").nth(4)).toHaveText("125");
    for (const recipient of ["bob@b.example", "nobody@b.example", "carol@b.example", "dave@b.example"]) {
      const row = outcomes(page)
        .getByRole("row")
        .filter({ hasText: recipient })
        .filter({ has: page.getByRole("button", { name: "m1", exact: true }) });
      await row.getByRole("button", { name: /^Why\?/ }).click();
      const words = cli.get(`m1@a.example ${recipient}`);
      await expect(page.getByTestId("why-headline")).toHaveText(words?.headline ?? "?");
      await expect(panel(page).locator(".why-text")).toHaveText(words?.clauses ?? []);
    }
    await expect(clause(page, 0)).toContainText("got deferred (mailbox_full), which never falls back to SMTP (ERR-23)");
    // The same panel with the delivery selected (its log chip shown), as a user reaches it.
    await outcomes(page)
      .getByRole("row")
      .filter({ hasText: "dave@b.example" })
      .getByRole("button", { name: "m1", exact: true })
      .click();
    await noSeriousViolations(page, "[data-testid=why-panel]");
    await noSeriousViolations(page, "[aria-labelledby=outcomes-heading]");
    // Closed by its button, or by pressing its Why? again.
    await panel(page).getByRole("button", { name: "Close" }).click();
    await expect(panel(page)).toHaveCount(0);
  });
});
