/**
 * The receiver's checks of one recipient (SVC-7), one function per check of `checks.ts`, keyed by its ID:
 * a delivery that passed every request-level check walks them for each recipient of `to`, in G10's order
 * (`checkOrder("P")`), under the lock of its mailboxes; the first that gives an outcome is that recipient's
 * entry of the 200, and a recipient whose every step passes (`store` last) is accepted.
 */
import type { Envelope } from "../protocol/resources.ts";
import { buildFailureDsn, headerBlock } from "./afterAcceptance.ts";
import type { FailedRecipient } from "./afterAcceptance.ts";
import { deferredByStore, resultsAnswer } from "./answers.ts";
import type { Answer, Outcome } from "./answers.ts";
import { checkOrder, type RecipientCheckId } from "./checks.ts";
import type { FailAfterAcceptanceRule, ReceiverConfig } from "./config.ts";
import type { RecipientFaults } from "./receiver.ts";
import type { Delivery, Receiving, RequestTrace } from "./receiving.ts";

/** One recipient being checked, within its delivery. */
interface RecipientCheck {
  readonly recipient: string;
  /** The envelope's `from`; null for a DSN. */
  readonly from: string | null;
  readonly signingDomain: string;
  readonly message: Uint8Array;
  readonly deliveryId: string;
  readonly traced: RequestTrace;
  readonly delivery: Delivery;
  /** The receiver's clock as this recipient's checks began: its rate window and its message's receipt time. */
  readonly nowMs: number;
  /** The recipient's mailbox when it is configured (a catch-all receiver takes others without one). */
  mailbox?: ReceiverConfig["mailboxes"][number];
}

/** One check of a recipient: nothing when it passes, else the recipient's outcome. */
type RecipientStep = (r: Receiving, c: RecipientCheck) => Outcome | undefined | Promise<Outcome | undefined>;

/** SVC-7, ERR-4 (`rejected`): the mailbox exists. A fault in front of the receiver then answers for it, if it has one. */
function recipientExists(r: Receiving, c: RecipientCheck): Outcome | undefined {
  const { recipient } = c;
  const mailbox = r.mailboxes.get(recipient);
  if (mailbox === undefined && !r.cfg.catchAll) {
    return {
      recipient,
      status: "rejected",
      problem: "recipient_not_found",
      detail: `${recipient} does not exist here`,
    };
  }
  if (mailbox !== undefined) c.mailbox = mailbox;
  const faulted = c.traced.faults?.answer(recipient);
  return faulted === undefined ? undefined : { recipient, ...faulted };
}

/** SVC-7, ERR-3 (`rejected`): the mailbox does not refuse this sender. */
function recipientPolicy(r: Receiving, c: RecipientCheck): Outcome | undefined {
  const { recipient, from } = c;
  if (!r.policy.recipientRefuses(recipient, from, c.signingDomain)) return undefined;
  return {
    recipient,
    status: "rejected",
    problem: "policy_rejected",
    detail: `${recipient} does not take mail from ${from ?? c.signingDomain}`,
  };
}

/** ERR-10, ERR-18 (`deferred`): the mailbox is not failing temporarily (policy `temporaryFailures`). */
function recipientTemporaryFailure(r: Receiving, c: RecipientCheck): Outcome | undefined {
  const { recipient } = c;
  const planned = r.policy.takeTemporaryFailure(recipient);
  if (planned === undefined) return undefined;
  return {
    recipient,
    status: "deferred",
    problem: "temporary_failure",
    detail: `${recipient} cannot take mail now`,
    ...(planned.retryAfterS !== undefined && { retryAfterS: planned.retryAfterS }),
  };
}

/** ERR-8, RCP-5 (`deferred`): the mailbox is within its rate limit. */
function recipientRateLimit(r: Receiving, c: RecipientCheck): Outcome | undefined {
  const { recipient } = c;
  const waitS = r.policy.recipientWaitS(recipient, c.nowMs);
  if (waitS <= 0) return undefined;
  return {
    recipient,
    status: "deferred",
    problem: "rate_limited",
    detail: `${recipient} is over its rate limit`,
    retryAfterS: waitS,
  };
}

