import { describe, expect, it } from "vitest";
import { ruleCoverage, ruleEvidence, rulesCited } from "../../../app/trace/ruleEvidence.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { scenarioTrace } from "./testing.ts";
import { firedRules, readingEvidence } from "./ruleEvidence.ts";
import {
  explain,
  actorChart,
  activeStates,
  chartAt,
  chartAtRow,
  deliveryActors,
  deliveryGraph,
  fireCounts,
  neverTaken,
} from "./statechart.ts";

const trace = (name: string): Promise<Trace> => scenarioTrace(name);

const ACTOR = "m1@a.example→b.example";
const H = 3_600_000;

describe("the statechart of rate-limited-then-down", async () => {
  const t = await trace("rate-limited-then-down");
  const chart = actorChart(t.events, ACTOR, t.startedAtMs);

  it("finds the actors and matches every recorded transition to one of the graph", () => {
    expect(deliveryActors(t.events)[0]).toBe(ACTOR);
    expect(chart.initial).toBe("attemptingOverService.discovering");
    expect(chart.history.length).toBeGreaterThan(100);
    expect(chart.history.every((r) => r.transitionId !== undefined)).toBe(true);
  });

  it("at +0:00:30 waits in retryScheduled after retryNotFallbackEligible (row 4) for the 429", () => {
    const at = chartAt(chart, t.startedAtMs + 30_000);
    expect(at.state).toBe("retryScheduled");
    expect(at.last).toMatchObject({ name: "retryNotFallbackEligible", row: 4, from: "attemptingOverService.judging" });
    expect(at.last?.rules).toContain("STATE-5");
    expect(at.last?.context).toMatchObject({
      attempt: 1,
      fallbackEligible: false,
      problem: "rate_limited",
      status: 429,
      pending: ["bob@b.example"],
    });
    expect(at.last?.why).toBe("attempt 1 not fallback-eligible (429 rate_limited), pending: bob@b.example");
    expect(activeStates(at.state)).toEqual(["retryScheduled"]);
    // Before the actor started: no state.
    expect(chartAt(chart, t.startedAtMs - 1).state).toBeUndefined();
  });

  it("names the attempt and the answer that decided: attempt 1's 429 ruled SMTP out, not attempt 2's connection refused (ERR-23)", () => {
    const judged = chart.history.filter((r) => r.from === "attemptingOverService.judging");
    expect(judged[0]).toMatchObject({
      name: "retryNotFallbackEligible",
      row: 4,
      rules: expect.arrayContaining(["STATE-5"]),
    });
    // Attempts 2 … 127 were fallback-eligible (connection refused); the 429 of attempt 1 had ruled SMTP out.
    expect(judged[1]).toMatchObject({ name: "retrySmtpRuledOut", context: { attempt: 2 } });
    expect(judged[1]?.row).toBeUndefined();
    expect(judged[1]?.rules).not.toContain("STATE-5");
    expect(judged[1]?.why).toBe(
      "attempt 2: no answer (connection refused), fallback-eligible, but attempt 1's 429 rate_limited ruled SMTP out, pending: bob@b.example",
    );
    expect(judged[6]?.why).toBe(
      "attempt 7: the capabilities unusable (no answer: connection refused), fallback-eligible, but attempt 1's 429 rate_limited ruled SMTP out, pending: bob@b.example",
    );
    expect(judged.filter((r) => r.rules.includes("STATE-5"))).toHaveLength(1);
    expect(chart.history.some((r) => r.why.includes("temporary_failure"))).toBe(false);
  });

  it("one attempt numbering: every transition of an attempt names that attempt, as attempt.started does", () => {
    // Attempt 2: the retry that starts it, the endpoint found, the answer read, the judging.
    const second = chart.history.filter((r) => r.context.attempt === 2).map((r) => [r.name, r.why]);
    expect(second).toEqual([
      ["retrySameDelivery", "attempt 2 at +0:02:00, same delivery and key, pending: bob@b.example"],
      ["postToEndpoint", "attempt 2: endpoint found"],
      ["answersRead", "attempt 2: answers read — no answer (connection refused)"],
      [
        "retrySmtpRuledOut",
        "attempt 2: no answer (connection refused), fallback-eligible, but attempt 1's 429 rate_limited ruled SMTP out, pending: bob@b.example",
      ],
    ]);
    const posts = t.events
      .filter((e) => e.name === "attempt.started" && String(e.data?.["deliveryId"]).startsWith(ACTOR))
      .map((e) => [e.timeMs, e.data?.["attempt"]]);
    expect(posts).toHaveLength(6);
    for (const [timeMs, attempt] of posts) {
      const row = chart.history.find((r) => r.name === "postToEndpoint" && r.timeMs === timeMs);
      expect(row?.context.attempt).toBe(attempt);
    }
  });

  it("gives up at +120:00:00 with giveUpWhileRetrying (row 6) into bounced; counts and never-taken", () => {
    const last = chart.history.at(-1);
    expect(last).toMatchObject({ at: "+120:00:00", name: "giveUpWhileRetrying", row: 6, to: "bounced" });
    expect(last?.rules).toContain("STATE-7");
    expect(last?.why).toBe(
      "+120:00:00 ≥ give-up +120:00:00 (5 days after the first attempt), after attempt 127, pending: bob@b.example",
    );
    const counts = fireCounts(chart);
    const id = (name: string) => deliveryGraph().transitions.find((tr) => tr.meta?.name === name)?.id ?? "";
    expect(counts.get(id("giveUpWhileRetrying"))).toBe(1);
    expect(counts.get(id("retrySameDelivery"))).toBe(126);
    const never = neverTaken(chart);
    expect(never).toContain(id("fallBackToSmtpAfterWindow"));
    expect(never).not.toContain(id("retryNotFallbackEligible"));
    // Halfway, the counts are those so far.
    const half = chartAt(chart, t.startedAtMs + 60 * H);
    expect(half.counts.get(id("giveUpWhileRetrying"))).toBeUndefined();
    expect(chartAtRow(chart, -1)).toMatchObject({ state: "attemptingOverService.discovering" });
  });
});

