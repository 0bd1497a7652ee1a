/**
 * Two runs of one scenario side by side (issue 15, "Compare and fork"): two
 * readings of a gap, two seeds, or a run and its fork. From each run's
 * outcomes table (app/sim/outcomeRows.ts, the same rows the run view and
 * `mailscope run` show) this makes the difference table — one line per
 * recipient of each message, the fields that differ flagged — and a one-line
 * verdict per recipient (`smtp at +1:03:00 vs accepted at +3:03:00`). For a
 * fork it also checks that the two runs agree before the fork point, by
 * hashing the prefix of each trace (see {@link tracePrefix}).
 *
 * Pure: `mailscope compare` and the app's Compare view both use it.
 */
import { subtle } from "../protocol/webCrypto.ts";
import { canonicalJson } from "../trace/exportJson.ts";
import { formatOffset } from "../trace/offset.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import type { OutcomeRow } from "./outcomeRows.ts";

/** A field of an outcome row that the comparison looks at, in the order it shows them. */
export type CompareField = "outcome" | "time" | "attempts" | "posts" | "rule";

export const COMPARE_FIELDS: readonly CompareField[] = ["outcome", "time", "attempts", "posts", "rule"];

/** Words for a field, for table headings. */
export const FIELD_TEXT: Readonly<Record<CompareField, string>> = {
  outcome: "outcome",
  time: "time",
  attempts: "attempts",
  posts: "POSTs",
  rule: "rule",
};

/** One recipient of one message, as each run ended for it. */
export interface CompareLine {
  /** `m1`, or a DSN's Message-ID. */
  readonly message: string;
  readonly recipient: string;
  readonly dsn: boolean;
  /** The row of run A; undefined when A never submitted this message to this recipient. */
  readonly a?: OutcomeRow;
  readonly b?: OutcomeRow;
  /** The fields whose values differ, in {@link COMPARE_FIELDS} order; empty when the two agree. */
  readonly differs: readonly CompareField[];
  /** `smtp at +1:03:00 vs accepted at +3:03:00`; `same: accepted at +3:03:00`. */
  readonly verdict: string;
}

/** The difference table of two runs. */
export interface CompareTable {
  readonly lines: readonly CompareLine[];
  /** How many lines differ in some field. */
  readonly differing: number;
  /** Every recipient ended the same way in both runs (outcome, time, attempts, POSTs, rule). */
  readonly same: boolean;
}

/** The text of one field of a row, as the table shows it (`—` when the run has no such row). */
export function fieldText(row: OutcomeRow | undefined, field: CompareField): string {
  if (row === undefined) return "—";
  switch (field) {
    case "outcome":
      return row.outcomeText;
    case "time":
      return row.when || "—";
    case "attempts":
      return String(row.attempts);
    case "posts":
      return String(row.posts);
    case "rule":
      return row.rule ?? "—";
  }
}

/** `smtp at +1:03:00`, `pending`, `not submitted`. */
export function outcomeAt(row: OutcomeRow | undefined): string {
  if (row === undefined) return "not submitted";
  if (row.outcome === "pending" || row.when === "") return row.outcome;
  return `${row.outcome} at ${row.when}`;
}

const keyOf = (row: OutcomeRow): string => `${row.message}\n${row.recipient}`;

/** The one-line verdict of a recipient: what differs, A's value first. */
export function verdictOf(
  a: OutcomeRow | undefined,
  b: OutcomeRow | undefined,
  differs: readonly CompareField[],
): string {
  if (differs.length === 0) return `same: ${outcomeAt(a)}`;
  if (differs.includes("outcome") || differs.includes("time") || a === undefined || b === undefined) {
    return `${outcomeAt(a)} vs ${outcomeAt(b)}`;
  }
  const rest = differs.map((f) => `${FIELD_TEXT[f]} ${fieldText(a, f)} vs ${fieldText(b, f)}`);
  return `${outcomeAt(a)} in both; ${rest.join(", ")}`;
}

/**
 * The difference table of runs A and B: their recipients matched by message
 * (the scenario's id) and recipient, in A's order and then B's own.
 */
