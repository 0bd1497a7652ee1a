/**
 * The delivery machine's pure steps: how one attempt's answers change the
 * context (applyPosting) and how an attempt that ended in discovery is
 * summed up (summarizeDiscovery). No ports, no clock: the time comes in as
 * an argument, so each step is tested on its own.
 */
import type { AttemptOutcome } from "./attempt.ts";
import type { AttemptSummary, DeliveryContext, RecipientOutcome } from "./deliveryContext.ts";
import type { DiscoveryOutcome } from "./discovery.ts";
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
