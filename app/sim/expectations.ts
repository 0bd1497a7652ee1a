/**
 * A scenario's expectations, judged against the trace of its run
 * (docs/scenario-format.md "Expectations"): per recipient of a message, the
 * final outcome with its time bounds, the rule and the SMTP reason, the
 * number of attempts and POSTs, and the outcomes that must never happen.
 *
 * Times count from the message's submission. `dsn-received` means a DSN about
 * the recipient (a bounce or rejection by the sender, G14/G31/EVT-3, or a
 * failure after acceptance, G17) reached the envelope sender: its delivery to
 * that mailbox was accepted, or handed to SMTP.
 */
import { recordedOffset } from "../trace/offset.ts";
import type { CheckResult } from "../trace/schema.ts";
import { normalizeAddress } from "../protocol/mailbox.ts";
import { actorOfDelivery } from "../trace/deliveryIds.ts";
import type { CheckedEvent } from "./invariants.ts";
import { durationMs, type ExpectedOutcome, type ScenarioExpectation } from "./scenario.ts";
import { pushAll } from "../protocol/lists.ts";
import { textOf, textsOf } from "../trace/values.ts";
import { eventsNamed } from "../trace/store.ts";

/** A scenario message as the expectations need it. */
export interface ExpectedMessage {
  /** The scenario's id (`m1`). */
  readonly id: string;
  /** The id in the trace. */
  readonly messageId: string;
  readonly atMs: number;
  readonly to: readonly string[];
}

/** What the trace says about one recipient of one message. */
export interface RecipientFacts {
  readonly messageId: string;
  readonly recipient: string;
  /** The final outcome, if any. */
  readonly outcome?: {
    readonly outcome: string;
    readonly timeMs: number;
    readonly rule?: string;
    /** The problem type URI the outcome was decided by, if any. */
    readonly problem?: string;
  };
  /** The SMTP hand-off that carried the recipient, if any. */
  readonly handOff?: { readonly reason: string; readonly timeMs: number; readonly accepted: boolean };
  /** When a DSN about the recipient reached the envelope sender, if one did. */
  readonly dsnReceivedAtMs?: number;
  /**
   * Attempts made for the recipient: those of the delivery to its domain that started while it had no outcome
   * yet — whose POST named it, or would have had the attempt reached one (0 when none started).
   */
  readonly attempts: number;
  /** POSTs that carried the recipient. */
  readonly posts: number;
}

/** The seqs of the events behind a recipient's {@link RecipientFacts}. */
export interface FactsEvidence {
  /** `message.submitted`. */
  readonly submitted?: number;
  /** The `recipient.outcome`. */
  readonly outcome?: number;
  /** The `smtp.handoff`. */
  readonly handOff?: number;
  /** Each `dsn.sent` about the recipient, and the outcome of the DSN that reached the envelope sender. */
  readonly dsn: readonly number[];
  /** How the recipient's attempts started (see {@link RecipientFacts.attempts}): the submission, then each `timer.fired`. */
  readonly attempts: readonly number[];
  /** Each `attempt.started` that sent the recipient. */
  readonly posts: readonly number[];
}

/** An index over the trace for looking up {@link RecipientFacts}. */
export interface TraceFacts {
  facts(messageId: string, recipient: string): RecipientFacts;
  /** The events behind {@link facts}, by seq (events without a seq are left out). */
  evidence(messageId: string, recipient: string): FactsEvidence;
}

/** The events {@link indexTrace} reads: every case of its switch. */
const INDEXED_EVENTS: ReadonlySet<string> = new Set([
  "message.submitted",
  "recipient.outcome",
  "smtp.handoff",
  "dsn.sent",
  "machine.started",
  "timer.fired",
  "attempt.started",
]);

