/**
 * What every explored run is held to (docs/explore.md
 * "Properties"): the invariants every simulation checks (app/sim/
 * invariants.ts), plus the spec's guarantees stated over a whole run that
 * those do not already say, plus the user's own properties
 * (userProperties.ts).
 *
 * Like the invariants, these read the trace alone and judge it by SPEC.md's
 * words, not by the delivery machine's own verdicts: an attempt's kind comes
 * from its answers (`classify`), a key from what went on the wire.
 *
 * | id | what holds |
 * |---|---|
 * | rejected-never-smtp | a rejected recipient (per recipient, or by a request-level 4xx) is never handed to SMTP |
 * | nothing-after-give-up | after a delivery bounced, nothing more of it: no attempt, timer, new delivery or hand-off |
 * | idempotency-keys | every POST of a delivery carries its key (a replay the same key), and no two deliveries share one |
 * | dsn-for-every-bounce | every bounce of a message with a sender is reported to it by a DSN |
 * | fallback-at-window-end | an attempt at or after the fallback window's end, every attempt so far fallback-eligible, is the last over the service |
 */
import { normalizeAddress } from "../protocol/mailbox.ts";
import {
  buildModel,
  classify,
  permanentEnding,
  type Actor,
  type CheckedEvent,
  type InvariantOptions,
  type Model,
} from "../sim/invariants.ts";
import { dataOf } from "../trace/eventReader.ts";
import { recordedOffset } from "../trace/offset.ts";
import type { CheckResult } from "../trace/schema.ts";

/** One property of the whole run: its id, what it says, the rules it stands on. */
export interface PropertyInfo {
  readonly id: string;
  readonly title: string;
  readonly rules: readonly string[];
}

/** The whole-run guarantees checked on every explored run, besides the invariants. */
export const RUN_PROPERTIES: readonly PropertyInfo[] = [
  {
    id: "rejected-never-smtp",
    title: "a rejected recipient is never sent over SMTP",
    rules: ["RCP-7", "STATE-9", "ERR-5"],
  },
  {
    id: "nothing-after-give-up",
    title: "nothing happens to a delivery after it bounced: no attempt, timer, new delivery or hand-off",
    rules: ["STATE-7", "RETRY-6"],
  },
  {
    id: "idempotency-keys",
    title: "a replay carries the same Idempotency-Key, a new delivery a new one",
    rules: ["POST-24", "STATE-6", "POST-27"],
  },
  {
    id: "dsn-for-every-bounce",
    title: "a DSN reports every bounce, except to the null sender",
    rules: ["STATE-7", "EVT-3"],
  },
  {
    id: "fallback-at-window-end",
    title:
      "an attempt at or after the fallback window's end, every attempt so far fallback-eligible, is handed to SMTP: no further attempt over the service",
    rules: ["STATE-3", "RETRY-4", "ERR-25"],
  },
];

/** The events an explored run is judged on: a trace's events, each with its seq. */
export type JudgedEvent = CheckedEvent & { readonly seq: number };

/** A verdict: passed with what was checked, or the violations and their evidence. */
function verdict(
  id: string,
  violations: readonly { text: string; evidence: readonly CheckedEvent[] }[],
  checked: string,
): CheckResult {
  if (violations.length === 0) return { id, passed: true, detail: checked };
  const shown = violations.slice(0, 5).map((v) => v.text);
  const more = violations.length > 5 ? `; and ${violations.length - 5} more` : "";
  const seqs = [...new Set(violations.flatMap((v) => v.evidence.map((e) => e.seq)))]
    .filter((s): s is number => s !== undefined)
    .sort((a, b) => a - b);
  return { id, passed: false, detail: `${shown.join("; ")}${more}`, ...(seqs.length > 0 && { evidence: seqs }) };
}

/**
 * Checks every whole-run property over `events`; one result per {@link RUN_PROPERTIES} entry, in order. `model` is
 * `buildModel(events)`, given when the caller has it (the one the run's invariants were checked over).
 */
