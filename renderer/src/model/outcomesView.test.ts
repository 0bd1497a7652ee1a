/**
 * The outcomes table sorted and filtered, on real traces: a fleet-like
 * run's outcomes are mixed (rate-limited-then-down: a DSN; teach-mixed-recipient-results: accepted and
 * rejected recipients of one message).
 */
import { describe, expect, it } from "vitest";
import { nextSort, outcomeFacets, outcomeRows, outcomeView, recipientDomain } from "./outcomes.ts";
import { scenarioTrace } from "./testing.ts";
import { maxOf } from "../../../app/protocol/lists.ts";

describe("the outcomes table, sorted and filtered", async () => {
  const mixed = await scenarioTrace("teach-mixed-recipient-results");
  const rows = outcomeRows(mixed.events, mixed.startedAtMs);
  const down = await scenarioTrace("rate-limited-then-down");
  const downRows = outcomeRows(down.events, down.startedAtMs);

  it("with no filter and no sort, every row in submission order", () => {
    expect(outcomeView(rows, {}, undefined)).toEqual(rows);
  });

  it("filters by outcome (RCPT-level results, ERR-*): only the rows with that outcome, each of them", () => {
    const facets = outcomeFacets(rows);
    expect(facets.outcomes).toContain("accepted");
    expect(facets.outcomes).toContain("rejected");
    for (const o of facets.outcomes) {
      const shown = outcomeView(rows, { outcome: o }, undefined);
      expect(shown.length).toBe(rows.filter((r) => r.outcome === o).length);
      expect(shown.every((r) => r.outcome === o)).toBe(true);
    }
  });

  it("filters by the recipient's domain, the message's words and attempts > N (RETRY-*: the DSN's wait)", () => {
    const domains = outcomeFacets(downRows).domains;
    expect(domains.length).toBeGreaterThan(0);
    for (const d of domains)
      expect(outcomeView(downRows, { domain: d }, undefined).every((r) => recipientDomain(r.recipient) === d)).toBe(
        true,
      );
    const dsn = outcomeView(downRows, { message: "DSN" }, undefined);
    expect(dsn.length).toBe(downRows.filter((r) => r.dsn).length);
    expect(outcomeView(downRows, { message: "M1" }, undefined).every((r) => r.message === "m1")).toBe(true);
    const most = maxOf(downRows.map((r) => r.attempts));
    expect(most).toBeGreaterThan(1);
    expect(outcomeView(downRows, { attemptsOver: most }, undefined)).toEqual([]);
    const over1 = outcomeView(downRows, { attemptsOver: 1 }, undefined);
    expect(over1.length).toBe(downRows.filter((r) => r.attempts > 1).length);
    // All of them must hold.
    expect(outcomeView(downRows, { attemptsOver: 1, message: "no such message" }, undefined)).toEqual([]);
  });

  it("sorts by a column either way; ties keep submission order; a pending row has no time and comes last", () => {
    const asc = outcomeView(rows, {}, { column: "recipient", direction: "ascending" }).map((r) => r.recipient);
    expect(asc).toEqual([...asc].sort((a, b) => a.localeCompare(b, "en", { numeric: true })));
    const desc = outcomeView(rows, {}, { column: "recipient", direction: "descending" }).map((r) => r.recipient);
    expect(desc).toEqual([...asc].reverse());
    const byAttempts = outcomeView(downRows, {}, { column: "attempts", direction: "descending" });
    expect(byAttempts.map((r) => r.attempts)).toEqual(downRows.map((r) => r.attempts).sort((a, b) => b - a));
    const pending = { ...rows[0]!, outcome: "pending", outcomeText: "pending", when: "" };
    delete (pending as { atMs?: number }).atMs;
    for (const direction of ["ascending", "descending"] as const)
      expect(outcomeView([pending, ...rows], {}, { column: "when", direction }).at(-1)).toBe(pending);
  });

  it("a header click sorts ascending, then descending, then ascending again; another column starts ascending", () => {
    const a = nextSort(undefined, "when");
    expect(a).toEqual({ column: "when", direction: "ascending" });
    const b = nextSort(a, "when");
    expect(b).toEqual({ column: "when", direction: "descending" });
    expect(nextSort(b, "when")).toEqual(a);
    expect(nextSort(b, "rule")).toEqual({ column: "rule", direction: "ascending" });
  });
});
