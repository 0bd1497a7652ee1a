import { describe, expect, it } from "vitest";
import { explainOutcomes } from "../../../app/trace/explain.ts";
import { scenarioTrace } from "./testing.ts";
import { attemptMarkAt, buildTimeline } from "./timeline.ts";
import { actorChart } from "./statechart.ts";
import { whyLinks, whyOf } from "./why.ts";

describe("the Why panel's model", async () => {
  const t = await scenarioTrace("rate-limited-then-down");
  const why = whyOf(t.events, t.startedAtMs, { messageId: "m1@a.example", recipient: "bob@b.example" });

  it("is the core's explanation, word for word (what mailscope run --explain prints)", () => {
    const [bob] = explainOutcomes(t.events, t.startedAtMs);
    expect(why).toEqual(bob);
  });

  it("links each clause to its log rows, its attempt's mark on the timeline and its step of the delivery machine", () => {
    const actor = "m1@a.example→b.example";
    const first = whyLinks(why, why.clauses[0]!);
    expect(first.log).toEqual([...new Set(why.clauses[0]?.evidence.map((c) => c.seq))]);
    expect(first.attempt).toEqual({ actor, atMs: t.startedAtMs, attempt: 1 });
    // The attempt's mark on the timeline: attempt 1 of the lane.
    const mark = attemptMarkAt(buildTimeline(t.events, t.startedAtMs), actor, first.attempt?.atMs ?? 0);
    expect(mark).toMatchObject({ kind: "attempt", attempt: 1, lane: actor });
    // The machine's step: retryNotFallbackEligible after attempt 1, a row of the transition history.
    const row = actorChart(t.events, actor, t.startedAtMs).history.find((r) => r.seq === first.transition?.seq);
    expect(row).toMatchObject({ name: "retryNotFallbackEligible", context: { attempt: 1 } });
    // Attempts 7–127: the mark of attempt 7.
    const seventh = whyLinks(why, why.clauses[2]!);
    expect(attemptMarkAt(buildTimeline(t.events, t.startedAtMs), actor, seventh.attempt?.atMs ?? 0)).toMatchObject({
      attempt: 7,
    });
    // The DSN: log rows only (no attempt of bob's delivery, no step of its machine).
    const dsn = whyLinks(why, why.clauses.at(-1)!);
    expect(dsn.attempt).toBeUndefined();
    expect(dsn.transition).toBeUndefined();
    expect(dsn.log.length).toBe(2);
  });
});