/** Indexes `events` once for any number of lookups. */
export function indexTrace(events: Iterable<CheckedEvent>): TraceFacts {
  const key = (messageId: string, recipient: string): string => `${messageId}\n${normalizeAddress(recipient)}`;
  const outcomes = new Map<
    string,
    { outcome: string; timeMs: number; rule?: string; problem?: string; seq: number | undefined }
  >();
  const handOffs = new Map<string, { reason: string; timeMs: number; accepted: boolean; seq: number | undefined }>();
  const dsns = new Map<string, { dsnMessageId: string; to: string; seq: number | undefined }[]>();
  const started = new Set<string>();
  /** The recipients each delivery actor took (machine.started), where the trace says. */
  const actorRecipients = new Map<string, Set<string>>();
  /** The messages whose trace names their delivery actors (a trace written before machine.started does not). */
  const withActors = new Set<string>();
  /** Per actor, the seqs of the events that started its attempts: the submission, then each timer.fired. */
  const attemptStarts = new Map<string, (number | undefined)[]>();
  const submittedAt = new Map<string, number | undefined>();
  const posts = new Map<string, (number | undefined)[]>();
  for (const e of eventsNamed(events, INDEXED_EVENTS)) {
    const d = e.data ?? {};
    const messageId = textOf(d["messageId"]) ?? "";
    switch (e.name) {
      case "message.submitted":
        if (!submittedAt.has(messageId)) submittedAt.set(messageId, e.seq);
        for (const to of textsOf(d["to"])) {
          const actor = `${messageId}→${domainOf(to)}`;
          started.add(actor);
          if (!attemptStarts.has(actor)) attemptStarts.set(actor, [e.seq]);
        }
        break;
      case "recipient.outcome": {
        const k = key(messageId, String(d["recipient"] ?? ""));
        if (!outcomes.has(k)) {
          const rule = textOf(d["rule"]);
          const problem = textOf(d["problem"]);
          outcomes.set(k, {
            outcome: String(d["outcome"]),
            timeMs: e.timeMs,
            ...(rule !== undefined && { rule }),
            ...(problem !== undefined && { problem }),
            seq: e.seq,
          });
        }
        break;
      }
      case "smtp.handoff":
        for (const r of textsOf(d["recipients"])) {
          handOffs.set(key(messageId, r), {
            reason: String(d["reason"]),
            timeMs: e.timeMs,
            accepted: d["accepted"] === true,
            seq: e.seq,
          });
        }
        break;
      case "dsn.sent":
        for (const r of textsOf(d["recipients"])) {
          const k = key(messageId, r);
          const dsn = { dsnMessageId: String(d["dsnMessageId"]), to: String(d["to"]), seq: e.seq };
          const known = dsns.get(k);
          if (known === undefined) dsns.set(k, [dsn]);
          else known.push(dsn);
        }
        break;
      case "machine.started":
        actorRecipients.set(String(d["deliveryActor"] ?? ""), new Set(textsOf(d["recipients"]).map(normalizeAddress)));
        withActors.add(messageId);
        break;
      case "timer.fired":
        attemptStarts.get(String(d["deliveryActor"] ?? ""))?.push(e.seq);
        break;
      case "attempt.started": {
        if (d["sent"] === false) break;
        const actor = actorOfDelivery(String(d["deliveryId"] ?? ""));
        for (const r of textsOf(d["recipients"])) {
          const k = `${actor}\n${normalizeAddress(r)}`;
          const sent = posts.get(k);
          if (sent === undefined) posts.set(k, [e.seq]);
          else sent.push(e.seq);
        }
        break;
      }
      default:
        break;
    }
  }
  /** The DSNs about a recipient that reached the envelope sender: their dsn.sent and the arrival. */
  const arrivedDsns = (k: string) =>
    (dsns.get(k) ?? []).flatMap((dsn) => {
      const arrival = outcomes.get(key(dsn.dsnMessageId, dsn.to));
      return arrival !== undefined && (arrival.outcome === "accepted" || arrival.outcome === "smtp")
        ? [{ dsn, arrival }]
        : [];
    });
  const seqs = (list: readonly (number | undefined)[]): number[] => list.filter((s) => s !== undefined);
  /**
   * The starts of the recipient's attempts: the actor's, up to its outcome (an attempt that started after it was
   * not made for it); none when the actor never took it (an address the sender rejected at submission).
   */
  const recipientAttempts = (messageId: string, recipient: string): (number | undefined)[] => {
    const actor = `${messageId}→${domainOf(recipient)}`;
    if (withActors.has(messageId) && actorRecipients.get(actor)?.has(normalizeAddress(recipient)) !== true) return [];
    const all = attemptStarts.get(actor) ?? [];
    const outcome = outcomes.get(key(messageId, recipient))?.seq;
    return outcome === undefined ? all : all.filter((s) => s === undefined || s < outcome);
  };
  return {
    evidence(messageId, recipient) {
      const k = key(messageId, recipient);
      const actor = `${messageId}→${domainOf(recipient)}`;
      const submitted = submittedAt.get(messageId);
      const outcome = outcomes.get(k)?.seq;
      const handOff = handOffs.get(k)?.seq;
      return {
        ...(submitted !== undefined && { submitted }),
        ...(outcome !== undefined && { outcome }),
        ...(handOff !== undefined && { handOff }),
        dsn: seqs(arrivedDsns(k).flatMap(({ dsn, arrival }) => [dsn.seq, arrival.seq])),
        attempts: seqs(recipientAttempts(messageId, recipient)),
        posts: seqs(posts.get(`${actor}\n${normalizeAddress(recipient)}`) ?? []),
      };
    },
    facts(messageId, recipient) {
      const k = key(messageId, recipient);
      const actor = `${messageId}→${domainOf(recipient)}`;
      let dsnReceivedAtMs: number | undefined;
      for (const { arrival } of arrivedDsns(k)) dsnReceivedAtMs = Math.min(dsnReceivedAtMs ?? Infinity, arrival.timeMs);
      const found = outcomes.get(k);
      const handOff = handOffs.get(k);
      const outcome =
        found === undefined
          ? undefined
          : {
              outcome: found.outcome,
              timeMs: found.timeMs,
              ...(found.rule !== undefined && { rule: found.rule }),
              ...(found.problem !== undefined && { problem: found.problem }),
            };
      return {
        messageId,
        recipient: normalizeAddress(recipient),
        ...(outcome !== undefined && { outcome }),
        ...(handOff !== undefined && {
          handOff: { reason: handOff.reason, timeMs: handOff.timeMs, accepted: handOff.accepted },
        }),
        ...(dsnReceivedAtMs !== undefined && { dsnReceivedAtMs }),
        attempts: started.has(actor) ? recipientAttempts(messageId, recipient).length : 0,
        posts: posts.get(`${actor}\n${normalizeAddress(recipient)}`)?.length ?? 0,
      };
    },
  };
}

