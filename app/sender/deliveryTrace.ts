/**
 * The trace events the delivery machine's actions emit, each built from the
 * context (and the time) by a function of its own: what an event says is
 * read here, when it is said is the machine's (deliveryMachine.ts, one named
 * action per event). docs/trace-format.md describes each event's fields.
 */
import { traceEvent } from "../ports.ts";
import type { EmitData, TraceEventName } from "../trace/events.ts";
import { deliveryActorId } from "./deliveryContext.ts";
import type { DeliveryContext, NewDelivery } from "./deliveryContext.ts";
import { smtpChoice } from "./deliverySteps.ts";
import { constantsOf, giveUpAt } from "./deliveryTimes.ts";
import { fallbackWindowEndMs, giveUpAtMs, retryDecider } from "./retrySchedule.ts";

/** Emits `name` with `data` to the actor's trace, at the clock's time, as the sender's domain. */
export function emitTrace<N extends TraceEventName>(
  context: Pick<DeliveryContext, "input">,
  name: N,
  data: EmitData<N>,
): void {
  const { deps } = context.input;
  deps.trace.emit(traceEvent(name, deps.clock.now(), data, deps.senderDomain));
}

/** delivery.created for a delivery just opened (POST-23; STATE-6 for deferred recipients; G12 batches). */
export function deliveryCreated(context: DeliveryContext, opened: NewDelivery): EmitData<"delivery.created"> {
  const { delivery, deferred } = opened;
  return {
    messageId: context.input.messageId,
    domain: context.input.domain,
    deliveryId: delivery.deliveryId,
    idempotencyKey: delivery.idempotencyKey,
    recipients: delivery.recipients,
    rule: deferred ? "STATE-6" : "POST-23",
    ...(deferred && { rules: ["STATE-6", "POST-27", "RCP-9"], gap: "G20" }),
    ...(opened.batches > 1 && {
      batch: opened.batch,
      batches: opened.batches,
      maxRecipients: opened.maxRecipients,
      gap: "G12",
    }),
    ...(context.input.deps.misbehaviour?.reuseIdempotencyKey === true && {
      misbehaviour: { reuseIdempotencyKey: true },
    }),
    ...(opened.keyReusedFrom !== undefined && {
      keyReusedFrom: opened.keyReusedFrom,
      violates: ["STATE-6", "POST-27"],
    }),
  };
}

/**
 * attempt.judged: the last attempt as the table's conditions read it, whether it reached a POST or not; the first
 * also gives the actor's fallback window and give-up time (G16, RETRY-4, RETRY-6). Undefined before any attempt.
 */
export function attemptJudged(context: DeliveryContext, endedAtMs: number): EmitData<"attempt.judged"> | undefined {
  const summary = context.lastAttempt;
  if (summary === undefined) return undefined;
  const firstAtMs = context.firstAttemptAtMs ?? summary.atMs;
  const windowS = context.input.deps.readings.retryTiming.fallbackWindowS;
  return {
    deliveryActor: deliveryActorId(context.input.messageId, context.input.domain),
    attempt: summary.attempt,
    startedAtMs: summary.atMs,
    endedAtMs,
    stage: summary.stage,
    class: summary.class,
    posts: summary.posts,
    fallbackEligible: summary.fallbackEligible,
    allAttemptsFallbackEligible: context.allAttemptsFallbackEligible,
    ...(summary.problem !== undefined && {
      problem: summary.problem.type,
      ...(summary.problem.status !== undefined && { status: summary.problem.status }),
      ...(summary.problem.detail !== undefined && { detail: summary.problem.detail }),
    }),
    ...(summary.lowerBoundMs !== undefined && { lowerBoundMs: summary.lowerBoundMs }),
    rule: summary.rule,
    ...(summary.gaps.length > 0 && { gaps: summary.gaps }),
    ...(summary.attempt === 1 && {
      fallbackWindowS: windowS,
      fallbackWindowStartMs: firstAtMs,
      fallbackWindowEndMs: fallbackWindowEndMs(firstAtMs, windowS),
      giveUpAtMs: giveUpAtMs(firstAtMs, constantsOf(context.input.deps)),
    }),
  };
}

