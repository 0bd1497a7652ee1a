/**
 * The live session in a real module Worker (app/sim/worker.ts), in Chromium
 * (ARCHITECTURE.md "Determinism", "Where things run"): a run that is paused,
 * stepped, run to a time, resumed and finished gives the trace hash of an
 * uninterrupted run in another worker, and of `runScenarioText` on the page.
 * In Node (no global Worker) the tests are skipped; app/sim/session.test.ts
 * covers the same session without a Worker.
 */
import { describe, expect, it } from "vitest";
import rateLimitedThenDown from "../../scenarios/rate-limited-then-down.yaml?raw";
import { traceHash } from "../trace/exportJson.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { runScenarioText } from "./runScenario.ts";
import type { SessionCommand, SessionMessage } from "./sessionProtocol.ts";

const MAILSCOPE = "session-worker-test";
const FILE = "scenarios/rate-limited-then-down.yaml";
const HOUR = 3_600_000;

type MessageOf<T extends SessionMessage["type"]> = Extract<SessionMessage, { type: T }>;

/** A worker running a session, with the messages it posted. */
function openSession() {
  const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  const messages: SessionMessage[] = [];
  const waiting: { types: readonly string[]; from: number; resolve: (m: SessionMessage) => void }[] = [];
  let failure: string | undefined;
  worker.addEventListener("message", (event: MessageEvent<SessionMessage>) => {
    messages.push(event.data);
    for (const w of [...waiting]) {
      if (w.types.includes(event.data.type)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(event.data);
      }
    }
  });
  worker.addEventListener("error", (event) => {
    failure = event.message;
  });
  return {
    messages,
    send(command: SessionCommand): void {
      worker.postMessage(command);
    },
    /** The first message of one of `types` posted from now on. */
    next<T extends SessionMessage["type"]>(...types: T[]): Promise<MessageOf<T>> {
      if (failure !== undefined) return Promise.reject(new Error(`the worker failed: ${failure}`));
      return new Promise((resolve) =>
        waiting.push({ types, from: messages.length, resolve: resolve as (m: SessionMessage) => void }),
      );
    },
    events(): RecordedEvent[] {
      return messages.flatMap((m) => (m.type === "events" ? m.events : []));
    },
    close(): void {
      worker.terminate();
    },
  };
}

const inBrowser = typeof Worker !== "undefined";

describe.runIf(inBrowser)("the session in a Web Worker gives the trace of an uninterrupted run", () => {
  it("STATE-7, ERR-23 (rate-limited-then-down): played, paused, stepped, run to 1h, resumed, paused, finished — the same hash as one go in another worker and on the page", async () => {
    const onPage = await runScenarioText(rateLimitedThenDown, { file: FILE, mailscope: MAILSCOPE });
    if (!onPage.ok) throw new Error("invalid");
    const expected = await traceHash(onPage.run.trace);

    const whole = openSession();
    const interrupted = openSession();
    try {
      // One go, as fast as possible.
      const wholeReady = whole.next("ready", "invalid", "error");
      whole.send({ type: "start", text: rateLimitedThenDown, file: FILE, mailscope: MAILSCOPE });
      expect((await wholeReady).type).toBe("ready");
      const wholeFinished = whole.next("finished", "error");
      whole.send({ type: "play", speed: "max" });

      // Interrupted at every turn.
      const c = interrupted;
      const ready = c.next("ready", "invalid", "error");
      c.send({ type: "start", text: rateLimitedThenDown, file: FILE, mailscope: MAILSCOPE });
      const readyMessage = await ready;
      if (readyMessage.type !== "ready") throw new Error(JSON.stringify(readyMessage));
      const { startMs } = readyMessage.summary;

      // Real time: a first batch, then pause (five days at 1× cannot end first).
      const firstBatch = c.next("events");
      c.send({ type: "play", speed: 1 });
      await firstBatch;
      let stopped = c.next("paused", "finished", "error");
      c.send({ type: "pause" });
      expect((await stopped).type).toBe("paused");

      for (let i = 0; i < 3; i++) {
        const stepped = c.next("stepped", "error");
        c.send({ type: "step" });
        expect((await stepped).type).toBe("stepped");
      }

      stopped = c.next("paused", "finished", "error");
      c.send({ type: "runTo", timeMs: startMs + HOUR });
      const atHour = await stopped;
      expect(atHour.type === "paused" && atHour.progress.nowMs).toBe(startMs + HOUR);

      // An hour a second: a batch within a retry's gap, then pause (the 5 days left take minutes at this speed).
      const resumedBatch = c.next("events");
      c.send({ type: "setSpeed", speed: 3600 });
      c.send({ type: "resume" });
      await resumedBatch;
      stopped = c.next("paused", "finished", "error");
      c.send({ type: "pause" });
      expect((await stopped).type).toBe("paused");

      const finished = c.next("finished", "error");
      c.send({ type: "finish" });
      const end = await finished;
      const wholeEnd = await wholeFinished;
      if (end.type !== "finished" || wholeEnd.type !== "finished") throw new Error(JSON.stringify([end, wholeEnd]));

      expect(wholeEnd.result.hash).toBe(expected);
      expect(end.result.hash).toBe(expected);
      expect(end.result.passed).toBe(true);
      const events = c.events();
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
      expect(events).toEqual(onPage.run.trace.events);
      expect(whole.events()).toEqual(onPage.run.trace.events);
    } finally {
      whole.close();
      interrupted.close();
    }
  });

  it("a worker answers a bad scenario with invalid (file:line:column), and a command out of turn with an error", async () => {
    const c = openSession();
    try {
      const error = c.next("error");
      c.send({ type: "step" });
      expect(await error).toEqual({ type: "error", message: "Cannot step: no scenario is loaded.", command: "step" });
      const invalid = c.next("invalid", "ready");
      c.send({ type: "start", text: "name: x\n", file: "x.yaml" });
      expect(await invalid).toEqual({ type: "invalid", errors: ["x.yaml:1:1: domains: is required (record)"] });
    } finally {
      c.close();
    }
  });
});
