/**
 * The world of a scenario (ARCHITECTURE.md "One delivery, as data"): one
 * scheduler, one seeded generator, one DNS zone, one network, and for each
 * domain a sender, a receiver (or none: an SMTP-only domain), in-memory
 * mailboxes, an Ed25519 key and an SMTP relay — all wired through the ports
 * the real network would fill, so the sender and the receiver that run here
 * are the ones that run for real.
 *
 * One seed builds the whole run (after TigerBeetle's VOPR): each component
 * draws from its own stream forked from the root by a stable label
 * (`keys/<domain>`, `sender/<domain>`, `network`, `dns`), so adding a domain
 * or a fault leaves every other stream as it was.
 *
 * DSNs travel like any other message: a sender's DSN (bounce, rejection) is
 * submitted by that sender to itself, and a receiver's DSN after acceptance
 * (G17) is submitted to its own domain's sender through the Outbound port.
 *
 * The trace opens with a `fault.window` for each DNS and then each network
 * fault, so a timeline can draw the fault bands from the trace alone; each
 * scheduled DNS change shows as `dns.changed` at its time.
 */
import type { SpecConstants } from "../protocol/specConstants.ts";
import { constantsNotation, departures } from "./constants.ts";
import type { Fetch, SmtpHandOff, SmtpRelay, TraceEvent, TraceSink, UntypedTraceEvent } from "../ports.ts";
import { bytesToBinary, bytesToHex } from "../protocol/base64.ts";
import { buildKeyRecord, exportPublicKeyRaw, importSigningKeyFromSeed, keyidFor } from "../protocol/profile.ts";
import { parseSvcbPresentation } from "../protocol/svcb.ts";
import { createMemoryMailStore, type MemoryMailStore } from "../receiver/memoryMailStore.ts";
import type { Outbound } from "../receiver/afterAcceptance.ts";
import { createReceiver, type ReceiverHandler } from "../receiver/receiver.ts";
import type { PlantedBug } from "../sender/plantedBugs.ts";
import { createSender, type Sender, type SenderConfig, type SubmissionHandle } from "../sender/sender.ts";
import { createRecorder, type Recorder } from "../trace/recorder.ts";
import type { CheckResult, Trace } from "../trace/schema.ts";
import { createDnsZone, svcbOwner, type DnsRecordSetInput, type DnsZone } from "./dnsZone.ts";
import { normalizeName, resolveTimeMs } from "./faultScope.ts";
import { createNetwork, type Network } from "./network.ts";
import { createRandom, type Seed, type SeededRandom } from "./random.ts";
import { endpointOf, problemBaseOf, scenarioReceivers } from "./receivers.ts";
import {
  DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS,
  durationMs,
  headerMessageId,
  headerText,
  messageIdOf,
  parseSizeBytes,
  readingsNotation,
  recipientsOf,
  resolveReadings,
  senderDomainOf,
  type Scenario,
  type ScenarioDomain,
  type ScenarioMessage,
  type ScenarioReadings,
} from "./scenario.ts";
import {
  createScheduler,
  DEFAULT_START_MS,
  messageChannelMacrotask,
  type RunResult,
  type Scheduler,
  type SchedulerOptions,
} from "./scheduler.ts";
import { errorMessage } from "../errorMessage.ts";
import { maxOf } from "../protocol/lists.ts";

/**
 * How the world's scheduler settles an event: every host operation of the
 * core is tracked (WebCrypto by webCrypto.ts, bodies and digests by the
 * network, which hands each receiver a body whose reads settle in
 * microtasks), so a
 * MessageChannel turn — no timer clamp — is enough to see that nothing is
 * left; two quiet turns are the margin. A five-day run takes a tenth of a
 * second instead of several.
 */
export const FAST_SETTLING: Omit<SchedulerOptions, "startMs"> = {
  yieldToHost: messageChannelMacrotask,
  quietYields: 2,
};

