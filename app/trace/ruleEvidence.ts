/**
 * The spec's rules as evidence: which rules of the catalogue a trace's events
 * cite (`rule`, `rules`, `violates`), how often and where, and across many
 * traces which rules no run exercised. The app's Rules view and
 * `mailscope check --coverage` read the same functions.
 */
import { rules as catalogue, type Rule } from "../protocol/rules.ts";
import type { RecordedEvent } from "./schema.ts";

const RULE_ID = /^[A-Z]+-\d+$/;

/** A violation as a problem's `detail` spells it: `$.to: … at most 100 [ENV-8]` (receiver.ts, lintChecks.ts). */
const DETAIL_CITATION = /\[([A-Z]+-\d+)\]/g;

/**
 * The rule IDs an event's data cites, each once: `rule`, `rules` and
 * `violates`, and the violations a problem's `detail` names in brackets
 * (the receiver's 400 answer, as the sender judged it). Gap IDs are left out.
 */
export function rulesCited(data: Readonly<Record<string, unknown>> | undefined): string[] {
  const ids = new Set<string>();
  forEachRuleCited(data, (id) => ids.add(id));
  return [...ids];
}

/**
 * Calls `visit` with each rule ID `data` cites, as {@link rulesCited} lists them but without building
 * anything (an ID cited twice is visited twice): explore reads every event of every run with it.
 */
export function forEachRuleCited(
  data: Readonly<Record<string, unknown>> | undefined,
  visit: (id: string) => void,
): void {
  if (data === undefined) return;
  for (const key of CITING_FIELDS) {
    const v = data[key];
    if (typeof v === "string") {
      if (RULE_ID.test(v)) visit(v);
    } else if (Array.isArray(v)) for (const id of v) if (typeof id === "string" && RULE_ID.test(id)) visit(id);
  }
  const detail = data["detail"];
  if (typeof detail === "string" && detail.includes("[")) {
    for (const [, id] of detail.matchAll(DETAIL_CITATION)) if (id) visit(id);
  }
}

const CITING_FIELDS = ["rule", "rules", "violates"] as const;

const GAP_ID = /^G\d+$/;

/** Each gap (G16 …) the events cite in `gap` or `gaps`: the `seq`s of the events whose outcome its reading decided. */
export function gapEvidence(events: Iterable<RecordedEvent>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of events) {
    if (VERDICTS.has(e.name) || e.data === undefined) continue;
    const ids = new Set<string>();
    forEachGapCited(e.data, (id) => ids.add(id));
    for (const id of ids) {
      const seqs = out.get(id);
      if (seqs === undefined) out.set(id, [e.seq]);
      else seqs.push(e.seq);
    }
  }
  return out;
}

/** Calls `visit` with each gap ID `data` cites in `gap` or `gaps` (an ID cited twice is visited twice), building nothing. */
export function forEachGapCited(data: Readonly<Record<string, unknown>>, visit: (id: string) => void): void {
  for (const key of GAP_FIELDS) {
    const v = data[key];
    if (typeof v === "string") {
      if (GAP_ID.test(v)) visit(v);
    } else if (Array.isArray(v)) for (const id of v) if (typeof id === "string" && GAP_ID.test(id)) visit(id);
  }
}

const GAP_FIELDS = ["gap", "gaps"] as const;

/**
 * The run's verdicts name the rules they check whether or not the run
 * exercised them (the give-up invariant cites STATE-7 in a run that never
 * retries), so they are no evidence of a rule at work.
 */
const VERDICTS: ReadonlySet<string> = new Set(["invariant.checked", "expectation.checked"]);

/** Each rule cited in `events` (the checks' verdicts aside): the `seq`s of the events citing it, in order. */
export function ruleEvidence(events: Iterable<RecordedEvent>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of events) {
    if (VERDICTS.has(e.name)) continue;
    for (const id of rulesCited(e.data)) {
      const seqs = out.get(id);
      if (seqs === undefined) out.set(id, [e.seq]);
      else seqs.push(e.seq);
    }
  }
  return out;
}

