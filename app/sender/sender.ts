/**
 * A sending domain's outbound side: takes messages, groups their recipients by
 * domain, and runs one delivery actor per (message, recipient domain)
 * (`deliveryMachine.ts`) over the ports it is given. The simulator hands it a
 * virtual clock, a seeded Random, a DNS zone and an in-process network; the
 * real network hands it the system's. DSNs for failures go back through the
 * same sender, as normal messages with a null `from` (EVT-3, G14, G31); the
 * failure of a DSN is never reported by another DSN, whatever `from` it was
 * given: a wrong `from` would otherwise make DSNs about DSNs until memory ran out (note 0032).
 */
import { createActor } from "xstate";
import type { Actor, AnyMachineSnapshot, InspectionEvent } from "xstate";
import type { Clock, Fetch, Random, Resolver, SmtpRelay, TraceSink } from "../ports.ts";
import { noTrace, traceEvent } from "../ports.ts";
import type { Emit, EmitData } from "../trace/events.ts";
import { bytesToHex } from "../protocol/base64.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import { SUPPORTED_VERSIONS } from "../protocol/versions.ts";
import { attemptDelivery } from "./attempt.ts";
import { createCapabilitiesCache } from "./capabilitiesCache.ts";
import type { CapabilitiesCache } from "./capabilitiesCache.ts";
import { deliveryActorId } from "./deliveryContext.ts";
import type { DeliveryMachineDeps, RecipientOutcome, SenderMisbehaviour, TransitionMeta } from "./deliveryContext.ts";
import { deliveryMachine } from "./deliveryMachine.ts";
import type { DeliveryMachine } from "./deliveryMachine.ts";
import { discover } from "./discovery.ts";
import { buildFailureReport } from "./dsnReports.ts";
import type { FailureReport } from "./dsnReports.ts";
import type { PlantedBug } from "./plantedBugs.ts";
import { defaultReadings, readingsForTrace } from "./readings.ts";
import type { SenderReadings } from "./readings.ts";
import { checkFallbackWindowS } from "./retrySchedule.ts";
import { SPEC_CONSTANTS, type SpecConstants } from "../protocol/specConstants.ts";
import { initialStatePath, statePath } from "./statePath.ts";
import { isDsnMessage } from "../protocol/dsn.ts";

export interface SenderConfig {
  /** The sending (and signing) domain. */
  readonly domain: string;
  /** The Ed25519 private key that signs deliveries (G1). */
  readonly signingKey: CryptoKey;
  /** `<selector>._svckey.<domain>` (G4). */
  readonly keyid: string;
  /** The `{problem_base}` under which problem types are read. */
  readonly problemBase: string;
  /** Major versions spoken; default `["v1"]`. */
  readonly versions?: readonly string[];
  /** Readings of the switchable gaps; each one left out keeps its default. */
  readonly readings?: Partial<SenderReadings>;
  /**
   * The draft's numbers (retry schedule, fallback window bounds, give-up,
   * capabilities lifetimes, pin cap); default SPEC.md's ({@link SPEC_CONSTANTS}).
   */
  readonly constants?: SpecConstants;
  /**
   * Production use: the fallback window must be within 1 to 4 hours (RETRY-5),
   * and a config outside it is refused. Default true; a simulation exploring
   * the spec may turn it off.
   */
  readonly production?: boolean;
  /**
   * Deliberate misbehaviours, for teaching only (`reuseIdempotencyKey`: a
   * deferred recipient's new delivery reuses the old key, and is answered 409;
   * `dsnFromPostmaster`: its DSNs are sent from postmaster@ instead of the null
   * reverse-path). Default none: a correct sender.
   */
  readonly misbehaviour?: SenderMisbehaviours;
  /** A bug planted by a test harness (plantedBugs.ts); never set from a scenario. Default none. */
  readonly plantedBug?: PlantedBug;
  /**
   * Keep each delivery actor in {@link Sender.actors} after it finished
   * (its snapshot, context and message bytes). Default true; a simulation,
   * whose trace already says everything about a finished delivery, turns it
   * off so that its memory follows the deliveries in flight, not all of them.
   */
  readonly keepFinishedActors?: boolean;
  /**
   * @internal Test seam, default true: false lets a DSN's failure be reported
   * by another DSN. Only the test of the world's event budget turns it off, to
   * have a loop to stop.
   */
  readonly guardDsnLoops?: boolean;
}

/** The sender's misbehaviours: the delivery machine's, and one of its own DSNs. */
export interface SenderMisbehaviours extends SenderMisbehaviour {
  /**
   * true: the DSNs this sender sends carry `from: postmaster@<domain>` instead of
   * the null reverse-path (breaks ENV-3). A DSN that fails would be reported by
   * another DSN, and that by another, without end; the sender stops at the first
   * (`dsn.suppressed`).
   */
  readonly dsnFromPostmaster?: boolean;
}

