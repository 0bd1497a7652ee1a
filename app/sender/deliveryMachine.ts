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
 *
 * The machine is one module-level definition (`deliveryMachine`), read as it
 * is by the graph (machineGraph.ts) and the statechart view. Its ports and
 * settings come with each actor's input (`deps`, kept in the context's `input`), so
 * nothing closes over them. Each action is one step: what it does to the
 * context is in deliverySteps.ts, the times it compares in deliveryTimes.ts,
 * the trace event it emits in deliveryTrace.ts (one named `trace…` action per
 * event), and the context's types in deliveryContext.ts. An action that
 * reads what an invoked actor returned takes it as `params` from the
 * transition, where XState types the done event's `output`.
 */
import { assign, fromPromise, setup } from "xstate";
import type { SmtpHandOff } from "../ports.ts";
import type { AttemptInput, AttemptOutcome, OpenDelivery } from "./attempt.ts";
import { deliveryActorId, initialDeliveryContext, pendingRecipients } from "./deliveryContext.ts";
import type {
  AttemptStage,
  DeliveryContext,
  DeliveryInput,
  DeliveryMachineDeps,
  TransitionMeta,
} from "./deliveryContext.ts";
import {
  bouncePending,
  failedRecipients,
  handOffPending,
  openDeliveries,
  recordDiscovery,
  recordPosting,
  recordSenderFault,
} from "./deliverySteps.ts";
import { atOrAfterWindow, giveUpAt, nextRetry } from "./deliveryTimes.ts";
import {
  attemptJudged,
  deliveryBounced,
  deliveryCreated,
  emitTrace,
  recipientOutcomes,
  smtpHandOff,
  timerFired,
  timerSet,
  type HandOffAnswer,
} from "./deliveryTrace.ts";
import type { DiscoveryOutcome, Endpoint } from "./discovery.ts";

const now = (context: Pick<DeliveryContext, "input">): number => context.input.deps.clock.now();
const actorId = (context: Pick<DeliveryContext, "input">): string =>
  deliveryActorId(context.input.messageId, context.input.domain);
/** A transition's meta, its lists frozen: the trace's recorder shares a frozen list with every event that cites it (0185). */
const meta = (m: TransitionMeta): TransitionMeta =>
  Object.freeze({
    ...m,
    rules: Object.freeze([...m.rules]),
    ...(m.gaps !== undefined && { gaps: Object.freeze([...m.gaps]) }),
  });

/** A port that threw during discovery or the POSTs: the attempt is judged a fault of the sender itself (ERR-24). */
const senderFault = (stage: "discovery" | "post") => ({
  target: "judging",
  actions: {
    type: "recordUnexpectedError" as const,
    params: ({ event }: { readonly event: { readonly error: unknown } }) => ({ stage, error: event.error }),
  },
  meta: meta({ name: "senderFault", rules: ["ERR-24"] }),
});

/** The POSTs of one attempt: the open deliveries, over the endpoint discovery found. */
type PostInput = Omit<AttemptInput, "delivery"> & {
  readonly deliveries: readonly OpenDelivery[];
  readonly deps: DeliveryMachineDeps;
};

/**
 * The delivery machine. Run one actor per (message, domain) with
 * `createActor(deliveryMachine, { input, clock })`: `input.deps` holds the
 * sender's ports and settings, and the clock must be the Clock `deps.clock`
 * reads, so that XState's timers and the machine's times agree.
 */
