/**
 * The times the delivery machine's conditions compare, for one actor: the
 * give-up (RETRY-6, STATE-7), the fallback window's end (G16, STATE-3) and
 * the next retry (RETRY-1 … RETRY-3, RETRY-7), under the draft's numbers in
 * force (docs/decisions/0065) and a bug a test harness planted
 * (plantedBugs.ts, docs/decisions/0051). Pure: the time comes in as an
 * argument; the arithmetic itself is retrySchedule.ts's.
 */
import { SPEC_CONSTANTS, type SpecConstants } from "../protocol/specConstants.ts";
import type { DeliveryContext, DeliveryMachineDeps } from "./deliveryContext.ts";
import { PLANTED_GIVE_UP_DELAY_MS } from "./plantedBugs.ts";
import { fallbackWindowEndMs, giveUpAtMs, isAtOrAfterFallbackWindow, planRetry } from "./retrySchedule.ts";
import type { RetryPlan } from "./retrySchedule.ts";

/** The draft's numbers the sender runs under (SPEC.md's unless a scenario changed them). */
export function constantsOf(deps: Pick<DeliveryMachineDeps, "constants">): SpecConstants {
  return deps.constants ?? SPEC_CONSTANTS;
}

/** When the actor gives up and bounces (STATE-7, RETRY-6); `retry-after-give-up` plants an hour late. */
export function giveUpAt(context: Pick<DeliveryContext, "firstAttemptAtMs" | "input">, nowMs: number): number {
  const { deps } = context.input;
  return (
    giveUpAtMs(context.firstAttemptAtMs ?? nowMs, constantsOf(deps)) +
    (deps.plantedBug === "retry-after-give-up" ? PLANTED_GIVE_UP_DELAY_MS : 0)
  );
}

/** STATE-3's "at or after the end of the fallback window" for an attempt at `attemptAtMs` (`window-end-exclusive` plants `>`). */
export function atOrAfterWindow(
  context: Pick<DeliveryContext, "firstAttemptAtMs" | "input">,
  attemptAtMs: number,
): boolean {
  const { deps } = context.input;
  const windowS = deps.readings.retryTiming.fallbackWindowS;
  return deps.plantedBug === "window-end-exclusive"
    ? attemptAtMs > fallbackWindowEndMs(context.firstAttemptAtMs ?? 0, windowS)
    : isAtOrAfterFallbackWindow(context.firstAttemptAtMs ?? 0, attemptAtMs, windowS);
}

/** The next retry after the last attempt (G16's jitter drawn from the sender's Random when on). */
export function nextRetry(context: DeliveryContext, nowMs: number): RetryPlan {
  const { deps } = context.input;
  return planRetry({
    attempts: context.attempts,
    lastAttemptAtMs: context.attemptAtMs ?? nowMs,
    nowMs,
    ...(context.lastAttempt?.lowerBoundMs !== undefined && { lowerBoundMs: context.lastAttempt.lowerBoundMs }),
    ...(deps.readings.retryTiming.jitter && { jitter: deps.random }),
    constants: constantsOf(deps),
  });
}
