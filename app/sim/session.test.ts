/**
 * The live session (app/sim/session.ts) against `mailscope run`
 * (`runScenarioText`): determinism under interruption, the event batches,
 * the summary, and the answers to commands that cannot be obeyed. Nothing
 * here depends on the machine's speed: mid-run pauses come after the first
 * batch (with a wall clock that lets every progress report through) or at a
 * virtual time (runTo).
 */
import { describe, expect, it } from "vitest";
import rateLimitedThenDown from "../../scenarios/rate-limited-then-down.yaml?raw";
import jitterOn from "../../scenarios/gap-G16-jitter-on.yaml?raw";
import g7Enforced from "../../scenarios/gap-G7-enforced.yaml?raw";
import receiverDown from "../../scenarios/receiver-down-past-fallback-window.yaml?raw";
import teachMixed from "../../scenarios/teach-mixed-recipient-results.yaml?raw";
import state7 from "../../scenarios/state-7-failure-after-acceptance-dsn.yaml?raw";
import { traceHash } from "../trace/exportJson.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { runScenarioText } from "./runScenario.ts";
import { DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS } from "./scenario.ts";
import { createSimulationSession, type SimulationSessionOptions } from "./session.ts";
import { FAST_SETTLING } from "./world.ts";
import type { PlaybackSpeed, SessionCommand, SessionMessage, StartCommand } from "./sessionProtocol.ts";
import type { Breakpoint, StepLevel } from "./breakpoints.ts";
import { EML_BYTES, EML_SCENARIO } from "./testing.ts";

const MAILSCOPE = "session-test";
const HOUR = 3_600_000;

type MessageOf<T extends SessionMessage["type"]> = Extract<SessionMessage, { type: T }>;

/** A session with the messages it posted, and a way to wait for one. */
function connect(options: SimulationSessionOptions = {}) {
  const messages: SessionMessage[] = [];
  const waiting: { type: string; from: number; resolve: (m: SessionMessage) => void }[] = [];
  const session = createSimulationSession((message) => {
    messages.push(message);
    for (const w of [...waiting]) {
      if (w.type === message.type && messages.length - 1 >= w.from) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(message);
      }
    }
  }, options);
  return {
    session,
    messages,
    send: (command: SessionCommand) => session.handle(command),
    /** The first message of `type` posted at or after index `from` (now, by default). */
    waitFor<T extends SessionMessage["type"]>(type: T, from = messages.length): Promise<MessageOf<T>> {
      const found = messages.slice(from).find((m) => m.type === type);
      if (found !== undefined) return Promise.resolve(found as MessageOf<T>);
      return new Promise((resolve) => waiting.push({ type, from, resolve: resolve as (m: SessionMessage) => void }));
    },
    last(): SessionMessage | undefined {
      return messages.at(-1);
    },
    /** The trace events the app shows: every batch, in order, less those a jump back dropped. */
    events(): RecordedEvent[] {
      return shownEvents(messages);
    },
    finished(): MessageOf<"finished"> {
      const m = messages.find((x) => x.type === "finished");
      if (m === undefined) throw new Error(`not finished: ${messages.map((x) => x.type).join(", ")}`);
      return m as MessageOf<"finished">;
    },
  };
}

/** The events the app shows after these messages: the batches appended, a `rewound` keeping the first ones it says. */
function shownEvents(messages: readonly SessionMessage[]): RecordedEvent[] {
  let shown: RecordedEvent[] = [];
  for (const m of messages) {
    if (m.type === "events") shown = shown.concat(m.events);
    else if (m.type === "rewound") shown = shown.slice(0, m.progress.events);
  }
  return shown;
}

/** A wall clock that lets every progress report through as a message: batches of one event, pauses after the first. */
function everyReport(): () => number {
  let t = 0;
  return () => (t += 1000);
}

async function reference(text: string, options: Parameters<typeof runScenarioText>[1] = {}) {
  const outcome = await runScenarioText(text, { mailscope: MAILSCOPE, ...options });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  return { run: outcome.run, hash: await traceHash(outcome.run.trace) };
}

/** The batches put together are the trace's events, seqs 0, 1, 2, … with no gap. */
function expectBatchesAreTheTrace(events: readonly RecordedEvent[], trace: readonly RecordedEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  expect(events).toEqual(trace);
}

