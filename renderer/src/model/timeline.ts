/**
 * The delivery timeline's data, from trace events alone (a live run and an
 * imported trace draw the same picture): one lane per delivery actor
 * (message → recipient domain, DSN deliveries as lanes of their own linked to
 * the message they report on), the marks on them (attempts coloured by how
 * they ended, SMTP hand-offs, bounces, DSNs, receiver-side events), retry
 * connectors, the fallback window band and the give-up line, fault bands on
 * the lanes of the hosts they hit, DNS changes.
 *
 * The rest of the timeline is in files of its own, one idea each:
 * timelineEvents.ts (events → lanes), timelineApplies.ts (what applies to a
 * lane: its fallback band, its give-up, where SMTP was ruled out),
 * timelineScale.ts and timelineTicks.ts (the time axis), timelineDrawn.ts
 * (what a window draws), timelineLayout.ts (lane rows), timelineOverview.ts,
 * timelineNavigation.ts (pan, zoom, the keyboard), timelineRetryChart.ts.
 */
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { newTimelineState, readTimelineEvents, timelineOf, type TimelineState } from "./timelineEvents.ts";

/** How an attempt ended, as the timeline colours it. */
export type AttemptOutcome =
  | "accepted"
  | "rejected"
  | "deferred"
  | "temporary-eligible"
  | "temporary"
  | "permanent"
  | "no-service"
  | "no-common-version";

export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = [
  "accepted",
  "rejected",
  "deferred",
  "temporary-eligible",
  "temporary",
  "permanent",
  "no-service",
  "no-common-version",
];

/** Words for the legend and the summaries. */
export const OUTCOME_TEXT: Readonly<Record<AttemptOutcome, string>> = {
  accepted: "accepted",
  rejected: "rejected",
  deferred: "deferred",
  "temporary-eligible": "temporary failure, fallback-eligible",
  temporary: "temporary, not fallback-eligible",
  permanent: "permanent failure",
  "no-service": "no service (SMTP)",
  "no-common-version": "no common version",
};

/** The colour of each outcome (marks, legend, overview bars, the exported image): the same in both themes. */
export const OUTCOME_COLOUR: Readonly<Record<string, string>> = {
  accepted: "#1f8a45",
  rejected: "#c0362c",
  deferred: "#2f7fd0",
  "temporary-eligible": "#e08a00",
  temporary: "#8a5cf6",
  permanent: "#7a1010",
  "no-service": "#6b7280",
  "no-common-version": "#0e7490",
};

export type MarkKind = "attempt" | "handoff" | "bounce" | "dsn" | "receiver" | "dns" | "ruled-out";

/** One thing drawn at one time on one lane (or, for a DNS change, across the lanes of its domain). */
export interface Mark {
  /** Unique in the timeline: `a:<lane>:<n>`, `h:<seq>` … */
  readonly id: string;
  readonly kind: MarkKind;
  /** The lane it sits on; undefined for a DNS change of a name no lane delivers to. */
  readonly lane: string | undefined;
  readonly timeMs: number;
  /** The seq of the event it is drawn from. */
  readonly seq: number;
  /** Attempts: the attempt's number, its outcome, its start (timeMs is when it started). */
  readonly attempt?: number;
  readonly outcome?: AttemptOutcome;
  readonly endMs?: number;
  /** Short text on or under the mark (`3`, `SMTP fallback`, `DSN`). */
  readonly label: string;
  /** The hover summary: attempt, time, answer, rule. */
  readonly summary: string;
  readonly rule?: string;
  /** The HTTP exchanges it made or answered (`x3`), for the inspector. */
  readonly exchangeIds: readonly string[];
}

