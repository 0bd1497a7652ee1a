import { describe, expect, it } from "vitest";
import { createActor, waitFor } from "xstate";
import { handleWorkerRequest, type WorkerRequest } from "../../../app/sim/worker.ts";
import type { SessionCommand, SessionMessage } from "../../../app/sim/sessionProtocol.ts";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import { buildTimeline } from "../model/timeline.ts";
import { logRows } from "../model/log.ts";
import { outcomeRows } from "../model/outcomes.ts";
import { phaseText } from "../model/playback.ts";
import { hitCounts } from "../model/playbar.ts";
import type { FrameScheduler } from "./coalesce.ts";
import { phaseOf, playbackMachine } from "./machine.ts";
import { workerSessionPort, type SessionPort, type WorkerLike } from "./port.ts";
import { FRAME_MS, type Ticker } from "./replay.ts";
import type { Breakpoint } from "../../../app/sim/breakpoints.ts";
import { liveWorker } from "./testing.ts";

const scenarios = import.meta.glob<string>("../../../scenarios/*.yaml", {
  query: "?raw",
  import: "default",
  eager: true,
});
const text = (name: string): string => scenarios[`../../../scenarios/${name}.yaml`] ?? "";

/** A worker that answers as today's app/sim/worker.ts does, with the real engine in this thread. */
function oneShotWorker(): WorkerLike {
  const listeners: ((event: { data: unknown }) => void)[] = [];
  return {
    postMessage(message) {
      void handleWorkerRequest(message as WorkerRequest).then((reply) => {
        for (const l of listeners) l({ data: reply });
      });
    },
    addEventListener(type: string, listener: (event: never) => void) {
      if (type === "message") listeners.push(listener as (event: { data: unknown }) => void);
    },
    terminate() {},
  } as WorkerLike;
}

const oneShot = (): SessionPort => workerSessionPort(oneShotWorker);

const live = (): SessionPort => workerSessionPort(liveWorker);

function startWith(create: () => SessionPort) {
  const actor = createActor(playbackMachine, { input: { create } });
  actor.start();
  return actor;
}

const load = (name: string) =>
  ({ type: "LOAD", start: { type: "start", text: text(name), file: `scenarios/${name}.yaml` } }) as const;