describe("a live session gives the trace of `mailscope run` (ARCHITECTURE.md Determinism)", () => {
  it("STATE-7, ERR-23 (rate-limited-then-down): played, paused, stepped, run to 1h, resumed, paused, finished — the same trace hash", async () => {
    const file = "scenarios/rate-limited-then-down.yaml";
    const expected = await reference(rateLimitedThenDown, { file });
    const c = connect({ wallClock: everyReport() });

    await c.send({ type: "start", text: rateLimitedThenDown, file, mailscope: MAILSCOPE });
    const ready = c.last();
    expect(ready?.type).toBe("ready");
    if (ready?.type !== "ready") return;
    const { summary } = ready;
    const startMs = summary.startMs;
    expect(summary).toMatchObject({
      name: "rate-limited-then-down",
      file,
      seed: 3,
      horizonMs: startMs + DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS,
      domains: [
        { name: "a.example", receiver: true },
        { name: "b.example", receiver: true },
      ],
      messages: [
        { id: "m1", messageId: "m1@a.example", atMs: startMs, from: "alice@a.example", to: ["bob@b.example"] },
      ],
      faults: [
        {
          id: "rate-limited-once",
          kind: "rate-limited",
          scope: "mx.b.example /v1/messages",
          fromMs: startMs,
          untilMs: startMs + 30_000,
        },
        { id: "b-down", kind: "connection-refused", scope: "mx.b.example", fromMs: startMs + 30_000 },
      ],
    });
    expect(summary.faults[1]).not.toHaveProperty("untilMs");
    // POST-22: each receiver's origin and what its checks read, for the exchange inspector.
    expect(summary.domains[1]?.receiverAt).toMatchObject({
      origin: "https://mx.b.example",
      config: {
        domains: ["b.example"],
        capabilities: { max_recipients: 100 },
        readings: { fromDomainMismatch: "401" },
      },
    });
    expect(summary.readings["G16"]).toBe("jitter=on, fallback-window=2h");

    // Play in real time; pause once the first batch is in.
    let mark = c.messages.length;
    const playing = c.send({ type: "play", speed: 1 });
    await c.waitFor("events", mark);
    await c.send({ type: "pause" });
    await playing;
    expect(c.last()?.type).toBe("paused");

    // Three single events.
    for (let i = 0; i < 3; i++) {
      mark = c.messages.length;
      await c.send({ type: "step" });
      const stepped = await c.waitFor("stepped", mark);
      expect(stepped.label).toEqual(expect.any(String));
      expect(stepped.progress.events).toBe(c.events().length);
    }

    // Run to one hour: paused there, the clock on it.
    await c.send({ type: "runTo", timeMs: startMs + HOUR });
    const atHour = c.last();
    expect(atHour?.type).toBe("paused");
    if (atHour?.type === "paused") {
      expect(atHour.progress.nowMs).toBe(startMs + HOUR);
      expect(atHour.progress.nextEventAtMs).toBeGreaterThan(startMs + HOUR);
    }

    // Resume as fast as possible, pause after the first batch, then finish.
    await c.send({ type: "setSpeed", speed: "max" });
    mark = c.messages.length;
    const resumed = c.send({ type: "resume" });
    await c.waitFor("events", mark);
    await c.send({ type: "pause" });
    await resumed;
    expect(c.last()?.type).toBe("paused");
    await c.send({ type: "finish" });

    const { result, progress } = c.finished();
    expect(c.last()?.type).toBe("finished");
    expect(result.hash).toBe(expected.hash);
    expectBatchesAreTheTrace(c.events(), expected.run.trace.events);
    expect(progress.events).toBe(expected.run.trace.events.length);
    expect(result).toMatchObject({
      passed: true,
      complete: true,
      endMs: expected.run.endMs,
      invariants: expected.run.invariants,
      expectations: expected.run.expectations,
      reproduce: "mailscope run scenarios/rate-limited-then-down.yaml --seed 3",
    });
    const { events: _events, ...head } = expected.run.trace;
    expect(result.trace).toEqual(head);
    // At most one events or progress message per report, and never an empty batch.
    expect(c.messages.filter((m) => m.type === "events" && m.events.length === 0)).toEqual([]);
  });

  it("RETRY-3, STATE-3 (gap-G16-jitter-on, another seed and a --set): stepped, run to, played at 60×, finished while playing — the same trace hash", async () => {
    const file = "scenarios/gap-G16-jitter-on.yaml";
    const options = { seed: 8, readings: [["G16", "jitter=on,fallback-window=3h"]] as [string, string][] };
    const expected = await reference(jitterOn, { file, ...options });
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text: jitterOn, file, mailscope: MAILSCOPE, ...options });
    const ready = c.last();
    if (ready?.type !== "ready") throw new Error(`not ready: ${JSON.stringify(ready)}`);
    expect(ready.summary.readings["G16"]).toBe("jitter=on, fallback-window=3h");
    expect(ready.summary.faults.map((f) => [f.id, f.kind, f.scope, f.untilMs! - f.fromMs])).toEqual([
      ["b-down", "connection-refused", "mx.b.example", 3 * HOUR],
      ["c-down", "connection-refused", "mx.c.example", 3 * HOUR],
      ["d-down", "connection-refused", "mx.d.example", 3 * HOUR],
    ]);
    const startMs = ready.summary.startMs;

    for (let i = 0; i < 5; i++) await c.send({ type: "step" });
    await c.send({ type: "runTo", timeMs: startMs + 30 * 60_000 });
    await c.send({ type: "runTo", timeMs: startMs + 30 * 60_000 }); // already there: nothing to run, paused again
    expect(c.messages.filter((m) => m.type === "paused")).toHaveLength(2);

    // At 60×, the next retry is seconds of wall time away: speed up in the middle of the wait, pause after its batch.
    let mark = c.messages.length;
    const playing = c.send({ type: "play", speed: 60 });
    await c.waitFor("progress", mark);
    await c.send({ type: "setSpeed", speed: 86_400_000 });
    await c.waitFor("events", mark);
    await c.send({ type: "pause" });
    await playing;

    mark = c.messages.length;
    const again = c.send({ type: "play", speed: "max" });
    await c.waitFor("events", mark);
    await c.send({ type: "finish" }); // while running: the rest at full speed, then the checks
    await again;

    const { result } = c.finished();
    expect(result.hash).toBe(expected.hash);
    expect(result.passed).toBe(expected.run.passed);
    expectBatchesAreTheTrace(c.events(), expected.run.trace.events);
    expect(result.reproduce).toBe(expected.run.reproduce);
  });

  it("G7 (gap-G7-enforced, DNS changes at +1h and +2h30m): stepped, run to +2h, finished — the same trace, dns.changed included", async () => {
    const file = "scenarios/gap-G7-enforced.yaml";
    const expected = await reference(g7Enforced, { file });
    expect(expected.run.trace.events.filter((e) => e.name === "dns.changed").length).toBeGreaterThan(0);
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text: g7Enforced, file, mailscope: MAILSCOPE });
    const ready = c.last();
    if (ready?.type !== "ready") throw new Error(`not ready: ${JSON.stringify(ready)}`);
    for (let i = 0; i < 3; i++) await c.send({ type: "step", level: "attempt" });
    // Three attempts go past +2h here (at +0:00:00, +2:00:00, +2:01:00): +2h is a jump back, the run built again.
    const stepped = c.messages.at(-1);
    expect(stepped?.type === "stepped" && stepped.progress.nowMs).toBeGreaterThan(ready.summary.startMs + 2 * HOUR);
    await c.send({ type: "runTo", timeMs: ready.summary.startMs + 2 * HOUR });
    expect(c.messages.filter((m) => m.type === "rewound")).toHaveLength(1);
    await c.send({ type: "finish" });
    const { result } = c.finished();
    expect(result.hash).toBe(expected.hash);
    expectBatchesAreTheTrace(c.events(), expected.run.trace.events);
  });

  it("played uninterrupted as fast as possible, with the real wall clock: the same trace; batches carry every event once", async () => {
    const file = "scenarios/rate-limited-then-down.yaml";
    const expected = await reference(rateLimitedThenDown, { file });
    const c = connect();
    await c.send({ type: "start", text: rateLimitedThenDown, file, mailscope: MAILSCOPE });
    await c.send({ type: "play", speed: "max" });
    expect(c.finished().result.hash).toBe(expected.hash);
    expectBatchesAreTheTrace(c.events(), expected.run.trace.events);
  });

  it("batches: no message before a frame of wall time has passed — with the wall clock stopped, a whole run is one batch at its end", async () => {
    const file = "scenarios/rate-limited-then-down.yaml";
    const expected = await reference(rateLimitedThenDown, { file });
    const c = connect({ wallClock: () => 0 });
    await c.send({ type: "start", text: rateLimitedThenDown, file, mailscope: MAILSCOPE });
    await c.send({ type: "play", speed: "max" });
    expect(c.messages.map((m) => m.type)).toEqual(["ready", "events", "finished"]);
    expectBatchesAreTheTrace(c.events(), expected.run.trace.events);
  });

  it("a run cut short by its horizon ends there, incomplete, as `mailscope run` ends it", async () => {
    const text = rateLimitedThenDown.replace("seed: 3", "seed: 3\nhorizon: 1h");
    const expected = await reference(text);
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text, mailscope: MAILSCOPE });
    await c.send({ type: "play", speed: "max" });
    const { result, progress } = c.finished();
    expect(result).toMatchObject({ complete: false, passed: false, endMs: expected.run.endMs, hash: expected.hash });
    expect(progress.nowMs).toBe(expected.run.endMs);
    // Stepping to the end finishes the run as well.
    const stepped = connect();
    await stepped.send({ type: "start", text, mailscope: MAILSCOPE });
    while (stepped.session.phase !== "finished") await stepped.send({ type: "step" });
    expect(stepped.finished().result.hash).toBe(expected.hash);
  });
});