/** SVC-7, ERR-9 (`deferred`): the message fits the mailbox's quota. Without a quota, nothing to ask the store. */
function quota(r: Receiving, c: RecipientCheck): Promise<Outcome | undefined> | undefined {
  const limit = c.mailbox?.quota;
  return limit === undefined ? undefined : withinQuota(r, c, limit);
}

async function withinQuota(
  r: Receiving,
  c: RecipientCheck,
  limit: NonNullable<ReceiverConfig["mailboxes"][number]["quota"]>,
): Promise<Outcome | undefined> {
  const { recipient, message } = c;
  let usage;
  try {
    usage = await r.mailStore.usage(recipient);
  } catch (error) {
    return deferredByStore(recipient, "mail store", error);
  }
  if (
    (limit.messages !== undefined && usage.messages + 1 > limit.messages) ||
    (limit.bytes !== undefined && usage.bytes + message.length > limit.bytes)
  ) {
    return {
      recipient,
      status: "deferred",
      problem: "mailbox_full",
      detail: `${recipient} has no room for ${message.length} more bytes`,
    };
  }
  return undefined;
}

/** POST-9, POST-10 (`deferred` with temporary_failure when a store fails): the mail store takes the message, byte for byte. */
async function store(r: Receiving, c: RecipientCheck): Promise<Outcome | undefined> {
  const { recipient, message, nowMs } = c;
  const { recovery, spooled } = c.delivery;
  try {
    await recovery?.beforeStore?.();
  } catch (error) {
    // The delivery's intent is written to the idempotency store before any mail is: a full disk there is
    // that store's failure, not the mail store's.
    return deferredByStore(recipient, "idempotency store", error);
  }
  try {
    const meta = { deliveryId: c.deliveryId, receivedAtMs: nowMs };
    // The spooled copy when there is one that is ready; from memory when there is none or it could not be finished.
    if (spooled === undefined || !(await spooled(recipient, meta))) await r.mailStore.deliver(recipient, message, meta);
  } catch (error) {
    return deferredByStore(recipient, "mail store", error);
  }
  r.policy.recordRecipientDelivery(recipient, nowMs);
  if (r.tracing) {
    const messageId = messageIdOf(message);
    c.traced.emit("mailbox.delivered", {
      mailbox: recipient,
      ...(messageId !== undefined && { messageId }),
      size: message.length,
    });
  }
  return undefined;
}

/** The per-recipient checks by ID; {@link checkOrder} gives their order. */
export const recipientSteps: { readonly [id in RecipientCheckId]: RecipientStep } = {
  "recipient-exists": recipientExists,
  "recipient-policy": recipientPolicy,
  "recipient-temporary-failure": recipientTemporaryFailure,
  "recipient-rate-limit": recipientRateLimit,
  quota,
  store,
};

const RECIPIENT_WALK: readonly RecipientStep[] = checkOrder("P").map((id) => recipientSteps[id]);

/**
 * A delivery that passed every request-level check: each recipient of `to` walks the per-recipient
 * steps under the lock of the delivery's mailboxes, and the 200 gives their outcomes (G17: failures after
 * acceptance are scheduled for the accepted ones).
 */
export async function deliverToRecipients(r: Receiving, d: Delivery): Promise<Answer> {
  const parsed = d.parsed;
  if (parsed?.ok !== true) throw new Error("the envelope step let an unparsed body through");
  const { envelope, message } = parsed;
  const deliveryId = d.recovery?.deliveryId ?? `${d.signingDomain}/${d.key}@${d.arrivalMs}`;
  const from = envelope.from?.address ?? null;
  const recipients = envelope.to.map((m) => m.address);
  const outcomes = await r.locks.with(recipients, async () => {
    const list: Outcome[] = [];
    for (const recipient of recipients) {
      r.ports.work?.(1);
      list.push(await checkRecipient(r, d, { recipient, from, message, deliveryId }));
    }
    return list;
  });
  scheduleFailures(r, outcomes, envelope, message, deliveryId, d.arrivalMs, d.traced.faults);
  return resultsAnswer(r.cfg, outcomes);
}

