/**
 * Readable long runs (docs/decisions/0095, 0096): the compressed axis, its ticks and
 * breaks, the overview's buckets and the moves over it, the arcs' words — on real traces.
 *
 * - rate-limited-then-down: 127 attempts of m1 over 5 days (STATE-7), the first retry after a 429's
 *   Retry-After (RETRY-7), the later ones at the 1 h cap (RETRY-2), jittered (RETRY-3).
 * - receiver-down-past-fallback-window: attempts at 0, 1, 3, 7, 15, 31, 63, 123 min (RETRY-1, RETRY-2, no
 *   jitter), the hand-off at +2:03:00 (STATE-3).
 */
import { describe, expect, it } from "vitest";
import { buildTimeline, type Timeline } from "./timeline.ts";
import { drawnConnectors } from "./timelineMarks.ts";
import { connectorTexts, laneLabels, waitText } from "./timelineLabels.ts";
import { drawnMarks, itemsByLane, laneItems } from "./timelineDrawn.ts";
import { panWindow, zoomWindow } from "./timelineNavigation.ts";
import { buckets, overviewWindow } from "./timelineOverview.ts";
import {
  breakThreshold,
  busyTimes,
  compressedScale,
  END_ROOM_PX,
  MIN_BREAK_MS,
  timelineScale,
  type TimeScale,
} from "./timelineScale.ts";
import { breakMarks, ticks } from "./timelineTicks.ts";
import { scenarioTrace, textTrace, scenarioText } from "./testing.ts";
import { minOf } from "../../../app/protocol/lists.ts";

const MIN = 60_000;
const H = 3_600_000;
const D = 86_400_000;

async function timelineOf(name: string): Promise<Timeline> {
  const t = await scenarioTrace(name);
  return buildTimeline(t.events, t.startedAtMs, new Map([["m1@a.example", "m1"]]));
}

/** The whole run as the view shows it: to the end and 4 % more. */
const wholeScale = (tl: Timeline, width: number): TimeScale =>
  compressedScale(busyTimes(tl), tl.startMs, tl.endMs + (tl.endMs - tl.startMs) * 0.04, width, tl.startMs);

const attemptsOf = (tl: Timeline, label: string) => {
  const lane = tl.lanes.find((l) => l.label === label);
  return tl.marks.filter((m) => m.kind === "attempt" && m.lane === lane?.id);
};

/** Where the axis' stated points (its ticks and its breaks' ends) put `timeMs`: linear between two of them. */
function axisSays(scale: TimeScale, startMs: number, timeMs: number): number {
  type Point = readonly [timeMs: number, x: number];
  const stated: Point[] = [
    ...ticks(scale, startMs).map((t): Point => [t.timeMs, t.x]),
    ...scale.breaks.flatMap((b): Point[] => [
      [b.fromMs, b.x1],
      [b.toMs, b.x2],
    ]),
    [scale.fromMs, 0],
    [scale.toMs, scale.width],
  ];
  const points = stated.sort((a, b) => a[0] - b[0]);
  const before = points.filter(([t]) => t <= timeMs).at(-1)!;
  const after = points.find(([t]) => t >= timeMs)!;
  return after[0] === before[0]
    ? before[1]
    : before[1] + ((timeMs - before[0]) / (after[0] - before[0])) * (after[1] - before[1]);
}

