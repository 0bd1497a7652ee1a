/**
 * The per-recipient outcomes table of the run view: app/sim/outcomeRows.ts
 * (shared with `mailscope compare`), read one message at a time from the
 * run's index so that a live run's batch recomputes only the messages it
 * concerns.
 */
import { messageLabel, recipientRows, type OutcomeRow, type RecipientRow } from "../../../app/sim/outcomeRows.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { messageIdsOf, outcomeEventCount, outcomeEvents, runCache, runIndexOf } from "../../../app/trace/runIndex.ts";

export { messageLabel, type OutcomeRow } from "../../../app/sim/outcomeRows.ts";

/** The rows of one message (all but the `message` label), as of `facts` of its events. */
interface MessageRows {
  readonly messageId: string;
  readonly facts: number;
  readonly startMs: number;
  /** Submitted by a sender (not a DSN): its local part is a scenario message id. */
  readonly scenario: boolean;
  readonly rows: readonly RecipientRow[];
}

/**
 * The outcomes table of `events` (the whole trace, or as far as the playhead).
 * `labels` maps a Message-ID to the scenario's id; without it the id is read
 * off the Message-ID's local part.
 *
 * Each message's rows read only that message's events, found by the run's
 * index, and are kept until a batch brings it new ones: a live run's batch
 * recomputes the rows of the messages it concerns.
 */
export function outcomeRows(
  events: readonly RecordedEvent[],
  startMs: number,
  labels?: ReadonlyMap<string, string>,
): OutcomeRow[] {
  const index = runIndexOf(events);
  const cache = runCache<MessageRows>(index, "outcomes");
  const messages = messageIdsOf(index).map((messageId) => {
    const facts = outcomeEventCount(index, messageId);
    let rows = cache.get(messageId);
    if (rows === undefined || rows.facts !== facts || rows.startMs !== startMs) {
      const read = recipientRows(outcomeEvents(index, messageId), startMs);
      const local = messageId.includes("@") ? messageId.slice(0, messageId.indexOf("@")) : undefined;
      const scenario = local !== undefined && read.scenarioIds.has(local);
      rows = { messageId, facts, startMs, scenario, rows: read.rows.filter((r) => r.row.messageId === messageId) };
      // An older version of the events (a deferred render) computes, but keeps nothing.
      if (index.count === index.lists.events.length) cache.set(messageId, rows);
    }
    return rows;
  });
  // The scenario's message ids read off its submissions: the first part of each non-DSN Message-ID.
  const ids = new Set<string>();
  for (const m of messages) {
    if (m.scenario && m.messageId.includes("@")) ids.add(m.messageId.slice(0, m.messageId.indexOf("@")));
  }
  const all = messages.flatMap((m) => m.rows);
  // In the order the recipients were submitted (a message submitted again later adds its rows there).
  if (all.some((r, i) => i > 0 && r.at < (all[i - 1]?.at ?? 0))) all.sort((a, b) => a.at - b.at);
  return all.map(({ row }) => ({ message: labels?.get(row.messageId) ?? messageLabel(row.messageId, ids), ...row }));
}

/** A column of the outcomes table a person can sort by. */
export type OutcomeColumn = "message" | "recipient" | "outcome" | "when" | "attempts" | "posts" | "rule";

/** The order of the table: a column and a direction (as `aria-sort` spells it). */
export interface OutcomeSort {
  readonly column: OutcomeColumn;
  readonly direction: "ascending" | "descending";
}

/** What the outcomes table is filtered by; every field optional, all of them must hold. */
export interface OutcomeFilter {
  /** `accepted`, `rejected`, `smtp`, `bounced` or `pending`. */
  readonly outcome?: string;
  /** The recipient's domain. */
  readonly domain?: string;
  /** Words in the message's label or Message-ID, any case. */
  readonly message?: string;
  /** Only rows with more attempts than this. */
  readonly attemptsOver?: number;
}

/** The domain of a recipient (`bob@B.example` → `b.example`). */
export function recipientDomain(recipient: string): string {
  return recipient.slice(recipient.lastIndexOf("@") + 1).toLowerCase();
}