/** What {@link createWorld} may be told besides the scenario. */
export interface WorldOptions {
  /** Overrides the scenario's seed (`--seed`). */
  readonly seed?: Seed;
  /** Readings and the draft's numbers applied after the scenario's, as `--set` gives them: `[["G7", "ignored"]]`, `[["RETRY-2.cap", "30m"]]`. */
  readonly readings?: readonly (readonly [string, string])[];
  /** Keep whole HTTP bodies in the trace. Default false. */
  readonly recordBodies?: boolean;
  /** The bytes of the scenario's `eml` paths (see `loadScenario`). */
  readonly emls?: ReadonlyMap<string, Uint8Array>;
  /** Options of the scheduler (how it yields to the host). Default {@link FAST_SETTLING}. */
  readonly scheduler?: Omit<SchedulerOptions, "startMs">;
  /**
   * A known bug planted in every sender (app/sender/plantedBugs.ts), for the
   * tests that show `mailscope explore` finds it. Test-only: a scenario has no
   * field for it, and no command or control of the app passes it.
   */
  readonly plantedBug?: PlantedBug;
  /**
   * Keep every delivered message in its mailbox's store (`mailStore.messages`), for a reader that looks
   * inside. Default false: the stores count what each mailbox holds (its quota needs no more), and the
   * trace says what was delivered (mailbox.delivered), so a long run does not hold all its mail.
   */
  readonly keepMail?: boolean;
  /** Trace events the run may record at most; default {@link eventBudgetOf} the scenario. Past it the run fails. */
  readonly eventBudget?: number;
  /**
   * @internal Test seam, default true: false lets a DSN's failure be reported by another DSN (the senders'
   * and the world's guard off). Only the test of the event budget turns it off, to have a loop to stop.
   */
  readonly guardDsnLoops?: boolean;
}

/** Trace events any run may record (see {@link eventBudgetOf}). */
export const EVENT_BUDGET_BASE = 100_000;
/**
 * Trace events a run may record per message and per recipient besides: more than a delivery retried over
 * five days with faults at every step records (about 1,600 for rate-limited-then-down's 127 attempts), and
 * its DSNs.
 */
export const EVENT_BUDGET_PER_ITEM = 10_000;

/**
 * The event budget of a scenario's run: {@link EVENT_BUDGET_BASE}, and
 * {@link EVENT_BUDGET_PER_ITEM} per message and per recipient. A run that records more is caught in a
 * loop (DSNs about DSNs, say), and is stopped with an error naming it rather than let to fill the memory.
 */
export function eventBudgetOf(scenario: Pick<Scenario, "messages">): number {
  let items = 0;
  for (const m of scenario.messages) items += 1 + recipientsOf(m).length;
  return EVENT_BUDGET_BASE + EVENT_BUDGET_PER_ITEM * items;
}

/** A run stopped at its event budget: {@link EventBudgetError.loop} names what went round. */
export class EventBudgetError extends Error {
  readonly budget: number;
  readonly loop: string;
  constructor(budget: number, loop: string) {
    super(`the run was stopped at its budget of ${budget} trace events: ${loop}`);
    this.name = "EventBudgetError";
    this.budget = budget;
    this.loop = loop;
  }
}

/**
 * What a run that ran away went round: the longest chain of DSNs about DSNs when there is one, else the
 * delivery (or the event) most of the events are of. `events` is read twice (an array, or a recorder's `iterate()`).
 */
