import { describe, expect, it } from "vitest";
import { explainOutcomes } from "../../../app/trace/explain.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { forkScenario } from "../../../app/sim/fork.ts";
import { scenarioText, scenarioTrace, textTrace } from "./testing.ts";
import { DARK_TIMELINE_PALETTE, LIGHT_TIMELINE_PALETTE } from "./timelineMarks.ts";
import { attemptMarkAt, buildTimeline, OUTCOME_COLOUR, timelineReader } from "./timeline.ts";
import { giveUpOf } from "./timelineApplies.ts";
import { connectorsInWindow, itemsByLane, laneItems, drawnMarks, marksInWindow } from "./timelineDrawn.ts";
import { tipPlace, laneLayout, visibleLaneRange, visibleLaneRangeOf } from "./timelineLayout.ts";
import { neighbourMark, panWindow, zoomWindow } from "./timelineNavigation.ts";
import { buckets, IN_FLIGHT_COLOUR, inFlightPath, overviewWindow } from "./timelineOverview.ts";
import { delayTicks, retryChart } from "./timelineRetryChart.ts";
import { timeScale } from "./timelineScale.ts";
import { tickLabel, ticks } from "./timelineTicks.ts";
import { maxOf, minOf } from "../../../app/protocol/lists.ts";

const trace = (name: string): Promise<Trace> => scenarioTrace(name);

const MIN = 60_000;
const labels = new Map([["m1@a.example", "m1"]]);

describe("the timeline of receiver-down-past-fallback-window (jitter off)", async () => {
  const t = await trace("receiver-down-past-fallback-window");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const at = (ms: number) => (ms - t.startedAtMs) / MIN;

  it("has one lane, m1 → b.example, with eight attempts at 0, 1, 3, 7, 15, 31, 63 and 123 minutes", () => {
    expect(tl.lanes.map((l) => l.label)).toEqual(["m1 → b.example"]);
    const attempts = tl.marks.filter((m) => m.kind === "attempt");
    expect(attempts.map((m) => at(m.timeMs))).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    expect(attempts.map((m) => m.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(attempts.map((m) => m.outcome))).toEqual(new Set(["temporary-eligible"]));
    expect(attempts[0]?.summary).toMatch(/^attempt 1 at \+0:00:00: temporary failure, fallback-eligible .*\[GET-9\]$/);
    // Each attempt's capabilities GET is its own exchange.
    expect(attempts.map((m) => m.exchangeIds)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [`x${n}`]));
  });

  it("STATE-2: the fallback transition at +2:03:00 belongs to attempt 8; a moment before attempt 1 to none", () => {
    const fallback = t.events.find(
      (e) => e.name === "machine.transition" && e.data?.["transition"] === "fallBackToSmtpAfterWindow",
    );
    const actor = String(fallback?.data?.["deliveryActor"]);
    expect(attemptMarkAt(tl, actor, fallback!.timeMs)?.attempt).toBe(8);
    expect(attemptMarkAt(tl, actor, t.startedAtMs + 2 * MIN)?.attempt).toBe(2);
    expect(attemptMarkAt(tl, actor, t.startedAtMs - 1)).toBeUndefined();
    expect(attemptMarkAt(tl, "no such actor", fallback!.timeMs)).toBeUndefined();
  });

  it("draws the fallback window to +2:00:00, seven retries and the hand-off at +2:03:00", () => {
    const band = tl.bands.find((b) => b.kind === "fallback-window");
    expect(band && at(band.fromMs)).toBe(0);
    expect(band?.untilMs !== undefined && at(band.untilMs)).toBe(120);
    expect(tl.connectors.map((c) => [at(c.fromMs), at(c.toMs), c.decidedBy])).toEqual([
      [0, 1, "base-delay"],
      [1, 3, "base-delay"],
      [3, 7, "base-delay"],
      [7, 15, "base-delay"],
      [15, 31, "base-delay"],
      [31, 63, "base-delay"],
      [63, 123, "base-delay"],
    ]);
    const handoff = tl.marks.find((m) => m.kind === "handoff");
    expect(handoff && at(handoff.timeMs)).toBe(123);
    expect(handoff?.lane).toBe("m1@a.example→b.example");
    expect(handoff?.summary).toBe("SMTP fallback: handed to SMTP at +2:03:00 [STATE-3]");
    expect(tl.lanes[0]?.giveUpAtMs && at(tl.lanes[0].giveUpAtMs)).toBe(5 * 24 * 60);
  });

  it("shades the receiver's fault on the lane of its host, for three hours", () => {
    const fault = tl.bands.find((b) => b.kind === "fault");
    expect(fault).toMatchObject({ lane: "m1@a.example→b.example", label: "b-down (connection-refused)" });
    expect(fault?.untilMs !== undefined && at(fault.untilMs)).toBe(180);
  });

  it("retry chart: base delays doubling from 1 minute, the window's end at attempt 8", () => {
    const lane = tl.lanes[0];
    if (!lane) throw new Error("no lane");
    const chart = retryChart(lane);
    expect(chart.rows.map((r) => r.base)).toEqual([1, 2, 4, 8, 16, 32, 60]);
    expect(chart.rows.map((r) => r.actual)).toEqual([1, 2, 4, 8, 16, 32, 60]);
    expect(chart.rows.every((r) => r.band === undefined)).toBe(true);
    expect(chart.fallbackWindowEndAttempt).toBe(8);
    expect(chart.capMinutes).toBe(60);
  });
});