/** One recipient's walk of the per-recipient steps. */
async function checkRecipient(
  r: Receiving,
  d: Delivery,
  of: { recipient: string; from: string | null; message: Uint8Array; deliveryId: string },
): Promise<Outcome> {
  const { recipient } = of;
  // Resumed after a crash: a mailbox the cut-off delivery stored the message in was accepted then.
  try {
    const storedBefore = d.recovery?.storedBefore;
    if (storedBefore !== undefined && (await storedBefore(recipient))) return { recipient, status: "accepted" };
  } catch (error) {
    return deferredByStore(recipient, "mail store", error);
  }
  const c: RecipientCheck = {
    ...of,
    signingDomain: d.signingDomain,
    traced: d.traced,
    delivery: d,
    nowMs: r.clock.now(),
  };
  for (const step of RECIPIENT_WALK) {
    const result = step(r, c);
    const outcome = result instanceof Promise ? await result : result;
    if (outcome !== undefined) return outcome;
  }
  return { recipient, status: "accepted" };
}

/** G17: schedules the failures after acceptance of this delivery's accepted recipients, one DSN per delay. */
function scheduleFailures(
  r: Receiving,
  outcomes: readonly Outcome[],
  envelope: Envelope,
  message: Uint8Array,
  deliveryId: string,
  arrivalMs: number,
  faults?: RecipientFaults,
): void {
  // The usual receiver: no policy and no host that fails a mailbox after acceptance.
  if (r.cfg.policy.failAfterAcceptance.length === 0 && faults === undefined) return;
  const byDelay = new Map<number, FailAfterAcceptanceRule[]>();
  for (const outcome of outcomes) {
    if (outcome.status !== "accepted") continue;
    const rule =
      r.cfg.policy.failAfterAcceptance.find((f) => f.mailbox === outcome.recipient) ??
      faults?.failAfterAcceptance(outcome.recipient);
    if (rule === undefined) continue;
    byDelay.set(rule.delayMs, [...(byDelay.get(rule.delayMs) ?? []), rule]);
  }
  const reportingDomain = envelope.to[0]?.domain ?? r.traceDomain ?? "";
  for (const [delayMs, rules] of byDelay) {
    const recipients: FailedRecipient[] = rules.map((f) => ({
      mailbox: f.mailbox,
      status: f.status,
      diagnostic: f.diagnostic,
    }));
    // The callback returns its promise so a test clock can wait for it; the Clock port ignores it.
    r.clock.setTimeout(
      () => failAfterAcceptance(r, recipients, envelope, message, deliveryId, arrivalMs, reportingDomain),
      delayMs,
    );
  }
}

async function failAfterAcceptance(
  r: Receiving,
  recipients: readonly FailedRecipient[],
  envelope: Envelope,
  message: Uint8Array,
  deliveryId: string,
  arrivalMs: number,
  reportingDomain: string,
): Promise<void> {
  for (const f of recipients) r.emit("failure.after-acceptance", { mailbox: f.mailbox, status: f.status });
  // No DSN to the null reverse-path (ENV-3, G17), and none without an outbound side to send it.
  const outbound = r.ports.outbound;
  if (envelope.from === null || outbound === undefined) return;
  try {
    const dsn = await buildFailureDsn({
      reportingDomain,
      to: envelope.from.address,
      recipients,
      message,
      arrivalMs,
      nowMs: r.clock.now(),
      deliveryId,
    });
    await outbound.submit({
      from: null,
      to: [envelope.from.address],
      message: dsn,
      about: { deliveryId, recipients },
    });
  } catch {
    // The DSN is best effort: the 200 has long been sent, and no one is left to answer.
  }
}

const utf8 = new TextDecoder("utf-8");
const utf8Encoder = new TextEncoder();

/** The Message-ID of a message, for the trace; `undefined` when it has none. */
function messageIdOf(message: Uint8Array): string | undefined {
  const text = utf8.decode(headerBlock(message).subarray(0, 64 * 1024));
  const match = /^message-id:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(text);
  const value = match?.[1]?.replace(/\r?\n[ \t]+/g, " ").trim();
  // A string of its own: the match (and `trim`) are views into the decoded header block, which V8 would
  // keep whole for the sake of these few characters, as long as the trace keeps the event (decision 0185).
  return value === undefined || value === "" ? undefined : utf8.decode(utf8Encoder.encode(value));
}
