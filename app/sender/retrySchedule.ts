/**
 * The retry schedule of SPEC.md ("States and transitions › Retry schedule"),
 * exactly as gap G16 reads it, as pure functions of time: no clock, no timer,
 * no randomness of its own (jitter takes the Random port).
 *
 * - Retry n (n ≥ 1) comes min(60 s · 2^(n−1), 3600 s) after attempt n (the
 *   n-th attempt, i.e. retry n−1): with jitter off, attempts at 0, 1, 3, 7,
 *   15, 31, 63, 123, 183, 243 … minutes (RETRY-1, RETRY-2).
 * - Jitter multiplies each delay by a uniform factor in [0.8, 1.2] (RETRY-3).
 * - Retry-After / `retry_after` are lower bounds: the next attempt is at the
 *   later of the scheduled time and the requested one (RETRY-7).
 * - The fallback window is 2 hours by default and 1 to 4 hours in production
 *   (RETRY-4, RETRY-5); give-up is 5 days after the first attempt (RETRY-6).
 *
 * Delays count from the start of the previous attempt (its scheduled time), not
 * from when its answer came, so a slow answer does not stretch the schedule.
 */
import type { Random } from "../ports.ts";
import { SPEC_CONSTANTS, type SpecConstants } from "../protocol/specConstants.ts";

/** RETRY-1: the first retry, 1 minute after the first attempt. */
export const FIRST_RETRY_DELAY_MS = SPEC_CONSTANTS.firstRetryMs;
/** RETRY-2: the delay doubles per attempt up to 1 hour. */
export const MAX_RETRY_DELAY_MS = SPEC_CONSTANTS.retryCapMs;
/** RETRY-3: each delay is randomized by ±20 %. */
export const JITTER_FRACTION = SPEC_CONSTANTS.jitterFraction;
/** RETRY-4: the fallback window SHOULD be 2 hours. */
export const DEFAULT_FALLBACK_WINDOW_S = 7_200;
/** RETRY-5: in production the window MUST be within 1 … */
export const MIN_FALLBACK_WINDOW_S = SPEC_CONSTANTS.fallbackWindowMinS;
/** … and 4 hours. */
export const MAX_FALLBACK_WINDOW_S = SPEC_CONSTANTS.fallbackWindowMaxS;
/** RETRY-6: give up 5 days after the first attempt. */
export const GIVE_UP_AFTER_MS = SPEC_CONSTANTS.giveUpMs;

/**
 * The delay before retry `retry` (1 for the first retry) without jitter:
 * min(60 s · 2^(retry−1), 3600 s) (G16), with the first retry, the factor
 * and the cap of `constants` (RETRY-1, RETRY-2; SPEC.md's by default).
 *
 * @throws RangeError when `retry` is not an integer ≥ 1.
 */
export function baseRetryDelayMs(retry: number, constants: SpecConstants = SPEC_CONSTANTS): number {
  if (!Number.isInteger(retry) || retry < 1) throw new RangeError(`retry must be an integer ≥ 1, not ${retry}`);
  const { firstRetryMs: first, backoffFactor: factor, retryCapMs: cap } = constants;
  // A count so large that the power overflows gives Infinity, and the cap.
  return Math.min(Math.round(first * factor ** (retry - 1)), cap);
}

/**
 * A delay with jitter (RETRY-3): × uniform(0.8, 1.2) (the fraction of
 * `constants`) from one draw of `random`, rounded to the millisecond. Without
 * `random` (jitter off) the delay is returned unchanged and nothing is drawn.
 */
export function jitteredDelayMs(
  delayMs: number,
  random: Random | undefined,
  constants: SpecConstants = SPEC_CONSTANTS,
): number {
  if (random === undefined) return delayMs;
  const fraction = constants.jitterFraction;
  const factor = 1 - fraction + 2 * fraction * random.next();
  return Math.round(delayMs * factor);
}

/** When and why the next attempt happens. */
export interface RetryPlan {
  /** The retry's number (1 for the first retry), i.e. the number of attempts made so far. */
  readonly retry: number;
  /** When the previous attempt started: the delays count from here. */
  readonly lastAttemptAtMs: number;
  /** The schedule's delay for this retry without jitter: min(60 s · 2^(retry−1), 3600 s) (RETRY-1, RETRY-2). */
  readonly baseDelayMs: number;
  /** Whether jitter was applied (G16 `jitter=on`, RETRY-3). */
  readonly jittered: boolean;
  /** When the schedule alone would place it: previous attempt + (jittered) delay. */
  readonly scheduledAtMs: number;
  /** The (jittered) delay the schedule used; `baseDelayMs` when jitter is off. */
  readonly delayMs: number;
  /** The latest Retry-After / `retry_after` lower bound, if any (RETRY-7). */
  readonly lowerBoundMs?: number;
  /** When the next attempt happens: the later of the scheduled time, the lower bound and now. */
  readonly atMs: number;
  /** What decided `atMs`: the schedule, or a Retry-After / `retry_after` lower bound later than it. */
  readonly decidedBy: "schedule" | "retry-after";
}

/**
 * Which time a retry plan's `atMs` is, in full (for the trace): the schedule's
 * delay (`base-delay` with jitter off, `jittered-delay` with it on), the
 * Retry-After / `retry_after` lower bound, or, when the attempt ended after
 * both, its end (`attempt-end`: a retry is never in the past). At a tie the
 * schedule wins, then the lower bound.
 */