/** The wait between two attempts: from the start of one to the start of the next. */
export interface RetryConnector {
  readonly lane: string;
  readonly retry: number;
  readonly fromMs: number;
  readonly toMs: number;
  readonly decidedBy: string;
  /** False when the give-up came first and the retry never happened. */
  readonly happened: boolean;
  readonly seq: number;
  /**
   * The schedule's cap (RETRY-2, the run's constants: its `spec.constants` event's, else SPEC.md's) when this
   * retry's base delay reached it (timer.set's baseDelayMs).
   */
  readonly capMs?: number;
  /** The Retry-After / `retry_after` lower bound from the attempt's start (timer.set's lowerBoundDelayMs) … */
  readonly lowerBoundDelayMs?: number;
  /** … and where it was read: `retry_after` (a recipient's result) or the Retry-After header. */
  readonly lowerBoundFrom?: string;
}

export interface Band {
  readonly lane: string;
  readonly fromMs: number;
  /** Undefined: never ends. */
  readonly untilMs: number | undefined;
  readonly label: string;
  readonly kind: "fallback-window" | "fault";
  /**
   * A fallback window the delivery ended inside (accepted, handed to SMTP,
   * bounced): the window's own end, later than `untilMs`, which is the
   * delivery's end.
   */
  readonly windowEndMs?: number;
}

/** The retry plan of one retry (`timer.set`), delays from the start of the attempt before it. */
export interface RetryPlan {
  readonly retry: number;
  /** The attempt it starts: retry + 1. */
  readonly attempt: number;
  readonly attemptStartedAtMs: number;
  readonly baseDelayMs: number;
  readonly jitteredDelayMs: number;
  readonly jitter: boolean;
  readonly lowerBoundDelayMs: number | undefined;
  /** `base-delay`, `jittered-delay`, `retry-after`, `attempt-end`. */
  readonly decidedBy: string;
  /** The delay actually waited, start to start. */
  readonly delayMs: number;
  readonly atMs: number;
  readonly happened: boolean;
  readonly seq: number;
}

export interface Lane {
  /** The delivery actor: `<messageId>→<domain>`. */
  readonly id: string;
  readonly messageId: string;
  readonly domain: string;
  readonly senderDomain: string;
  readonly recipients: readonly string[];
  readonly kind: "message" | "dsn";
  /** For a DSN's lane: the lane of the message it reports on. */
  readonly parent?: string;
  /** `m1 → b.example`, `DSN of m1 → a.example`. */
  readonly label: string;
  readonly startMs: number;
  /**
   * When the delivery (the delivery actor) ended — every recipient has its
   * outcome, or the machine reached finished, handedToSmtp or bounced —
   * else undefined (still going). A delivery with several recipients goes on
   * after its first recipient's outcome (the others retried).
   */
  readonly endMs: number | undefined;
  readonly fallbackWindowEndMs?: number;
  readonly giveUpAtMs?: number;
  readonly retries: readonly RetryPlan[];
  /** One sub-lane per recipient: its result at each attempt that answered it, and how it ended. */
  readonly recipientLanes: readonly RecipientLane[];
  /**
   * Where SMTP fallback was ruled out for the delivery, when it was and the delivery went on after it (a
   * retry): from then on the fallback window decides nothing (ERR-23, STATE-5).
   */
  readonly fallbackRuledOut?: FallbackRuledOut;
}

/**
 * The attempt whose answer ruled SMTP fallback out for a delivery (the first `attempt.judged` whose
 * `allAttemptsFallbackEligible` is false): a request-level 4xx such as 429 rate_limited, or per-recipient
 * results (deferred, rejected), which never fall back (ERR-23).
 */
export interface FallbackRuledOut {
  readonly attempt: number;
  /** When the attempt started, and when it was judged (its answer read). */
  readonly timeMs: number;
  readonly judgedAtMs: number;
  /** The `attempt.judged` event's seq: the evidence. */
  readonly seq: number;
  /** The answer that decided: `429 rate_limited`, `per-recipient results: bob@b.example deferred (mailbox_full)`. */
  readonly answer: string;
  /** ERR-23 for an authenticated answer (a 4xx problem, per-recipient results), else the attempt's own rule. */
  readonly rule: string | undefined;
  /** `SMTP ruled out at attempt 1: 429 rate_limited, ERR-23`. */
  readonly text: string;
}

