/**
 * The log's finding tools: free-text search over the indexed words, several event kinds
 * at once, and only the evidence rows — on real traces.
 */
import { describe, expect, it } from "vitest";
import { citesRuleOrGap, gapEvidence, ruleEvidence } from "../../../app/trace/ruleEvidence.ts";
import { draftLogWordIndex, filterLog, isEvidence, logRows, logWordIndex, stepLogWordIndex } from "./log.ts";
import { scenarioTrace } from "./testing.ts";

describe("finding rows in the log of rate-limited-then-down", async () => {
  const trace = await scenarioTrace("rate-limited-then-down");
  const rows = logRows(trace.events, trace.startedAtMs);

  it("a search holds every word typed, in any case and order, anywhere in the row (time, domain, kind, words)", () => {
    const one = filterLog(rows, { full: true, text: "retry-after" });
    expect(one.length).toBeGreaterThan(0);
    expect(one.every((r) => `${r.at} ${r.domain} ${r.kind} ${r.text}`.toLowerCase().includes("retry-after"))).toBe(
      true,
    );
    // Two words, in any order and case: the sender's domain and a kind (ERR-21: the attempts with no answer).
    const two = filterLog(rows, { full: true, text: "  attempt.ended   A.EXAMPLE no answer" });
    expect(two.length).toBe(rows.filter((r) => r.kind === "attempt.ended" && r.text.includes("no answer")).length);
    expect(two.length).toBeGreaterThan(0);
    expect(filterLog(rows, { full: true, text: "no-such-word-anywhere" })).toEqual([]);
    // By its offset too: the give-up at five days (STATE-7).
    expect(filterLog(rows, { text: "+5d" }).length).toBeGreaterThan(0);
  });

  it("the index is built a slice at a time; searching it finds what asking each row finds", () => {
    const fresh = logRows(trace.events, trace.startedAtMs);
    const draft = draftLogWordIndex(fresh);
    let slices = 1;
    let index = stepLogWordIndex(draft, 50);
    while (index === undefined) {
      expect(draft.next).toBe(50 * slices);
      index = stepLogWordIndex(draft, 50);
      slices++;
    }
    expect(slices).toBe(Math.ceil(fresh.length / 50));
    expect(index).toEqual(logWordIndex(fresh));
    expect(filterLog(fresh, { full: true, text: "bounced" }, index).map((r) => r.seq)).toEqual(
      filterLog(rows, { full: true, text: "bounced" }).map((r) => r.seq),
    );
  });

  it("several kinds at once: the rows of any of them, each of them; none chosen is every kind", () => {
    const kinds = new Set(["attempt.ended", "delivery.bounced"]);
    const shown = filterLog(rows, { kinds });
    expect(shown.every((r) => kinds.has(r.kind))).toBe(true);
    expect(shown.length).toBe(rows.filter((r) => !r.detail && kinds.has(r.kind)).length);
    expect(new Set(shown.map((r) => r.kind))).toEqual(kinds);
    expect(filterLog(rows, { kinds: new Set() })).toEqual(filterLog(rows, {}));
  });

  it("only evidence rows: the events citing a rule or gap, exactly as the Rules view counts them, and those given", async () => {
    // On several runs: the rule, rules, violates, a problem's detail ([ENV-8]) and gap citations.
    for (const name of [
      "rate-limited-then-down",
      "error-invalid-request",
      "gap-G16-fallback-window-2h",
      "teach-mixed-recipient-results",
    ]) {
      const t = name === "rate-limited-then-down" ? trace : await scenarioTrace(name);
      const cited = new Set([...ruleEvidence(t.events).values(), ...gapEvidence(t.events).values()].flat());
      expect(cited.size).toBeGreaterThan(0);
      expect(new Set(t.events.filter(citesRuleOrGap).map((e) => e.seq))).toEqual(cited);
      const r = logRows(t.events, t.startedAtMs);
      const shown = filterLog(r, { full: true, evidence: true });
      expect(shown.map((x) => x.seq)).toEqual(r.filter((x) => cited.has(x.seq)).map((x) => x.seq));
    }
    expect(rows.filter(isEvidence).length).toBeGreaterThan(0);
    // A Why clause's evidence joins them, cited or not.
    const plain = rows.find((r) => !isEvidence(r) && !r.detail);
    expect(plain).toBeDefined();
    expect(filterLog(rows, { evidence: true }).some((r) => r.seq === plain!.seq)).toBe(false);
    expect(filterLog(rows, { evidence: true, also: new Set([plain!.seq]) }).some((r) => r.seq === plain!.seq)).toBe(
      true,
    );
    // The checks' verdicts cite rules they check whether or not the run exercised them: no evidence.
    const verdicts = trace.events.filter((e) => e.name === "invariant.checked");
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.some(citesRuleOrGap)).toBe(false);
  });
});

describe("the log's word index", async () => {
  const trace = await scenarioTrace("rate-limited-then-down");
  const rows = logRows(trace.events, trace.startedAtMs);
  const index = logWordIndex(rows);

  it("finds what asking each row finds, for rare and common words, several at once, and none", () => {
    for (const text of [
      "bounced",
      "attempt",
      "a.example attempt.ended",
      "+5d",
      "2m3s",
      "no-such-word",
      "ERR-21 no answer",
    ])
      for (const full of [false, true])
        expect(filterLog(rows, { full, text }, index).map((r) => r.seq)).toEqual(
          filterLog(rows, { full, text }).map((r) => r.seq),
        );
  });

  it("is read only for the rows it was built of (a longer log asks each row)", () => {
    const longer = [...rows];
    expect(filterLog(longer, { text: "bounced" }, index).map((r) => r.seq)).toEqual(
      filterLog(rows, { text: "bounced" }).map((r) => r.seq),
    );
  });
});