export function checkRunProperties(
  events: readonly CheckedEvent[],
  options: InvariantOptions,
  model: Model = buildModel(events),
): CheckResult[] {
  const actors = [...model.actors.values()];
  // One function per property: V8 optimizes (and, when the events' shapes change, re-optimizes) each loop on
  // its own, not the five in one large function (decision 0200).
  return [
    rejectedNeverSmtp(model, actors, options),
    nothingAfterGiveUp(actors, options),
    idempotencyKeys(events),
    dsnForEveryBounce(events, actors, options),
    fallbackAtWindowEnd(actors, options),
  ];
}

/** What happening to a delivery after it bounced breaks nothing-after-give-up. */
const LATER = new Set(["attempt.started", "timer.set", "timer.fired", "delivery.created", "smtp.handoff"]);

type Violations = { text: string; evidence: CheckedEvent[] }[];

function rejectedNeverSmtp(model: Model, actors: readonly Actor[], options: InvariantOptions): CheckResult {
  const rejectedSmtp: Violations = [];
  let rejected = 0;
  for (const actor of actors) {
    const final = rejectedRecipients(actor, model, options);
    rejected += final.size;
    for (const { event } of actor.handOffs) {
      for (const r of (dataOf(event, "smtp.handoff")?.recipients ?? []).map(normalizeAddress)) {
        const answer = final.get(r);
        if (answer !== undefined) {
          rejectedSmtp.push({
            text: `${actor.id}: ${r} handed to SMTP at ${recordedOffset(event.timeMs, options.startMs)} after it was rejected at ${recordedOffset(answer.timeMs, options.startMs)} [RCP-7]`,
            evidence: [answer, event],
          });
        }
      }
    }
  }
  return verdict("rejected-never-smtp", rejectedSmtp, `${rejected} rejected recipient(s), none handed to SMTP`);
}

/**
 * An actor's rejected recipients, each with the answer that rejected it (by recipient, or a request-level permanent
 * answer for each recipient of its delivery). A function of its own so that V8 optimizes the events' loop as a
 * function, not by on-stack replacement inside the actors' loop (each exit from the inner loop deoptimized it;
 * decision 0200).
 */
function rejectedRecipients(actor: Actor, model: Model, options: InvariantOptions): Map<string, CheckedEvent> {
  const final = new Map<string, CheckedEvent>();
  for (const attempt of actor.attempts) {
    for (const e of attempt.events) {
      const result = dataOf(e, "recipient.result");
      const ended = dataOf(e, "attempt.ended");
      if (result?.status === "rejected") {
        final.set(normalizeAddress(result.recipient ?? ""), e);
      } else if (
        ended !== undefined &&
        permanentEnding(ended, options.readings) &&
        // unsupported_version is permanent yet goes to SMTP at once (STATE-4, ERR-26).
        !(ended.problem ?? "").endsWith("/unsupported_version")
      ) {
        for (const r of model.deliveries.get(ended.deliveryId ?? "") ?? []) final.set(r, e);
      }
    }
  }
  return final;
}

function nothingAfterGiveUp(actors: readonly Actor[], options: InvariantOptions): CheckResult {
  const afterGiveUp: Violations = [];
  let bounces = 0;
  for (const actor of actors) {
    const bounce = actor.bounced;
    if (bounce === undefined) continue;
    bounces++;
    const seq = bounce.seq ?? Number.POSITIVE_INFINITY;
    const late = actor.attempts.flatMap((a) => a.events).find((e) => LATER.has(e.name) && (e.seq ?? -1) > seq);
    if (late !== undefined) {
      afterGiveUp.push({
        text: `${actor.id}: ${late.name} at ${recordedOffset(late.timeMs, options.startMs)}, after it bounced at ${recordedOffset(bounce.timeMs, options.startMs)} [STATE-7]`,
        evidence: [bounce, late],
      });
    }
  }
  return verdict("nothing-after-give-up", afterGiveUp, `${bounces} bounce(s), nothing after any`);
}