/** One recipient's result in one attempt's answer (`recipient.result`). */
export interface RecipientResult {
  readonly attempt: number;
  /** When the attempt started (the result is drawn under the attempt's mark). */
  readonly timeMs: number;
  /** `accepted`, `rejected`, `deferred`. */
  readonly status: string;
  readonly problem: string | undefined;
  readonly rule: string | undefined;
  readonly seq: number;
}

/** A recipient of a delivery: its results, attempt by attempt, and its outcome (`recipient.outcome`). */
export interface RecipientLane {
  readonly recipient: string;
  readonly results: readonly RecipientResult[];
  readonly outcome:
    | { readonly outcome: string; readonly timeMs: number; readonly rule: string | undefined; readonly seq: number }
    | undefined;
}

export interface Timeline {
  readonly startMs: number;
  /** The last event's time. */
  readonly endMs: number;
  readonly lanes: readonly Lane[];
  /** All marks, by time. */
  readonly marks: readonly Mark[];
  readonly connectors: readonly RetryConnector[];
  readonly bands: readonly Band[];
}

/** Reads one run's events into its timeline, batch by batch. Each owner (a timeline view) keeps its own. */
export interface TimelineReader {
  /**
   * The timeline of `events`. `labels` maps Message-IDs to the scenario's
   * message ids (`m1@a.example` → `m1`) for the lane labels. When `events`
   * continues the events read last (a live run's next batch: the same event
   * objects, and more), only the batch is read: a batch's work is in
   * proportion to the batch, and the timeline is what a build from scratch
   * gives.
   */
  read(events: readonly RecordedEvent[], startMs: number, labels?: ReadonlyMap<string, string>): Timeline;
  /** How many events it has read in all (each batch once): a test's measure of the work done. */
  readonly eventsRead: number;
}

/** Whether `events` starts with every event of `before` (the same objects): a later batch of the same run. */
function continues(events: readonly RecordedEvent[], before: readonly RecordedEvent[]): boolean {
  if (events.length < before.length) return false;
  for (let i = before.length - 1; i >= 0; i--) if (events[i] !== before[i]) return false;
  return true;
}

/** A reader of its own: two timelines (Compare draws two) never make each other read their runs again. */
export function timelineReader(): TimelineReader {
  let kept: { events: readonly RecordedEvent[]; startMs: number; state: TimelineState } | undefined;
  let last: { events: readonly RecordedEvent[]; labels: ReadonlyMap<string, string>; timeline: Timeline } | undefined;
  let eventsRead = 0;
  return {
    get eventsRead() {
      return eventsRead;
    },
    read(events, startMs, labels = new Map()) {
      if (last !== undefined && last.events === events && last.labels === labels && last.timeline.startMs === startMs)
        return last.timeline;
      const before =
        kept !== undefined && kept.startMs === startMs && continues(events, kept.events) ? kept : undefined;
      const state = before?.state ?? newTimelineState(startMs);
      const batch = before === undefined ? events : events.slice(before.events.length);
      readTimelineEvents(state, batch, startMs);
      eventsRead += batch.length;
      kept = { events, startMs, state };
      const timeline = timelineOf(state, startMs, labels);
      last = { events, labels, timeline };
      return timeline;
    },
  };
}

/** The timeline of a trace's events, read from scratch (see {@link TimelineReader.read}). */
export function buildTimeline(
  events: readonly RecordedEvent[],
  startMs: number,
  labels: ReadonlyMap<string, string> = new Map(),
): Timeline {
  return timelineReader().read(events, startMs, labels);
}

/**
 * The attempt a moment of a delivery actor belongs to: the last attempt mark on the actor's lane that
 * started at or before `timeMs` (a transition of the statechart's history selects it in the timeline).
 */
export function attemptMarkAt(timeline: Timeline, lane: string, timeMs: number): Mark | undefined {
  let found: Mark | undefined;
  for (const mark of timeline.marks) {
    if (mark.timeMs > timeMs) break;
    if (mark.kind === "attempt" && mark.lane === lane) found = mark;
  }
  return found;
}