export interface SenderPorts {
  /** Also the actors' XState `clock`, so virtual time drives the retry timers. */
  readonly clock: Clock;
  /**
   * The clock a signature's `created` is read from (default `clock`): the wall clock, when `clock` runs the
   * spec's schedule faster than real time (`mailscope send --clock-scale`), for the receiver reads its own.
   */
  readonly signingClock?: Pick<Clock, "now">;
  /** Jitter, Idempotency-Keys, boundaries, message ids. */
  readonly random: Random;
  readonly resolver: Resolver;
  readonly fetch: Fetch;
  readonly smtp: SmtpRelay;
  readonly trace?: TraceSink;
}

/** A message to send. */
export interface Submission {
  /** An id for the trace; drawn from Random when left out. */
  readonly messageId?: string;
  /** Envelope sender; null for the null reverse-path (DSNs, ENV-3). */
  readonly from: string | null;
  readonly to: readonly string[];
  /** The RFC 5322 message, sent byte for byte (POST-9). */
  readonly message: Uint8Array;
}

/** What `submit` returns: the message's id and its recipients' outcomes. */
export interface SubmissionHandle {
  readonly messageId: string;
  /** Resolves with every recipient's final outcome, once each has one. */
  readonly done: Promise<readonly RecipientOutcome[]>;
  /** The final outcomes known so far. */
  outcomes(): readonly RecipientOutcome[];
}

/** One delivery actor, for inspection (the UI's state-machine view). */
export interface DeliveryActorEntry {
  /** `<messageId>→<domain>`, as the trace names it. */
  readonly id: string;
  readonly messageId: string;
  readonly domain: string;
  readonly actor: Actor<DeliveryMachine>;
}

export interface Sender {
  readonly domain: string;
  /** The readings in force, every gap filled in. */
  readonly readings: SenderReadings;
  /** The capabilities cache and pin store, per receiving domain. */
  readonly cache: CapabilitiesCache;
  submit(submission: Submission): SubmissionHandle;
  /** Resolves when no actor has work under way (each waits on a timer or is final). */
  whenIdle(): Promise<void>;
  actors(): readonly DeliveryActorEntry[];
  /** Stops every actor and its timers; DSNs not yet submitted are dropped. */
  stop(): void;
}

function mergeReadings(readings: Partial<SenderReadings> | undefined): SenderReadings {
  return {
    ...defaultReadings,
    ...readings,
    retryTiming: { ...defaultReadings.retryTiming, ...readings?.retryTiming },
  };
}

/**
 * A sender for `config.domain` over `ports`.
 *
 * @throws RangeError when the fallback window breaks RETRY-5 in production.
 */