describe.each([
  ["the live session", live],
  ["the one-shot run, played back", oneShot],
])("the playback machine over %s", (_name, port) => {
  const start = (create: () => SessionPort = port) => startWith(create);

  it("idle → loading → ready → playing → finished: rate-limited-then-down at full speed", async () => {
    const actor = start();
    expect(phaseOf(actor.getSnapshot())).toBe("idle");
    actor.send(load("rate-limited-then-down"));
    expect(phaseOf(actor.getSnapshot())).toBe("loading");
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    expect(actor.getSnapshot().context.summary).toMatchObject({ name: "rate-limited-then-down" });
    actor.send({ type: "SET_SPEED", speed: "max" });
    actor.send({ type: "PLAY" });
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
    const { context } = actor.getSnapshot();
    const cli = await runScenarioText(text("rate-limited-then-down"), {
      file: "scenarios/rate-limited-then-down.yaml",
    });
    if (!cli.ok) throw new Error("the scenario is valid");
    expect(context.events.length).toBe(cli.run.trace.events.length);
    expect(context.events.map((e) => e.seq)).toEqual(cli.run.trace.events.map((e) => e.seq));
    expect(context.result?.passed).toBe(true);
    expect(context.result?.expectations).toHaveLength(2);
    expect(context.result?.reproduce).toContain("mailscope run");
    actor.stop();
  });

  it("steps, pauses mid-run, runs to a time and finishes", async () => {
    const actor = start();
    actor.send(load("rate-limited-then-down"));
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = actor.getSnapshot().context.events.length;
      actor.send({ type: "STEP" });
      await waitFor(actor, (s) => s.context.events.length > before, { timeout: 5000 });
      counts.push(actor.getSnapshot().context.events.length);
      expect(phaseOf(actor.getSnapshot())).toBe("paused");
    }
    expect(counts[0]).toBeLessThan(counts[1] ?? 0);
    expect(counts[1]).toBeLessThan(counts[2] ?? 0);
    actor.send({ type: "SET_SPEED", speed: 3600 });
    actor.send({ type: "PLAY" });
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    actor.send({ type: "PAUSE" });
    expect(phaseOf(actor.getSnapshot())).toBe("paused");
    // The events the last step held back (the rest of its simulation event, at the same time) may still land.
    await new Promise((r) => setTimeout(r, 60));
    const at = actor.getSnapshot().context.events.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(actor.getSnapshot().context.events.length).toBe(at);
    // Jump to +2:00:00: paused there, every event up to then shown.
    const startMs = actor.getSnapshot().context.summary?.startMs ?? 0;
    actor.send({ type: "RUN_TO", timeMs: startMs + 7_200_000 });
    await waitFor(actor, (s) => phaseOf(s) === "paused", { timeout: 5000 });
    const last = actor.getSnapshot().context.events.at(-1);
    expect(last?.timeMs).toBeLessThanOrEqual(startMs + 7_200_000);
    expect(actor.getSnapshot().context.progress?.playheadMs).toBe(startMs + 7_200_000);
    actor.send({ type: "FINISH" });
    await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
    actor.stop();
  });

  it("a scenario with errors fails with the CLI's file:line:column messages", async () => {
    const actor = start();
    actor.send({
      type: "LOAD",
      start: { type: "start", text: "name: broken\ndomains: 3\n", file: "broken.yaml" },
    });
    await waitFor(actor, (s) => phaseOf(s) === "failed", { timeout: 5000 });
    expect(actor.getSnapshot().context.errors[0]).toMatch(/^broken\.yaml:\d+:\d+: /);
    actor.stop();
  });

  it("restarts with a reading: G16 at 4 h gives no hand-off", async () => {
    const actor = start();
    actor.send(load("gap-G16-fallback-window-2h"));
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    actor.send({ type: "RESTART", readings: [["G16", "fallback-window=4h"]] });
    expect(phaseOf(actor.getSnapshot())).toBe("loading");
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    expect(actor.getSnapshot().context.summary?.readings["G16"]).toContain("fallback-window=4h");
    actor.send({ type: "FINISH" });
    await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
    expect(actor.getSnapshot().context.events.some((e) => e.name === "smtp.handoff")).toBe(false);
    actor.stop();
  });

  it("an opened trace is shown finished, without a session", async () => {
    const run = await runScenarioText(text("happy-path"), { file: "scenarios/happy-path.yaml" });
    if (!run.ok) throw new Error("valid");
    let made = 0;
    const actor = start(() => {
      made += 1;
      return oneShot();
    });
    actor.send({ type: "OPEN_TRACE", trace: run.run.trace });
    expect(phaseOf(actor.getSnapshot())).toBe("finished");
    expect(actor.getSnapshot().context.events).toHaveLength(run.run.trace.events.length);
    expect(actor.getSnapshot().context.result?.invariants.length).toBeGreaterThan(0);
    expect(made).toBe(0);
    actor.stop();
  });
});

