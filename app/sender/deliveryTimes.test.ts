import { describe, expect, it } from "vitest";
import { SPEC_CONSTANTS } from "../protocol/specConstants.ts";
import type { DeliveryContext, DeliveryMachineDeps } from "./deliveryContext.ts";
import { atOrAfterWindow, giveUpAt, nextRetry } from "./deliveryTimes.ts";
import type { PlantedBug } from "./plantedBugs.ts";
import { T0, testDeliveryContext } from "./testing.ts";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

function context(
  plantedBug?: PlantedBug,
  overrides: Partial<DeliveryContext> & { readonly deps?: Partial<DeliveryMachineDeps> } = {},
): DeliveryContext {
  const base = testDeliveryContext();
  const { deps: depsOverrides, ...rest } = overrides;
  return {
    ...base,
    firstAttemptAtMs: T0,
    ...rest,
    input: {
      ...base.input,
      deps: { ...base.input.deps, ...(plantedBug !== undefined && { plantedBug }), ...depsOverrides },
    },
  };
}

describe("the times the delivery machine compares, without a machine", () => {
  it("STATE-7, RETRY-6: give up 5 days after the first attempt, or after the RETRY-6 in force", () => {
    expect(giveUpAt(context(), T0 + MIN)).toBe(T0 + 5 * DAY);
    const threeDays = context(undefined, {
      deps: { constants: { ...SPEC_CONSTANTS, giveUpMs: 3 * DAY } },
    });
    expect(giveUpAt(threeDays, T0)).toBe(T0 + 3 * DAY);
    // Before any attempt the give-up counts from now.
    expect(giveUpAt(context(undefined, { firstAttemptAtMs: undefined }), T0 + 7)).toBe(T0 + 7 + 5 * DAY);
  });

  it("STATE-7: the planted `retry-after-give-up` judges the give-up an hour late", () => {
    expect(giveUpAt(context("retry-after-give-up"), T0)).toBe(T0 + 5 * DAY + 60 * MIN);
  });

  it("STATE-3, RETRY-4: an attempt exactly at the fallback window's end is at or after it; the planted `window-end-exclusive` says not", () => {
    const end = T0 + 120 * MIN;
    expect(atOrAfterWindow(context(), end - 1)).toBe(false);
    expect(atOrAfterWindow(context(), end)).toBe(true);
    expect(atOrAfterWindow(context("window-end-exclusive"), end)).toBe(false);
    expect(atOrAfterWindow(context("window-end-exclusive"), end + 1)).toBe(true);
  });

  it("RETRY-1, RETRY-7: the next retry a minute after the first attempt, or at a later Retry-After", () => {
    const first = context(undefined, { attempts: 1, attemptAtMs: T0 });
    expect(nextRetry(first, T0 + 5_000)).toMatchObject({ retry: 1, atMs: T0 + MIN, decidedBy: "schedule" });
    const bounded = context(undefined, {
      attempts: 1,
      attemptAtMs: T0,
      lastAttempt: { ...testAttempt(), lowerBoundMs: T0 + 10 * MIN },
    });
    expect(nextRetry(bounded, T0 + 5_000)).toMatchObject({ retry: 1, atMs: T0 + 10 * MIN, decidedBy: "retry-after" });
  });
});

function testAttempt(): NonNullable<DeliveryContext["lastAttempt"]> {
  return {
    attempt: 1,
    atMs: T0,
    kind: "posted",
    stage: "post",
    class: "temporary",
    posts: 1,
    fallbackEligible: false,
    rule: "ERR-24",
    gaps: [],
  };
}
