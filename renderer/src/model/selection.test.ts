/**
 * The run view's selection (selecting in one view selects it in all): the attempt an event belongs to, found
 * through the run's index, is the attempt's mark on the whole timeline (RETRY-1: attempts of one delivery,
 * numbered from 1), on every bundled scenario; and each way of selecting selects the same things.
 */
import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { attemptAt, NO_SELECTION, selectionReducer, type Selection, type SelectionAction } from "./selection.ts";
import { scenarioTrace } from "./testing.ts";
import { attemptMarkAt, buildTimeline } from "./timeline.ts";

const scenarioFiles = import.meta.glob<string>("../../../scenarios/*.yaml", { query: "?raw", import: "default" });
const SCENARIOS = Object.keys(scenarioFiles).map((f) => f.replace(/^.*\/(.*)\.yaml$/, "$1"));

const actorOf = (e: RecordedEvent | undefined) => {
  const actor = e?.data?.["deliveryActor"];
  return typeof actor === "string" ? actor : undefined;
};

const reduce = (actions: readonly SelectionAction[], from: Selection = NO_SELECTION) =>
  actions.reduce(selectionReducer, from);

describe("the attempt a moment of a delivery belongs to", () => {
  it.each(SCENARIOS)("%s: is the timeline's attempt mark, read from the delivery's events alone", async (name) => {
    const t = await scenarioTrace(name);
    const timeline = buildTimeline(t.events, t.startedAtMs);
    const moments = t.events.flatMap((e) => {
      const actor = actorOf(e);
      return actor === undefined ? [] : [{ actor, timeMs: e.timeMs }];
    });
    // Before the run, each moment of each delivery (every transition, attempt and timer), and no delivery.
    const before = [...new Set(moments.map((m) => m.actor))].map((actor) => ({ actor, timeMs: t.startedAtMs - 1 }));
    const none = { actor: "no such actor", timeMs: t.events.at(-1)?.timeMs ?? 0 };
    for (const { actor, timeMs } of [...before, ...moments, none]) {
      const mark = attemptMarkAt(timeline, actor, timeMs);
      const found = attemptAt(t.events, actor, timeMs);
      expect(found, `${actor} at ${timeMs}`).toEqual(
        mark && { id: mark.id, lane: mark.lane, seq: mark.seq, attempt: mark.attempt, exchangeIds: mark.exchangeIds },
      );
    }
  });
});

describe("selecting in one view selects it in all", async () => {
  const t = await scenarioTrace("rate-limited-then-down");
  const actor = "m1@a.example→b.example";
  const events = t.events;
  const judged = events.filter((e) => e.name === "attempt.judged" && actorOf(e) === actor);
  const second = judged[1]!;
  // A request of the second attempt: an event with an exchange.
  const request = events.find((e) => e.name === "http.request" && e.seq < second.seq && e.seq > judged[0]!.seq)!;

  it("a log line selects its event and its exchange; a request names no delivery, so the attempt stays", () => {
    const before = reduce([{ type: "mark", mark: attemptAt(events, actor, t.startedAtMs) }]);
    const s = reduce([{ type: "event", event: request, events }], before);
    expect(s.seq).toBe(request.seq);
    expect(s.exchanges).toEqual([request.data?.["exchangeId"]]);
    expect(s.mark).toBe(before.mark);
  });

  it("a log line of a delivery's event selects the attempt it happened in", () => {
    const s = reduce([{ type: "event", event: second, events }]);
    expect(s).toMatchObject({
      seq: second.seq,
      mark: { id: `a:${actor}:2`, attempt: 2, lane: actor, seq: second.seq },
    });
  });

  it("an event without an exchange shows its attempt's exchanges in the inspector", () => {
    const timer = events.find((e) => e.name === "timer.set" && actorOf(e) === actor && e.seq > second.seq)!;
    const s = reduce([{ type: "event", event: timer, events }]);
    expect(s.seq).toBe(timer.seq);
    expect(s.mark?.attempt).toBe(2);
    expect(s.exchanges).toEqual(s.mark?.exchangeIds);
    expect(s.exchanges.length).toBeGreaterThan(0);
  });

  it("a timeline mark selects its event and its exchanges; none leaves the rest", () => {
    const mark = attemptAt(events, actor, second.timeMs)!;
    const s = reduce([{ type: "mark", mark }]);
    expect(s).toMatchObject({ mark, seq: mark.seq, exchanges: mark.exchangeIds });
    expect(reduce([{ type: "mark", mark: undefined }], s)).toMatchObject({ mark: undefined, seq: mark.seq });
  });

  it("a Why clause's step selects the delivery, moves the statechart (again when asked twice), and its attempt", () => {
    const once = reduce([{ type: "step", actor, seq: second.seq, events }]);
    expect(once).toMatchObject({ delivery: actor, step: { seq: second.seq, nonce: 1 }, mark: { attempt: 2 } });
    expect(once.evidence).toEqual(new Set([second.seq]));
    expect(reduce([{ type: "step", actor, seq: second.seq, events }], once).step).toEqual({
      seq: second.seq,
      nonce: 2,
    });
  });

  it("a Why clause's attempt selects the delivery and the attempt's mark", () => {
    const s = reduce([{ type: "attempt", actor, atMs: t.startedAtMs, events }]);
    expect(s).toMatchObject({ delivery: actor, mark: { attempt: 1 } });
    // A moment before any attempt: the delivery only.
    expect(reduce([{ type: "attempt", actor, atMs: t.startedAtMs - 1, events }]).mark).toBeUndefined();
  });

  it("evidence of several events selects no attempt", () => {
    const s = reduce([{ type: "history", seqs: [judged[0]!.seq, second.seq], events }]);
    expect(s.evidence).toEqual(new Set([judged[0]!.seq, second.seq]));
    expect(s.mark).toBeUndefined();
  });

  it("an exchange of the sequence diagram selects its first event", () => {
    const x = request.data?.["exchangeId"] as string;
    expect(reduce([{ type: "exchange", exchangeId: x, events }])).toMatchObject({ exchanges: [x], seq: request.seq });
  });

  it("a message picked drops the range of the last; another run drops the selected event only", () => {
    const s = reduce([
      { type: "delivery", actor },
      { type: "range", range: [1, 2] },
      { type: "message", messageId: "m1@a.example" },
    ]);
    expect(s).toMatchObject({ delivery: actor, message: "m1@a.example", range: undefined });
    const selected = reduce([{ type: "event", event: request, events }], s);
    expect(reduce([{ type: "run" }], selected)).toEqual({ ...selected, seq: undefined });
  });
});
