/**
 * Permalinks: what `#seq=N` asks for, where that event is in a run, what the app says
 * when it cannot follow it, and what hides its log line — on a real trace, with the user's wrong moves
 * (a typo in the link, a link to another trace, a filter on, then the link followed).
 */
import { describe, expect, it } from "vitest";
import { filterLog, hiddenBy, logRows } from "./log.ts";
import { eventOfSeq, linkPlace, linkProblem, parsePermalink, permalinkHash } from "./permalink.ts";
import { scenarioTrace } from "./testing.ts";

describe("permalinks to an event", async () => {
  const trace = await scenarioTrace("rate-limited-then-down");
  const events = trace.events;
  const rows = logRows(events, trace.startedAtMs);

  it("#seq=N round-trips; other hashes ask for nothing; a bad seq is a clear error, not a crash", () => {
    expect(permalinkHash(1572)).toBe("#seq=1572");
    expect(parsePermalink(permalinkHash(1572))).toEqual({ kind: "seq", seq: 1572 });
    expect(parsePermalink("")).toBeUndefined();
    expect(parsePermalink("#view=log")).toBeUndefined();
    for (const bad of ["#seq=", "#seq=abc", "#seq=-3", "#seq=1.5", "#seq=99999999999999999999"]) {
      const asked = parsePermalink(bad);
      expect(asked?.kind).toBe("bad");
      expect(linkProblem(asked, undefined)).toMatch(/names no event: a seq is a whole number/);
    }
  });

  it("an event of the trace is found by its seq; one past its end is missing in a whole trace, awaited in a live run", () => {
    const attempt = events.find((e) => e.name === "attempt.ended");
    expect(attempt).toBeDefined();
    expect(eventOfSeq(events, attempt!.seq)).toBe(attempt);
    // Seqs need not be positions (a trace cut at its start): found by search.
    expect(eventOfSeq(events.slice(10), attempt!.seq)).toBe(attempt);
    expect(linkPlace(events, attempt!.seq, true)).toEqual({ kind: "found", event: attempt });
    const past = events.length + 100;
    const last = events.at(-1)!.seq;
    expect(linkPlace(events, past, true)).toEqual({ kind: "missing", first: 0, last });
    expect(linkProblem({ kind: "seq", seq: past }, linkPlace(events, past, true))).toBe(
      `The link points at event #${past}, but this trace has events #0–#${last} only: is it a link to another trace?`,
    );
    const soFar = events.slice(0, 20);
    expect(linkPlace(soFar, past, false)).toEqual({ kind: "waiting", last: 19 });
    expect(linkProblem({ kind: "seq", seq: past }, linkPlace(soFar, past, false))).toMatch(
      /has not got there yet \(its last event so far is #19\)\. Play on/,
    );
    expect(linkProblem({ kind: "seq", seq: 3 }, linkPlace([], 3, true))).toMatch(/this run has no events/);
  });

  it("a filter on, then the link followed: hiddenBy names each filter that hides the row, as filterLog hides it", () => {
    const bounce = rows.find((r) => r.kind === "delivery.bounced");
    const wire = rows.find((r) => r.detail);
    expect(bounce).toBeDefined();
    expect(wire).toBeDefined();
    expect(hiddenBy(bounce!, {})).toEqual([]);
    expect(hiddenBy(wire!, {})).toEqual(["“Wire and state machine” is off"]);
    const filter = { text: "retry-after", kinds: new Set(["attempt.ended"]), evidence: true };
    // The bounce cites STATE-7: evidence, so "Only evidence rows" does not hide it.
    expect(hiddenBy(bounce!, filter)).toEqual([
      "the event kinds chosen (delivery.bounced is not one)",
      "the search “retry-after”",
    ]);
    const plain = rows.find((r) => !r.detail && r.rules.length === 0 && r.kind === "timer.fired");
    expect(plain).toBeDefined();
    expect(hiddenBy(plain!, { evidence: true })).toEqual(["“Only evidence rows”"]);
    expect(hiddenBy(plain!, { evidence: true, also: new Set([plain!.seq]) })).toEqual([]);
    // The same verdict as the filter itself, row by row, for several filters.
    const filters = [
      {},
      { full: true },
      { text: "attempt 3" },
      { kinds: new Set(["timer.set", "attempt.ended"]), full: true },
      { rule: "RETRY-2", domain: "a.example" },
      { delivery: "m1@a.example→b.example", text: "no answer" },
      { evidence: true, also: new Set([rows[3]!.seq]) },
    ];
    for (const f of filters) {
      const shown = new Set(filterLog(rows, f));
      for (const r of rows) expect(hiddenBy(r, f).length === 0).toBe(shown.has(r));
    }
  });
});
