/**
 * The run view's Why panel: the explanation of one recipient's outcome
 * (app/trace/explain.ts, the same words as `mailscope run --explain` and the
 * Markdown report) and, per clause, where its evidence is in the other views:
 * the log rows of its events, the attempt's mark on the timeline, and the
 * delivery machine's step. Pure; the panel only draws it.
 */
import { explainRecipient, type Why, type WhyClause } from "../../../app/trace/explain.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";

export type { Why, WhyClause };

/** Where a clause's evidence is in the other views. */
export interface WhyLinks {
  /** Every event the clause cites, to mark in the log. */
  readonly log: readonly number[];
  /** The attempt to select on the timeline: its delivery actor (lane) and the time it started. */
  readonly attempt?: { readonly actor: string; readonly atMs: number; readonly attempt: number };
  /** The delivery machine's step: the first machine.transition the clause cites. */
  readonly transition?: { readonly actor: string; readonly seq: number };
}

/** The recipient a Why panel shows. */
export interface WhyTarget {
  readonly messageId: string;
  readonly recipient: string;
}

/** The explanation of `target`'s outcome in `events` (the run so far, or a whole trace). */
export function whyOf(events: readonly RecordedEvent[], startMs: number, target: WhyTarget): Why {
  return explainRecipient(events, startMs, target.messageId, target.recipient);
}

/** Where the evidence of `clause` (of `why`) is: log rows, the attempt on the timeline, the machine's step. */
export function whyLinks(why: Why, clause: WhyClause): WhyLinks {
  const log = [...new Set(clause.evidence.map((c) => c.seq))];
  const actor = why.delivery;
  const transition = clause.evidence.find((c) => c.name === "machine.transition");
  return {
    log,
    ...(actor !== undefined &&
      clause.attempts !== undefined && { attempt: { actor, atMs: clause.atMs, attempt: clause.attempts[0] } }),
    ...(actor !== undefined && transition !== undefined && { transition: { actor, seq: transition.seq } }),
  };
}
