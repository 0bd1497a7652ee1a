/**
 * The trace events, defined once (docs/decisions/0135-trace-event-contract.md).
 *
 * Each event name — dotted and lowercase, the same in the trace, the UI and
 * the docs — has one entry here: who emits it, what it says, and a zod object
 * of its `data` fields. Everything else is derived from this table:
 *
 * - the TypeScript types: {@link EventData} (what a reader finds in `data`)
 *   and {@link EmitData} (what a producer hands to `emit`), so that a misspelt
 *   name or field fails to compile (app/ports.ts `TraceEvent`);
 * - the JSON Schema of each name's `data` in schemas/trace.schema.json
 *   (eventData.ts);
 * - the event table of docs/trace-format.md (scripts/gen-trace-schema.ts);
 * - the lenient, narrowing reader of recorded events (eventReader.ts).
 *
 * The schemas are for types, readers, tests and docs: nothing parses an event
 * with them while a run records it. Fields added in trace version 2
 * (`exchangeId` on the receiver's events, `deliveryActor` on discovery) are
 * optional, so a version-1 trace still fits. `data` stays open: a reader
 * ignores fields it does not know.
 */
import * as z from "zod";

const text = z.string();
const count = z.int().min(0);
const ms = z.number();
const strings = z.array(z.string());
const json = z.record(z.string(), z.unknown());
const ruleId = z.string();

/** One event of the catalogue: who emits it, what it says, its data fields, and what the table adds. */
interface EventDefinition<S extends z.ZodRawShape> {
  /** Who emits it (docs/trace-format.md's "emitted by"). */
  readonly by: string;
  /** What it says, in a few words. */
  readonly about: string;
  /** Its `data` fields. Optional fields are those an event of this name may carry. */
  readonly data: z.ZodObject<S>;
  /** More for the docs table, after the fields. */
  readonly more?: string;
}

function event<S extends z.ZodRawShape>(by: string, about: string, data: S, more?: string): EventDefinition<S> {
  return { by, about, data: z.object(data), ...(more !== undefined && { more }) };
}

const A_SENDER = "a sender";
const AN_ACTOR = "a sender's delivery actor";
const A_RECEIVER = "a receiver";
const THE_NETWORK = "the network";
const PROBE = "`mailscope probe`";

/** What every discovery event names: the domain discovered, and (version 2) the delivery actor whose attempt asked. */
const discovery = { domain: text, deliveryActor: text.optional().describe("the delivery actor whose attempt asked") };
/** The HTTP exchange a receiver's event answers (version 2), when the host gave one. */
const exchangeId = text.optional().describe("the `http.request` it answers");
const fault = text.optional().describe("the `fault.window` that decided it");
const bodyFields = {
  body: text.optional().describe("the whole body as text, with bodies recorded"),
  bodyBase64: text.optional().describe("the whole body in base64 when it is not UTF-8"),
};
const probeCases = strings.optional().describe("the probe cases it serves");