describe("the compressed axis", () => {
  it("STATE-7, RETRY-2: rate-limited-then-down's 127 attempts of m1 each drawn apart in 820 px, where the axis says", async () => {
    const tl = await timelineOf("rate-limited-then-down");
    const scale = wholeScale(tl, 820);
    const m1 = attemptsOf(tl, "m1 → b.example");
    expect(m1).toHaveLength(127);
    const xs = m1.map((m) => scale.x(m.timeMs));
    const gaps = xs.slice(1).map((x, i) => x - (xs[i] ?? 0));
    // 127 attempts in 820 px cannot be 14 px apart: each gets an even share instead (linear gave the first
    // seven attempts, an hour, 7 px in all).
    expect(minOf(gaps)).toBeGreaterThan(5);
    const linear = timelineScale("linear", false, [], scale.fromMs, scale.toMs, 820, tl.startMs);
    expect(linear.x(m1[6]!.timeMs) - linear.x(m1[0]!.timeMs)).toBeLessThan(8);
    // Each break sits between two busy moments, and is drawn where the scale puts its ends.
    expect(scale.breaks.length).toBeGreaterThan(120);
    for (const b of scale.breaks) {
      expect(b.toMs - b.fromMs).toBeGreaterThanOrEqual(MIN_BREAK_MS);
      expect(scale.x(b.fromMs)).toBeCloseTo(b.x1, 6);
      expect(scale.x(b.toMs)).toBeCloseTo(b.x2, 6);
      expect(m1.some((m) => m.timeMs > b.fromMs && m.timeMs < b.toMs)).toBe(false);
    }
    // Every attempt and the bounce sit where the axis says their time is, on either side of each break.
    for (const m of [...m1, ...tl.marks.filter((k) => k.kind === "bounce")])
      expect(Math.abs(axisSays(scale, tl.startMs, m.timeMs) - scale.x(m.timeMs))).toBeLessThan(0.01);
    // x and time, both ways.
    for (const px of [0, 3.3, 100, 409.5, 819]) expect(scale.x(scale.timeAt(px))).toBeCloseTo(px, 6);
    // The ticks: at least 90 px apart, none inside a break; a break's words where they fit, none here (6 px).
    const axis = ticks(scale, tl.startMs);
    axis.slice(1).forEach((t, i) => expect(t.x - (axis[i]?.x ?? 0)).toBeGreaterThanOrEqual(90));
    for (const t of axis) expect(scale.breaks.some((b) => t.timeMs > b.fromMs && t.timeMs < b.toMs)).toBe(false);
    expect(axis[0]?.label).toBe("+0:00:00");
    const marks = breakMarks(scale, axis, (s) => s.length * 6.6);
    expect(marks.every((b) => b.label === undefined)).toBe(true);
    expect(marks[0]?.hidden).toMatch(/^\d+ min/);
  });

  it("STATE-7, RETRY-2: the span after the run's end drawn END_ROOM_PX wide (a break), every attempt and the bounce still where the axis says (216, 416, 696 px: 800, 1000, 1280 px windows)", async () => {
    const tl = await timelineOf("rate-limited-then-down");
    const m1 = attemptsOf(tl, "m1 → b.example");
    const bounce = tl.marks.find((k) => k.kind === "bounce")!;
    for (const width of [216, 416, 696]) {
      const scale = wholeScale(tl, width);
      expect(scale.x(bounce.timeMs)).toBeCloseTo(width - END_ROOM_PX, 6);
      const tail = scale.breaks.at(-1)!;
      expect([tail.fromMs, tail.toMs, tail.x2]).toEqual([bounce.timeMs, scale.toMs, width]);
      expect(tail.x1).toBeCloseTo(width - END_ROOM_PX, 6);
      for (const m of [...m1, bounce])
        expect(Math.abs(axisSays(scale, tl.startMs, m.timeMs) - scale.x(m.timeMs))).toBeLessThan(0.01);
      for (const px of [0, width / 3, width - END_ROOM_PX / 2]) expect(scale.x(scale.timeAt(px))).toBeCloseTo(px, 6);
    }
  });

  it("RETRY-1, RETRY-2: receiver-down: the attempt at +0:03:00 sits where the axis' +0:00:00 and +0:10:00 put it; after a break, +1:03:00 at its own tick", async () => {
    const tl = await timelineOf("receiver-down-past-fallback-window");
    const scale = wholeScale(tl, 870);
    const axis = ticks(scale, tl.startMs);
    const at = (label: string) => axis.find((t) => t.label === label);
    const zero = at("+0:00:00")!;
    const ten = at("+0:10:00")!;
    expect(zero).toBeDefined();
    expect(ten).toBeDefined();
    const three = attemptsOf(tl, "m1 → b.example").find((m) => m.timeMs - tl.startMs === 3 * MIN)!;
    expect(scale.x(three.timeMs)).toBeCloseTo(zero.x + ((ten.x - zero.x) * 3) / 10, 6);
    // The idle spans before attempts 6, 7 and 8 (+0:31, +1:03, +2:03) are breaks, each labelled with its time.
    const marks = breakMarks(scale, axis, (s) => s.length * 6.6);
    expect(marks.map((b) => b.label)).toEqual(["… 16 min …", "… 32 min …", "… 57 min …"]);
    const sixtyThree = attemptsOf(tl, "m1 → b.example").find((m) => m.timeMs - tl.startMs === 63 * MIN)!;
    expect(at("+1:03:00")?.x).toBeCloseTo(scale.x(sixtyThree.timeMs), 6);
    // The fallback window's end (+2:00:00) is a busy time: kept at its place, its own tick after the break.
    expect(at("+2:00:00")?.x).toBeCloseTo(scale.x(tl.startMs + 2 * H), 6);
  });

  it("no break where the linear axis already tells the moments apart (happy-path); never under a minute", async () => {
    const tl = await timelineOf("happy-path");
    const scale = wholeScale(tl, 870);
    expect(scale.breaks).toEqual([]);
    expect(scale.x(tl.endMs)).toBeCloseTo(
      timelineScale("linear", false, [], scale.fromMs, scale.toMs, 870, tl.startMs).x(tl.endMs),
      6,
    );
    expect(breakThreshold([], 870)).toBe(Infinity);
    expect(breakThreshold([500, 800], 870)).toBe(Infinity);
    expect(breakThreshold([1000, 5 * D], 100)).toBeGreaterThanOrEqual(MIN_BREAK_MS);
  });

  it("zoom, pan and the overview's brush over breaks: windows of the times under the pointer; buckets count every attempt once", async () => {
    const tl = await timelineOf("rate-limited-then-down");
    const scale = wholeScale(tl, 820);
    const [from, to] = [scale.fromMs, scale.toMs];
    // Zoomed in twice around px 400: the window's ends are the times under px 200 and 610.
    const zoomed = zoomWindow(scale, 0.5, 400, from, to)!;
    expect(zoomed[0]).toBeCloseTo(scale.timeAt(200), 3);
    expect(zoomed[1]).toBeCloseTo(scale.timeAt(610), 3);
    // Panned 100 px to the left within the zoomed window: later times come in, the window stays in the run.
    const inZoom = compressedScale(busyTimes(tl), zoomed[0], zoomed[1], 820, tl.startMs);
    const panned = panWindow(inZoom, -100, from, to);
    expect(panned[0]).toBeGreaterThan(zoomed[0]);
    expect(panned[1]).toBeGreaterThan(zoomed[1]);
    expect(panned[1]).toBeLessThanOrEqual(to);
    // Past the run's start a pan stops there.
    expect(panWindow(scale, 50, from, to)).toEqual([from, to]);
    // A brush over the overview from px 100 to 300: the times there.
    const brushed = overviewWindow(scale, 100, 300, 120)!;
    expect(brushed[0]).toBeCloseTo(scale.timeAt(100), 3);
    expect(brushed[1]).toBeCloseTo(scale.timeAt(300), 3);
    // The overview's bars over the same scale: every attempt counted once, in the bucket under its x.
    const rows = buckets(tl, 120, scale);
    const counted = rows.reduce((n, r) => n + Object.values(r.attempts).reduce((a, b) => a + b, 0), 0);
    expect(counted).toBe(tl.marks.filter((m) => m.kind === "attempt").length);
    const last = attemptsOf(tl, "m1 → b.example").at(-1)!;
    const i = Math.floor((scale.x(last.timeMs) / 820) * 120);
    expect(rows[i]?.fromMs).toBeLessThanOrEqual(last.timeMs);
    expect(rows[i]?.toMs).toBeGreaterThanOrEqual(last.timeMs);
  });
});