export function runawayOf(events: Iterable<UntypedTraceEvent>): string {
  // Each dsn.sent links the message it reports on to the DSN; a DSN's original was sent before it.
  const about = new Map<string, string>();
  const depth = new Map<string, number>();
  let deepest: string | undefined;
  for (const e of events) {
    if (e.name !== "dsn.sent") continue;
    const original = e.data?.["messageId"];
    const dsn = e.data?.["dsnMessageId"];
    if (typeof original !== "string" || typeof dsn !== "string") continue;
    about.set(dsn, original);
    depth.set(dsn, (depth.get(original) ?? 0) + 1);
    if (deepest === undefined || (depth.get(dsn) ?? 0) > (depth.get(deepest) ?? 0)) deepest = dsn;
  }
  if (deepest !== undefined && (depth.get(deepest) ?? 0) >= 2) {
    const chain: string[] = [];
    for (let id: string | undefined = deepest; id !== undefined && chain.length <= depth.size; id = about.get(id)) {
      chain.unshift(id);
    }
    const shown =
      chain.length <= 6 ? chain.join(" → ") : `${chain.slice(0, 3).join(" → ")} → … → ${chain.slice(-2).join(" → ")}`;
    return `a loop of DSNs about DSNs, ${chain.length} messages each reporting the one before: ${shown} (a DSN never causes a DSN: ENV-3, RFC 5321 §4.5.5)`;
  }
  const counts = new Map<string, number>();
  let total = 0;
  for (const e of events) {
    total++;
    const d = e.data ?? {};
    const key =
      typeof d["deliveryActor"] === "string"
        ? `the delivery ${d["deliveryActor"]}`
        : typeof d["messageId"] === "string"
          ? `the message ${d["messageId"]}`
          : `${e.name} events`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let top: [string, number] = ["nothing", 0];
  for (const entry of counts) if (entry[1] > top[1]) top = entry;
  return `most of them (${top[1]} of ${total}) are of ${top[0]}`;
}

/** A domain of the world. */
export interface WorldDomain {
  readonly name: string;
  readonly sender: Sender;
  /** The receiver's handler; undefined for an SMTP-only domain. */
  readonly receiver?: ReceiverHandler;
  /** Where the receiver listens, `https://mx.b.example`; undefined for an SMTP-only domain. */
  readonly origin?: string;
  /** The receiver's mailboxes; they keep the messages only with {@link WorldOptions.keepMail}. */
  readonly mailStore: MemoryMailStore;
  readonly smtp: RecordingSmtpRelay;
  readonly keyid: string;
  /** The key record published at `keyid` (G4). */
  readonly keyRecord: string;
}

/** An SMTP relay that records every hand-off, and accepts or refuses them (G18). */
export interface RecordingSmtpRelay extends SmtpRelay {
  readonly accepts: boolean;
  readonly handOffs: readonly SmtpHandOff[];
}

/** A scenario message as the world submits it. */
export interface WorldMessage {
  /** The scenario's id (`m1`). */
  readonly id: string;
  /** The id the sender and the trace use: the Message-ID without angle brackets. */
  readonly messageId: string;
  /** The header Message-ID the message carries, if any. */
  readonly headerMessageId?: string;
  readonly atMs: number;
  readonly senderDomain: string;
  readonly from: string | null;
  readonly to: readonly string[];
  readonly size: number;
}

/** How far a run got. */
export interface WorldRunResult extends RunResult {
  /** True when no event was left: every delivery reached its end before `untilMs`. */
  readonly complete: boolean;
}

/** The world of one run. */
export interface World {
  readonly scenario: Scenario;
  readonly scheduler: Scheduler;
  readonly recorder: Recorder;
  readonly random: SeededRandom;
  readonly seed: Seed;
  /** The readings in force (the scenario's, then the overrides). */
  readonly readings: ScenarioReadings;
  /** The draft's numbers in force (SPEC.md's unless the scenario or an override changes one). */
  readonly constants: SpecConstants;
  readonly problemBase: string;
  readonly startMs: number;
  /** Where {@link run} stops at the latest. */
  readonly horizonMs: number;
  readonly dns: DnsZone;
  readonly network: Network;
  readonly domains: ReadonlyMap<string, WorldDomain>;
  readonly messages: readonly WorldMessage[];
  /** Submits a message to `domain`'s sender at `atMs` (default now): messages can be added at any virtual time. */
  submit(
    domain: string,
    submission: {
      readonly from: string | null;
      readonly to: readonly string[];
      readonly message: Uint8Array;
      readonly messageId?: string;
    },
    atMs?: number,
  ): void;
  /** Runs to `untilMs` (default the horizon) or until no event is left. Throws a SimulationError when an event failed. */
  run(untilMs?: number): Promise<WorldRunResult>;
  /** The trace document of the run so far (the version defaults to `0.0.0-unknown`). */
  trace(meta?: WorldTraceMeta): Trace;
}

/** What the trace says beyond what the world knows. */
export interface WorldTraceMeta {
  /** The Mailscope version. */
  readonly mailscope: string;
  readonly file?: string;
  /** The scenario's text. */
  readonly source?: string;
  readonly invariants?: readonly CheckResult[];
  readonly expectations?: readonly CheckResult[];
}

/** A problem in building the world that the scenario's schema could not see. */
export class WorldError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorldError";
  }
}

const encoder = new TextEncoder();