export const deliveryMachine = setup({
  types: {
    context: {} as DeliveryContext,
    input: {} as DeliveryInput,
    meta: {} as TransitionMeta,
  },
  actors: {
    discover: fromPromise<
      DiscoveryOutcome,
      { readonly domain: string; readonly deliveryActor: string; readonly deps: DeliveryMachineDeps }
    >(({ input }) => input.deps.discover(input.domain, input.deliveryActor)),
    post: fromPromise<AttemptOutcome[], PostInput>(async ({ input }) => {
      const { deps, from, message, endpoint, attempt } = input;
      const outcomes: AttemptOutcome[] = [];
      // One POST per delivery, in order, so the trace (and any seeded draw) repeats. Each attempt's input is
      // built from its fields (no rest and spread of the whole input per POST: decision 0240).
      for (const delivery of input.deliveries)
        outcomes.push(await deps.attempt({ delivery, from, message, endpoint, attempt }));
      return outcomes;
    }),
    handOff: fromPromise<HandOffAnswer, { readonly handOff: SmtpHandOff; readonly deps: DeliveryMachineDeps }>(
      ({ input }) => input.deps.handOff(input.handOff),
    ),
  },
  guards: {
    endpointFound: (_, params: { outcome: DiscoveryOutcome }) => params.outcome.kind === "endpoint",
    noCommonVersion: ({ context }) => context.lastAttempt?.kind === "no-common-version",
    /** G6: no record, and nothing so far forbade leaving the service (no 4xx, no per-recipient result). */
    noServiceWhileSmtpAllowed: ({ context }) =>
      context.lastAttempt?.kind === "no-service" && context.allAttemptsFallbackEligible,
    nothingPending: ({ context }) => pendingRecipients(context).length === 0,
    everyRecipientAccepted: ({ context }) =>
      pendingRecipients(context).length === 0 && context.outcomes.every((o) => o.outcome === "accepted"),
    fiveDaysElapsed: ({ context }) => now(context) >= giveUpAt(context, now(context)),
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
    retryDelay: ({ context }) => Math.max(0, (context.retryPlan?.atMs ?? now(context)) - now(context)),
    giveUpDelay: ({ context }) => Math.max(0, giveUpAt(context, now(context)) - now(context)),
  },
  actions: {
    // The context's steps (deliverySteps.ts, deliveryTimes.ts).
    startAttempt: assign(({ context }) => {
      const atMs = now(context);
      return {
        attempts: context.attempts + 1,
        attemptAtMs: atMs,
        firstAttemptAtMs: context.firstAttemptAtMs ?? atMs,
        newOutcomes: [],
      };
    }),
    /** The endpoint kept and the deliveries to it opened in one `assign`: one copy of the context, not two (0205). */
    openDeliveries: assign(({ context }, params: { outcome: DiscoveryOutcome }) =>
      params.outcome.kind === "endpoint"
        ? openDeliveries(context, params.outcome.endpoint, context.input.deps.random)
        : {},
    ),
    recordDiscovery: assign(({ context }, params: { outcome: DiscoveryOutcome }) =>
      recordDiscovery(context, params.outcome),
    ),
    recordUnexpectedError: assign(({ context }, params: { stage: AttemptStage; error: unknown }) =>
      recordSenderFault(context, params.stage, params.error, now(context)),
    ),
    recordPosting: assign(({ context }, params: { outcomes: readonly AttemptOutcome[] }) =>
      recordPosting(context, params.outcomes, now(context)),
    ),
    planRetry: assign(({ context }) => ({ retryPlan: nextRetry(context, now(context)) })),
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
    recordHandOff: assign(({ context }) => handOffPending(context, now(context))),
    bouncePending: assign(({ context }) => bouncePending(context, now(context))),
    // The trace's events (deliveryTrace.ts), each emitted by an action of its own.
    traceDeliveriesCreated: ({ context }) => {
      for (const opened of context.newDeliveries)
        emitTrace(context, "delivery.created", deliveryCreated(context, opened));
    },
    traceAttempt: ({ context }) => {
      const data = attemptJudged(context, now(context));
      if (data !== undefined) emitTrace(context, "attempt.judged", data);
    },
    traceNewOutcomes: ({ context }) => {
      for (const data of recipientOutcomes(context)) emitTrace(context, "recipient.outcome", data);
    },
    traceTimerSet: ({ context }) => {
      const data = timerSet(context, now(context));
      if (data !== undefined) emitTrace(context, "timer.set", data);
    },
    traceTimerFired: ({ context }) => emitTrace(context, "timer.fired", timerFired(context)),
    traceHandOff: ({ context }, params: { answer: HandOffAnswer | undefined }) =>
      emitTrace(context, "smtp.handoff", smtpHandOff(context, params.answer)),
    traceBounce: ({ context }) => emitTrace(context, "delivery.bounced", deliveryBounced(context)),
    /** G14, G31 and the bounce: one DSN for the recipients that just failed for good; none for a null sender. */
    reportNewFailures: ({ context }) => {
      const recipients = failedRecipients(context, context.newOutcomes);
      if (recipients.length === 0 || context.input.from === null) return;
      context.input.deps.reportFailures({
        messageId: context.input.messageId,
        from: context.input.from,
        message: context.input.message,
        arrivalAtMs: context.input.submittedAtMs,
        domain: context.input.domain,
        recipients,
      });
    },
  },
}).createMachine({
  id: "delivery",
  context: ({ input }) => initialDeliveryContext(input),
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
            input: ({ context }) => ({
              domain: context.input.domain,
              deliveryActor: actorId(context),
              deps: context.input.deps,
            }),
            onDone: [
              {
                guard: { type: "endpointFound", params: ({ event }) => ({ outcome: event.output }) },
                target: "posting",
                actions: [
                  { type: "openDeliveries", params: ({ event }) => ({ outcome: event.output }) },
                  "traceDeliveriesCreated",
                ],
                meta: meta({ name: "postToEndpoint", rules: ["SVC-5", "VER-5", "GET-8"] }),
              },
              {
                target: "judging",
                actions: { type: "recordDiscovery", params: ({ event }) => ({ outcome: event.output }) },
                meta: meta({ name: "discoveryEnded", rules: ["SVC-5"] }),
              },
            ],
            onError: senderFault("discovery"),
          },
        },
        posting: {
          invoke: {
            src: "post",
            input: ({ context }) => ({
              deliveries: context.deliveries,
              from: context.input.from,
              message: context.input.message,
              // `endpoint` is set by the transition into this state.
              endpoint: context.endpoint as Endpoint,
              attempt: context.attempts,
              deps: context.input.deps,
            }),
            onDone: {
              target: "judging",
              actions: [
                { type: "recordPosting", params: ({ event }) => ({ outcomes: event.output }) },
                "traceNewOutcomes",
                "reportNewFailures",
              ],
              meta: meta({ name: "answersRead", rules: ["POST-11", "ERR-17", "ERR-18", "ERR-19"] }),
            },
            onError: senderFault("post"),
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
          handOff: {
            messageId: context.input.messageId,
            from: context.input.from,
            to: pendingRecipients(context),
            message: context.input.message,
            reason: context.smtp?.reason ?? "fallback",
          },
          deps: context.input.deps,
        }),
        onDone: {
          target: "handedToSmtp",
          actions: [
            "recordHandOff",
            { type: "traceHandOff", params: ({ event }) => ({ answer: event.output }) },
            "traceNewOutcomes",
          ],
          meta: meta({ name: "handedOver", rules: ["SVC-11"], gaps: ["G18"] }),
        },
        onError: {
          target: "handedToSmtp",
          // The relay port failed: no answer, so not accepted.
          actions: ["recordHandOff", { type: "traceHandOff", params: { answer: undefined } }, "traceNewOutcomes"],
          meta: meta({ name: "handedOver", rules: ["SVC-11"], gaps: ["G18"] }),
        },
      },
    },
    handedToSmtp: { type: "final" },
    finished: { type: "final" },
    bounced: { type: "final", entry: ["bouncePending", "traceBounce", "traceNewOutcomes", "reportNewFailures"] },
  },
});

/** The machine's type, for actor refs. */
export type DeliveryMachine = typeof deliveryMachine;
