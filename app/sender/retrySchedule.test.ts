import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_FALLBACK_WINDOW_S,
  GIVE_UP_AFTER_MS,
  attemptOffsetsMs,
  baseRetryDelayMs,
  checkFallbackWindowS,
  fallbackWindowEndMs,
  giveUpAtMs,
  isAtOrAfterFallbackWindow,
  jitteredDelayMs,
  planRetry,
  retryDecider,
} from "./retrySchedule.ts";
import { constantRandom, createSeededRandom } from "./testing.ts";

const MIN = 60_000;

describe("the retry schedule (G16)", () => {
  it("RETRY-1, RETRY-2: with jitter off, attempts at 0, 1, 3, 7, 15, 31, 63, 123, 183, 243 minutes", () => {
    expect(attemptOffsetsMs(10).map((ms) => ms / MIN)).toEqual([0, 1, 3, 7, 15, 31, 63, 123, 183, 243]);
  });

  it("RETRY-2: the delay doubles per attempt and stays at 1 hour once it gets there", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 50, 10_000].map((n) => baseRetryDelayMs(n))).toEqual([
      1 * MIN,
      2 * MIN,
      4 * MIN,
      8 * MIN,
      16 * MIN,
      32 * MIN,
      60 * MIN,
      60 * MIN,
      60 * MIN,
      60 * MIN,
      60 * MIN,
    ]);
    expect(() => baseRetryDelayMs(0)).toThrow(RangeError);
    expect(() => baseRetryDelayMs(1.5)).toThrow(RangeError);
  });

  it("RETRY-3: jitter multiplies each delay by a factor within [0.8, 1.2] from one draw each", () => {
    expect(jitteredDelayMs(60_000, constantRandom(0))).toBe(48_000);
    expect(jitteredDelayMs(60_000, constantRandom(0.5))).toBe(60_000);
    expect(jitteredDelayMs(60_000, constantRandom(0.999999))).toBe(72_000);
    expect(jitteredDelayMs(60_000, undefined)).toBe(60_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer(), (retry, seed) => {
        const random = createSeededRandom(seed);
        const base = baseRetryDelayMs(retry);
        const delay = jitteredDelayMs(base, random);
        expect(random.draws()).toBe(1);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
        expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.2));
      }),
    );
  });

  it("RETRY-3: with jitter on, every attempt lies within ±20 % of each delay after the one before", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const offsets = attemptOffsetsMs(12, createSeededRandom(seed));
        offsets.slice(1).forEach((at, index) => {
          const gap = at - (offsets[index] ?? 0);
          const base = baseRetryDelayMs(index + 1);
          expect(gap).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
          expect(gap).toBeLessThanOrEqual(Math.ceil(base * 1.2));
        });
      }),
    );
  });

  it("RETRY-7: Retry-After is a lower bound: the later of the scheduled time and the requested one", () => {
    const early = planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 0, lowerBoundMs: 30_000 });
    expect(early).toMatchObject({ atMs: 60_000, scheduledAtMs: 60_000, decidedBy: "schedule", lowerBoundMs: 30_000 });
    const late = planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 0, lowerBoundMs: 600_000 });
    expect(late).toMatchObject({ atMs: 600_000, scheduledAtMs: 60_000, decidedBy: "retry-after" });
  });

  it("G16: the delay counts from the start of the previous attempt, and a retry is never in the past", () => {
    expect(planRetry({ attempts: 3, lastAttemptAtMs: 3 * MIN, nowMs: 3 * MIN + 5_000 }).atMs).toBe(7 * MIN);
    expect(planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 5 * MIN }).atMs).toBe(5 * MIN);
  });

  it("RETRY-1, RETRY-2, RETRY-3, RETRY-7: a plan keeps the base delay, the jittered one, and says which time decided", () => {
    const plain = planRetry({ attempts: 3, lastAttemptAtMs: 3 * MIN, nowMs: 3 * MIN });
    expect(plain).toMatchObject({ lastAttemptAtMs: 3 * MIN, baseDelayMs: 4 * MIN, delayMs: 4 * MIN, jittered: false });
    expect(retryDecider(plain)).toBe("base-delay");
    const jittered = planRetry({ attempts: 3, lastAttemptAtMs: 0, nowMs: 0, jitter: createSeededRandom(7) });
    expect(jittered).toMatchObject({ baseDelayMs: 4 * MIN, jittered: true });
    expect(jittered.delayMs).not.toBe(4 * MIN);
    expect(retryDecider(jittered)).toBe("jittered-delay");
    expect(retryDecider(planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 0, lowerBoundMs: 120_000 }))).toBe(
      "retry-after",
    );
    // At a tie the schedule decides; an attempt that ended after both decides by its end.
    expect(retryDecider(planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 0, lowerBoundMs: MIN }))).toBe(
      "base-delay",
    );
    expect(retryDecider(planRetry({ attempts: 1, lastAttemptAtMs: 0, nowMs: 5 * MIN, lowerBoundMs: 2 * MIN }))).toBe(
      "attempt-end",
    );
  });

  it("RETRY-4, STATE-2, STATE-3: the fallback window is 2 hours by default; an attempt at its end is at or after it", () => {
    expect(DEFAULT_FALLBACK_WINDOW_S).toBe(7_200);
    expect(fallbackWindowEndMs(1_000, 7_200)).toBe(1_000 + 7_200_000);
    expect(isAtOrAfterFallbackWindow(0, 7_199_999, 7_200)).toBe(false);
    expect(isAtOrAfterFallbackWindow(0, 7_200_000, 7_200)).toBe(true);
    expect(isAtOrAfterFallbackWindow(0, 123 * MIN, 7_200)).toBe(true);
    expect(isAtOrAfterFallbackWindow(0, 63 * MIN, 7_200)).toBe(false);
  });

  it("RETRY-6: give-up is 5 days after the first attempt", () => {
    expect(GIVE_UP_AFTER_MS).toBe(432_000_000);
    expect(giveUpAtMs(1_000)).toBe(1_000 + 5 * 24 * 3_600_000);
  });

  it("RETRY-5: in production the window must be within 1 to 4 hours; a simulation may go outside", () => {
    expect(checkFallbackWindowS(3_600, true)).toBe(3_600);
    expect(checkFallbackWindowS(14_400, true)).toBe(14_400);
    expect(() => checkFallbackWindowS(3_599, true)).toThrow(/RETRY-5/);
    expect(() => checkFallbackWindowS(14_401, true)).toThrow(/RETRY-5/);
    expect(checkFallbackWindowS(60, false)).toBe(60);
    expect(() => checkFallbackWindowS(-1, false)).toThrow(RangeError);
    expect(() => checkFallbackWindowS(Number.NaN, false)).toThrow(RangeError);
  });
});