function idempotencyKeys(events: readonly CheckedEvent[]): CheckResult {
  const keyViolations: Violations = [];
  const keyOf = new Map<string, { key: string; event: CheckedEvent }>();
  const deliveryOfKey = new Map<string, { deliveryId: string; event: CheckedEvent }>();
  let posts = 0;
  for (const e of events) {
    const started = dataOf(e, "attempt.started");
    const deliveryId = started?.deliveryId;
    const key = started?.idempotencyKey;
    if (deliveryId === undefined || key === undefined) continue;
    posts++;
    const first = keyOf.get(deliveryId);
    if (first === undefined) keyOf.set(deliveryId, { key, event: e });
    else if (first.key !== key) {
      keyViolations.push({
        text: `${deliveryId}: attempt ${started?.attempt ?? "?"} sent with the key ${key}, not the delivery's ${first.key} [POST-24]`,
        evidence: [first.event, e],
      });
    }
    // Keys are scoped per signing domain (AUTH-5): the sending domain is the event's.
    const scoped = `${e.domain ?? ""}\n${key}`;
    const owner = deliveryOfKey.get(scoped);
    if (owner === undefined) deliveryOfKey.set(scoped, { deliveryId, event: e });
    else if (owner.deliveryId !== deliveryId) {
      keyViolations.push({
        text: `${deliveryId}: a new delivery sent with ${owner.deliveryId}'s key ${key} [STATE-6, POST-27]`,
        evidence: [owner.event, e],
      });
    }
  }
  return verdict(
    "idempotency-keys",
    keyViolations,
    `${posts} POST(s): each delivery one key, no key on two deliveries`,
  );
}

function dsnForEveryBounce(
  events: readonly CheckedEvent[],
  actors: readonly Actor[],
  options: InvariantOptions,
): CheckResult {
  const bounces = actors.filter((a) => a.bounced !== undefined).length;
  const missingDsn: Violations = [];
  const reported = new Set<string>();
  for (const e of events) {
    const dsn = dataOf(e, "dsn.sent");
    if (dsn === undefined) continue;
    const messageId = dsn.messageId ?? "";
    for (const r of dsn.recipients ?? []) reported.add(`${messageId}\n${normalizeAddress(r)}`);
  }
  const fromOf = new Map<string, string | null>();
  for (const e of events) {
    const submitted = dataOf(e, "message.submitted");
    if (submitted !== undefined) fromOf.set(submitted.messageId ?? "", submitted.from ?? null);
  }
  for (const actor of actors) {
    const bounce = actor.bounced;
    if (bounce === undefined || (fromOf.get(actor.messageId) ?? null) === null) continue;
    const unreported = (dataOf(bounce, "delivery.bounced")?.recipients ?? [])
      .map(normalizeAddress)
      .filter((r) => !reported.has(`${actor.messageId}\n${r}`));
    if (unreported.length > 0) {
      missingDsn.push({
        text: `${actor.id}: ${unreported.join(", ")} bounced at ${recordedOffset(bounce.timeMs, options.startMs)}, and no DSN told the sender [EVT-3]`,
        evidence: [bounce],
      });
    }
  }
  return verdict("dsn-for-every-bounce", missingDsn, `${bounces} bounce(s), each reported unless the sender is null`);
}

function fallbackAtWindowEnd(actors: readonly Actor[], options: InvariantOptions): CheckResult {
  const lateFallback: Violations = [];
  const windowMs = options.readings.retryTiming.fallbackWindowS * 1000;
  for (const actor of actors) {
    const endMs = actor.startMs + windowMs;
    for (const [i, attempt] of actor.attempts.entries()) {
      const next = actor.attempts[i + 1];
      if (attempt.startMs < endMs || next === undefined) continue;
      const kinds = actor.attempts.slice(0, i + 1).map((a) => classify(a, options.readings).kind);
      if (!kinds.every((k) => k === "eligible")) break;
      lateFallback.push({
        text: `${actor.id}: attempt ${attempt.index} at ${recordedOffset(attempt.startMs, options.startMs)}, at or after the ${windowMs / 60000}-minute fallback window's end with every attempt fallback-eligible, was followed by attempt ${next.index} over the service instead of SMTP [STATE-3]`,
        evidence: [...attempt.events.slice(-1), ...next.events.slice(0, 1)],
      });
      break;
    }
  }
  return verdict(
    "fallback-at-window-end",
    lateFallback,
    `${actors.length} delivery actor(s): none retried over the service after the window with every attempt fallback-eligible`,
  );
}
