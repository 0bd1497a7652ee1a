/**
 * What a window of the timeline draws, however big the trace: the marks in
 * the visible window only, thinned to one per pixel column, and each lane's
 * own marks, bands and connectors found once per timeline.
 */
import type { Band, Mark, RetryConnector, Timeline } from "./timeline.ts";
import type { TimeScale } from "./timelineScale.ts";

/** The first index in `marks` (sorted by time) at or after `timeMs`. */
function lowerBound(marks: readonly Mark[], timeMs: number): number {
  let lo = 0;
  let hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((marks[mid]?.timeMs ?? 0) < timeMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The marks in [fromMs, toMs], found by binary search (the marks are sorted by time). */
export function marksInWindow(marks: readonly Mark[], fromMs: number, toMs: number): Mark[] {
  const out: Mark[] = [];
  for (let i = lowerBound(marks, fromMs); i < marks.length; i++) {
    const m = marks[i];
    if (!m || m.timeMs > toMs) break;
    out.push(m);
  }
  return out;
}

/** A mark drawn for several that fall in one pixel column of one lane: the first, and how many. */
export interface DrawnMark {
  readonly mark: Mark;
  readonly x: number;
  readonly count: number;
  /** An attempt: how far (px) the nearest other attempt drawn on its lane is, its dot drawn to fit (timelineMarks.ts). */
  readonly room?: number;
}

/**
 * The marks of the visible lanes in the visible window, at most one per lane,
 * kind and `columnPx` column: what the view draws, however big the trace.
 */
export function drawnMarks(
  marks: readonly Mark[],
  scale: TimeScale,
  lanes: ReadonlySet<string>,
  columnPx = 2,
): DrawnMark[] {
  const out: DrawnMark[] = [];
  const last = new Map<string, { col: number; index: number }>();
  for (const m of marksInWindow(marks, scale.fromMs, scale.toMs)) {
    if (m.lane === undefined ? false : !lanes.has(m.lane)) continue;
    const x = scale.x(m.timeMs);
    const col = Math.floor(x / columnPx);
    const key = `${m.lane ?? ""}|${m.kind}`;
    const prev = last.get(key);
    if (prev && prev.col === col) {
      const d = out[prev.index];
      if (d) out[prev.index] = { ...d, count: d.count + 1 };
      continue;
    }
    last.set(key, { col, index: out.length });
    out.push({ mark: m, x, count: 1 });
  }
  // Each attempt's room: the distance to the attempts drawn before and after it on its lane.
  const before = new Map<string, number>();
  out.forEach((d, i) => {
    if (d.mark.kind !== "attempt") return;
    const lane = d.mark.lane ?? "";
    const j = before.get(lane);
    const prev = j === undefined ? undefined : out[j];
    if (prev) {
      const gap = d.x - prev.x;
      out[j as number] = { ...prev, room: Math.min(prev.room ?? Infinity, gap) };
      out[i] = { ...d, room: gap };
    }
    before.set(lane, i);
  });
  return out;
}

/** What one lane draws, found once per timeline so that a pan or zoom looks at that lane's own things only. */
export interface LaneItems {
  /** The lane's marks and those of no lane (DNS changes of no delivered domain), by time. */
  readonly marks: readonly Mark[];
  readonly bands: readonly Band[];
  /** The retries that happened (those the give-up cut short are not drawn). */
  readonly connectors: readonly RetryConnector[];
  /** The lane ended in a bounce (its give-up line then goes without its own label). */
  readonly bounced: boolean;
}

const NO_ITEMS: LaneItems = { marks: [], bands: [], connectors: [], bounced: false };

/**
 * Each lane's marks, bands and connectors, in one pass over the timeline's:
 * a lane's redraw then costs in proportion to what it has, not to the whole
 * trace (pans and zooms at 30 frames per second on 100k events).
 */
export function itemsByLane(timeline: Timeline): ReadonlyMap<string, LaneItems> {
  type Builder = { marks: Mark[]; bands: Band[]; connectors: RetryConnector[]; bounced: boolean };
  const out = new Map<string, Builder>();
  const of = (lane: string): Builder => {
    let b = out.get(lane);
    if (!b) {
      b = { marks: [], bands: [], connectors: [], bounced: false };
      out.set(lane, b);
    }
    return b;
  };
  for (const lane of timeline.lanes) of(lane.id);
  const global: Mark[] = [];
  for (const m of timeline.marks) {
    if (m.lane === undefined) {
      global.push(m);
      continue;
    }
    const b = of(m.lane);
    b.marks.push(m);
    if (m.kind === "bounce") b.bounced = true;
  }
  for (const band of timeline.bands) of(band.lane).bands.push(band);
  for (const c of timeline.connectors) if (c.happened) of(c.lane).connectors.push(c);
  if (global.length > 0)
    for (const b of out.values())
      b.marks =
        b.marks.length === 0 ? global : [...b.marks, ...global].sort((x, y) => x.timeMs - y.timeMs || x.seq - y.seq);
  return out;
}

/** A lane's items, or nothing for a lane the timeline does not have. */
export const laneItems = (items: ReadonlyMap<string, LaneItems>, lane: string): LaneItems =>
  items.get(lane) ?? NO_ITEMS;

/** The connectors that reach into [fromMs, toMs]. */
export function connectorsInWindow(
  connectors: readonly RetryConnector[],
  fromMs: number,
  toMs: number,
): RetryConnector[] {
  return connectors.filter((c) => c.toMs >= fromMs && c.fromMs <= toMs);
}
