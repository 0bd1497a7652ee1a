/**
 * The log: trace events as readable rows, in the words of `mailscope run`
 * (app/trace/describe.ts, timeline flavour), with the virtual time as an
 * offset, the domain and the rule IDs the event cites. Pure; the log view
 * only draws these rows.
 */
import { describeEvent, timelineLevel } from "../../../app/trace/describe.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { formatOffset } from "./time.ts";
import { actorOfDelivery } from "../../../app/trace/deliveryIds.ts";
import { pushAll } from "../../../app/protocol/lists.ts";
import { citesRuleOrGap } from "../../../app/trace/ruleEvidence.ts";

/** One row of the log. */
export interface LogRow {
  readonly seq: number;
  readonly timeMs: number;
  /** `+0:02:00`. */
  readonly at: string;
  readonly domain: string;
  /** The event's name (`attempt.ended`): its kind. */
  readonly kind: string;
  /** The words, as `mailscope run` prints them (the wire and the state machine only in the full log). */
  readonly text: string;
  /** Rule and gap IDs the event cites, for links to the rules view. */
  readonly rules: readonly string[];
  /** The delivery the event belongs to (`m1@a.example→b.example#1` or the actor), if any. */
  readonly delivery?: string;
  /** A routine step, the wire or the state machine: shown only in the full log. */
  readonly detail: boolean;
}

/**
 * A row whose words and offset are written when first read: a 100k-event
 * trace has 100k rows, of which the log draws the few in view (filters by
 * domain, kind, delivery and rule read neither).
 */
class Row implements LogRow {
  readonly seq: number;
  readonly timeMs: number;
  readonly domain: string;
  readonly kind: string;
  readonly rules: readonly string[];
  readonly delivery?: string;
  readonly detail: boolean;
  /** It cites a rule or gap of the spec (evidence, as the Rules view counts it): read once, with the row. */
  readonly evidence: boolean;
  #event: RecordedEvent | undefined;
  #text: string | undefined;
  #words: string | undefined;
  #startMs: number;
  #at: string | undefined;

  constructor(event: RecordedEvent, startMs: number, detail: boolean, delivery: string | undefined) {
    const data = event.data ?? {};
    this.seq = event.seq;
    this.timeMs = event.timeMs;
    this.domain = event.domain ?? "";
    this.kind = event.name;
    this.rules = rulesOf(data);
    this.evidence = citesRuleOrGap(event);
    if (delivery !== undefined) this.delivery = delivery;
    this.detail = detail;
    this.#event = event;
    this.#startMs = startMs;
  }

