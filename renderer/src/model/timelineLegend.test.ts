import { describe, expect, it } from "vitest";
import { buildTimeline } from "./timeline.ts";
import { legendKinds } from "./timelineLegend.ts";
import { scenarioTrace } from "./testing.ts";

const legendOf = async (name: string) => {
  const t = await scenarioTrace(name);
  return legendKinds(buildTimeline(t.events, t.startedAtMs, new Map()));
};

describe("the timeline's legend names only what the run draws", () => {
  it("happy-path: one accepted attempt, nothing else", async () => {
    expect(await legendOf("happy-path")).toEqual({
      outcomes: ["accepted"],
      window: false,
      fault: false,
      ruledOut: false,
      handoff: false,
    });
  });
  it("STATE-3: receiver-down-past-fallback-window: fallback-eligible failures, the window, the fault, the hand-off", async () => {
    expect(await legendOf("receiver-down-past-fallback-window")).toEqual({
      outcomes: ["temporary-eligible"],
      window: true,
      fault: true,
      ruledOut: false,
      handoff: true,
    });
  });
  it("ERR-23: rate-limited-then-down: SMTP ruled out by the 429, no hand-off", async () => {
    const legend = await legendOf("rate-limited-then-down");
    expect(legend.ruledOut).toBe(true);
    expect(legend.handoff).toBe(false);
    expect(legend.outcomes).toContain("temporary");
  });
});
