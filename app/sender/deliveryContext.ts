/**
 * The delivery machine's context and what it is given: the message and
 * recipients of one actor (its input), the sender's ports and settings
 * ({@link DeliveryMachineDeps}, handed in with the input), and the record the
 * table's conditions read (attempts, the fallback-eligibility flag, open
 * deliveries, outcomes). Types and two small readers only; the steps that
 * change a context are in deliverySteps.ts.
 */
import type { Clock, Random, SmtpHandOff, TraceSink } from "../ports.ts";
import type { SpecConstants } from "../protocol/specConstants.ts";
import type { AttemptInput, AttemptOutcome, OpenDelivery } from "./attempt.ts";
import type { DiscoveryOutcome, DiscoveryStage, Endpoint } from "./discovery.ts";
import type { FailureReport } from "./dsnReports.ts";
import type { ProblemSummary } from "./http.ts";
import type { PlantedBug } from "./plantedBugs.ts";
import type { SenderReadings } from "./readings.ts";
import type { RetryPlan } from "./retrySchedule.ts";

// ── Context ─────────────────────────────────────────────────────────────

/** A recipient's final outcome: exactly one per recipient. */
export interface RecipientOutcome {
  readonly recipient: string;
  readonly outcome: "accepted" | "rejected" | "smtp" | "bounced";
  /** The rule that decided it. */
  readonly rule: string;
  readonly gaps: readonly string[];
  readonly atMs: number;
  readonly deliveryId?: string;
  readonly problem?: ProblemSummary;
}

/** A delivery just opened, with what its delivery.created says of it. */
export interface NewDelivery {
  readonly delivery: OpenDelivery;
  /** Its recipients were answered `deferred` before (STATE-6, G20). */
  readonly deferred: boolean;
  /** Its place among the deliveries opened together (1-based) and their number: more than one under G12 `split`. */
  readonly batch: number;
  readonly batches: number;
  /** The batch size those deliveries were cut to (`max_recipients`, or all the recipients). */
  readonly maxRecipients: number;
  /** Under `misbehaviour.reuseIdempotencyKey`: the previous delivery whose key this one reuses. */
  readonly keyReusedFrom?: string;
}

/** A recipient not yet final and not in an open delivery: waiting for a new delivery (first attempt, or after `deferred`). */
export interface WaitingRecipient {
  readonly address: string;
  /** It was answered `deferred` before (STATE-6, G20). */
  readonly deferred: boolean;
}

/** How far an attempt got: a step of discovery ({@link DiscoveryStage}), or the POSTs. */
export type AttemptStage = DiscoveryStage | "post";

/**
 * How an attempt ended, in one word: `results` (every POST answered with
 * per-recipient results), `temporary` or `permanent` (a request-level answer,
 * or a failure before any POST), `no-service` (no SVCB record: plain SMTP),
 * `no-common-version` (STATE-4).
 */
export type AttemptClass = "results" | "temporary" | "permanent" | "no-service" | "no-common-version";

/** How one attempt ended, as the table's conditions need it. */
export interface AttemptSummary {
  readonly attempt: number;
  readonly atMs: number;
  /** posted: at least one POST answered or failed; the others end before any POST. */
  readonly kind: "posted" | "temporary-failure" | "no-service" | "no-common-version";
  /** The step it reached. */
  readonly stage: AttemptStage;
  readonly class: AttemptClass;
  /** POSTs sent (a body G13 kept back is not one). */
  readonly posts: number;
  /** Every part of the attempt ended in a fallback-eligible failure (ERR-22): no answer, request-level 5xx, capabilities, DNS. */
  readonly fallbackEligible: boolean;
  /** The latest Retry-After / `retry_after` time (RETRY-7). */
  readonly lowerBoundMs?: number;
  /** Where that latest lower bound came from: a request-level `Retry-After` header or a recipient's `retry_after`. */
  readonly lowerBoundFrom?: "Retry-After" | "retry_after";
  /** This attempt's last problem, if it had one. */
  readonly problem?: ProblemSummary;
  readonly rule: string;
  readonly gaps: readonly string[];
}

/**
 * What one actor is started with: its message and recipients, and the
 * sender's ports and settings. The ports come with the input (and stay in the
 * context) rather than being closed over, so the machine is one module-level
 * definition that can be read, drawn and tested without any.
 */
export interface DeliveryInput {
  /** The sender's ports and settings, the same object for every actor of one sender. */
  readonly deps: DeliveryMachineDeps;
  readonly messageId: string;
  /** The recipient domain. */
  readonly domain: string;
  readonly from: string | null;
  readonly message: Uint8Array;
  readonly recipients: readonly string[];
  /** When the sender took the message (a DSN's Arrival-Date). */
  readonly submittedAtMs: number;
}

/**
 * What the machine keeps. The actor's input is one field, as it was given (it never changes): XState copies the
 * context with `Object.assign` on every `assign`, and past ~19 top-level fields V8 makes that copy a
 * dictionary-mode object (~5 KB, slow to read) instead of a plain one (decision 0205). Keep it under that.
 */