/** Every trace event: name → definition. */
export const traceEvents = {
  // Submission and outcome of messages.
  "message.submitted": event(A_SENDER, "a message enters a domain's sender", {
    messageId: text,
    from: text.nullable().describe("null for a DSN"),
    to: strings,
    readings: json.optional().describe("the sender's readings"),
  }),
  "recipient.outcome": event(A_SENDER, "a recipient's final outcome, one per recipient per message", {
    messageId: text,
    recipient: text,
    outcome: z.enum(["accepted", "rejected", "smtp", "bounced"]),
    rule: ruleId,
    gaps: strings.optional(),
    deliveryId: text.optional(),
    problem: text.optional(),
  }),
  // The draft's numbers, faults and DNS changes of the simulated world.
  "spec.constants": event(
    "the world, first, off SPEC.md",
    "the run follows numbers other than SPEC.md's",
    {
      constants: z.record(z.string(), z.string()).describe("as the trace's member"),
      departures: z
        .array(z.object({ name: text, title: text, value: text, spec: text, rules: strings }))
        .describe("`[{ name, title, value, spec, rules }]`"),
      rules: strings,
    },
    'docs/scenario-format.md "The draft\'s numbers"',
  ),
  "fault.window": event(
    "the world, when a fault is added",
    "a fault of the world",
    {
      id: text.describe("the fault's `id`, else `<position>:<kind>`, as `fault` fields cite it"),
      layer: z.enum(["network", "dns"]),
      kind: text,
      scope: json.optional(),
      fromMs: ms,
      untilMs: ms.nullable(),
      probability: z.number().optional(),
      settings: json.optional(),
    },
    "see [Faults and DNS changes](#faults-and-dns-changes)",
  ),
  "dns.changed": event("the DNS zone", "records at a name changed, when the change takes effect", {
    name: text,
    records: z
      .object({ svcb: z.array(z.unknown()), txt: strings, ttlS: count })
      .nullable()
      .describe("`{ svcb, txt, ttlS }`, or `null`: the name is gone"),
    cause: z
      .enum(["scheduled", "set"])
      .optional()
      .describe("`scheduled`: a scenario's `dnsChanges` entry; `set`: changed while running"),
  }),
  // DNS.
  "dns.query": event("the DNS zone", "a DNS question", { name: text, type: z.enum(["SVCB", "TXT"]) }),
  "dns.answer": event("the DNS zone", "its answer", {
    name: text,
    type: z.enum(["SVCB", "TXT"]),
    kind: z.enum(["answer", "nxdomain", "nodata", "servfail", "timeout"]),
    records: z.array(z.unknown()).optional(),
    ttlS: count.optional(),
    fault,
  }),
  // Discovery, capabilities and pin on the sender's side.
  "discovery.resolved": event(
    A_SENDER,
    "the endpoint found for a domain, or none",
    {
      ...discovery,
      origin: text.optional(),
      unreachable: strings.optional().describe("origins of the SVCB answer that could not be reached"),
      outcome: z.enum(["no-service", "dns-failure", "no-record"]).optional().describe("when none was found"),
      answer: text.optional().describe("the DNS answer's kind"),
      gap: text.optional(),
      rule: ruleId.optional(),
      pinExpiresAtMs: ms.optional(),
      pinIgnored: z.boolean().optional(),
      pinGap: text.optional(),
    },
    "`domain` and `origin`, or `outcome` (`no-record` with a pin)",
  ),
  "capabilities.fetched": event(A_SENDER, "a capabilities document fetched and valid", {
    ...discovery,
    origin: text,
    capabilities: json,
    maxAgeS: z.number(),
    rule: ruleId.optional(),
  }),
  "capabilities.cached": event(A_SENDER, "a cached capabilities document reused", {
    ...discovery,
    origin: text,
    ageS: z.number(),
    maxAgeS: z.number().optional(),
  }),
  "capabilities.invalid": event(
    A_SENDER,
    "a capabilities document that could not be fetched or is invalid",
    {
      ...discovery,
      origin: text,
      violations: z.array(z.unknown()).optional(),
      failure: text.optional(),
      rule: ruleId.optional().describe("GET-9"),
      status: count.optional().describe("an answer other than 200"),
      retryAfterS: z.number().optional(),
      G46: text.optional().describe("the reading that decided a 4xx"),
      fallbackEligible: z.boolean().optional(),
      G47: text.optional().describe("the reading that decided a Retry-After"),
      retryAfterIgnored: z.boolean().optional(),
      gaps: strings.optional(),
    },
    "`violations` or `failure`",
  ),
  "pin.set": event(A_SENDER, "a discovery pin set or refreshed", {
    ...discovery,
    expiresAtMs: ms,
    maxAgeS: z.number().optional(),
    refreshed: z.boolean().optional(),
    rule: ruleId.optional(),
    advertisedS: z.number().optional().describe("the max-age advertised, when clamped (CAP-13)"),
  }),
  "pin.removed": event(A_SENDER, "a discovery pin removed", {
    ...discovery,
    reason: text,
    rule: ruleId.optional(),
  }),
  "version.negotiated": event(
    A_SENDER,
    "the version chosen, or none in common",
    {
      ...discovery,
      version: text.optional(),
      ours: strings.optional(),
      theirs: strings.optional(),
      rule: ruleId.optional(),
      gap: text.optional(),
    },
    "`version`, or `ours` and `theirs` when none is common",
  ),
  // The delivery machine.
  "delivery.created": event(A_SENDER, "a new delivery", {
    messageId: text,
    domain: text,
    deliveryId: text.describe("`<messageId>→<domain>#<n>`"),
    idempotencyKey: text,
    recipients: strings,
    rule: ruleId.optional(),
    rules: strings.optional(),
    gap: text.optional(),
    batch: count.optional().describe("under G12"),
    batches: count.optional(),
    maxRecipients: count.optional(),
    misbehaviour: json.optional(),
    keyReusedFrom: text.optional(),
    violates: strings.optional(),
  }),
  "machine.started": event(AN_ACTOR, "a delivery actor starts", {
    deliveryActor: text,
    machine: text.describe("`delivery`"),
    state: text.describe("its initial leaf state path"),
    messageId: text.optional(),
    domain: text.optional(),
    recipients: strings.optional(),
  }),
  "machine.transition": event(
    AN_ACTOR,
    "a state transition of a delivery actor",
    {
      deliveryActor: text,
      from: text.describe("leaf state path"),
      to: text.describe("leaf state path"),
      event: text.optional(),
      attempt: count.optional().describe("the one it belongs to or starts"),
      transition: text.optional(),
      row: count.optional().describe("of SPEC.md's states table"),
      rule: ruleId.optional(),
      rules: strings.optional(),
      gaps: strings.optional(),
    },
    "see [The delivery actor's states](#the-delivery-actors-states)",
  ),
  "attempt.started": event(A_SENDER, "one POST of an attempt", {
    deliveryId: text,
    attempt: count,
    url: text,
    idempotencyKey: text.optional(),
    recipients: strings.optional(),
    bodySize: count.optional(),
    sent: z.boolean().optional().describe("`false` when G13 kept it back"),
    maxMessageSize: count.optional(),
  }),
  "attempt.ended": event(A_SENDER, "how that POST ended", {
    deliveryId: text,
    attempt: count,
    status: count.optional(),
    problem: text.optional(),
    failure: text.optional(),
    retryAfterS: z.number().optional(),
    retryAfterIgnored: z
      .union([z.string(), z.number(), z.boolean()])
      .optional()
      .describe("a Retry-After as sent that did not count: permanent answer, G26, G21"),
    class: text,
    fallbackEligible: z.boolean(),
    rule: ruleId.optional(),
    gaps: strings.optional(),
    sent: z.boolean().optional(),
  }),
  "attempt.judged": event(
    AN_ACTOR,
    "every attempt once, POST or not, when it is over",
    {
      deliveryActor: text,
      attempt: count,
      startedAtMs: ms,
      endedAtMs: ms,
      stage: z.enum(["discovery", "capabilities", "version", "post"]),
      class: text,
      posts: count,
      fallbackEligible: z.boolean(),
      allAttemptsFallbackEligible: z.boolean().optional(),
      problem: text.optional(),
      status: count.optional(),
      detail: text.optional(),
      lowerBoundMs: ms.optional(),
      rule: ruleId,
      gaps: strings.optional(),
      fallbackWindowS: z.number().optional().describe("attempt 1 only"),
      fallbackWindowStartMs: ms.optional(),
      fallbackWindowEndMs: ms.optional(),
      giveUpAtMs: ms.optional(),
    },
    "see [Attempts](#attempts)",
  ),
  "recipient.result": event(A_SENDER, "one recipient's result in a 200 answer", {
    deliveryId: text,
    recipient: text,
    status: text,
    rule: ruleId.optional(),
    problem: text.optional(),
    retryAfterS: z.number().optional(),
  }),
  "timer.set": event(
    AN_ACTOR,
    "a retry timer",
    {
      deliveryActor: text,
      retry: count,
      attempt: count.optional().describe("the attempt it starts"),
      atMs: ms,
      delayMs: z.number().describe("time left"),
      reason: z.enum(["schedule", "retry-after"]).optional(),
      attemptStartedAtMs: ms.optional(),
      baseDelayMs: z.number().optional(),
      jitter: z.boolean().optional(),
      jitteredDelayMs: z.number().optional(),
      scheduledAtMs: ms.optional(),
      lowerBoundMs: ms.optional(),
      lowerBoundDelayMs: z.number().optional(),
      lowerBoundFrom: z.enum(["Retry-After", "retry_after"]).optional(),
      decidedBy: z.enum(["base-delay", "jittered-delay", "retry-after", "attempt-end"]).optional(),
      giveUpAtMs: ms.optional(),
      rule: ruleId.optional(),
      gap: text.optional(),
    },
    "see [Retries](#retries)",
  ),
  "timer.fired": event(AN_ACTOR, "a retry timer fired", {
    deliveryActor: text,
    retry: count.optional(),
    attempt: count.optional().describe("that attempt starts"),
  }),
  "smtp.handoff": event(A_SENDER, "a message handed to SMTP", {
    messageId: text,
    recipients: strings,
    reason: z.enum(["no-service", "fallback", "no-common-version"]),
    accepted: z.boolean().describe("G18"),
    rule: ruleId.optional(),
    detail: text.optional(),
  }),
  "delivery.bounced": event(A_SENDER, "give-up after 5 days", {
    messageId: text,
    domain: text,
    recipients: strings,
    firstAttemptAtMs: ms.optional(),
    attempts: count,
    rule: ruleId.optional(),
  }),
  "dsn.sent": event("a sender, or the world for a receiver", "a DSN submitted to the envelope sender", {
    messageId: text.optional().describe("the original's"),
    dsnMessageId: text.optional(),
    to: text,
    reason: text.describe("`bounced`, `rejected`, or `failure-after-acceptance` for a receiver's DSN, G17"),
    recipients: strings,
    rule: ruleId.optional(),
    gaps: strings.optional(),
  }),
  "dsn.suppressed": event("the world", "a DSN that failed, not reported by another DSN whatever its from said", {
    messageId: text.describe("the DSN's"),
    recipients: strings,
    rule: ruleId,
  }),
  // HTTP on the wire.
  "http.request": event(THE_NETWORK, "a request sent", {
    exchangeId: text,
    method: text,
    url: text,
    headers: z.record(z.string(), z.string()),
    bodySize: count,
    bodyDigest: text.optional(),
    ...bodyFields,
    probeCases,
  }),
  "http.response": event(THE_NETWORK, "its answer", {
    exchangeId: text,
    status: count,
    statusText: text.optional(),
    headers: z.record(z.string(), z.string()),
    bodySize: count,
    bodyDigest: text.optional(),
    bodyDurationMs: z.number().optional(),
    fault,
    ...bodyFields,
    requestBodySentBytes: count.optional().describe("a probe's streamed oversized body"),
    probeCases,
  }),
  "http.failure": event(THE_NETWORK, "no answer", {
    exchangeId: text,
    kind: z.enum(["connection-refused", "connection-reset", "tls", "timeout", "dns", "aborted", "error"]),
    message: text,
    fault,
    probeCases,
  }),
  // The receiver.
  "receiver.request": event(`${A_RECEIVER}, on arrival`, "a request reached the receiver", {
    exchangeId,
    method: text,
    path: text,
    idempotencyKey: text.optional(),
  }),
  "receiver.response": event(A_RECEIVER, "the receiver's answer", {
    exchangeId,
    status: count,
    signingDomain: text.optional().describe("once the signature was verified"),
    problem: text.optional(),
    recipients: z.array(z.unknown()).optional(),
  }),
  "idempotency.replay": event(A_RECEIVER, "a known key with the same content: the stored answer replayed (POST-12)", {
    exchangeId,
    signingDomain: text,
    key: text,
    recipients: strings.optional(),
  }),
  "idempotency.conflict": event(A_RECEIVER, "a known key with other content (POST-26)", {
    exchangeId,
    signingDomain: text,
    key: text,
  }),
  "mailbox.delivered": event(A_RECEIVER, "a message stored in a mailbox", {
    exchangeId,
    mailbox: text,
    messageId: text.optional().describe("the Message-ID header"),
    size: count,
  }),
  "failure.after-acceptance": event(A_RECEIVER, "an accepted message that later failed, answered by a DSN", {
    mailbox: text,
    status: text,
  }),
  // `mailscope probe`: a real receiver checked from outside (docs/probe.md).
  "probe.started": event(PROBE, "a probe of a receiver starts; the first event", {
    target: text,
    origin: text.optional(),
    domain: text.optional(),
    from: text.optional(),
    keyid: text.optional(),
    keyRecord: text.optional().describe("its public key"),
    mailboxes: strings.optional(),
    absent: text.optional(),
    plan: z
      .object({
        cases: count,
        requests: count,
        handshakes: count,
        messages: count,
        messagesAtMost: count,
        mailboxes: strings,
        requestsPerSecond: z.number(),
      })
      .partial()
      .describe("`cases`, `requests`, `handshakes`, `messages`, `messagesAtMost`, `mailboxes`, `requestsPerSecond`"),
  }),
  "probe.tls": event(PROBE, "a TLS handshake the probe made to test the origin", {
    origin: text.optional(),
    version: z.enum(["TLSv1.3", "TLSv1.2"]),
    outcome: z.enum(["established", "refused", "failed"]),
    protocol: text.optional(),
    cipher: text.optional(),
    authorized: z.boolean().optional(),
    authorizationError: text.optional(),
    certificateNames: strings.optional(),
    failure: text.optional(),
    message: text.optional(),
  }),
  "probe.case": event(PROBE, "one probe case's verdict", {
    id: text,
    rule: ruleId,
    rules: strings.optional(),
    gaps: strings.optional(),
    grade: z.enum(["MUST", "SHOULD", "MAY"]),
    title: text.optional(),
    expected: text.optional(),
    actual: text.optional(),
    result: z.enum(["PASS", "FAIL", "SKIP"]),
    why: text.optional(),
    exchanges: strings,
    evidence: z.array(count).optional(),
  }),
  // Checks of a simulation run.
  "invariant.checked": event("the run", "an invariant over the whole run, after its last event", {
    id: text,
    passed: z.boolean(),
    detail: text.optional(),
    evidence: z.array(count).optional().describe("the seqs of the events behind the verdict"),
    rules: strings.optional(),
  }),
  "expectation.checked": event("the run", "a scenario expectation", {
    id: text,
    passed: z.boolean(),
    detail: text.optional(),
    evidence: z.array(count).optional().describe("the seqs of the events it was judged on"),
  }),
} as const;

