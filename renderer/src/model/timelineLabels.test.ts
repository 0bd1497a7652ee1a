import { describe, expect, it } from "vitest";
import { buildTimeline, type Mark } from "./timeline.ts";
import { drawnMarks, itemsByLane, laneItems, type DrawnMark } from "./timelineDrawn.ts";
import { busyTimes, compressedScale, END_ROOM_PX, timeScale } from "./timelineScale.ts";
import { LANE_MID, laneLabels, resultRuns, type Box } from "./timelineLabels.ts";
import { arcCrosses, drawnConnectors, markObstacle } from "./timelineMarks.ts";
import { scenarioTrace } from "./testing.ts";

const labels = new Map([
  ["m0@a.example", "m0"],
  ["m1@a.example", "m1"],
]);
const intersect = (a: Box, b: Box) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

/** A mark of lane `l` at the start, and that mark drawn at `x` (`count` marks on that pixel). */
const mark = (id: string, kind: Mark["kind"], label: string): Mark => ({
  id,
  kind,
  lane: "l",
  timeMs: 0,
  seq: 0,
  label,
  summary: label,
  exchangeIds: [],
});
const at = (m: Mark, x: number, count = 1): DrawnMark => ({ mark: m, x, count });

describe("the labels of a lane's marks do not overlap (teach-mixed-recipient-results)", async () => {
  const t = await scenarioTrace("teach-mixed-recipient-results");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const items = itemsByLane(tl);
  const m1 = tl.lanes.find((l) => l.label === "m1 → b.example")!;
  const scale = timeScale("linear", t.startedAtMs, tl.endMs * 1.04 - t.startedAtMs * 0.04, 870, t.startedAtMs);
  const drawn = drawnMarks(laneItems(items, m1.id).marks, scale, new Set([m1.id]));

  it("m1's first attempt and the DSN to alice share a pixel column: the DSN's word beside its box, the attempt's number over its dot", () => {
    const placed = laneLabels(drawn, scale.width);
    for (const [i, a] of placed.entries())
      for (const b of placed.slice(i + 1)) expect(intersect(a.box, b.box), `${a.text} × ${b.text}`).toBe(false);
    const dsn = drawn.find((d) => d.mark.kind === "dsn" && d.x < 10)!;
    const byId = new Map(placed.map((p) => [p.id, p]));
    expect(byId.get(dsn.mark.id)?.text).toBe("DSN");
    // The DSN's box takes the place under attempt 1's dot: its number goes over the dot, at the row's top (the
    // receiver's `stored` triangle is between), in the dot's column, clear of every shape and label.
    const first = drawn.find((d) => d.mark.kind === "attempt")!;
    expect(first.mark.summary).toMatch(/^attempt 1 at /);
    const one = byId.get(first.mark.id)!;
    expect(one.text).toMatch(/^1\+?$/);
    expect(one.box.y1).toBeLessThanOrEqual(markObstacle("receiver")!.y0);
    expect(one.box.y0).toBeGreaterThanOrEqual(-2);
    expect(one.box.x0 - 4).toBeLessThanOrEqual(first.x);
    expect(one.box.x1 + 4).toBeGreaterThanOrEqual(first.x);
    // Many other attempt numbers are written, in time order, each clear of the one before.
    const numbers = placed.filter((p) => /^\d+\+?$/.test(p.text));
    expect(numbers.length).toBeGreaterThan(20);
    // The bounce and the give-up at the end keep their words.
    expect(placed.map((p) => p.text)).toContain("bounced");
  });

  it("every label stays inside the plot and off the other marks' shapes", () => {
    const placed = laneLabels(drawn, scale.width);
    for (const p of placed) {
      expect(p.box.x0).toBeGreaterThanOrEqual(-4.5);
      expect(p.box.x1).toBeLessThanOrEqual(scale.width + 4.5);
    }
  });

  it("a label finds the mark's other side when its preferred place is taken, and is left out when both are", () => {
    const placed = laneLabels(
      [
        at(mark("r", "receiver", "stored"), 400),
        at(mark("s", "receiver", "stored"), 398),
        at(mark("h", "bounce", ""), 420),
        at(mark("a", "attempt", "7"), 400),
      ],
      800,
    );
    const byId = new Map(placed.map((p) => [p.id, p]));
    expect(byId.get("h")).toMatchObject({ anchor: "start", text: "bounced" });
    expect(byId.get("r")).toMatchObject({ anchor: "end", text: "stored" });
    expect(byId.has("s")).toBe(false);
    expect(byId.get("a")).toMatchObject({ anchor: "middle", y: LANE_MID + 18 });
    for (const [i, a] of placed.entries())
      for (const b of placed.slice(i + 1)) expect(intersect(a.box, b.box)).toBe(false);
  });
});

