/**
 * The delivery machine's steps: how each transition's actions change the
 * context — deliveries opened, one attempt's answers read (applyPosting), an
 * attempt that ended in discovery summed up, recipients handed to SMTP or
 * bounced. The time comes in as an argument, and a step that draws (keys,
 * boundaries) is handed the Random, so each is a function of its arguments;
 * the trace's events are built in deliveryTrace.ts from what they return.
 */
import type { Random } from "../ports.ts";
import { errorMessage } from "../errorMessage.ts";
import { bytesToBase64Url } from "../protocol/base64.ts";
import { chooseBoundary } from "../protocol/multipart.ts";
import type { AttemptOutcome, OpenDelivery } from "./attempt.ts";
import { deliveryActorId, pendingRecipients } from "./deliveryContext.ts";
import type {
  AttemptStage,
  AttemptSummary,
  DeliveryContext,
  NewDelivery,
  RecipientOutcome,
} from "./deliveryContext.ts";
import type { DiscoveryOutcome, Endpoint } from "./discovery.ts";
import type { FailedRecipient } from "./dsnReports.ts";
import { problemType } from "./http.ts";
import type { ProblemSummary } from "./http.ts";

function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/**
 * Applies the outcomes of one attempt's POSTs: accepted and rejected
 * recipients become final (STATE-9, G14), deferred ones wait for a new
 * delivery (STATE-6, RCP-9), a request-level permanent answer makes every
 * recipient of that delivery final (STATE-9, G31), a temporary one keeps the
 * delivery and its key (POST-24), `unsupported_version` leaves them all for
 * SMTP (STATE-4).
 */
export function applyPosting(
  context: DeliveryContext,
  outcomes: readonly AttemptOutcome[],
  nowMs: number,
): Pick<
  DeliveryContext,
  | "waiting"
  | "deliveries"
  | "outcomes"
  | "newOutcomes"
  | "lastProblems"
  | "lastAttempt"
  | "lastProblem"
  | "allAttemptsFallbackEligible"