function domainOf(address: string): string {
  const normalized = normalizeAddress(address);
  return normalized.slice(normalized.lastIndexOf("@") + 1).toLowerCase();
}

/** The name an expectation is reported under: its own `id`, else made from its fields. */
export function expectationName(e: ScenarioExpectation, index: number): string {
  if (e.id !== undefined) return e.id;
  const what = [
    e.message ?? "every message",
    e.recipient ?? "every recipient",
    e.outcome ?? (e.never !== undefined ? `never ${e.never.join(", ")}` : "checks"),
  ];
  return `expectations[${index}]: ${what.join(" ")}`;
}

/**
 * Judges every expectation of a scenario against the trace. One result per
 * expectation; an expectation over several recipients passes when it holds
 * for each.
 */
export function checkExpectations(
  expectations: readonly ScenarioExpectation[],
  events: Iterable<CheckedEvent>,
  messages: readonly ExpectedMessage[],
  startMs: number,
): CheckResult[] {
  if (expectations.length === 0) return [];
  const trace = indexTrace(events);
  return expectations.map((e, index) => {
    const id = expectationName(e, index);
    const targets = messages
      .filter((m) => e.message === undefined || m.id === e.message)
      .flatMap((m) =>
        m.to
          .filter((r) => e.recipient === undefined || normalizeAddress(r) === normalizeAddress(e.recipient))
          .map((r) => ({ message: m, recipient: r })),
      );
    if (targets.length === 0) return { id, passed: false, detail: "no message and recipient match this expectation" };
    const problems: string[] = [];
    const notes: string[] = [];
    const evidence = new Set<number>();
    for (const { message, recipient } of targets) {
      const facts = trace.facts(message.messageId, recipient);
      const who = `${message.id} ${facts.recipient}`;
      const found = judge(e, facts, { submittedAtMs: message.atMs, startMs });
      if (found.problems.length > 0) problems.push(`${who}: ${found.problems.join("; ")}`);
      else notes.push(`${who}: ${found.summary}`);
      for (const seq of evidenceFor(e, trace.evidence(message.messageId, recipient))) evidence.add(seq);
    }
    const seqs = evidence.size === 0 ? {} : { evidence: [...evidence].sort((a, b) => a - b) };
    return problems.length > 0
      ? { id, passed: false, detail: problems.join(" | "), ...seqs }
      : { id, passed: true, detail: notes.join(" | "), ...seqs };
  });
}

/**
 * The events an expectation is judged on, whether it holds or not: the
 * outcome (the submission, when there is none) — for `dsn-received`, the DSN
 * and its arrival when one arrived — the SMTP hand-off when the SMTP reason,
 * the relay or `never: [smtp]` is checked, the DSNs for `never:
 * [dsn-received]`, and the attempts' starts and the POSTs when their numbers are.
 */
function evidenceFor(e: ScenarioExpectation, evidence: FactsEvidence): number[] {
  const out: number[] = [];
  const add = (seq: number | undefined): void => {
    if (seq !== undefined) out.push(seq);
  };
  if (e.outcome === "dsn-received" && evidence.dsn.length > 0) pushAll(out, evidence.dsn);
  else add(evidence.outcome ?? evidence.submitted);
  if (e.never?.includes("dsn-received") === true) pushAll(out, evidence.dsn);
  if (e.reason !== undefined || e.relay !== undefined || e.never?.includes("smtp") === true) add(evidence.handOff);
  if (e.attempts !== undefined) pushAll(out, evidence.attempts);
  if (e.posts !== undefined) pushAll(out, evidence.posts);
  return out;
}

