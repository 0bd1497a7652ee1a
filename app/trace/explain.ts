/**
 * "Why?" for every recipient outcome: the chain of decisive events that led
 * a recipient of a message to its outcome, read off the trace alone, so that
 * the app's Why panel, `mailscope run --explain` (and the `why` of `run
 * --json`), the Markdown report and the bug bundle (which carries that
 * report) all say the same words.
 *
 * An explanation is a headline (`bounced at +5d 0:00:00`) and clauses in
 * order, each with the time it happened, what happened in words, the rule IDs
 * it names, the gap readings that decided where one did, the attempts it
 * covers, and its evidence: the trace events (by seq) behind it, each with
 * what the clause claims of it (its name, time, rule and attempt number), so
 * that a test can hold every clause of every bundled scenario to its events.
 * Runs of attempts that ended alike and were judged alike are one clause
 * (`attempts 2–6 (+0:02:00 … +0:32:31) got no answer (connection refused)`).
 * What the trace does not show is said so (`explained: false`), never
 * guessed.
 *
 * Attempts are numbered as the trace numbers them (attempt.started,
 * attempt.judged, machine.transition, timer.set's `attempt`): attempt 1 is
 * the first, a retry starts the next.
 *
 * Pure: no clock, no I/O.
 */
import { pushAll } from "../protocol/lists.ts";
import { normalizeAddress } from "../protocol/mailbox.ts";
import { actorOfDelivery } from "./deliveryIds.ts";
import { dataOf, readEvent, type ReadData } from "./eventReader.ts";
import { numberOf, textOf, textsOf } from "./values.ts";
import { formatOffset } from "./offset.ts";
import { rulesCited } from "./ruleEvidence.ts";
import type { RecordedEvent } from "./schema.ts";

type Data = Readonly<Record<string, unknown>>;

/** One event a clause stands on, and what the clause says of it. */
export interface Citation {
  readonly seq: number;
  /** The event's name (`attempt.judged`). */
  readonly name: string;
  readonly timeMs: number;
  /** A rule the clause names that this event cites (`rule`, `rules`). */
  readonly rule?: string;
  /** The attempt number the event carries (`attempt`), when the clause counts on it. */
  readonly attempt?: number;
}

/** What a clause is about. */
export type WhyClauseKind =
  | "dsn-of"
  | "rejected-before-sending"
  | "attempts"
  | "accepted"
  | "rejected"
  | "smtp"
  | "give-up"
  | "dsn"
  | "no-dsn"
  | "failure-after-acceptance"
  | "pending"
  | "unexplained";

/** One link of the chain. */
export interface WhyClause {
  readonly kind: WhyClauseKind;
  /** When it happened (the first cited event's time). */
  readonly atMs: number;
  /** `+0:02:00`. */
  readonly at: string;
  /** What happened, in words, its time(s) included. */
  readonly text: string;
  /** The rule IDs the text names, each cited by one of the evidence's events. */
  readonly rules: readonly string[];
  /** The gap readings that decided (`G16=fallback-window=7200s`), named in the text. */
  readonly readings: readonly string[];
  /** The attempts it covers: first and last. */
  readonly attempts?: readonly [number, number];
  /** The events behind it, in trace order. */
  readonly evidence: readonly Citation[];
}

/** Where an earlier attempt's answer ruled SMTP out for the message (ERR-23). */
export interface SmtpRuledOut {
  readonly attempt: number;
  /** When that attempt started, and when it was judged (its answer read). */
  readonly atMs: number;
  readonly judgedAtMs: number;
  /**
   * How that attempt ended, in words: `429 rate_limited`, `per-recipient results: bob@b.example deferred
   * (mailbox_full)`.
   */
  readonly answer: string;
  /** ERR-23 for an authenticated answer (a 4xx problem, per-recipient results), else the judgement's own rule. */
  readonly rule?: string;
  /** The attempt.judged event that says so (`allAttemptsFallbackEligible: false`). */
  readonly seq: number;
}

/** The explanation of one recipient's outcome. */
export interface Why {
  readonly messageId: string;
  readonly recipient: string;
  /** accepted | rejected | smtp | bounced, or pending while the run goes on. */
  readonly outcome: string;
  /** Every clause stands on the trace; false when something could not be explained (an `unexplained` clause says what). */
  readonly explained: boolean;
  /** `bounced at +5d 0:00:00`. */
  readonly headline: string;
  readonly clauses: readonly WhyClause[];
  /** The whole explanation in one paragraph: the headline, then the clauses. */
  readonly text: string;
  /** The delivery actor (`m1@a.example→b.example`), when the recipient had one. */
  readonly delivery?: string;
  /** Where SMTP was ruled out for this recipient's delivery, if it was before its outcome. */
  readonly smtpRuledOut?: SmtpRuledOut;
}

// ── Reading the trace ───────────────────────────────────────────────────

interface Ev {
  readonly seq: number;
  readonly name: string;
  readonly timeMs: number;
  readonly domain?: string;
  readonly data: Data;
}

interface PostFacts {
  readonly deliveryId: string;
  readonly started: Ev;
  readonly recipients: readonly string[];
  ended?: Ev;
  readonly results: Map<string, Ev>;
}

interface AttemptFacts {
  readonly n: number;
  /** machine.started (attempt 1) or the timer.fired that started it. */
  readonly start: Ev;
  judged?: Ev;
  /** The transition out of judging. */
  decision?: Ev;
  /** The timer.set of the retry after it. */
  timer?: Ev;
  readonly posts: PostFacts[];
  /** What discovery said when it found no endpoint to use: discovery.resolved, capabilities.invalid, version.negotiated. */
  readonly discovery: Ev[];
}

interface ActorFacts {
  readonly id: string;
  readonly messageId: string;
  readonly recipients: readonly string[];
  readonly attempts: AttemptFacts[];
  bounced?: Ev;
  /** retryScheduled → bounced. */
  giveUp?: Ev;
}

interface MessageFacts {
  readonly submitted: Ev;
  readonly from: string | null;
  readonly readings: Readonly<Record<string, string>>;
}