describe("RETRY-5, STATE-2: the fallback window band ends where the delivery ended inside the window", async () => {
  // gap-G16-fallback-window-2h forked at +0:30:00 with b-down ended (the Compare view's fork): accepted at +0:31:00.
  const text = scenarioText("gap-G16-fallback-window-2h");
  const fork = forkScenario(text, 30 * MIN, { kind: "end-fault", fault: "b-down" });
  if (!fork.ok) throw new Error("the fork failed");
  const forked = await textTrace(fork.text, `${fork.name}.yaml`);
  // gap-G16-fallback-window-4h in the run view: accepted at +3:03:00, inside its 4-hour window.
  const fourHours = await trace("gap-G16-fallback-window-4h");
  const at = (ms: number | undefined, startMs: number) => (ms === undefined ? undefined : (ms - startMs) / MIN);
  const windowOf = (tl: ReturnType<typeof buildTimeline>) => tl.bands.find((b) => b.kind === "fallback-window");

  it("the fork delivered at +0:31:00: its band is +0:00:00 to +0:31:00, the 2-hour window's end kept aside", () => {
    const tl = buildTimeline(forked.events, forked.startedAtMs, labels);
    const band = windowOf(tl);
    expect(at(band?.fromMs, tl.startMs)).toBe(0);
    expect(at(band?.untilMs, tl.startMs)).toBe(31);
    expect(at(band?.windowEndMs, tl.startMs)).toBe(120);
    expect(band?.label).toBe("fallback window (to +2:00:00, cut where the delivery ended)");
    // The retry chart still reads the window's own end.
    expect(at(tl.lanes[0]?.fallbackWindowEndMs, tl.startMs)).toBe(120);
  });

  it("the run view too: accepted at +3:03:00 inside a 4-hour window, the band ends at +3:03:00", () => {
    const tl = buildTimeline(fourHours.events, fourHours.startedAtMs, labels);
    const band = windowOf(tl);
    expect(at(band?.untilMs, tl.startMs)).toBe(183);
    expect(at(band?.windowEndMs, tl.startMs)).toBe(240);
  });

  it("a delivery handed to SMTP after the window keeps the whole window (receiver-down-past-fallback-window)", async () => {
    const t = await trace("receiver-down-past-fallback-window");
    const band = windowOf(buildTimeline(t.events, t.startedAtMs, labels));
    expect(at(band?.untilMs, t.startedAtMs)).toBe(120);
    expect(band?.windowEndMs).toBeUndefined();
    expect(band?.label).toBe("fallback window");
  });

  it("a live run cut before the delivery ended draws the whole window", () => {
    const cut = forked.events.filter((e) => e.timeMs < forked.startedAtMs + 31 * MIN);
    const band = windowOf(buildTimeline(cut, forked.startedAtMs, labels));
    expect(at(band?.untilMs, forked.startedAtMs)).toBe(120);
  });

  it("the overview's buckets cover the lanes' whole window: the accepted attempt sits in the bucket over +0:31:00", () => {
    const tl = buildTimeline(forked.events, forked.startedAtMs, labels);
    // The Compare view's shared axis ends after the original's hand-off at +2:03:00.
    const toMs = tl.startMs + 128 * MIN;
    const rows = buckets(tl, 128, "linear", toMs);
    expect(rows[0]?.fromMs).toBe(tl.startMs);
    expect(rows.at(-1)?.toMs).toBe(toMs);
    const accepted = rows.findIndex((r) => r.attempts.accepted > 0);
    expect(accepted).toBe(31);
    expect(rows.reduce((n, r) => n + Object.values(r.attempts).reduce((a, c) => a + c, 0), 0)).toBe(6);
    // Nothing after the delivery: the buckets past +0:32:00 are empty and none is in flight.
    expect(rows.slice(32).every((r) => r.inFlight === 0 && Object.values(r.attempts).every((c) => c === 0))).toBe(true);
  });
});