describe("the machine speaks the session protocol", () => {
  const start = startWith;
  it("sends start, play at the chosen speed, pause, setSpeed, resume, step, runTo and finish", () => {
    const sent: SessionCommand[] = [];
    let listener: ((m: SessionMessage) => void) | undefined;
    let disposed = 0;
    const port: SessionPort = {
      send: (c) => sent.push(c),
      onMessage: (l) => {
        listener = l;
        return () => (listener = undefined);
      },
      dispose: () => (disposed += 1),
    };
    const actor = start(() => port);
    actor.send(load("happy-path"));
    expect(sent[0]).toMatchObject({ type: "start", file: "scenarios/happy-path.yaml" });
    const progress = { nowMs: 0, playheadMs: 0, events: 0, pendingEvents: 3 };
    listener?.({
      type: "ready",
      summary: {
        name: "happy-path",
        description: "",
        seed: 1,
        readings: {},
        startMs: 0,
        horizonMs: 1,
        domains: [],
        messages: [],
        faults: [],
      },
    });
    actor.send({ type: "SET_SPEED", speed: 3600 });
    actor.send({ type: "PLAY" });
    actor.send({ type: "PAUSE" });
    actor.send({ type: "SET_SPEED", speed: "max" });
    actor.send({ type: "TOGGLE" });
    actor.send({ type: "TOGGLE" });
    listener?.({ type: "paused", progress });
    actor.send({ type: "STEP" });
    actor.send({ type: "RUN_TO", timeMs: 5 });
    actor.send({ type: "FINISH" });
    expect(sent.slice(1)).toEqual([
      { type: "setSpeed", speed: 3600 },
      { type: "play", speed: 3600 },
      { type: "pause" },
      { type: "setSpeed", speed: "max" },
      { type: "resume", speed: "max" },
      { type: "pause" },
      { type: "step", level: "event" },
      { type: "runTo", timeMs: 5 },
      { type: "finish" },
    ]);
    // A refusal is said, the session goes on; the next command of the user clears it.
    listener?.({ type: "error", message: "Cannot step: the run is playing; pause it first.", command: "step" });
    expect(actor.getSnapshot().context.notice).toBe("Cannot step: the run is playing; pause it first.");
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    actor.send({ type: "PAUSE" });
    expect(actor.getSnapshot().context.notice).toBeUndefined();
    actor.send({ type: "RESTART", seed: 7 });
    expect(disposed).toBe(1);
    expect(sent.at(-1)).toMatchObject({ type: "start", seed: 7 });
    actor.stop();
    expect(disposed).toBe(2);
  });
});

/** Wall time and timers that move only when told (the played-back trace's pace, without the machine's speed). */
function manualTicker() {
  let now = 0;
  let due: { at: number; fn: () => void }[] = [];
  const ticker: Ticker = {
    now: () => now,
    schedule(fn, ms) {
      const entry = { at: now + ms, fn };
      due.push(entry);
      return () => {
        due = due.filter((d) => d !== entry);
      };
    },
  };
  return {
    ticker,
    /** Moves the wall clock on by `ms`, a frame at a time, running what falls due. */
    advance(ms: number): void {
      const end = now + ms;
      while (now < end) {
        now = Math.min(end, now + FRAME_MS);
        for (;;) {
          const next = due.filter((d) => d.at <= now).sort((a, b) => a.at - b.at)[0];
          if (next === undefined) break;
          due = due.filter((d) => d !== next);
          next.fn();
        }
      }
    },
  };
}

/** Hands the session's messages on at once (no frames in a test). */
const atOnce: FrameScheduler = (fn) => {
  fn();
  return () => undefined;
};

const MINUTE = 60_000;

describe("the speed shown is the speed run, after a jump or a step", () => {
  it("the machine plays on after a jump and after a step at the speed the controls show (60× untouched)", () => {
    const sent: SessionCommand[] = [];
    let listener: ((m: SessionMessage) => void) | undefined;
    const actor = startWith(() => ({
      send: (c) => sent.push(c),
      onMessage: (l) => {
        listener = l;
        return () => (listener = undefined);
      },
      dispose: () => undefined,
    }));
    actor.send(load("receiver-down-past-fallback-window"));
    listener?.({ type: "ready", summary: SUMMARY });
    expect(actor.getSnapshot().context.speed).toBe(60);
    actor.send({ type: "RUN_TO", timeMs: 30 * MINUTE });
    listener?.({
      type: "paused",
      progress: { nowMs: 30 * MINUTE, playheadMs: 30 * MINUTE, events: 9, pendingEvents: 1 },
    });
    actor.send({ type: "PLAY" });
    actor.send({ type: "PAUSE" });
    actor.send({ type: "STEP" });
    actor.send({ type: "TOGGLE" });
    // Before: `resume` carried no speed, and the session played at its own default, 1×.
    expect(sent.slice(1)).toEqual([
      { type: "runTo", timeMs: 30 * MINUTE },
      { type: "resume", speed: 60 },
      { type: "pause" },
      { type: "step", level: "event" },
      { type: "resume", speed: 60 },
    ]);
    actor.stop();
  });

  it("a played-back trace (the one-shot worker) plays on after a jump at 60×, not as fast as possible", async () => {
    const clock = manualTicker();
    const actor = startWith(() => workerSessionPort(oneShotWorker, { ticker: clock.ticker, frames: atOnce }));
    actor.send(load("receiver-down-past-fallback-window"));
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    const startMs = actor.getSnapshot().context.summary?.startMs ?? 0;
    actor.send({ type: "RUN_TO", timeMs: startMs + 30 * MINUTE });
    clock.advance(FRAME_MS * 2);
    expect(phaseOf(actor.getSnapshot())).toBe("paused");
    expect(actor.getSnapshot().context.progress?.playheadMs).toBe(startMs + 30 * MINUTE);
    actor.send({ type: "PLAY" });
    clock.advance(60 * FRAME_MS);
    // 60 frames of wall time at 60× are 60 × 60 frames of the run (before: the jump had left the player at max).
    expect(actor.getSnapshot().context.progress?.playheadMs).toBe(startMs + 30 * MINUTE + 60 * 60 * FRAME_MS);
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    actor.stop();
  });
});

