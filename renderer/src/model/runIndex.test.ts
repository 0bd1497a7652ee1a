/**
 * The run's index (each model reads only the events of
 * its delivery, message or exchange, and a batch adds only its own events to
 * the index). What a model computes from the events the index finds is what
 * it computes from the whole run, on every bundled scenario, whole and as it
 * grows batch by batch.
 */
import { describe, expect, it } from "vitest";
// The outcomes table read off every event of the run (what `mailscope run` and compare read).
import { outcomeRows as wholeRunOutcomeRows } from "../../../app/sim/outcomeRows.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { exchangeView } from "./inspector.ts";
import { outcomeRows } from "./outcomes.ts";
import { actorEvents, exchangeEvents, runIndexOf } from "../../../app/trace/runIndex.ts";
import { messagesOf, sequenceOf, sequenceOfEvents } from "../../../app/trace/sequence.ts";
import { actorChart, actorChartOfEvents, deliveryActors } from "./statechart.ts";
import { buildTimeline } from "./timeline.ts";
import { scenarioTrace } from "./testing.ts";

const scenarioFiles = import.meta.glob<string>("../../../scenarios/*.yaml", { query: "?raw", import: "default" });
const SCENARIOS = Object.keys(scenarioFiles).map((f) => f.replace(/^.*\/(.*)\.yaml$/, "$1"));

/** Every model that reads the index against the same model over every event of `events`. */
function expectSameAsWholeRun(events: readonly RecordedEvent[], startMs: number): void {
  const actors: string[] = [];
  const messages: string[] = [];
  const exchanges = new Set<string>();
  for (const e of events) {
    const d = e.data ?? {};
    if (e.name === "machine.started" && typeof d["deliveryActor"] === "string" && !actors.includes(d["deliveryActor"]))
      actors.push(d["deliveryActor"]);
    if (e.name === "message.submitted" && typeof d["messageId"] === "string" && d["messageId"] !== "")
      if (!messages.includes(d["messageId"])) messages.push(d["messageId"]);
    if (typeof d["exchangeId"] === "string") exchanges.add(d["exchangeId"]);
  }
  expect(deliveryActors(events)).toEqual(actors);
  expect(messagesOf(events)).toEqual(messages);
  for (const actor of actors) {
    expect(actorChart(events, actor, startMs), actor).toEqual(actorChartOfEvents(events, actor, startMs));
  }
  for (const m of messages) {
    expect(sequenceOf(events, m, startMs), m).toEqual(sequenceOfEvents(events, m, startMs));
  }
  const index = runIndexOf(events);
  for (const x of exchanges) {
    expect(exchangeEvents(index, x)).toEqual(events.filter((e) => e.data?.["exchangeId"] === x));
    expect(exchangeView(events, x, startMs)).toBeDefined();
  }
  expect(outcomeRows(events, startMs)).toEqual(wholeRunOutcomeRows(events, startMs));
}

describe("the run's index", () => {
  it.each(SCENARIOS)("%s: every model reads the same off the index as off the whole run", async (name) => {
    const t = await scenarioTrace(name);
    expectSameAsWholeRun(t.events, t.startedAtMs);
  });

  it("an address rejected at submission: no attempt, off the index as off the whole run (it reads machine.started)", () => {
    const ev = (seq: number, name: string, data: Record<string, unknown>): RecordedEvent => ({
      seq,
      timeMs: 0,
      name,
      data,
    });
    const events = [
      ev(0, "message.submitted", { messageId: "m1@a.example", from: "a@a.example", to: ["no address", "b@b.example"] }),
      ev(1, "machine.started", {
        deliveryActor: "m1@a.example→b.example",
        messageId: "m1@a.example",
        recipients: ["b@b.example"],
      }),
      ev(2, "recipient.outcome", {
        messageId: "m1@a.example",
        recipient: "no address",
        outcome: "rejected",
        rule: "MBX-1",
      }),
    ];
    expect(outcomeRows(events, 0).map((r) => r.attempts)).toEqual([0, 1]);
    expectSameAsWholeRun(events, 0);
  });

  it("a live run, batch by batch: each batch extends the index; an older batch still answers for its events", async () => {
    const t = await scenarioTrace("rate-limited-then-down");
    const batches: (readonly RecordedEvent[])[] = [];
    let events: readonly RecordedEvent[] = [];
    for (let at = 0; at < t.events.length; at += 97) {
      events = events.concat(t.events.slice(at, at + 97)); // as the playback machine appends a batch
      batches.push(events);
      const index = runIndexOf(events);
      expect(index.count).toBe(events.length);
      // The lists are the first batch's, extended: no batch reads the events before it again.
      expect(index.lists).toBe(runIndexOf(batches[0] ?? []).lists);
      expectSameAsWholeRun(events, t.startedAtMs);
    }
    // A deferred render of an older batch, after the newest: its own events' answers.
    const older = batches[Math.floor(batches.length / 2)] ?? [];
    expectSameAsWholeRun(older, t.startedAtMs);
    const actor = deliveryActors(older)[0] ?? "";
    expect(actorEvents(runIndexOf(older), actor).every((e) => older.includes(e))).toBe(true);
  });

  it("an array that does not continue the last one gets an index of its own", async () => {
    const t = await scenarioTrace("happy-path");
    const whole = runIndexOf(t.events);
    const other = t.events.filter((e) => e.name !== "machine.transition");
    expect(runIndexOf(other).lists).not.toBe(whole.lists);
    expectSameAsWholeRun(other, t.startedAtMs);
  });
});

describe("the timeline of a live run (a batch's work in proportion to the batch)", () => {
  it.each([
    "rate-limited-then-down",
    "state-7-failure-after-acceptance-dsn",
    "teach-pin-vanished-svcb",
    "gap-G12-split",
  ])("%s: built batch by batch, reading only each batch, it is the timeline built from scratch", async (name) => {
    const t = await scenarioTrace(name);
    const labels = new Map([["m1@a.example", "m1"]]);
    const batches: (readonly RecordedEvent[])[] = [];
    let events: readonly RecordedEvent[] = [];
    for (let at = 0; at < t.events.length; at += 61)
      batches.push((events = events.concat(t.events.slice(at, at + 61))));
    const grown = batches.map((b) => buildTimeline(b, t.startedAtMs, labels));
    const fresh = batches.map((b) => {
      buildTimeline([], t.startedAtMs); // forget the run: the next build starts from nothing
      return buildTimeline(b, t.startedAtMs, labels);
    });
    // Later batches leave the timelines given before as they were.
    expect(grown).toEqual(fresh);
    expect(grown.at(-1)?.marks.length).toBeGreaterThan(0);
  });
});