// The words below read the events the index kept (`Ev`, its name known from where it was kept) by field name,
// through the shared readers of JSON values.

/** A mailbox as the outcomes table and the checks compare it (G22: domains without case). */
const mailboxKey = normalizeAddress;

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}

const key = (messageId: string, recipient: string): string => `${messageId}\n${mailboxKey(recipient)}`;

/** The last path segment of a problem type URI: `rate_limited`. */
function problemId(type: unknown): string | undefined {
  const s = textOf(type);
  if (s === undefined || s === "") return undefined;
  return s.replace(/\/+$/, "").split("/").pop();
}

/** The kind of a transport failure in a detail or failure string (`…: connection-refused: …`), in words. */
function transportKind(text: string | undefined): string | undefined {
  const m = /(?:^|: )(connection-refused|connection-reset|tls|timeout|dns|aborted)(?::|$)/.exec(text ?? "");
  return m?.[1]?.replace(/-/g, " ");
}

/** The events an explanation reads. */
const READ: ReadonlySet<string> = new Set([
  "message.submitted",
  "machine.started",
  "timer.set",
  "timer.fired",
  "attempt.judged",
  "machine.transition",
  "discovery.resolved",
  "capabilities.invalid",
  "version.negotiated",
  "delivery.created",
  "attempt.started",
  "attempt.ended",
  "recipient.result",
  "delivery.bounced",
  "smtp.handoff",
  "recipient.outcome",
  "dsn.sent",
  "failure.after-acceptance",
]);

/** Everything the explanations need, read in one pass. */
class TraceIndex {
  readonly messages = new Map<string, MessageFacts>();
  readonly actors = new Map<string, ActorFacts>();
  readonly outcomes = new Map<string, Ev>();
  readonly handOffs = new Map<string, Ev>();
  /** dsn.sent per recipient of the message it reports on. */
  readonly dsns = new Map<string, Ev[]>();
  /** dsn.sent by the Message-ID of the DSN it made. */
  readonly dsnOf = new Map<string, Ev>();
  readonly created = new Map<string, Ev>();
  readonly failuresAfterAcceptance = new Map<string, Ev[]>();
  /** recipients as submitted, per message, in order. */
  readonly order: { messageId: string; recipient: string }[] = [];

  constructor(events: Iterable<RecordedEvent>) {
    const seen = new Set<string>();
    for (const raw of events) {
      // Most of a run is the wire (DNS, HTTP, the receiver's side): passed over without a look at its data.
      if (!READ.has(raw.name)) continue;
      const e: Ev = {
        seq: raw.seq,
        name: raw.name,
        timeMs: raw.timeMs,
        ...(raw.domain !== undefined && { domain: raw.domain }),
        data: raw.data ?? {},
      };
      const read = readEvent(e);
      // The message of an event of any of the names read here (those that carry one).
      const messageId = textOf(e.data["messageId"]) ?? "";
      switch (read?.name) {
        case "message.submitted": {
          if (!this.messages.has(messageId)) {
            const readings = read.data.readings ?? {};
            this.messages.set(messageId, {
              submitted: e,
              from: read.data.from ?? null,
              readings: Object.fromEntries(
                Object.entries(readings).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : [])),
              ),
            });
          }
          for (const r of read.data.to ?? []) {
            const k = key(messageId, r);
            if (seen.has(k)) continue;
            seen.add(k);
            this.order.push({ messageId, recipient: mailboxKey(r) });
          }
          break;
        }
        case "machine.started": {
          const id = read.data.deliveryActor ?? "";
          this.actors.set(id, {
            id,
            messageId,
            recipients: (read.data.recipients ?? []).map(mailboxKey),
            attempts: [{ n: 1, start: e, posts: [], discovery: [] }],
          });
          break;
        }
        case "timer.set": {
          const attempt = this.attempt(read.data.deliveryActor, undefined);
          if (attempt !== undefined) attempt.timer = e;
          break;
        }
        case "timer.fired": {
          const actor = this.actors.get(read.data.deliveryActor ?? "");
          if (actor === undefined) break;
          const n = read.data.attempt ?? actor.attempts.length + 1;
          actor.attempts.push({ n, start: e, posts: [], discovery: [] });
          break;
        }
        case "attempt.judged": {
          const attempt = this.attempt(read.data.deliveryActor, read.data.attempt);
          if (attempt !== undefined) attempt.judged = e;
          break;
        }
        case "machine.transition": {
          const id = read.data.deliveryActor ?? "";
          if (read.data.from === "attemptingOverService.judging") {
            const attempt = this.attempt(id, read.data.attempt);
            if (attempt !== undefined) attempt.decision = e;
          } else if (read.data.to === "bounced") {
            const actor = this.actors.get(id);
            if (actor !== undefined) actor.giveUp = e;
          }
          break;
        }
        case "discovery.resolved":
        case "capabilities.invalid":
        case "version.negotiated": {
          const useless =
            read.name === "capabilities.invalid" ||
            (read.name === "discovery.resolved" &&
              (read.data.origin === undefined || read.data.unreachable !== undefined)) ||
            (read.name === "version.negotiated" && read.data.version === undefined);
          if (useless) this.attempt(read.data.deliveryActor, undefined)?.discovery.push(e);
          break;
        }
        case "delivery.created":
          this.created.set(read.data.deliveryId ?? "", e);
          break;
        case "attempt.started": {
          const deliveryId = read.data.deliveryId ?? "";
          this.attempt(actorOfDelivery(deliveryId), read.data.attempt)?.posts.push({
            deliveryId,
            started: e,
            recipients: (read.data.recipients ?? []).map(mailboxKey),
            results: new Map(),
          });
          break;
        }
        case "attempt.ended": {
          const deliveryId = read.data.deliveryId ?? "";
          const post = this.attempt(actorOfDelivery(deliveryId), read.data.attempt)?.posts.find(
            (p) => p.deliveryId === deliveryId,
          );
          if (post !== undefined) post.ended = e;
          break;
        }
        case "recipient.result": {
          const deliveryId = read.data.deliveryId ?? "";
          const post = this.attempt(actorOfDelivery(deliveryId), undefined)?.posts.findLast(
            (p) => p.deliveryId === deliveryId,
          );
          post?.results.set(mailboxKey(read.data.recipient ?? ""), e);
          break;
        }
        case "delivery.bounced": {
          const actor = this.actors.get(`${messageId}→${read.data.domain ?? ""}`);
          if (actor !== undefined) actor.bounced = e;
          break;
        }
        case "smtp.handoff":
          for (const r of read.data.recipients ?? []) this.handOffs.set(key(messageId, r), e);
          break;
        case "recipient.outcome": {
          const k = key(messageId, read.data.recipient ?? "");
          if (!this.outcomes.has(k)) this.outcomes.set(k, e);
          break;
        }
        case "dsn.sent": {
          for (const r of read.data.recipients ?? []) {
            const k = key(messageId, r);
            const known = this.dsns.get(k);
            if (known === undefined) this.dsns.set(k, [e]);
            else known.push(e);
          }
          const dsnId = read.data.dsnMessageId;
          if (dsnId !== undefined) this.dsnOf.set(dsnId, e);
          break;
        }
        case "failure.after-acceptance": {
          const k = mailboxKey(read.data.mailbox ?? "");
          const known = this.failuresAfterAcceptance.get(k);
          if (known === undefined) this.failuresAfterAcceptance.set(k, [e]);
          else known.push(e);
          break;
        }
        default:
          break;
      }
    }
  }

  /** Attempt `n` of the actor (its latest, without a number). */
  attempt(actorId: string | undefined, n: number | undefined): AttemptFacts | undefined {
    const actor = this.actors.get(actorId ?? "");
    if (actor === undefined) return undefined;
    return n === undefined ? actor.attempts.at(-1) : actor.attempts.findLast((a) => a.n === n);
  }
}