describe("the timeline of rate-limited-then-down", async () => {
  const t = await trace("rate-limited-then-down");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);

  it("has the message's lane and the DSN's lane linked to it", () => {
    expect(tl.lanes.map((l) => [l.kind, l.label.replace(/dsn\.[0-9a-f]+/, "dsn.…")])).toEqual([
      ["message", "m1 → b.example"],
      ["dsn", "DSN of m1 → a.example"],
    ]);
    expect(tl.lanes[1]?.parent).toBe(tl.lanes[0]?.id);
    expect(tl.marks.filter((m) => m.kind === "bounce").map((m) => m.summary)).toEqual([
      "bounced at +5d 0:00:00 after 127 attempts [STATE-7]",
    ]);
    expect(tl.marks.filter((m) => m.kind === "dsn").map((m) => m.lane)).toEqual([tl.lanes[0]?.id]);
    const stored = tl.marks.find((m) => m.kind === "receiver" && m.label === "stored");
    expect(stored?.lane).toBe(tl.lanes[1]?.id);
    const dsnAttempt = tl.marks.find((m) => m.kind === "attempt" && m.lane === tl.lanes[1]?.id);
    expect(dsnAttempt?.outcome).toBe("accepted");
  });

  it("the first attempt was rate limited (not fallback-eligible); its retry waited for Retry-After", () => {
    const first = tl.marks.find((m) => m.kind === "attempt");
    expect(first).toMatchObject({ attempt: 1, outcome: "temporary" });
    expect(first?.summary).toContain("429 rate_limited");
    const lane = tl.lanes[0];
    if (!lane) throw new Error("no lane");
    const chart = retryChart(lane);
    expect(chart.rows[0]).toMatchObject({ attempt: 2, base: 1, lowerBound: 2, actual: 2, decidedBy: "retry-after" });
    expect(chart.rows[0]?.band).toEqual([0.8, 1.2]);
    // Five days of an outage: the delays reach the 1 h cap and stay there; the give-up ends it.
    expect(chart.capMinutes).toBe(60);
    expect(maxOf(chart.rows.map((r) => r.base))).toBe(60);
    expect(chart.giveUpAfterAttempt).toBe(127);
    expect(chart.rows.filter((r) => !r.happened)).toHaveLength(1);
  });

  it("overview buckets count every attempt once; the window and the drawn marks stay small", () => {
    const rows = buckets(tl, 50);
    const total = rows.reduce((n, b) => n + Object.values(b.attempts).reduce((a, c) => a + c, 0), 0);
    expect(total).toBe(tl.marks.filter((m) => m.kind === "attempt").length);
    expect(rows[0]?.inFlight).toBe(1);
    expect(rows.reduce((n, b) => n + b.bounces, 0)).toBe(1);
    const firstHour = marksInWindow(tl.marks, t.startedAtMs, t.startedAtMs + 60 * MIN);
    // Jitter is on: six attempts in the first hour (the seventh comes at about +1:03), in order.
    expect(firstHour.filter((m) => m.kind === "attempt").map((m) => m.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    // 300 px for 5 days: at most one mark per lane, kind and 2-px column, each counting what it stands for.
    const scale = timeScale("linear", tl.startMs, tl.endMs, 300, tl.startMs);
    const drawn = drawnMarks(tl.marks, scale, new Set(tl.lanes.map((l) => l.id)));
    expect(drawn.length).toBeLessThan(tl.marks.length);
    expect(drawn.reduce((n, d) => n + d.count, 0)).toBe(tl.marks.length);
  });

  it("keyboard navigation walks a lane's marks and moves between lanes", () => {
    const first = neighbourMark(tl.marks, undefined, "next", tl.lanes);
    expect(first?.attempt).toBe(1);
    // Attempt 1's answer ruled SMTP out: that mark comes next, at the same time, then attempt 2.
    const ruledOut = neighbourMark(tl.marks, first?.id, "next", tl.lanes);
    expect(ruledOut).toMatchObject({ kind: "ruled-out", attempt: 1 });
    const second = neighbourMark(tl.marks, ruledOut?.id, "next", tl.lanes);
    expect(second?.attempt).toBe(2);
    expect(neighbourMark(tl.marks, second?.id, "previous", tl.lanes)?.id).toBe(ruledOut?.id);
    const down = neighbourMark(tl.marks, second?.id, "down", tl.lanes);
    expect(down?.lane).toBe(tl.lanes[1]?.id);
  });
});

describe("the fallback window and the give-up drawn only where they apply; where SMTP was ruled out", async () => {
  const limited = await trace("rate-limited-then-down");
  const mixed = await trace("teach-mixed-recipient-results");
  const deferred = await trace("state-5-deferred-new-delivery");
  const down = await trace("receiver-down-past-fallback-window");
  const windowBands = (tl: ReturnType<typeof buildTimeline>, lane: string) =>
    tl.bands.filter((b) => b.kind === "fallback-window" && b.lane === lane);
  const judged = (t: Trace, seq: number) => t.events.find((e) => e.seq === seq);

  it("ERR-23: rate-limited-then-down's 429 at attempt 1 ruled SMTP out; no window band, no `first after the window's end`", () => {
    const tl = buildTimeline(limited.events, limited.startedAtMs, labels);
    const m1 = tl.lanes[0]!;
    expect(m1.fallbackRuledOut).toMatchObject({
      attempt: 1,
      answer: "429 rate_limited",
      rule: "ERR-23",
      text: "SMTP ruled out at attempt 1: 429 rate_limited, ERR-23",
    });
    // The evidence: attempt 1's judgement, a 429 rate_limited after which not every attempt was eligible.
    const e = judged(limited, m1.fallbackRuledOut!.seq);
    expect(e?.name).toBe("attempt.judged");
    expect(e?.data).toMatchObject({ attempt: 1, status: 429, allAttemptsFallbackEligible: false });
    expect(String(e?.data?.["problem"])).toMatch(/\/rate_limited$/);
    expect(m1.fallbackRuledOut?.timeMs).toBe(limited.startedAtMs);
    expect(windowBands(tl, m1.id)).toEqual([]);
    const chart = retryChart(m1);
    expect(chart.fallbackWindowEndAttempt).toBeUndefined();
    expect(chart.fallbackRuledOut?.attempt).toBe(1);
    // A mark of its own on the lane, at attempt 1, with the words and the rule.
    const mark = tl.marks.find((m) => m.kind === "ruled-out");
    expect(mark).toMatchObject({
      lane: m1.id,
      attempt: 1,
      rule: "ERR-23",
      timeMs: limited.startedAtMs,
      label: "SMTP ruled out",
    });
    expect(mark?.summary).toMatch(/^SMTP ruled out at attempt 1: 429 rate_limited, ERR-23 \(\+0:00:00\)/);
    expect(mark?.exchangeIds).toEqual(["x1", "x2"]);
    // m1 bounced at the give-up: its line applies. The DSN's delivery, accepted at once, has neither.
    expect(giveUpOf(m1)).toBe(m1.giveUpAtMs);
    const dsn = tl.lanes[1]!;
    expect(dsn.giveUpAtMs).toBeDefined();
    expect(giveUpOf(dsn)).toBeUndefined();
    expect(windowBands(tl, dsn.id)).toEqual([]);
    expect(dsn.fallbackRuledOut).toBeUndefined();
  });

  it("per-recipient deferrals never fall back (ERR-23): teach-mixed-recipient-results' m1 and state-5-deferred-new-delivery", () => {
    const tl = buildTimeline(mixed.events, mixed.startedAtMs, labels);
    const m0 = tl.lanes.find((l) => l.messageId === "m0@a.example")!;
    const m1 = tl.lanes.find((l) => l.label === "m1 → b.example")!;
    expect(m1.fallbackRuledOut?.text).toBe(
      "SMTP ruled out at attempt 1: per-recipient results: nobody@b.example rejected (recipient_not_found), carol@b.example deferred (rate_limited), dave@b.example deferred (mailbox_full), ERR-23",
    );
    const e = judged(mixed, m1.fallbackRuledOut!.seq);
    expect(e?.data).toMatchObject({ attempt: 1, class: "results", allAttemptsFallbackEligible: false });
    expect(windowBands(tl, m1.id)).toEqual([]);
    // m0, accepted by its first POST, was never going to fall back nor give up: no band, no give-up line, no mark.
    expect(m0.fallbackRuledOut).toBeUndefined();
    expect(windowBands(tl, m0.id)).toEqual([]);
    expect(giveUpOf(m0)).toBeUndefined();
    expect(tl.marks.filter((m) => m.kind === "ruled-out").map((m) => m.lane)).toEqual([m1.id]);

    const five = buildTimeline(deferred.events, deferred.startedAtMs, labels);
    expect(five.lanes[0]?.fallbackRuledOut?.text).toBe(
      "SMTP ruled out at attempt 1: per-recipient results: bob@b.example deferred (temporary_failure), ERR-23",
    );
    expect(five.bands.filter((b) => b.kind === "fallback-window")).toEqual([]);
    expect(giveUpOf(five.lanes[0]!)).toBeUndefined();
  });

  it("STATE-3: a delivery every attempt of which was fallback-eligible keeps its window, and has no mark", () => {
    const tl = buildTimeline(down.events, down.startedAtMs, labels);
    expect(tl.lanes[0]?.fallbackRuledOut).toBeUndefined();
    expect(tl.marks.some((m) => m.kind === "ruled-out")).toBe(false);
    expect(windowBands(tl, tl.lanes[0]!.id)).toHaveLength(1);
    // Handed to SMTP at +2:03:00: it never reached the give-up.
    expect(giveUpOf(tl.lanes[0]!)).toBeUndefined();
  });

  it("a live run: the mark appears with the retry after the answer (an answer that ended the delivery rules nothing out)", () => {
    const judgedAt = limited.events.findIndex((e) => e.name === "attempt.judged");
    const timer = limited.events.findIndex((e) => e.name === "timer.set");
    expect(timer).toBeGreaterThan(judgedAt);
    const before = buildTimeline(limited.events.slice(0, timer), limited.startedAtMs, labels);
    expect(before.lanes[0]?.fallbackRuledOut).toBeUndefined();
    const after = buildTimeline(limited.events.slice(0, timer + 1), limited.startedAtMs, labels);
    expect(after.lanes[0]?.fallbackRuledOut?.attempt).toBe(1);
  });

  it("RETRY-2, RETRY-3: the cap comes before the jitter; the delay axis in even steps", () => {
    const tl = buildTimeline(limited.events, limited.startedAtMs, labels);
    const chart = retryChart(tl.lanes[0]!);
    // Jitter on: the capped waits reach past the hour (the issue saw 1 h 11 min beside "capped at 1 h").
    const capped = tl.lanes[0]!.retries.filter((r) => r.baseDelayMs === 60 * MIN);
    expect(chart.cappedJitter?.maxMinutes).toBe(maxOf(capped.map((r) => r.jitteredDelayMs)) / MIN);
    expect(chart.cappedJitter!.maxMinutes).toBeGreaterThan(60);
    expect(chart.cappedJitter!.minMinutes).toBeLessThan(60);
    expect(chart.delayTicks).toEqual([0, 15, 30, 45, 60, 75]);
    // Jitter off: no jitter to speak of.
    const tlDown = buildTimeline(down.events, down.startedAtMs, labels);
    expect(retryChart(tlDown.lanes[0]!).cappedJitter).toBeUndefined();
    expect(retryChart(tlDown.lanes[0]!).delayTicks).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(delayTicks(2)).toEqual([0, 1, 2]);
    expect(delayTicks(72)).toEqual([0, 15, 30, 45, 60, 75]);
    expect(delayTicks(0)).toEqual([0, 1]);
  });
});

describe("on every bundled scenario, a lane's `SMTP ruled out` says what its cited event says", async () => {
  const files = import.meta.glob<string>("../../../scenarios/*.yaml", { query: "?raw", import: "default" });
  const names = Object.keys(files).map((f) => f.replace(/^.*\/(.*)\.yaml$/, "$1"));
  let checked = 0;
  it.each(names)("%s", async (name) => {
    const t = await trace(name);
    const tl = buildTimeline(t.events, t.startedAtMs);
    for (const lane of tl.lanes) {
      const judgements = t.events.filter((e) => e.name === "attempt.judged" && e.data?.["deliveryActor"] === lane.id);
      const first = judgements.find((e) => e.data?.["allAttemptsFallbackEligible"] === false);
      const r = lane.fallbackRuledOut;
      const retried = (n: number) =>
        t.events.some((e) => e.name === "timer.set" && e.data?.["deliveryActor"] === lane.id && e.data["retry"] === n);
      if (r === undefined) {
        // Not ruled out, or the delivery ended at the answer that would have (no retry after it).
        if (first) expect(retried(Number(first.data?.["attempt"])), lane.id).toBe(false);
        continue;
      }
      expect(r.seq, lane.id).toBe(first?.seq);
      expect(first?.data?.["attempt"]).toBe(r.attempt);
      expect(first?.data?.["startedAtMs"]).toBe(r.timeMs);
      expect(retried(r.attempt), lane.id).toBe(true);
      expect(r.text).toBe(`SMTP ruled out at attempt ${r.attempt}: ${r.answer}${r.rule ? `, ${r.rule}` : ""}`);
      const status = first?.data?.["status"];
      if (first?.data?.["class"] === "results" || (typeof status === "number" && status >= 400 && status < 500))
        expect(r.rule).toBe("ERR-23");
      // Never a hand-off after the window for a delivery whose fallback was ruled out (STATE-3).
      expect(tl.marks.some((m) => m.kind === "handoff" && m.lane === lane.id && m.label === "SMTP fallback")).toBe(
        false,
      );
      // No window drawn past the answer.
      for (const b of tl.bands.filter((b) => b.kind === "fallback-window" && b.lane === lane.id))
        expect(b.untilMs ?? Infinity).toBeLessThanOrEqual(r.judgedAtMs);
    }
    // One reading of "SMTP ruled out" (ERR-23): the Why? of every recipient it applies to names the lane's
    // attempt, event, words and rule.
    for (const why of explainOutcomes(t.events, t.startedAtMs)) {
      if (why.smtpRuledOut === undefined) continue;
      const lane = tl.lanes.find((l) => l.id === `${why.messageId}→${why.recipient.replace(/^.*@/, "").toLowerCase()}`);
      const { attempt, seq, answer, rule, atMs, judgedAtMs } = why.smtpRuledOut;
      expect(lane?.fallbackRuledOut, `${why.messageId} ${why.recipient}`).toMatchObject({
        attempt,
        seq,
        answer,
        rule,
        timeMs: atMs,
        judgedAtMs,
      });
      checked++;
    }
  });
  it("the Why? of some recipient and its lane were compared", () => expect(checked).toBeGreaterThan(0));
});

describe("gestures — the overview brushes the range dragged; a hover text flips at the right edge", () => {
  const scale = timeScale("linear", 0, 120 * MIN, 600, 0);
  it("a drag across the overview is the range dragged, not one bucket", () => {
    expect(overviewWindow(scale, 100, 400, 120)).toEqual([20 * MIN, 80 * MIN]);
    // Either way, and past the plot's ends it stops at them.
    expect(overviewWindow(scale, 400, 100, 120)).toEqual([20 * MIN, 80 * MIN]);
    expect(overviewWindow(scale, -50, 700, 120)).toEqual([0, 120 * MIN]);
    // A click (a move under 6 px) is the bucket under it: 120 buckets of a minute.
    expect(overviewWindow(scale, 102, 104, 120)).toEqual([20 * MIN, 21 * MIN]);
    expect(overviewWindow(scale, 600, 600, 120)).toEqual([119 * MIN, 120 * MIN]);
    expect(overviewWindow(scale, -10, -9, 120)).toBeUndefined();
    // On a log scale the same pixels.
    const log = timeScale("log", 0, 120 * MIN, 600, 0);
    expect(overviewWindow(log, 100, 400, 120)).toEqual([log.timeAt(100), log.timeAt(400)]);
  });

  it("a hover text goes right of the pointer, left of it where it would pass the right edge", () => {
    expect(tipPlace(100, 300, 1200)).toEqual({ left: 112, side: "right" });
    expect(tipPlace(1000, 300, 1200)).toEqual({ left: 688, side: "left" });
    expect(tipPlace(1000, 300, 1200).left + 300).toBeLessThanOrEqual(1200);
    // Wider than the room either side: kept inside the box's left edge.
    expect(tipPlace(100, 300, 350)).toEqual({ left: 0, side: "left" });
  });
});

describe("the time axis", () => {
  it("labels read at any zoom", () => {
    expect(tickLabel(60_000, 60_000)).toBe("+0:01:00");
    expect(tickLabel(123 * MIN, 60_000)).toBe("+2:03:00");
    expect(tickLabel(5 * 86_400_000, 86_400_000)).toBe("+5d");
    expect(tickLabel(1500, 100)).toBe("+0:00:01.500");
    const five = timeScale("linear", 0, 5 * 86_400_000, 600, 0);
    expect(ticks(five, 0).map((t) => t.label)).toEqual(["+0d", "+1d", "+2d", "+3d", "+4d", "+5d"]);
    const twoHours = timeScale("linear", 0, 2 * 3_600_000, 800, 0);
    expect(ticks(twoHours, 0).map((t) => t.label)).toContain("+1:00:00");
    const log = timeScale("log", 0, 5 * 86_400_000, 800, 0);
    expect(log.x(0)).toBe(0);
    expect(log.x(MIN)).toBeGreaterThan(200);
    expect(Math.round(log.timeAt(log.x(7 * MIN)))).toBe(7 * MIN);
    expect(ticks(log, 0).map((t) => t.label)).toContain("+5d");
  });

  it("virtualises lanes: only those in the viewport and a few more", () => {
    expect(visibleLaneRange(10_000, 2800, 280, 28)).toEqual({ first: 98, last: 112 });
    expect(visibleLaneRange(3, 0, 280, 28)).toEqual({ first: 0, last: 2 });
  });
});

describe("a timeline reader reads a live run batch by batch, each its own (Compare draws two)", async () => {
  const a = await trace("receiver-down-past-fallback-window");
  const b = await trace("teach-mixed-recipient-results");
  /** The run's events as the playback machine hands them over: a longer array each batch, the same objects. */
  const batchesOf = (t: Trace, size: number) => {
    const out: (typeof t.events)[] = [];
    for (let at = size; at < t.events.length + size; at += size) out.push(t.events.slice(0, at));
    return out;
  };

  it("two readers, two runs, read in turn: each reads every event once, and gives what a build from scratch gives", () => {
    const ra = timelineReader();
    const rb = timelineReader();
    const [as, bs] = [batchesOf(a, 40), batchesOf(b, 40)];
    for (let i = 0; i < Math.max(as.length, bs.length); i++) {
      const ea = as[Math.min(i, as.length - 1)]!;
      const eb = bs[Math.min(i, bs.length - 1)]!;
      expect(ra.read(ea, a.startedAtMs, labels)).toEqual(buildTimeline(ea, a.startedAtMs, labels));
      expect(rb.read(eb, b.startedAtMs, labels)).toEqual(buildTimeline(eb, b.startedAtMs, labels));
    }
    expect(ra.eventsRead).toBe(a.events.length);
    expect(rb.eventsRead).toBe(b.events.length);
  });

  it("the same events again give the same timeline; an older batch is read again from the start", () => {
    const r = timelineReader();
    const [first, second] = batchesOf(a, 50);
    const tl = r.read(second!, a.startedAtMs, labels);
    expect(r.read(second!, a.startedAtMs, labels)).toBe(tl);
    expect(r.eventsRead).toBe(second!.length);
    expect(r.read(first!, a.startedAtMs, labels)).toEqual(buildTimeline(first!, a.startedAtMs, labels));
    expect(r.eventsRead).toBe(second!.length + first!.length);
  });
});

describe("per-recipient sub-lanes of teach-mixed-recipient-results", async () => {
  const t = await trace("teach-mixed-recipient-results");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const m1 = tl.lanes.find((l) => l.label === "m1 → b.example");

  it("m1's lane has a sub-lane per recipient with its result at each attempt that answered it (RCP-2, ERR-17, ERR-18)", () => {
    expect(m1?.recipientLanes.map((r) => r.recipient)).toEqual([
      "bob@b.example",
      "nobody@b.example",
      "carol@b.example",
      "dave@b.example",
    ]);
    const of = (r: string) => m1?.recipientLanes.find((x) => x.recipient === r);
    expect(of("bob@b.example")?.results.map((r) => [r.attempt, r.status])).toEqual([[1, "accepted"]]);
    expect(of("bob@b.example")?.outcome?.outcome).toBe("accepted");
    expect(of("nobody@b.example")?.results[0]).toMatchObject({
      attempt: 1,
      status: "rejected",
      problem: "recipient_not_found",
    });
    expect(of("nobody@b.example")?.outcome?.outcome).toBe("rejected");
    expect(of("carol@b.example")?.results.map((r) => [r.attempt, r.status])).toEqual([
      [1, "deferred"],
      [2, "accepted"],
    ]);
    // Each result sits under its attempt's mark.
    const attempt2 = tl.marks.find((m) => m.lane === m1?.id && m.attempt === 2);
    expect(of("carol@b.example")?.results[1]?.timeMs).toBe(attempt2?.timeMs);
  });

  it("STATE-7: m1's delivery ends when dave bounces at +5d, not at bob's outcome at +0:01:00; the overview counts it in flight until then", () => {
    const outcomes = m1!.recipientLanes.map((r) => r.outcome!.timeMs).sort((a, b) => a - b);
    const bounce = tl.marks.find((m) => m.kind === "bounce" && m.lane === m1?.id)!;
    const finalState = t.events.find(
      (e) =>
        e.name === "machine.transition" &&
        e.data?.["deliveryActor"] === m1?.id &&
        ["finished", "handedToSmtp", "bounced"].includes(String(e.data?.["to"])),
    )!;
    expect((outcomes[0]! - t.startedAtMs) / MIN).toBe(1);
    expect(m1?.endMs).toBe(finalState.timeMs);
    expect(m1?.endMs).toBe(bounce.timeMs);
    expect(m1?.endMs).toBe(outcomes.at(-1));
    // 100 buckets over the run: m1 is the one delivery in flight from +0:01:00 until the bucket of its bounce.
    const rows = buckets(tl, 100);
    const bounced = rows.findIndex((r) => r.bounces > 0);
    expect(bounced).toBeGreaterThan(90);
    expect(rows.slice(1, bounced).map((r) => r.inFlight)).toEqual(new Array(bounced - 1).fill(1));
    expect(maxOf(rows.map((r) => r.inFlight))).toBeGreaterThanOrEqual(2);
    // Each delivery's end, from its actor's final state: m0's and the DSNs' too.
    for (const lane of tl.lanes) {
      const end = t.events.find(
        (e) =>
          e.name === "machine.transition" &&
          e.data?.["deliveryActor"] === lane.id &&
          ["finished", "handedToSmtp", "bounced"].includes(String(e.data?.["to"])),
      );
      expect(lane.endMs, lane.label).toBe(end?.timeMs);
    }
  });

  it("the in-flight line spans the lanes' plot exactly, from its left edge to its right edge, within its height", () => {
    const rows = buckets(tl, 120);
    const d = inFlightPath(rows, 1171.5, 52);
    const xs = [...d.matchAll(/[MH](-?[\d.]+)/g)].map((m) => Number(m[1]));
    const ys = [...d.matchAll(/(?:M[\d.]+,|V)(-?[\d.]+)/g)].map((m) => Number(m[1]));
    expect(minOf(xs)).toBe(0);
    expect(maxOf(xs)).toBe(1171.5);
    expect(d.startsWith("M0,")).toBe(true);
    expect(d.endsWith(" H1171.5")).toBe(true);
    expect(minOf(ys)).toBeGreaterThanOrEqual(0);
    expect(maxOf(ys)).toBeLessThanOrEqual(52);
    // The most in flight at the top; m1 alone in flight for days, lower.
    const peak = maxOf(rows.map((r) => r.inFlight));
    expect(minOf(ys)).toBe(1);
    expect(ys).toContain(Math.round((52 - 1 - (1 / peak) * 50) * 10) / 10);
    expect(inFlightPath([], 100, 52)).toBe("");
  });

  it("a trace cut before dave's bounce: m1 is still in flight at its end", () => {
    const cut = t.events.filter((e) => e.timeMs < t.startedAtMs + 3 * 24 * 60 * MIN);
    const part = buildTimeline(cut, t.startedAtMs, labels);
    expect(part.lanes.find((l) => l.id === m1?.id)?.endMs).toBeUndefined();
    expect(buckets(part, 10).at(-1)?.inFlight).toBe(1);
  });

  it("an unfolded lane is taller by its sub-lanes; the visible range follows the layout", () => {
    const layout = laneLayout(tl.lanes, new Set([m1?.id ?? ""]), 56, 22);
    const i = tl.lanes.findIndex((l) => l.id === m1?.id);
    expect((layout.tops[i + 1] ?? 0) - (layout.tops[i] ?? 0)).toBe(56 + 4 * 22);
    expect(layout.height).toBe(tl.lanes.length * 56 + 4 * 22);
    const many = Array.from({ length: 1000 }, (_, k) => ({ ...(m1 ?? tl.lanes[0]!), id: `l${k}` }));
    const folded = laneLayout(many, new Set(), 28, 22);
    expect(visibleLaneRangeOf(folded, 2800, 280)).toEqual(visibleLaneRange(1000, 2800, 280, 28));
  });
});

describe("panning and zooming the window", () => {
  const H = 3_600_000;
  it("a drag to the right shows earlier times, by the pixels' worth of time, and stops at the run's start", () => {
    const scale = timeScale("linear", 2 * H, 4 * H, 200, 0);
    expect(panWindow(scale, 50, 0, 10 * H)).toEqual([1.5 * H, 3.5 * H]);
    expect(panWindow(scale, -50, 0, 10 * H)).toEqual([2.5 * H, 4.5 * H]);
    expect(panWindow(scale, 10_000, 0, 10 * H)).toEqual([0, 2 * H]);
    expect(panWindow(scale, -10_000, 0, 10 * H)).toEqual([8 * H, 10 * H]);
    // The whole run shown: nowhere to go.
    const all = timeScale("linear", 0, 10 * H, 200, 0);
    expect(panWindow(all, 30, 0, 10 * H)).toEqual([0, 10 * H]);
  });

  it("pans on a log scale in the scale's own units", () => {
    const scale = timeScale("log", H, 2 * H, 300, 0);
    const [from, to] = panWindow(scale, -30, 0, 100 * H);
    expect(from).toBeGreaterThan(H);
    expect(Math.round(scale.x(from))).toBe(30);
    expect(Math.round(timeScale("log", from, to, 300, 0).x(2 * H))).toBe(270);
  });

  it("zooms around a pixel; zooming out to the whole run is no zoom", () => {
    const scale = timeScale("linear", 0, 8 * H, 800, 0);
    expect(zoomWindow(scale, 0.5, 400, 0, 8 * H)).toEqual([2 * H, 6 * H]);
    expect(zoomWindow(scale, 0.5, 0, 0, 8 * H)).toEqual([0, 4 * H]);
    expect(zoomWindow(timeScale("linear", 2 * H, 6 * H, 800, 0), 2, 400, 0, 8 * H)).toBeUndefined();
  });
});

describe("each lane's own items, so that a pan or zoom redraws a lane from its own", async () => {
  const tl = buildTimeline((await trace("receiver-down-past-fallback-window")).events, 0, labels);
  const items = itemsByLane(tl);
  it("gives every lane its marks, bands and happened connectors, and nothing of another lane", () => {
    for (const lane of tl.lanes) {
      const own = laneItems(items, lane.id);
      expect(own.marks).toEqual(tl.marks.filter((m) => m.lane === lane.id || m.lane === undefined));
      expect(own.bands).toEqual(tl.bands.filter((b) => b.lane === lane.id));
      expect(own.connectors).toEqual(tl.connectors.filter((c) => c.lane === lane.id && c.happened));
      expect(own.bounced).toBe(tl.marks.some((m) => m.kind === "bounce" && m.lane === lane.id));
    }
    expect(laneItems(items, "nowhere").marks).toEqual([]);
  });
  it("keeps the connectors that reach into a window", () => {
    const lane = tl.lanes[0]!;
    const all = laneItems(items, lane.id).connectors;
    expect(all.length).toBeGreaterThan(2);
    const c = all[2]!;
    expect(connectorsInWindow(all, c.fromMs + 1, c.fromMs + 2)).toContainEqual(c);
    expect(connectorsInWindow(all, c.toMs + 1e12, c.toMs + 2e12)).toEqual([]);
  });
});

describe("the overview's deliveries in flight: a colour of its own", () => {
  const rgb = (hex: string) =>
    [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number];
  const linear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  /** WCAG 2's relative luminance and contrast ratio. */
  const luminance = (hex: string) => {
    const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a: string, b: string) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
    return (hi + 0.05) / (lo + 0.05);
  };
  /** CIE L*a*b* (D65) and the distance between two colours in it (ΔE 1976; about 2.3 is just noticeable). */
  const lab = (hex: string) => {
    const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
    const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
    const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
    const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
    const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
    return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
  };
  const deltaE = (a: string, b: string) =>
    Math.sqrt(lab(a).reduce((sum, v, i) => sum + (v - (lab(b)[i] ?? 0)) ** 2, 0));

  it("the computations: black on white is 21:1, a colour against itself 1:1 and 0 apart", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#2f7fd0", "#2f7fd0")).toBe(1);
    expect(deltaE("#2f7fd0", "#2f7fd0")).toBe(0);
  });

  for (const [theme, colour, palette] of [
    ["light", IN_FLIGHT_COLOUR.light, LIGHT_TIMELINE_PALETTE],
    ["dark", IN_FLIGHT_COLOUR.dark, DARK_TIMELINE_PALETTE],
  ] as const)
    it(`${theme}: 3:1 or more against the panel's surface, and far from every outcome's colour (the deferred bars' blue)`, () => {
      expect(contrast(colour, palette.surface)).toBeGreaterThanOrEqual(3);
      // The bars it is drawn over: every outcome's, the hand-offs' and the DSNs' (Overview.tsx), and the accent
      // of the visible window's box.
      const others = [...Object.values(OUTCOME_COLOUR), "#1d2330", "#b3261e", palette.accent];
      for (const other of others) expect(deltaE(colour, other), other).toBeGreaterThan(35);
      // The blue it replaces was 26 apart from the deferred bars' blue: a blue next to a blue.
      expect(deltaE("#2f5fd0", OUTCOME_COLOUR["deferred"]!)).toBeLessThan(35);
      expect(deltaE(colour, OUTCOME_COLOUR["deferred"]!)).toBeGreaterThan(50);
    });
});

