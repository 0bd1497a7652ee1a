/** The retry-delay chart of one lane: attempt number against the delay before it, in minutes. */
import type { FallbackRuledOut, Lane } from "./timeline.ts";
import { HOUR, MINUTE } from "./timelineScale.ts";
import { maxOf, minOf } from "../../../app/protocol/lists.ts";

export interface RetryChartRow {
  /** The attempt the delay comes before. */
  readonly attempt: number;
  /** Minutes, for the chart. */
  readonly base: number;
  readonly jittered: number;
  /** The ±20 % band around the base delay, when jitter is on: [low, high]. */
  readonly band: readonly [number, number] | undefined;
  readonly lowerBound: number | undefined;
  /** The delay actually waited, start to start. */
  readonly actual: number;
  readonly decidedBy: string;
  readonly happened: boolean;
  readonly atMs: number;
}

export interface RetryChart {
  readonly rows: readonly RetryChartRow[];
  /**
   * The first attempt made at or after the fallback window's end, when the window still decided something
   * there (no answer had ruled SMTP fallback out).
   */
  readonly fallbackWindowEndAttempt: number | undefined;
  /** Where SMTP fallback was ruled out: the window's end then decides nothing. */
  readonly fallbackRuledOut: FallbackRuledOut | undefined;
  /** The last attempt before the give-up, when the actor gave up. */
  readonly giveUpAfterAttempt: number | undefined;
  /** The cap of the schedule, in minutes (60), when some retry reached it. */
  readonly capMinutes: number | undefined;
  /**
   * The waits the schedule gave the capped retries after jitter (RETRY-3 multiplies the capped delay, G16),
   * in minutes, when jitter was on: the waits beside the cap can be longer than it.
   */
  readonly cappedJitter: { readonly minMinutes: number; readonly maxMinutes: number } | undefined;
  /** The delay axis' ticks, in minutes: 0 and even steps (1, 2, 5, 10, 15, 30, 60 … minutes) past the longest. */
  readonly delayTicks: readonly number[];
}

/** Steps of the delay axis, in minutes. */
const DELAY_STEPS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 360, 720, 1440];

/** Ticks from 0 past `top` minutes in even steps, at most `most` + 1 of them. */
export function delayTicks(top: number, most = 6): number[] {
  const step = DELAY_STEPS.find((s) => top / s <= most) ?? Math.ceil(top / most / 1440) * 1440;
  const count = Math.max(1, Math.ceil(top / step - 1e-9));
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}

/** The retry-delay chart of one lane: attempt number against the delay before it, in minutes. */
export function retryChart(lane: Lane): RetryChart {
  const min = (ms: number) => ms / MINUTE;
  const rows = lane.retries.map((r): RetryChartRow => ({
    attempt: r.attempt,
    base: min(r.baseDelayMs),
    jittered: min(r.jitteredDelayMs),
    band: r.jitter ? [min(r.baseDelayMs * 0.8), min(r.baseDelayMs * 1.2)] : undefined,
    lowerBound: r.lowerBoundDelayMs !== undefined ? min(r.lowerBoundDelayMs) : undefined,
    actual: min(r.delayMs),
    decidedBy: r.decidedBy,
    happened: r.happened,
    atMs: r.atMs,
  }));
  const end = lane.fallbackRuledOut === undefined ? lane.fallbackWindowEndMs : undefined;
  const after = end === undefined ? undefined : rows.find((r) => r.happened && r.atMs >= end);
  const missed = rows.find((r) => !r.happened);
  const capped = lane.retries.filter((r) => r.baseDelayMs >= HOUR);
  const jittered = capped.filter((r) => r.jitter).map((r) => r.jitteredDelayMs / MINUTE);
  const top = maxOf(
    rows.map((r) => Math.max(r.actual, r.band?.[1] ?? 0, r.lowerBound ?? 0)),
    0,
  );
  return {
    rows,
    fallbackWindowEndAttempt: after?.attempt,
    fallbackRuledOut: lane.fallbackRuledOut,
    giveUpAfterAttempt: missed ? missed.attempt - 1 : undefined,
    capMinutes: capped.length > 0 ? 60 : undefined,
    cappedJitter: jittered.length > 0 ? { minMinutes: minOf(jittered), maxMinutes: maxOf(jittered) } : undefined,
    delayTicks: delayTicks(top),
  };
}

/** Words for a decider. */
export const DECIDER_TEXT: Readonly<Record<string, string>> = {
  "base-delay": "schedule (base delay)",
  "jittered-delay": "schedule (jittered)",
  "retry-after": "Retry-After lower bound",
  "attempt-end": "the attempt's end",
};