export type RetryDecider = "base-delay" | "jittered-delay" | "retry-after" | "attempt-end";

/** What decided `plan.atMs` ({@link RetryDecider}). */
export function retryDecider(plan: RetryPlan): RetryDecider {
  if (plan.atMs === plan.scheduledAtMs) return plan.jittered ? "jittered-delay" : "base-delay";
  if (plan.atMs === plan.lowerBoundMs) return "retry-after";
  return "attempt-end";
}

export interface PlanRetryInput {
  /** Attempts made so far (≥ 1): the next one is retry number `attempts`. */
  readonly attempts: number;
  /** When the last attempt started. */
  readonly lastAttemptAtMs: number;
  /** Now, on the Clock: a retry is never scheduled in the past. */
  readonly nowMs: number;
  /** The latest lower bound from Retry-After / `retry_after`, as a time. */
  readonly lowerBoundMs?: number;
  /** The Random port when jitter is on (G16 `jitter=on`), undefined when off. */
  readonly jitter?: Random;
  /** The draft's numbers in force; default SPEC.md's. */
  readonly constants?: SpecConstants;
}

/** The next attempt after `attempts` attempts (G16, RETRY-1, RETRY-2, RETRY-3, RETRY-7). */
export function planRetry(input: PlanRetryInput): RetryPlan {
  const constants = input.constants ?? SPEC_CONSTANTS;
  const baseDelayMs = baseRetryDelayMs(input.attempts, constants);
  const delayMs = jitteredDelayMs(baseDelayMs, input.jitter, constants);
  const scheduledAtMs = input.lastAttemptAtMs + delayMs;
  const bound = input.lowerBoundMs;
  const decidedBy = bound !== undefined && bound > scheduledAtMs ? "retry-after" : "schedule";
  const atMs = Math.max(scheduledAtMs, bound ?? scheduledAtMs, input.nowMs);
  return {
    retry: input.attempts,
    lastAttemptAtMs: input.lastAttemptAtMs,
    baseDelayMs,
    jittered: input.jitter !== undefined,
    scheduledAtMs,
    delayMs,
    ...(bound !== undefined && { lowerBoundMs: bound }),
    atMs,
    decidedBy,
  };
}

/**
 * The start times of the first `count` attempts, relative to the first, when
 * every attempt fails at once and nothing sets a lower bound: the schedule as
 * a table (with jitter off, [0, 60000, 180000, 420000, …]).
 */
export function attemptOffsetsMs(count: number, jitter?: Random, constants: SpecConstants = SPEC_CONSTANTS): number[] {
  const offsets: number[] = [];
  let at = 0;
  for (let attempt = 1; attempt <= count; attempt++) {
    offsets.push(at);
    at = planRetry({
      attempts: attempt,
      lastAttemptAtMs: at,
      nowMs: at,
      constants,
      ...(jitter !== undefined && { jitter }),
    }).atMs;
  }
  return offsets;
}

/** When the fallback window ends for a message whose first attempt was at `firstAttemptAtMs`. */
export function fallbackWindowEndMs(firstAttemptAtMs: number, fallbackWindowS: number): number {
  return firstAttemptAtMs + fallbackWindowS * 1000;
}

/** Whether an attempt at `attemptAtMs` is made at or after the end of the fallback window (STATE-3). */
export function isAtOrAfterFallbackWindow(
  firstAttemptAtMs: number,
  attemptAtMs: number,
  fallbackWindowS: number,
): boolean {
  return attemptAtMs >= fallbackWindowEndMs(firstAttemptAtMs, fallbackWindowS);
}

/** When the sender gives up and bounces (RETRY-6, STATE-7). */
export function giveUpAtMs(firstAttemptAtMs: number, constants: SpecConstants = SPEC_CONSTANTS): number {
  return firstAttemptAtMs + constants.giveUpMs;
}

/**
 * Checks a fallback window (RETRY-5): in production it must be within 1 to 4
 * hours (the bounds of `constants`); elsewhere (a simulation exploring the
 * spec) any finite value ≥ 0.
 *
 * @throws RangeError naming RETRY-5 for a value outside the allowed range.
 */
export function checkFallbackWindowS(
  fallbackWindowS: number,
  production: boolean,
  constants: SpecConstants = SPEC_CONSTANTS,
): number {
  if (!Number.isFinite(fallbackWindowS) || fallbackWindowS < 0) {
    throw new RangeError(`the fallback window must be a number of seconds ≥ 0, not ${fallbackWindowS}`);
  }
  const { fallbackWindowMinS: min, fallbackWindowMaxS: max } = constants;
  if (production && (fallbackWindowS < min || fallbackWindowS > max)) {
    const spec = min === MIN_FALLBACK_WINDOW_S && max === MAX_FALLBACK_WINDOW_S;
    throw new RangeError(
      `the fallback window is ${fallbackWindowS} s; in production use it MUST be within ${min} and ${max} s (${spec ? "1 to 4 hours" : "the bounds in force, not SPEC.md's 1 to 4 hours"}) [RETRY-5]`,
    );
  }
  return fallbackWindowS;
}
