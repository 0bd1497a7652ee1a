/**
 * The timeline's time scale: virtual time to x and back over a window of the
 * run, linear or log (a 1-minute retry and a 5-day give-up visible together),
 * or linear with its idle spans compressed (item 3;
 * docs/decisions/0095): a piecewise axis whose breaks are drawn and say how
 * long they are.
 */

import type { Timeline } from "./timeline.ts";
import { giveUpOf } from "./timelineApplies.ts";

export type ScaleKind = "linear" | "log";

/** Maps virtual time to x and back, over a window of the run. */
export interface TimeScale {
  readonly kind: ScaleKind;
  readonly fromMs: number;
  readonly toMs: number;
  readonly width: number;
  x(timeMs: number): number;
  timeAt(x: number): number;
  /** The idle spans drawn shorter than they last (a compressed axis), by time; none on a linear or log scale. */
  readonly breaks: readonly AxisBreak[];
}

/** An idle span of the window drawn shorter than it lasts: from one busy time to the next. */
export interface AxisBreak {
  readonly fromMs: number;
  readonly toMs: number;
  readonly x1: number;
  readonly x2: number;
}

/** Log scale unit: time from the start in seconds, +1 so that the start maps to 0. */
const logOf = (ms: number) => Math.log10(1 + Math.max(0, ms) / 1000);
const unlog = (v: number) => (10 ** v - 1) * 1000;

/**
 * A scale from [fromMs, toMs] to [0, width]. Log measures time since
 * `startMs` (a 1-minute retry and a 5-day give-up visible together).
 */
export function timeScale(kind: ScaleKind, fromMs: number, toMs: number, width: number, startMs: number): TimeScale {
  const span = Math.max(1, toMs - fromMs);
  if (kind === "linear")
    return {
      kind,
      fromMs,
      toMs,
      width,
      x: (t) => ((t - fromMs) / span) * width,
      timeAt: (x) => fromMs + (x / width) * span,
      breaks: [],
    };
  const a = logOf(fromMs - startMs);
  const b = Math.max(a + 1e-9, logOf(toMs - startMs));
  return {
    kind,
    fromMs,
    toMs,
    width,
    x: (t) => ((logOf(t - startMs) - a) / (b - a)) * width,
    timeAt: (x) => startMs + unlog(a + (x / width) * (b - a)),
    breaks: [],
  };
}

/** Idle spans shorter than this are never compressed (the sequence diagram's quiet span, sequence.ts). */
export const MIN_BREAK_MS = 60_000;
/**
 * How wide a compressed axis draws the span after the run's end, at least: the words of the run's last marks
 * (`DSN` to the right of its box) fit there, clear of the last attempt's number under its dot.
 */
export const END_ROOM_PX = 32;
/** Gaps shorter than this between busy times are parts of one moment (an attempt's exchanges), not told apart. */
const SAME_MOMENT_MS = 1000;
/** How far apart the closest two busy moments should be drawn, when the width allows it: a dot and a gap. */
export const TELL_APART_PX = 14;

/**
 * How long an idle span may be drawn at its length, on a window `width` px wide whose busy times leave
 * `gaps` (ms) between them: the longest such that the closest two moments (gaps of a second or more) are
 * {@link TELL_APART_PX} apart, every longer gap drawn as long as this one (a break). Infinity when the
 * window drawn linear already tells them apart (no break); never under {@link MIN_BREAK_MS}.
 */
export function breakThreshold(gaps: readonly number[], width: number): number {
  const sorted = gaps.filter((g) => g > 0).sort((a, b) => a - b);
  const closest = sorted.find((g) => g >= SAME_MOMENT_MS);
  if (closest === undefined) return Infinity;
  // Σ min(gap, q) may be at most `budget` for the closest gap to be drawn TELL_APART_PX wide.
  const budget = (width * closest) / TELL_APART_PX;
  let below = 0;
  let q = Infinity;
  for (let i = 0; i < sorted.length; i++) {
    const g = sorted[i] ?? 0;
    // With q in [g, next gap): Σ = below (gaps before i) + q × (gaps from i on).
    const rest = sorted.length - i;
    if (below + g * rest > budget) {
      q = i === 0 ? g : Math.max((budget - below) / rest, sorted[i - 1] ?? 0);
      break;
    }
    below += g;
  }
  if (q === Infinity) return Infinity;
  return Math.max(MIN_BREAK_MS, q, closest);
}

/**
 * A linear scale over [fromMs, toMs] whose idle spans — the gaps between consecutive `busy` times (sorted
 * or not; those outside the window ignored) longer than {@link breakThreshold} — are drawn as long as the
 * threshold: breaks. Every time keeps its place in order; inside a break time runs evenly over its width;
 * outside the window the scale goes on at the rate of the spans kept (a pan past the window's edges).
 */