describe("an attempt whose recipients were partly accepted and partly rejected is drawn as what it was", async () => {
  const text = (to: string): string => `name: mixed
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob, carol] }
messages:
  - { id: m1, from: alice@a.example, to: [${to}] }
`;
  const attemptOf = async (to: string) => {
    const t = await textTrace(text(to), "mixed.yaml");
    const tl = buildTimeline(t.events, t.startedAtMs, labels);
    // m1's lane (a DSN about a rejected recipient has a lane of its own).
    const lane = tl.lanes.find((l) => l.label === "m1 → b.example");
    const marks = tl.marks.filter((m) => m.kind === "attempt" && m.lane === lane?.id);
    expect(marks).toHaveLength(1);
    return { mark: marks[0], lane };
  };

  it("RCP-2, ERR-17: accepted and rejected in one answer: the attempt delivered (accepted), its summary names both; each recipient's sub-lane its own", async () => {
    for (const to of ["bob@b.example, nobody@b.example", "nobody@b.example, bob@b.example"]) {
      const { mark, lane } = await attemptOf(to);
      expect(mark?.outcome, to).toBe("accepted");
      const results = to.startsWith("bob") ? "accepted, rejected" : "rejected, accepted";
      // (The rule cited after it is the delivery machine's to choose.)
      expect(mark?.summary?.startsWith(`attempt 1 at +0:00:00: accepted — results: ${results}`), to).toBe(true);
      expect(lane?.recipientLanes.map((r) => [r.recipient, r.results.map((x) => x.status)])).toEqual(
        to.split(", ").map((r) => [r, [r.startsWith("bob") ? "accepted" : "rejected"]]),
      );
    }
  });

  it("STATE-6: accepted and deferred in one answer is a deferred attempt (the delivery goes on), whatever the order", async () => {
    for (const to of ["bob@b.example, carol@b.example", "carol@b.example, bob@b.example"]) {
      const t = await textTrace(
        text(to).replace(
          "  b.example: { mailboxes: [bob, carol] }",
          "  b.example: { mailboxes: [bob, carol], policy: { temporaryFailures: [{ mailbox: carol@b.example, times: 1 }] } }",
        ),
        "mixed.yaml",
      );
      const tl = buildTimeline(t.events, t.startedAtMs, labels);
      const first = tl.marks.find((m) => m.kind === "attempt" && m.attempt === 1);
      expect(first?.outcome, to).toBe("deferred");
      expect(first?.summary, to).toContain(
        `results: ${to.startsWith("bob") ? "accepted, deferred" : "deferred, accepted"}`,
      );
      expect(tl.marks.find((m) => m.kind === "attempt" && m.attempt === 2)?.outcome, to).toBe("accepted");
    }
  });

  it("RCP-3: every recipient rejected is a rejected attempt; every one accepted an accepted one", async () => {
    expect((await attemptOf("nobody@b.example, ghost@b.example")).mark?.outcome).toBe("rejected");
    expect((await attemptOf("bob@b.example, carol@b.example")).mark?.outcome).toBe("accepted");
  });
});