// ── Words ───────────────────────────────────────────────────────────────

/** What a recipient's answer at one attempt was, and the events that say it. */
interface Step {
  readonly attempt: AttemptFacts;
  /** `got 429 rate_limited`, `got deferred (mailbox_full)`. */
  readonly answer: string;
  /** The answer event: recipient.result, attempt.ended, or attempt.judged. */
  readonly answerEvent?: Ev;
  readonly post?: PostFacts;
  /** A per-recipient result (not a request-level answer). */
  readonly result?: Ev;
}

/** How a request-level answer to a POST reads: `429 rate_limited`, `no answer (connection refused)`, `not sent: message_too_large`. */
function requestAnswer(ended: Ev, judged: Ev | undefined): string {
  const d = dataOf(ended, "attempt.ended") ?? {};
  const problem = problemId(d.problem);
  if (d.status !== undefined) return `${d.status}${problem !== undefined ? ` ${problem}` : ""}`;
  if (d.failure !== undefined) {
    // The judged detail names the failure (`connection-refused: …`), the ended one its class (`connection`).
    const detail = judged === undefined ? undefined : dataOf(judged, "attempt.judged")?.detail;
    return `no answer (${transportKind(detail) ?? d.failure})`;
  }
  return `not sent: ${problem ?? "?"}`;
}

/**
 * How an attempt that made no POST for the recipient ended, from its
 * attempt.judged and the discovery events of the attempt: as a noun
 * (`the capabilities unusable (no answer: connection refused)`) and as what
 * the attempt did (`could not fetch the capabilities (…)`).
 */
function beforePost(judged: JudgedData, discovery: readonly Ev[]): { readonly noun: string; readonly verb: string } {
  const { status } = judged;
  const detail = judged.detail ?? "";
  switch (judged.stage) {
    case "discovery": {
      if (judged.class === "no-service") {
        const answer = textOf(discovery.find((e) => e.name === "discovery.resolved")?.data["answer"]);
        const noun = `no usable SVCB record${answer !== undefined ? ` (${answer})` : ""}`;
        return { noun, verb: `found ${noun}` };
      }
      if (judged.rule === "ERR-25")
        return {
          noun: "no SVCB record, but a valid discovery pin",
          verb: "found no SVCB record, but a valid discovery pin",
        };
      const failed = /\(([a-z-]+)\)\s*$/.exec(detail)?.[1];
      const why = failed !== undefined ? ` (${failed})` : "";
      return { noun: `the SVCB lookup failed${why}`, verb: `had its SVCB lookup fail${why}` };
    }
    case "capabilities": {
      const failure = discovery
        .map((e) => textOf(e.data["failure"]) ?? textsOf(e.data["unreachable"]).join("; "))
        .find((f) => f !== "");
      const kind = transportKind(failure);
      const why = status !== undefined ? ` (answered ${status})` : kind !== undefined ? ` (no answer: ${kind})` : "";
      return { noun: `the capabilities unusable${why}`, verb: `could not fetch the capabilities${why}` };
    }
    case "version":
      return { noun: `no common version (${detail})`, verb: `found no common version (${detail})` };
    default: {
      if (judged.class === "results") {
        const problem = problemId(judged.problem);
        const noun = `per-recipient results${problem !== undefined ? ` (${problem})` : ""}`;
        return { noun, verb: `got ${noun}` };
      }
      const kind = transportKind(detail);
      const problem = problemId(judged.problem);
      const noun =
        status === undefined && kind !== undefined
          ? `no answer (${kind})`
          : `${status !== undefined ? `${status} ` : ""}${problem ?? judged.class ?? "?"}`;
      return { noun, verb: `got ${noun}` };
    }
  }
}

/** An attempt.judged event's data, read by the catalogue ({@link dataOf}). */
export type JudgedData = ReadData<"attempt.judged">;

/** What {@link judgedAnswer} reads of an attempt's discovery events. */
type DiscoveryEvent = Pick<RecordedEvent, "seq" | "name" | "timeMs" | "data">;

/**
 * How an attempt ended, in words, from its attempt.judged data alone
 * (`429 rate_limited`, `no answer (connection refused)`, `the capabilities
 * unusable (answered 429)`): what the delivery machine's history says of the
 * attempt that decided.
 */