describe("seeking backwards: a jump to an earlier time lands where a run from the start to that time lands", () => {
  const MINUTE = 60_000;
  const DAY = 24 * HOUR;
  const cases: [name: string, text: string, later: number | "end", earlier: number][] = [
    // STATE-7: five days of retries and a bounce; back from +3d to +1d (a jump back over days of retries).
    ["rate-limited-then-down", rateLimitedThenDown, 3 * DAY, DAY],
    // STATE-3: the hand-off after the fallback window; back from after it to before it.
    ["receiver-down-past-fallback-window", receiverDown, 3 * HOUR, 90 * MINUTE],
    // RCP-2, STATE-9: per-recipient results, a deferral, a DSN; back from the end of the run.
    ["teach-mixed-recipient-results", teachMixed, "end", 5 * MINUTE],
    // G7: DNS changes at +1h and +2h30m; back across the second.
    ["gap-G7-enforced", g7Enforced, 3 * HOUR, 2 * HOUR],
    // STATE-8: a failure after acceptance and its DSN; back to the instant of an event.
    ["state-7-failure-after-acceptance-dsn", state7, "end", 0],
  ];

  it.each(cases)(
    "%s: the same events, last seq, clock and queue as a forward run; then the same trace to the end",
    async (name, text, later, earlier) => {
      const file = `scenarios/${name}.yaml`;
      const expected = await reference(text, { file });
      const forward = connect();
      await forward.send({ type: "start", text, file, mailscope: MAILSCOPE });
      const startMs = (forward.messages[0] as MessageOf<"ready">).summary.startMs;
      await forward.send({ type: "runTo", timeMs: startMs + earlier });
      const there = forward.last();
      expect(there?.type).toBe("paused");

      const back = connect();
      await back.send({ type: "start", text, file, mailscope: MAILSCOPE });
      await back.send(later === "end" ? { type: "finish" } : { type: "runTo", timeMs: startMs + later });
      const before = shownEvents(back.messages).length;
      const mark = back.messages.length;
      await back.send({ type: "runTo", timeMs: startMs + earlier });
      const posted = back.messages.slice(mark);
      expect(posted[0]).toMatchObject({ type: "rewound", progress: { nowMs: startMs, events: 0 } });
      expect(posted.at(-1)).toEqual(there);
      expect(posted.some((m) => m.type === "error" || m.type === "finished")).toBe(false);
      const shown = shownEvents(back.messages);
      expect(shown.length).toBeLessThan(before);
      expect(shown).toEqual(shownEvents(forward.messages));
      expect(shown.at(-1)?.seq).toBe(shownEvents(forward.messages).at(-1)?.seq);
      expect(back.session.phase).toBe("paused");

      // Played on from there, the run is the run of `mailscope run`.
      await back.send({ type: "resume", speed: "max" });
      expect(back.last()?.type).toBe("finished");
      const finished = back.messages.filter((m) => m.type === "finished");
      expect((finished.at(-1) as MessageOf<"finished">).result.hash).toBe(expected.hash);
      expectBatchesAreTheTrace(shownEvents(back.messages), expected.run.trace.events);
    },
  );

  it("a jump while playing takes the run over: ahead, then back, each landing where a forward run lands", async () => {
    const file = "scenarios/rate-limited-then-down.yaml";
    const expected = await reference(rateLimitedThenDown, { file });
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text: rateLimitedThenDown, file, mailscope: MAILSCOPE });
    const startMs = (c.messages[0] as MessageOf<"ready">).summary.startMs;
    const at = (ms: number) => expected.run.trace.events.filter((e) => e.timeMs <= startMs + ms);

    // Playing in real time: a jump ahead to +2h runs there as fast as possible and pauses.
    let mark = c.messages.length;
    const playing = c.send({ type: "play", speed: 1 });
    await c.waitFor("events", mark);
    await c.send({ type: "runTo", timeMs: startMs + 2 * HOUR });
    await playing;
    expect(c.last()).toMatchObject({ type: "paused", progress: { nowMs: startMs + 2 * HOUR } });
    expect(shownEvents(c.messages)).toEqual(at(2 * HOUR));

    // Playing again: a jump back to +30m.
    mark = c.messages.length;
    const again = c.send({ type: "play", speed: 1 });
    await c.waitFor("progress", mark);
    await c.send({ type: "runTo", timeMs: startMs + 30 * 60_000 });
    await again;
    expect(c.messages.slice(mark).filter((m) => m.type === "rewound")).toHaveLength(1);
    expect(c.last()).toMatchObject({ type: "paused", progress: { nowMs: startMs + 30 * 60_000 } });
    expect(shownEvents(c.messages)).toEqual(at(30 * 60_000));
    await c.send({ type: "finish" });
    expect(c.finished().result.hash).toBe(expected.hash);
  });

  it("a pause interrupts a long jump, forward or back: paused where it got to, the events those of a forward run", async () => {
    const file = "scenarios/rate-limited-then-down.yaml";
    const expected = await reference(rateLimitedThenDown, { file });
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text: rateLimitedThenDown, file, mailscope: MAILSCOPE });
    const startMs = (c.messages[0] as MessageOf<"ready">).summary.startMs;
    for (const target of [5 * 24 * HOUR, HOUR]) {
      // The first jump goes ahead from the start; the second back from where the first was paused, then ahead.
      if (target === HOUR) await c.send({ type: "runTo", timeMs: startMs + 4 * 24 * HOUR });
      const mark = c.messages.length;
      const jumping = c.send({ type: "runTo", timeMs: startMs + (target === HOUR ? 4.5 * 24 * HOUR : target) });
      await c.waitFor("events", mark);
      expect(c.session.phase).toBe("running");
      await c.send({ type: "pause" });
      await jumping;
      const paused = c.last();
      if (paused?.type !== "paused") throw new Error(`not paused: ${paused?.type}`);
      expect(paused.progress.nowMs).toBeLessThan(startMs + 4.5 * 24 * HOUR);
      const shown = shownEvents(c.messages);
      expect(shown).toEqual(expected.run.trace.events.slice(0, shown.length));
      expect(paused.progress.events).toBe(shown.length);
    }
    await c.send({ type: "finish" });
    expect(c.finished().result.hash).toBe(expected.hash);
  });

  it("resume plays at the speed it carries (after a jump it played at 1× whatever the app showed)", async () => {
    // Host timers that answer at once and note the wall time asked for: the playhead moves speed × that.
    const waits: number[] = [];
    const host = {
      setTimeout: (fn: () => void, delayMs: number) => {
        waits.push(delayMs);
        return setTimeout(fn, 0);
      },
    };
    const c = connect({ wallClock: everyReport(), scheduler: { ...FAST_SETTLING, host } });
    await c.send({ type: "start", text: receiverDown, mailscope: MAILSCOPE });
    const startMs = (c.messages[0] as MessageOf<"ready">).summary.startMs;
    await c.send({ type: "runTo", timeMs: startMs + 30 * 60_000 });
    const speedOf = async (command: SessionCommand): Promise<number> => {
      const fromMs = (c.last() as MessageOf<"paused">).progress.playheadMs;
      waits.length = 0;
      const playing = c.send(command);
      for (let i = 0; i < 3; i++) await c.waitFor("progress", c.messages.length);
      await c.send({ type: "pause" });
      await playing;
      const paused = c.last() as MessageOf<"paused">;
      return (paused.progress.playheadMs - fromMs) / waits.reduce((a, b) => a + b, 0);
    };
    expect(await speedOf({ type: "resume", speed: 60 })).toBeCloseTo(60, 6);
    expect(await speedOf({ type: "resume" })).toBeCloseTo(60, 6); // the last speed given
    expect(await speedOf({ type: "resume", speed: 3600 })).toBeCloseTo(3600, 6);
  });
});