export function createSender(config: SenderConfig, ports: SenderPorts): Sender {
  const readings = mergeReadings(config.readings);
  const constants = config.constants ?? SPEC_CONSTANTS;
  checkFallbackWindowS(readings.retryTiming.fallbackWindowS, config.production ?? true, constants);
  const trace = ports.trace ?? noTrace;
  const versions = config.versions ?? SUPPORTED_VERSIONS;
  const cache = createCapabilitiesCache(ports.clock, constants);
  const entries: DeliveryActorEntry[] = [];
  const keepFinished = config.keepFinishedActors ?? true;
  let waiters: (() => void)[] = [];
  const emit: Emit = (name, data) => trace.emit(traceEvent(name, ports.clock.now(), data, config.domain));

  let dsnsQueued = 0;
  let stopped = false;
  const idle = (): boolean =>
    dsnsQueued === 0 &&
    entries.every(({ actor }) => {
      const snapshot = actor.getSnapshot();
      return snapshot.status !== "active" || !snapshot.hasTag("busy");
    });
  const wakeIfIdle = (): void => {
    if (waiters.length === 0 || !idle()) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  const guardDsnLoops = config.guardDsnLoops ?? true;
  const reportFailures = (report: FailureReport): void => {
    // RFC 5321 §4.5.5, ENV-3: a DSN's failure is never reported by another DSN, whatever its `from` says.
    if (guardDsnLoops && isDsnMessage(report.message)) {
      emit("dsn.suppressed", {
        messageId: report.messageId,
        recipients: report.recipients.map((r) => r.recipient),
        rule: "ENV-3",
      });
      return;
    }
    const dsn = buildFailureReport(report, {
      reportingDomain: config.domain,
      nowMs: ports.clock.now(),
      random: ports.random,
    });
    if (dsn === undefined) return;
    const reason = report.recipients.some((r) => r.kind === "bounced") ? "bounced" : "rejected";
    emit("dsn.sent", {
      messageId: report.messageId,
      dsnMessageId: dsn.dsnMessageId,
      to: dsn.to,
      reason,
      recipients: report.recipients.map((r) => r.recipient),
      rule: reason === "bounced" ? "EVT-3" : "EVT-4",
      gaps: [...new Set(["G29", ...report.recipients.flatMap((r) => r.gaps ?? [])])],
    });
    // Submitted once the reporting actor's step is over: starting an actor inside another's action is not XState's way.
    dsnsQueued += 1;
    queueMicrotask(() => {
      dsnsQueued -= 1;
      if (stopped) return;
      const from = config.misbehaviour?.dsnFromPostmaster === true ? `postmaster@${config.domain}` : null;
      sender.submit({ messageId: dsn.dsnMessageId, from, to: [dsn.to], message: dsn.bytes });
      wakeIfIdle();
    });
  };

  const deps = deliveryDeps(config, ports, { trace, readings, constants, versions, cache, reportFailures });

  const sender: Sender = {
    domain: config.domain,
    readings,
    cache,
    submit(submission) {
      const submittedAtMs = ports.clock.now();
      const messageId = submission.messageId ?? `${bytesToHex(ports.random.bytes(12))}@${config.domain}`;
      emit("message.submitted", {
        messageId,
        from: submission.from,
        to: submission.to,
        readings: readingsForTrace(readings),
      });

      const { byDomain, local } = recipientsByDomain(submission.to, submittedAtMs);
      for (const o of local)
        emit("recipient.outcome", { messageId, recipient: o.recipient, outcome: o.outcome, rule: o.rule });
      if (local.length > 0 && submission.from !== null) {
        reportFailures({
          messageId,
          from: submission.from,
          message: submission.message,
          arrivalAtMs: submittedAtMs,
          domain: "",
          recipients: local.map((o) => ({
            recipient: o.recipient,
            kind: "rejected",
            permanent: true,
            rule: o.rule,
            gaps: [],
          })),
        });
      }

      const started: Actor<DeliveryMachine>[] = [];
      const donePromises: Promise<readonly RecipientOutcome[]>[] = [];
      for (const [domain, recipients] of byDomain) {
        const id = deliveryActorId(messageId, domain);
        // Before start(): starting runs the first attempt's discovery, whose events come after this one.
        emit("machine.started", {
          deliveryActor: id,
          machine: deliveryMachine.id,
          state: INITIAL_STATE,
          messageId,
          domain,
          recipients,
        });
        const actor = createActor(deliveryMachine, {
          id,
          input: {
            deps,
            messageId,
            domain,
            from: submission.from,
            message: submission.message,
            recipients,
            submittedAtMs,
          },
          clock: ports.clock,
          inspect: transitionTracer(emit, id),
        });
        const entry: DeliveryActorEntry = { id, messageId, domain, actor };
        entries.push(entry);
        const finished = (): void => {
          if (keepFinished) return;
          const at = entries.indexOf(entry);
          if (at >= 0) entries.splice(at, 1);
        };
        donePromises.push(
          new Promise((resolve) => {
            actor.subscribe({
              next: (snapshot) => {
                if (snapshot.status === "done") {
                  resolve(snapshot.context.outcomes);
                  finished();
                }
                wakeIfIdle();
              },
              error: () => {
                resolve(actor.getSnapshot().context.outcomes);
                finished();
                wakeIfIdle();
              },
              complete: () => wakeIfIdle(),
            });
          }),
        );
        started.push(actor);
      }
      for (const actor of started) actor.start();

      return {
        messageId,
        done: Promise.all(donePromises).then((lists) => [...local, ...lists.flat()]),
        outcomes: () => [...local, ...started.flatMap((a) => a.getSnapshot().context.outcomes)],
      };
    },
    whenIdle() {
      if (idle()) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    actors: () => [...entries],
    stop() {
      stopped = true;
      for (const { actor } of entries) actor.stop();
      wakeIfIdle();
    },
  };
  return sender;
}

/** What a sender's delivery actors share: the ports and settings in their input. */
function deliveryDeps(
  config: SenderConfig,
  ports: SenderPorts,
  shared: {
    readonly trace: TraceSink;
    readonly readings: SenderReadings;
    readonly constants: SpecConstants;
    readonly versions: readonly string[];
    readonly cache: CapabilitiesCache;
    readonly reportFailures: (report: FailureReport) => void;
  },
): DeliveryMachineDeps {
  const { trace, readings, constants, versions, cache, reportFailures } = shared;
  return {
    clock: ports.clock,
    random: ports.random,
    trace,
    readings,
    constants,
    senderDomain: config.domain,
    problemBase: config.problemBase,
    discover: (domain, deliveryActor) =>
      discover(
        domain,
        {
          resolver: ports.resolver,
          fetch: ports.fetch,
          clock: ports.clock,
          cache,
          trace,
          readings,
          constants,
          versions,
          problemBase: config.problemBase,
          senderDomain: config.domain,
        },
        deliveryActor,
      ),
    attempt: (input) =>
      attemptDelivery(input, {
        fetch: ports.fetch,
        clock: ports.clock,
        ...(ports.signingClock !== undefined && { signingClock: ports.signingClock }),
        trace,
        privateKey: config.signingKey,
        keyid: config.keyid,
        problemBase: config.problemBase,
        readings,
        senderDomain: config.domain,
        ...(config.plantedBug !== undefined && { plantedBug: config.plantedBug }),
      }),
    handOff: (handOff) => ports.smtp.handOff(handOff),
    reportFailures,
    ...(config.misbehaviour !== undefined && { misbehaviour: config.misbehaviour }),
    ...(config.plantedBug !== undefined && { plantedBug: config.plantedBug }),
  };
}

/** The path of the leaf every delivery actor starts in. */
const INITIAL_STATE = initialStatePath(deliveryMachine);

/** One copy of each event type the machine's transitions name (a handful), held by all their events. */
const eventTypes = new Map<string, string>();

/**
 * `type` as the first copy of it seen: XState builds `xstate.done.actor.<id>` anew for each event it sends, the
 * same few texts ~80 bytes each, which the trace kept for each of a fleet's ~30k transitions (decision 0185).
 */
function oneCopy(type: string): string {
  const first = eventTypes.get(type);
  if (first !== undefined) return first;
  if (eventTypes.size < 256) eventTypes.set(type, type);
  return type;
}

/** A machine.transition's data, its optional fields set one by one. */
type TransitionData = { -readonly [K in keyof EmitData<"machine.transition">]: EmitData<"machine.transition">[K] };

/**
 * The actor's transitions, from XState's inspection: `from` and `to` are the
 * leaf state paths before and after (statePath.ts), so a transition into
 * `attemptingOverService` names the child it enters, and one out of a child
 * the child it leaves.
 */
function transitionTracer(emit: Emit<"machine.transition">, id: string): (event: InspectionEvent) => void {
  let current = INITIAL_STATE;
  return (event: InspectionEvent) => {
    if (event.type !== "@xstate.microstep") return;
    const snapshot = event.snapshot as AnyMachineSnapshot;
    const to = statePath(snapshot.value);
    // The attempt under way after the step: a retry's transition names the attempt it starts.
    const attempt = (snapshot.context as { attempts?: unknown } | undefined)?.attempts;
    for (const transition of event._transitions) {
      if (transition.target === undefined || transition.target.length === 0) continue;
      const meta = transition.meta as TransitionMeta | undefined;
      // Built field by field in the trace's key order, without a spread of a new object per optional field.
      const data: TransitionData = { deliveryActor: id, from: current, to, event: oneCopy(event.event.type) };
      if (typeof attempt === "number" && attempt > 0) data.attempt = attempt;
      if (meta !== undefined) {
        data.transition = meta.name;
        if (meta.row !== undefined) data.row = meta.row;
        data.rule = meta.rules[0];
        data.rules = meta.rules;
        if (meta.gaps !== undefined) data.gaps = meta.gaps;
      }
      emit("machine.transition", data);
    }
    current = to;
  };
}

/**
 * A submission's recipients by domain (G22: domains without case), each once; a
 * mailbox that does not parse is rejected here, at `atMs`.
 */
function recipientsByDomain(
  to: readonly string[],
  atMs: number,
): { readonly byDomain: Map<string, string[]>; readonly local: RecipientOutcome[] } {
  const byDomain = new Map<string, string[]>();
  const seen = new Set<string>();
  const local: RecipientOutcome[] = [];
  for (const address of to) {
    const parsed = parseMailbox(address);
    if (!parsed.ok) {
      const violation = parsed.violations[0];
      local.push({
        recipient: address,
        outcome: "rejected",
        rule: violation?.rule ?? "MBX-1",
        gaps: [],
        atMs,
      });
      continue;
    }
    if (seen.has(parsed.value.address)) continue;
    seen.add(parsed.value.address);
    const list = byDomain.get(parsed.value.domain) ?? [];
    list.push(parsed.value.address);
    byDomain.set(parsed.value.domain, list);
  }
  return { byDomain, local };
}
