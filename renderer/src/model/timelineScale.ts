/**
 * The timeline's time scale: virtual time to x and back over a window of the
 * run, linear or log (a 1-minute retry and a 5-day give-up visible together).
 */

export type ScaleKind = "linear" | "log";

/** Maps virtual time to x and back, over a window of the run. */
export interface TimeScale {
  readonly kind: ScaleKind;
  readonly fromMs: number;
  readonly toMs: number;
  readonly width: number;
  x(timeMs: number): number;
  timeAt(x: number): number;
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
  };
}

/** Units of virtual time, in ms. */
export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
