/**
 * The rules of the spec as evidence in one run: each rule the run's events
 * cite, how often, and those events in the log's words, so the Rules view can
 * say which rules fired and show where. Pure, over the trace's events (a
 * live run's so far, or an opened trace's).
 */
import { gapEvidence, ruleEvidence } from "../../../app/trace/ruleEvidence.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { logRows } from "./log.ts";
import { formatOffset } from "./time.ts";

/** One event citing a rule. */
export interface CitingEvent {
  readonly seq: number;
  /** `+5d 0:00:00`. */
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
  const cite = citing(events, startMs);
  const out = new Map<string, FiredRule>();
  for (const [id, seqs] of ruleEvidence(events)) out.set(id, { id, count: seqs.length, events: seqs.map(cite) });
  return out;
}

/** A reading of a gap in force in the run, and the events whose outcome it decided (those citing the gap). */
export interface ReadingEvidence {
  readonly gap: string;
  readonly reading: string;
  readonly events: readonly CitingEvent[];
}

/** Each gap reading in force (`readings`, as the trace holds them), with the events citing that gap, G3 before G16. */
export function readingEvidence(
  readings: Readonly<Record<string, string>>,
  events: readonly RecordedEvent[],
  startMs: number,
): ReadingEvidence[] {
  const cite = citing(events, startMs);
  const evidence = gapEvidence(events);
  return Object.entries(readings)
    .sort(([a], [b]) => Number(a.slice(1)) - Number(b.slice(1)))
    .map(([gap, reading]) => ({ gap, reading, events: (evidence.get(gap) ?? []).map(cite) }));
}

/** The event of a seq in the log's words. */
function citing(events: readonly RecordedEvent[], startMs: number): (seq: number) => CitingEvent {
  const rows = new Map(logRows(events, startMs).map((r) => [r.seq, r]));
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  return (seq) => {
    const row = rows.get(seq);
    const event = bySeq.get(seq);
    return {
      seq,
      at: row?.at ?? (event ? formatOffset(event.timeMs, startMs) : ""),
      name: event?.name ?? "",
      text: row?.text.replace(/ \[[^\]]+\]$/, "") ?? event?.name ?? "",
    };
  };
}
