/**
 * The delivery machine: one XState actor per (message, recipient domain),
 * reading like SPEC.md's "States and transitions" table. Each transition
 * carries `meta` with its name, the table row it implements (1–8, in the
 * table's order) and the rule IDs it follows, and the trace's
 * machine.transition events repeat them.
 *
 * | row | table: state → trigger / condition → next | transition here |
 * |---|---|---|
 * | 1 | attempting → request-level temporary failure, below the fallback window → retry scheduled | `retryWithinFallbackWindow` (STATE-2) |
 * | 2 | attempting → same failures, attempt at/after the window end, every attempt fallback-eligible → handed to SMTP | `fallBackToSmtpAfterWindow` (STATE-3) |
 * | 3 | attempting → `unsupported_version` / no common version → handed to SMTP at once | `handOffNoCommonVersion` (STATE-4) |
 * | 4 | attempting → temporary answer that is not fallback-eligible → retry scheduled | `retryNotFallbackEligible` (STATE-5) |
 * | 5 | recipient `deferred` → sender retries → new delivery, new key | `retryDeferredRecipients` (the attempt judged), then `retryDeferredAsNewDelivery` (the retry) (STATE-6) |
 * | 6 | attempting / retrying → 5 days since the first attempt → bounced | `giveUpWhileRetrying`, `giveUpAfterAttempt` (STATE-7) |
 * | 7 | recipient `accepted` → failure after acceptance → DSN | none: the receiver's domain sends that DSN (G17) |
 * | 8 | any → 4xx problem or per-recipient `rejected` → finished, not retried | `finishNothingPending` (STATE-9); each such recipient is final at once (`recordPosting`) |
 *
 * A deliberate, default-off misbehaviour for teaching
 * ({@link SenderMisbehaviour}): `reuseIdempotencyKey` breaks row 5 by
 * giving the new delivery the previous delivery's key, so the receiver
 * answers 409 `idempotency_conflict` (POST-26) and the recipient is rejected
 * (row 8). The trace's delivery.created says so.
 *
 * Outside the table: `deliverByPlainSmtp` (no SVCB record, G6 / G8 `smtp`),
 * `finishAllAccepted` (every recipient accepted), the retry of a
 * delivery that failed at request level, which keeps its key
 * (`retrySameDelivery`, POST-24), and `retrySmtpRuledOut`: a
 * fallback-eligible failure after an earlier attempt's answer ruled SMTP
 * out for the message (a 429, say: ERR-23), which rows 1 and 2 do not
 * describe (the table's row 2 needs every attempt eligible), retried over
 * the service until give-up (ERR-24). Every transition into `handingToSmtp`
 * ends in the final `handedToSmtp` once the SMTP relay port has answered.
 *
 * Each transition cites only the rows and rules that applied to it: a
 * per-recipient deferral is row 5 (STATE-6), not row 4 (STATE-5, a
 * request-level answer), so rule coverage counts what happened. The trace's
 * machine.transition names the attempt it belongs to (the one under way, or
 * the one a retry starts), in the one numbering of attempt.started,
 * attempt.judged and the timers (whose `attempt` is the attempt they start).
 *
 * The trace shows a transition's own events (timer.set, recipient.outcome,
 * dsn.sent …) just before its machine.transition event: XState runs the
 * actions of a microstep before it reports the microstep to the inspector.
 *
 * An attempt is discovery (SVCB, pin, capabilities, version) followed by one
 * POST per open delivery (several when G12 splits). Every attempt ends in
 * `judging`, whose entry emits attempt.judged (whether a POST was made or
 * not: the stage reached, the class, fallback-eligibility, the rule; the
 * first with the fallback window and give-up time), so the trace holds every
 * attempt the table's conditions judged. Timers go through the
 * actor's `clock` (XState's `after`), jitter through the Random port; nothing
 * here reads the wall clock.
 */