> {
  const waiting = [...context.waiting];
  const newOutcomes: RecipientOutcome[] = [];
  const lastProblems: Record<string, ProblemSummary> = { ...context.lastProblems };
  const keep = new Set<string>();
  let lowerBoundMs: number | undefined;
  let lowerBoundFrom: AttemptSummary["lowerBoundFrom"];
  const bound = (atMs: number, from: NonNullable<AttemptSummary["lowerBoundFrom"]>): void => {
    if (lowerBoundMs === undefined || atMs > lowerBoundMs) lowerBoundFrom = from;
    lowerBoundMs = later(lowerBoundMs, atMs);
  };
  let lastProblem = context.lastProblem;
  /** The last problem of this attempt alone (`lastProblem` goes back to earlier ones). */
  let attemptProblem: ProblemSummary | undefined;
  let noCommonVersion = false;
  for (const outcome of outcomes) {
    const delivery = context.deliveries.find((d) => d.deliveryId === outcome.deliveryId);
    if (delivery === undefined) continue;
    if (outcome.kind === "results") {
      for (const verdict of outcome.verdicts) {
        if (verdict.problem !== undefined) {
          lastProblems[verdict.recipient] = verdict.problem;
          lastProblem = verdict.problem;
          attemptProblem = verdict.problem;
        }
        if (verdict.outcome === "deferred") {
          waiting.push({ address: verdict.recipient, deferred: true });
          if (verdict.retryAfterS !== undefined)
            bound((outcome.answeredAtMs ?? nowMs) + verdict.retryAfterS * 1000, "retry_after");
        } else {
          newOutcomes.push({
            recipient: verdict.recipient,
            outcome: verdict.outcome,
            rule: verdict.outcome === "rejected" ? "STATE-9" : verdict.rule,
            gaps: verdict.outcome === "rejected" ? [...verdict.gaps, "G14"] : verdict.gaps,
            atMs: nowMs,
            deliveryId: delivery.deliveryId,
            ...(verdict.problem !== undefined && { problem: verdict.problem }),
          });
        }
      }
      continue;
    }
    const { reading } = outcome;
    lastProblem = outcome.problem;
    attemptProblem = outcome.problem;
    for (const r of delivery.recipients) lastProblems[r] = outcome.problem;
    if (reading.smtpFallback === "immediately") {
      noCommonVersion = true;
      keep.add(delivery.deliveryId);
    } else if (reading.class === "permanent") {
      for (const recipient of delivery.recipients) {
        newOutcomes.push({
          recipient,
          outcome: "rejected",
          rule: "STATE-9",
          gaps: [...reading.gaps, "G31"],
          atMs: nowMs,
          deliveryId: delivery.deliveryId,
          problem: outcome.problem,
        });
      }
    } else {
      keep.add(delivery.deliveryId);
      if (outcome.retryAfterS !== undefined)
        bound((outcome.answeredAtMs ?? nowMs) + outcome.retryAfterS * 1000, "Retry-After");
    }
  }
  const fallbackEligible =
    outcomes.length > 0 && outcomes.every((o) => o.kind === "request-level" && o.reading.fallbackEligible);
  const decisive =
    outcomes.find((o) => o.kind === "request-level" && o.reading.smtpFallback === "immediately") ??
    outcomes.find((o) => o.kind === "request-level");
  const summary: AttemptSummary = {
    attempt: context.attempts,
    atMs: context.attemptAtMs ?? nowMs,
    kind: noCommonVersion ? "no-common-version" : "posted",
    stage: "post",
    class: noCommonVersion
      ? "no-common-version"
      : decisive?.kind === "request-level"
        ? decisive.reading.class
        : "results",
    posts: outcomes.filter((o) => o.kind === "results" || o.sent).length,
    fallbackEligible,
    ...(lowerBoundMs !== undefined && { lowerBoundMs }),
    ...(lowerBoundFrom !== undefined && { lowerBoundFrom }),
    ...(attemptProblem !== undefined && { problem: attemptProblem }),
    rule: decisive?.kind === "request-level" ? decisive.reading.rule : "POST-11",
    gaps: decisive?.kind === "request-level" ? decisive.reading.gaps : [],
  };
  for (const o of newOutcomes) delete lastProblems[o.recipient];
  return {
    waiting,
    deliveries: context.deliveries.filter((d) => keep.has(d.deliveryId)),
    outcomes: [...context.outcomes, ...newOutcomes],
    newOutcomes,
    lastProblems,
    lastAttempt: summary,
    ...(lastProblem !== undefined && { lastProblem }),
    allAttemptsFallbackEligible: context.allAttemptsFallbackEligible && fallbackEligible,
  };
}

/** The summary of an attempt that ended in discovery, before any POST. */
export function summarizeDiscovery(
  context: DeliveryContext,
  outcome: Exclude<DiscoveryOutcome, { kind: "endpoint" }>,
  problemBase: string,
): AttemptSummary {
  const base = { attempt: context.attempts, atMs: context.attemptAtMs ?? 0, stage: outcome.stage, posts: 0 };
  switch (outcome.kind) {
    case "no-service":
      // Not a failure: "fallback-eligible" keeps the flag as it was, so plain SMTP stays possible only while nothing forbade it.
      return {
        ...base,
        kind: "no-service",
        class: "no-service",
        fallbackEligible: true,
        rule: outcome.rule,
        gaps: outcome.gaps,
      };
    case "no-common-version":
      return {
        ...base,
        kind: "no-common-version",
        class: "no-common-version",
        fallbackEligible: false,
        problem: {
          type: problemType(problemBase, "unsupported_version"),
          identifier: "unsupported_version",
          detail: `ours ${outcome.ours.join(", ")}; theirs ${outcome.theirs.join(", ")}`,
        },
        rule: outcome.reading.rule,
        gaps: outcome.reading.gaps,
      };
    case "temporary-failure":
      return {
        ...base,
        kind: "temporary-failure",
        class: outcome.reading.class,
        fallbackEligible: outcome.reading.fallbackEligible,
        problem: {
          type: problemType(problemBase, "temporary_failure"),
          identifier: "temporary_failure",
          detail: outcome.detail,
          ...(outcome.status !== undefined && { status: outcome.status }),
        },
        // G47 `lower-bound`: the capabilities answer's Retry-After counts like a POST's (RETRY-7).
        ...(outcome.lowerBoundMs !== undefined && {
          lowerBoundMs: outcome.lowerBoundMs,
          lowerBoundFrom: "Retry-After" as const,
        }),
        rule: outcome.reading.rule,
        gaps: outcome.reading.gaps,
      };
  }
}

