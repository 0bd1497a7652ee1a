/** The time axis' ticks: labelled offsets from the start, far enough apart to read at any zoom. */
import { DAY, HOUR, MINUTE, SECOND, type TimeScale } from "./timelineScale.ts";
import { formatOffset } from "./time.ts";

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

export interface Tick {
  readonly timeMs: number;
  readonly x: number;
  readonly label: string;
}

/** Ticks at least `minGapPx` apart, labelled as offsets from `startMs`. */
export function ticks(scale: TimeScale, startMs: number, minGapPx = 90): Tick[] {
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
