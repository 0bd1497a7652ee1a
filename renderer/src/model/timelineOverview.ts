/**
 * The overview above the lanes: the whole run as buckets of attempts by
 * outcome, hand-offs, DSNs and bounces, the line of deliveries in flight, and
 * the window a brush or click on it asks for.
 */
import type { AttemptOutcome, Timeline } from "./timeline.ts";
import { timeScale, type ScaleKind, type TimeScale } from "./timelineScale.ts";
import { maxOf } from "../../../app/protocol/lists.ts";

/**
 * The overview's line of deliveries in flight, per theme: a pink that no outcome's colour is near (the
 * deferred bars' blue least of all), at 3:1 or more against the panel's surface in each theme (WCAG's
 * contrast for a graphic; timeline.test.ts computes both).
 */
export const IN_FLIGHT_COLOUR = { light: "#db2777", dark: "#f472b6" } as const;

/** Counts in one time bucket of the overview. */
export interface Bucket {
  readonly fromMs: number;
  readonly toMs: number;
  /** Attempts by outcome. */
  readonly attempts: Readonly<Record<AttemptOutcome, number>>;
  readonly handoffs: number;
  readonly dsns: number;
  readonly bounces: number;
  /** Deliveries started and not yet ended (Lane.endMs: the delivery actor's end) in the bucket. */
  readonly inFlight: number;
}

const zeroOutcomes = (): Record<AttemptOutcome, number> => ({
  accepted: 0,
  rejected: 0,
  deferred: 0,
  "temporary-eligible": 0,
  temporary: 0,
  permanent: 0,
  "no-service": 0,
  "no-common-version": 0,
});

/**
 * The whole run as `count` buckets of equal time (linear) or equal log-width,
 * or of equal width on a scale of the lanes' whole window (a compressed one):
 * the overview chart's bars. They cover the start to `toMs` (default the last
 * event): the lanes' whole window, so that each bar sits over the lanes' time
 * it counts, and two stacked timelines on one axis (Compare) bucket alike.
 */
export function buckets(
  timeline: Timeline,
  count: number,
  kind: ScaleKind | TimeScale = "linear",
  toMs: number = timeline.endMs,
): Bucket[] {
  const n = Math.max(1, Math.floor(count));
  // A scale of the lanes' whole window (a compressed one, say): buckets of equal width on it.
  const given = typeof kind === "string" ? undefined : kind;
  const scale: TimeScale = given
    ? {
        ...given,
        width: n,
        x: (t) => (given.x(t) / given.width) * n,
        timeAt: (x) => given.timeAt((x / n) * given.width),
      }
    : timeScale(kind as ScaleKind, timeline.startMs, Math.max(toMs, timeline.startMs + 1), n, timeline.startMs);
  const edges = Array.from({ length: n + 1 }, (_, i) => scale.timeAt(i));
  const rows = Array.from({ length: n }, (_, i) => ({
    fromMs: edges[i] ?? 0,
    toMs: edges[i + 1] ?? 0,
    attempts: zeroOutcomes(),
    handoffs: 0,
    dsns: 0,
    bounces: 0,
    inFlight: 0,
  }));
  const indexOf = (t: number) => Math.min(n - 1, Math.max(0, Math.floor(scale.x(t))));
  for (const m of timeline.marks) {
    const row = rows[indexOf(m.timeMs)];
    if (!row) continue;
    if (m.kind === "attempt" && m.outcome) row.attempts[m.outcome] += 1;
    else if (m.kind === "handoff") row.handoffs += 1;
    else if (m.kind === "dsn") row.dsns += 1;
    else if (m.kind === "bounce") row.bounces += 1;
  }
  // In flight: +1 where a delivery starts, −1 after the bucket where the delivery ended (not its first
  // recipient's outcome: the others may be retried for days); a running sum.
  const delta = new Array<number>(n + 1).fill(0);
  for (const lane of timeline.lanes) {
    delta[indexOf(lane.startMs)] = (delta[indexOf(lane.startMs)] ?? 0) + 1;
    if (lane.endMs !== undefined) delta[indexOf(lane.endMs) + 1] = (delta[indexOf(lane.endMs) + 1] ?? 0) - 1;
  }
  let running = 0;
  for (let i = 0; i < n; i++) {
    running += delta[i] ?? 0;
    const row = rows[i];
    if (row) row.inFlight = running;
  }
  return rows;
}

/**
 * The overview's line of deliveries in flight over `width` × `height`
 * pixels (the lanes' plot): a step per bucket, drawn from the bucket's left
 * edge to its right edge as the bars are, from x = 0 to x = width exactly,
 * the most in flight at the top (1 px in, for the stroke).
 */
export function inFlightPath(rows: readonly Bucket[], width: number, height: number): string {
  const n = rows.length;
  if (n === 0) return "";
  const peak = maxOf(
    rows.map((r) => r.inFlight),
    1,
  );
  const y = (v: number) => r1(height - 1 - (v / peak) * (height - 2));
  const x = (i: number) => r1((i / n) * width);
  let d = `M0,${y(rows[0]?.inFlight ?? 0)}`;
  rows.forEach((r, i) => {
    if (i > 0) d += ` V${y(r.inFlight)}`;
    d += ` H${x(i + 1)}`;
  });
  return d;
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/**
 * The window a gesture on the overview asks for, its bars `bucketCount` buckets over `scale` (the lanes'
 * whole window): a drag from `x0` to `x1` (px from the plot's left) brushes that range; a click (a move
 * of less than `slop` px) the bucket under it. Undefined for a gesture off the plot.
 */
export function overviewWindow(
  scale: TimeScale,
  x0: number,
  x1: number,
  bucketCount: number,
  slop = 6,
): readonly [number, number] | undefined {
  const w = scale.width;
  const clamp = (x: number) => Math.min(w, Math.max(0, x));
  if (Math.abs(x1 - x0) >= slop) {
    const a = clamp(Math.min(x0, x1));
    const b = clamp(Math.max(x0, x1));
    return b - a < 1 ? undefined : [scale.timeAt(a), scale.timeAt(b)];
  }
  if (x0 < 0 || x0 > w) return undefined;
  const n = Math.max(1, Math.floor(bucketCount));
  const i = Math.min(n - 1, Math.floor((x0 / w) * n));
  return [scale.timeAt((i * w) / n), scale.timeAt(((i + 1) * w) / n)];
}
