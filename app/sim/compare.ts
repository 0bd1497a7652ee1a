/**
 * Two runs of one scenario side by side (README, "Compare and fork"): two
 * readings of a gap, two seeds, or a run and its fork. From each run's
 * outcomes table (app/sim/outcomeRows.ts, the same rows the run view and
 * `mailscope run` show) this makes the difference table — one line per
 * recipient of each message, the fields that differ flagged — and a one-line
 * verdict per recipient (`smtp at +1:03:00 vs accepted at +3:03:00`), of one
 * of four kinds: the same, the same outcome at another time or after other
 * attempts, another outcome, or in one run only. A DSN is matched by what it
 * reports on — the original message, the kind of report, the recipients it
 * reports, and who it goes to — never by its Message-ID, which the seed draws
 *. From the two traces it also finds where the runs first part:
 * the first decision (an attempt judged, a retry timed, a recipient's result,
 * a hand-off, a bounce, an outcome, a DSN) one run made otherwise, with what
 * each run decided there ({@link firstParting}). For a fork it also checks
 * that the two runs agree before the fork point, by hashing the prefix of
 * each trace (see {@link tracePrefix}).
 *
 * Pure: `mailscope compare` and the app's Compare view both use it
 * ({@link compareRuns}).
 */
import { subtle } from "../protocol/webCrypto.ts";
import { describeEvent } from "../trace/describe.ts";
import { canonicalJson } from "../trace/exportJson.ts";
import { formatOffset } from "../trace/offset.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { outcomeRows, type OutcomeRow } from "./outcomeRows.ts";
import { actorOfDelivery } from "../trace/deliveryIds.ts";

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

/**
 * How a recipient's two endings compare: alike in every field; the same outcome (and rule) at another
 * time or after other attempts or POSTs; another outcome (or another rule deciding it); or a recipient
 * only one run has.
 */
export type VerdictKind = "same" | "same-outcome" | "different-outcome" | "one-run";

/** The words of each kind, as the view and `mailscope compare` label a verdict. */
export const VERDICT_KIND_TEXT: Readonly<Record<VerdictKind, string>> = {
  same: "same",
  "same-outcome": "same outcome, different time or attempts",
  "different-outcome": "different outcome",
  "one-run": "in one run only",
};

