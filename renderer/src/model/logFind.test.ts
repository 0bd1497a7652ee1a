/**
 * The log's finding tools (issue 24, item 5): free-text search over the indexed words, several event kinds
 * at once, and only the evidence rows — on real traces.
 */
import { describe, expect, it } from "vitest";
import { ruleEvidence } from "../../../app/trace/ruleEvidence.ts";
import { evidenceSeqs, filterLog, indexLogWords, logRows } from "./log.ts";
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

  it("the index reads a slice at a time and gives where the next starts; searching after it finds the same", () => {
    const fresh = logRows(trace.events, trace.startedAtMs);
    let from = 0;
    let slices = 0;
    while (from < fresh.length) {
      from = indexLogWords(fresh, from, 50);
      slices++;
    }
    expect(slices).toBe(Math.ceil(fresh.length / 50));
    expect(filterLog(fresh, { full: true, text: "bounced" }).map((r) => r.seq)).toEqual(
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

  it("only evidence rows: the events citing a rule or gap (as the Rules view counts them), and those given", () => {
    const cited = new Set([...ruleEvidence(trace.events).values()].flat());
    expect(cited.size).toBeGreaterThan(0);
    const seqs = evidenceSeqs(trace.events);
    for (const seq of cited) expect(seqs.has(seq)).toBe(true);
    const shown = filterLog(rows, { full: true, only: seqs });
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((r) => seqs.has(r.seq))).toBe(true);
    // A Why clause's evidence joins them, cited or not.
    const plain = rows.find((r) => !seqs.has(r.seq));
    expect(plain).toBeDefined();
    expect(evidenceSeqs(trace.events, [plain!.seq]).has(plain!.seq)).toBe(true);
    // The checks' verdicts cite rules they check whether or not the run exercised them: no evidence.
    const verdicts = trace.events.filter((e) => e.name === "invariant.checked").map((e) => e.seq);
    for (const seq of verdicts) expect(seqs.has(seq)).toBe(false);
  });
});
