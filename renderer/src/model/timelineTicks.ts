/** The time axis' ticks: labelled offsets from the start, far enough apart to read at any zoom. */
import { DAY, HOUR, MINUTE, SECOND, type TimeScale } from "./timelineScale.ts";
import { formatDuration, formatOffset } from "./time.ts";

const STEPS = [
  1,
  10,
  100,
  SECOND,
  5 * SECOND,
  10 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  5 * DAY,
  10 * DAY,
  30 * DAY,
];

/** An axis label: `+5d` on whole days when the step is days, `+2:03:00`, `+0:00:01.500` below a second. */
export function tickLabel(offsetMs: number, stepMs: number): string {
  if (stepMs >= DAY && offsetMs % DAY === 0) return `+${offsetMs / DAY}d`;
  const text = formatOffset(offsetMs, 0);
  return stepMs >= SECOND ? text.replace(/\.\d{3}$/, "") : text;
}

/** How a tick's label is anchored: from the tick near the plot's left edge, up to it near its right edge. */
export function tickAnchor(x: number, width: number): "start" | "middle" | "end" {
  return x < 30 ? "start" : x > width - 30 ? "end" : "middle";
}

export interface Tick {
  readonly timeMs: number;
  readonly x: number;
  readonly label: string;
}

/** Ticks at least `minGapPx` apart, labelled as offsets from `startMs`. */
export function ticks(scale: TimeScale, startMs: number, minGapPx = 90): Tick[] {
  const all = scale.breaks.length > 0 ? brokenTicks(scale, startMs, minGapPx) : evenTicks(scale, startMs, minGapPx);
  // A label near the right edge ends at its tick (tickAnchor): kept where it does not run into the one before
  // (11 px text, about 6.6 px a character).
  const last = all.at(-1);
  const before = all.at(-2);
  const w = (t: Tick) => t.label.length * 6.6;
  if (last && before && tickAnchor(last.x, scale.width) === "end" && last.x - w(last) < before.x + w(before) / 2 + 6)
    all.pop();
  return all;
}

function evenTicks(scale: TimeScale, startMs: number, minGapPx: number): Tick[] {
  const out: Tick[] = [];
  if (scale.kind === "log") {
    const candidates = [0, SECOND, 10 * SECOND, MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, DAY, 5 * DAY, 30 * DAY];
    let lastX = -Infinity;
    for (const c of candidates) {
      const t = startMs + c;
      if (t < scale.fromMs || t > scale.toMs) continue;
      const x = scale.x(t);
      if (x - lastX < minGapPx) continue;
      lastX = x;
      out.push({ timeMs: t, x, label: c >= DAY ? `+${c / DAY}d` : tickLabel(c, c || SECOND) });
    }
    return out;
  }
  const span = scale.toMs - scale.fromMs;
  const wanted = span / Math.max(1, scale.width / minGapPx);
  const step = STEPS.find((s) => s >= wanted) ?? Math.ceil(wanted / (30 * DAY)) * 30 * DAY;
  const first = Math.ceil((scale.fromMs - startMs) / step) * step;
  for (let o = first; startMs + o <= scale.toMs; o += step) {
    const t = startMs + o;
    out.push({ timeMs: t, x: scale.x(t), label: tickLabel(o, step) });
  }
  return out;
}

/**
 * The ticks of a compressed axis (timelineScale.ts' compressedScale): even steps of the spans drawn at their
 * length, and the time each break ends at (where the axis starts again after it), at least `minGapPx`
 * apart, the earlier first. A tick inside a break would say a time the axis does not show evenly: none.
 */
function brokenTicks(scale: TimeScale, startMs: number, minGapPx: number): Tick[] {
  const candidates: { timeMs: number; step: number }[] = [];
  // The spans kept: from the window's start, between the breaks, to its end.
  const kept: [number, number][] = [];
  let from = scale.fromMs;
  for (const b of scale.breaks) {
    kept.push([from, b.fromMs]);
    from = b.toMs;
  }
  kept.push([from, scale.toMs]);
  // The kept spans' rate: px per ms, the same in each (the first one long enough to measure it).
  const long = kept.find(([a, b]) => b - a > 0 && scale.x(b) - scale.x(a) >= 1);
  const rate = long ? (scale.x(long[1]) - scale.x(long[0])) / (long[1] - long[0]) : 0;
  const wanted = rate > 0 ? minGapPx / rate : Infinity;
  const step = STEPS.find((s) => s >= wanted);
  for (const [a, b] of kept) {
    if (step !== undefined)
      for (let o = Math.ceil((a - startMs) / step) * step; startMs + o <= b; o += step)
        candidates.push({ timeMs: startMs + o, step });
  }
  for (const b of scale.breaks) if (b.toMs < scale.toMs) candidates.push({ timeMs: b.toMs, step: SECOND });
  candidates.sort((p, q) => p.timeMs - q.timeMs);
  const out: Tick[] = [];
  let lastX = -Infinity;
  for (const c of candidates) {
    const x = scale.x(c.timeMs);
    if (x - lastX < minGapPx || x > scale.width) continue;
    lastX = x;
    // A break's end is an event's time: to the second.
    const o = c.timeMs - startMs;
    out.push({
      timeMs: c.timeMs,
      x,
      label: tickLabel(c.step === SECOND ? Math.round(o / SECOND) * SECOND : o, c.step),
    });
  }
  return out;
}

/** A break of a compressed axis as the axis draws it: its words (`… 52 min …`) where they fit. */
export interface BreakMark {
  readonly fromMs: number;
  readonly toMs: number;
  readonly x1: number;
  readonly x2: number;
  /** `52 min`: how long the idle span it hides lasts. */
  readonly hidden: string;
  /** `… 52 min …` (or `52 min`), when it fits in the break without running into a tick's label. */
  readonly label: string | undefined;
}

/**
 * The compressed axis' breaks with their labels: `… 52 min …` (or, narrower, `52 min`) centred in the break where the break is wide
 * enough for it and it runs into no tick's label (`measure` gives 11 px text widths).
 */
export function breakMarks(
  scale: TimeScale,
  axisTicks: readonly Tick[],
  measure: (text: string) => number,
): BreakMark[] {
  const tickBoxes = axisTicks.map((t) => {
    const w = measure(t.label);
    const anchor = tickAnchor(t.x, scale.width);
    const x0 = anchor === "start" ? t.x : anchor === "end" ? t.x - w : t.x - w / 2;
    return [x0, x0 + w] as const;
  });
  return scale.breaks.map((b) => {
    const hidden = formatDuration(b.toMs - b.fromMs);
    const mid = (b.x1 + b.x2) / 2;
    const fits = (text: string) => {
      const w = measure(text);
      return b.x2 - b.x1 >= w + 6 && !tickBoxes.some(([x0, x1]) => x0 < mid + w / 2 + 4 && mid - w / 2 - 4 < x1);
    };
    // `… 52 min …`, else `52 min` in a narrower break (its slashes say it is one).
    const label = [`… ${hidden} …`, hidden].find(fits);
    return { fromMs: b.fromMs, toMs: b.toMs, x1: b.x1, x2: b.x2, hidden, label };
  });
}

/** A break's hover text: `52 min drawn short: no mark from +1:03:11 to +1:55:34`. */
export function breakTitle(b: BreakMark, startMs: number): string {
  const at = (t: number) => formatOffset(t, startMs).replace(/\.\d{3}$/, "");
  return `${b.hidden} drawn short: no mark from ${at(b.fromMs)} to ${at(b.toMs)}`;
}