/** The `spec.constants` event of a run whose constants depart from SPEC.md's: which, and the rules they change. */
function constantsEvent(
  startMs: number,
  constants: SpecConstants,
  departed: ReturnType<typeof departures>,
): Parameters<Recorder["emit"]>[0] {
  return {
    name: "spec.constants",
    timeMs: startMs,
    data: {
      constants: constantsNotation(constants) ?? {},
      departures: departed,
      rules: [...new Set(departed.flatMap((d) => d.rules))],
    },
  };
}

/** The zone's records of the domains (each key's TXT record, when published, and SVCB record; then the scenario's own), and each receiver's endpoint. */
function zoneRecords(
  scenario: Scenario,
  keys: ReadonlyMap<string, { readonly keyid: string; readonly keyRecord: string }>,
): {
  readonly records: Record<string, DnsRecordSetInput>;
  readonly endpoints: ReadonlyMap<string, { host: string; port: number; origin: string }>;
} {
  const records: Record<string, DnsRecordSetInput> = {};
  const endpoints = new Map<string, { host: string; port: number; origin: string }>();
  for (const [rawName, domain] of Object.entries(scenario.domains)) {
    const name = normalizeName(rawName);
    const key = keys.get(name);
    if (key !== undefined && domain.keys.publish) records[key.keyid] = { txt: [key.keyRecord] };
    const endpoint = endpointOf(name, domain);
    if (domain.receiver !== "none") endpoints.set(name, endpoint);
    const svcb =
      domain.svcb !== undefined
        ? domain.svcb
        : domain.receiver === "none"
          ? null
          : [`1 ${endpoint.host}. port=${endpoint.port}`];
    if (svcb !== null) records[svcbOwner(name)] = { ...records[svcbOwner(name)], svcb };
  }
  for (const [name, set] of Object.entries(scenario.dns.records)) records[normalizeName(name)] = set;
  return { records, endpoints };
}

/**
 * The outbound side of `name`'s receiver (G17): its DSN goes to the domain's own `sender`, as a normal message,
 * and is traced; none about a DSN (ENV-3) when `guardDsnLoops`.
 */
function receiverDsns(
  name: string,
  sender: Sender,
  run: {
    readonly scheduler: Scheduler;
    readonly recorder: Recorder;
    readonly trace: TraceSink;
    readonly guardDsnLoops: boolean;
    /** Every DSN sent so far (its message id). */
    readonly dsnIds: ReadonlySet<string>;
  },
): Outbound {
  const { scheduler, recorder, trace, guardDsnLoops, dsnIds } = run;
  return {
    submit: (dsn) => {
      const scan = scanDsn(dsn.message);
      // ENV-3, RFC 5321 §4.5.5: a message that was itself a DSN gets none, whatever `from` it came with.
      if (guardDsnLoops && scan.originalMessageId !== undefined && dsnIds.has(scan.originalMessageId)) {
        trace.emit({
          name: "dsn.suppressed",
          timeMs: scheduler.now(),
          domain: name,
          data: { messageId: scan.originalMessageId, recipients: scan.recipients, rule: "ENV-3" },
        });
        return Promise.resolve();
      }
      const dsnMessageId = scan.messageId ?? `dsn.${scheduler.now()}.${recorder.length}@${name}`;
      trace.emit({
        name: "dsn.sent",
        timeMs: scheduler.now(),
        domain: name,
        data: {
          ...(scan.originalMessageId !== undefined && { messageId: scan.originalMessageId }),
          dsnMessageId,
          to: dsn.to.join(", "),
          reason: "failure-after-acceptance",
          recipients: scan.recipients,
          rule: "STATE-8",
          gaps: ["G17", "G29"],
        },
      });
      sender.submit({ messageId: dsnMessageId, from: null, to: dsn.to, message: dsn.message });
      return Promise.resolve();
    },
  };
}

