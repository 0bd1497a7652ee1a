/**
 * The timeline's legend names only what the run draws: the attempt outcomes among its
 * marks, a fallback window or fault band if there is one, "SMTP ruled out" and "SMTP hand-off" where they
 * happened. Pure; read off the timeline the lanes draw.
 */
import { ATTEMPT_OUTCOMES, type AttemptOutcome, type Timeline } from "./timeline.ts";

export interface LegendKinds {
  /** In the legend's usual order. */
  readonly outcomes: readonly AttemptOutcome[];
  readonly window: boolean;
  readonly fault: boolean;
  readonly ruledOut: boolean;
  readonly handoff: boolean;
}

/** What of the legend `timeline` draws. */
export function legendKinds(timeline: Timeline): LegendKinds {
  const outcomes = new Set<AttemptOutcome>();
  let ruledOut = false;
  let handoff = false;
  for (const m of timeline.marks) {
    if (m.kind === "attempt" && m.outcome !== undefined) outcomes.add(m.outcome);
    else if (m.kind === "ruled-out") ruledOut = true;
    else if (m.kind === "handoff") handoff = true;
  }
  if (timeline.lanes.some((l) => l.fallbackRuledOut !== undefined)) ruledOut = true;
  return {
    outcomes: ATTEMPT_OUTCOMES.filter((o) => outcomes.has(o)),
    window: timeline.bands.some((b) => b.kind === "fallback-window"),
    fault: timeline.bands.some((b) => b.kind === "fault"),
    ruledOut,
    handoff,
  };
}
