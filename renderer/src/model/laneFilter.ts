/**
 * The timeline's lanes filtered and searched: by how the delivery
 * went ("went to SMTP", "bounced", …), by its domain, and by words in its message, label or recipients —
 * the 7 SMTP hand-offs among 2,689 deliveries of a 100k-event trace, found at once. Pure, over the
 * timeline's model; the timeline draws the lanes it gives and keeps its axis, zoom and overview as they
 * were (the overview still shows the whole run).
 */
import type { Lane, Timeline } from "./timeline.ts";

/** How a delivery went, as the lane filter offers it. */
export type LaneOutcome = "smtp" | "bounced" | "accepted" | "rejected" | "pending";

/** The filter's words for each way a delivery went. */
export const LANE_OUTCOME_TEXT: Readonly<Record<LaneOutcome, string>> = {
  smtp: "went to SMTP",
  bounced: "bounced",
  accepted: "accepted",
  rejected: "rejected",
  pending: "still going",
};

/** What the lanes are filtered by; every field optional, all of them must hold. */
export interface LaneFilter {
  /** A recipient of the delivery ended so (its `recipient.outcome`: a hand-off's is smtp, a bounce's bounced). */
  readonly outcome?: LaneOutcome;
  /** The receiving domain. */
  readonly domain?: string;
  /** Every word somewhere in the lane's label, Message-ID or recipients, any case. */
  readonly text?: string;
}

/** What a lane is found by, read once per timeline. */
interface LaneFacts {
  readonly outcomes: ReadonlySet<LaneOutcome>;
  readonly words: string;
}

const factsOf = new WeakMap<Timeline, ReadonlyMap<string, LaneFacts>>();

/** Each lane's outcomes and words: the index the filter answers from, built once per timeline. */
function laneIndex(timeline: Timeline): ReadonlyMap<string, LaneFacts> {
  const known = factsOf.get(timeline);
  if (known !== undefined) return known;
  const outcomes = new Map<string, Set<LaneOutcome>>();
  for (const lane of timeline.lanes) {
    const set = new Set<LaneOutcome>();
    for (const r of lane.recipientLanes) set.add(laneOutcome(r.outcome?.outcome));
    if (lane.recipientLanes.length === 0) set.add("pending");
    outcomes.set(lane.id, set);
  }
  const index = new Map<string, LaneFacts>();
  for (const lane of timeline.lanes)
    index.set(lane.id, {
      outcomes: outcomes.get(lane.id) ?? new Set(),
      words: `${lane.label} ${lane.id} ${lane.recipients.join(" ")}`.toLowerCase(),
    });
  factsOf.set(timeline, index);
  return index;
}

function laneOutcome(outcome: string | undefined): LaneOutcome {
  return outcome === "smtp" || outcome === "bounced" || outcome === "accepted" || outcome === "rejected"
    ? outcome
    : "pending";
}

/** Whether `filter` narrows anything. */
export function laneFilterActive(filter: LaneFilter): boolean {
  return filter.outcome !== undefined || filter.domain !== undefined || (filter.text ?? "").trim() !== "";
}

/** The lanes that pass `filter`, in the timeline's order. */
export function filterLanes(timeline: Timeline, filter: LaneFilter): readonly Lane[] {
  if (!laneFilterActive(filter)) return timeline.lanes;
  const index = laneIndex(timeline);
  const words = (filter.text ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  return timeline.lanes.filter((lane) => {
    const facts = index.get(lane.id);
    if (facts === undefined) return false;
    if (filter.outcome !== undefined && !facts.outcomes.has(filter.outcome)) return false;
    if (filter.domain !== undefined && lane.domain !== filter.domain) return false;
    return words.every((w) => facts.words.includes(w));
  });
}

/**
 * The timeline with only the lanes that pass `filter`, and their marks, connectors and bands (a mark of no
 * lane stays); the timeline itself when the filter narrows nothing. The axis (`startMs`, `endMs`) is the
 * whole run's, so a filtered timeline lines up with the unfiltered one.
 */
export function filterTimeline(timeline: Timeline, filter: LaneFilter): Timeline {
  if (!laneFilterActive(filter)) return timeline;
  const lanes = filterLanes(timeline, filter);
  const ids = new Set(lanes.map((l) => l.id));
  const kept = (lane: string | undefined) => lane === undefined || ids.has(lane);
  return {
    ...timeline,
    lanes,
    marks: timeline.marks.filter((m) => kept(m.lane)),
    connectors: timeline.connectors.filter((c) => ids.has(c.lane)),
    bands: timeline.bands.filter((b) => ids.has(b.lane)),
  };
}

/** The filter's choices: the ways the run's deliveries went (in {@link LANE_OUTCOME_TEXT}'s order), and their domains. */
export function laneFacets(timeline: Timeline): { readonly outcomes: LaneOutcome[]; readonly domains: string[] } {
  const seen = new Set<LaneOutcome>();
  for (const facts of laneIndex(timeline).values()) for (const o of facts.outcomes) seen.add(o);
  const domains = [...new Set(timeline.lanes.map((l) => l.domain))].sort();
  return { outcomes: (Object.keys(LANE_OUTCOME_TEXT) as LaneOutcome[]).filter((o) => seen.has(o)), domains };
}
