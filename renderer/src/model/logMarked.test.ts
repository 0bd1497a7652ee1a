/**
 * The lines a link marks as evidence (a check's, a Why clause's) while the log's filters are on: how many the
 * filters hide, by which filter, in what words, and what "show them" leaves of the filters — on a real trace,
 * with the user's move that found the gap (the rule filter set to ERR-8, then the give-up check's evidence).
 */
import { describe, expect, it } from "vitest";
import { checkRows } from "./checks.ts";
import { filterLog, logRows, markedHidden, withoutFilters, type LogFilter } from "./log.ts";
import { scenarioTrace } from "./testing.ts";
import { whyLinks, whyOf } from "./why.ts";

describe("lines marked as evidence, hidden by the log's filters", async () => {
  const trace = await scenarioTrace("rate-limited-then-down");
  const rows = logRows(trace.events, trace.startedAtMs);
  const checks = checkRows(trace.invariants, trace.expectations);
  const evidenceOf = (id: string) => new Set(checks.find((c) => c.id === id)?.evidence);
  const why = whyOf(trace.events, trace.startedAtMs, { messageId: "m1@a.example", recipient: "bob@b.example" });
  // Attempt 1 (the 429, ERR-8): its end and verdict, the retry timer set (RETRY-7), the machine's start and step.
  const firstClause = new Set(whyLinks(why, why.clauses[0]!).log);

  it("the rule filter set to ERR-8 hides the give-up's evidence (STATE-7): said, and taken off by show", () => {
    const giveUp = evidenceOf("give-up-at-5-days");
    expect(giveUp.size).toBe(1);
    const filter: LogFilter = { rule: "ERR-8", domain: "a.example" };
    const m = markedHidden(rows, giveUp, filter);
    expect(m).toEqual({
      lines: 1,
      hidden: 1,
      by: [{ key: "rule", phrase: "the rule filter (ERR-8)", count: 1 }],
      text: "The log's filters hide the line marked as evidence: the rule filter (ERR-8).",
    });
    // The log the user saw: one line (the 429), not the bounce.
    expect(filterLog(rows, { rule: "ERR-8" }).map((r) => r.kind)).toEqual(["attempt.ended"]);
    // Show it: the rule filter goes, the domain filter (which does not hide it) stays, and the line is shown.
    const after = withoutFilters(
      filter,
      m.by.map((b) => b.key),
    );
    expect(after).toEqual({ domain: "a.example" });
    expect(filterLog(rows, after).some((r) => giveUp.has(r.seq))).toBe(true);
    expect(markedHidden(rows, giveUp, after).text).toBeUndefined();
  });

  it("a Why clause's events in the log as it opens: the machine's steps are hidden while the wire and state machine are off", () => {
    expect(firstClause.size).toBe(5);
    expect(markedHidden(rows, firstClause, {}).text).toBe(
      "The log's filters hide 3 of the 5 lines marked as evidence: “Wire and state machine” (off).",
    );
    // Two filters, each hiding some: how many each hides, and how many in all (a line hidden by both counts once).
    const both = markedHidden(rows, firstClause, { rule: "ERR-8" });
    expect(both.hidden).toBe(4);
    expect(both.by).toEqual([
      { key: "full", phrase: "“Wire and state machine” (off)", count: 3 },
      { key: "rule", phrase: "the rule filter (ERR-8)", count: 3 },
    ]);
    expect(both.text).toBe(
      "The log's filters hide 4 of the 5 lines marked as evidence: 3 by “Wire and state machine” (off), 3 by the rule filter (ERR-8).",
    );
    // Show them: the wire and state machine on, the rule filter off; every marked line shown.
    const after = withoutFilters(
      { rule: "ERR-8" },
      both.by.map((b) => b.key),
    );
    expect(after).toEqual({ full: true });
    expect(filterLog(rows, after).filter((r) => firstClause.has(r.seq)).length).toBe(5);
  });

  it("agrees with the log itself, line by line, and show leaves the filters that hide none as they were", () => {
    const marks = [
      evidenceOf("retry-schedule"),
      evidenceOf("terminal-outcome"),
      firstClause,
      new Set(whyLinks(why, why.clauses.at(-1)!).log),
    ];
    const filters: LogFilter[] = [
      {},
      { full: true },
      { text: "attempt 3" },
      { kinds: new Set(["timer.set", "attempt.ended"]), full: true },
      { rule: "RETRY-2", domain: "a.example" },
      { kind: "recipient.outcome", text: "bounced" },
      { delivery: "m1@a.example→b.example", text: "no answer" },
      { evidence: true },
    ];
    for (const seqs of marks)
      for (const f of filters) {
        const m = markedHidden(rows, seqs, f);
        const shown = new Set(filterLog(rows, f).map((r) => r.seq));
        const lines = rows.filter((r) => seqs.has(r.seq));
        expect(m.lines).toBe(lines.length);
        expect(m.hidden).toBe(lines.filter((r) => !shown.has(r.seq)).length);
        expect(m.text === undefined).toBe(m.hidden === 0);
        const keys = m.by.map((b) => b.key);
        const after = withoutFilters(f, keys);
        const shownAfter = new Set(filterLog(rows, after).map((r) => r.seq));
        expect(lines.every((r) => shownAfter.has(r.seq))).toBe(true);
        for (const key of ["domain", "kind", "kinds", "rule", "delivery", "text"] as const)
          if (!keys.includes(key)) expect(after[key]).toBe(f[key]);
      }
  });

  it("“Only evidence rows” counts the marked lines as evidence: it hides none of them", () => {
    const seqs = evidenceOf("retry-schedule");
    // The timers that fire cite no rule: the filter alone would hide them.
    expect(markedHidden(rows, seqs, { evidence: true }).by).toEqual([
      { key: "evidence", phrase: "“Only evidence rows”", count: seqs.size / 2 },
    ]);
    expect(markedHidden(rows, seqs, { evidence: true, also: seqs }).hidden).toBe(0);
  });

  it("events without a line in the log (none marked, or seqs past the trace) are not said to be hidden", () => {
    expect(markedHidden(rows, new Set(), { rule: "ERR-8" })).toEqual({ lines: 0, hidden: 0, by: [], text: undefined });
    const past = (rows.at(-1)?.seq ?? 0) + 10;
    expect(markedHidden(rows, new Set([past]), { rule: "ERR-8" }).lines).toBe(0);
  });
});