/**
 * Keeps the `endpoint` discovery found, and mints a delivery to it with a new Idempotency-Key for the waiting
 * recipients, in batches of `max_recipients` under G12 `split` (under `misbehaviour.reuseIdempotencyKey`, a deferred
 * recipient's new delivery keeps its previous delivery's key). Draws each key and boundary from `random`, delivery by
 * delivery. One step, so the machine copies its context once for both (decision 0205).
 */
export function openDeliveries(
  context: DeliveryContext,
  endpoint: Endpoint,
  random: Random,
): Partial<Pick<DeliveryContext, "waiting" | "deliveries" | "deliveriesMade" | "lastDeliveryOf">> &
  Pick<DeliveryContext, "newDeliveries" | "endpoint"> {
  const { deps } = context.input;
  if (context.waiting.length === 0) return { endpoint, newDeliveries: [] };
  const addresses = context.waiting.map((w) => w.address);
  const size = deps.readings.overMaxRecipients === "split" ? endpoint.capabilities.max_recipients : addresses.length;
  const batches: string[][] = [];
  for (let i = 0; i < addresses.length; i += size) batches.push(addresses.slice(i, i + size));
  const deferred = context.waiting.some((w) => w.deferred);
  const reuseKeys = deps.misbehaviour?.reuseIdempotencyKey === true;
  const opened = batches.map((recipients, index): NewDelivery => {
    const n = context.deliveriesMade + index + 1;
    // Drawn even when the misbehaviour discards it, so every other draw stays as a correct sender's.
    const freshKey = bytesToBase64Url(random.bytes(18));
    const previous = reuseKeys
      ? recipients.map((r) => context.lastDeliveryOf?.[r]).find((d) => d !== undefined)
      : undefined;
    const delivery: OpenDelivery = {
      deliveryId: `${deliveryActorId(context.input.messageId, context.input.domain)}#${n}`,
      idempotencyKey: previous?.idempotencyKey ?? freshKey,
      recipients,
      boundary: chooseBoundary(random.bytes(24), context.input.message),
    };
    return {
      delivery,
      deferred,
      batch: index + 1,
      batches: batches.length,
      maxRecipients: size,
      ...(previous !== undefined && { keyReusedFrom: previous.deliveryId }),
    };
  });
  const lastDeliveryOf = reuseKeys
    ? {
        lastDeliveryOf: Object.fromEntries([
          ...Object.entries(context.lastDeliveryOf ?? {}),
          ...opened.flatMap(({ delivery: d }) =>
            d.recipients.map((r) => [r, { deliveryId: d.deliveryId, idempotencyKey: d.idempotencyKey }] as const),
          ),
        ]),
      }
    : {};
  return {
    endpoint,
    waiting: [],
    deliveries: [...context.deliveries, ...opened.map((o) => o.delivery)],
    deliveriesMade: context.deliveriesMade + opened.length,
    newDeliveries: opened,
    ...lastDeliveryOf,
  };
}

/**
 * {@link applyPosting}, and the planted bug `replay-new-key`: a delivery kept for a request-level retry gets a new
 * key (POST-24 says the same one).
 */
export function recordPosting(
  context: DeliveryContext,
  outcomes: readonly AttemptOutcome[],
  nowMs: number,
): ReturnType<typeof applyPosting> {
  const posted = applyPosting(context, outcomes, nowMs);
  if (context.input.deps.plantedBug !== "replay-new-key") return posted;
  const deliveries = posted.deliveries.map((d) => ({
    ...d,
    idempotencyKey: bytesToBase64Url(context.input.deps.random.bytes(18)),
  }));
  return { ...posted, deliveries };
}

