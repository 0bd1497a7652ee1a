/**
 * What applies to a lane of the timeline, from what its delivery did: when it
 * ended, where SMTP fallback was ruled out for it (ERR-23), the fallback
 * window's band (only where the window could still decide something) and the
 * give-up line (only where the delivery was still undelivered then, STATE-7).
 */
import { smtpRuling } from "../../../app/trace/explain.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import type { Band, FallbackRuledOut, Lane, Mark, RetryPlan } from "./timeline.ts";
import { formatOffset } from "./time.ts";

/** The attempt that ruled SMTP fallback out, and its exchanges (shown once a retry follows it). */
export type RuledOutAt = FallbackRuledOut & { readonly exchangeIds: readonly string[] };

/** What a lane's delivery did so far, as far as these questions need it. */
export interface LaneFacts {
  readonly id: string;
  readonly startMs: number;
  readonly recipients: readonly string[];
  readonly fallbackWindowStartMs?: number;
  readonly fallbackWindowEndMs?: number;
  /** When the delivery actor reached a final state (finished, handed to SMTP, bounced). */
  readonly deliveryEndMs?: number;
  readonly retries: readonly RetryPlan[];
  readonly recipientOutcomes: ReadonlyMap<string, { readonly timeMs: number }>;
  readonly ruledOut?: RuledOutAt;
}

/** A recipient's result in the answer of the attempt being judged. */
export interface PendingResult {
  readonly recipient: string;
  readonly status: string;
  readonly problem: string | undefined;
}

/**
 * Whether the attempt judged by `judged` (attempt `attempt`, started at `startedAtMs`) ruled SMTP fallback
 * out, in the words of the Why? explanation (app/trace/explain.ts's {@link smtpRuling}, the one reading of
 * it), with the exchanges of that attempt.
 */
export function smtpRulingOfLane(
  judged: RecordedEvent,
  attempt: number,
  startedAtMs: number,
  results: readonly PendingResult[],
  exchangeIds: readonly string[],
): RuledOutAt | undefined {
  const r = smtpRuling(judged, attempt, startedAtMs, results);
  if (r === undefined) return undefined;
  return {
    attempt,
    timeMs: r.atMs,
    judgedAtMs: r.judgedAtMs,
    seq: r.seq,
    answer: r.answer,
    rule: r.rule,
    text: `SMTP ruled out at attempt ${attempt}: ${r.answer}${r.rule ? `, ${r.rule}` : ""}`,
    exchangeIds,
  };
}

/**
 * When a delivery ended: its actor reached a final state (finished,
 * handedToSmtp, bounced, or the hand-off or bounce that ends it), or, in a
 * trace without the machine's transitions, the last of its recipients'
 * outcomes once every recipient has one. Undefined while it goes on.
 */
export function deliveryEnd(lane: LaneFacts): number | undefined {
  if (lane.deliveryEndMs !== undefined) return lane.deliveryEndMs;
  if (lane.recipients.length === 0 || lane.recipients.some((r) => !lane.recipientOutcomes.has(r))) return undefined;
  let last = -Infinity;
  for (const o of lane.recipientOutcomes.values()) last = Math.max(last, o.timeMs);
  return last;
}

/**
 * Where SMTP fallback was ruled out for a delivery, when the delivery went on after that attempt (a retry
 * was planned after it): a delivery that ended there (accepted, rejected) was never going to fall back.
 */
export function laneRuledOut(lane: LaneFacts): RuledOutAt | undefined {
  const r = lane.ruledOut;
  return r !== undefined && lane.retries.some((p) => p.retry >= r.attempt) ? r : undefined;
}

/** The lane's "SMTP ruled out" mark, where it applies. */
export function ruledOutMark(lane: LaneFacts, startMs: number): Mark | undefined {
  const ruledOut = laneRuledOut(lane);
  if (ruledOut === undefined) return undefined;
  return {
    id: `f:${lane.id}`,
    kind: "ruled-out",
    lane: lane.id,
    timeMs: ruledOut.timeMs,
    seq: ruledOut.seq,
    attempt: ruledOut.attempt,
    label: "SMTP ruled out",
    summary: `${ruledOut.text} (${formatOffset(ruledOut.timeMs, startMs)}): no SMTP fallback for this delivery, its fallback window decides nothing`,
    ...(ruledOut.rule !== undefined && { rule: ruledOut.rule }),
    exchangeIds: ruledOut.exchangeIds,
  };
}

/**
 * The lane's fallback window band, where the window applies. The window matters while the delivery goes on
 * and may still fall back: one that ended inside it (accepted, handed to SMTP, bounced) has its band end
 * there, one whose fallback an answer ruled out (ERR-23) where that answer came, not run on to a window end
 * that decides nothing. A delivery that ended, or lost its fallback, before any retry that could fall back
 * (accepted at its first attempt, rate limited at it) has no band: the window never applied to it.
 */
export function fallbackBand(lane: LaneFacts, startMs: number): Band | undefined {
  const windowEnd = lane.fallbackWindowEndMs;
  if (windowEnd === undefined) return undefined;
  const ruledOut = laneRuledOut(lane);
  const fromMs = lane.fallbackWindowStartMs ?? lane.startMs;
  const ended = deliveryEnd(lane);
  const cutAt = Math.min(ended ?? Infinity, ruledOut?.judgedAtMs ?? Infinity);
  const lastOpen = ruledOut?.attempt ?? Infinity;
  if (cutAt !== Infinity && !lane.retries.some((r) => r.retry < lastOpen && r.attemptStartedAtMs < cutAt))
    return undefined;
  if (cutAt >= windowEnd)
    return { lane: lane.id, kind: "fallback-window", fromMs, untilMs: windowEnd, label: "fallback window" };
  return {
    lane: lane.id,
    kind: "fallback-window",
    fromMs,
    untilMs: cutAt,
    windowEndMs: windowEnd,
    label:
      ruledOut !== undefined && ruledOut.judgedAtMs === cutAt
        ? `fallback window (to ${formatOffset(windowEnd, startMs)}, closed at attempt ${ruledOut.attempt}: SMTP ruled out)`
        : `fallback window (to ${formatOffset(windowEnd, startMs)}, cut where the delivery ended)`,
  };
}

/**
 * The give-up time when it applies to the lane (STATE-7): the delivery was still undelivered then — it
 * bounced there, or it goes on. A delivery that ended before it (accepted, rejected, handed to SMTP)
 * never reached it: its lane draws no give-up line.
 */
export function giveUpOf(lane: Lane): number | undefined {
  const g = lane.giveUpAtMs;
  return g !== undefined && (lane.endMs === undefined || lane.endMs >= g) ? g : undefined;
}
