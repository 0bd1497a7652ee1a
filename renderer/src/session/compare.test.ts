/**
 * The Compare machine over real runs (the G16 teaching scenario under two seeds, each side in a worker that
 * answers as app/sim/worker.ts does): its states, each side's progress, the errors of either side, a stop and
 * a run asked anew, and the bar's clock with the breakpoints shared by both runs (docs/decisions/0100).
 */
import { describe, expect, it } from "vitest";
import { createActor, fromPromise, waitFor } from "xstate";
import type { Breakpoint } from "../../../app/sim/breakpoints.ts";
import { seedSides, type CompareSide } from "../model/compare.ts";
import { compareBaseOf } from "../model/testing.ts";
import { compareStopText, nextBreakOfRuns, nextStopOfRuns } from "../model/playbar.ts";
import { barLineText, compareMachine, type CompareEvent } from "./compare.ts";
import { runSide, type SideOutcome } from "./runSide.ts";
import { oneShotWorker } from "./testing.ts";

const base = compareBaseOf("gap-G16-fallback-window-4h");
const sides = seedSides(base, "16", "17");

/** The machine with each side run in a one-shot worker of this thread; `log` gets the workers' posts and ends. */
function compare(
  log: string[] = [],
  run = (side: CompareSide, signal: AbortSignal) => runSide(oneShotWorker(log), side, "test", signal),
) {
  return createActor(
    compareMachine.provide({ actors: { runSide: fromPromise(({ input, signal }) => run(input.side, signal)) } }),
    { input: { startMs: base.startMs } },
  ).start();
}

async function done(...after: CompareEvent[]) {
  const actor = compare();
  actor.send({ type: "RUN", request: { sides } });
  await waitFor(actor, (s) => s.matches("done"));
  for (const e of after) actor.send(e);
  return actor;
}

/** A breakpoint on events of the kind a first Step by attempts stops at. */
async function attemptBreakpoint(): Promise<Breakpoint> {
  const actor = await done();
  const events = actor.getSnapshot().context.result!.events;
  const stop = nextStopOfRuns(events, "attempt", base.startMs - 1);
  if (stop === undefined) throw new Error("an attempt in either run");
  return { id: "bp-1", enabled: true, condition: { kind: "event", name: stop.event.name } };
}

describe("the Compare machine", () => {
  it("idle → running (both sides under way) → done: the verdicts, the table and the later run's end", async () => {
    const log: string[] = [];
    const actor = compare(log);
    expect(actor.getSnapshot().value).toBe("idle");
    actor.send({ type: "RUN", request: { sides } });
    expect(actor.getSnapshot()).toMatchObject({
      value: "running",
      context: { runNumber: 1, runs: [{ state: "running" }, { state: "running" }] },
    });
    const end = await waitFor(actor, (s) => s.matches("done"));
    const [a, b] = end.context.runs ?? [];
    expect(a?.state).toBe("done");
    expect(b?.state).toBe("done");
    const events = end.context.result?.events;
    expect(events?.[0]).toBe(a?.state === "done" ? a.events : undefined);
    expect(end.context.result?.endMs).toBe(Math.max(events?.[0].at(-1)?.timeMs ?? 0, events?.[1].at(-1)?.timeMs ?? 0));
    expect(end.context.result?.comparison.table.lines.length).toBeGreaterThan(0);
    expect(end.context.result?.prefix).toBeUndefined();
    expect(log.filter((l) => l === "terminate")).toHaveLength(2);
  });

  it("each side's progress as it comes: A done while B still runs", async () => {
    let finishB: (o: SideOutcome) => void = () => {};
    const actor = compare([], (side, signal) =>
      side.label === "A"
        ? runSide(oneShotWorker(), side, "test", signal)
        : new Promise<SideOutcome>((resolve) => (finishB = resolve)),
    );
    actor.send({ type: "RUN", request: { sides } });
    const half = await waitFor(actor, (s) => s.context.runs?.[0].state === "done");
    expect(half.value).toBe("running");
    expect(half.context.runs?.[1]).toEqual({ state: "running" });
    finishB({ ok: false, errors: ["run B: the worker sent no trace"] });
    const end = await waitFor(actor, (s) => s.matches("failed"));
    expect(end.context.errors).toEqual(["B: run B: the worker sent no trace"]);
  });

  it("a side with errors fails the comparison with them, said with its side; both sides' errors when both fail", async () => {
    const broken = { ...sides[1], text: "name: x\ndomains: {}\n" };
    const actor = compare();
    actor.send({ type: "RUN", request: { sides: [sides[0], broken] } });
    const one = await waitFor(actor, (s) => s.matches("failed"));
    expect(one.context.errors.length).toBeGreaterThan(0);
    expect(one.context.errors.every((e) => e.startsWith("B: scenarios/gap-G16-fallback-window-4h.yaml:"))).toBe(true);
    actor.send({ type: "RUN", request: { sides: [{ ...broken, label: "A" }, broken] } });
    const both = await waitFor(actor, (s) => s.matches("failed"));
    expect(both.context.errors.some((e) => e.startsWith("A: "))).toBe(true);
    expect(both.context.errors.some((e) => e.startsWith("B: "))).toBe(true);
    // A side that throws is a failure too, not a crash.
    const thrown = compare([], () => Promise.reject(new Error("no worker")));
    thrown.send({ type: "RUN", request: { sides } });
    expect((await waitFor(thrown, (s) => s.matches("failed"))).context.errors).toEqual([
      "A: no worker",
      "B: no worker",
    ]);
  });

  it("the form's errors fail it as they are, the result before them gone", async () => {
    const actor = await done();
    actor.send({ type: "REFUSE", errors: ["Give both seeds (a number, or any text)."] });
    expect(actor.getSnapshot()).toMatchObject({
      value: "failed",
      context: { errors: ["Give both seeds (a number, or any text)."], result: undefined },
    });
  });

  it("STOP ends both workers (their signals abort) and goes back to the form; RUN again while running runs anew", async () => {
    const signals: AbortSignal[] = [];
    const actor = compare([], (_side, signal) => {
      signals.push(signal);
      return new Promise<SideOutcome>(() => {});
    });
    actor.send({ type: "RUN", request: { sides } });
    actor.send({ type: "STOP" });
    expect(actor.getSnapshot().value).toBe("idle");
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    actor.send({ type: "RUN", request: { sides } });
    actor.send({ type: "RUN", request: { sides: [sides[1], sides[0]] } });
    expect(signals.map((s) => s.aborted)).toEqual([true, true, true, true, false, false]);
    expect(actor.getSnapshot().context).toMatchObject({ runNumber: 3, request: { sides: [sides[1], sides[0]] } });
  });

  it("a run asked anew over a result starts the bar afresh", async () => {
    const actor = await done({ type: "SET_LEVEL", level: "event" }, { type: "STEP", breakpoints: [] });
    expect(actor.getSnapshot().context.clock.cursorMs).toBeDefined();
    actor.send({ type: "RUN", request: { sides } });
    await waitFor(actor, (s) => s.matches("done"));
    expect(actor.getSnapshot().context).toMatchObject({
      runNumber: 2,
      clock: { cursorMs: undefined, level: "attempt", hits: [], line: undefined },
    });
  });
});