describe("a jump goes back as well as ahead, and lands where a jump from Ready lands", () => {
  const landing = async (port: () => SessionPort, name: string, hops: readonly number[]) => {
    const actor = startWith(port);
    try {
      actor.send(load(name));
      await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
      const startMs = actor.getSnapshot().context.summary?.startMs ?? 0;
      for (const hop of hops) {
        actor.send({ type: "RUN_TO", timeMs: startMs + hop });
        await waitFor(actor, (s) => phaseOf(s) === "paused" && s.context.progress?.playheadMs === startMs + hop, {
          timeout: 20_000,
        });
      }
    } finally {
      actor.stop();
    }
    const { context } = actor.getSnapshot();
    const startMs = context.summary?.startMs ?? 0;
    const labels = new Map((context.summary?.messages ?? []).map((m) => [m.messageId, m.id]));
    return {
      events: context.events,
      clock: context.progress?.playheadMs,
      notice: context.notice,
      // The views are drawn from the events alone: the same events, the same outcomes, log and timeline.
      outcomes: outcomeRows(context.events, startMs, labels),
      log: logRows(context.events, startMs),
      timeline: buildTimeline(context.events, startMs, labels).lanes,
    };
  };

  describe.each([
    ["the live session", () => workerSessionPort(liveWorker)],
    ["the one-shot run, played back", () => workerSessionPort(oneShotWorker)],
  ])("over %s", (_name, port) => {
    it.each([
      ["rate-limited-then-down", [3 * DAY, DAY]],
      ["teach-mixed-recipient-results", [4 * DAY, 10 * MINUTE]],
      ["receiver-down-past-fallback-window", [HOUR, 2 * HOUR, 45 * MINUTE]],
    ] as const)("%s: back to the same events, last seq, clock and views", async (name, hops) => {
      const back = await landing(port, name, hops);
      const forward = await landing(port, name, [hops.at(-1) ?? 0]);
      expect(back.notice).toBeUndefined();
      expect(back.events.length).toBeGreaterThan(0);
      expect(back.events.map((e) => e.seq)).toEqual(back.events.map((_, i) => i));
      expect(back.events.at(-1)?.seq).toBe(forward.events.at(-1)?.seq);
      expect(back).toEqual(forward);
    });
  });

  it("from the end: back to a time before it; a jump to the end or past it is said to have nothing to run", async () => {
    const actor = startWith(() => workerSessionPort(liveWorker));
    actor.send(load("teach-failure-after-acceptance"));
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    actor.send({ type: "FINISH" });
    await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
    const { summary, result, events } = actor.getSnapshot().context;
    const startMs = summary?.startMs ?? 0;
    actor.send({ type: "RUN_TO", timeMs: result?.endMs ?? 0 });
    expect(phaseOf(actor.getSnapshot())).toBe("finished");
    expect(actor.getSnapshot().context.notice).toBe(
      "The run is over at +0:05:00: nothing happens after its end. Jump to an earlier time to see the run there.",
    );
    actor.send({ type: "RUN_TO", timeMs: startMs + MINUTE });
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    expect(actor.getSnapshot().context.notice).toBeUndefined();
    await waitFor(actor, (s) => phaseOf(s) === "paused", { timeout: 10_000 });
    const there = actor.getSnapshot().context;
    expect(there.result).toBeUndefined();
    expect(there.events).toEqual(events.filter((e) => e.timeMs <= startMs + MINUTE));
    // Played on, it ends as it ended.
    actor.send({ type: "SET_SPEED", speed: "max" });
    actor.send({ type: "PLAY" });
    await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
    expect(actor.getSnapshot().context.events).toEqual(events);
    expect(actor.getSnapshot().context.result?.hash).toBe(result?.hash);
    actor.stop();
  });

  it("a jump from Ready shows the session running until it lands, and Pause interrupts a long jump", async () => {
    // A wall clock that lets every progress report through, handed on at once: the jump's first batch comes after
    // its first event, and the pause reaches the session while the jump runs, whatever the machine's speed.
    let wall = 0;
    const said: string[] = [];
    const actor = startWith(() => {
      const port = workerSessionPort(() => liveWorker({ wallClock: () => (wall += 1000) }), { frames: atOnce });
      return { ...port, onMessage: (l) => port.onMessage((m) => (said.push(m.type), l(m))) };
    });
    actor.send(load("rate-limited-then-down"));
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    const startMs = actor.getSnapshot().context.summary?.startMs ?? 0;
    actor.send({ type: "RUN_TO", timeMs: startMs + 5 * DAY });
    const jumping = actor.getSnapshot();
    expect(phaseOf(jumping)).toBe("playing");
    expect(jumping.context.drive).toEqual({ kind: "jump", toMs: startMs + 5 * DAY });
    expect(phaseText({ ...jumping.context, phase: "playing", events: 0, startMs, live: true })).toBe(
      "Jumping to +5d 0:00:00 · 0 events · max",
    );
    await waitFor(actor, (s) => s.context.events.length > 0, { timeout: 10_000 });
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    actor.send({ type: "PAUSE" });
    expect(phaseOf(actor.getSnapshot())).toBe("paused");
    expect(actor.getSnapshot().context.drive).toBeUndefined();
    // The session's own "paused" comes where the jump got to: short of +5d, the events a forward run has there.
    await waitFor(actor, () => said.includes("paused"), { timeout: 10_000 });
    expect(said).not.toContain("finished");
    const paused = actor.getSnapshot().context;
    expect(paused.progress?.nowMs).toBeLessThan(startMs + 5 * DAY);
    const cli = await runScenarioText(text("rate-limited-then-down"), {
      file: "scenarios/rate-limited-then-down.yaml",
    });
    if (!cli.ok) throw new Error("valid");
    expect(paused.events).toEqual(cli.run.trace.events.slice(0, paused.events.length));
    expect(paused.events.length).toBeLessThan(cli.run.trace.events.length);
    actor.stop();
  });
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const SUMMARY = {
  name: "receiver-down-past-fallback-window",
  description: "",
  seed: 7,
  readings: {},
  startMs: 0,
  horizonMs: 6 * 86_400_000,
  domains: [],
  messages: [],
  faults: [],
};

describe("the machine's step levels and breakpoints, the same over the live session and a played-back trace", () => {
  const RETRY: Breakpoint = {
    id: "retry",
    enabled: true,
    condition: { kind: "state", state: "retryScheduled", messageId: "m1@a.example" },
  };

  describe.each([
    ["the live session", () => workerSessionPort(liveWorker)],
    ["the one-shot run, played back", () => workerSessionPort(oneShotWorker)],
  ])("over %s", (_name, port) => {
    it("STATE-2: a step to the next attempt stops at its verdict; Play stops when m1 enters retryScheduled; Play at the end plays the run again", async () => {
      const cli = await runScenarioText(text("receiver-down-past-fallback-window"), {
        file: "scenarios/receiver-down-past-fallback-window.yaml",
      });
      if (!cli.ok) throw new Error("valid");
      const trace = cli.run.trace.events;
      const judged = trace.filter((e) => e.name === "attempt.judged").map((e) => e.seq);
      const retry = trace
        .filter((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled")
        .map((e) => e.seq);
      const actor = startWith(port);
      actor.send(load("receiver-down-past-fallback-window"));
      await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
      actor.send({ type: "SET_LEVEL", level: "attempt" });
      actor.send({ type: "STEP" });
      await waitFor(actor, (s) => s.context.stop !== undefined, { timeout: 10_000 });
      expect(actor.getSnapshot().context.stop).toEqual({ kind: "step", level: "attempt", seq: judged[0] });
      expect(actor.getSnapshot().context.events.at(-1)?.seq).toBe(judged[0]);
      // A breakpoint set while paused is told to the session; Play stops at it, the events up to it shown.
      actor.send({ type: "SET_BREAKPOINTS", breakpoints: [RETRY] });
      actor.send({ type: "SET_SPEED", speed: "max" });
      actor.send({ type: "PLAY" });
      await waitFor(actor, (s) => phaseOf(s) === "paused" && s.context.stop !== undefined, { timeout: 10_000 });
      expect(actor.getSnapshot().context.stop).toEqual({ kind: "breakpoint", id: "retry", seq: retry[0] });
      expect(actor.getSnapshot().context.events.map((e) => e.seq)).toEqual(
        trace.slice(0, (retry[0] ?? 0) + 1).map((e) => e.seq),
      );
      // Cleared, the run plays to its end; Play there plays it again from its start.
      actor.send({ type: "SET_BREAKPOINTS", breakpoints: [] });
      actor.send({ type: "PLAY" });
      await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 10_000 });
      expect(actor.getSnapshot().context.events).toHaveLength(trace.length);
      actor.send({ type: "SET_BREAKPOINTS", breakpoints: [RETRY] });
      actor.send({ type: "PLAY" });
      await waitFor(actor, (s) => phaseOf(s) === "paused" && s.context.stop !== undefined, { timeout: 20_000 });
      expect(actor.getSnapshot().context.stop).toEqual({ kind: "breakpoint", id: "retry", seq: retry[0] });
      expect(actor.getSnapshot().context.events.at(-1)?.seq).toBe(retry[0]);
      expect(actor.getSnapshot().context.result).toBeUndefined();
      actor.stop();
    });
  });
});

describe("a lesson pauses at its notes exactly, and each breakpoint counts its hits", () => {
  describe.each([
    ["the live session", () => workerSessionPort(liveWorker)],
    ["the one-shot run, played back", () => workerSessionPort(oneShotWorker)],
  ])("over %s", (_name, port) => {
    it("STATE-3: at 3600×, paused at the first attempt.judged, at +2:00:00 and at the hand-off: the clock and the last event's seq are the note's", async () => {
      const name = "receiver-down-past-fallback-window";
      const cli = await runScenarioText(text(name), { file: `scenarios/${name}.yaml` });
      if (!cli.ok) throw new Error("valid");
      const trace = cli.run.trace.events;
      const startMs = cli.run.trace.startedAtMs;
      const judged = trace.find((e) => e.name === "attempt.judged");
      const handoff = trace.find((e) => e.name === "smtp.handoff");
      const windowEnd = startMs + 2 * HOUR;
      const lastBy = (t: number) => trace.filter((e) => e.timeMs <= t).at(-1)?.seq;
      if (judged === undefined || handoff === undefined) throw new Error("in the run");

      const actor = startWith(port);
      const stoppedAt = async () => {
        await waitFor(actor, (s) => phaseOf(s) === "paused" && s.context.stop !== undefined, { timeout: 20_000 });
        const { context } = actor.getSnapshot();
        return { stop: context.stop, clock: context.progress?.playheadMs, last: context.events.at(-1)?.seq };
      };
      const counts = () => Object.fromEntries(hitCounts(actor.getSnapshot().context.hits));
      actor.send({ ...load(name), notePauses: true });
      await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
      // The user's own breakpoint stays; the notes join it.
      actor.send({
        type: "SET_BREAKPOINTS",
        breakpoints: [{ id: "bp-1", enabled: false, condition: { kind: "fallback" } }],
      });
      expect(actor.getSnapshot().context.breakpoints.map((b) => b.id)).toEqual(["bp-1"]);
      actor.send({ type: "SET_NOTE_PAUSES", on: true });
      expect(actor.getSnapshot().context.breakpoints.map((b) => b.id)).toEqual(["bp-1", "note-1", "note-2", "note-3"]);
      actor.send({ type: "SET_SPEED", speed: 3600 });

      actor.send({ type: "PLAY" });
      expect(await stoppedAt()).toEqual({
        stop: { kind: "breakpoint", id: "note-1", seq: judged.seq },
        clock: judged.timeMs,
        last: judged.seq,
      });
      // A step after a pause at a note goes to the next event, not the note again.
      actor.send({ type: "STEP" });
      expect(await stoppedAt()).toMatchObject({ stop: { kind: "step", seq: judged.seq + 1 }, last: judged.seq + 1 });
      actor.send({ type: "PLAY" });
      expect(await stoppedAt()).toEqual({
        stop: { kind: "time", id: "note-2", atMs: windowEnd },
        clock: windowEnd,
        last: lastBy(windowEnd),
      });
      actor.send({ type: "PLAY" });
      expect(await stoppedAt()).toEqual({
        stop: { kind: "breakpoint", id: "note-3", seq: handoff.seq },
        clock: handoff.timeMs,
        last: handoff.seq,
      });
      expect(counts()).toEqual({ "note-1": 1, "note-2": 1, "note-3": 1 });

      // Back past two hits: only the stops before the time gone to are counted; played again, note 2 is hit once.
      actor.send({ type: "RUN_TO", timeMs: startMs + HOUR });
      await waitFor(actor, (s) => phaseOf(s) === "paused" && s.context.progress?.playheadMs === startMs + HOUR, {
        timeout: 20_000,
      });
      expect(counts()).toEqual({ "note-1": 1 });
      actor.send({ type: "PLAY" });
      expect(await stoppedAt()).toMatchObject({ stop: { kind: "time", id: "note-2" }, clock: windowEnd });
      expect(counts()).toEqual({ "note-1": 1, "note-2": 1 });

      // Unticked while paused on it, note 2 keeps its hit and stops nothing more; Play goes on to the hand-off.
      const off = actor
        .getSnapshot()
        .context.breakpoints.map((b) => (b.id === "note-2" ? { ...b, enabled: false } : b));
      actor.send({ type: "SET_BREAKPOINTS", breakpoints: off });
      actor.send({ type: "PLAY" });
      expect(await stoppedAt()).toMatchObject({ stop: { kind: "breakpoint", id: "note-3", seq: handoff.seq } });
      expect(counts()).toEqual({ "note-1": 1, "note-2": 1, "note-3": 1 });

      // "Pause at each note" unticked: the notes leave the list (and their hits); the run plays to its end.
      actor.send({ type: "SET_NOTE_PAUSES", on: false });
      expect(actor.getSnapshot().context.breakpoints.map((b) => b.id)).toEqual(["bp-1"]);
      expect(counts()).toEqual({});
      actor.send({ type: "PLAY" });
      await waitFor(actor, (s) => phaseOf(s) === "finished", { timeout: 20_000 });
      // A restart counts afresh; the list is kept as the user left it.
      actor.send({ type: "SET_NOTE_PAUSES", on: true });
      actor.send({ type: "RESTART" });
      await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
      expect(actor.getSnapshot().context.hits).toEqual([]);
      expect(actor.getSnapshot().context.breakpoints.map((b) => b.id)).toEqual(["bp-1", "note-1", "note-2", "note-3"]);
      actor.stop();
    });
  });

  it("a lesson opened from the path lists its notes as breakpoints once ready; another scenario takes them away", async () => {
    const actor = startWith(() => workerSessionPort(liveWorker));
    actor.send({ ...load("receiver-down-past-fallback-window"), notePauses: true });
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    expect(actor.getSnapshot().context.breakpoints.map((b) => [b.id, b.condition.kind])).toEqual([
      ["note-1", "annotation"],
      ["note-2", "annotation"],
      ["note-3", "annotation"],
    ]);
    expect(actor.getSnapshot().context.notePauses).toBe(true);
    actor.send(load("rate-limited-then-down"));
    expect(actor.getSnapshot().context.breakpoints).toEqual([]);
    await waitFor(actor, (s) => phaseOf(s) === "ready", { timeout: 10_000 });
    expect(actor.getSnapshot().context.breakpoints).toEqual([]);
    actor.stop();
  });
});