/** The configuration of `name`'s sender in a run: its key, the run's readings and constants, its misbehaviour. */
function senderConfig(
  name: string,
  key: { readonly keyid: string; readonly privateKey: CryptoKey },
  domain: ScenarioDomain,
  run: {
    readonly problemBase: string;
    readonly readings: ScenarioReadings;
    readonly constants: SpecConstants;
    readonly guardDsnLoops: boolean;
    readonly plantedBug: PlantedBug | undefined;
  },
): SenderConfig {
  const { problemBase, readings, constants, guardDsnLoops } = run;
  return {
    domain: name,
    signingKey: key.privateKey,
    keyid: key.keyid,
    problemBase,
    keepFinishedActors: false,
    readings: {
      discoveryPin: readings.discoveryPin,
      dnsFailureWithoutPin: readings.dnsFailureWithoutPin,
      overMaxRecipients: readings.overMaxRecipients,
      overMaxMessageSize: readings.overMaxMessageSize,
      retryTiming: readings.retryTiming,
      policyRejectedRetryAfter: readings.policyRejectedRetryAfter,
      capabilities4xx: readings.capabilities4xx,
      capabilitiesRetryAfter: readings.capabilitiesRetryAfter,
    },
    production: true,
    constants,
    ...(domain.senderMisbehaviour !== undefined && { misbehaviour: domain.senderMisbehaviour }),
    ...(run.plantedBug !== undefined && { plantedBug: run.plantedBug }),
    guardDsnLoops,
  };
}

/** Each message of the scenario built and scheduled at its time, submitted to its domain's sender. */
function scheduleMessages(
  scenario: Scenario,
  startMs: number,
  scheduler: Scheduler,
  senders: ReadonlyMap<string, Sender>,
  emls: WorldOptions["emls"],
): WorldMessage[] {
  const messages: WorldMessage[] = [];
  for (const [index, m] of scenario.messages.entries()) {
    const id = messageIdOf(m, index);
    const senderDomain = senderDomainOf(m);
    if (senderDomain === undefined || !senders.has(senderDomain)) {
      throw new WorldError(`messages[${index}] (${id}): no sender for its domain`);
    }
    const atMs = resolveTimeMs(m.at, startMs);
    // A generated message of a given size is built when it is submitted, not held from the world's start (a
    // fleet's 10,000 bodies, decision 0265); its size and header block are known now, and a size too small for
    // its headers is still refused here.
    const wanted =
      m.eml === undefined && m.text === undefined && m.size !== undefined ? parseSizeBytes(m.size) : undefined;
    const bytes = wanted !== undefined ? undefined : messageBytes(m, id, senderDomain, atMs, emls);
    const head = bytes ?? encoder.encode(generatedHead(m, id, senderDomain, atMs));
    const size = bytes?.length ?? checkedSize(wanted ?? 0, head.length, id);
    const header = headerMessageId(head);
    const messageId = header ?? `${id}@${senderDomain}`;
    const to = recipientsOf(m);
    messages.push({
      id,
      messageId,
      ...(header !== undefined && { headerMessageId: header }),
      atMs,
      senderDomain,
      from: m.from,
      to,
      size,
    });
    scheduler.at(
      atMs,
      () =>
        senders.get(senderDomain)?.submit({
          messageId,
          from: m.from,
          to,
          message: bytes ?? messageBytes(m, id, senderDomain, atMs, emls),
        }),
      `submit ${id}`,
    );
  }
  return messages;
}

/**
 * Builds the world of `scenario`: keys derived from the seed and published
 * (G4), SVCB records (G5), receivers mounted on the network, senders, and
 * every message scheduled at its time. Nothing has run yet: call `run`.
 *
 * @throws WorldError when a reading override is bad or a message cannot be built.
 */