/** Whether `v` (a string or a list of them) holds an ID that `pattern` matches. */
function holdsId(v: unknown, pattern: RegExp): boolean {
  if (typeof v === "string") return pattern.test(v);
  if (!Array.isArray(v)) return false;
  for (const id of v) if (typeof id === "string" && pattern.test(id)) return true;
  return false;
}

/** A rule cited in a problem's `detail`: `[ENV-8]`. */
const DETAIL_CITES = /\[[A-Z]+-\d+\]/;

/**
 * Whether `event` is evidence of a rule or a gap: whether {@link ruleEvidence} or {@link gapEvidence}
 * lists it. Reads the event without building anything, for a log of 100k events to ask of each.
 */
export function citesRuleOrGap(event: RecordedEvent): boolean {
  const d = event.data;
  if (d === undefined || VERDICTS.has(event.name)) return false;
  if (holdsId(d["rule"], RULE_ID) || holdsId(d["rules"], RULE_ID) || holdsId(d["violates"], RULE_ID)) return true;
  const detail = d["detail"];
  if (typeof detail === "string" && DETAIL_CITES.test(detail)) return true;
  return holdsId(d["gap"], GAP_ID) || holdsId(d["gaps"], GAP_ID);
}

/** One rule of the catalogue across a set of runs. */
export interface RuleCoverage {
  readonly id: string;
  readonly section: string;
  readonly strength: string;
  /** Events citing it, over all runs. */
  readonly events: number;
  /** The runs (scenario names) with at least one such event. */
  readonly scenarios: readonly string[];
}

/** The catalogue's coverage by a set of runs. */
export interface CoverageReport {
  readonly rules: readonly RuleCoverage[];
  /** How many rules at least one run cites. */
  readonly covered: number;
  readonly total: number;
  /** The rules no run cites, in catalogue order. */
  readonly uncovered: readonly string[];
  /** IDs cited by some event that the catalogue does not hold (a typo in the code, or a retired rule). */
  readonly unknown: readonly string[];
}

/** How many events cite each rule in `events` (the checks' verdicts aside). */
export function ruleCounts(events: Iterable<RecordedEvent>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [id, seqs] of ruleEvidence(events)) out[id] = seqs.length;
  return out;
}

/**
 * How the runs cover the catalogue: per rule, the events and runs that cite
 * it; the rules none cites; the cited IDs the catalogue lacks. Each run gives
 * its events, or the counts of {@link ruleCounts} when the events are gone.
 */
export function ruleCoverage(
  runs: readonly (
    | { readonly name: string; readonly events: Iterable<RecordedEvent> }
    | { readonly name: string; readonly counts: Readonly<Record<string, number>> }
  )[],
  rules: readonly Rule[] = catalogue,
): CoverageReport {
  const counts = new Map<string, number>();
  const where = new Map<string, Set<string>>();
  for (const run of runs) {
    const cited = "counts" in run ? run.counts : ruleCounts(run.events);
    for (const [id, n] of Object.entries(cited)) {
      if (n <= 0) continue;
      counts.set(id, (counts.get(id) ?? 0) + n);
      const set = where.get(id) ?? new Set<string>();
      set.add(run.name);
      where.set(id, set);
    }
  }
  const known = new Set(rules.map((r) => r.id));
  const rows = rules.map((r): RuleCoverage => ({
    id: r.id,
    section: r.section,
    strength: r.strength,
    events: counts.get(r.id) ?? 0,
    scenarios: [...(where.get(r.id) ?? [])].sort(),
  }));
  return {
    rules: rows,
    covered: rows.filter((r) => r.events > 0).length,
    total: rows.length,
    uncovered: rows.filter((r) => r.events === 0).map((r) => r.id),
    unknown: [...counts.keys()].filter((id) => !known.has(id)).sort(),
  };
}