export function judgedAnswer(judged: JudgedData, discovery: readonly DiscoveryEvent[] = []): string {
  return beforePost(
    judged,
    discovery.map((e) => ({ seq: e.seq, name: e.name, timeMs: e.timeMs, data: e.data ?? {} })),
  ).noun;
}

/** A recipient's result in the answer of the attempt judged, as {@link smtpRuling} words it. */
export interface RulingResult {
  readonly recipient: string;
  /** `accepted`, `deferred`, `rejected`. */
  readonly status: string;
  /** Its problem's id: `mailbox_full`. */
  readonly problem?: string | undefined;
}

/**
 * Whether the attempt an `attempt.judged` event judged ruled SMTP fallback out for its delivery (ERR-23),
 * and by what: the flag the delivery machine keeps (STATE-3's "every attempt so far ended in a
 * fallback-eligible failure") turned false there, or, in a trace without the flag, the attempt's own answer
 * was not fallback-eligible (no usable service decides nothing). The one reading of it behind the Why?
 * explanation, the timeline's lanes and the statechart's history; a delivery's is the first attempt that
 * rules it out. `results` are the attempt's per-recipient results, named in the words when the answer was
 * per-recipient; `discovery` as {@link judgedAnswer} takes it.
 */
export function smtpRuling(
  judged: Pick<RecordedEvent, "seq" | "name" | "timeMs" | "data">,
  attempt: number,
  startedAtMs: number,
  results: readonly RulingResult[] = [],
  discovery: readonly DiscoveryEvent[] = [],
): SmtpRuledOut | undefined {
  const d = dataOf(judged, "attempt.judged") ?? {};
  const all = d.allAttemptsFallbackEligible;
  const rulesOut = all !== undefined ? !all : d.fallbackEligible !== true && d.class !== "no-service";
  if (!rulesOut) return undefined;
  const { status } = d;
  const perRecipient = d.class === "results";
  const answer =
    perRecipient && results.length > 0
      ? `per-recipient results: ${
          results
            .filter((r) => r.status !== "accepted")
            .map((r) => `${r.recipient} ${r.status}${r.problem ? ` (${r.problem})` : ""}`)
            .join(", ") || "accepted"
        }`
      : judgedAnswer(d, discovery);
  const rule = perRecipient || (status !== undefined && status >= 400 && status < 500) ? "ERR-23" : d.rule;
  return {
    attempt,
    atMs: startedAtMs,
    judgedAtMs: judged.timeMs,
    answer,
    ...(rule !== undefined && { rule }),
    seq: judged.seq,
  };
}

/** A per-recipient result: `accepted`, `deferred (mailbox_full, retry_after 540 s)`, `rejected (recipient_not_found)`. */
function resultAnswer(result: Ev): string {
  const d = dataOf(result, "recipient.result") ?? {};
  const extras = [
    problemId(d.problem),
    d.retryAfterS !== undefined ? `retry_after ${d.retryAfterS} s` : undefined,
  ].filter((x): x is string => x !== undefined);
  return `${d.status}${extras.length > 0 ? ` (${extras.join(", ")})` : ""}`;
}

/** The recipient's answer at one attempt. */
function stepOf(attempt: AttemptFacts, recipient: string): Step {
  const post = attempt.posts.find((p) => p.recipients.includes(recipient));
  if (post !== undefined) {
    const result = post.results.get(recipient);
    if (result !== undefined)
      return { attempt, answer: `got ${resultAnswer(result)}`, answerEvent: result, post, result };
    if (post.ended !== undefined) {
      const answer = requestAnswer(post.ended, attempt.judged);
      return {
        attempt,
        answer: answer.startsWith("not sent") ? `was ${answer}` : `got ${answer}`,
        answerEvent: post.ended,
        post,
      };
    }
    return { attempt, answer: "was sent, with no answer in the trace", post };
  }
  if (attempt.judged !== undefined)
    return {
      attempt,
      answer: beforePost(dataOf(attempt.judged, "attempt.judged") ?? {}, attempt.discovery).verb,
      answerEvent: attempt.judged,
    };
  return { attempt, answer: "is under way" };
}

function attemptsText(first: Step, last: Step, startMs: number): string {
  const at = (s: Step) => formatOffset(s.attempt.start.timeMs, startMs);
  return first === last
    ? `attempt ${first.attempt.n} at ${at(first)}`
    : `attempts ${first.attempt.n}–${last.attempt.n} (${at(first)} … ${at(last)})`;
}

// ── Building clauses ────────────────────────────────────────────────────

class ClauseBuilder {
  private readonly evidence: Citation[] = [];
  private readonly rules: string[] = [];
  private readonly readings: string[] = [];

  private readonly kind: WhyClauseKind;
  private readonly startMs: number;

  constructor(kind: WhyClauseKind, startMs: number) {
    this.kind = kind;
    this.startMs = startMs;
  }

  /** Cites `e`; with `rule`, the clause names that rule and `e` cites it (else the rule is not named). */
  cite(e: Ev | undefined, claims: { rule?: string | undefined; attempt?: boolean } = {}): boolean {
    if (e === undefined) return false;
    const rule = claims.rule !== undefined && rulesCited(e.data).includes(claims.rule) ? claims.rule : undefined;
    const attempt = claims.attempt === true ? numberOf(e.data["attempt"]) : undefined;
    this.evidence.push({
      seq: e.seq,
      name: e.name,
      timeMs: e.timeMs,
      ...(rule !== undefined && { rule }),
      ...(attempt !== undefined && { attempt }),
    });
    if (rule !== undefined && !this.rules.includes(rule)) this.rules.push(rule);
    return true;
  }

  /** ` (ERR-23)` when one of the cited events cites `rule`, else nothing: a clause names only rules its events cite. */
  rule(rule: string): string {
    return this.rules.includes(rule) ? ` (${rule})` : "";
  }

  reading(id: string, readings: Readonly<Record<string, string>>): string {
    const value = readings[id];
    if (value === undefined) return "";
    const text = `${id}=${value}`;
    if (!this.readings.includes(text)) this.readings.push(text);
    return text;
  }