describe("the arcs' words", () => {
  it("RETRY-7, RETRY-2, RETRY-3: rate-limited-then-down's waits: Retry-After 2 min, the schedule's, the 1 h cap", async () => {
    const tl = await timelineOf("rate-limited-then-down");
    const lane = tl.lanes.find((l) => l.label === "m1 → b.example")!;
    const of = (retry: number) => tl.connectors.find((c) => c.lane === lane.id && c.retry === retry)!;
    // The 429's Retry-After (120 s) is later than the schedule's 1 min: it decided the wait (timer.set).
    expect(connectorTexts(of(1))).toEqual(["Retry-After 2 min", "+2 min"]);
    expect(of(1).decidedBy).toBe("retry-after");
    // The schedule's doubling, jittered: 2 min → about 2 min, 4 min → 4 min 30 s.
    expect(connectorTexts(of(2))).toEqual(["+2 min"]);
    expect(connectorTexts(of(3))).toEqual([`+${waitText(of(3).toMs - of(3).fromMs)}`]);
    // From retry 7 the base delay is the cap (1 h, SPEC.md's: no spec.constants event); jitter makes the wait.
    const plan = lane.retries.find((r) => r.retry === 7)!;
    expect(plan.baseDelayMs).toBe(H);
    expect(connectorTexts(of(7))).toEqual([`+${waitText(plan.delayMs)} (1 h cap)`, `+${waitText(plan.delayMs)}`]);
    expect(of(6).capMs).toBeUndefined();
    expect(waitText(45_400)).toBe("45 s");
    expect(waitText(52 * MIN + 29_000)).toBe("52 min");
  });

  it("RETRY-2: a run whose cap is 30 min (spec.constants) says 30 min cap", async () => {
    const text = scenarioText("receiver-down-past-fallback-window").replace(
      /^seed:/m,
      "constants:\n  RETRY-2.cap: 30m\nseed:",
    );
    const t = await textTrace(text, "cap.yaml");
    expect(t.events.some((e) => e.name === "spec.constants")).toBe(true);
    const tl = buildTimeline(t.events, t.startedAtMs);
    const capped = tl.connectors.filter((c) => c.capMs !== undefined);
    expect(capped.length).toBeGreaterThan(0);
    for (const c of capped) expect(connectorTexts(c)[0]).toMatch(/\(30 min cap\)$/);
  });

  it("written over an arc where it fits, none over one too short for its words, none over another label", async () => {
    const tl = await timelineOf("receiver-down-past-fallback-window");
    const scale = wholeScale(tl, 870);
    const lane = tl.lanes[0]!;
    const items = laneItems(itemsByLane(tl), lane.id);
    const arcs = drawnConnectors(items.connectors, scale);
    const drawn = drawnMarks(items.marks, scale, new Set([lane.id]));
    const placed = laneLabels(drawn, 870, { arcs });
    const words = placed.filter((l) => l.id.startsWith("arc:"));
    expect(words.map((l) => l.text)).toContain("+4 min");
    expect(words.map((l) => l.text)).toContain("+16 min");
    for (const w of words) {
      const arc = arcs.find((a) => `arc:${a.connector.retry}` === w.id)!;
      expect(w.box.x0).toBeGreaterThanOrEqual(arc.x1);
      expect(w.box.x1).toBeLessThanOrEqual(arc.x2);
      for (const other of placed)
        if (other !== w)
          expect(
            other.box.x0 < w.box.x1 && w.box.x0 < other.box.x1 && other.box.y0 < w.box.y1 && w.box.y0 < other.box.y1,
          ).toBe(false);
    }
    // The first retry's arc (1 min, 14 px) is too short for `+1 min`: no words there.
    expect(words.some((l) => l.id === "arc:1")).toBe(false);
  });
});