export interface DeliveryContext {
  /** The actor's input: its message, recipients and the sender's ports. */
  readonly input: DeliveryInput;
  /** The first attempt's time: every time of the table counts from here. */
  readonly firstAttemptAtMs?: number;
  /** Attempts made so far, across request-level retries and new deliveries (G16). */
  readonly attempts: number;
  /** When the current (or last) attempt started. */
  readonly attemptAtMs?: number;
  /** Every attempt so far ended in a fallback-eligible failure (STATE-3); one `rate_limited` makes it false for good. */
  readonly allAttemptsFallbackEligible: boolean;
  /** Recipients waiting for a new delivery. */
  readonly waiting: readonly WaitingRecipient[];
  /** Deliveries with a key, to be (re)sent with that key (POST-24). */
  readonly deliveries: readonly OpenDelivery[];
  /** The deliveries the last step opened, for the trace's delivery.created. */
  readonly newDeliveries: readonly NewDelivery[];
  readonly deliveriesMade: number;
  readonly outcomes: readonly RecipientOutcome[];
  /** The outcomes decided by the last step, for the trace and the DSN. */
  readonly newOutcomes: readonly RecipientOutcome[];
  /** The last problem per pending recipient, for the bounce DSN. */
  readonly lastProblems: Readonly<Record<string, ProblemSummary>>;
  readonly endpoint?: Endpoint;
  readonly lastAttempt?: AttemptSummary;
  /** The last problem of the whole actor. */
  readonly lastProblem?: ProblemSummary;
  readonly retryPlan?: RetryPlan;
  readonly smtp?: { readonly reason: SmtpHandOff["reason"]; readonly rule: string; readonly gaps: readonly string[] };
  /** Only under `misbehaviour.reuseIdempotencyKey`: each recipient's last delivery, whose key a new delivery reuses. */
  readonly lastDeliveryOf?: Readonly<Record<string, { readonly deliveryId: string; readonly idempotencyKey: string }>>;
}

/**
 * Deliberate sender misbehaviours, for teaching what the receiver does when a
 * sender breaks a rule. All off by default; a correct sender sets none.
 */
export interface SenderMisbehaviour {
  /**
   * A new delivery for deferred recipients keeps the previous delivery's
   * Idempotency-Key instead of a new one: breaks STATE-6 and POST-27, and the
   * receiver answers 409 `idempotency_conflict` (POST-26), since the body
   * (envelope, boundary) differs.
   */
  readonly reuseIdempotencyKey?: boolean;
}

/** What a transition's `meta` says, for the reviewer and the trace. */
export interface TransitionMeta {
  readonly name: string;
  /** The row of SPEC.md's table (1–8) this transition implements, if any. */
  readonly row?: number;
  readonly rules: readonly string[];
  readonly gaps?: readonly string[];
}

/** The context a delivery starts with: its input, no attempt yet, every recipient waiting. */
export function initialDeliveryContext(input: DeliveryInput): DeliveryContext {
  return {
    input,
    attempts: 0,
    allAttemptsFallbackEligible: true,
    waiting: input.recipients.map((address) => ({ address, deferred: false })),
    deliveries: [],
    newDeliveries: [],
    deliveriesMade: 0,
    outcomes: [],
    newOutcomes: [],
    lastProblems: {},
  };
}

/** The recipients of this actor that have no final outcome yet. */
export function pendingRecipients(context: Pick<DeliveryContext, "waiting" | "deliveries">): string[] {
  return [...context.waiting.map((w) => w.address), ...context.deliveries.flatMap((d) => d.recipients)];
}

/** The actor's id, as the trace names it. */
export function deliveryActorId(messageId: string, domain: string): string {
  // The last id made, given again for the same delivery: its events come in bursts (an attempt, its
  // discovery, its judgement), and each new copy of the text was ~100 bytes the trace kept (decision 0185).
  if (messageId !== lastActor.messageId || domain !== lastActor.domain) {
    lastActor = { messageId, domain, id: `${messageId}→${domain}` };
  }
  return lastActor.id;
}

let lastActor = { messageId: "", domain: "", id: "→" };

/** What the machine needs from the sender that runs it: ports (clock, Random, trace, discovery, POST, SMTP, DSNs) and settings. */
export interface DeliveryMachineDeps {
  readonly clock: Pick<Clock, "now">;
  readonly random: Random;
  readonly trace: TraceSink;
  readonly readings: SenderReadings;
  /** The draft's numbers in force (RETRY-1 … RETRY-6); default SPEC.md's. */
  readonly constants?: SpecConstants;
  /** The sending domain (trace, DSN Reporting-MTA). */
  readonly senderDomain: string;
  readonly problemBase: string;
  /** Discovery before each attempt ({@link discover} with the sender's ports), on behalf of the actor `deliveryActor`. */
  discover(domain: string, deliveryActor: string): Promise<DiscoveryOutcome>;
  /** One POST of one delivery ({@link attemptDelivery} with the sender's ports). */
  attempt(input: AttemptInput): Promise<AttemptOutcome>;
  /** The SMTP hand-off port. */
  handOff(handOff: SmtpHandOff): Promise<{ readonly accepted: boolean; readonly detail?: string }>;
  /** Reports recipients that failed for good to the envelope sender (a DSN; none for a null sender). */
  reportFailures(report: FailureReport): void;
  /** Deliberate misbehaviours (teaching only); none by default. */
  readonly misbehaviour?: SenderMisbehaviour;
  /** A bug planted by a test harness (plantedBugs.ts); never set by a scenario. */
  readonly plantedBug?: PlantedBug;
}