describe("the statechart of receiver-down-past-fallback-window", async () => {
  const t = await trace("receiver-down-past-fallback-window");
  const chart = actorChart(t.events, ACTOR, t.startedAtMs);

  it("falls back to SMTP with the attempt at +2:03:00, past the window's end at +2:00:00", () => {
    const fallback = chart.history.find((r) => r.name === "fallBackToSmtpAfterWindow");
    expect(fallback).toMatchObject({ row: 2, at: "+2:03:00", to: "handingToSmtp" });
    expect(fallback?.context).toMatchObject({ attempt: 8, allAttemptsFallbackEligible: true });
    expect(fallback?.why).toBe(
      "attempt 8 at +2:03:00 ≥ window end +2:00:00, every attempt eligible — the capabilities unusable (no answer: connection refused)",
    );
    const within = chart.history.filter((r) => r.name === "retryWithinFallbackWindow");
    expect(within).toHaveLength(7);
    expect(within[1]?.why).toBe(
      "attempt 2 at +0:01:00 < window end +2:00:00, every attempt eligible — the capabilities unusable (no answer: connection refused)",
    );
    expect(chartAt(chart, t.startedAtMs + 3 * H).state).toBe("handedToSmtp");
  });
});

describe("why a guard chose", () => {
  it("counts the fallback window from the first attempt when that came after the run's start", () => {
    const context = { attempt: 8, allAttemptsFallbackEligible: true, pending: [] };
    const later = { ...context, firstAttemptAtMs: H, attemptAtMs: H + 7_380_000, fallbackWindowEndMs: 3 * H };
    expect(explain("fallBackToSmtpAfterWindow", later, 0, later.attemptAtMs)).toBe(
      "attempt 8 at +3:03:00 (2:03:00 after the first attempt) ≥ window end +3:00:00, every attempt eligible",
    );
    const atStart = { ...context, firstAttemptAtMs: 0, attemptAtMs: 7_380_000, fallbackWindowEndMs: 2 * H };
    expect(explain("fallBackToSmtpAfterWindow", atStart, 0, 7_380_000)).toBe(
      "attempt 8 at +2:03:00 ≥ window end +2:00:00, every attempt eligible",
    );
  });
});

