/**
 * Where playback stops (app/sim/breakpoints.ts), on the trace of a real run:
 * receiver-down-past-fallback-window, eight attempts that find mx.b.example
 * down (each judged within the fallback window and retried, STATE-2), then
 * the hand-off to SMTP after the window (STATE-3).
 */
import { beforeAll, describe, expect, it } from "vitest";
import receiverDown from "../../scenarios/receiver-down-past-fallback-window.yaml?raw";
import type { RecordedEvent } from "../trace/schema.ts";
import {
  breakpointsProblem,
  conditionLike,
  conditionMatches,
  describeCondition,
  inState,
  sameCondition,
  stepStopsAt,
  StopFinder,
  type BreakCondition,
  type Breakpoint,
  type PlaybackStop,
} from "./breakpoints.ts";
import { runScenarioText } from "./runScenario.ts";

let events: readonly RecordedEvent[] = [];
let startMs = 0;

beforeAll(async () => {
  const outcome = await runScenarioText(receiverDown, { file: "scenarios/receiver-down-past-fallback-window.yaml" });
  if (!outcome.ok) throw new Error("valid");
  events = outcome.run.trace.events;
  startMs = outcome.run.trace.startedAtMs;
});

/** The seqs of the events that meet `condition`, counting each kind as the finder does. */
function hits(condition: BreakCondition): number[] {
  const counts = new Map<string, number>();
  return events.flatMap((e) => {
    const nth = (counts.get(e.name) ?? 0) + 1;
    counts.set(e.name, nth);
    return conditionMatches(condition, e, nth) ? [e.seq] : [];
  });
}

const seqsOf = (pred: (e: RecordedEvent) => boolean) => events.filter(pred).map((e) => e.seq);
const named = (name: string) => (e: RecordedEvent) => e.name === name;

describe("step levels", () => {
  it("an event: every one; an attempt: its verdict (attempt.judged); a decision: a transition of a delivery machine", () => {
    expect(events.every((e) => stepStopsAt("event", e))).toBe(true);
    const attempts = events.filter((e) => stepStopsAt("attempt", e));
    expect(attempts.map((e) => e.name)).toEqual(Array(8).fill("attempt.judged"));
    expect(attempts.map((e) => e.data?.["attempt"])).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const decisions = events.filter((e) => stepStopsAt("decision", e));
    expect(decisions.length).toBeGreaterThan(16);
    expect(new Set(decisions.map((e) => e.name))).toEqual(new Set(["machine.transition"]));
  });
});