export async function createWorld(scenario: Scenario, options: WorldOptions = {}): Promise<World> {
  const seed = options.seed ?? scenario.seed;
  const random = createRandom(seed);
  const resolved = resolveReadings([
    ...Object.entries(scenario.constants),
    ...Object.entries(scenario.readings),
    ...(options.readings ?? []),
  ]);
  if (!resolved.ok) {
    const { id, message } = resolved;
    throw new WorldError(message.startsWith(`${id}:`) ? message : `${id}: ${message}`);
  }
  const { readings, constants } = resolved;
  const departed = departures(constants);
  const startMs = scenario.start !== undefined ? Date.parse(scenario.start) : DEFAULT_START_MS;
  const scheduler = createScheduler({ ...(options.scheduler ?? FAST_SETTLING), startMs });
  const recorder = createRecorder({ recordBodies: options.recordBodies ?? false });
  /** The zone, once built: its record changes are traced as the trace reaches their times. */
  const built: { zone?: DnsZone } = {};
  const guardDsnLoops = options.guardDsnLoops ?? true;
  /** Every DSN sent so far (its message id): the receivers' DSNs about them are not sent. */
  const dsnIds = new Set<string>();
  let budget = options.eventBudget ?? eventBudgetOf(scenario);
  let overBudget = false;
  // Every trace event counts as activity, so the scheduler settles an event until nothing more happens.
  const trace: TraceSink = {
    emit(event: TraceEvent) {
      built.zone?.traceChangesUntil(event.timeMs);
      recorder.emit(event);
      scheduler.touch();
      if (event.name === "dsn.sent" && typeof event.data?.["dsnMessageId"] === "string") {
        dsnIds.add(event.data["dsnMessageId"]);
      }
      if (!overBudget && recorder.length >= budget) {
        overBudget = true;
        scheduler.fail(new EventBudgetError(budget, runawayOf(recorder.iterate())));
      }
    },
  };
  const problemBase = problemBaseOf(scenario);
  // A run that departs from SPEC.md's numbers says so first of all, before any event of the run.
  if (departed.length > 0) recorder.emit(constantsEvent(startMs, constants, departed));

  // Keys first: they go into the zone.
  const keys = new Map<string, { keyid: string; keyRecord: string; privateKey: CryptoKey }>();
  for (const [rawName, domain] of Object.entries(scenario.domains)) {
    const name = normalizeName(rawName);
    const { keyRecord, privateKey } = await domainKey(random.fork(`keys/${name}`).bytes(32));
    keys.set(name, { keyid: keyidFor(domain.keys.selector, name), keyRecord, privateKey });
  }

  const { records, endpoints } = zoneRecords(scenario, keys);

  let dns: DnsZone;
  try {
    dns = createDnsZone(
      {
        records,
        changes: scenario.faults.dnsChanges,
        faults: scenario.faults.dns,
        latency: scenario.dns.latency,
        timeoutMs: scenario.dns.timeoutMs,
        defaultTtlS: scenario.dns.defaultTtlS,
      },
      { scheduler, random: random.fork("dns"), trace, parseSvcb: (text) => parseSvcbPresentation(text) },
    );
  } catch (error) {
    throw new WorldError(`the DNS zone cannot be built: ${errorMessage(error)}`);
  }
  built.zone = dns;
  const network = createNetwork({
    scheduler,
    random: random.fork("network"),
    trace,
    faults: scenario.faults.network,
    latency: scenario.network.latency,
    recordBodies: options.recordBodies ?? false,
    problemBase: () => problemBase,
  });

  const domains = new Map<string, WorldDomain>();
  const senders = new Map<string, Sender>();
  const receiverConfigs = new Map(scenarioReceivers(scenario, readings).map((r) => [r.domain, r.config]));
  for (const [rawName, domain] of Object.entries(scenario.domains)) {
    const name = normalizeName(rawName);
    const key = keys.get(name);
    if (key === undefined) continue;
    const accepts = (domain.G18 ?? readings.smtpRelay) === "accept";
    const smtp = createRecordingRelay(name, accepts);
    const unguarded = network.fetchFor(name);
    // Past the event budget the run has failed, but a loop in zero virtual time goes on in host work: its next
    // exchange waits for ever, so it stops there (the run is over; nothing awaits it).
    const fetch: Fetch = (request) => (overBudget ? new Promise<never>(() => {}) : unguarded(request));
    const sender = createSender(
      senderConfig(name, key, domain, {
        problemBase,
        readings,
        constants,
        guardDsnLoops,
        plantedBug: options.plantedBug,
      }),
      {
        clock: scheduler.clock,
        random: random.fork(`sender/${name}`),
        resolver: dns.resolver(name),
        fetch,
        smtp,
        trace,
      },
    );
    senders.set(name, sender);
    const mailStore = createMemoryMailStore({ keepMessages: options.keepMail === true });
    const endpoint = endpoints.get(name);
    const config = receiverConfigs.get(name);
    let receiver: ReceiverHandler | undefined;
    if (endpoint !== undefined && config !== undefined) {
      receiver = createReceiver(config, {
        clock: scheduler.clock,
        resolver: dns.resolver(name),
        mailStore,
        trace,
        outbound: receiverDsns(name, sender, { scheduler, recorder, trace, guardDsnLoops, dsnIds }),
      });
      network.mount(endpoint.origin, receiver, { domain: name });
    }
    domains.set(name, {
      name,
      sender,
      ...(receiver !== undefined && { receiver }),
      ...(endpoint !== undefined && { origin: endpoint.origin }),
      mailStore,
      smtp,
      keyid: key.keyid,
      keyRecord: key.keyRecord,
    });
  }

  const submit: World["submit"] = (domain, submission, atMs) => {
    const name = normalizeName(domain);
    const sender = senders.get(name);
    if (sender === undefined) throw new WorldError(`${domain} is not a domain of this world`);
    budget += EVENT_BUDGET_PER_ITEM * (1 + submission.to.length);
    const run = (): SubmissionHandle => sender.submit(submission);
    if (atMs === undefined) scheduler.after(0, run, `submit to ${name}`);
    else scheduler.at(atMs, run, `submit to ${name}`);
  };

  const messages = scheduleMessages(scenario, startMs, scheduler, senders, options.emls);

  const lastMessageMs = maxOf(
    messages.map((m) => m.atMs),
    startMs,
  );
  const horizonMs =
    scenario.horizon !== undefined
      ? startMs + durationMs(scenario.horizon)
      : lastMessageMs + DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS;

  return {
    scenario,
    scheduler,
    recorder,
    random,
    seed,
    readings,
    constants,
    problemBase,
    startMs,
    horizonMs,
    dns,
    network,
    domains,
    messages,
    submit,
    async run(untilMs = horizonMs) {
      const result = await scheduler.run({ untilMs });
      // The DNS changes the run has reached, with nothing traced after them.
      dns.traceChangesUntil(scheduler.now());
      return { ...result, complete: scheduler.pendingEvents === 0 };
    },
    trace(meta = { mailscope: "0.0.0-unknown" }) {
      return recorder.toTrace({
        mailscope: meta.mailscope,
        scenario: {
          name: scenario.name,
          ...(meta.file !== undefined && { file: meta.file }),
          ...(meta.source !== undefined && { source: meta.source }),
        },
        seed,
        readings: readingsNotation(readings),
        ...(departed.length > 0 && { constants: constantsNotation(constants) }),
        startedAtMs: startMs,
        ...(meta.invariants !== undefined && { invariants: meta.invariants }),
        ...(meta.expectations !== undefined && { expectations: meta.expectations }),
      });
    },
  };
}