describe("a session's answers to what it cannot do", () => {
  const HAPPY = `name: happy
seed: 11
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
network: { latency: 100 }
expectations:
  - { message: m1, recipient: bob@b.example, outcome: accepted, within: 10s }
`;

  it("commands invalid in the current state are answered with an error in the user's words, and the session stays as it was", async () => {
    const expected = await reference(HAPPY);
    const c = connect();
    const errors: string[] = [];
    const errorOf = async (command: SessionCommand): Promise<string> => {
      const mark = c.messages.length;
      await c.send(command);
      const posted = c.messages.slice(mark);
      expect(posted).toEqual([{ type: "error", message: expect.any(String), command: expect.any(String) }]);
      const { message } = posted[0] as MessageOf<"error">;
      errors.push(message);
      return message;
    };

    expect(await errorOf({ type: "play", speed: 1 })).toBe("Cannot play: no scenario is loaded.");
    expect(await errorOf({ type: "cancel" })).toBe("Cannot stop the run: no scenario is loaded.");
    expect(await errorOf({ type: "launch" } as unknown as SessionCommand)).toBe(
      'Unknown command "launch": this session knows no such command.',
    );
    await c.send(null as unknown as SessionCommand);
    expect(c.last()).toEqual({ type: "error", message: "A command is an object with a type, not null." });
    expect(await errorOf({ type: "start" } as unknown as SessionCommand)).toBe(
      "Cannot start a run: text is the scenario's YAML, a string.",
    );

    await c.send({ type: "start", text: HAPPY, mailscope: MAILSCOPE });
    expect(c.last()?.type).toBe("ready");
    expect(await errorOf({ type: "start", text: HAPPY })).toBe(
      "Cannot start a run: a run is in progress (ready); stop it first.",
    );
    expect(await errorOf({ type: "pause" })).toBe("Cannot pause: nothing is playing.");
    expect(await errorOf({ type: "play", speed: 0 })).toBe(
      'Cannot play: a speed is a number > 0 (virtual ms per wall ms) or "max", not 0.',
    );
    expect(await errorOf({ type: "setSpeed", speed: "fast" as unknown as number })).toMatch(
      /^Cannot change the speed: a speed is/,
    );
    expect(await errorOf({ type: "resume", speed: -1 })).toMatch(/^Cannot play on: a speed is/);
    expect(await errorOf({ type: "runTo", timeMs: Number.NaN })).toBe(
      "Cannot jump to a time: a time is a number of ms since the epoch, not NaN.",
    );

    // While playing (slowly: 100 ms of latency take 100 s of wall time): no step, no second play.
    const mark = c.messages.length;
    const playing = c.send({ type: "play", speed: 0.001 });
    await Promise.resolve();
    expect(c.session.phase).toBe("running");
    expect(await errorOf({ type: "step" })).toBe("Cannot step: the run is playing; pause it first.");
    expect(await errorOf({ type: "play", speed: 2 })).toBe("Cannot play: the run is playing; pause it first.");
    await c.send({ type: "finish" });
    await playing;
    expect(c.messages.slice(mark).some((m) => m.type === "finished")).toBe(true);
    expect(c.finished().result.hash).toBe(expected.hash);

    expect(await errorOf({ type: "step" })).toBe("Cannot step: the run is over; restart it to run it again.");
    // From the end, a jump goes back only (a jump back is run again from the start: see the tests of seeking).
    expect(await errorOf({ type: "runTo", timeMs: c.finished().result.endMs })).toMatch(
      /^Cannot jump to a time: the run is over at \+0:00:00\.\d{3}: nothing happens after its end; jump to an earlier time\.$/,
    );
    await c.send({ type: "cancel" });
    expect(c.last()).toEqual({ type: "cancelled" });
    expect(await errorOf({ type: "resume" })).toBe("Cannot play on: the run was stopped; start another.");
    // Said for the person at the controls: no command name of the protocol, no ISO timestamp.
    for (const message of errors) {
      expect(message).not.toMatch(/\b(runTo|setSpeed|resume|finish|cancel)\b|\d{4}-\d\d-\d\dT\d\d:/);
    }
    // A new run may start after a cancel.
    await c.send({ type: "start", text: HAPPY, mailscope: MAILSCOPE });
    expect(c.last()?.type).toBe("ready");
  });

  it("cancel stops a running run: cancelled, and nothing after it", async () => {
    const c = connect({ wallClock: everyReport() });
    await c.send({ type: "start", text: rateLimitedThenDown, mailscope: MAILSCOPE });
    const playing = c.send({ type: "play", speed: 1 });
    await c.waitFor("events");
    await c.send({ type: "cancel" });
    await playing;
    expect(c.last()).toEqual({ type: "cancelled" });
    expect(c.messages.some((m) => m.type === "paused" || m.type === "finished")).toBe(false);
    expect(c.session.phase).toBe("cancelled");
  });

  it("a bad scenario is answered with invalid: file:line:column: field: message, as the CLI prints it", async () => {
    const c = connect();
    await c.send({ type: "start", text: "name: x\ndomains: {}\nfoo: 1\n", file: "bad.yaml" });
    expect(c.last()).toEqual({
      type: "invalid",
      errors: expect.arrayContaining([
        'bad.yaml:3:1: foo: unknown field "foo" (the fields are name, description, title, lesson, annotations, seed, start, horizon, problemBase, readings, constants, network, dns, domains, messages, faults, expectations)',
      ]),
    });
    await c.send({ type: "start", text: HAPPY, file: "x.yaml", readings: [["G12", "sometimes"]] });
    expect(c.last()).toEqual({
      type: "invalid",
      errors: ['x.yaml:1:1: (scenario): G12: G12 reads "split" or "send-whole", not "sometimes"'],
    });
    // Still startable.
    await c.send({ type: "start", text: HAPPY });
    expect(c.last()?.type).toBe("ready");
  });
});

