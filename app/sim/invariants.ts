/**
 * Invariant checkers, run on every simulation (after TigerBeetle's VOPR):
 * properties that must hold whatever the scenario, read from the trace alone,
 * so that a shared trace can be judged again without the run.
 *
 * They read what happened on the wire and at the edges — submissions,
 * attempts and their answers, timers, hand-offs, bounces, mailbox deliveries,
 * outcomes — and judge it by SPEC.md's rules, not by the delivery machine's
 * own verdicts: the machine's `fallbackEligible` flags and transition names
 * are not trusted, the statuses and failures are.
 *
 * | id | what holds |
 * |---|---|
 * | terminal-outcome | each recipient of each message ends in exactly one terminal outcome |
 * | no-duplicate-delivery | no mailbox receives the same message (Message-ID) twice |
 * | smtp-only-where-allowed | SMTP only after the fallback window with every attempt fallback-eligible, for no common version, or for no service |
 * | no-retry-after-permanent | nothing is retried over the service after a permanent answer |
 * | retry-schedule | every attempt within the schedule's bounds (G16, jitter), never before a Retry-After |
 * | give-up-at-5-days | the bounce exactly 5 days after the first attempt; no attempt after that |
 * | no-dsn-about-a-dsn | no DSN reports on a message that was itself a DSN (so DSNs cannot loop) |
 */
import { normalizeAddress, parseMailbox } from "../protocol/mailbox.ts";
import { actorOfDelivery } from "../trace/deliveryIds.ts";
import { recordedOffset } from "../trace/offset.ts";
import { dataOf, isEvent, readEvent, type ReadData } from "../trace/eventReader.ts";
import { eventsNamed } from "../trace/store.ts";
import type { CheckResult } from "../trace/schema.ts";
import { specKnob } from "../protocol/specConstants.ts";
import { durationWords, parseKnobValue } from "./constants.ts";
import type { ScenarioReadings } from "./scenario.ts";