/** An attempt that ended in discovery, before any POST: its summary, the pending recipients' last problem, the flag. */
export function recordDiscovery(
  context: DeliveryContext,
  outcome: DiscoveryOutcome,
): Partial<Pick<DeliveryContext, "lastAttempt" | "lastProblems" | "lastProblem" | "allAttemptsFallbackEligible">> {
  if (outcome.kind === "endpoint") return {};
  const summary = summarizeDiscovery(context, outcome, context.input.deps.problemBase);
  const lastProblems: Record<string, ProblemSummary> = { ...context.lastProblems };
  if (summary.problem !== undefined) for (const r of pendingRecipients(context)) lastProblems[r] = summary.problem;
  return {
    lastAttempt: summary,
    lastProblems,
    ...(summary.problem !== undefined && { lastProblem: summary.problem }),
    // no-service decides nothing about the flag: see summarizeDiscovery.
    allAttemptsFallbackEligible:
      outcome.kind === "no-service"
        ? context.allAttemptsFallbackEligible
        : context.allAttemptsFallbackEligible && summary.fallbackEligible,
  };
}

/**
 * A fault of the sender itself (a port that threw) at `stage`: no answer from the receiver, so temporary, and not a
 * reason to leave the service (ERR-24).
 */
export function recordSenderFault(
  context: DeliveryContext,
  stage: AttemptStage,
  error: unknown,
  nowMs: number,
): Pick<DeliveryContext, "lastAttempt" | "lastProblem" | "allAttemptsFallbackEligible"> {
  const problem: ProblemSummary = {
    type: problemType(context.input.deps.problemBase, "temporary_failure"),
    identifier: "temporary_failure",
    detail: `the sender failed: ${errorMessage(error)}`,
  };
  return {
    lastAttempt: {
      attempt: context.attempts,
      atMs: context.attemptAtMs ?? nowMs,
      kind: "temporary-failure",
      stage,
      class: "temporary",
      posts: 0,
      fallbackEligible: false,
      problem,
      rule: "ERR-24",
      gaps: [],
    },
    lastProblem: problem,
    allAttemptsFallbackEligible: false,
  };
}

/** Why the pending recipients go to SMTP (the transition into handingToSmtp chose it; STATE-3 when none did). */
export function smtpChoice(context: Pick<DeliveryContext, "smtp">): NonNullable<DeliveryContext["smtp"]> {
  return context.smtp ?? { reason: "fallback", rule: "STATE-3", gaps: [] };
}

/** Every pending recipient handed to SMTP (G18): final with outcome `smtp`. */
export function handOffPending(
  context: DeliveryContext,
  atMs: number,
): Pick<DeliveryContext, "waiting" | "deliveries" | "outcomes" | "newOutcomes"> {
  const smtp = smtpChoice(context);
  const newOutcomes = pendingRecipients(context).map((recipient): RecipientOutcome => ({
    recipient,
    outcome: "smtp",
    rule: smtp.rule,
    gaps: [...smtp.gaps, "G18"],
    atMs,
  }));
  return { waiting: [], deliveries: [], outcomes: [...context.outcomes, ...newOutcomes], newOutcomes };
}

/** Every pending recipient bounced at the give-up (STATE-7, G29), with its last problem. */
export function bouncePending(
  context: DeliveryContext,
  atMs: number,
): Pick<DeliveryContext, "waiting" | "deliveries" | "outcomes" | "newOutcomes"> {
  const newOutcomes = pendingRecipients(context).map((recipient): RecipientOutcome => {
    const problem = context.lastProblems[recipient] ?? context.lastProblem;
    return {
      recipient,
      outcome: "bounced",
      rule: "STATE-7",
      gaps: ["G29"],
      atMs,
      ...(problem !== undefined && { problem }),
    };
  });
  return { waiting: [], deliveries: [], outcomes: [...context.outcomes, ...newOutcomes], newOutcomes };
}

/** The recipients among `outcomes` that failed for good (rejected or bounced), as a DSN reports them. */
export function failedRecipients(context: DeliveryContext, outcomes: readonly RecipientOutcome[]): FailedRecipient[] {
  return outcomes
    .filter((o) => o.outcome === "rejected" || o.outcome === "bounced")
    .map((o) => ({
      recipient: o.recipient,
      kind: o.outcome === "bounced" ? ("bounced" as const) : ("rejected" as const),
      ...(o.problem !== undefined && { problem: o.problem }),
      permanent: o.outcome === "rejected",
      rule: o.rule,
      gaps: o.gaps,
      ...(context.attemptAtMs !== undefined && { lastAttemptAtMs: context.attemptAtMs }),
      ...(context.endpoint !== undefined && { remoteOrigin: context.endpoint.origin }),
    }));
}