export function compareOutcomes(a: readonly OutcomeRow[], b: readonly OutcomeRow[]): CompareTable {
  const byKeyB = new Map(b.map((r) => [keyOf(r), r]));
  const keys = [...new Set([...a.map(keyOf), ...b.map(keyOf)])];
  const byKeyA = new Map(a.map((r) => [keyOf(r), r]));
  const lines = keys.map((key): CompareLine => {
    const ra = byKeyA.get(key);
    const rb = byKeyB.get(key);
    const some = (ra ?? rb) as OutcomeRow;
    const differs = COMPARE_FIELDS.filter((f) => {
      if (ra === undefined || rb === undefined) return true;
      if (f === "time") return ra.atMs !== rb.atMs;
      return fieldText(ra, f) !== fieldText(rb, f);
    });
    return {
      message: some.message,
      recipient: some.recipient,
      dsn: some.dsn,
      ...(ra !== undefined && { a: ra }),
      ...(rb !== undefined && { b: rb }),
      differs,
      verdict: verdictOf(ra, rb, differs),
    };
  });
  const differing = lines.filter((l) => l.differs.length > 0).length;
  return { lines, differing, same: differing === 0 };
}

/**
 * The part of a run before `forkMs`, as it can be compared with a fork's:
 * the events strictly before the fork time, numbered from 0 again, each
 * fault's declaration (`fault.window`, traced at the start) cut to what it
 * says about the time before the fork — its window clipped at `forkMs`, a
 * fault that starts at or after it left out — since a fork changes faults
 * from the fork time on, and a declaration names its whole window.
 */
export function tracePrefix(events: readonly RecordedEvent[], forkMs: number): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (const e of events) {
    if (e.timeMs >= forkMs) break;
    let data = e.data;
    if (e.name === "fault.window" && data !== undefined) {
      const fromMs = typeof data["fromMs"] === "number" ? data["fromMs"] : Number.NEGATIVE_INFINITY;
      if (fromMs >= forkMs) continue;
      const untilMs = typeof data["untilMs"] === "number" ? data["untilMs"] : Number.POSITIVE_INFINITY;
      data = { ...data, untilMs: Math.min(untilMs, forkMs) };
    }
    out.push({ ...e, seq: out.length, ...(data !== undefined && { data }) });
  }
  return out;
}

/** SHA-256 (hex) of the canonical JSON of {@link tracePrefix}. */
export async function prefixHash(events: readonly RecordedEvent[], forkMs: number): Promise<string> {
  return sha256(canonicalJson(tracePrefix(events, forkMs)));
}

async function sha256(text: string): Promise<string> {
  const digest = await subtle.digest("SHA-256", new TextEncoder().encode(text));
  let hex = "";
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** Whether two runs agree before the fork point. */
export interface PrefixCheck {
  readonly forkMs: number;
  readonly identical: boolean;
  readonly hashA: string;
  readonly hashB: string;
  /** Events before the fork in A and in B. */
  readonly eventsA: number;
  readonly eventsB: number;
  /** The first prefix event that differs (by its place in the prefix), when they differ. */
  readonly firstDifference?: {
    readonly index: number;
    readonly timeMs: number;
    readonly a?: string;
    readonly b?: string;
  };
  /** `identical before +0:30:00 (87 events)`, or where they part. */
  readonly text: string;
}

/** Checks that runs A and B are the same before `forkMs` (A's and B's prefix hashes are equal). */
export async function checkPrefix(
  a: readonly RecordedEvent[],
  b: readonly RecordedEvent[],
  forkMs: number,
  startMs: number,
): Promise<PrefixCheck> {
  const pa = tracePrefix(a, forkMs);
  const pb = tracePrefix(b, forkMs);
  const hashA = await sha256(canonicalJson(pa));
  const hashB = await sha256(canonicalJson(pb));
  const at = formatOffset(forkMs, startMs);
  if (hashA === hashB) {
    return {
      forkMs,
      identical: true,
      hashA,
      hashB,
      eventsA: pa.length,
      eventsB: pb.length,
      text: `identical before ${at} (${pa.length} events, prefix hash ${hashA.slice(0, 12)})`,
    };
  }
  let index = 0;
  while (index < Math.min(pa.length, pb.length) && canonicalJson(pa[index]) === canonicalJson(pb[index])) index++;
  const ea = pa[index];
  const eb = pb[index];
  const timeMs = Math.min(ea?.timeMs ?? Number.POSITIVE_INFINITY, eb?.timeMs ?? Number.POSITIVE_INFINITY);
  return {
    forkMs,
    identical: false,
    hashA,
    hashB,
    eventsA: pa.length,
    eventsB: pb.length,
    firstDifference: {
      index,
      timeMs,
      ...(ea !== undefined && { a: ea.name }),
      ...(eb !== undefined && { b: eb.name }),
    },
    text: `differ before ${at}: event ${index} at ${formatOffset(timeMs, startMs)} is ${ea?.name ?? "missing"} vs ${eb?.name ?? "missing"}`,
  };
}