describe("Compare's bar: one clock and one list of breakpoints for both runs (0100)", () => {
  it("STATE-3: Step stops both runs at the first event of either that meets a breakpoint, names the run, counts the hit", async () => {
    const attempt = await attemptBreakpoint();
    const actor = await done({ type: "STEP", breakpoints: [attempt] });
    const { clock, result } = actor.getSnapshot().context;
    const expected = nextBreakOfRuns(result!.events, [attempt], base.startMs - 1, Infinity);
    expect(expected).toBeDefined();
    expect(clock).toMatchObject({ cursorMs: expected?.timeMs, playing: false, hits: [expected], current: expected });
    expect(barLineText(clock.line!, base.startMs, [attempt], (m) => m)).toBe(
      compareStopText(expected!, base.startMs, [attempt]),
    );
    // The next step goes on from the hit (not the same event again).
    actor.send({ type: "STEP", breakpoints: [attempt] });
    const next = actor.getSnapshot().context.clock;
    expect(next.cursorMs).toBeGreaterThanOrEqual(expected!.timeMs);
    expect(next.hits.length).toBeLessThanOrEqual(2);
  });

  it("a seek back forgets the hits after it; a seek ahead keeps them; Whole runs shows both to their ends", async () => {
    const attempt = await attemptBreakpoint();
    const actor = await done({ type: "STEP", breakpoints: [attempt] });
    const hitAt = actor.getSnapshot().context.clock.cursorMs!;
    actor.send({ type: "SEEK", toMs: hitAt + 1 });
    expect(actor.getSnapshot().context.clock).toMatchObject({ hits: [{ id: "bp-1" }], current: undefined });
    actor.send({ type: "SEEK", toMs: hitAt - 1 });
    expect(actor.getSnapshot().context.clock).toMatchObject({ cursorMs: hitAt - 1, hits: [], line: undefined });
    actor.send({ type: "WHOLE" });
    expect(actor.getSnapshot().context.clock.cursorMs).toBeUndefined();
  });

  it("Play at the end starts from the start; its frames move the clock at the speed chosen and stop at a breakpoint", async () => {
    const actor = await done({ type: "SET_SPEED", speed: 60 }, { type: "TOGGLE" });
    expect(actor.getSnapshot().context.clock).toMatchObject({ playing: true, cursorMs: base.startMs });
    actor.send({ type: "FRAME", wallMs: 1000, breakpoints: [] });
    expect(actor.getSnapshot().context.clock.cursorMs).toBe(base.startMs + 60_000);
    // A time breakpoint stops both runs there.
    const hour: Breakpoint = { id: "t", enabled: true, condition: { kind: "time", atMs: base.startMs + 3_600_000 } };
    actor.send({ type: "SET_SPEED", speed: "max" });
    actor.send({ type: "FRAME", wallMs: 16, breakpoints: [hour] });
    const { clock } = actor.getSnapshot().context;
    expect(clock).toMatchObject({ playing: false, cursorMs: base.startMs + 3_600_000, current: { id: "t" } });
    expect(barLineText(clock.line!, base.startMs, [hour], (m) => m)).toBe(
      'Both runs stopped at breakpoint "at +1:00:00": the clock is at +1:00:00',
    );
    // Played on without it, to the end: the bar stops there.
    actor.send({ type: "TOGGLE" });
    actor.send({ type: "FRAME", wallMs: 16, breakpoints: [] });
    const end = actor.getSnapshot().context;
    expect(end.clock).toMatchObject({ playing: false, cursorMs: end.result?.endMs });
  });

  it("Step with no stop left shows both runs to their ends and says so", async () => {
    const actor = await done();
    const { result } = actor.getSnapshot().context;
    actor.send({ type: "SEEK", toMs: result!.endMs });
    actor.send({ type: "STEP", breakpoints: [] });
    const { clock } = actor.getSnapshot().context;
    expect(clock.cursorMs).toBe(result!.endMs);
    expect(barLineText(clock.line!, base.startMs, [], (m) => m)).toMatch(
      /^No attempt is left in either run after \+.*: both are shown to their ends\.$/,
    );
  });
});
