/**
 * The playback bar's words and marks (model/playbar.ts), on the trace of
 * receiver-down-past-fallback-window: eight attempts judged within the
 * fallback window and retried (STATE-2), then the hand-off to SMTP (STATE-3).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Breakpoint } from "../../../app/sim/breakpoints.ts";
import type { RecordedEvent, Trace } from "../../../app/trace/schema.ts";
import {
  addBreakpoint,
  breakableKinds,
  enableBreakpoint,
  eventDensity,
  eventOfSeq,
  firstBinAhead,
  hitCounts,
  nextLevel,
  compareStopText,
  nextBreakOfRuns,
  nextStopOfRuns,
  scrubberEnd,
  seenOfRun,
  stepHint,
  stopText,
  toggleBreakpointLike,
} from "./playbar.ts";
import { scenarioTrace } from "./testing.ts";

let trace: Trace;
let events: readonly RecordedEvent[];
let startMs = 0;
const label = (m: string) => (m === "m1@a.example" ? "m1" : m);

beforeAll(async () => {
  trace = await scenarioTrace("receiver-down-past-fallback-window");
  events = trace.events;
  startMs = trace.startedAtMs;
});

const first = (pred: (e: RecordedEvent) => boolean): RecordedEvent => {
  const e = events.find(pred);
  if (e === undefined) throw new Error("no such event in the trace");
  return e;
};

describe("what Step does, said beside it", () => {
  it("names the level's next stop, and says when the step ends the run", () => {
    expect(stepHint("attempt", false)).toBe("Step runs to the next attempt's verdict, or to a breakpoint before it.");
    expect(stepHint("decision", false)).toContain("the next decision of a delivery machine");
    expect(stepHint("event", true)).toBe("Nothing is left to run: Step ends the run and checks it.");
    expect([nextLevel("event"), nextLevel("attempt"), nextLevel("decision")]).toEqual(["attempt", "decision", "event"]);
  });
});

describe("where the run stopped, citing the event by its seq", () => {
  it("STATE-2: a breakpoint on m1 entering retryScheduled names the breakpoint, the seq, its kind and time", () => {
    const retry = first((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    const bp: Breakpoint = {
      id: "bp-1",
      enabled: true,
      condition: { kind: "state", state: "retryScheduled", messageId: "m1@a.example" },
    };
    const text = stopText({ kind: "breakpoint", id: "bp-1", seq: retry.seq }, events, startMs, [bp], label);
    expect(text).toMatch(
      new RegExp(`^Stopped at breakpoint "m1 enters retryScheduled": #${retry.seq} machine\\.transition at \\+0:00:00`),
    );
    expect(text).toContain("retryScheduled");
  });

  it("a step names its level; the end says what the next step does; a time breakpoint says the clock", () => {
    const judged = first((e) => e.name === "attempt.judged");
    expect(stopText({ kind: "step", level: "attempt", seq: judged.seq }, events, startMs, [])).toMatch(
      new RegExp(`^Stepped to the next attempt's verdict: #${judged.seq} attempt\\.judged at \\+`),
    );
    expect(stopText({ kind: "end", level: "attempt" }, events, startMs, [])).toBe(
      "No attempt is left before the end: the next Step or Play ends the run and checks it.",
    );
    const bp: Breakpoint = { id: "w", enabled: true, condition: { kind: "time", atMs: startMs + 7_200_000 } };
    expect(stopText({ kind: "time", id: "w", atMs: startMs + 7_200_000 }, events, startMs, [bp])).toBe(
      'Stopped at breakpoint "at +2:00:00": the clock is at +2:00:00',
    );
  });

  it("a lesson's note by its number; a breakpoint taken away while stopped at it, as such", () => {
    const judged = first((e) => e.name === "attempt.judged");
    const note: Breakpoint = {
      id: "note-1",
      enabled: true,
      condition: { kind: "annotation", note: "Attempt 1 fails.", on: "attempt.judged", nth: 1 },
    };
    expect(stopText({ kind: "breakpoint", id: "note-1", seq: judged.seq }, events, startMs, [note])).toMatch(
      new RegExp(
        `^Stopped at lesson note 1 \\(#${judged.seq} attempt\\.judged at \\+0:00:00[^)]*\\): Attempt 1 fails\\.$`,
      ),
    );
    const window: Breakpoint = {
      id: "note-2",
      enabled: true,
      condition: { kind: "annotation", note: "The window ends.", atMs: startMs + 7_200_000 },
    };
    expect(stopText({ kind: "time", id: "note-2", atMs: startMs + 7_200_000 }, events, startMs, [note, window])).toBe(
      "Stopped at lesson note 2 (the clock at +2:00:00): The window ends.",
    );
    // Its breakpoint gone (the box unticked while stopped there), the note by its number.
    expect(stopText({ kind: "time", id: "note-2", atMs: startMs + 7_200_000 }, events, startMs, [note])).toBe(
      "Stopped at lesson note 2: the clock is at +2:00:00",
    );
    expect(stopText({ kind: "breakpoint", id: "bp-1", seq: judged.seq }, events, startMs, [note])).toMatch(
      /^Stopped at a breakpoint removed since: #/,
    );
  });

  it("counts each breakpoint's hits", () => {
    expect([...hitCounts([{ id: "a" }, { id: "note-1" }, { id: "a" }])]).toEqual([
      ["a", 2],
      ["note-1", 1],
    ]);
  });

  it("finds an event by its seq among the shown events", () => {
    expect(eventOfSeq(events, 5)?.seq).toBe(5);
    expect(eventOfSeq(events.slice(3), 5)?.seq).toBe(5);
    expect(eventOfSeq(events, events.length + 10)).toBeUndefined();
  });
});

describe("the breakpoints' list", () => {
  it("adds with a fresh id, never twice the same condition; enables and disables one", () => {
    const a = addBreakpoint([], { kind: "fallback" });
    const b = addBreakpoint(a, { kind: "event", name: "smtp.handoff" });
    expect(b.map((x) => x.id)).toEqual(["bp-1", "bp-2"]);
    expect(addBreakpoint(b, { kind: "fallback" })).toBe(b);
    const c = addBreakpoint(b.slice(1), { kind: "rule", rule: "STATE-3" });
    expect(c.map((x) => x.id)).toEqual(["bp-2", "bp-3"]);
    expect(enableBreakpoint(b, "bp-1", false).map((x) => x.enabled)).toEqual([false, true]);
  });

  it("B on a transition: its message entering the state it went to; B again takes it away", () => {
    const retry = first((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    const on = toggleBreakpointLike([], retry);
    expect(on.map((b) => b.condition)).toEqual([{ kind: "state", state: "retryScheduled", messageId: "m1@a.example" }]);
    expect(toggleBreakpointLike(on, retry)).toEqual([]);
    const handoff = first((e) => e.name === "smtp.handoff");
    expect(toggleBreakpointLike([], handoff).map((b) => b.condition)).toEqual([
      { kind: "event", name: "smtp.handoff" },
    ]);
  });

  it("offers the kinds of the run (the checks aside) and the usual ones", () => {
    const kinds = breakableKinds(events);
    expect(kinds).toContain("smtp.handoff");
    expect(kinds).toContain("dns.query");
    expect(kinds).not.toContain("invariant.checked");
    expect(kinds).toEqual([...kinds].sort());
  });
});

describe("the scrubber", () => {
  it("spans the run to its end once known, else as far as known", () => {
    expect(scrubberEnd({ startMs, endMs: startMs + 5000, knownMs: [startMs + 9000] })).toBe(startMs + 5000);
    expect(scrubberEnd({ startMs, knownMs: [startMs + 9000, undefined, startMs + 3000] })).toBe(startMs + 9000);
    expect(scrubberEnd({ startMs, knownMs: [] })).toBe(startMs + 1000);
  });

  it("counts every event of the run once, in the bin of its time: the attempts' bins are not empty", () => {
    const endMs = events.at(-1)?.timeMs ?? startMs;
    const bins = eventDensity(events, startMs, endMs, 100);
    expect(bins).toHaveLength(100);
    expect(bins.reduce((a, b) => a + b, 0)).toBe(events.length);
    for (const e of events.filter((x) => x.name === "attempt.started")) {
      const i = Math.min(99, Math.floor(((e.timeMs - startMs) / (endMs - startMs)) * 100));
      expect(bins[i]).toBeGreaterThan(0);
    }
    expect(eventDensity(events, startMs, startMs, 10)).toEqual(new Array(10).fill(0));
  });
});

describe("the scrubber after a jump back", () => {
  it("STATE-3: a jump back keeps drawing what the run showed, up to the hand-off; another run starts again", () => {
    const source = { kind: "scenario" };
    const whole = seenOfRun(undefined, source, events);
    const handoff = first((e) => e.name === "smtp.handoff");
    // Jumped back to +0:30:00: the run is run again to there, and shows the events up to it only.
    const back = events.filter((e) => e.timeMs <= startMs + 1_800_000);
    expect(back.length).toBeLessThan(events.length);
    const kept = seenOfRun(whole, source, back);
    expect(kept.events).toBe(events);
    expect(kept.events).toContain(handoff);
    // Played on past where it had been: the longer events are drawn.
    expect(seenOfRun(kept, source, events).events).toBe(events);
    // A restart (a new source), or a shorter run whose events differ (another seed): its own events.
    expect(seenOfRun(kept, { kind: "scenario" }, back).events).toBe(back);
    const last = back.at(-1);
    if (last === undefined) throw new Error("no event before +0:30:00");
    const differs = [...back.slice(0, -1), { ...last, timeMs: last.timeMs + 1 }];
    expect(seenOfRun(whole, source, differs).events).toBe(differs);
  });

  it("the bars wholly past the clock are those ahead; the bar with the clock in it is not", () => {
    const endMs = handoffEnd();
    expect(firstBinAhead(startMs, endMs, 160, startMs)).toBe(1);
    expect(firstBinAhead(startMs, endMs, 160, endMs)).toBe(160);
    expect(firstBinAhead(startMs, endMs, 160, startMs + (endMs - startMs) / 2)).toBe(81);
    expect(firstBinAhead(startMs, startMs, 160, startMs)).toBe(160);
  });
});

const handoffEnd = () => events.at(-1)?.timeMs ?? startMs;

describe("Compare's Step over two runs", () => {
  it("STATE-2, STATE-3: the next attempt's verdict of either run after the cursor, the earlier first", async () => {
    const b = await scenarioTrace("gap-G16-fallback-window-2h");
    const judgedA = events.filter((e) => e.name === "attempt.judged");
    const judgedB = b.events.filter((e) => e.name === "attempt.judged");
    const first = nextStopOfRuns([events, b.events], "attempt", startMs - 1);
    expect(first?.event.name).toBe("attempt.judged");
    expect(first?.timeMs).toBe(Math.min(judgedA[0]?.timeMs ?? Infinity, judgedB[0]?.timeMs ?? Infinity));
    // After the last verdict of A, only B's are left, and after them none.
    const lastA = judgedA.at(-1)?.timeMs ?? 0;
    const afterA = nextStopOfRuns([events, b.events], "attempt", lastA);
    expect(afterA === undefined || afterA.run === 1).toBe(true);
    const lastOfAll = Math.max(lastA, judgedB.at(-1)?.timeMs ?? 0);
    expect(nextStopOfRuns([events, b.events], "attempt", lastOfAll)).toBeUndefined();
    expect(nextStopOfRuns([events, b.events], "decision", startMs - 1)?.event.name).toBe("machine.transition");
  });
});

describe("Compare's breakpoints: one list for both runs", () => {
  it("STATE-3: the earliest event of either run that meets one, the run named; a time; a note's nth counted in its run", async () => {
    const b = (await scenarioTrace("gap-G16-fallback-window-2h")).events;
    const runs = [events, b] as const;
    const handoffs = runs.map((r) => r.find((e) => e.name === "smtp.handoff"));
    const handoff: Breakpoint = { id: "bp-1", enabled: true, condition: { kind: "event", name: "smtp.handoff" } };
    const firstRun = (handoffs[0]?.timeMs ?? Infinity) <= (handoffs[1]?.timeMs ?? Infinity) ? 0 : 1;
    const hit = nextBreakOfRuns(runs, [handoff], startMs - 1, Infinity);
    if (hit === undefined) throw new Error("a hand-off in either run");
    expect(compareStopText(hit, startMs, [handoff])).toMatch(
      new RegExp(
        `^Run ${firstRun === 0 ? "A" : "B"} stopped at breakpoint "every smtp\\.handoff": #${handoffs[firstRun]?.seq} smtp\\.handoff at \\+`,
      ),
    );
    expect(hit).toMatchObject({ kind: "event", id: "bp-1", run: firstRun, event: { seq: handoffs[firstRun]?.seq } });
    // Played on from the hit, not the same event again: the other run's, or none.
    const after = nextBreakOfRuns(runs, [handoff], hit?.timeMs ?? 0, Infinity);
    const other = handoffs[1 - firstRun];
    if (other !== undefined && other.timeMs > (hit?.timeMs ?? 0)) expect(after).toMatchObject({ run: 1 - firstRun });
    else expect(after).toBeUndefined();
    // Not past the frame's end; a disabled one stops nothing.
    expect(nextBreakOfRuns(runs, [handoff], startMs - 1, (hit?.timeMs ?? 0) - 1)).toBeUndefined();
    expect(nextBreakOfRuns(runs, [{ ...handoff, enabled: false }], startMs - 1, Infinity)).toBeUndefined();
    // A time stops both there, unless an event does first.
    const hour: Breakpoint = { id: "t", enabled: true, condition: { kind: "time", atMs: startMs + 3_600_000 } };
    expect(nextBreakOfRuns(runs, [handoff, hour], startMs - 1, Infinity)).toEqual({
      kind: "time",
      id: "t",
      timeMs: startMs + 3_600_000,
    });
    expect(compareStopText({ kind: "time", id: "t", timeMs: startMs + 3_600_000 }, startMs, [hour])).toBe(
      'Both runs stopped at breakpoint "at +1:00:00": the clock is at +1:00:00',
    );
    // A lesson's note on the 3rd attempt.judged: the 3rd of run A or of run B, whichever comes first.
    const third = runs.map((r) => r.filter((e) => e.name === "attempt.judged")[2]);
    const note: Breakpoint = {
      id: "note-1",
      enabled: true,
      condition: { kind: "annotation", note: "n", on: "attempt.judged", nth: 3 },
    };
    const at = Math.min(third[0]?.timeMs ?? Infinity, third[1]?.timeMs ?? Infinity);
    expect(nextBreakOfRuns(runs, [note], startMs - 1, Infinity)).toMatchObject({ kind: "event", timeMs: at });
    expect(nextBreakOfRuns(runs, [note], at, Infinity)?.timeMs ?? Infinity).toBeGreaterThan(at);
  });
});