import { assign, fromPromise, setup } from "xstate";
import type { SmtpHandOff } from "../ports.ts";
import { bytesToBase64Url } from "../protocol/base64.ts";
import { chooseBoundary } from "../protocol/multipart.ts";
import type { AttemptInput, AttemptOutcome, OpenDelivery } from "./attempt.ts";
import { deliveryActorId, pendingRecipients } from "./deliveryContext.ts";
import type {
  AttemptStage,
  DeliveryContext,
  DeliveryInput,
  DeliveryMachineDeps,
  RecipientOutcome,
  TransitionMeta,
} from "./deliveryContext.ts";
import { applyPosting, summarizeDiscovery } from "./deliverySteps.ts";
import type { DiscoveryOutcome, Endpoint } from "./discovery.ts";
import type { FailedRecipient } from "./dsnReports.ts";
import { problemType } from "./http.ts";
import type { ProblemSummary } from "./http.ts";
import { PLANTED_GIVE_UP_DELAY_MS } from "./plantedBugs.ts";
import {
  fallbackWindowEndMs,
  giveUpAtMs,
  isAtOrAfterFallbackWindow,
  planRetry,
  retryDecider,
} from "./retrySchedule.ts";
import { errorMessage } from "../errorMessage.ts";
import { SPEC_CONSTANTS } from "../protocol/specConstants.ts";

// ── The machine ─────────────────────────────────────────────────────────

type DoneEvent<T> = { type: string; output: T };

/**
 * The delivery machine over `deps`. Run one actor per (message, domain) with
 * `createActor(machine, { input, clock })`: the clock must be the same Clock
 * `deps.clock` reads, so that XState's timers and the machine's times agree.
 */