function judge(
  e: ScenarioExpectation,
  facts: RecipientFacts,
  { submittedAtMs, startMs }: { readonly submittedAtMs: number; readonly startMs: number },
): { problems: string[]; summary: string } {
  const problems: string[] = [];
  const actual = facts.outcome;
  const actualText =
    actual === undefined
      ? "no outcome"
      : `${actual.outcome} at ${recordedOffset(actual.timeMs, startMs)}${actual.rule !== undefined ? ` (${actual.rule})` : ""}`;
  let timed: number | undefined = actual?.timeMs;
  if (e.outcome === "dsn-received") {
    timed = facts.dsnReceivedAtMs;
    if (timed === undefined)
      problems.push(`expected a DSN to reach the envelope sender; none did (the recipient: ${actualText})`);
  } else if (e.outcome !== undefined) {
    if (actual?.outcome !== e.outcome) problems.push(`expected ${e.outcome}, got ${actualText}`);
  }
  if (e.reason !== undefined && facts.handOff?.reason !== e.reason) {
    problems.push(
      `expected an SMTP hand-off for ${e.reason}, got ${facts.handOff === undefined ? "none" : facts.handOff.reason}`,
    );
  }
  if (e.rule !== undefined && e.outcome !== "dsn-received" && actual?.rule !== e.rule) {
    problems.push(`expected the outcome by rule ${e.rule}, got ${actual?.rule ?? "none"}`);
  }
  if (e.problem !== undefined && e.outcome !== "dsn-received" && !sameProblem(actual?.problem, e.problem)) {
    problems.push(`expected the outcome by problem ${e.problem}, got ${actual?.problem ?? "none"}`);
  }
  if (e.relay !== undefined) {
    const relay = facts.handOff === undefined ? undefined : facts.handOff.accepted ? "accepted" : "refused";
    if (relay !== e.relay) {
      problems.push(
        `expected the SMTP relay to have ${e.relay} the hand-off, ${relay === undefined ? "there was none" : `it ${relay} it`}`,
      );
    }
  }
  if (timed !== undefined) {
    const elapsed = timed - submittedAtMs;
    if (e.within !== undefined && elapsed > durationMs(e.within)) {
      problems.push(`expected within ${String(e.within)}, came ${afterSubmission(elapsed)}`);
    }
    if (e.after !== undefined && elapsed < durationMs(e.after)) {
      problems.push(`expected after ${String(e.after)}, came ${afterSubmission(elapsed)}`);
    }
  } else if ((e.within !== undefined || e.after !== undefined) && e.outcome === undefined) {
    problems.push(
      `expected an outcome ${e.within !== undefined ? `within ${String(e.within)}` : `after ${String(e.after)}`}; there was none`,
    );
  }
  const count = (name: string, range: ScenarioExpectation["attempts"], n: number): void => {
    if (range === undefined) return;
    const min = typeof range === "number" ? range : range.min;
    const max = typeof range === "number" ? range : range.max;
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      const wanted = typeof range === "number" ? `${range}` : `${min ?? 0}…${max ?? "∞"}`;
      problems.push(`expected ${wanted} ${name}, got ${n}`);
    }
  };
  count("attempts", e.attempts, facts.attempts);
  count("POSTs", e.posts, facts.posts);
  for (const never of e.never ?? []) {
    if (happened(never, facts))
      problems.push(`${never} must never happen, but did (${never === "dsn-received" ? "a DSN arrived" : actualText})`);
  }
  const extras = [
    `${facts.attempts} attempt${facts.attempts === 1 ? "" : "s"}`,
    `${facts.posts} POST${facts.posts === 1 ? "" : "s"}`,
    ...(facts.handOff !== undefined ? [`SMTP (${facts.handOff.reason})`] : []),
    ...(facts.dsnReceivedAtMs !== undefined
      ? [`DSN received at ${recordedOffset(facts.dsnReceivedAtMs, startMs)}`]
      : []),
  ];
  return { problems, summary: `${actualText}; ${extras.join(", ")}` };
}

/** `0:12:00 after its submission`: how long after the message was submitted, to the millisecond. */
function afterSubmission(elapsedMs: number): string {
  return `${recordedOffset(elapsedMs, 0).slice(1)} after its submission`;
}

/** A problem type URI matches an identifier by its last path segment, or a whole URI exactly. */
function sameProblem(type: string | undefined, wanted: string): boolean {
  if (type === undefined) return false;
  return type === wanted || (!wanted.includes("/") && type.slice(type.lastIndexOf("/") + 1) === wanted);
}

function happened(outcome: ExpectedOutcome, facts: RecipientFacts): boolean {
  if (outcome === "dsn-received") return facts.dsnReceivedAtMs !== undefined;
  if (outcome === "smtp") return facts.handOff !== undefined || facts.outcome?.outcome === "smtp";
  return facts.outcome?.outcome === outcome;
}
