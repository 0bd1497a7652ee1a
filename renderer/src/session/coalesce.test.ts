import { describe, expect, it } from "vitest";
import type { SessionMessage, SessionProgress } from "../../../app/sim/sessionProtocol.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { coalesceMessages, type FrameScheduler } from "./coalesce.ts";

const progress = (events: number): SessionProgress => ({ nowMs: events, playheadMs: events, events, pendingEvents: 1 });
const event = (seq: number) => ({ seq, timeMs: seq, kind: "test" }) as unknown as RecordedEvent;

/** A frame scheduler the test fires by hand. */
function frames(): { schedule: FrameScheduler; fire(): void; readonly pending: number } {
  let waiting: (() => void)[] = [];
  return {
    schedule(fn) {
      waiting.push(fn);
      return () => (waiting = waiting.filter((w) => w !== fn));
    },
    fire() {
      const now = waiting;
      waiting = [];
      for (const fn of now) fn();
    },
    get pending() {
      return waiting.length;
    },
  };
}

// The run view draws once per frame, whatever the worker's cadence.
describe("coalesceMessages", () => {
  it("hands the batches that came before a frame on as one, with the last progress", () => {
    const out: SessionMessage[] = [];
    const f = frames();
    const c = coalesceMessages((m) => out.push(m), f.schedule);
    c.take({ type: "events", events: [event(1), event(2)], progress: progress(2) });
    c.take({ type: "progress", progress: progress(2) });
    c.take({ type: "events", events: [event(3)], progress: progress(3) });
    expect(out).toEqual([]);
    expect(f.pending).toBe(1);
    f.fire();
    expect(out).toEqual([{ type: "events", events: [event(1), event(2), event(3)], progress: progress(3) }]);
    f.fire();
    expect(out).toHaveLength(1);
  });

  it("hands progress alone on as progress", () => {
    const out: SessionMessage[] = [];
    const f = frames();
    const c = coalesceMessages((m) => out.push(m), f.schedule);
    c.take({ type: "progress", progress: progress(1) });
    c.take({ type: "progress", progress: progress(2) });
    f.fire();
    expect(out).toEqual([{ type: "progress", progress: progress(2) }]);
  });

  it("hands what it holds on before any other message, at once and in order (a run's end is never held back)", () => {
    const out: SessionMessage[] = [];
    const f = frames();
    const c = coalesceMessages((m) => out.push(m), f.schedule);
    c.take({ type: "events", events: [event(1)], progress: progress(1) });
    c.take({ type: "paused", progress: progress(1) });
    expect(out.map((m) => m.type)).toEqual(["events", "paused"]);
    expect(f.pending).toBe(0);
    c.take({ type: "cancelled" });
    expect(out.map((m) => m.type)).toEqual(["events", "paused", "cancelled"]);
  });

  it("drops what it holds when disposed", () => {
    const out: SessionMessage[] = [];
    const f = frames();
    const c = coalesceMessages((m) => out.push(m), f.schedule);
    c.take({ type: "events", events: [event(1)], progress: progress(1) });
    c.dispose();
    f.fire();
    expect(out).toEqual([]);
  });

  it("takes a scheduler that fires at once", () => {
    const out: SessionMessage[] = [];
    const c = coalesceMessages(
      (m) => out.push(m),
      (fn) => {
        fn();
        return () => undefined;
      },
    );
    c.take({ type: "events", events: [event(1)], progress: progress(1) });
    c.take({ type: "events", events: [event(2)], progress: progress(2) });
    expect(out.map((m) => (m.type === "events" ? m.events.length : 0))).toEqual([1, 1]);
  });
});