/** One recipient of one message, as each run ended for it. */
export interface CompareLine {
  /** `m1`; for a DSN what it reports on, `DSN of m1 (bounced: bob@b.example)`. */
  readonly message: string;
  readonly recipient: string;
  readonly dsn: boolean;
  /** The row of run A; undefined when A never submitted this message to this recipient. */
  readonly a?: OutcomeRow;
  readonly b?: OutcomeRow;
  /** The fields whose values differ, in {@link COMPARE_FIELDS} order; empty when the two agree. */
  readonly differs: readonly CompareField[];
  readonly kind: VerdictKind;
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
  /** How many lines are of each kind. */
  readonly kinds: Readonly<Record<VerdictKind, number>>;
  /** `Differ: 1 of 3 recipients ended differently; 1 more the same way at another time or after other attempts.` */
  readonly summary: string;
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

/** The kind of a recipient's verdict, from the fields that differ. */
export function kindOf(
  a: OutcomeRow | undefined,
  b: OutcomeRow | undefined,
  differs: readonly CompareField[],
): VerdictKind {
  if (a === undefined || b === undefined) return "one-run";
  if (differs.length === 0) return "same";
  return differs.includes("outcome") || differs.includes("rule") ? "different-outcome" : "same-outcome";
}

/** The one-line verdict of a recipient: what differs, A's value first. */
export function verdictOf(
  a: OutcomeRow | undefined,
  b: OutcomeRow | undefined,
  differs: readonly CompareField[],
): string {
  const kind = kindOf(a, b, differs);
  if (kind === "same") return `same: ${outcomeAt(a)}`;
  if (kind === "one-run" || a === undefined || b === undefined) return `${outcomeAt(a)} vs ${outcomeAt(b)}`;
  if (kind === "different-outcome") {
    const rule =
      differs.includes("rule") && !differs.includes("outcome")
        ? `; rule ${fieldText(a, "rule")} vs ${fieldText(b, "rule")}`
        : "";
    return `${outcomeAt(a)} vs ${outcomeAt(b)}${rule}`;
  }
  // The same outcome: when it came, and after how many attempts and POSTs.
  const rest = differs
    .filter((f) => f !== "time")
    .map((f) => `${FIELD_TEXT[f]} ${fieldText(a, f)} vs ${fieldText(b, f)}`);
  const head = differs.includes("time")
    ? `${a.outcome} in both, at ${fieldText(a, "time")} vs ${fieldText(b, "time")}`
    : `${outcomeAt(a)} in both`;
  return rest.length > 0 ? `${head}; ${rest.join(", ")}` : head;
}

/** How a run's rows are matched with the other run's: a key, and the words for the line's message. */
export type RowKeys = (row: OutcomeRow) => { readonly key: string; readonly message: string };

/** A message's rows by the scenario's id and the recipient: what matches a scenario's messages across runs. */
export const byMessage: RowKeys = (row) => ({ key: `${row.message}\n${row.recipient}`, message: row.message });

/**
 * The difference table of runs A and B: their recipients matched by `keys`
 * (by default the message — the scenario's id — and the recipient), in A's
 * order and then B's own. Two rows of one run with the same key (two DSNs of
 * one kind about one message) are matched in the order they came.
 */
export function compareOutcomes(
  a: readonly OutcomeRow[],
  b: readonly OutcomeRow[],
  keys: { readonly a: RowKeys; readonly b: RowKeys } = { a: byMessage, b: byMessage },
): CompareTable {
  const keyed = (rows: readonly OutcomeRow[], keysOf: RowKeys) => {
    const seen = new Map<string, number>();
    return rows.map((row) => {
      const { key, message } = keysOf(row);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      return { key: n === 1 ? key : `${key}\n#${n}`, message: n === 1 ? message : `${message} #${n}`, row };
    });
  };
  const ka = keyed(a, keys.a);
  const kb = keyed(b, keys.b);
  const byKeyA = new Map(ka.map((k) => [k.key, k]));
  const byKeyB = new Map(kb.map((k) => [k.key, k]));
  const order = [...new Set([...ka.map((k) => k.key), ...kb.map((k) => k.key)])];
  const lines = order.map((key): CompareLine => {
    const ea = byKeyA.get(key);
    const eb = byKeyB.get(key);
    const ra = ea?.row;
    const rb = eb?.row;
    const some = (ra ?? rb) as OutcomeRow;
    const differs = COMPARE_FIELDS.filter((f) => {
      if (ra === undefined || rb === undefined) return true;
      if (f === "time") return ra.atMs !== rb.atMs;
      return fieldText(ra, f) !== fieldText(rb, f);
    });
    return {
      message: (ea ?? eb)?.message ?? some.message,
      recipient: some.recipient,
      dsn: some.dsn,
      ...(ra !== undefined && { a: ra }),
      ...(rb !== undefined && { b: rb }),
      differs,
      kind: kindOf(ra, rb, differs),
      verdict: verdictOf(ra, rb, differs),
    };
  });
  const differing = lines.filter((l) => l.differs.length > 0).length;
  const kinds: Record<VerdictKind, number> = { same: 0, "same-outcome": 0, "different-outcome": 0, "one-run": 0 };
  for (const l of lines) kinds[l.kind] += 1;
  return { lines, differing, same: differing === 0, kinds, summary: summaryOf(lines.length, kinds) };
}

/** `Same: all 3 recipients ended alike.`, `Differ: 1 of 3 recipients ended differently; 1 more …`. */
function summaryOf(n: number, kinds: Readonly<Record<VerdictKind, number>>): string {
  const recipients = (k: number): string => `${k} recipient${k === 1 ? "" : "s"}`;
  const timing = kinds["same-outcome"];
  const apart = kinds["different-outcome"] + kinds["one-run"];
  const otherwise = "at another time or after other attempts";
  if (timing === 0 && apart === 0) return `Same: all ${recipients(n)} ended alike.`;
  if (apart === 0) {
    return `Same outcomes: all ${recipients(n)} ended the same way, ${timing} of them ${otherwise}.`;
  }
  const only = kinds["one-run"] > 0 ? ` (${kinds["one-run"]} in one run only)` : "";
  const more = timing > 0 ? `; ${timing} more the same way ${otherwise}` : "";
  return `Differ: ${apart} of ${recipients(n)} ended differently${only}${more}.`;
}

/** What a DSN reports on: the original message (the scenario's id), the kind of report and its recipients. */
export interface DsnSubject {
  /** `m1`: the scenario's id of the message the DSN reports on (its Message-ID when not a scenario's). */
  readonly of: string;
  /** `bounced`, `rejected`, `failure-after-acceptance`. */
  readonly kind: string;
  /** The recipients it reports, in the order given. */
  readonly recipients: readonly string[];
  /** `DSN of m1 (bounced: bob@b.example)`: the words for it, the same in both runs. */
  readonly name: string;
}

/**
 * Each DSN of a run (by its Message-ID, which the seed draws) and what it
 * reports on, from the run's `dsn.sent` events. Two DSNs of one run that
 * report the same are told apart by their order (`#2`).
 */
export function dsnSubjects(events: Iterable<RecordedEvent>): Map<string, DsnSubject> {
  const out = new Map<string, DsnSubject>();
  const named = new Map<string, number>();
  for (const e of events) {
    if (e.name !== "dsn.sent") continue;
    const d = e.data ?? {};
    const id = d["dsnMessageId"];
    if (typeof id !== "string" || out.has(id)) continue;
    const original = typeof d["messageId"] === "string" ? d["messageId"] : "a message";
    const at = original.indexOf("@");
    const of = at > 0 && !original.startsWith("dsn.") ? original.slice(0, at) : original;
    const kind = typeof d["reason"] === "string" ? d["reason"] : "report";
    const recipients = Array.isArray(d["recipients"]) ? d["recipients"].map(String) : [];
    const base = `DSN of ${of} (${kind}${recipients.length > 0 ? `: ${recipients.join(", ")}` : ""})`;
    const n = (named.get(base) ?? 0) + 1;
    named.set(base, n);
    out.set(id, { of, kind, recipients, name: n === 1 ? base : `${base} #${n}` });
  }
  return out;
}

/** A run's rows matched by message and recipient, a DSN's by what it reports on (its subject) and its recipient. */
export function dsnKeys(subjects: ReadonlyMap<string, DsnSubject>): RowKeys {
  return (row) => {
    const subject = row.dsn ? subjects.get(row.messageId) : undefined;
    if (subject === undefined) return byMessage(row);
    return { key: `${subject.name}\n${row.recipient}`, message: subject.name };
  };
}

/** Two whole runs compared: the difference table (DSNs matched by what they report on) and where they part. */
export interface RunComparison {
  readonly table: CompareTable;
  readonly parting: Parting;
}

/** Compares two runs' traces (their events), as `mailscope compare` and the app's Compare view do. */
export function compareRuns(a: Iterable<RecordedEvent>, b: Iterable<RecordedEvent>, startMs: number): RunComparison {
  const subjectsA = dsnSubjects(a);
  const subjectsB = dsnSubjects(b);
  return {
    table: compareOutcomes(outcomeRows(a, startMs), outcomeRows(b, startMs), {
      a: dsnKeys(subjectsA),
      b: dsnKeys(subjectsB),
    }),
    parting: firstParting(a, b, startMs, subjectsA, subjectsB),
  };
}

/**
 * The events that are a run's decisions: each attempt judged, each retry
 * timed, each recipient's result, each hand-off, bounce, outcome and DSN.
 */
const DECISIONS: ReadonlySet<string> = new Set([
  "attempt.judged",
  "timer.set",
  "recipient.result",
  "smtp.handoff",
  "delivery.bounced",
  "recipient.outcome",
  "dsn.sent",
]);

/** One run's side of where two runs part: the decision it made there, in the log's words. */
export interface PartingSide {
  readonly seq: number;
  readonly timeMs: number;
  /** `+0:01:00 attempt 2 in 1m2s [RETRY-1]`. */
  readonly text: string;
}

/** Where two runs first part: the first decision one of them made otherwise, with both sides'. */
export interface Parting {
  /** Whether they part at all: false when every decision of one run is the other's. */
  readonly parts: boolean;
  /** Decisions both runs made alike before they part (all of them when they do not). */
  readonly alike: number;
  /** `+0:01:00`: when they part (the earlier of the two decisions). */
  readonly at?: string;
  /** A's decision there; undefined when A made no more. */
  readonly a?: PartingSide;
  readonly b?: PartingSide;
  /** `The runs first part at +0:01:00: A attempt 2 in 1m2s [RETRY-1]; B attempt 2 in 58s [RETRY-1].` */
  readonly text: string;
}

/**
 * Where runs A and B first part: their decisions ({@link DECISIONS}) in the
 * order each run made them, compared one by one as the log says them — the
 * time, whose decision and its words (the kind of an attempt, the wait chosen
 * and what decided it, a recipient's result, …), each DSN's Message-ID (drawn
 * by the seed) read as what the DSN reports on — up to the first that differs.
 * What a decision does not show is no parting: a jittered delay that a
 * Retry-After overruled leaves the retry where it was.
 */
export function firstParting(
  a: Iterable<RecordedEvent>,
  b: Iterable<RecordedEvent>,
  startMs: number,
  subjectsA: ReadonlyMap<string, DsnSubject> = dsnSubjects(a),
  subjectsB: ReadonlyMap<string, DsnSubject> = dsnSubjects(b),
): Parting {
  // Each decision with what it decided: an attempt judged alike under a 1 h and a 4 h fallback window is one
  // decision (the runs retry alike); they part where the window makes one of them decide otherwise (note 0039).
  // The two runs' decisions are read side by side, one at a time, up to where they part (decision 0225).
  function* decisions(events: Iterable<RecordedEvent>, subjects: ReadonlyMap<string, DsnSubject>) {
    for (const e of events) {
      if (!DECISIONS.has(e.name)) continue;
      const side = decision(e, startMs, subjects);
      // Only an attempt judged has a context to leave out; any other decision is compared as it is shown.
      const decided = withoutJudgingContext(e);
      yield { side, decided: decided === e ? side.text : decision(decided, startMs, subjects).text };
    }
  }
  const da = decisions(a, subjectsA);
  const db = decisions(b, subjectsB);
  let i = 0;
  let sa: PartingSide | undefined;
  let sb: PartingSide | undefined;
  for (;;) {
    const x = da.next().value ?? undefined;
    const y = db.next().value ?? undefined;
    sa = x?.side;
    sb = y?.side;
    if (x === undefined || y === undefined || x.decided !== y.decided) break;
    i++;
  }
  if (sa === undefined && sb === undefined) {
    return { parts: false, alike: i, text: `The runs never part: they make the same ${i} decisions.` };
  }
  const at = formatOffset(Math.min(sa?.timeMs ?? Infinity, sb?.timeMs ?? Infinity), startMs);
  const words = (label: string, s: PartingSide | undefined): string =>
    s === undefined ? `${label} decides nothing more` : `${label} ${s.text}`;
  return {
    parts: true,
    alike: i,
    at,
    ...(sa !== undefined && { a: sa }),
    ...(sb !== undefined && { b: sb }),
    text: `The runs first part at ${at}, after ${i} decision${i === 1 ? "" : "s"} alike: ${words("A", sa)}; ${words("B", sb)}.`,
  };
}

/** The event without what an attempt was judged under (the fallback window, the give-up): only what was decided. */
function withoutJudgingContext(e: RecordedEvent): RecordedEvent {
  if (e.name !== "attempt.judged" || e.data === undefined) return e;
  const { fallbackWindowStartMs: _start, fallbackWindowEndMs: _end, giveUpAtMs: _giveUp, ...decided } = e.data;
  return { ...e, data: decided };
}

/** A decision in the log's words, with its time and whose it is: `+0:01:00 m1@a.example→b.example: attempt 2 in 57s`. */
function decision(e: RecordedEvent, startMs: number, subjects: ReadonlyMap<string, DsnSubject>): PartingSide {
  const words = (describeEvent(e, { flavour: "timeline", full: true, startMs }) ?? e.name).trim();
  // Whose decision: the delivery actor, unless the words start with it already (an attempt judged).
  const d = e.data ?? {};
  const actor =
    typeof d["deliveryActor"] === "string"
      ? d["deliveryActor"]
      : typeof d["deliveryId"] === "string"
        ? actorOfDelivery(d["deliveryId"])
        : undefined;
  const who = actor !== undefined && !words.startsWith(actor) ? `${actor}: ` : "";
  return { seq: e.seq, timeMs: e.timeMs, text: named(`${formatOffset(e.timeMs, startMs)} ${who}${words}`, subjects) };
}

/** `text` with each DSN's Message-ID replaced by what the DSN reports on. */
function named(text: string, subjects: ReadonlyMap<string, DsnSubject>): string {
  let out = text;
  for (const [id, subject] of subjects) if (out.includes(id)) out = out.split(id).join(subject.name);
  return out;
}

/**
 * The part of a run before `forkMs`, as it can be compared with a fork's:
 * the events strictly before the fork time, numbered from 0 again, each
 * fault's declaration (`fault.window`, traced at the start) cut to what it
 * says about the time before the fork — its window clipped at `forkMs`, a
 * fault that starts at or after it left out — since a fork changes faults
 * from the fork time on, and a declaration names its whole window.
 */
export function tracePrefix(events: Iterable<RecordedEvent>, forkMs: number): RecordedEvent[] {
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
export async function prefixHash(events: Iterable<RecordedEvent>, forkMs: number): Promise<string> {
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
  a: Iterable<RecordedEvent>,
  b: Iterable<RecordedEvent>,
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