describe("breakpoint conditions", () => {
  it("STATE-2: m1 enters retryScheduled after each of the seven attempts judged within the fallback window", () => {
    const into = seqsOf((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    expect(into).toHaveLength(7);
    expect(hits({ kind: "state", state: "retryScheduled", messageId: "m1@a.example" })).toEqual(into);
    expect(hits({ kind: "state", state: "retryScheduled" })).toEqual(into);
    // Another message's deliveries do not stop it.
    expect(hits({ kind: "state", state: "retryScheduled", messageId: "m2@a.example" })).toEqual([]);
  });

  it("entering a state is coming into it from outside: attemptingOverService is entered at the start and at each retry, not at discovering → judging", () => {
    const entered = hits({ kind: "state", state: "attemptingOverService" });
    const started = seqsOf(named("machine.started"));
    const retried = seqsOf((e) => e.name === "machine.transition" && e.data?.["from"] === "retryScheduled");
    expect(entered).toEqual([...started, ...retried].sort((a, b) => a - b));
    expect(entered).toHaveLength(8);
    // A child state by its name or by its path.
    expect(hits({ kind: "state", state: "judging" })).toEqual(
      hits({ kind: "state", state: "attemptingOverService.judging" }),
    );
    expect(hits({ kind: "state", state: "judging" })).toHaveLength(8);
    expect(inState("attemptingOverService.posting", "posting")).toBe(true);
    expect(inState("attemptingOverService.posting", "attemptingOverService")).toBe(true);
    expect(inState("attemptingOverService.posting", "attemptingOverService.judging")).toBe(false);
    expect(inState("retryScheduled", "retry")).toBe(false);
  });

  it("STATE-3: the events citing the rule are the hand-off's decision, the hand-off and the outcome, not the checks", () => {
    const cited = hits({ kind: "rule", rule: "STATE-3" });
    expect(cited.map((s) => events[s]?.name)).toEqual(["machine.transition", "smtp.handoff", "recipient.outcome"]);
    expect(events.some((e) => e.name === "expectation.checked" && JSON.stringify(e.data).includes("STATE-3"))).toBe(
      true,
    );
    // A gap by its ID: the events whose outcome the fallback window's reading decided.
    expect(hits({ kind: "rule", rule: "G16" }).length).toBeGreaterThan(8);
  });

  it("every fallback decision: the eight judgements that weighed the window — seven retries within it, then the hand-off", () => {
    const decisions = hits({ kind: "fallback" });
    expect(decisions.map((s) => events[s]?.data?.["transition"])).toEqual([
      ...Array(7).fill("retryWithinFallbackWindow"),
      "fallBackToSmtpAfterWindow",
    ]);
  });

  it("an event of a kind; a lesson's annotation on a kind stops at its nth only; a time matches no event", () => {
    expect(hits({ kind: "event", name: "smtp.handoff" })).toEqual(seqsOf(named("smtp.handoff")));
    const judged = seqsOf(named("attempt.judged"));
    expect(hits({ kind: "annotation", note: "the third", on: "attempt.judged", nth: 3 })).toEqual([judged[2]]);
    expect(hits({ kind: "annotation", note: "each", on: "attempt.judged" })).toEqual(judged);
    expect(hits({ kind: "time", atMs: startMs })).toEqual([]);
    expect(hits({ kind: "annotation", note: "at", atMs: startMs })).toEqual([]);
  });

  it("in words, as the list shows them", () => {
    const label = (m: string) => (m === "m1@a.example" ? "m1" : m);
    const words = (c: BreakCondition) => describeCondition(c, startMs, label);
    expect(words({ kind: "state", state: "retryScheduled", messageId: "m1@a.example" })).toBe(
      "m1 enters retryScheduled",
    );
    expect(words({ kind: "state", state: "bounced" })).toBe("a delivery enters bounced");
    expect(words({ kind: "event", name: "smtp.handoff" })).toBe("every smtp.handoff");
    expect(words({ kind: "rule", rule: "STATE-3" })).toBe("every event citing STATE-3");
    expect(words({ kind: "fallback" })).toBe("every fallback decision");
    expect(words({ kind: "time", atMs: startMs + 7_200_000 })).toBe("at +2:00:00");
    expect(words({ kind: "annotation", note: "The window ends.", atMs: startMs + 7_200_000 })).toBe(
      "lesson note at +2:00:00: The window ends.",
    );
    expect(words({ kind: "annotation", note: "Down again.", on: "attempt.judged", nth: 2 })).toBe(
      "lesson note at the 2nd attempt.judged: Down again.",
    );
  });

  it("a breakpoint like an event: a transition's delivery entering the state it went to, else the event's kind", () => {
    const transition = events.find((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    const handoff = events.find(named("smtp.handoff"));
    if (transition === undefined || handoff === undefined) throw new Error("in the run");
    expect(conditionLike(transition)).toEqual({ kind: "state", state: "retryScheduled", messageId: "m1@a.example" });
    expect(conditionLike(handoff)).toEqual({ kind: "event", name: "smtp.handoff" });
    expect(sameCondition({ messageId: "m1@a.example", state: "x", kind: "state" }, conditionLike(transition))).toBe(
      false,
    );
    expect(
      sameCondition({ messageId: "m1@a.example", state: "retryScheduled", kind: "state" }, conditionLike(transition)),
    ).toBe(true);
  });

  it("a list that came over a message port is checked, and what is wrong said with where", () => {
    const ok: Breakpoint[] = [
      { id: "a", enabled: true, condition: { kind: "fallback" } },
      { id: "b", enabled: false, condition: { kind: "time", atMs: 5 } },
      { id: "c", enabled: true, condition: { kind: "annotation", note: "n", on: "smtp.handoff", nth: 2 } },
    ];
    expect(breakpointsProblem(ok)).toBeUndefined();
    expect(breakpointsProblem("x")).toBe("breakpoints are a list");
    expect(breakpointsProblem([{ id: "a", enabled: true, condition: { kind: "rule" } }])).toBe(
      "breakpoint 1: a rule breakpoint names a rule or a gap",
    );
    expect(breakpointsProblem([...ok, { id: "a", enabled: true, condition: { kind: "fallback" } }])).toBe(
      'breakpoint 4: the id "a" is taken by another',
    );
    expect(breakpointsProblem([{ id: "z", enabled: "yes", condition: { kind: "fallback" } }])).toBe(
      "breakpoint 1: enabled is true or false",
    );
    expect(breakpointsProblem([{ id: "z", enabled: true, condition: { kind: "watch" } }])).toBe(
      'breakpoint 1: no breakpoint is of kind "watch"',
    );
    expect(
      breakpointsProblem([{ id: "z", enabled: true, condition: { kind: "annotation", note: "n", atMs: 1, on: "x" } }]),
    ).toMatch(/^breakpoint 1: an annotation has a note and a time/);
  });
});

describe("the stop finder", () => {
  const finder = (breakpoints: Breakpoint[]) => {
    const f = new StopFinder();
    f.setBreakpoints(breakpoints);
    return f;
  };

  it("stops at the first breakpoint's event or the step's event, reading stopping just past it; disabled ones are skipped", () => {
    const f = finder([
      { id: "off", enabled: false, condition: { kind: "event", name: "dns.query" } },
      { id: "retry", enabled: true, condition: { kind: "state", state: "retryScheduled" } },
    ]);
    const stops: PlaybackStop[] = [];
    for (let s = f.next(events); s !== undefined; s = f.next(events)) stops.push(s);
    const into = seqsOf((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    expect(stops).toEqual(into.map((seq) => ({ kind: "breakpoint", id: "retry", seq })));
    expect(f.scanned).toBe(events.length);
  });

  it("a step's level, with a breakpoint first where both stop at one event; skip reads without stopping but counts", () => {
    const f = finder([
      { id: "third", enabled: true, condition: { kind: "annotation", note: "3", on: "attempt.judged", nth: 3 } },
    ]);
    const judged = seqsOf(named("attempt.judged"));
    expect(f.next(events, "attempt")).toEqual({ kind: "step", level: "attempt", seq: judged[0] });
    expect(f.scanned).toBe((judged[0] ?? 0) + 1);
    f.skip(events, (judged[1] ?? 0) + 1); // a jump past the second
    expect(f.next(events, "attempt")).toEqual({ kind: "breakpoint", id: "third", seq: judged[2] });
    expect(f.next(events, "event")).toEqual({ kind: "step", level: "event", seq: (judged[2] ?? 0) + 1 });
    // Up to an end only.
    expect(f.next(events, "attempt", f.scanned + 1)).toBeUndefined();
  });

  it("the next breakpoint at a time after the clock: the earliest enabled one", () => {
    const f = finder([
      { id: "late", enabled: true, condition: { kind: "time", atMs: startMs + 7_200_000 } },
      { id: "early", enabled: true, condition: { kind: "annotation", note: "n", atMs: startMs + 1_800_000 } },
      { id: "off", enabled: false, condition: { kind: "time", atMs: startMs + 60_000 } },
    ]);
    expect(f.nextTime(startMs)).toEqual({ id: "early", atMs: startMs + 1_800_000 });
    expect(f.nextTime(startMs + 1_800_000)).toEqual({ id: "late", atMs: startMs + 7_200_000 });
    expect(f.nextTime(startMs + 7_200_000)).toBeUndefined();
  });
});