type Catalogue = typeof traceEvents;

/** The name of a trace event. */
export type TraceEventName = keyof Catalogue;

/** What a reader finds in the `data` of an event named `N` (plain JSON, as recorded). */
export type EventData<N extends TraceEventName> = z.output<Catalogue[N]["data"]>;

/**
 * What a producer hands to `emit` for an event named `N`: {@link EventData}, where a
 * field may also be a value the recorder turns into JSON (app/trace/recorder.ts
 * `toJsonValue`: bytes, Headers, Maps, readonly arrays).
 */
export type EmitData<N extends TraceEventName> = Emittable<z.input<Catalogue[N]["data"]>>;

/**
 * A producer's own `emit(name, data)`: `name` one of `Names`, `data` that name's data without the
 * fields `Given`, which the producer adds itself (its `deliveryId`, its `domain`).
 */
export type Emit<Names extends TraceEventName = TraceEventName, Given extends string = never> = <N extends Names>(
  name: N,
  data: Omit<EmitData<N>, Given>,
) => void;

/** `T` with each field widened to what the recorder converts to it. */
type Emittable<T> = { readonly [K in keyof T]: EmittableValue<T[K]> };
type EmittableValue<V> = V extends readonly (infer I)[]
  ? readonly EmittableValue<I>[]
  : V extends Record<string, unknown>
    ? string extends keyof V
      ? unknown extends V[string]
        ? object // an open object (`capabilities`, `settings`): any object, as the recorder copies it
        : Emittable<V> | Headers | ReadonlyMap<string, V[string]>
      : Emittable<V>
    : V;