/** The choices of the table's filters: every outcome and recipient domain that occurs, sorted. */
export function outcomeFacets(rows: readonly OutcomeRow[]): {
  readonly outcomes: string[];
  readonly domains: string[];
} {
  const outcomes = new Set<string>();
  const domains = new Set<string>();
  for (const r of rows) {
    outcomes.add(r.outcome);
    domains.add(recipientDomain(r.recipient));
  }
  return { outcomes: [...outcomes].sort(byText), domains: [...domains].sort(byText) };
}

/** `localeCompare(b, "en", { numeric: true })`, with one collator made once: `m2` before `m10`. */
const byText = new Intl.Collator("en", { numeric: true }).compare;

/** The value a column sorts by; a pending row has no time and sorts after every time either way. */
function sortValue(r: OutcomeRow, column: OutcomeColumn): string | number | undefined {
  switch (column) {
    case "message":
      return r.dsn ? `DSN ${r.message}` : r.message;
    case "recipient":
      return r.recipient;
    case "outcome":
      return r.outcomeText;
    case "when":
      return r.atMs;
    case "attempts":
      return r.attempts;
    case "posts":
      return r.posts;
    case "rule":
      return r.rule;
  }
}

/** Whether `r` passes `filter`. */
function passes(r: OutcomeRow, filter: OutcomeFilter, words: readonly string[]): boolean {
  if (filter.outcome !== undefined && r.outcome !== filter.outcome) return false;
  if (filter.domain !== undefined && recipientDomain(r.recipient) !== filter.domain) return false;
  if (filter.attemptsOver !== undefined && !(r.attempts > filter.attemptsOver)) return false;
  if (words.length > 0) {
    const hay = `${r.dsn ? "dsn " : ""}${r.message} ${r.messageId}`.toLowerCase();
    if (!words.every((w) => hay.includes(w))) return false;
  }
  return true;
}

/**
 * The rows of the table as shown: those passing `filter`, in `sort`'s order
 * (rows that tie keep the order the recipients were submitted in; a row
 * without the value, pending or with no rule, comes last either way), or in
 * submission order without a sort. Pure; each order is sorted once per table
 * (3,600 rows of a 100k-event trace), then only filtered (`npm run bench find`).
 */
export function outcomeView(
  rows: readonly OutcomeRow[],
  filter: OutcomeFilter,
  sort: OutcomeSort | undefined,
): OutcomeRow[] {
  const words = (filter.message ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const ordered = sort === undefined ? rows : sortedRows(rows, sort);
  return ordered.filter((r) => passes(r, filter, words));
}

/** Each table's rows in each order asked for: sorted once per column and direction, then only filtered. */
const orders = new WeakMap<readonly OutcomeRow[], Map<string, readonly OutcomeRow[]>>();

/** `rows` in `sort`'s order (kept for these rows: a filter of a sorted table sorts nothing again). */
function sortedRows(rows: readonly OutcomeRow[], sort: OutcomeSort): readonly OutcomeRow[] {
  let byOrder = orders.get(rows);
  if (byOrder === undefined) orders.set(rows, (byOrder = new Map()));
  const key = `${sort.column} ${sort.direction}`;
  const known = byOrder.get(key);
  if (known !== undefined) return known;
  const sign = sort.direction === "ascending" ? 1 : -1;
  const keyed = rows.map((r, i) => ({ r, i, v: sortValue(r, sort.column) }));
  keyed.sort((a, b) => {
    if (a.v === undefined || b.v === undefined) return a.v === b.v ? a.i - b.i : a.v === undefined ? 1 : -1;
    const c = typeof a.v === "number" && typeof b.v === "number" ? a.v - b.v : byText(String(a.v), String(b.v));
    return c === 0 ? a.i - b.i : sign * c;
  });
  const sorted = keyed.map((k) => k.r);
  byOrder.set(key, sorted);
  return sorted;
}

/** The next order after a click on `column`'s header: ascending, then descending, then back to ascending. */
export function nextSort(sort: OutcomeSort | undefined, column: OutcomeColumn): OutcomeSort {
  return sort?.column === column && sort.direction === "ascending"
    ? { column, direction: "descending" }
    : { column, direction: "ascending" };
}