describe("what the app hands over and asks for", () => {
  it("POST-9: an eml: scenario runs with the bytes the app gives, as `mailscope run` runs it from disk", async () => {
    const expected = await reference(EML_SCENARIO, {
      file: "raw.yaml",
      readFile: (path: string) =>
        path === "mail/hello.eml" ? Promise.resolve(EML_BYTES) : Promise.reject(new Error(path)),
    });
    const c = connect();
    const start: StartCommand = {
      type: "start",
      text: EML_SCENARIO,
      file: "raw.yaml",
      mailscope: MAILSCOPE,
      emls: { "mail/hello.eml": EML_BYTES },
    };
    await c.send(start);
    const ready = c.last();
    expect(ready?.type === "ready" && ready.summary.messages[0]?.messageId).toBe("hello@a.example");
    await c.send({ type: "finish" });
    const { result } = c.finished();
    expect(result.passed).toBe(true);
    expect(result.hash).toBe(expected.hash);

    const missing = connect();
    await missing.send({ ...start, emls: {} });
    expect(missing.last()).toEqual({
      type: "invalid",
      errors: [
        "raw.yaml:6:62: messages[0].eml: cannot read mail/hello.eml: its bytes were not given with the scenario: the app does not read eml: files (mailscope run does; a bug bundle it writes with --bundle carries them)",
      ],
    });
  });

  it("an eml: path the shell could not read: the run says why at the message's eml field (emlErrors)", async () => {
    const c = connect();
    await c.send({
      type: "start",
      text: EML_SCENARIO,
      file: "raw.yaml",
      emls: {},
      emlErrors: { "mail/hello.eml": "no such file (/home/u/mail/hello.eml)" },
    });
    expect(c.last()).toEqual({
      type: "invalid",
      errors: ["raw.yaml:6:62: messages[0].eml: cannot read mail/hello.eml: no such file (/home/u/mail/hello.eml)"],
    });
    const bad = connect();
    await bad.send({
      type: "start",
      text: EML_SCENARIO,
      emlErrors: { "mail/hello.eml": 7 },
    } as unknown as StartCommand);
    expect(bad.last()).toMatchObject({ type: "error" });
  });

  it("recordBodies keeps whole HTTP bodies in the trace (the inspector shows them); without it, none", async () => {
    const bodies = async (recordBodies: boolean) => {
      const c = connect();
      await c.send({ type: "start", text: EML_SCENARIO, emls: { "mail/hello.eml": EML_BYTES }, recordBodies });
      await c.send({ type: "play", speed: "max" });
      return c.events().filter((e) => e.name === "http.request" && e.data?.["body"] !== undefined);
    };
    const kept = await bodies(true);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.some((e) => String(e.data?.["body"]).includes("Hi Bob"))).toBe(true);
    expect(await bodies(false)).toEqual([]);
  });
});