/**
 * The signing keys made from seeds so far, by seed (hex), at most {@link DOMAIN_KEYS}, the oldest let go
 * first. A domain's key is a function of its seed alone, so a world built again from the same seed (a
 * restart, a re-run to seek backwards, the many small runs of a sweep) takes the key made the first time
 * instead of three WebCrypto round trips per domain; a CryptoKey never changes, so sharing one changes
 * nothing but the time. Made before the run starts, so the run's events and their order are the same
 * either way.
 */
const domainKeys = new Map<string, Promise<{ readonly keyRecord: string; readonly privateKey: CryptoKey }>>();
const DOMAIN_KEYS = 1024;

function domainKey(seed32: Uint8Array): Promise<{ readonly keyRecord: string; readonly privateKey: CryptoKey }> {
  const id = bytesToHex(seed32);
  let made = domainKeys.get(id);
  if (made === undefined) {
    made = (async () => {
      const pair = await importSigningKeyFromSeed(seed32);
      return { keyRecord: buildKeyRecord(await exportPublicKeyRaw(pair.publicKey)), privateKey: pair.privateKey };
    })();
    if (domainKeys.size >= DOMAIN_KEYS) domainKeys.delete(domainKeys.keys().next().value!);
    domainKeys.set(id, made);
    // A key that could not be made is not kept: the next world tries again and says why.
    made.catch(() => domainKeys.delete(id));
  }
  return made;
}

function createRecordingRelay(domain: string, accepts: boolean): RecordingSmtpRelay {
  const handOffs: SmtpHandOff[] = [];
  return {
    accepts,
    handOffs,
    handOff(handOff) {
      handOffs.push(handOff);
      return Promise.resolve(
        accepts
          ? { accepted: true }
          : { accepted: false, detail: `the SMTP relay of ${domain} refuses hand-offs (G18 fail)` },
      );
    },
  };
}

