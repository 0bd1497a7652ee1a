/**
 * The delivery machine's context at a step, as a learner reads it: a headline (`bob@b.example
 * is in retryScheduled; attempt 3 at +0:04:03`) and the values the machine's guards read — the attempt, the first
 * attempt's time, the fallback window's end, the give-up time, the recipients pending, the last answer and its
 * class, whether SMTP is still possible or what ruled it out. Read off the statechart's history rows (statechart.ts),
 * which read them off the trace's events; each value names the event it comes from. Pure.
 */
import type { ActorChart, ChartAt, GuardContext } from "./statechart.ts";
import { formatOffset } from "./time.ts";

/** One value of the context. */
export interface ContextItem {
  readonly label: string;
  readonly value: string;
  /** The event it was read from, when there is one to show. */
  readonly seq?: number;
}

export interface DeliveryContext {
  readonly headline: string;
  readonly items: readonly ContextItem[];
}

/** States where the delivery has an outcome and the machine has stopped. */
const FINAL = new Set(["finished", "bounced", "handedToSmtp"]);

/** `bob@b.example`, `bob@b.example and carol@b.example`, `4 recipients`. */
function who(recipients: readonly string[]): string {
  if (recipients.length === 0) return "no recipient";
  if (recipients.length <= 2) return recipients.join(" and ");
  return `${recipients.length} recipients`;
}

/** `+2:00:00`, with how far it is from `nowMs`: `(in 1:57:00)`, `(passed 0:03:00 ago)`. */
function when(ms: number, startMs: number, nowMs: number): string {
  const at = formatOffset(ms, startMs);
  if (ms === nowMs) return `${at} (now)`;
  const gap = formatOffset(Math.max(ms, nowMs), Math.min(ms, nowMs)).slice(1);
  return ms > nowMs ? `${at} (in ${gap})` : `${at} (${gap} ago)`;
}

/** What the context says of SMTP: taken, ruled out (by which attempt's answer), or still possible (and when). */
function smtpFallback(c: GuardContext, state: string, startMs: number, nowMs: number): ContextItem {
  const label = "SMTP fallback";
  if (state === "handingToSmtp" || state === "handedToSmtp") return { label, value: "taken: handed to SMTP" };
  if (c.smtpRuledOut !== undefined)
    return {
      label,
      value: `ruled out by attempt ${c.smtpRuledOut.attempt}'s ${c.smtpRuledOut.answer} (not fallback-eligible, ERR-23)`,
    };
  if (c.allAttemptsFallbackEligible === undefined) return { label, value: "open: no attempt judged yet" };
  if (FINAL.has(state)) return { label, value: "not needed" };
  const end = c.fallbackWindowEndMs;
  if (end === undefined) return { label, value: "still possible: every attempt so far fallback-eligible" };
  return {
    label,
    value:
      nowMs >= end
        ? "still possible: every attempt so far fallback-eligible, and the window has ended: the next such failure hands over (STATE-3)"
        : `still possible: every attempt so far fallback-eligible; not before the window ends at ${formatOffset(end, startMs)} (STATE-2)`,
  };
}

/**
 * The context of `chart`'s actor at `at` (the step shown: a pinned history row, or the playhead's), `nowMs` being
 * that step's time (the playhead's, or the pinned row's).
 */
export function deliveryContext(chart: ActorChart, at: ChartAt, startMs: number, nowMs: number): DeliveryContext {
  const state = at.state;
  if (state === undefined) return { headline: `${chart.actor} has not started yet`, items: [] };
  const row = at.last;
  if (row === undefined) {
    return {
      headline: `${chart.actor} is in ${state}: attempt 1 under way`,
      items:
        chart.startedAtMs === undefined
          ? []
          : [
              {
                label: "First attempt",
                value: formatOffset(chart.startedAtMs, startMs),
                ...(chart.startedSeq !== undefined && { seq: chart.startedSeq }),
              },
            ],
    };
  }
  const c = row.context;
  const pending = row.pendingAfter;
  const attempt = c.attempt;
  const headline = ((): string => {
    const subject = pending.length > 0 ? who(pending) : chart.actor;
    switch (state) {
      case "retryScheduled":
        return `${subject} ${pending.length === 1 ? "is" : "are"} in retryScheduled; ${
          c.retryAtMs !== undefined && attempt !== undefined
            ? `attempt ${attempt + 1} at ${formatOffset(c.retryAtMs, startMs)}`
            : "the next attempt is scheduled"
        }`;
      case "finished":
        return `${chart.actor} is finished at ${row.at}: every recipient has a final outcome`;
      case "bounced":
        return `${chart.actor} is bounced at ${row.at}: the sender gave up`;
      case "handingToSmtp":
      case "handedToSmtp":
        return `${chart.actor} is in ${state}: handed to SMTP at ${row.at}`;
      default:
        return `${subject} ${pending.length === 1 ? "is" : "are"} in ${state}${attempt !== undefined ? `: attempt ${attempt}` : ""}`;
    }
  })();
  const items: ContextItem[] = [];
  if (attempt !== undefined)
    items.push({
      label: "Attempt",
      value:
        c.attemptAtMs !== undefined ? `${attempt}, started ${formatOffset(c.attemptAtMs, startMs)}` : String(attempt),
      seq: row.seq,
    });
  const first = c.firstAttemptAtMs ?? chart.startedAtMs;
  if (first !== undefined) items.push({ label: "First attempt", value: formatOffset(first, startMs) });
  if (c.fallbackWindowEndMs !== undefined)
    items.push({
      label: "Fallback window ends",
      value: when(c.fallbackWindowEndMs, startMs, nowMs),
      ...(c.judgedSeq !== undefined && { seq: c.judgedSeq }),
    });
  if (c.giveUpAtMs !== undefined)
    items.push({
      label: "Gives up at",
      value: when(c.giveUpAtMs, startMs, nowMs),
      ...(c.judgedSeq !== undefined && { seq: c.judgedSeq }),
    });
  if (state === "retryScheduled" && c.retryAtMs !== undefined)
    items.push({
      label: "Next attempt",
      value: `${c.retry !== undefined ? `retry ${c.retry}, ` : ""}${when(c.retryAtMs, startMs, nowMs)}`,
      ...(c.timerSeq !== undefined && { seq: c.timerSeq }),
    });
  items.push({ label: "Pending", value: pending.length === 0 ? "none" : pending.join(", ") });
  if (c.answer !== undefined)
    items.push({
      label: "Last answer",
      value: `${c.answer}${c.attemptClass !== undefined ? ` — ${c.attemptClass}` : ""}${
        c.fallbackEligible === undefined ? "" : c.fallbackEligible ? ", fallback-eligible" : ", not fallback-eligible"
      }`,
      ...(c.judgedSeq !== undefined && { seq: c.judgedSeq }),
    });
  items.push(smtpFallback(c, state, startMs, nowMs));
  return { headline, items };
}