  /** The clause; its time is `at`'s (one of the cited events), else the first cited event's. */
  build(text: string, attempts?: readonly [number, number], at?: Ev): WhyClause {
    const seen = new Set<string>();
    const sorted = [...this.evidence]
      .filter((c) => {
        const k = `${c.seq} ${c.rule ?? ""} ${c.attempt ?? ""}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      })
      .sort((a, b) => a.seq - b.seq);
    const atMs = at?.timeMs ?? sorted[0]?.timeMs ?? this.startMs;
    return {
      kind: this.kind,
      atMs,
      at: formatOffset(atMs, this.startMs),
      text,
      rules: this.rules,
      readings: this.readings,
      ...(attempts !== undefined && { attempts }),
      evidence: sorted,
    };
  }
}

/** `, not before its Retry-After (RETRY-7)` when the lower bound decided the wait for the next attempt. */
function lowerBoundWords(b: ClauseBuilder, timer: Ev | undefined): string {
  if (timer?.data["decidedBy"] !== "retry-after") return "";
  b.cite(timer, { rule: "RETRY-7" });
  return `, not before its ${timer.data["lowerBoundFrom"] === "retry_after" ? "retry_after" : "Retry-After"}${b.rule("RETRY-7")}`;
}

/**
 * Words for the judging transition after an attempt that did not end the recipient's story, and for what
 * decided the wait for the next one.
 */
function decisionWords(b: ClauseBuilder, step: Step, ruledOut: SmtpRuledOut | undefined, ruledHere: boolean): string {
  const decision = step.attempt.decision;
  const name = textOf(decision?.data["transition"]);
  const words = judgedWords(b, step, name, ruledOut, ruledHere);
  return name === undefined || name.startsWith("giveUp") ? words : `${words}${lowerBoundWords(b, step.attempt.timer)}`;
}

function judgedWords(
  b: ClauseBuilder,
  step: Step,
  name: string | undefined,
  ruledOut: SmtpRuledOut | undefined,
  ruledHere: boolean,
): string {
  const decision = step.attempt.decision;
  switch (name) {
    case "retryWithinFallbackWindow":
      b.cite(decision, { rule: "STATE-2", attempt: true });
      return `, fallback-eligible, within the fallback window: retried${b.rule("STATE-2")}`;
    case "retryNotFallbackEligible": {
      b.cite(decision, { rule: "ERR-23", attempt: true });
      b.cite(decision, { rule: "STATE-5" });
      // The recipient's own POST may have failed alike where another POST of the attempt (G12) was answered.
      const own = step.answerEvent?.name === "attempt.ended" && step.answerEvent.data["fallbackEligible"] === true;
      const why = own ? ", fallback-eligible, but the attempt as a whole was not" : ", which is not fallback-eligible";
      return `${why}${b.rule("ERR-23")}${ruledHere ? ", so SMTP was ruled out for this message" : ""}: retried over the service${b.rule("STATE-5")}`;
    }
    case "retrySmtpRuledOut":
      b.cite(decision, { rule: "ERR-24", attempt: true });
      return `, fallback-eligible, but SMTP was ruled out at attempt ${ruledOut?.attempt ?? "?"}: retried over the service until the give-up${b.rule("ERR-24")}`;
    case "retryDeferredRecipients":
      b.cite(decision, { rule: "ERR-23", attempt: true });
      b.cite(decision, { rule: "STATE-6" });
      return `, which never falls back to SMTP${b.rule("ERR-23")}${ruledHere ? ", so SMTP was ruled out for this message" : ""}: retried as a new delivery${b.rule("STATE-6")}`;
    case undefined:
      return "";
    default:
      b.cite(decision, { attempt: true });
      return "";
  }
}

/** The fallback window and the give-up time, as attempt 1's attempt.judged gives them (and that event). */
function windowOf(
  actor: ActorFacts,
): { judged: Ev; endMs?: number; windowS?: number; giveUpAtMs?: number } | undefined {
  const judged = actor.attempts[0]?.judged;
  if (judged === undefined) return undefined;
  const { fallbackWindowEndMs: endMs, fallbackWindowS: windowS, giveUpAtMs } = dataOf(judged, "attempt.judged") ?? {};
  return {
    judged,
    ...(endMs !== undefined && { endMs }),
    ...(windowS !== undefined && { windowS }),
    ...(giveUpAtMs !== undefined && { giveUpAtMs }),
  };
}

/** `2 h`, `90 min`, `5 days`. */
function spanText(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} day${ms === 86_400_000 ? "" : "s"}`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/** The first of the delivery's attempts that ruled SMTP out ({@link smtpRuling}). */
function actorRuledOut(actor: ActorFacts): SmtpRuledOut | undefined {
  for (const a of actor.attempts) {
    if (a.judged === undefined) continue;
    const results = a.posts.flatMap((p) =>
      [...p.results.values()].map((e) => {
        const r = dataOf(e, "recipient.result") ?? {};
        return {
          recipient: (r.recipient ?? "?").toLowerCase(),
          status: r.status ?? "?",
          problem: problemId(r.problem),
        };
      }),
    );
    const ruling = smtpRuling(a.judged, a.n, a.start.timeMs, results, a.discovery);
    if (ruling !== undefined) return ruling;
  }
  return undefined;
}

/** The gap readings among `gaps` that the message was sent under, as `G46=alive`, recorded on the clause. */
function readingsNamed(b: ClauseBuilder, gaps: readonly string[], readings: Readonly<Record<string, string>>): string {
  const named = [...new Set(gaps)].map((g) => b.reading(g, readings)).filter((x) => x !== "");
  return named.length > 0 ? ` (reading ${named.join(", ")})` : "";
}

/** The gaps an event cites (`gap`, `gaps`). */
function gapsOf(e: Ev | undefined): string[] {
  return e === undefined ? [] : [...textsOf(e.data["gap"]), ...textsOf(e.data["gaps"])];
}

/** The clauses of the attempts `told`, alike attempts told once; the attempt that ruled SMTP out by itself. */
function attemptClauses(
  told: readonly Step[],
  ruledOut: SmtpRuledOut | undefined,
  readings: Readonly<Record<string, string>>,
  startMs: number,
): WhyClause[] {
  const clauses: WhyClause[] = [];
  for (let i = 0; i < told.length;) {
    const first = told[i] as Step;
    const decisionOf = (s: Step) =>
      `${textOf(s.attempt.decision?.data["transition"]) ?? ""} ${textOf(s.attempt.timer?.data["decidedBy"]) === "retry-after" ? "lower bound" : ""}`;
    let j = i;
    // Alike attempts are told once; the attempt that ruled SMTP out is told by itself.
    const alike = (s: Step | undefined): boolean =>
      s !== undefined &&
      s.answer === first.answer &&
      decisionOf(s) === decisionOf(first) &&
      s.attempt.n !== ruledOut?.attempt &&
      first.attempt.n !== ruledOut?.attempt;
    while (alike(told[j + 1])) j++;
    const group = told.slice(i, j + 1);
    const end = group.at(-1) as Step;
    const b = new ClauseBuilder("attempts", startMs);
    for (const s of group) {
      b.cite(s.attempt.start, { attempt: true });
      b.cite(s.answerEvent, { attempt: true });
    }
    const ruledHere = ruledOut !== undefined && first.attempt.n === ruledOut.attempt;
    // Its attempt.judged says so: the first whose "every attempt fallback-eligible" is false.
    if (ruledHere) b.cite(first.attempt.judged, { attempt: true });
    let decided = "";
    for (const [n, s] of group.entries()) {
      const words = decisionWords(b, s, ruledOut, ruledHere);
      if (n === 0) decided = words;
    }
    const why = readingsNamed(b, gapsOf(first.answerEvent), readings);
    clauses.push(
      b.build(`${attemptsText(first, end, startMs)} ${first.answer}${why}${decided}`, [first.attempt.n, end.attempt.n]),
    );
    i = j + 1;
  }
  return clauses;
}

/** The clause of a recipient handed to SMTP by the attempt `ending`: after the fallback window, no common version, or no service. */
function smtpClause(
  actor: ActorFacts,
  ending: Step,
  handOff: Ev,
  outcome: Ev,
  relay: string,
  readings: Readonly<Record<string, string>>,
  startMs: number,
): WhyClause {
  const at = (ms: number) => formatOffset(ms, startMs);
  const b = new ClauseBuilder("smtp", startMs);
  const reason = dataOf(handOff, "smtp.handoff")?.reason;
  const n = ending.attempt.n;
  const when = `attempt ${n} at ${at(ending.attempt.start.timeMs)}`;
  if (reason === "fallback") {
    const window = windowOf(actor);
    b.cite(window?.judged, { attempt: true });
    b.cite(ending.attempt.start, { attempt: true });
    b.cite(ending.attempt.judged, { attempt: true });
    b.cite(ending.attempt.decision, { rule: "STATE-3", attempt: true });
    b.cite(handOff, { rule: "STATE-3" });
    b.cite(outcome);
    const reading = b.reading("G16", readings);
    const span = window?.windowS !== undefined ? `of ${spanText(window.windowS * 1000)} ` : "";
    return b.build(
      `every attempt was fallback-eligible; the fallback window ${span}(${reading !== "" ? `reading ${reading}` : "G16"}) ended at ${window?.endMs !== undefined ? at(window.endMs) : "?"}, and ${when}, the first at or after its end, ${ending.answer}: handed to SMTP${b.rule("STATE-3")}${relay}`,
      [n, n],
      ending.attempt.start,
    );
  } else if (reason === "no-common-version") {
    b.cite(ending.attempt.start, { attempt: true });
    b.cite(ending.answerEvent, { attempt: true });
    b.cite(ending.attempt.judged, { attempt: true });
    b.cite(ending.attempt.decision, { rule: "STATE-4", attempt: true });
    b.cite(handOff);
    b.cite(outcome);
    const found =
      ending.attempt.judged !== undefined
        ? `found ${beforePost(dataOf(ending.attempt.judged, "attempt.judged") ?? {}, ending.attempt.discovery).noun.replace(/^(?!no common version)/, "no common version: ")}`
        : ending.answer;
    return b.build(`${when} ${found}: handed to SMTP at once${b.rule("STATE-4")}${relay}`, [n, n]);
  } else {
    // no-service: no SVCB record, and nothing so far forbade leaving the service.
    b.cite(ending.attempt.start, { attempt: true });
    b.cite(
      ending.attempt.discovery.find((e) => e.name === "discovery.resolved"),
      { rule: "SVC-11" },
    );
    b.cite(ending.attempt.judged, { attempt: true });
    b.cite(handOff, { rule: "SVC-11" });
    b.cite(outcome);
    const why = readingsNamed(b, gapsOf(ending.attempt.judged), readings);
    return b.build(`${when} ${ending.answer}${why}: plain SMTP${b.rule("SVC-11")}${relay}`, [n, n]);
  }
}

/** The clauses after a recipient's outcome: the DSN its envelope sender got, or why none. */
function dsnClauses(
  index: TraceIndex,
  told: {
    readonly messageId: string;
    readonly recipient: string;
    readonly message: MessageFacts;
    readonly outcomeName: string;
  },
  startMs: number,
  clauses: WhyClause[],
  unexplained: (what: string) => void,
): void {
  const { messageId, recipient: r, message, outcomeName } = told;
  const at = (ms: number) => formatOffset(ms, startMs);
  const dsns = index.dsns.get(key(messageId, r)) ?? [];
  const failed = outcomeName === "rejected" || outcomeName === "bounced";
  if (outcomeName === "accepted") {
    for (const dsn of dsns.filter((d) => d.data["reason"] === "failure-after-acceptance")) {
      const b = new ClauseBuilder("failure-after-acceptance", startMs);
      const failure = (index.failuresAfterAcceptance.get(r) ?? []).findLast((f) => f.seq < dsn.seq);
      b.cite(failure);
      b.cite(dsn, { rule: "STATE-8" });
      const arrival = arrivalOf(index, dsn, b, at);
      clauses.push(
        b.build(
          `at ${at((failure ?? dsn).timeMs)} the mailbox failed after acceptance${failure !== undefined ? ` (${String(failure.data["status"])})` : ""}, and ${dsn.domain ?? "the receiver"} sent ${String(dsn.data["to"])} a DSN${b.rule("STATE-8")}${arrival}`,
        ),
      );
    }
  } else if (failed && message.from === null) {
    const b = new ClauseBuilder("no-dsn", startMs);
    b.cite(message.submitted);
    clauses.push(
      b.build(
        `no DSN: the message's envelope sender is null (it is a DSN itself, submitted at ${at(message.submitted.timeMs)}), and no DSN is sent about a DSN`,
      ),
    );
  } else if (failed) {
    const sent = dsns.filter((d) => d.data["reason"] !== "failure-after-acceptance");
    if (sent.length === 0) unexplained(`whether ${String(message.from)} was told (no DSN about ${r})`);
    for (const dsn of sent) {
      const b = new ClauseBuilder("dsn", startMs);
      const rule = dataOf(dsn, "dsn.sent")?.rule;
      b.cite(dsn, { rule });
      const arrival = arrivalOf(index, dsn, b, at);
      clauses.push(
        b.build(
          `at ${at(dsn.timeMs)} the sender sent ${String(dsn.data["to"])} a DSN${rule !== undefined ? b.rule(rule) : ""}${arrival}`,
        ),
      );
    }
  }
}

/** Explains one recipient of one message. */
function explainOne(index: TraceIndex, messageId: string, recipient: string, startMs: number): Why {
  const r = mailboxKey(recipient);
  const at = (ms: number) => formatOffset(ms, startMs);
  const clauses: WhyClause[] = [];
  const message = index.messages.get(messageId);
  const readings = message?.readings ?? {};
  const outcome = index.outcomes.get(key(messageId, r));
  const outcomeData = outcome === undefined ? undefined : dataOf(outcome, "recipient.outcome");
  const outcomeName = outcomeData?.outcome ?? "pending";
  const actorId = `${messageId}→${domainOf(r)}`;
  const actor = index.actors.get(actorId);
  const inActor = actor?.recipients.includes(r) === true;
  const unexplained = (what: string, e?: Ev): void => {
    const b = new ClauseBuilder("unexplained", startMs);
    b.cite(e ?? outcome ?? message?.submitted);
    clauses.push(b.build(`the trace does not say ${what}`));
  };

  // A DSN: what it reports on.
  const dsnOf = index.dsnOf.get(messageId);
  if (dsnOf !== undefined) {
    const b = new ClauseBuilder("dsn-of", startMs);
    const rule = textOf(dsnOf.data["rule"]);
    b.cite(dsnOf, { rule });
    clauses.push(
      b.build(
        `at ${at(dsnOf.timeMs)} ${dsnOf.domain ?? "a sender"} made this DSN about ${textsOf(dsnOf.data["recipients"]).join(", ")} of ${String(dsnOf.data["messageId"])} (${String(dsnOf.data["reason"])})${rule !== undefined ? b.rule(rule) : ""}`,
      ),
    );
  }

  let ruledOut: SmtpRuledOut | undefined;
  if (message === undefined) {
    unexplained("when the message was submitted (no message.submitted)");
  } else if (!inActor || actor === undefined) {
    // Never handed to a delivery: the sender turned the address down at submission.
    if (outcome !== undefined && outcomeName === "rejected") {
      const b = new ClauseBuilder("rejected-before-sending", startMs);
      const rule = outcomeData?.rule;
      b.cite(message.submitted);
      b.cite(outcome, { rule });
      clauses.push(
        b.build(
          `at ${at(outcome.timeMs)} the sender rejected the address before any attempt: it is no valid mailbox${rule !== undefined ? b.rule(rule) : ""}`,
        ),
      );
    } else {
      unexplained(`why ${r} had no delivery`);
    }
  } else {
    // The attempts made while the recipient was pending: up to the one its outcome came in.
    const steps = (
      outcome === undefined ? actor.attempts : actor.attempts.filter((a) => a.start.seq < outcome.seq)
    ).map((a) => stepOf(a, r));
    const last = steps.at(-1);
    // The attempt that ended the story is told by the outcome's clause; a bounce or a pending recipient has none.
    const ending = outcomeName === "bounced" || outcomeName === "pending" ? undefined : last;
    const ruling = actorRuledOut(actor);
    if (
      ruling !== undefined &&
      ruling.attempt < (ending?.attempt.n ?? Infinity) &&
      ruling.attempt <= (last?.attempt.n ?? 0)
    )
      ruledOut = ruling;
    const told = ending === undefined ? steps : steps.slice(0, -1);
    pushAll(clauses, attemptClauses(told, ruledOut, readings, startMs));

    const handOff = index.handOffs.get(key(messageId, r));
    const relay =
      handOff === undefined ? "" : `; the SMTP relay ${handOff.data["accepted"] === true ? "accepted" : "refused"} it`;
    if (outcome === undefined) {
      const b = new ClauseBuilder("pending", startMs);
      b.cite(last?.attempt.start, { attempt: true });
      clauses.push(
        b.build(
          last === undefined
            ? "no outcome yet, and no attempt yet"
            : `no outcome yet: attempt ${last.attempt.n} at ${at(last.attempt.start.timeMs)} is the latest`,
        ),
      );
    } else if ((outcomeName === "accepted" || outcomeName === "rejected") && ending !== undefined) {
      const b = new ClauseBuilder(outcomeName, startMs);
      const rule = outcomeData?.rule;
      b.cite(ending.attempt.start, { attempt: true });
      b.cite(ending.post?.started, { attempt: true });
      b.cite(ending.answerEvent, { attempt: true });
      b.cite(outcome, { rule });
      const created = index.created.get(ending.post?.deliveryId ?? "");
      const anew = created?.data["rule"] === "STATE-6" && b.cite(created, { rule: "STATE-6" });
      const where = `attempt ${ending.attempt.n} at ${at(ending.attempt.start.timeMs)}${anew ? `, in a new delivery${b.rule("STATE-6")},` : ""}`;
      // An answer that took its time (a large upload, a slow receiver) is timed too.
      const answeredAt =
        ending.answerEvent !== undefined && ending.answerEvent.timeMs !== ending.attempt.start.timeMs
          ? ` at ${at(ending.answerEvent.timeMs)}`
          : "";
      const ruleText = rule !== undefined ? b.rule(rule) : "";
      const problem = problemId(ending.result?.data["problem"]);
      const where1 = where.replace(/,$/, "");
      const text =
        outcomeName === "accepted"
          ? `${where1}: the receiver accepted it${answeredAt}${ruleText}`
          : ending.result !== undefined
            ? `${where1}: the receiver rejected it${answeredAt}${problem !== undefined ? ` (${problem})` : ""}, which is final: not retried, and never SMTP${ruleText}`
            : `${where} ${ending.answer}${answeredAt}, a request-level answer for the whole delivery, which is final: not retried, and never SMTP${ruleText}`;
      const why = readingsNamed(b, [...gapsOf(outcome), ...gapsOf(ending.answerEvent)], readings);
      clauses.push(b.build(`${text}${why}`, [ending.attempt.n, ending.attempt.n]));
    } else if (outcomeName === "smtp" && ending !== undefined && handOff !== undefined) {
      clauses.push(smtpClause(actor, ending, handOff, outcome, relay, readings, startMs));
    } else if (outcomeName === "bounced") {
      const b = new ClauseBuilder("give-up", startMs);
      const window = windowOf(actor);
      b.cite(actor.giveUp ?? last?.attempt.decision, { rule: "STATE-7" });
      b.cite(actor.bounced, { rule: "STATE-7" });
      b.cite(outcome, { rule: "STATE-7" });
      const count = (actor.bounced && dataOf(actor.bounced, "delivery.bounced")?.attempts) ?? last?.attempt.n;
      const first = actor.attempts[0];
      const since =
        window?.giveUpAtMs !== undefined && first !== undefined
          ? `, ${spanText(window.giveUpAtMs - first.start.timeMs)} after the first attempt`
          : "";
      // The retry planned after the last attempt, which the give-up came before.
      const timer = last?.attempt.timer;
      const set = timer && dataOf(timer, "timer.set");
      const planned = set?.atMs;
      const missed =
        timer !== undefined && planned !== undefined && planned >= outcome.timeMs && b.cite(timer)
          ? `; attempt ${set?.attempt ?? (last?.attempt.n ?? 0) + 1} would have come at ${at(planned)}`
          : "";
      clauses.push(
        b.build(
          `at ${at(outcome.timeMs)} the sender gave up${since}, after ${count ?? "?"} attempt${count === 1 ? "" : "s"}, and bounced it${b.rule("STATE-7")}${missed}`,
          undefined,
          outcome,
        ),
      );
      if (ruledOut === undefined) unexplained(`why ${r} never went to SMTP before the give-up`);
    } else {
      unexplained(`how ${r} came to be ${outcomeName}`);
    }
  }

  // After the outcome: the DSN the envelope sender got, or why none.
  if (message !== undefined && outcome !== undefined)
    dsnClauses(index, { messageId, recipient: r, message, outcomeName }, startMs, clauses, unexplained);

  const handOff = index.handOffs.get(key(messageId, r));
  const smtpReason =
    outcomeName === "smtp" && handOff !== undefined ? dataOf(handOff, "smtp.handoff")?.reason : undefined;
  const headline =
    outcome === undefined
      ? "no outcome yet"
      : `${outcomeName === "smtp" ? `handed to SMTP${smtpReason !== undefined ? ` (${smtpReason})` : ""}` : outcomeName} at ${at(outcome.timeMs)}`;
  return {
    messageId,
    recipient: r,
    outcome: outcomeName,
    explained: clauses.every((c) => c.kind !== "unexplained"),
    headline,
    clauses,
    text: `${headline} — ${clauses.map((c) => c.text).join("; ")}.`,
    ...(actor !== undefined && inActor && { delivery: actorId }),
    ...(ruledOut !== undefined && { smtpRuledOut: ruledOut }),
  };
}

/** `, accepted at +5d…` / `, handed to SMTP at …` / `, not delivered yet`: where a DSN went, citing its outcome. */
function arrivalOf(index: TraceIndex, dsn: Ev, b: ClauseBuilder, at: (ms: number) => string): string {
  const { to, dsnMessageId: dsnId } = dataOf(dsn, "dsn.sent") ?? {};
  const arrival = to === undefined || dsnId === undefined ? undefined : index.outcomes.get(key(dsnId, to));
  if (arrival === undefined) return ", not delivered yet";
  b.cite(arrival);
  const outcome = String(arrival.data["outcome"]);
  return `, ${outcome === "smtp" ? "handed to SMTP" : outcome} at ${at(arrival.timeMs)}`;
}

/**
 * The explanation of every recipient of every message submitted in `events`
 * (DSNs included), in the order the recipients were submitted. `startMs` is
 * the run's start, for the offsets.
 */
export function explainOutcomes(events: Iterable<RecordedEvent>, startMs: number): Why[] {
  const index = new TraceIndex(events);
  return index.order.map(({ messageId, recipient }) => explainOne(index, messageId, recipient, startMs));
}

/** The explanation of one recipient of one message (see {@link explainOutcomes}). */
export function explainRecipient(
  events: Iterable<RecordedEvent>,
  startMs: number,
  messageId: string,
  recipient: string,
): Why {
  return explainOne(new TraceIndex(events), messageId, recipient, startMs);
}

/** `events 3, 19, 22, 23`, or the first five and how many in all: a clause's evidence for a line of text. */
export function evidenceText(clause: WhyClause): string {
  const seqs = [...new Set(clause.evidence.map((e) => e.seq))];
  return seqs.length <= 6
    ? `events ${seqs.join(", ")}`
    : `events ${seqs.slice(0, 5).join(", ")} … ${seqs.length} in all`;
}