export function createDeliveryMachine(deps: DeliveryMachineDeps) {
  const now = (): number => deps.clock.now();
  const actorId = (context: DeliveryContext): string => deliveryActorId(context.messageId, context.domain);
  const emit = (name: string, data: Record<string, unknown>): void =>
    deps.trace.emit({ name, timeMs: now(), domain: deps.senderDomain, data });
  const constants = deps.constants ?? SPEC_CONSTANTS;
  const giveUpAt = (context: DeliveryContext): number =>
    giveUpAtMs(context.firstAttemptAtMs ?? now(), constants) +
    (deps.plantedBug === "retry-after-give-up" ? PLANTED_GIVE_UP_DELAY_MS : 0);
  /** STATE-3's "at or after the end of the fallback window" (`window-end-exclusive` plants `>`). */
  const atOrAfterWindow = (context: DeliveryContext, attemptAtMs: number): boolean =>
    deps.plantedBug === "window-end-exclusive"
      ? attemptAtMs > fallbackWindowEndMs(context.firstAttemptAtMs ?? 0, deps.readings.G16.fallbackWindowS)
      : isAtOrAfterFallbackWindow(context.firstAttemptAtMs ?? 0, attemptAtMs, deps.readings.G16.fallbackWindowS);
  const meta = (m: TransitionMeta): TransitionMeta => m;

  const failedRecipients = (context: DeliveryContext, outcomes: readonly RecipientOutcome[]): FailedRecipient[] =>
    outcomes
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

  return setup({
    types: {
      context: {} as DeliveryContext,
      input: {} as DeliveryInput,
      events: {} as DoneEvent<unknown>,
      meta: {} as TransitionMeta,
    },
    actors: {
      discover: fromPromise<DiscoveryOutcome, { domain: string; deliveryActor: string }>(({ input }) =>
        deps.discover(input.domain, input.deliveryActor),
      ),
      post: fromPromise<AttemptOutcome[], Omit<AttemptInput, "delivery"> & { deliveries: readonly OpenDelivery[] }>(
        async ({ input }) => {
          const outcomes: AttemptOutcome[] = [];
          // One POST per delivery, in order, so the trace (and any seeded draw) repeats.
          for (const delivery of input.deliveries) outcomes.push(await deps.attempt({ ...input, delivery }));
          return outcomes;
        },
      ),
      handOff: fromPromise<{ readonly accepted: boolean; readonly detail?: string }, SmtpHandOff>(({ input }) =>
        deps.handOff(input),
      ),
    },
    guards: {
      endpointFound: ({ event }) => (event as DoneEvent<DiscoveryOutcome>).output.kind === "endpoint",
      noCommonVersion: ({ context }) => context.lastAttempt?.kind === "no-common-version",
      /** G6: no record, and nothing so far forbade leaving the service (no 4xx, no per-recipient result). */
      noServiceWhileSmtpAllowed: ({ context }) =>
        context.lastAttempt?.kind === "no-service" && context.allAttemptsFallbackEligible,
      nothingPending: ({ context }) => pendingRecipients(context).length === 0,
      everyRecipientAccepted: ({ context }) =>
        pendingRecipients(context).length === 0 && context.outcomes.every((o) => o.outcome === "accepted"),
      fiveDaysElapsed: ({ context }) => now() >= giveUpAt(context),
      /** STATE-3: fallback-eligible, every attempt so far too, and this attempt made at or after the window's end. */
      fallbackEligibleAfterWindow: ({ context }) =>
        context.lastAttempt?.fallbackEligible === true &&
        context.allAttemptsFallbackEligible &&
        atOrAfterWindow(context, context.lastAttempt.atMs),
      /** STATE-2: fallback-eligible and still below the window (the flag's history decides nothing yet). */
      fallbackEligibleWithinWindow: ({ context }) =>
        context.lastAttempt?.fallbackEligible === true &&
        context.allAttemptsFallbackEligible &&
        !atOrAfterWindow(context, context.lastAttempt.atMs),
      hasDeferredRecipients: ({ context }) => context.waiting.some((w) => w.deferred),
      /** STATE-6: every POST of the attempt answered with per-recipient results, and the recipients left were deferred. */
      onlyDeferredPending: ({ context }) =>
        context.lastAttempt?.class === "results" && context.waiting.some((w) => w.deferred),
      /** ERR-23, ERR-24: a fallback-eligible failure, but an earlier attempt's answer ruled SMTP out for the message. */
      fallbackEligibleButSmtpRuledOut: ({ context }) =>
        context.lastAttempt?.fallbackEligible === true && !context.allAttemptsFallbackEligible,
    },
    delays: {
      retryDelay: ({ context }) => Math.max(0, (context.retryPlan?.atMs ?? now()) - now()),
      giveUpDelay: ({ context }) => Math.max(0, giveUpAt(context) - now()),
    },
    actions: {
      startAttempt: assign(({ context }) => {
        const atMs = now();
        return {
          attempts: context.attempts + 1,
          attemptAtMs: atMs,
          firstAttemptAtMs: context.firstAttemptAtMs ?? atMs,
          newOutcomes: [],
        };
      }),
      keepEndpoint: assign(({ event }) => {
        const outcome = (event as DoneEvent<DiscoveryOutcome>).output;
        return outcome.kind === "endpoint" ? { endpoint: outcome.endpoint } : {};
      }),
      /**
       * Mints a delivery with a new Idempotency-Key for the waiting recipients, in batches of `max_recipients` under G12 `split`
       * (under `misbehaviour.reuseIdempotencyKey`, a deferred recipient's new delivery keeps its previous delivery's key).
       */
      openDeliveries: assign(({ context }) => {
        if (context.waiting.length === 0 || context.endpoint === undefined) return {};
        const addresses = context.waiting.map((w) => w.address);
        const size = deps.readings.G12 === "split" ? context.endpoint.capabilities.max_recipients : addresses.length;
        const batches: string[][] = [];
        for (let i = 0; i < addresses.length; i += size) batches.push(addresses.slice(i, i + size));
        const deferred = context.waiting.some((w) => w.deferred);
        const reuseKeys = deps.misbehaviour?.reuseIdempotencyKey === true;
        const opened = batches.map((recipients, index): OpenDelivery => {
          const n = context.deliveriesMade + index + 1;
          // Drawn even when the misbehaviour discards it, so every other draw stays as a correct sender's.
          const freshKey = bytesToBase64Url(deps.random.bytes(18));
          const previous = reuseKeys
            ? recipients.map((r) => context.lastDeliveryOf?.[r]).find((d) => d !== undefined)
            : undefined;
          const delivery: OpenDelivery = {
            deliveryId: `${actorId(context)}#${n}`,
            idempotencyKey: previous?.idempotencyKey ?? freshKey,
            recipients,
            boundary: chooseBoundary(deps.random.bytes(24), context.message),
          };
          emit("delivery.created", {
            messageId: context.messageId,
            domain: context.domain,
            deliveryId: delivery.deliveryId,
            idempotencyKey: delivery.idempotencyKey,
            recipients,
            rule: deferred ? "STATE-6" : "POST-23",
            ...(deferred && { rules: ["STATE-6", "POST-27", "RCP-9"], gap: "G20" }),
            ...(batches.length > 1 && { batch: index + 1, batches: batches.length, maxRecipients: size, gap: "G12" }),
            ...(reuseKeys && { misbehaviour: { reuseIdempotencyKey: true } }),
            ...(previous !== undefined && { keyReusedFrom: previous.deliveryId, violates: ["STATE-6", "POST-27"] }),
          });
          return delivery;
        });
        const lastDeliveryOf = reuseKeys
          ? {
              lastDeliveryOf: Object.fromEntries([
                ...Object.entries(context.lastDeliveryOf ?? {}),
                ...opened.flatMap((d) =>
                  d.recipients.map((r) => [r, { deliveryId: d.deliveryId, idempotencyKey: d.idempotencyKey }] as const),
                ),
              ]),
            }
          : {};
        return {
          waiting: [],
          deliveries: [...context.deliveries, ...opened],
          deliveriesMade: context.deliveriesMade + opened.length,
          ...lastDeliveryOf,
        };
      }),
      recordDiscovery: assign(({ context, event }) => {
        const outcome = (event as DoneEvent<DiscoveryOutcome>).output;
        if (outcome.kind === "endpoint") return {};
        const summary = summarizeDiscovery(context, outcome, deps.problemBase);
        const lastProblems: Record<string, ProblemSummary> = { ...context.lastProblems };
        if (summary.problem !== undefined)
          for (const r of pendingRecipients(context)) lastProblems[r] = summary.problem;
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
      }),
      recordUnexpectedError: assign(({ context, event }, params: { stage: AttemptStage }) => {
        const error = (event as unknown as { error: unknown }).error;
        const problem: ProblemSummary = {
          type: problemType(deps.problemBase, "temporary_failure"),
          identifier: "temporary_failure",
          detail: `the sender failed: ${errorMessage(error)}`,
        };
        // A fault of the sender itself is no answer from the receiver: temporary, and not a reason to leave the service.
        return {
          lastAttempt: {
            attempt: context.attempts,
            atMs: context.attemptAtMs ?? now(),
            kind: "temporary-failure" as const,
            stage: params.stage,
            class: "temporary" as const,
            posts: 0,
            fallbackEligible: false,
            problem,
            rule: "ERR-24",
            gaps: [],
          },
          lastProblem: problem,
          allAttemptsFallbackEligible: false,
        };
      }),
      recordPosting: assign(({ context, event }) => {
        const posted = applyPosting(context, (event as DoneEvent<AttemptOutcome[]>).output, now());
        if (deps.plantedBug !== "replay-new-key") return posted;
        // The planted bug: a delivery kept for a request-level retry gets a new key (POST-24 says the same one).
        const deliveries = posted.deliveries.map((d) => ({
          ...d,
          idempotencyKey: bytesToBase64Url(deps.random.bytes(18)),
        }));
        return { ...posted, deliveries };
      }),
      /**
       * attempt.judged: every attempt once, whether it reached a POST or not, as the table's conditions read it; the
       * first also gives the actor's fallback window and give-up time (G16, RETRY-4, RETRY-6).
       */
      traceAttempt: ({ context }) => {
        const summary = context.lastAttempt;
        if (summary === undefined) return;
        const firstAtMs = context.firstAttemptAtMs ?? summary.atMs;
        const windowS = deps.readings.G16.fallbackWindowS;
        emit("attempt.judged", {
          deliveryActor: actorId(context),
          attempt: summary.attempt,
          startedAtMs: summary.atMs,
          endedAtMs: now(),
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
            giveUpAtMs: giveUpAtMs(firstAtMs, constants),
          }),
        });
      },
      traceNewOutcomes: ({ context }) => {
        for (const o of context.newOutcomes) {
          emit("recipient.outcome", {
            messageId: context.messageId,
            recipient: o.recipient,
            outcome: o.outcome,
            rule: o.rule,
            ...(o.gaps.length > 0 && { gaps: o.gaps }),
            ...(o.deliveryId !== undefined && { deliveryId: o.deliveryId }),
            ...(o.problem !== undefined && { problem: o.problem.type }),
          });
        }
      },
      /** G14, G31 and the bounce: one DSN for the recipients that just failed for good; none for a null sender. */
      reportNewFailures: ({ context }) => {
        const recipients = failedRecipients(context, context.newOutcomes);
        if (recipients.length === 0 || context.from === null) return;
        deps.reportFailures({
          messageId: context.messageId,
          from: context.from,
          message: context.message,
          arrivalAtMs: context.submittedAtMs,
          domain: context.domain,
          recipients,
        });
      },
      planRetry: assign(({ context }) => {
        const plan = planRetry({
          attempts: context.attempts,
          lastAttemptAtMs: context.attemptAtMs ?? now(),
          nowMs: now(),
          ...(context.lastAttempt?.lowerBoundMs !== undefined && { lowerBoundMs: context.lastAttempt.lowerBoundMs }),
          ...(deps.readings.G16.jitter && { jitter: deps.random }),
          constants,
        });
        return { retryPlan: plan };
      }),
      traceTimerSet: ({ context }) => {
        const plan = context.retryPlan;
        if (plan === undefined) return;
        emit("timer.set", {
          deliveryActor: actorId(context),
          atMs: plan.atMs,
          delayMs: plan.atMs - now(),
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
          giveUpAtMs: giveUpAt(context),
          rule: plan.decidedBy === "retry-after" ? "RETRY-7" : plan.retry === 1 ? "RETRY-1" : "RETRY-2",
          gap: "G16",
        });
      },
      traceTimerFired: ({ context }) => {
        const retry = context.retryPlan?.retry;
        emit("timer.fired", {
          deliveryActor: actorId(context),
          retry,
          ...(retry !== undefined && { attempt: retry + 1 }),
        });
      },
      chooseSmtpForNoCommonVersion: assign({
        smtp: () => ({ reason: "no-common-version" as const, rule: "STATE-4", gaps: ["G32"] }),
      }),
      chooseSmtpForFallback: assign({ smtp: () => ({ reason: "fallback" as const, rule: "STATE-3", gaps: ["G16"] }) }),
      chooseSmtpForNoService: assign({
        smtp: ({ context }) => ({
          reason: "no-service" as const,
          rule: "SVC-11",
          gaps: context.lastAttempt?.gaps ?? ["G6"],
        }),
      }),
      recordHandOff: assign(({ context, event }) => {
        const result = (event as DoneEvent<{ accepted: boolean; detail?: string }>).output as
          { accepted: boolean; detail?: string } | undefined;
        const atMs = now();
        const smtp = context.smtp ?? { reason: "fallback" as const, rule: "STATE-3", gaps: [] };
        const newOutcomes = pendingRecipients(context).map((recipient): RecipientOutcome => ({
          recipient,
          outcome: "smtp",
          rule: smtp.rule,
          gaps: [...smtp.gaps, "G18"],
          atMs,
        }));
        emit("smtp.handoff", {
          messageId: context.messageId,
          recipients: newOutcomes.map((o) => o.recipient),
          reason: smtp.reason,
          rule: smtp.rule,
          accepted: result?.accepted ?? false,
          ...(result?.detail !== undefined && { detail: result.detail }),
        });
        return { waiting: [], deliveries: [], outcomes: [...context.outcomes, ...newOutcomes], newOutcomes };
      }),
      bouncePending: assign(({ context }) => {
        const atMs = now();
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
        emit("delivery.bounced", {
          messageId: context.messageId,
          domain: context.domain,
          recipients: newOutcomes.map((o) => o.recipient),
          firstAttemptAtMs: context.firstAttemptAtMs,
          attempts: context.attempts,
          rule: "STATE-7",
        });
        return { waiting: [], deliveries: [], outcomes: [...context.outcomes, ...newOutcomes], newOutcomes };
      }),
    },
  }).createMachine({
    id: "delivery",
    context: ({ input }) => ({
      ...input,
      attempts: 0,
      allAttemptsFallbackEligible: true,
      waiting: input.recipients.map((address) => ({ address, deferred: false })),
      deliveries: [],
      deliveriesMade: 0,
      outcomes: [],
      newOutcomes: [],
      lastProblems: {},
    }),
    initial: "attemptingOverService",
    states: {
      attemptingOverService: {
        tags: ["busy"],
        entry: "startAttempt",
        initial: "discovering",
        states: {
          discovering: {
            invoke: {
              src: "discover",
              input: ({ context }) => ({ domain: context.domain, deliveryActor: actorId(context) }),
              onDone: [
                {
                  guard: "endpointFound",
                  target: "posting",
                  actions: ["keepEndpoint", "openDeliveries"],
                  meta: meta({ name: "postToEndpoint", rules: ["SVC-5", "VER-5", "GET-8"] }),
                },
                {
                  target: "judging",
                  actions: "recordDiscovery",
                  meta: meta({ name: "discoveryEnded", rules: ["SVC-5"] }),
                },
              ],
              onError: {
                target: "judging",
                actions: { type: "recordUnexpectedError", params: { stage: "discovery" } },
                meta: meta({ name: "senderFault", rules: ["ERR-24"] }),
              },
            },
          },
          posting: {
            invoke: {
              src: "post",
              input: ({ context }) => ({
                deliveries: context.deliveries,
                from: context.from,
                message: context.message,
                // `endpoint` is set by the transition into this state.
                endpoint: context.endpoint as Endpoint,
                attempt: context.attempts,
              }),
              onDone: {
                target: "judging",
                actions: ["recordPosting", "traceNewOutcomes", "reportNewFailures"],
                meta: meta({ name: "answersRead", rules: ["POST-11", "ERR-17", "ERR-18", "ERR-19"] }),
              },
              onError: {
                target: "judging",
                actions: { type: "recordUnexpectedError", params: { stage: "post" } },
                meta: meta({ name: "senderFault", rules: ["ERR-24"] }),
              },
            },
          },
          /** The table's conditions, in the order they take precedence. */
          judging: {
            entry: "traceAttempt",
            always: [
              {
                guard: "noCommonVersion",
                target: "#delivery.handingToSmtp",
                actions: "chooseSmtpForNoCommonVersion",
                meta: meta({
                  name: "handOffNoCommonVersion",
                  row: 3,
                  rules: ["STATE-4", "ERR-26", "VER-5"],
                  gaps: ["G32"],
                }),
              },
              {
                guard: "noServiceWhileSmtpAllowed",
                target: "#delivery.handingToSmtp",
                actions: "chooseSmtpForNoService",
                meta: meta({ name: "deliverByPlainSmtp", rules: ["SVC-11", "SVC-5"], gaps: ["G6", "G8"] }),
              },
              {
                guard: "everyRecipientAccepted",
                target: "#delivery.finished",
                meta: meta({ name: "finishAllAccepted", rules: ["POST-11", "RCP-2"] }),
              },
              {
                guard: "nothingPending",
                target: "#delivery.finished",
                meta: meta({
                  name: "finishNothingPending",
                  row: 8,
                  rules: ["STATE-9", "RCP-7", "RCP-8"],
                  gaps: ["G14", "G31"],
                }),
              },
              {
                guard: "fiveDaysElapsed",
                target: "#delivery.bounced",
                meta: meta({ name: "giveUpAfterAttempt", row: 6, rules: ["STATE-7", "RETRY-6"] }),
              },
              {
                guard: "onlyDeferredPending",
                target: "#delivery.retryScheduled",
                actions: "planRetry",
                meta: meta({
                  name: "retryDeferredRecipients",
                  row: 5,
                  rules: ["STATE-6", "RCP-9", "ERR-23", "RETRY-8"],
                  gaps: ["G16", "G20"],
                }),
              },
              {
                guard: "fallbackEligibleAfterWindow",
                target: "#delivery.handingToSmtp",
                actions: "chooseSmtpForFallback",
                meta: meta({
                  name: "fallBackToSmtpAfterWindow",
                  row: 2,
                  rules: ["STATE-3", "ERR-22", "ERR-25", "RETRY-4"],
                  gaps: ["G16"],
                }),
              },
              {
                guard: "fallbackEligibleWithinWindow",
                target: "#delivery.retryScheduled",
                actions: "planRetry",
                meta: meta({
                  name: "retryWithinFallbackWindow",
                  row: 1,
                  rules: ["STATE-2", "ERR-21", "RETRY-8"],
                  gaps: ["G16"],
                }),
              },
              {
                guard: "fallbackEligibleButSmtpRuledOut",
                target: "#delivery.retryScheduled",
                actions: "planRetry",
                meta: meta({
                  name: "retrySmtpRuledOut",
                  rules: ["ERR-24", "ERR-23", "RETRY-8"],
                  gaps: ["G16"],
                }),
              },
              {
                target: "#delivery.retryScheduled",
                actions: "planRetry",
                meta: meta({
                  name: "retryNotFallbackEligible",
                  row: 4,
                  rules: ["STATE-5", "ERR-23", "ERR-24", "RETRY-8"],
                  gaps: ["G16"],
                }),
              },
            ],
          },
        },
      },
      retryScheduled: {
        entry: "traceTimerSet",
        after: {
          // Listed first, so that at the same instant the give-up wins.
          giveUpDelay: {
            target: "bounced",
            meta: meta({ name: "giveUpWhileRetrying", row: 6, rules: ["STATE-7", "RETRY-6"] }),
          },
          retryDelay: [
            {
              guard: "hasDeferredRecipients",
              target: "attemptingOverService",
              actions: "traceTimerFired",
              meta: meta({
                name: "retryDeferredAsNewDelivery",
                row: 5,
                rules: ["STATE-6", "POST-27", "RCP-9", "RETRY-8"],
                gaps: ["G16", "G20"],
              }),
            },
            {
              target: "attemptingOverService",
              actions: "traceTimerFired",
              meta: meta({
                name: "retrySameDelivery",
                rules: ["POST-24", "RETRY-1", "RETRY-2", "RETRY-7"],
                gaps: ["G16"],
              }),
            },
          ],
        },
      },
      handingToSmtp: {
        tags: ["busy"],
        invoke: {
          src: "handOff",
          input: ({ context }) => ({
            messageId: context.messageId,
            from: context.from,
            to: pendingRecipients(context),
            message: context.message,
            reason: context.smtp?.reason ?? "fallback",
          }),
          onDone: {
            target: "handedToSmtp",
            actions: ["recordHandOff", "traceNewOutcomes"],
            meta: meta({ name: "handedOver", rules: ["SVC-11"], gaps: ["G18"] }),
          },
          onError: {
            target: "handedToSmtp",
            actions: ["recordHandOff", "traceNewOutcomes"],
            meta: meta({ name: "handedOver", rules: ["SVC-11"], gaps: ["G18"] }),
          },
        },
      },
      handedToSmtp: { type: "final" },
      finished: { type: "final" },
      bounced: { type: "final", entry: ["bouncePending", "traceNewOutcomes", "reportNewFailures"] },
    },
  });
}

/** The machine's type, for actor refs. */
export type DeliveryMachine = ReturnType<typeof createDeliveryMachine>;