/** Every event name, each with what it says (the catalogue's `about`). */
export const traceEventNames: Readonly<Record<TraceEventName, string>> = Object.fromEntries(
  Object.entries(traceEvents).map(([name, def]) => [name, def.about]),
) as Record<TraceEventName, string>;

export function isTraceEventName(name: string): name is TraceEventName {
  return Object.hasOwn(traceEvents, name);
}

/**
 * What in `event` its definition does not allow: an unknown name, a field missing or of another type, a field
 * the catalogue does not list. Empty when it fits. For tests and checks of whole traces: nothing calls it while a
 * run records.
 */
export function eventMisfits(event: { readonly name: string; readonly data?: unknown }): string[] {
  if (!isTraceEventName(event.name)) return [`${event.name}: no such event in the catalogue`];
  const def: EventDefinition<z.ZodRawShape> = traceEvents[event.name];
  const parsed = def.data.safeParse(event.data ?? {});
  const wrong = (parsed.error?.issues ?? []).map((i) => `${event.name}.${i.path.join(".")}: ${i.message}`);
  const data = typeof event.data === "object" && event.data !== null ? event.data : {};
  const unlisted = Object.keys(data)
    .filter((field) => !Object.hasOwn(def.data.shape, field))
    .map((field) => `${event.name}.${field}: not in the catalogue`);
  return [...wrong, ...unlisted];
}

/** Edits (insert, delete, replace) from `a` to `b`. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/** The event name closest to `name` (a typo's), if one is at most 3 edits away. */
export function closestEventName(name: string): TraceEventName | undefined {
  const names = Object.keys(traceEvents) as TraceEventName[];
  const closest = names.map((n) => ({ n, d: distance(name, n) })).sort((a, b) => a.d - b.d)[0];
  return closest !== undefined && closest.d <= 3 ? closest.n : undefined;
}