describe("an attempt's number over its dot when a mark's shape is under it", () => {
  it("a DSN's box under the dot: the number over it, above the arcs that reach and leave the dot", () => {
    const placed = laneLabels([at(mark("d", "dsn", "DSN"), 400), at(mark("a", "attempt", "3"), 400)], 800, {
      arcs: [
        { x1: 300, x2: 400 },
        { x1: 400, x2: 500 },
      ],
    });
    const byId = new Map(placed.map((p) => [p.id, p]));
    expect(byId.get("a")).toMatchObject({ text: "3", anchor: "middle", y: 9, backing: false });
    // With no arc, right over the dot.
    expect(
      laneLabels([at(mark("d", "dsn", "DSN"), 400), at(mark("a", "attempt", "3"), 400)], 800).find((p) => p.id === "a"),
    ).toMatchObject({ anchor: "middle", y: LANE_MID - 9, backing: false });
    expect(byId.get("d")?.text).toBe("DSN");
  });

  it("a merged attempt whose `4+` finds no place is written `4`; with nothing under its dot, no number goes over it", () => {
    const placed = laneLabels(
      [
        at(mark("r", "receiver", "stored"), 1),
        at(mark("d", "dsn", "DSN"), 1),
        at(mark("a", "attempt", "4"), 1, 3),
        at(mark("b", "attempt", "9"), 300),
        at(mark("c", "attempt", "10"), 301),
      ],
      800,
    );
    const byId = new Map(placed.map((p) => [p.id, p]));
    expect(byId.get("a")).toMatchObject({ text: "4", y: 9 });
    // Attempts 9 and 10, a pixel apart: one number under them, the other left out (not over its dot).
    expect(placed.filter((p) => p.id === "b" || p.id === "c").map((p) => p.y)).toEqual([LANE_MID + 18]);
    for (const [i, a] of placed.entries())
      for (const b of placed.slice(i + 1)) expect(intersect(a.box, b.box), `${a.text} × ${b.text}`).toBe(false);
  });
});

