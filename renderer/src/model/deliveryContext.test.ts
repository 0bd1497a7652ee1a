import { describe, expect, it } from "vitest";
import { deliveryContext } from "./deliveryContext.ts";
import { actorChart, chartAt, chartAtRow } from "./statechart.ts";
import { scenarioTrace } from "./testing.ts";

const ACTOR = "m1@a.example→b.example";
const H = 3_600_000;

/** The context's items as `label: value`. */
const lines = (items: readonly { label: string; value: string }[]) => items.map((i) => `${i.label}: ${i.value}`);

describe("the delivery machine's context at a step", async () => {
  const down = await scenarioTrace("receiver-down-past-fallback-window");
  const downChart = actorChart(down.events, ACTOR, down.startedAtMs);
  const limited = await scenarioTrace("rate-limited-then-down");
  const limitedChart = actorChart(limited.events, ACTOR, limited.startedAtMs);

  it("STATE-2: waiting inside the window, the next attempt, the window's end ahead and SMTP still possible", () => {
    // At +1:00:00 the run waits for attempt 7 (jitter off: attempts at 0, 1, 3, 7, 15, 31, 63 minutes).
    const now = down.startedAtMs + H;
    const at = chartAt(downChart, now);
    const ctx = deliveryContext(downChart, at, down.startedAtMs, now);
    expect(ctx.headline).toBe("bob@b.example is in retryScheduled; attempt 7 at +1:03:00");
    expect(lines(ctx.items)).toEqual([
      "Attempt: 6, started +0:31:00",
      "First attempt: +0:00:00",
      "Fallback window ends: +2:00:00 (in 1:00:00)",
      "Gives up at: +5d 0:00:00 (in 4d 23:00:00)",
      "Next attempt: retry 6, +1:03:00 (in 0:03:00)",
      "Pending: bob@b.example",
      "Last answer: the capabilities unusable (no answer: connection refused) — temporary, fallback-eligible",
      "SMTP fallback: still possible: every attempt so far fallback-eligible; not before the window ends at +2:00:00 (STATE-2)",
    ]);
    // Each value that comes from an event names it: the timer.set of the next attempt, the attempt.judged of the answer.
    const seq = (label: string) => ctx.items.find((i) => i.label === label)?.seq;
    expect(down.events.find((e) => e.seq === seq("Next attempt"))).toMatchObject({
      name: "timer.set",
      data: { retry: 6, atMs: down.startedAtMs + 63 * 60_000 },
    });
    expect(down.events.find((e) => e.seq === seq("Last answer"))).toMatchObject({
      name: "attempt.judged",
      data: { attempt: 6 },
    });
  });

  it("STATE-3: past the window's end, SMTP is possible at the next failure; then handed over", () => {
    const now = down.startedAtMs + 2 * H + 60_000;
    const ctx = deliveryContext(downChart, chartAt(downChart, now), down.startedAtMs, now);
    expect(ctx.headline).toBe("bob@b.example is in retryScheduled; attempt 8 at +2:03:00");
    expect(lines(ctx.items)).toContain("Fallback window ends: +2:00:00 (0:01:00 ago)");
    expect(lines(ctx.items).at(-1)).toBe(
      "SMTP fallback: still possible: every attempt so far fallback-eligible, and the window has ended: the next such failure hands over (STATE-3)",
    );
    const end = downChart.history.length - 1;
    const last = downChart.history[end]!;
    const done = deliveryContext(downChart, chartAtRow(downChart, end), down.startedAtMs, last.timeMs);
    expect(done.headline).toBe(`${ACTOR} is in handedToSmtp: handed to SMTP at +2:03:00`);
    expect(lines(done.items)).toContain("Pending: none");
    expect(lines(done.items).at(-1)).toBe("SMTP fallback: taken: handed to SMTP");
  });

  it("ERR-23: after the 429, SMTP is ruled out by attempt 1's answer; the give-up at 5 days (STATE-7)", () => {
    const now = limited.startedAtMs + 10 * H;
    const ctx = deliveryContext(limitedChart, chartAt(limitedChart, now), limited.startedAtMs, now);
    // Jittered: the time the timer.set of attempt 16 gave, to the millisecond.
    expect(ctx.headline).toBe("bob@b.example is in retryScheduled; attempt 17 at +10:44:28.489");
    expect(lines(ctx.items).at(-1)).toBe(
      "SMTP fallback: ruled out by attempt 1's 429 rate_limited (not fallback-eligible, ERR-23)",
    );
    const end = limitedChart.history.length - 1;
    const bounced = deliveryContext(
      limitedChart,
      chartAtRow(limitedChart, end),
      limited.startedAtMs,
      limitedChart.history[end]!.timeMs,
    );
    expect(bounced.headline).toBe(`${ACTOR} is bounced at +5d 0:00:00: the sender gave up`);
    expect(lines(bounced.items)).toContain("Gives up at: +5d 0:00:00 (now)");
  });

  it("before the actor's first transition: attempt 1 under way; before it started: not started", () => {
    const first = deliveryContext(limitedChart, chartAtRow(limitedChart, -1), limited.startedAtMs, limited.startedAtMs);
    expect(first.headline).toBe(`${ACTOR} is in attemptingOverService.discovering: attempt 1 under way`);
    expect(lines(first.items)).toEqual(["First attempt: +0:00:00"]);
    expect(deliveryContext(limitedChart, { counts: new Map() }, limited.startedAtMs, 0).headline).toBe(
      `${ACTOR} has not started yet`,
    );
  });
});
