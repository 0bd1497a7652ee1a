import { describe, expect, it } from "vitest";
import { createActor, waitFor } from "xstate";
import { handleWorkerRequest, type WorkerRequest } from "../../../app/sim/worker.ts";
import type { SessionCommand, SessionMessage } from "../../../app/sim/sessionProtocol.ts";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import { phaseOf, playbackMachine } from "./machine.ts";
import { workerSessionPort, type SessionPort, type WorkerLike } from "./port.ts";
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
      { type: "resume" },
      { type: "pause" },
      { type: "step" },
      { type: "runTo", timeMs: 5 },
      { type: "finish" },
    ]);
    // A refusal is said, the session goes on.
    listener?.({ type: "error", message: "step: the session is playing" });
    expect(actor.getSnapshot().context.notice).toBe("step: the session is playing");
    expect(phaseOf(actor.getSnapshot())).toBe("playing");
    actor.send({ type: "RESTART", seed: 7 });
    expect(disposed).toBe(1);
    expect(sent.at(-1)).toMatchObject({ type: "start", seed: 7 });
    actor.stop();
    expect(disposed).toBe(2);
  });
});