describe("the rules as evidence", async () => {
  const t = await trace("rate-limited-then-down");

  it("reads rule, rules, violates and a detail's bracketed violations, not gaps", () => {
    expect(rulesCited({ rule: "ERR-1", detail: "$.to: has 101 recipients; at most 100 [ENV-8]; x [AUTH-5]" })).toEqual([
      "ERR-1",
      "ENV-8",
      "AUTH-5",
    ]);
    expect(rulesCited({ rule: "STATE-7", rules: ["STATE-7", "RETRY-6"], gap: "G29", violates: ["POST-27"] })).toEqual([
      "STATE-7",
      "RETRY-6",
      "POST-27",
    ]);
  });

  it("STATE-7 is cited by the bounce; coverage counts the rules no run cites", async () => {
    const evidence = ruleEvidence(t.events);
    const bounce = t.events.find((e) => e.name === "delivery.bounced");
    expect(evidence.get("STATE-7")).toContain(bounce?.seq);
    const happy = await trace("happy-path");
    const report = ruleCoverage([
      { name: "rate-limited-then-down", events: t.events },
      { name: "happy-path", events: happy.events },
    ]);
    expect(report.covered).toBeGreaterThan(10);
    expect(report.covered + report.uncovered.length).toBe(report.total);
    expect(report.rules.find((r) => r.id === "STATE-7")?.scenarios).toEqual(["rate-limited-then-down"]);
    expect(report.uncovered).toContain("STATE-3");
    expect(report.unknown).toEqual([]);
  });

  it("the Rules view's evidence: STATE-7 fired, its events in the log's words, the bounce among them", () => {
    const fired = firedRules(t.events, t.startedAtMs);
    const state7 = fired.get("STATE-7");
    expect(state7?.count).toBe(state7?.events.length);
    const bounce = state7?.events.find((e) => e.name === "delivery.bounced");
    expect(bounce).toMatchObject({ at: "+120:00:00" });
    expect(bounce?.text).toBe("gave up on bob@b.example after 127 attempts: bounced");
    expect(fired.has("STATE-3")).toBe(false);
  });

  it("each reading in force with the events it decided: G16's retry plans, G7 nothing here", () => {
    const readings = readingEvidence(t.readings, t.events, t.startedAtMs);
    expect(readings.map((r) => r.gap)).toEqual(
      Object.keys(t.readings).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))),
    );
    const g16 = readings.find((r) => r.gap === "G16");
    expect(g16?.reading).toBe(t.readings["G16"]);
    expect(g16?.events.some((e) => e.name === "timer.set")).toBe(true);
    expect(readings.find((r) => r.gap === "G3")?.events).toEqual([]);
  });
});

describe("the statechart's drawing", () => {
  it("draws every state and every transition of the machine, labelled with name and row, the same every time", async () => {
    const { layoutStatechart } = await import("./statechartLayout.ts");
    const graph = deliveryGraph();
    const layout = await layoutStatechart(graph);
    const drawn = new Set(layout.states.map((s) => s.id));
    for (const s of graph.states) expect(drawn, s.id).toContain(s.id);
    const edges = new Map(layout.edges.map((e) => [e.id, e]));
    for (const tr of graph.transitions) {
      const edge = edges.get(tr.id);
      expect(edge, tr.id).toBeDefined();
      expect(edge?.points.length).toBeGreaterThanOrEqual(2);
      expect(edge?.lines[0]).toBe(tr.meta?.name);
      expect(edge?.lines[1]).toBe(tr.meta?.row === undefined ? "" : `row ${tr.meta.row}`);
    }
    expect(layout.edges.find((e) => e.transition?.meta?.name === "fallBackToSmtpAfterWindow")?.lines).toEqual([
      "fallBackToSmtpAfterWindow",
      "row 2",
      "if fallbackEligibleAfterWindow",
    ]);
    const judging = layout.states.find((s) => s.id === "attemptingOverService.judging");
    const parent = layout.states.find((s) => s.id === "attemptingOverService");
    expect(parent?.compound).toBe(true);
    expect(judging?.parent).toBe("attemptingOverService");
    // Nested: the child lies inside its parent's box.
    expect(judging!.x).toBeGreaterThanOrEqual(parent!.x);
    expect(judging!.y + judging!.height).toBeLessThanOrEqual(parent!.y + parent!.height);
    expect(
      layout.states
        .filter((s) => s.final)
        .map((s) => s.id)
        .sort(),
    ).toEqual(["bounced", "finished", "handedToSmtp"]);
    expect(await layoutStatechart(graph)).toEqual(layout);
  });

  it("draws the saved layout of the machine without running ELK, the same as ELK's (scripts/gen-statechart-layout.ts)", async () => {
    const { elkInputHash, elkInputOf, layoutStatechart, statechartLayout } = await import("./statechartLayout.ts");
    const { default: saved } = await import("./deliveryMachineLayout.json", { with: { type: "json" } });
    const graph = deliveryGraph();
    expect(elkInputHash(elkInputOf(graph)), "run `node scripts/gen-statechart-layout.ts`").toBe(saved.inputSha256);
    expect(await statechartLayout(graph)).toEqual(await layoutStatechart(graph));
  });
});