describe("every attempt's number is written where a hand-off's diamond sits over its dot", async () => {
  const t = await scenarioTrace("receiver-down-past-fallback-window");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const lane = tl.lanes[0]!;
  const items = laneItems(itemsByLane(tl), lane.id);

  for (const width of [700, 870, 1170])
    it(`STATE-3: attempt 8 at +2:03:00 ended in the SMTP hand-off; its number is written under the diamond (${width} px)`, () => {
      const scale = timeScale("linear", t.startedAtMs, tl.endMs * 1.04 - t.startedAtMs * 0.04, width, t.startedAtMs);
      const drawn = drawnMarks(items.marks, scale, new Set([lane.id]));
      const placed = laneLabels(drawn, width, { arcs: drawnConnectors(items.connectors, scale) });
      // Left to right (the order they are placed in is the first, the last, then the others).
      const numbers = placed.filter((p) => /^\d+$/.test(p.text)).sort((a, b) => a.x - b.x);
      expect(numbers.map((p) => p.text)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
      // Each number under its own dot: it reaches the dot's middle.
      for (const p of numbers) {
        const dot = drawn.find((d) => d.mark.kind === "attempt" && d.mark.label === p.text)!;
        expect(p.box.x0 - 4, p.text).toBeLessThanOrEqual(dot.x);
        expect(p.box.x1 + 4, p.text).toBeGreaterThanOrEqual(dot.x);
      }
      const handoff = drawn.find((d) => d.mark.kind === "handoff")!;
      const eight = numbers.at(-1)!;
      expect(Math.abs(eight.x - handoff.x)).toBeLessThan(5);
      const diamond = markObstacle("handoff")!;
      expect(eight.box.y0).toBeGreaterThanOrEqual(diamond.y1);
      expect(placed.find((p) => p.id === handoff.mark.id)?.text).toBe("SMTP fallback");
      for (const [i, a] of placed.entries())
        for (const b of placed.slice(i + 1)) expect(intersect(a.box, b.box), `${a.text} × ${b.text}`).toBe(false);
    });
});

describe("the numbers at both ends of a lane: its first and last attempts", async () => {
  const t = await scenarioTrace("rate-limited-then-down");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const lane = tl.lanes.find((l) => l.label === "m1 → b.example")!;
  const items = laneItems(itemsByLane(tl), lane.id);

  const endMs = tl.endMs + (tl.endMs - tl.startMs) * 0.04;
  const scales = {
    linear: (width: number) => timeScale("linear", t.startedAtMs, endMs, width, t.startedAtMs),
    // The whole run as the view opens it: idle time compressed (decision 0095).
    compressed: (width: number) => compressedScale(busyTimes(tl), tl.startMs, endMs, width, tl.startMs),
  };

  // In the linear scale 127 was left out at 400–870 px and at 1400 px, 126 taking the place over its dot (the DSN's
  // word has the one under it). The compressed scale, the view's default for this 5-day run, capped the span after
  // the run's end like an idle one: below ~1150 px the bounce and its DSN sat at the plot's edge, their words to
  // their left over 127's places. The plot is 216, 416 and 696 px wide in 800, 1000 and 1280 px windows.
  const widths = [
    ...[400, 600, 870, 1000, 1400].map((width) => ["linear", width] as const),
    ...[200, 216, 300, 416, 500, 600, 696, 870, 1000, 1150, 1300, 1400].map((width) => ["compressed", width] as const),
  ];
  for (const [kind, width] of widths)
    it(`STATE-7, RETRY-2 (the timeline shows each attempt, decisions 0095, 0320): attempt 127, the last before the give-up, keeps its number beside the bounce and the DSN (${kind}, ${width} px)`, () => {
      const scale = scales[kind](width);
      const drawn = drawnMarks(items.marks, scale, new Set([lane.id]));
      const placed = laneLabels(drawn, width, { arcs: drawnConnectors(items.connectors, scale) });
      const attempts = drawn.filter((d) => d.mark.kind === "attempt");
      expect(attempts.at(-1)?.mark.summary).toMatch(/^attempt 127 at /);
      for (const dot of [attempts[0]!, attempts.at(-1)!]) {
        const number = placed.find((p) => p.id === dot.mark.id);
        expect(number?.text, dot.mark.label).toMatch(new RegExp(`^${dot.mark.label}\\+?$`));
        // In its dot's column; the last one's may end up to 8 px before its dot, left of the DSN's box.
        expect(number!.box.x0 - 4).toBeLessThanOrEqual(dot.x);
        expect(number!.box.x1 + (dot === attempts[0] ? 4 : 8)).toBeGreaterThanOrEqual(dot.x);
      }
      // The numbers read in order to the last: none is written right of 127's.
      const last = placed.find((p) => p.id === attempts.at(-1)!.mark.id)!;
      const numbers = placed.filter((p) => /^\d+\+?$/.test(p.text));
      for (const n of numbers) if (n !== last) expect(n.box.x1, n.text).toBeLessThan(last.box.x0);
      // The lane's end keeps its words, and no two labels overlap, nor a label a mark's shape.
      expect(placed.map((p) => p.text)).toEqual(expect.arrayContaining(["bounced", "DSN"]));
      for (const [i, a] of placed.entries())
        for (const b of placed.slice(i + 1)) expect(intersect(a.box, b.box), `${a.text} × ${b.text}`).toBe(false);
      for (const p of placed)
        for (const d of drawn) {
          const shape = markObstacle(d.mark.kind);
          if (shape === undefined) continue;
          const box = { x0: shape.x0 + d.x, x1: shape.x1 + d.x, y0: shape.y0, y1: shape.y1 };
          expect(intersect(p.box, box), `${p.text} × ${d.mark.kind} ${d.mark.label}`).toBe(false);
        }
    });
  // Compressed, the span after the run's end keeps END_ROOM_PX (the bounce at +5d 0:00:00 is 32 px before the plot's
  // end, where the view's 4 % more ends): the DSN's word to the right of its box, bounced over the last dots.
  for (const width of [216, 416, 696])
    it(`STATE-7: the lane's end keeps room for its words: DSN right of its box, clear of 127's number (compressed, ${width} px)`, () => {
      const scale = scales.compressed(width);
      const bounce = items.marks.find((m) => m.kind === "bounce")!;
      expect(scale.x(bounce.timeMs)).toBeCloseTo(width - END_ROOM_PX, 6);
      // The span after it is a break (drawn shorter than it lasts), its ends where the scale puts them.
      const tail = scale.breaks.at(-1)!;
      expect([tail.fromMs, tail.toMs, tail.x2]).toEqual([bounce.timeMs, endMs, width]);
      const drawn = drawnMarks(items.marks, scale, new Set([lane.id]));
      const placed = laneLabels(drawn, width, { arcs: drawnConnectors(items.connectors, scale) });
      const word = (kind: string) => placed.find((p) => p.id === drawn.find((d) => d.mark.kind === kind)?.mark.id)!;
      expect(word("dsn").box.x0).toBeGreaterThan(scale.x(bounce.timeMs) + 7);
      expect(word("bounce").box.x1).toBeLessThan(scale.x(bounce.timeMs));
      expect(word("bounce").y).toBeLessThan(LANE_MID);
    });
});

describe("labels over the retry connectors' arcs", async () => {
  const t = await scenarioTrace("teach-mixed-recipient-results");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const items = itemsByLane(tl);
  const m1 = tl.lanes.find((l) => l.label === "m1 → b.example")!;
  const own = laneItems(items, m1.id);
  const scale = timeScale("linear", t.startedAtMs, tl.endMs * 1.04 - t.startedAtMs * 0.04, 870, t.startedAtMs);
  const drawn = drawnMarks(own.marks, scale, new Set([m1.id]));
  const arcs = drawnConnectors(own.connectors, scale);

  it("m1's lane, arcs from end to end: `SMTP ruled out` and `bounced` cross them and are written on a backing, the others not", () => {
    const placed = laneLabels(drawn, scale.width, { arcs });
    for (const p of placed) expect(p.backing, p.text).toBe(arcs.some((a) => arcCrosses(a.x1, a.x2, p.box)));
    const byText = new Map(placed.map((p) => [p.text, p]));
    expect(byText.get("SMTP ruled out")?.backing).toBe(true);
    expect(byText.get("bounced")?.backing).toBe(true);
    expect(placed.filter((p) => /^\d+\+?$/.test(p.text)).every((p) => !p.backing)).toBe(true);
  });

  it("a label takes the side of its mark that no arc crosses, when there is one", () => {
    const mark = (id: string): Mark => ({
      id,
      kind: "receiver",
      lane: "l",
      timeMs: 0,
      seq: 0,
      label: "stored",
      summary: "stored",
      exchangeIds: [],
    });
    const drawnOne = [{ mark: mark("r"), x: 400, count: 1 }];
    // An arc leaves the mark to the right: the label goes to the left, with no backing.
    expect(laneLabels(drawnOne, 800, { arcs: [{ x1: 400, x2: 500 }] })[0]).toMatchObject({
      anchor: "end",
      backing: false,
    });
    // Arcs on both sides: the preferred side, on a backing.
    expect(
      laneLabels(drawnOne, 800, {
        arcs: [
          { x1: 300, x2: 400 },
          { x1: 400, x2: 500 },
        ],
      })[0],
    ).toMatchObject({ anchor: "start", backing: true });
    // No arcs: the preferred side.
    expect(laneLabels(drawnOne, 800)[0]).toMatchObject({ anchor: "start", backing: false });
  });
});

describe("a recipient's runs of results (teach-mixed-recipient-results)", async () => {
  const t = await scenarioTrace("teach-mixed-recipient-results");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const m1 = tl.lanes.find((l) => l.label === "m1 → b.example")!;
  const of = (r: string) => m1.recipientLanes.find((x) => x.recipient === r)!;
  const scale = timeScale("linear", t.startedAtMs, tl.endMs, 870, t.startedAtMs);

  it("ERR-9, ERR-23: dave, deferred at every attempt until the give-up, is one run written over its bar", () => {
    const dave = of("dave@b.example");
    const runs = resultRuns(dave, scale);
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run?.count).toBe(dave.results.length);
    expect(run?.count).toBeGreaterThan(100);
    expect(run?.text).toBe(`deferred ×${dave.results.length} (mailbox_full)`);
    expect(run?.label).toEqual({ x: (run?.fromX ?? 0) + 8, over: true });
  });

  it("carol's deferral and acceptance are two runs; the acceptance written after it, the deferral left to the hover", () => {
    const runs = resultRuns(of("carol@b.example"), scale);
    expect(runs.map((r) => r.text)).toEqual(["deferred (rate_limited)", "accepted"]);
    expect(runs[0]?.label).toBeUndefined();
    expect(runs[1]?.label?.over).toBe(false);
    // Zoomed onto the first 10 minutes, the deferral has room too.
    const zoomed = timeScale("linear", t.startedAtMs, t.startedAtMs + 12 * 60_000, 870, t.startedAtMs);
    expect(resultRuns(of("carol@b.example"), zoomed).map((r) => r.label?.over)).toEqual([false, false]);
  });
});