  get at(): string {
    return (this.#at ??= formatOffset(this.timeMs, this.#startMs));
  }

  get text(): string {
    if (this.#text === undefined) {
      // The full wording is the plain one for a plain row (the flag only leaves lines out).
      const event = this.#event as RecordedEvent;
      this.#text = (describeEvent(event, { flavour: "timeline", full: true, startMs: this.#startMs }) ?? "").trim();
      this.#event = undefined;
    }
    return this.#text;
  }

  /** What a free-text search reads: time, domain, kind and words, lower-cased; written when first read. */
  get words(): string {
    return (this.#words ??= wordsOf(this));
  }

  /** As a plain object (what a test compares, and JSON). */
  toJSON(): LogRow {
    return {
      seq: this.seq,
      timeMs: this.timeMs,
      at: this.at,
      domain: this.domain,
      kind: this.kind,
      text: this.text,
      rules: this.rules,
      ...(this.delivery !== undefined && { delivery: this.delivery }),
      detail: this.detail,
    };
  }
}

const NO_RULES: readonly string[] = Object.freeze([]);

function rulesOf(data: Readonly<Record<string, unknown>>): readonly string[] {
  const rule = data["rule"];
  const gap = data["gap"];
  const violates = data["violates"];
  if (rule === undefined && gap === undefined && violates === undefined) return NO_RULES;
  const ids: string[] = [];
  for (const v of [rule, gap]) if (typeof v === "string" && v !== "") ids.push(v);
  if (Array.isArray(violates))
    pushAll(
      ids,
      violates.filter((v): v is string => typeof v === "string"),
    );
  return ids.length === 0 ? NO_RULES : [...new Set(ids)];
}

/** The delivery an event belongs to: its deliveryId, or the delivery actor's. */
export function deliveryOf(data: Readonly<Record<string, unknown>>): string | undefined {
  const id = data["deliveryId"] ?? data["deliveryActor"];
  if (typeof id !== "string" || id === "") return undefined;
  return actorOfDelivery(id);
}

/**
 * The rows of `events` (in order); the checks get none, as in the CLI's
 * timeline. The routine steps, the wire (DNS, HTTP, the receiver's requests)
 * and the state machine are details, shown only in the full log. Each row's
 * words are written when first read.
 */
export function logRows(events: readonly RecordedEvent[], startMs: number): LogRow[] {
  const rows: LogRow[] = [];
  for (const event of events) {
    const level = timelineLevel(event);
    if (level === undefined) continue;
    rows.push(new Row(event, startMs, level === "full", deliveryOf(event.data ?? {})));
  }
  return rows;
}

/** What the log is filtered by; every field optional, all of them must hold. */
export interface LogFilter {
  /** Also the routine steps, the wire and the state machine. */
  readonly full?: boolean;
  readonly domain?: string;
  /** One event kind (`attempt.ended`). */
  readonly kind?: string;
  /** Any of these kinds (the multi-select); empty or absent: every kind. */
  readonly kinds?: ReadonlySet<string>;
  readonly rule?: string;
  readonly delivery?: string;
  /** Every word, anywhere in the row (time, domain, kind, words), any case. */
  readonly text?: string;
  /** Only the evidence rows: those citing a rule or gap of the spec (see {@link isEvidence}), and `also`. */
  readonly evidence?: boolean;
  /** Events that count as evidence too (what a Why clause or a check points at). */
  readonly also?: ReadonlySet<number>;
}

/** A row's searchable words: its offset, domain, kind and text, lower-cased. */
function wordsOf(r: LogRow): string {
  return `${r.at} ${r.domain} ${r.kind} ${r.text}`.toLowerCase();
}

/** The words {@link filterLog} searches in: the row's own, kept once read (plain rows: made again). */
function searchWords(r: LogRow): string {
  return r instanceof Row ? r.words : wordsOf(r);
}

/** Rows whose words are read between two frames: a few milliseconds' work (a 100k-event log takes 50 slices). */
export const LOG_INDEX_SLICE = 2_000;

/**
 * The free-text index of a log: every row's words (time, domain, kind, text; lower-cased) in one string,
 * a line each, and where each row's line starts. A word is found by the string's own search, from one
 * match to the next row's line, not by asking each of 100k rows (`npm run bench find`).
 */
export interface LogWordIndex {
  readonly rows: readonly LogRow[];
  readonly text: string;
  readonly starts: Int32Array;
}

/** A {@link LogWordIndex} being built, a slice of rows at a time ({@link stepLogWordIndex}). */
export interface LogWordIndexDraft {
  readonly rows: readonly LogRow[];
  readonly parts: string[];
  readonly starts: Int32Array;
  /** The next row to read, and where its line starts. */
  next: number;
  at: number;
}

/** An index of `rows` to build. */
export function draftLogWordIndex(rows: readonly LogRow[]): LogWordIndexDraft {
  return { rows, parts: [], starts: new Int32Array(rows.length), next: 0, at: 0 };
}

/**
 * Reads the next `count` rows' words into `draft` (the page does it between frames: no search ever reads
 * 100k rows' words at once); the index once every row is read, else undefined.
 */
export function stepLogWordIndex(draft: LogWordIndexDraft, count: number): LogWordIndex | undefined {
  const { rows, starts } = draft;
  const to = Math.min(rows.length, draft.next + count);
  const words: string[] = [];
  for (let i = draft.next; i < to; i++) {
    const w = searchWords(rows[i] as LogRow);
    starts[i] = draft.at;
    draft.at += w.length + 1;
    words.push(w);
  }
  if (words.length > 0) draft.parts.push(words.join("\n"));
  draft.next = to;
  return to < rows.length ? undefined : { rows, text: draft.parts.join("\n"), starts };
}

/** The index of `rows`, built at once (a test's, a bench's; the page builds it a slice at a time). */
export function logWordIndex(rows: readonly LogRow[]): LogWordIndex {
  const draft = draftLogWordIndex(rows);
  let index: LogWordIndex | undefined;
  while ((index = stepLogWordIndex(draft, LOG_INDEX_SLICE)) === undefined);
  return index;
}

/** Which rows of `index` hold `word` (1 at each such row's position). */
function rowsHolding(index: LogWordIndex, word: string): Uint8Array {
  const { text, starts } = index;
  const out = new Uint8Array(starts.length);
  let at = text.indexOf(word);
  while (at >= 0) {
    // The row whose line holds the match: the last that starts at or before it.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= at) lo = mid;
      else hi = mid - 1;
    }
    out[lo] = 1;
    at = lo + 1 < starts.length ? text.indexOf(word, starts[lo + 1]) : -1;
  }
  return out;
}

/** The rows of `index` holding every one of `words`. */
function rowsHoldingAll(index: LogWordIndex, words: readonly string[]): Uint8Array {
  let all: Uint8Array | undefined;
  for (const w of words) {
    const one = rowsHolding(index, w);
    if (all === undefined) all = one;
    else for (let i = 0; i < all.length; i++) all[i] = (all[i] as number) & (one[i] as number);
  }
  return all ?? new Uint8Array(index.starts.length).fill(1);
}

/** The words of a search: lower-cased, split at spaces. */
function searchTerms(text: string | undefined): string[] {
  return (text ?? "").toLowerCase().split(/\s+/).filter(Boolean);
}

/** The rows that pass `filter`; a search reads `index` when it is of these rows (else each row's words). */
export function filterLog(rows: readonly LogRow[], filter: LogFilter, index?: LogWordIndex): LogRow[] {
  const words = searchTerms(filter.text);
  const holding = words.length > 0 && index?.rows === rows ? rowsHoldingAll(index, words) : undefined;
  const kinds = filter.kinds !== undefined && filter.kinds.size > 0 ? filter.kinds : undefined;
  const only = filter.evidence === true;
  const also = filter.also;
  return rows.filter(
    (r, i) =>
      (filter.full === true || !r.detail) &&
      (!filter.domain || r.domain === filter.domain) &&
      (!filter.kind || r.kind === filter.kind) &&
      (kinds === undefined || kinds.has(r.kind)) &&
      (!filter.rule || r.rules.includes(filter.rule)) &&
      (!filter.delivery || r.delivery === filter.delivery) &&
      (!only || isEvidence(r) || also?.has(r.seq) === true) &&
      (words.length === 0 || (holding !== undefined ? holding[i] === 1 : hasEvery(searchWords(r), words))),
  );
}

/** One of the log's filters, by its field of {@link LogFilter} (what "show it" clears: "full" is turned on). */
export type LogFilterKey = "full" | "domain" | "kind" | "kinds" | "rule" | "delivery" | "evidence" | "text";

/** The filters in the order {@link hidingFilters} reads them. */
const FILTER_ORDER: readonly LogFilterKey[] = [
  "full",
  "domain",
  "kind",
  "kinds",
  "rule",
  "delivery",
  "evidence",
  "text",
];

/**
 * `filter` with the filters `keys` taken off ("full", the wire and the state machine, turned on): what "show it"
 * leaves of the reader's filters (the others stay as they set them).
 */
export function withoutFilters(filter: LogFilter, keys: Iterable<LogFilterKey>): LogFilter {
  const next: { -readonly [K in keyof LogFilter]: LogFilter[K] } = { ...filter };
  for (const key of keys) {
    if (key === "full") next.full = true;
    else {
      delete next[key];
      if (key === "evidence") delete next.also;
    }
  }
  return next;
}

/** A filter that hides a row: which, and in words. */
interface Hiding {
  readonly key: LogFilterKey;
  readonly phrase: string;
}

/** Each filter of `filter` that leaves `row` out of the log, in the order the filters bar shows them. */
function hidingFilters(row: LogRow, filter: LogFilter): Hiding[] {
  const out: Hiding[] = [];
  const words = searchTerms(filter.text);
  if (row.detail && filter.full !== true) out.push({ key: "full", phrase: "“Wire and state machine” is off" });
  if (filter.domain && row.domain !== filter.domain)
    out.push({ key: "domain", phrase: `the domain filter (${filter.domain})` });
  if (filter.kind && row.kind !== filter.kind) out.push({ key: "kind", phrase: `the event filter (${filter.kind})` });
  if (filter.kinds !== undefined && filter.kinds.size > 0 && !filter.kinds.has(row.kind))
    out.push({ key: "kinds", phrase: `the event kinds chosen (${row.kind} is not one)` });
  if (filter.rule && !row.rules.includes(filter.rule))
    out.push({ key: "rule", phrase: `the rule filter (${filter.rule})` });
  if (filter.delivery && row.delivery !== filter.delivery)
    out.push({ key: "delivery", phrase: `the selected delivery (${filter.delivery})` });
  if (filter.evidence === true && !isEvidence(row) && filter.also?.has(row.seq) !== true)
    out.push({ key: "evidence", phrase: "“Only evidence rows”" });
  if (words.length > 0 && !hasEvery(searchWords(row), words))
    out.push({ key: "text", phrase: `the search “${filter.text?.trim()}”` });
  return out;
}

/**
 * Why `filter` leaves `row` out of the log: one phrase per filter that does (none: the row is shown), so
 * that a link to a hidden row can say what hides it (filter, then follow a link).
 */
export function hiddenBy(row: LogRow, filter: LogFilter): string[] {
  return hidingFilters(row, filter).map((h) => h.phrase);
}

/** The filters of `filter` that hide `row`: those "show it" clears. */
export function filtersHiding(row: LogRow, filter: LogFilter): LogFilterKey[] {
  return hidingFilters(row, filter).map((h) => h.key);
}

/** A filter of the log as it hides several lines, for "… by the rule filter (ERR-8)". */
function filterPhrase(key: LogFilterKey, filter: LogFilter): string {
  switch (key) {
    case "full":
      return "“Wire and state machine” (off)";
    case "domain":
      return `the domain filter (${filter.domain})`;
    case "kind":
      return `the event filter (${filter.kind})`;
    case "kinds":
      return "the event kinds chosen";
    case "rule":
      return `the rule filter (${filter.rule})`;
    case "delivery":
      return `the selected delivery (${filter.delivery})`;
    case "evidence":
      return "“Only evidence rows”";
    case "text":
      return `the search “${filter.text?.trim()}”`;
  }
}

/** What the log's filters do to the lines marked as evidence (a check's, a Why clause's, a note's event). */
export interface MarkedHidden {
  /** The marked events that have a line in the log (the checks' own events have none). */
  readonly lines: number;
  /** How many of those lines the filters hide. */
  readonly hidden: number;
  /** Each filter that hides any of them, with how many it hides (a line hidden by two counts in both). */
  readonly by: readonly { readonly key: LogFilterKey; readonly phrase: string; readonly count: number }[];
  /** The sentence saying so (`The log's filters hide the line marked as evidence: the rule filter (ERR-8).`), if any is hidden. */
  readonly text: string | undefined;
}

/**
 * Which of the lines marked `seqs` (the events a check or a Why clause points at) `filter` hides, and by which
 * filters: so that a link to evidence the filters hide says so, and what "show them" would clear.
 */
export function markedHidden(rows: readonly LogRow[], seqs: ReadonlySet<number>, filter: LogFilter): MarkedHidden {
  let lines = 0;
  let hidden = 0;
  const counts = new Map<LogFilterKey, number>();
  for (const seq of seqs) {
    const row = rowOfSeq(rows, seq);
    if (row === undefined) continue;
    lines++;
    const hiding = hidingFilters(row, filter);
    if (hiding.length > 0) hidden++;
    for (const h of hiding) counts.set(h.key, (counts.get(h.key) ?? 0) + 1);
  }
  // In hidingFilters' order, whatever the order of the lines.
  const by = FILTER_ORDER.flatMap((key) => {
    const count = counts.get(key);
    return count === undefined ? [] : [{ key, phrase: filterPhrase(key, filter), count }];
  });
  return { lines, hidden, by, text: markedHiddenText(lines, hidden, by) };
}

function markedHiddenText(lines: number, hidden: number, by: MarkedHidden["by"]): string | undefined {
  if (hidden === 0) return undefined;
  const which =
    lines === 1
      ? "the line marked as evidence"
      : hidden === lines
        ? `all ${lines} lines marked as evidence`
        : `${hidden} of the ${lines} lines marked as evidence`;
  const whom =
    by.length === 1
      ? (by[0] as MarkedHidden["by"][number]).phrase
      : by.map((b) => `${b.count} by ${b.phrase}`).join(", ");
  return `The log's filters hide ${which}: ${whom}.`;
}

function hasEvery(hay: string, words: readonly string[]): boolean {
  for (const w of words) if (!hay.includes(w)) return false;
  return true;
}

/**
 * Whether a row is evidence: its event cites a rule of the spec or a gap of it, as the Rules view counts
 * them (app/trace/ruleEvidence.ts; the checks' verdicts aside). Read once per row, when the row is made.
 */
export function isEvidence(r: LogRow): boolean {
  return r instanceof Row && r.evidence;
}

/** `localeCompare(b, "en", { numeric: true })`, with one collator made once rather than one per comparison. */
const byNumericText = new Intl.Collator("en", { numeric: true }).compare;

/** The choices of the log's filters: every domain, kind and rule that occurs, sorted. */
export function logFacets(rows: readonly LogRow[]): {
  readonly domains: string[];
  readonly kinds: string[];
  readonly rules: string[];
} {
  const domains = new Set<string>();
  const kinds = new Set<string>();
  const rules = new Set<string>();
  for (const r of rows) {
    if (r.domain !== "") domains.add(r.domain);
    kinds.add(r.kind);
    for (const id of r.rules) rules.add(id);
  }
  const sort = (s: Set<string>): string[] => [...s].sort(byNumericText);
  return { domains: sort(domains), kinds: sort(kinds), rules: sort(rules) };
}

/** The row of event `seq` (rows ascend by seq), if the log has one. */
export function rowOfSeq(rows: readonly LogRow[], seq: number): LogRow | undefined {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = rows[mid] as LogRow;
    if (r.seq === seq) return r;
    if (r.seq < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** The index of the last row at or before `timeMs` (the playhead), or -1. */
export function rowAtTime(rows: readonly LogRow[], timeMs: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((rows[mid]?.timeMs ?? Infinity) <= timeMs) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * {@link logRows} for a log that grows: while the events only get longer
 * (a live run appends batches), only the new ones are described. Any other
 * change (another run, an opened trace) starts over. The answer is always
 * what `logRows(events, startMs)` gives.
 */
export function createLogRowsCache(): (events: readonly RecordedEvent[], startMs: number) => readonly LogRow[] {
  let seen: readonly RecordedEvent[] = [];
  let seenStart = Number.NaN;
  let rows: LogRow[] = [];
  return (events, startMs) => {
    const n = seen.length;
    const extends_ =
      startMs === seenStart &&
      events.length >= n &&
      (n === 0 || (events[n - 1] === seen[n - 1] && events[0] === seen[0]));
    if (!extends_) rows = [];
    const from = extends_ ? n : 0;
    if (from === events.length && extends_) return rows;
    rows = rows.concat(logRows(from === 0 ? events : events.slice(from), startMs));
    seen = events;
    seenStart = startMs;
    return rows;
  };
}
