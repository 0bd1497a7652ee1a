import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { runProbe } from "../app/probe/probe.ts";
import { reportJson } from "../app/probe/report.ts";
import { inProcessProbe } from "../app/probe/testing.ts";
import { exportJson } from "../app/trace/exportJson.ts";

/** Issue 27: a probe's trace or JSON report opens as its cases beside the sequence diagram and the inspector. */

const SHOTS = "test-results/screenshots";
const DIR = "test-results/probe";
const TRACE = `${DIR}/probe.mstrace`;
const REPORT = `${DIR}/probe-report.json`;
const NO_PLAN = `${DIR}/probe-no-plan.mstrace`;

test.use({ viewport: { width: 1440, height: 1000 } });

test.beforeAll(async () => {
  // A probe of a receiver that takes a signature created an hour ago: one MUST case fails.
  const { options, ports } = await inProcessProbe("stale-accepted");
  const run = await runProbe(options, ports);
  mkdirSync(DIR, { recursive: true });
  writeFileSync(TRACE, exportJson(run.trace, { full: true }));
  writeFileSync(REPORT, JSON.stringify(reportJson(run), null, 2));
  // The same trace edited by hand: its probe.started lost its plan.
  const edited = JSON.parse(readFileSync(TRACE, "utf8")) as { events: { data: Record<string, unknown> }[] };
  delete edited.events[0]?.data["plan"];
  writeFileSync(NO_PLAN, JSON.stringify(edited));
});

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

const cases = (page: Page) => page.getByRole("table", { name: "Cases" });
const caseRow = (page: Page, id: string) => cases(page).locator(`tr[data-case="${id}"]`);

test.describe("a probe's report in the app", () => {
  test("AUTH-5: the trace opens on the failed case, its exchange in the sequence diagram and the inspector", async ({
    page,
  }) => {
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(TRACE);
    await expect(page.getByRole("heading", { level: 2, name: "Probe of https://b.example" })).toBeVisible();
    await expect(page.getByTestId("probe-summary")).toHaveText("55 cases: 53 PASS, 1 FAIL, 1 SKIP; 1 MUST case failed");
    await expect(cases(page).locator("tbody tr")).toHaveCount(55);
    // The failed case is selected and highlighted.
    const stale = caseRow(page, "signature-stale");
    await expect(stale).toHaveAttribute("aria-selected", "true");
    await expect(stale).toHaveAttribute("data-result", "FAIL");
    await expect(stale.getByRole("cell").nth(1)).toContainText("200 bob@b.example accepted");
    const detail = page.getByTestId("probe-case");
    await expect(detail).toContainText("FAIL signature-stale · MUST");
    await expect(detail).toContainText("Expected401 invalid_signature (created 3600 s before now)");
    // Its one exchange: a request and the 200 it got, drawn and inspected.
    const sequence = page.getByRole("region", { name: "Sequence diagram" });
    await expect(sequence.getByTestId("sequence-count")).toHaveText(/^2 rows in /);
    const exchangeId = (
      await stale.getByRole("button", { name: /^Exchange x\d+ of signature-stale$/ }).innerText()
    ).trim();
    await expect(sequence.locator(`[data-exchange="${exchangeId}"][data-kind="request"]`)).toHaveAttribute(
      "aria-label",
      /POST \/v1\/messages/,
    );
    const inspector = page.getByRole("region", { name: "Exchange inspector" });
    await expect(inspector.getByTestId("exchange-title")).toContainText(`${exchangeId} at`);
    await expect(inspector.getByTestId("response-head")).toContainText("HTTP/1.1 200");
    // The receiver's checks of the recorded request, with the probe's own key: the created time is what fails.
    await expect(inspector.getByText(/created 1768\d+ is 3600 s old/)).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/probe-report.png`, fullPage: true });
    await page.screenshot({ path: `${SHOTS}/probe-report-view.png` });
    await noSeriousViolations(page);

    // A case with two exchanges: the replay. Its second exchange, chosen from the table, is the one inspected.
    const replay = caseRow(page, "replay");
    const second = replay.getByRole("button", { name: /^Exchange x\d+ of replay$/ }).nth(1);
    const secondId = (await second.innerText()).trim();
    await second.click();
    await expect(replay).toHaveAttribute("aria-selected", "true");
    await expect(sequence.getByTestId("sequence-count")).toHaveText(/^4 rows in /);
    await expect(inspector.getByTestId("exchange-title")).toContainText(`${secondId} at`);
    await expect(sequence.locator(`[data-exchange="${secondId}"].selected`)).toHaveCount(2);

    // Only the failed ones, then the rules view and back.
    await page.getByRole("radio", { name: "Failed", exact: true }).check();
    await expect(cases(page).locator("tbody tr")).toHaveCount(1);
    await page.getByRole("radio", { name: "Failed and skipped" }).check();
    await expect(cases(page).locator("tbody tr")).toHaveCount(2);
    await caseRow(page, "signature-stale").getByRole("button", { name: "AUTH-5" }).click();
    await expect(
      page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Rules" }),
    ).toHaveAttribute("aria-pressed", "true");
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Probe" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "Probe of https://b.example" })).toBeVisible();

    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("radio", { name: "All cases" }).check();
    await caseRow(page, "signature-stale").getByRole("button", { name: "signature-stale", exact: true }).click();
    await page.screenshot({ path: `${SHOTS}/probe-report-dark.png`, fullPage: true });
    await noSeriousViolations(page);
    await page.emulateMedia({ colorScheme: "light" });
  });

  test("a probe's JSON report (--json) opens the same way: it carries the trace", async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(REPORT);
    await expect(page.getByRole("heading", { level: 2, name: "Probe of https://b.example" })).toBeVisible();
    await expect(page.getByTestId("probe-summary")).toHaveText("55 cases: 53 PASS, 1 FAIL, 1 SKIP; 1 MUST case failed");
    await expect(caseRow(page, "retry-after")).toHaveAttribute("data-result", "SKIP");
    await expect(caseRow(page, "retry-after").getByRole("cell").nth(2)).toHaveText("POST-20MUST");
    await caseRow(page, "retry-after").getByRole("button", { name: "retry-after", exact: true }).click();
    await expect(page.getByTestId("probe-case")).toContainText("none: nothing was sent for it");
    await expect(page.getByRole("region", { name: "Sequence diagram" })).toHaveCount(0);
  });

  test("the plan is what probe.started said, and a trace whose probe.started gives none says so", async ({ page }) => {
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(TRACE);
    await expect(page.getByText(/^The plan said 55 cases, at most \d+ requests, 2 messages stored/)).toBeVisible();
    await page.getByLabel("Open trace…").setInputFiles(NO_PLAN);
    await expect(page.getByTestId("probe-summary")).toHaveText("55 cases: 53 PASS, 1 FAIL, 1 SKIP; 1 MUST case failed");
    await expect(page.getByText("The trace's probe.started (seq 0) gives no whole plan.")).toBeVisible();
    await expect(page.getByText(/The plan said/)).toHaveCount(0);
    await page.getByText("gives no whole plan").scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/probe-report-no-plan.png` });
    await noSeriousViolations(page);
  });
});
