/**
 * The rules of the spec as evidence in one run: each rule the run's events
 * cite, how often, and those events in the log's words, so the Rules view can
 * say which rules fired and show where. Pure, over the trace's events (a
 * live run's so far, or an opened trace's).
 */
import { ruleEvidence } from "../../../app/trace/ruleEvidence.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { logRows } from "./log.ts";
import { offset } from "./time.ts";

/** One event citing a rule. */
export interface CitingEvent {
  readonly seq: number;
  /** `+120:00:00`. */
  readonly at: string;
  readonly name: string;
  /** The event in the log's words (its full-log line for a wire or machine event). */
  readonly text: string;
}

/** A rule the run cited. */
export interface FiredRule {
  readonly id: string;
  readonly count: number;
  readonly events: readonly CitingEvent[];
}

/** Every rule the events cite, by ID. */
export function firedRules(events: readonly RecordedEvent[], startMs: number): Map<string, FiredRule> {
  const evidence = ruleEvidence(events);
  const rows = new Map(logRows(events, startMs).map((r) => [r.seq, r]));
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  const out = new Map<string, FiredRule>();
  for (const [id, seqs] of evidence) {
    out.set(id, {
      id,
      count: seqs.length,
      events: seqs.map((seq) => {
        const row = rows.get(seq);
        const event = bySeq.get(seq);
        return {
          seq,
          at: row?.at ?? (event ? offset(event.timeMs, startMs) : ""),
          name: event?.name ?? "",
          text: row?.text.replace(/ \[[^\]]+\]$/, "") ?? event?.name ?? "",
        };
      }),
    });
  }
  return out;
}