describe("steps and breakpoints stop at one trace event, the same whatever the speed", () => {
  // Host timers that answer at once: a play at 60× or 1× waits no wall time, yet its virtual pace is the one asked.
  // Waits of up to 10 minutes of wall time each (a frame's worth of virtual time at the speed), every report posted.
  const at = (): SimulationSessionOptions => {
    let wall = 0;
    return {
      wallClock: () => (wall += 600_000),
      frameMs: 600_000,
      scheduler: { ...FAST_SETTLING, host: { setTimeout: (fn: () => void) => setTimeout(fn, 0) } },
    };
  };
  const file = "scenarios/receiver-down-past-fallback-window.yaml";
  const RETRY: Breakpoint = {
    id: "retry",
    enabled: true,
    condition: { kind: "state", state: "retryScheduled", messageId: "m1@a.example" },
  };
  const JUDGED: Breakpoint = { id: "judged", enabled: true, condition: { kind: "event", name: "attempt.judged" } };

  /** Plays to the end at `speed`, on again after each stop: where each stop left the run. */
  async function stopsAt(speed: PlaybackSpeed, breakpoints: readonly Breakpoint[]) {
    const c = connect(at());
    await c.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
    await c.send({ type: "setBreakpoints", breakpoints });
    const stops: { stop: unknown; lastSeq: number | undefined; events: number; held: number | undefined }[] = [];
    await c.send({ type: "play", speed });
    while (c.session.phase !== "finished") {
      const paused = c.last();
      if (paused?.type !== "paused") throw new Error(`not paused: ${paused?.type}`);
      stops.push({
        stop: paused.stop,
        lastSeq: c.events().at(-1)?.seq,
        events: paused.progress.events,
        held: paused.progress.held,
      });
      await c.send({ type: "resume", speed });
    }
    return { stops, hash: c.finished().result.hash, events: c.events() };
  }

  it("STATE-2: 'pause when m1 enters retryScheduled' and 'every attempt.judged' stop at their events at max, 60× and 1×, the rest held back", async () => {
    const expected = await reference(receiverDown, { file });
    const trace = expected.run.trace.events;
    const judged = trace.filter((e) => e.name === "attempt.judged").map((e) => e.seq);
    const retry = trace.filter((e) => e.name === "machine.transition" && e.data?.["to"] === "retryScheduled");
    const want = [
      ...judged.map((seq) => ({ kind: "breakpoint", id: "judged", seq })),
      ...retry.map((e) => ({ kind: "breakpoint", id: "retry", seq: e.seq })),
    ].sort((a, b) => a.seq - b.seq);
    expect(want).toHaveLength(15);
    const runs = await Promise.all((["max", 60, 1] as const).map((speed) => stopsAt(speed, [RETRY, JUDGED])));
    for (const run of runs) {
      expect(run.stops.map((s) => s.stop)).toEqual(want);
      // Each stop shows the events up to its event and none after: the last seq is the breakpoint's.
      expect(run.stops.map((s) => s.lastSeq)).toEqual(want.map((w) => w.seq));
      expect(run.stops.map((s) => s.events)).toEqual(want.map((w) => w.seq + 1));
      expect(run.hash).toBe(expected.hash);
      expectBatchesAreTheTrace(run.events, trace);
    }
    expect(runs[1]?.stops).toEqual(runs[0]?.stops);
    expect(runs[2]?.stops).toEqual(runs[0]?.stops);
    // The attempt's verdict and the decisions after it are one event of the simulation: the stop holds them back.
    expect(runs[0]?.stops[0]?.held).toBeGreaterThan(0);
  });

  it("a disabled breakpoint stops nothing; a jump and 'run to the end' stop at none", async () => {
    const off = await stopsAt("max", [{ ...RETRY, enabled: false }]);
    expect(off.stops).toEqual([]);
    const c = connect(at());
    await c.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
    await c.send({ type: "setBreakpoints", breakpoints: [RETRY, JUDGED] });
    const startMs = (c.messages[0] as MessageOf<"ready">).summary.startMs;
    await c.send({ type: "runTo", timeMs: startMs + HOUR });
    expect(c.last()).toMatchObject({ type: "paused", progress: { nowMs: startMs + HOUR } });
    expect((c.last() as MessageOf<"paused">).stop).toBeUndefined();
    await c.send({ type: "finish" });
    expect(c.last()?.type).toBe("finished");
  });

  it("the fallback window's end as a breakpoint at +2:00:00: paused there at 60× and at max, as a jump there leaves the run", async () => {
    const window: Breakpoint = { id: "window", enabled: true, condition: { kind: "time", atMs: 0 } };
    const landed = await Promise.all(
      (["max", 60] as const).map(async (speed) => {
        const c = connect(at());
        await c.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
        const startMs = (c.messages[0] as MessageOf<"ready">).summary.startMs;
        const atMs = startMs + 2 * HOUR;
        await c.send({ type: "setBreakpoints", breakpoints: [{ ...window, condition: { kind: "time", atMs } }] });
        await c.send({ type: "play", speed });
        const paused = c.last() as MessageOf<"paused">;
        expect(paused.stop).toEqual({ kind: "time", id: "window", atMs });
        expect(paused.progress.nowMs).toBe(atMs);
        return c.events();
      }),
    );
    const jump = connect();
    await jump.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
    const startMs = (jump.messages[0] as MessageOf<"ready">).summary.startMs;
    await jump.send({ type: "runTo", timeMs: startMs + 2 * HOUR });
    expect(landed[0]).toEqual(jump.events());
    expect(landed[1]).toEqual(jump.events());
  });

  it("steps: the next event one at a time inside one event of the simulation, the next attempt's verdict, the next decision", async () => {
    const expected = await reference(receiverDown, { file });
    const trace = expected.run.trace.events;
    const c = connect();
    await c.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
    const step = async (level: StepLevel) => {
      await c.send({ type: "step", level });
      const stepped = c.last();
      if (stepped?.type !== "stepped") throw new Error(`not stepped: ${stepped?.type}`);
      return { stop: stepped.stop, label: stepped.label, last: c.events().at(-1)?.seq };
    };
    for (const seq of [0, 1, 2]) {
      expect(await step("event")).toEqual({
        stop: { kind: "step", level: "event", seq },
        label: trace[seq]?.name,
        last: seq,
      });
    }
    const judged = trace.filter((e) => e.name === "attempt.judged").map((e) => e.seq);
    const decisions = trace.filter((e) => e.name === "machine.transition").map((e) => e.seq);
    expect(await step("attempt")).toMatchObject({ stop: { level: "attempt", seq: judged[0] }, last: judged[0] });
    expect(await step("decision")).toMatchObject({ stop: { level: "decision", seq: decisions[0] } });
    expect(await step("decision")).toMatchObject({ stop: { level: "decision", seq: decisions[1] } });
    expect(await step("attempt")).toMatchObject({ stop: { level: "attempt", seq: judged[1] } });
    // The shown events are the trace's, up to the step's event.
    expect(c.events()).toEqual(trace.slice(0, (judged[1] ?? 0) + 1));
    // A step without a level is a step to the next event.
    await c.send({ type: "step" });
    expect(c.events().at(-1)?.seq).toBe((judged[1] ?? 0) + 1);
  });

  it("a step that finds no attempt before the end stops at the end and says so; the next step ends the run, same hash", async () => {
    const expected = await reference(receiverDown, { file });
    const c = connect();
    await c.send({ type: "start", text: receiverDown, file, mailscope: MAILSCOPE });
    let stepped: MessageOf<"stepped"> | undefined;
    for (let i = 0; i < 9; i++) {
      await c.send({ type: "step", level: "attempt" });
      stepped = c.last() as MessageOf<"stepped">;
      if (i < 8) expect(stepped.progress.atEnd).toBe(false);
    }
    // Eight attempts; the ninth step found none: the hand-off and the outcome are shown, the run is not over.
    expect(stepped?.stop).toEqual({ kind: "end", level: "attempt" });
    expect(stepped?.progress.atEnd).toBe(true);
    expect(c.session.phase).toBe("paused");
    expect(c.messages.some((m) => m.type === "finished")).toBe(false);
    expect(c.events().some((e) => e.name === "smtp.handoff")).toBe(true);
    await c.send({ type: "step", level: "attempt" });
    expect(c.last()?.type).toBe("finished");
    expect(c.finished().result.hash).toBe(expected.hash);
  });

  it("refusals in the user's words: a bad list of breakpoints, an unknown step level", async () => {
    const c = connect();
    await c.send({
      type: "setBreakpoints",
      breakpoints: [{ id: "x", enabled: true, condition: { kind: "rule" } }],
    } as never);
    expect(c.last()).toEqual({
      type: "error",
      message: "Cannot set the breakpoints: breakpoint 1: a rule breakpoint names a rule or a gap.",
      command: "setBreakpoints",
    });
    await c.send({ type: "start", text: receiverDown, mailscope: MAILSCOPE });
    await c.send({ type: "step", level: "message" } as never);
    expect(c.last()).toEqual({
      type: "error",
      message: 'Cannot step: a step goes to the next event, attempt, decision, not "message".',
      command: "step",
    });
  });
});