export function compressedScale(
  busy: readonly number[],
  fromMs: number,
  toMs: number,
  width: number,
  startMs: number,
): TimeScale {
  const to = Math.max(fromMs + 1, toMs);
  const points = [fromMs, ...busy.filter((t) => t > fromMs && t < to), to].sort((a, b) => a - b);
  const gaps: number[] = [];
  for (let i = 1; i < points.length; i++) gaps.push((points[i] ?? 0) - (points[i - 1] ?? 0));
  const q = breakThreshold(gaps, width);
  if (q === Infinity) return timeScale("linear", fromMs, toMs, width, startMs);
  const total = gaps.reduce((sum, g) => sum + Math.min(g, q), 0);
  let k = width / total;
  // The span after the run's last busy time (the view's 4 % past the end): room for the words of the run's last
  // marks, not an idle span like the others. Capped like one, it put the bounce and its DSN at the plot's edge,
  // their words to their left over the last attempt's number. It is drawn END_ROOM_PX wide (a break still, when
  // that is shorter than it lasts at the rate of the rest), or at its length where that is narrower.
  // (A quarter of the width at most: a plot narrower than 128 px keeps three quarters for the run.)
  const tail = gaps.at(-1) ?? 0;
  const room = Math.min(END_ROOM_PX, width / 4);
  const rest = total - Math.min(tail, q);
  let tailPx = k * Math.min(tail, q);
  if (rest > 0 && tailPx < room && !busy.some((t) => t >= to)) {
    k = (width - room) / rest;
    tailPx = room;
    if (k * tail < room) {
      k = width / (rest + tail);
      tailPx = k * tail;
    }
  }
  // The pieces: [t0, t1] drawn over [x0, x1].
  const t0s: number[] = [fromMs];
  const x0s: number[] = [0];
  const breaks: AxisBreak[] = [];
  let x = 0;
  for (let i = 0; i < gaps.length; i++) {
    const g = gaps[i] ?? 0;
    if (g <= 0) continue;
    const a = points[i] ?? 0;
    const b = points[i + 1] ?? 0;
    const tailGap = i === gaps.length - 1;
    const next = tailGap ? width : x + k * Math.min(g, q);
    if (tailGap ? tailPx < k * g - 1e-6 : g > q) breaks.push({ fromMs: a, toMs: b, x1: x, x2: next });
    x = next;
    t0s.push(b);
    x0s.push(x);
  }
  const last = t0s.length - 1;
  /** The last index i with list[i] ≤ v. */
  const at = (list: readonly number[], v: number) => {
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((list[mid] ?? 0) <= v) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  return {
    kind: "linear",
    fromMs,
    toMs: to,
    width,
    breaks,
    x(t) {
      if (t <= fromMs) return (t - fromMs) * k;
      if (t >= to) return width + (t - to) * k;
      const i = Math.min(last - 1, at(t0s, t));
      const ta = t0s[i] ?? 0;
      const tb = t0s[i + 1] ?? ta;
      const xa = x0s[i] ?? 0;
      const xb = x0s[i + 1] ?? xa;
      return tb === ta ? xa : xa + ((t - ta) / (tb - ta)) * (xb - xa);
    },
    timeAt(px) {
      if (px <= 0) return fromMs + px / k;
      if (px >= width) return to + (px - width) / k;
      const i = Math.min(last - 1, at(x0s, px));
      const ta = t0s[i] ?? 0;
      const tb = t0s[i + 1] ?? ta;
      const xa = x0s[i] ?? 0;
      const xb = x0s[i + 1] ?? xa;
      return xb === xa ? ta : ta + ((px - xa) / (xb - xa)) * (tb - ta);
    },
  };
}

/**
 * The busy times of a timeline, sorted: every mark's, each lane's start, end and give-up, the fallback
 * windows' and faults' edges. A compressed axis keeps them at their place and compresses the idle spans
 * between them.
 */
export function busyTimes(timeline: Timeline): number[] {
  const out = new Set<number>();
  for (const m of timeline.marks) out.add(m.timeMs);
  for (const l of timeline.lanes) {
    out.add(l.startMs);
    if (l.endMs !== undefined) out.add(l.endMs);
    const giveUp = giveUpOf(l);
    if (giveUp !== undefined) out.add(giveUp);
  }
  for (const b of timeline.bands) {
    out.add(b.fromMs);
    if (b.untilMs !== undefined) out.add(b.untilMs);
  }
  return [...out].sort((a, b) => a - b);
}

/** Runs longer than this get a compressed axis unless the user turns it off (a 5-day run). */
export const COMPRESS_BY_DEFAULT_OVER_MS = 86_400_000;

/**
 * The timeline's scale over a window: log, linear, or linear with its idle spans compressed around `busy`
 * (busyTimes) when `compress` is on.
 */
export function timelineScale(
  kind: ScaleKind,
  compress: boolean,
  busy: readonly number[],
  fromMs: number,
  toMs: number,
  width: number,
  startMs: number,
): TimeScale {
  return kind === "linear" && compress
    ? compressedScale(busy, fromMs, toMs, width, startMs)
    : timeScale(kind, fromMs, toMs, width, startMs);
}

/** Units of virtual time, in ms. */
export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