/** The header block of a generated message (see {@link messageBytes}): From, To, Subject, Date, Message-ID. */
function generatedHead(m: ScenarioMessage, id: string, senderDomain: string, atMs: number): string {
  const to = recipientsOf(m);
  return (
    `From: ${m.from === null ? `<MAILER-DAEMON@${senderDomain}>` : `<${m.from}>`}\r\n` +
    `To: ${to.map((t) => `<${t}>`).join(", ")}\r\n` +
    `Subject: ${(m.subject ?? `Message ${id}`).replace(/[\r\n]+/g, " ")}\r\n` +
    `Date: ${new Date(atMs).toUTCString()}\r\n` +
    `Message-ID: <${id}@${senderDomain}>\r\n` +
    "MIME-Version: 1.0\r\n" +
    "Content-Type: text/plain; charset=utf-8\r\n" +
    "\r\n"
  );
}

/** The size given to a generated message (see {@link messageBytes}), refused when its header block is larger. */
function checkedSize(wanted: number, headLength: number, id: string): number {
  if (wanted < headLength) {
    throw new WorldError(`${id}: size ${wanted} is smaller than the generated headers (${headLength} bytes)`);
  }
  return wanted;
}

/**
 * The bytes of a scenario message: a raw one (`eml`, `text` with LF made
 * CRLF) as it is, else a generated one — From, To, Subject, Date (the
 * virtual time), Message-ID `<id@sender-domain>` — padded to `size`.
 *
 * @throws WorldError when the eml was not read, or `size` is too small for the headers.
 */
export function messageBytes(
  m: ScenarioMessage,
  id: string,
  senderDomain: string,
  atMs: number,
  emls: ReadonlyMap<string, Uint8Array> | undefined,
): Uint8Array {
  if (m.eml !== undefined) {
    const bytes = emls?.get(m.eml);
    if (bytes === undefined)
      throw new WorldError(`${id}: the file ${m.eml} was not read (load the scenario with loadScenario)`);
    return bytes;
  }
  if (m.text !== undefined) return encoder.encode(m.text.replace(/\r?\n/g, "\r\n"));
  const head = generatedHead(m, id, senderDomain, atMs);
  const intro = `This is message ${id}, generated by Mailscope.\r\n`;
  const wanted = m.size === undefined ? undefined : parseSizeBytes(m.size);
  if (wanted === undefined) return encoder.encode(head + intro);
  const headBytes = encoder.encode(head);
  const out = new Uint8Array(checkedSize(wanted, headBytes.length, id));
  out.set(headBytes, 0);
  // The body: the intro, then lines of 76 letters and CRLF, cut to the size.
  const introBytes = encoder.encode(intro);
  let at = headBytes.length;
  out.set(introBytes.subarray(0, Math.max(0, wanted - at)), at);
  at += introBytes.length;
  if (at >= wanted) return out;
  // The lines made once for every message (a message of everyday size takes one copy of them), then, past
  // them, what is written copied after itself (its length a whole number of lines until the last copy): a
  // few copies for a message of megabytes.
  const first = Math.min(BODY_LINES.length, wanted - at);
  out.set(first === BODY_LINES.length ? BODY_LINES : BODY_LINES.subarray(0, first), at);
  for (let filled = first; at + filled < wanted; filled *= 2) {
    out.copyWithin(at + filled, at, at + Math.min(filled, wanted - at - filled));
  }
  return out;
}

/** The body's line, 76 letters and CRLF, written {@link BODY_LINE_COPIES} times: what most message bodies hold. */
const BODY_LINE_COPIES = 256;
const BODY_LINES = encoder.encode(`${"x".repeat(76)}\r\n`.repeat(BODY_LINE_COPIES));

/** What the world reads from a receiver's DSN to trace it: its Message-ID, the original's, and the final recipients. */
export function scanDsn(message: Uint8Array): {
  readonly messageId?: string;
  readonly originalMessageId?: string;
  readonly recipients: readonly string[];
} {
  const messageId = headerMessageId(message);
  const head = headerText(message);
  const rest = bytesToBinary(message.subarray(head.length));
  // Part 3 returns the original's header block, Message-ID and all (RFC 3464 §2, G29).
  const original = /^message-id:[ \t]*<?([^<>\s]+)>?/im.exec(rest)?.[1];
  const recipients = [...rest.matchAll(/^final-recipient:[ \t]*rfc822[ \t]*;[ \t]*<?([^<>\s]+)>?/gim)].map(
    (m) => m[1] ?? "",
  );
  return {
    ...(messageId !== undefined && { messageId }),
    ...(original !== undefined && { originalMessageId: original }),
    recipients,
  };
}
