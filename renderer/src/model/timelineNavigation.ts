/** Moving about the timeline: pan and zoom of its window, and the keyboard's walk from mark to mark. */
import type { Lane, Mark } from "./timeline.ts";
import type { TimeScale } from "./timelineScale.ts";

/**
 * The window moved by `dxPx` pixels of `scale` (a drag to the right shows
 * earlier times), kept within [minMs, maxMs]: on a log scale too, since the
 * move is made in the scale's own units.
 */
export function panWindow(scale: TimeScale, dxPx: number, minMs: number, maxMs: number): readonly [number, number] {
  // How far each way the window can go before an end leaves the run.
  const room = dxPx > 0 ? -scale.x(minMs) : scale.width - scale.x(maxMs);
  const dx = dxPx > 0 ? Math.min(dxPx, Math.max(0, room)) : Math.max(dxPx, Math.min(0, room));
  if (dx === 0) return [scale.fromMs, scale.toMs];
  return [Math.max(minMs, scale.timeAt(-dx)), Math.min(maxMs, scale.timeAt(scale.width - dx))];
}

/**
 * The window zoomed by `factor` (< 1 zooms in) around the pixel `atPx`, kept
 * within [minMs, maxMs]; undefined when it would show the whole run (no zoom).
 */
export function zoomWindow(
  scale: TimeScale,
  factor: number,
  atPx: number,
  minMs: number,
  maxMs: number,
): readonly [number, number] | undefined {
  const from = Math.max(minMs, scale.timeAt(atPx - atPx * factor));
  const to = Math.min(maxMs, scale.timeAt(atPx + (scale.width - atPx) * factor));
  if (from <= minMs && to >= maxMs) return undefined;
  return to - from < 1 ? [scale.fromMs, scale.toMs] : [from, to];
}

/** The next mark from `current` in a direction, over the lanes' marks in time order (keyboard navigation). */
export function neighbourMark(
  marks: readonly Mark[],
  current: string | undefined,
  direction: "next" | "previous" | "up" | "down",
  lanes: readonly Lane[],
): Mark | undefined {
  const attempts = marks.filter((m) => m.lane !== undefined);
  if (attempts.length === 0) return undefined;
  const at = attempts.findIndex((m) => m.id === current);
  const here = attempts[at];
  if (!here) return direction === "previous" ? attempts[attempts.length - 1] : attempts[0];
  if (direction === "next" || direction === "previous") {
    const own = attempts.filter((m) => m.lane === here.lane);
    const i = own.indexOf(here);
    return own[direction === "next" ? i + 1 : i - 1] ?? here;
  }
  const li = lanes.findIndex((l) => l.id === here.lane);
  const target = lanes[direction === "down" ? li + 1 : li - 1];
  if (!target) return here;
  const own = attempts.filter((m) => m.lane === target.id);
  let best: Mark | undefined;
  for (const m of own) if (!best || Math.abs(m.timeMs - here.timeMs) < Math.abs(best.timeMs - here.timeMs)) best = m;
  return best ?? here;
}