/** recipient.outcome for each outcome the last step decided. */
export function recipientOutcomes(context: DeliveryContext): EmitData<"recipient.outcome">[] {
  return context.newOutcomes.map((o) => ({
    messageId: context.input.messageId,
    recipient: o.recipient,
    outcome: o.outcome,
    rule: o.rule,
    ...(o.gaps.length > 0 && { gaps: o.gaps }),
    ...(o.deliveryId !== undefined && { deliveryId: o.deliveryId }),
    ...(o.problem !== undefined && { problem: o.problem.type }),
  }));
}

/** timer.set: the retry just planned (RETRY-1, RETRY-2, RETRY-7, G16). Undefined when none is. */
export function timerSet(context: DeliveryContext, nowMs: number): EmitData<"timer.set"> | undefined {
  const plan = context.retryPlan;
  if (plan === undefined) return undefined;
  return {
    deliveryActor: deliveryActorId(context.input.messageId, context.input.domain),
    atMs: plan.atMs,
    delayMs: plan.atMs - nowMs,
    reason: plan.decidedBy,
    retry: plan.retry,
    attemptStartedAtMs: plan.lastAttemptAtMs,
    baseDelayMs: plan.baseDelayMs,
    jitter: plan.jittered,
    jitteredDelayMs: plan.delayMs,
    scheduledAtMs: plan.scheduledAtMs,
    ...(plan.lowerBoundMs !== undefined && {
      lowerBoundMs: plan.lowerBoundMs,
      lowerBoundDelayMs: plan.lowerBoundMs - plan.lastAttemptAtMs,
      ...(context.lastAttempt?.lowerBoundFrom !== undefined && {
        lowerBoundFrom: context.lastAttempt.lowerBoundFrom,
      }),
    }),
    decidedBy: retryDecider(plan),
    // The attempt this timer starts, in the numbering of attempt.started (retry 1 starts attempt 2).
    attempt: plan.retry + 1,
    giveUpAtMs: giveUpAt(context, nowMs),
    rule: plan.decidedBy === "retry-after" ? "RETRY-7" : plan.retry === 1 ? "RETRY-1" : "RETRY-2",
    gap: "G16",
  };
}

/** timer.fired: the retry timer ran out. */
export function timerFired(context: DeliveryContext): EmitData<"timer.fired"> {
  const retry = context.retryPlan?.retry;
  return {
    deliveryActor: deliveryActorId(context.input.messageId, context.input.domain),
    retry,
    ...(retry !== undefined && { attempt: retry + 1 }),
  };
}

/** What the SMTP relay port answered to a hand-off (nothing when it failed). */
export interface HandOffAnswer {
  readonly accepted: boolean;
  readonly detail?: string;
}

/** smtp.handoff: the recipients just handed to SMTP (after `handOffPending`), and the relay's answer (G18). */
export function smtpHandOff(context: DeliveryContext, answer: HandOffAnswer | undefined): EmitData<"smtp.handoff"> {
  const smtp = smtpChoice(context);
  return {
    messageId: context.input.messageId,
    recipients: context.newOutcomes.map((o) => o.recipient),
    reason: smtp.reason,
    rule: smtp.rule,
    accepted: answer?.accepted ?? false,
    ...(answer?.detail !== undefined && { detail: answer.detail }),
  };
}

/** delivery.bounced: the recipients just bounced at the give-up (after `bouncePending`, STATE-7). */
export function deliveryBounced(context: DeliveryContext): EmitData<"delivery.bounced"> {
  return {
    messageId: context.input.messageId,
    domain: context.input.domain,
    recipients: context.newOutcomes.map((o) => o.recipient),
    firstAttemptAtMs: context.firstAttemptAtMs,
    attempts: context.attempts,
    rule: "STATE-7",
  };
}