/** An event as the checkers read it: a recorded trace event. */
export interface CheckedEvent {
  /** Its place in the trace: what a result's `evidence` lists. Events without one are left out of it. */
  readonly seq?: number;
  readonly name: string;
  readonly timeMs: number;
  readonly domain?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** One invariant: its id, what it says, and the rules it stands on. */
export interface InvariantInfo {
  readonly id: string;
  readonly title: string;
  readonly rules: readonly string[];
}

/** The invariants, in the order they are checked and reported. */
export const INVARIANTS: readonly InvariantInfo[] = [
  {
    id: "terminal-outcome",
    title: "each recipient of each message ends in exactly one terminal outcome",
    rules: ["STATE-1", "STATE-7", "STATE-9", "SVC-11"],
  },
  {
    id: "no-duplicate-delivery",
    title: "no mailbox receives the same message twice",
    rules: ["POST-12", "POST-24", "POST-26"],
  },
  {
    id: "smtp-only-where-allowed",
    title:
      "SMTP only after the fallback window when every attempt was fallback-eligible, for no common version, or for no service",
    rules: ["SVC-11", "STATE-3", "STATE-4", "ERR-22", "ERR-23", "ERR-26"],
  },
  {
    id: "no-retry-after-permanent",
    title: "no retry over the service after a permanent answer",
    rules: ["RCP-7", "STATE-9", "ERR-1", "ERR-17"],
  },
  {
    id: "retry-schedule",
    title: "every attempt within the schedule's bounds (G16), never before a Retry-After",
    rules: ["RETRY-1", "RETRY-2", "RETRY-3", "RETRY-7"],
  },
  {
    id: "give-up-at-5-days",
    title: "give-up exactly 5 days after the first attempt, and no attempt after it",
    rules: ["STATE-7", "RETRY-6"],
  },
  {
    id: "no-dsn-about-a-dsn",
    title: "no DSN reports on a message that was itself a DSN",
    rules: ["ENV-3", "EVT-4"],
  },
];

/** What the checkers need besides the events. */
export interface InvariantOptions {
  /** The readings in force: the fallback window and jitter (G16), G26, and the capabilities answers' (G46, G47). */
  readonly readings: Pick<ScenarioReadings, "retryTiming" | "policyRejectedRetryAfter"> &
    Partial<Pick<ScenarioReadings, "capabilities4xx" | "capabilitiesRetryAfter">>;
  /** Whether the run ended with no event left (false: it stopped at the horizon). */
  readonly complete: boolean;
  /**
   * The draft's numbers that departed from SPEC.md in the run, as the trace's
   * `constants` member writes them (`{ "RETRY-2.cap": "30m" }`): the schedule
   * and the give-up are judged by the numbers in force. Absent:
   * SPEC.md's.
   */
  readonly constants?: Readonly<Record<string, string>>;
  /**
   * The run's start (`world.startMs`; a trace's `startedAtMs`): a check's text writes its times as run times, as
   * the timeline, the log and Why? write them — an attempt at +1:03:00 is 1 h 3 min into the run, whenever its
   * message was submitted.
   */
  readonly startMs: number;
}

// ---------------------------------------------------------------------------
// The deliveries, rebuilt from the trace

/** An attempt of a delivery actor, as the trace shows it. */
export interface Attempt {
  readonly index: number;
  readonly startMs: number;
  readonly events: CheckedEvent[];
}

/** A delivery actor (message → recipient domain) rebuilt from the trace. */
export interface Actor {
  /** `<messageId>→<domain>`, as the sender names its delivery actors. */
  readonly id: string;
  readonly messageId: string;
  readonly domain: string;
  readonly senderDomain: string;
  readonly startMs: number;
  readonly recipients: Set<string>;
  readonly attempts: Attempt[];
  /** Open while its current attempt has not left discovery. */
  discovering: boolean;
  readonly handOffs: { readonly index: number; readonly event: CheckedEvent }[];
  bounced?: CheckedEvent;
}

/** The deliveries of a run, rebuilt from its trace ({@link buildModel}). */
export interface Model {
  readonly actors: Map<string, Actor>;
  /** Each message's recipients, as submitted (normalised). */
  readonly submitted: Map<string, { readonly at: CheckedEvent; readonly recipients: Set<string> }>;
  /** deliveryId → its recipients. */
  readonly deliveries: Map<string, readonly string[]>;
}

function domainOf(address: string): string | undefined {
  const parsed = parseMailbox(address);
  return parsed.ok ? parsed.value.domain : undefined;
}

/** The actors whose attempt is in discovery, by {@link discoveryKey}. */
type Discovering = Map<string, Set<Actor>>;

function discoveryKey(senderDomain: string, domain: string | undefined): string {
  return `${senderDomain}\n${domain}`;
}

function markDiscovering(discovering: Discovering, actor: Actor, on: boolean): void {
  actor.discovering = on;
  const key = discoveryKey(actor.senderDomain, actor.domain);
  let set = discovering.get(key);
  if (on) {
    if (set === undefined) discovering.set(key, (set = new Set()));
    set.add(actor);
  } else set?.delete(actor);
}

// An event of an actor the trace never started (a cut trace) belongs to no attempt.
function push(actor: Actor | undefined, event: CheckedEvent): void {
  if (actor !== undefined) actor.attempts.at(-1)?.events.push(event);
}

// buildModel's helpers are functions of this module, not closures made on each call: a closure made per run
// keeps its optimized code only while that run's closures live, so V8 compiled them again and again, all
// exploration long (decision 0200).
/** The events {@link buildModel} reads: every case of its switch. */
const MODEL_EVENTS: ReadonlySet<string> = new Set([
  "message.submitted",
  "timer.fired",
  "timer.set",
  "machine.transition",
  "delivery.created",
  "attempt.started",
  "attempt.ended",
  "recipient.result",
  "discovery.resolved",
  "capabilities.invalid",
  "version.negotiated",
  "smtp.handoff",
  "delivery.bounced",
]);
const OUTCOME_EVENTS: ReadonlySet<string> = new Set(["recipient.outcome"]);
const DSN_EVENTS: ReadonlySet<string> = new Set(["dsn.sent"]);
const MAILBOX_EVENTS: ReadonlySet<string> = new Set(["mailbox.delivered"]);

/** Rebuilds each delivery actor (message → recipient domain) and its attempts from the trace. */
export function buildModel(events: Iterable<CheckedEvent>): Model {
  const actors = new Map<string, Actor>();
  const submitted = new Map<string, { at: CheckedEvent; recipients: Set<string> }>();
  const deliveries = new Map<string, readonly string[]>();
  // The actors whose attempt is in discovery, by sender and domain (in the order they were created),
  // so that a discovery event finds its actors without a pass over every actor of the run.
  const discovering: Discovering = new Map();
  for (const event of eventsNamed(events, MODEL_EVENTS)) {
    const e = readEvent(event);
    switch (e?.name) {
      case "message.submitted": {
        const messageId = e.data.messageId;
        if (messageId === undefined) break;
        const recipients = new Set((e.data.to ?? []).map(normalizeAddress));
        submitted.set(messageId, { at: event, recipients });
        for (const recipient of recipients) {
          const domain = domainOf(recipient);
          if (domain === undefined) continue;
          const id = `${messageId}→${domain}`;
          let actor = actors.get(id);
          if (actor === undefined) {
            actor = {
              id,
              messageId,
              domain,
              senderDomain: event.domain ?? "",
              startMs: event.timeMs,
              recipients: new Set(),
              attempts: [{ index: 1, startMs: event.timeMs, events: [] }],
              discovering: true,
              handOffs: [],
            };
            actors.set(id, actor);
            markDiscovering(discovering, actor, true);
          }
          actor.recipients.add(recipient);
        }
        break;
      }
      case "timer.fired": {
        const actor = actors.get(e.data.deliveryActor ?? "");
        if (actor === undefined) break;
        actor.attempts.push({ index: actor.attempts.length + 1, startMs: event.timeMs, events: [event] });
        markDiscovering(discovering, actor, true);
        break;
      }
      case "timer.set":
        push(actors.get(e.data.deliveryActor ?? ""), event);
        break;
      case "machine.transition": {
        const actor = actors.get(e.data.deliveryActor ?? "");
        if (actor === undefined) break;
        push(actor, event);
        if (e.data.from?.endsWith("discovering") === true) markDiscovering(discovering, actor, false);
        break;
      }
      case "delivery.created": {
        const deliveryId = e.data.deliveryId;
        if (deliveryId !== undefined) deliveries.set(deliveryId, (e.data.recipients ?? []).map(normalizeAddress));
        push(actors.get(actorOfDelivery(deliveryId ?? "")), event);
        break;
      }
      case "attempt.started":
      case "attempt.ended":
      case "recipient.result": {
        const deliveryId = e.data.deliveryId ?? "";
        if (e.name === "attempt.started" && !deliveries.has(deliveryId)) {
          deliveries.set(deliveryId, (e.data.recipients ?? []).map(normalizeAddress));
        }
        push(actors.get(actorOfDelivery(deliveryId)), event);
        break;
      }
      case "discovery.resolved":
      case "capabilities.invalid":
      case "version.negotiated": {
        // Discovery events name the domain, not the actor: they go to every actor of that
        // sender and domain whose attempt is still in discovery.
        const target = e.data.domain;
        if (target === undefined || event.domain === undefined) break;
        for (const actor of discovering.get(discoveryKey(event.domain, target)) ?? []) push(actor, event);
        break;
      }
      case "smtp.handoff": {
        const messageId = e.data.messageId ?? "";
        const recipients = (e.data.recipients ?? []).map(normalizeAddress);
        const domain = recipients.map(domainOf).find((x) => x !== undefined);
        const actor = actors.get(`${messageId}→${domain ?? ""}`);
        if (actor === undefined) break;
        push(actor, event);
        actor.handOffs.push({ index: actor.attempts.length, event });
        break;
      }
      case "delivery.bounced": {
        const actor = actors.get(`${e.data.messageId ?? ""}→${e.data.domain ?? ""}`);
        if (actor === undefined) break;
        push(actor, event);
        actor.bounced = event;
        break;
      }
      default:
        break;
    }
  }
  return { actors, submitted, deliveries };
}

// ---------------------------------------------------------------------------
// Reading answers by SPEC.md, independently of the sender's own reading

const TEMPORARY_PROBLEMS = ["rate_limited", "mailbox_full", "temporary_failure"];

function problemIdentifier(type: string | undefined): string | undefined {
  return type?.slice(type.lastIndexOf("/") + 1);
}

/**
 * Whether an attempt.ended is a fallback-eligible failure (ERR-21, ERR-22):
 * no answer, a request-level 5xx, a 200 that does not parse (G15), an answer
 * outside the table (G30). Not: any 4xx, any per-recipient result, a body not sent (G13).
 */
export function fallbackEligibleEnding(data: ReadData<"attempt.ended">): boolean {
  if (data.sent === false) return false;
  const status = data.status;
  if (status === undefined) return data.failure !== undefined;
  if (status >= 500) return true;
  if (status === 200) return data.class !== "results";
  return status < 400;
}

/** Whether an attempt.ended is a permanent answer: a 4xx (ERR-1 … ERR-7, ERR-19), or a body the sender refused to send (G13). */
export function permanentEnding(
  data: ReadData<"attempt.ended">,
  readings: Pick<ScenarioReadings, "policyRejectedRetryAfter">,
): boolean {
  if (data.sent === false) return true;
  const status = data.status;
  if (status === undefined || status < 400 || status >= 500) return false;
  const identifier = problemIdentifier(data.problem);
  if (identifier !== undefined && TEMPORARY_PROBLEMS.includes(identifier)) return false;
  // G26 `retry`: a request-level policy_rejected with Retry-After is retried over the service.
  if (status === 403 && readings.policyRejectedRetryAfter === "retry" && data.retryAfterS !== undefined) return false;
  return true;
}

/** What an attempt amounts to for the fallback rules. */
export type AttemptKind = "eligible" | "ineligible" | "no-service" | "no-common-version" | "unknown";

/** What an attempt amounts to for the fallback rules, read from its events by SPEC.md (not the sender's own verdicts). */
export function classify(
  attempt: Attempt,
  readings: Partial<Pick<ScenarioReadings, "capabilities4xx">> = {},
): { kind: AttemptKind; why: string } {
  const results = attempt.events.filter((e) => e.name === "recipient.result");
  const ended = attempt.events.filter((e) => e.name === "attempt.ended");
  const unsupported = ended.find((e) => {
    const d = dataOf(e, "attempt.ended");
    return d?.status === 404 && problemIdentifier(d.problem) === "unsupported_version";
  });
  if (unsupported !== undefined) return { kind: "no-common-version", why: "404 unsupported_version" };
  if (results.length > 0) return { kind: "ineligible", why: "per-recipient results (ERR-23)" };
  if (ended.length > 0) {
    const bad = ended.map((e) => dataOf(e, "attempt.ended") ?? {}).find((d) => !fallbackEligibleEnding(d));
    if (bad === undefined) return { kind: "eligible", why: "no answer or a request-level 5xx" };
    const status = bad.status;
    return {
      kind: "ineligible",
      why: status !== undefined ? `answer ${status} ${problemIdentifier(bad.problem) ?? ""}`.trim() : "not sent",
    };
  }
  if (attempt.events.some((e) => dataOf(e, "machine.transition")?.transition === "senderFault")) {
    return { kind: "ineligible", why: "a fault of the sender itself" };
  }
  const version = attempt.events.find((e) => {
    const negotiated = dataOf(e, "version.negotiated");
    return negotiated !== undefined && negotiated.version === undefined;
  });
  if (version !== undefined) return { kind: "no-common-version", why: "no common version in the capabilities" };
  const resolved = attempt.events.flatMap((e) => dataOf(e, "discovery.resolved") ?? []);
  if (resolved.some((d) => d.outcome === "no-service")) return { kind: "no-service", why: "no SVCB record" };
  const capabilities = attempt.events.find((e) => isEvent(e, "capabilities.invalid"));
  const capabilitiesStatus =
    capabilities === undefined ? undefined : dataOf(capabilities, "capabilities.invalid")?.status;
  if (
    readings.capabilities4xx === "alive" &&
    capabilitiesStatus !== undefined &&
    capabilitiesStatus >= 400 &&
    capabilitiesStatus < 500
  ) {
    // G46 `alive`: a 4xx to the capabilities request shows the endpoint alive (ERR-22, ERR-23).
    return { kind: "ineligible", why: `capabilities answered ${capabilitiesStatus} (G46 alive)` };
  }
  if (capabilities !== undefined || resolved.some((d) => d.outcome === "dns-failure" || d.gap === "G7")) {
    return { kind: "eligible", why: "DNS or capabilities failure (ERR-21)" };
  }
  return { kind: "unknown", why: "no answer recorded" };
}

// ---------------------------------------------------------------------------
// The checkers

/**
 * Runs every invariant over `events` (read more than once: an array, or a recorder's `iterate()`); one result
 * per invariant, in {@link INVARIANTS} order. `model` is `buildModel(events)`, given when the caller built it already.
 */
export function checkInvariants(
  events: Iterable<CheckedEvent>,
  options: InvariantOptions,
  model: Model = buildModel(events),
): CheckResult[] {
  return [
    result("terminal-outcome", terminalOutcome(events, model, options)),
    result("no-duplicate-delivery", noDuplicateDelivery(events)),
    result("smtp-only-where-allowed", smtpOnlyWhereAllowed(model, options)),
    result("no-retry-after-permanent", noRetryAfterPermanent(model, options)),
    result("retry-schedule", { evidence: retriesJudged(model), ...retrySchedule(model, options) }, model),
    result("give-up-at-5-days", giveUpAtFiveDays(model, options)),
    result("no-dsn-about-a-dsn", noDsnAboutADsn(events)),
  ];
}

/** A violation with the events that show it. */
interface Finding {
  readonly text: string;
  readonly evidence: readonly CheckedEvent[];
}

interface Verdict {
  /** Each as text alone, or with its evidence. */
  readonly violations: readonly (string | Finding)[];
  /** Said when there is no violation: what was checked. */
  readonly checked: string;
  /** When there is no violation: the events judged. */
  readonly evidence?: readonly CheckedEvent[];
}

function finding(text: string, ...evidence: (CheckedEvent | readonly CheckedEvent[] | undefined)[]): Finding {
  return {
    text,
    evidence: evidence.flatMap((e) => (e === undefined ? [] : Array.isArray(e) ? e : [e as CheckedEvent])),
  };
}

const MAX_LISTED = 5;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The result of one invariant. Its `evidence` is the seqs of the events
 * behind it: for a violation, those that show it; when none, those judged.
 * A violation given as text alone gets, with `model`, the events of the
 * delivery actor and the attempt(s) it names (see {@link namedEvidence}).
 */
function result(id: string, verdict: Verdict, model?: Model): CheckResult {
  const { violations } = verdict;
  if (violations.length === 0) return { id, passed: true, detail: verdict.checked, ...seqsOf(verdict.evidence ?? []) };
  const texts = violations.map((v) => (typeof v === "string" ? v : v.text));
  const listed = texts.slice(0, MAX_LISTED).join("; ");
  const more = violations.length > MAX_LISTED ? `; and ${violations.length - MAX_LISTED} more` : "";
  const evidence = violations.flatMap((v) =>
    typeof v !== "string" ? v.evidence : model === undefined ? [] : namedEvidence(model, v),
  );
  return { id, passed: false, detail: `${listed}${more}`, ...seqsOf(evidence) };
}

/** `{ evidence }`: the events' seqs, ascending and once each; nothing when none has a seq. */
function seqsOf(events: readonly CheckedEvent[]): { evidence?: number[] } {
  const seqs = new Set<number>();
  for (const e of events) if (e.seq !== undefined) seqs.add(e.seq);
  return seqs.size === 0 ? {} : { evidence: [...seqs].sort((a, b) => a - b) };
}

/** The events a violation names in its text: `<actor>: … attempt N …` → the attempt's events and the one's before it. */
function namedEvidence(model: Model, text: string): CheckedEvent[] {
  const colon = text.indexOf(": ");
  const actor = colon < 0 ? undefined : model.actors.get(text.slice(0, colon));
  if (actor === undefined) return [];
  const n = Number(/\battempt (\d+)\b/.exec(text.slice(colon))?.[1] ?? Number.NaN);
  const attempts = Number.isInteger(n)
    ? actor.attempts.filter((a) => a.index === n || a.index === n - 1)
    : actor.attempts;
  return attempts.flatMap((a) => a.events.filter((e) => EVIDENT.has(e.name)));
}

/** For each retry, the timer set after the attempt before it and the retry's first event: what the schedule is judged on. */
function retriesJudged(model: Model): CheckedEvent[] {
  const out: CheckedEvent[] = [];
  for (const actor of model.actors.values()) {
    for (let k = 1; k < actor.attempts.length; k++) {
      const timer = actor.attempts[k - 1]?.events.findLast((e) => e.name === "timer.set");
      const first = actor.attempts[k]?.events[0];
      if (timer !== undefined) out.push(timer);
      if (first !== undefined) out.push(first);
    }
  }
  return out;
}

/** The events of an attempt that say what it did and when: what a reader jumps to. */
const EVIDENT = new Set([
  "timer.fired",
  "attempt.started",
  "attempt.ended",
  "recipient.result",
  "timer.set",
  "smtp.handoff",
  "delivery.bounced",
]);

function terminalOutcome(events: Iterable<CheckedEvent>, model: Model, options: InvariantOptions): Verdict {
  const outcomes = new Map<string, CheckedEvent[]>();
  const all: CheckedEvent[] = [];
  const violations: Finding[] = [];
  for (const e of eventsNamed(events, OUTCOME_EVENTS)) {
    const outcome = dataOf(e, "recipient.outcome");
    if (outcome === undefined) continue;
    all.push(e);
    const messageId = outcome.messageId ?? "";
    const recipient = normalizeAddress(outcome.recipient ?? "");
    const key = `${messageId}\n${recipient}`;
    const list = outcomes.get(key);
    if (list === undefined) outcomes.set(key, [e]);
    else list.push(e);
    if (!model.submitted.get(messageId)?.recipients.has(recipient)) {
      violations.push(finding(`${recipient} of ${messageId} has an outcome but was never submitted`, e));
    }
  }
  let recipients = 0;
  for (const [messageId, { at, recipients: list }] of model.submitted) {
    for (const recipient of list) {
      recipients++;
      const found = outcomes.get(`${messageId}\n${recipient}`) ?? [];
      if (found.length === 0) {
        violations.push(
          finding(
            options.complete
              ? `${recipient} of ${messageId} has no outcome, yet nothing was left to run (a delivery is stuck)`
              : `${recipient} of ${messageId} has no outcome when the run stopped at its horizon`,
            at,
          ),
        );
      } else if (found.length > 1) {
        violations.push(finding(`${recipient} of ${messageId} has ${found.length} outcomes`, found));
      }
    }
  }
  return {
    violations,
    checked: `${plural(recipients, "recipient")} of ${plural(model.submitted.size, "message")}, each with exactly one outcome`,
    evidence: all,
  };
}

/**
 * A DSN is sent with the null reverse-path (ENV-3) so that its own failure is never reported (RFC 5321
 * §4.5.5): a dsn.sent about a message an earlier dsn.sent sent is a loop under way, whatever `from` it had.
 */
function noDsnAboutADsn(events: Iterable<CheckedEvent>): Verdict {
  const dsns = new Map<string, CheckedEvent>();
  const violations: Finding[] = [];
  const judged: CheckedEvent[] = [];
  for (const e of eventsNamed(events, DSN_EVENTS)) {
    const sent = dataOf(e, "dsn.sent");
    if (sent === undefined) continue;
    judged.push(e);
    const original = sent.messageId;
    const dsn = sent.dsnMessageId;
    const earlier = original === undefined ? undefined : dsns.get(original);
    if (earlier !== undefined) {
      violations.push(
        finding(
          `the DSN ${dsn ?? "(no id)"} reports on ${original ?? ""}, itself a DSN about ${dataOf(earlier, "dsn.sent")?.messageId ?? "(unknown)"} [ENV-3]`,
          earlier,
          e,
        ),
      );
    }
    if (dsn !== undefined) dsns.set(dsn, e);
  }
  return {
    evidence: judged,
    violations,
    checked: judged.length === 0 ? "no DSN sent" : `${plural(judged.length, "DSN")} sent, none about a DSN`,
  };
}

function noDuplicateDelivery(events: Iterable<CheckedEvent>): Verdict {
  const seen = new Map<string, CheckedEvent[]>();
  const violations: Finding[] = [];
  const judged: CheckedEvent[] = [];
  let checked = 0;
  let unidentified = 0;
  for (const e of eventsNamed(events, MAILBOX_EVENTS)) {
    const delivered = dataOf(e, "mailbox.delivered");
    if (delivered === undefined) continue;
    const mailbox = delivered.mailbox ?? "";
    const messageId = delivered.messageId?.replace(/^<|>$/g, "");
    if (messageId === undefined) {
      unidentified++;
      continue;
    }
    checked++;
    judged.push(e);
    const key = `${mailbox}\n${messageId}`;
    const deliveries = seen.get(key);
    if (deliveries === undefined) {
      seen.set(key, [e]);
      continue;
    }
    // The finding holds the list: later copies join its evidence.
    deliveries.push(e);
    if (deliveries.length === 2)
      violations.push({ text: `${mailbox} received <${messageId}> more than once`, evidence: deliveries });
  }
  return {
    evidence: judged,
    violations,
    checked: `${checked === 0 ? "no delivery to a mailbox" : `${plural(checked, "delivery", "deliveries")} to mailboxes, no message twice in one mailbox`}${unidentified > 0 ? ` (${unidentified} without a Message-ID not checked)` : ""}`,
  };
}

function smtpOnlyWhereAllowed(model: Model, options: InvariantOptions): Verdict {
  const violations: Finding[] = [];
  const windowMs = options.readings.retryTiming.fallbackWindowS * 1000;
  const judged: CheckedEvent[] = [];
  let handOffs = 0;
  for (const actor of model.actors.values()) {
    for (const { index, event } of actor.handOffs) {
      handOffs++;
      judged.push(event);
      const reason = dataOf(event, "smtp.handoff")?.reason;
      const attempts = actor.attempts.slice(0, index).map((a) => ({ attempt: a, ...classify(a, options.readings) }));
      const last = attempts.at(-1);
      const at = recordedOffset(event.timeMs, options.startMs);
      const earlierBad = attempts.find((a) => a.kind === "ineligible" || a.kind === "unknown");
      /** A violation shown by the hand-off and the attempt that does not allow it. */
      const flag = (text: string, attempt: Attempt | undefined): void => {
        violations.push(
          finding(
            text,
            attempt?.events.filter((e) => EVIDENT.has(e.name)),
            event,
          ),
        );
      };
      if (reason === "fallback") {
        if (earlierBad !== undefined) {
          flag(
            `${actor.id}: handed to SMTP (fallback) at ${at}, though attempt ${earlierBad.attempt.index} was not fallback-eligible (${earlierBad.why}) [ERR-23]`,
            earlierBad.attempt,
          );
        } else if (last === undefined || last.kind !== "eligible") {
          flag(
            `${actor.id}: handed to SMTP (fallback) at ${at} after an attempt that was not a fallback-eligible failure [STATE-3]`,
            last?.attempt,
          );
        } else if (last.attempt.startMs < actor.startMs + windowMs) {
          flag(
            `${actor.id}: handed to SMTP (fallback) at ${at}, after an attempt made at ${recordedOffset(last.attempt.startMs, options.startMs)}, before the ${windowMs / 60000}-minute fallback window ended [STATE-3, ERR-22]`,
            last.attempt,
          );
        }
      } else if (reason === "no-common-version") {
        if (last?.kind !== "no-common-version") {
          flag(
            `${actor.id}: handed to SMTP for no common version at ${at}, but the last attempt showed none [STATE-4]`,
            last?.attempt,
          );
        }
      } else if (reason === "no-service") {
        if (last?.kind !== "no-service") {
          flag(
            `${actor.id}: handed to SMTP for no service at ${at}, but the last attempt found an endpoint [SVC-11]`,
            last?.attempt,
          );
        } else if (earlierBad !== undefined) {
          flag(
            `${actor.id}: handed to SMTP for no service at ${at}, though attempt ${earlierBad.attempt.index} had an answer that never falls back (${earlierBad.why}) [ERR-23]`,
            earlierBad.attempt,
          );
        }
      } else {
        flag(`${actor.id}: handed to SMTP at ${at} for an unknown reason ${JSON.stringify(reason)}`, undefined);
      }
    }
  }
  return {
    violations,
    checked: handOffs === 0 ? "no hand-off to SMTP" : `${plural(handOffs, "hand-off")} to SMTP, each allowed`,
    evidence: judged,
  };
}

function noRetryAfterPermanent(model: Model, options: InvariantOptions): Verdict {
  const violations: Finding[] = [];
  const judged: CheckedEvent[] = [];
  let permanent = 0;
  for (const actor of model.actors.values())
    permanent += retriedAfterPermanent(actor, model, options, violations, judged);
  return {
    violations,
    checked:
      permanent === 0
        ? "no permanent answer"
        : `${plural(permanent, "permanent answer")}, none retried over the service`,
    evidence: judged,
  };
}

/**
 * {@link noRetryAfterPermanent} over one actor: its violations and judged answers added to the lists, the count of
 * its permanent answers returned. A function of its own so that V8 optimizes the events' loop as a function, not
 * by on-stack replacement inside the actors' loop (each exit from the inner loop deoptimized it; decision 0200).
 */
function retriedAfterPermanent(
  actor: Actor,
  model: Model,
  options: InvariantOptions,
  violations: Finding[],
  judged: CheckedEvent[],
): number {
  let permanent = 0;
  /** Recipient → why it is final for the service, and the answer that made it so. */
  const finalFor = new Map<string, { why: string; answer: CheckedEvent }>();
  const deadDeliveries = new Map<string, { why: string; answer: CheckedEvent }>();
  for (const attempt of actor.attempts) {
    for (const e of attempt.events) {
      const started = dataOf(e, "attempt.started");
      const result = dataOf(e, "recipient.result");
      const ended = dataOf(e, "attempt.ended");
      const deliveryId = (started ?? result ?? ended)?.deliveryId ?? "";
      if (started !== undefined) {
        if (started.sent === false) continue;
        const dead = deadDeliveries.get(deliveryId);
        if (dead !== undefined) {
          violations.push(
            finding(
              `${deliveryId}: sent again at ${recordedOffset(e.timeMs, options.startMs)} after ${dead.why}`,
              dead.answer,
              e,
            ),
          );
          continue;
        }
        for (const r of (started.recipients ?? []).map(normalizeAddress)) {
          const final = finalFor.get(r);
          if (final !== undefined)
            violations.push(
              finding(
                `${actor.id}: ${r} sent again at ${recordedOffset(e.timeMs, options.startMs)} after ${final.why}`,
                final.answer,
                e,
              ),
            );
        }
      } else if (result?.status === "rejected") {
        permanent++;
        judged.push(e);
        finalFor.set(normalizeAddress(result.recipient ?? ""), {
          why: `it was rejected at ${recordedOffset(e.timeMs, options.startMs)} [RCP-7]`,
          answer: e,
        });
      } else if (ended !== undefined && permanentEnding(ended, options.readings)) {
        permanent++;
        judged.push(e);
        const final = {
          why: `a permanent answer (${ended.status ?? "not sent"}) at ${recordedOffset(e.timeMs, options.startMs)} [STATE-9]`,
          answer: e,
        };
        deadDeliveries.set(deliveryId, final);
        for (const r of model.deliveries.get(deliveryId) ?? []) finalFor.set(r, final);
      }
    }
  }
  return permanent;
}

// The retry schedule in SPEC.md's own numbers ("Retry schedule", G16), written out here and not
// imported from app/sender: a checker that shares the sender's constants passes whatever they say.
/** RETRY-1: the first retry 1 minute after the first attempt. */
const SPEC_FIRST_RETRY_MS = 60_000;
/** RETRY-2: the delay doubles per attempt, capped at 1 hour. */
const SPEC_RETRY_CAP_MS = 3_600_000;
/** RETRY-3: each delay randomized by ±20 %. */
const SPEC_JITTER = 0.2;
/** RETRY-6: give up after 5 days. */
const GIVE_UP_AFTER_MS = 5 * 24 * 3_600_000;

/** The schedule's numbers a run is judged by: SPEC.md's above, or those the run departed to. */
interface Schedule {
  readonly firstRetryMs: number;
  readonly factor: number;
  readonly capMs: number;
  readonly jitter: number;
  readonly giveUpMs: number;
}

const SPEC_SCHEDULE: Schedule = {
  firstRetryMs: SPEC_FIRST_RETRY_MS,
  factor: 2,
  capMs: SPEC_RETRY_CAP_MS,
  jitter: SPEC_JITTER,
  giveUpMs: GIVE_UP_AFTER_MS,
};

/** Which field of {@link Schedule} each knob of the draft sets; the others leave the schedule alone. */
const SCHEDULE_KNOBS: Readonly<Record<string, keyof Schedule>> = {
  "RETRY-1": "firstRetryMs",
  "RETRY-2.factor": "factor",
  "RETRY-2.cap": "capMs",
  "RETRY-3": "jitter",
  "RETRY-6": "giveUpMs",
};

/** SPEC.md's schedule with the run's departures (the trace's `constants`) applied. */
function scheduleOf(options: InvariantOptions): Schedule {
  const schedule: { -readonly [K in keyof Schedule]: number } = { ...SPEC_SCHEDULE };
  for (const [name, value] of Object.entries(options.constants ?? {})) {
    const knob = specKnob(name);
    const field = knob === undefined ? undefined : SCHEDULE_KNOBS[knob.name];
    if (knob === undefined || field === undefined) continue;
    const parsed = parseKnobValue(knob, value);
    if (parsed.ok) schedule[field] = parsed.value;
  }
  return schedule;
}

/** The delay before retry `retry` (1 for the first) without jitter: min(1 min · 2^(retry−1), 1 h) (G16). */
function specRetryDelayMs(retry: number, schedule: Schedule): number {
  // A count so large that the power overflows gives Infinity, and the cap.
  return Math.min(Math.round(schedule.firstRetryMs * schedule.factor ** (retry - 1)), schedule.capMs);
}

function retrySchedule(model: Model, options: InvariantOptions): Verdict {
  const violations: string[] = [];
  const { jitter } = options.readings.retryTiming;
  const schedule = scheduleOf(options);
  const spread = schedule.jitter;
  const percent = `${Math.round(spread * 100)} %`;
  let retries = 0;
  for (const actor of model.actors.values()) {
    for (let k = 1; k < actor.attempts.length; k++) {
      const previous = actor.attempts[k - 1] as Attempt;
      const attempt = actor.attempts[k] as Attempt;
      retries++;
      const base = specRetryDelayMs(k, schedule);
      const setAt = previous.events.filter((e) => e.name === "timer.set").at(-1)?.timeMs ?? previous.startMs;
      const lowerBoundMs = retryAfterLowerBound(previous, options);
      const lo = previous.startMs + (jitter ? Math.floor(base * (1 - spread)) - 1 : base);
      const hi = previous.startMs + (jitter ? Math.ceil(base * (1 + spread)) + 1 : base);
      const latest = Math.max(hi, lowerBoundMs ?? -Infinity, setAt);
      const t = attempt.startMs;
      const at = recordedOffset(t, options.startMs);
      if (lowerBoundMs !== undefined && t < lowerBoundMs) {
        violations.push(
          `${actor.id}: attempt ${k + 1} at ${at}, before the Retry-After of ${recordedOffset(lowerBoundMs, options.startMs)} [RETRY-7]`,
        );
      } else if (t < lo) {
        violations.push(
          `${actor.id}: attempt ${k + 1} at ${at}, earlier than ${jitter ? `${100 - Math.round(spread * 100)} % of ` : ""}the ${base / 1000}-second delay after attempt ${k} at ${recordedOffset(previous.startMs, options.startMs)} [RETRY-2, G16]`,
        );
      } else if (t > latest || (!jitter && t !== Math.max(hi, lowerBoundMs ?? -Infinity, setAt))) {
        violations.push(
          `${actor.id}: attempt ${k + 1} at ${at}, ${jitter ? `later than ${100 + Math.round(spread * 100)} % of` : "not at"} the ${base / 1000}-second delay after attempt ${k} at ${recordedOffset(previous.startMs, options.startMs)} [RETRY-2, G16]`,
        );
      }
    }
  }
  return {
    violations,
    checked: `${retries === 0 ? "no retry" : `${retries} retr${retries === 1 ? "y" : "ies"}, each within the schedule`} (jitter ${jitter ? (spread === SPEC_JITTER ? "on" : `on, ±${percent}`) : "off"})${departed(schedule, ["firstRetryMs", "factor", "capMs"])}`,
  };
}

/**
 * The latest time an attempt's Retry-After answers allow its retry at (RETRY-7), or undefined when none said
 * one. A function of its own so that V8 optimizes the events' loop as a function, not by on-stack replacement
 * inside the actors' and attempts' loops (each exit from the inner loop deoptimized it; decision 0200).
 */
function retryAfterLowerBound(attempt: Attempt, options: InvariantOptions): number | undefined {
  let lowerBoundMs: number | undefined;
  for (const e of attempt.events) {
    const result = dataOf(e, "recipient.result");
    const seconds =
      dataOf(e, "attempt.ended")?.retryAfterS ??
      (result?.status === "deferred" ? result.retryAfterS : undefined) ??
      // G47 `lower-bound`: a failed capabilities answer's Retry-After counts too.
      (options.readings.capabilitiesRetryAfter === "lower-bound"
        ? dataOf(e, "capabilities.invalid")?.retryAfterS
        : undefined);
    if (seconds !== undefined) lowerBoundMs = Math.max(lowerBoundMs ?? -Infinity, e.timeMs + seconds * 1000);
  }
  return lowerBoundMs;
}

/** `; first retry 30s, factor 3, cap 30m (not SPEC.md's)` for the schedule's numbers that departed; "" for none. */
function departed(schedule: Schedule, fields: readonly (keyof Schedule)[]): string {
  const words: Record<keyof Schedule, (v: number) => string> = {
    firstRetryMs: (v) => `first retry ${durationWords(v)}`,
    factor: (v) => `factor ${v}`,
    capMs: (v) => `cap ${durationWords(v)}`,
    jitter: (v) => `jitter ±${Math.round(v * 100)} %`,
    giveUpMs: (v) => `give-up ${durationWords(v)}`,
  };
  const parts = fields.filter((f) => schedule[f] !== SPEC_SCHEDULE[f]).map((f) => words[f](schedule[f]));
  return parts.length === 0 ? "" : `; ${parts.join(", ")} (not SPEC.md's)`;
}

function giveUpAtFiveDays(model: Model, options: InvariantOptions): Verdict {
  const violations: Finding[] = [];
  const judged: CheckedEvent[] = [];
  let bounces = 0;
  const { giveUpMs: after } = scheduleOf(options);
  const days = after === GIVE_UP_AFTER_MS ? "5 days" : durationWords(after);
  for (const actor of model.actors.values()) {
    const giveUpMs = actor.startMs + after;
    for (const attempt of actor.attempts) {
      if (attempt.startMs >= giveUpMs) {
        violations.push(
          finding(
            `${actor.id}: attempt ${attempt.index} at ${recordedOffset(attempt.startMs, options.startMs)}, at or after the give-up at ${days} [STATE-7]`,
            attempt.events.filter((e) => EVIDENT.has(e.name)),
          ),
        );
      }
    }
    const bounce = actor.bounced;
    if (bounce === undefined) continue;
    bounces++;
    judged.push(bounce);
    const at = recordedOffset(bounce.timeMs, options.startMs);
    const last = actor.attempts.at(-1);
    if (bounce.timeMs < giveUpMs) {
      violations.push(finding(`${actor.id}: bounced at ${at}, before ${days} had passed [STATE-7, RETRY-6]`, bounce));
    } else if (bounce.timeMs > giveUpMs) {
      // Late only when an attempt was under way at the 5-day mark and the bounce came as it ended.
      const timerBefore = last?.events.some((e) => e.name === "timer.set" && e.timeMs <= giveUpMs) === true;
      if (last === undefined || last.startMs >= giveUpMs || timerBefore) {
        violations.push(
          finding(
            `${actor.id}: bounced at ${at}, later than ${days} after the first attempt [STATE-7, RETRY-6]`,
            last?.events.filter((e) => EVIDENT.has(e.name)),
            bounce,
          ),
        );
      }
    }
  }
  return {
    violations,
    checked: `${bounces === 0 ? `no bounce; no attempt after give-up at ${days}` : `${plural(bounces, "bounce")}, each at ${days}; no attempt after give-up`}${after === GIVE_UP_AFTER_MS ? "" : " (not SPEC.md's 5 days)"}`,
    evidence: judged,
  };
}
