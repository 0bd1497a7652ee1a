/**
 * The names of trace events: dotted and lowercase, the same in the trace, the
 * UI and the docs. Every component emits only names listed here, each with the
 * data fields said beside it, so the UI and the exporters can rely on them.
 */
export const traceEventNames = {
  // Submission and outcome of messages.
  "message.submitted": "a message enters a domain's sender (messageId, from, to)",
  "recipient.outcome":
    "a recipient's final outcome (messageId, recipient, outcome: accepted | rejected | smtp | bounced, rule)",
  // The draft's numbers, when a run departs from SPEC.md's (issue 30).
  "spec.constants":
    "the run follows numbers other than SPEC.md's, traced first (constants: knob → value, departures: [{ name, title, value, spec, rules }], rules)",
  // Faults and DNS changes of the simulated world.
  "fault.window":
    "a fault of the world, traced when it is added (id, layer: network | dns, kind, scope, fromMs, untilMs: number | null, probability, settings)",
  "dns.changed":
    "records at a name changed, traced at the time the change takes effect (name, records: { svcb, txt, ttlS } | null, cause: scheduled | set)",
  // DNS.
  "dns.query": "a DNS question (name, type: SVCB | TXT)",
  "dns.answer": "its answer (name, type, kind: answer | nxdomain | nodata | servfail | timeout, records, ttlS, fault?)",
  // Discovery, capabilities and pin on the sender's side; each names the delivery actor whose attempt asked (deliveryActor).
  "discovery.resolved": "the endpoint found for a domain (domain, origin) or none (domain, outcome)",
  "capabilities.fetched": "a capabilities document fetched and valid (domain, capabilities, maxAgeS)",
  "capabilities.cached": "a cached capabilities document reused (domain, ageS)",
  "capabilities.invalid":
    "a capabilities document that could not be fetched or is invalid (domain, violations | failure)",
  "pin.set": "a discovery pin set or refreshed (domain, expiresAtMs)",
  "pin.removed": "a discovery pin removed (domain, reason)",
  "version.negotiated": "the version chosen (domain, version) or none in common (domain, ours, theirs)",
  // The delivery machine.
  "delivery.created": "a new delivery (messageId, domain, deliveryId, idempotencyKey, recipients)",
  "machine.started":
    "a delivery actor starts (deliveryActor, machine, state: its initial leaf state path, messageId, domain, recipients)",
  "machine.transition":
    "a state transition of a delivery actor (deliveryActor, from, to: leaf state paths from the root, event, attempt: the one it belongs to or starts, rule)",
  "attempt.started": "one POST of an attempt over the service (deliveryId, attempt, url)",
  "attempt.ended": "how that POST ended (deliveryId, attempt, status?, problem?, failure?, class, fallbackEligible)",
  "attempt.judged":
    "every attempt once, POST or not, when it is over (deliveryActor, attempt, startedAtMs, endedAtMs, stage: discovery | capabilities | version | post, class, posts, fallbackEligible, rule; on attempt 1 the fallback window and give-up time)",
  "recipient.result": "one recipient's result in a 200 answer (deliveryId, recipient, status, problem?, retryAfterS?)",
  "timer.set":
    "a retry timer (deliveryActor, retry, attempt: the attempt it starts, atMs, delayMs: time left, baseDelayMs, jitteredDelayMs, lowerBoundMs?, lowerBoundDelayMs?, decidedBy, reason)",
  "timer.fired": "a retry timer fired (deliveryActor, retry, attempt: the attempt it starts)",
  "smtp.handoff": "a message handed to SMTP (messageId, recipients, reason: no-service | fallback | no-common-version)",
  "delivery.bounced": "give-up after 5 days (messageId, domain, recipients)",
  "dsn.sent": "a DSN submitted to the envelope sender (messageId, dsnMessageId, to, reason, recipients)",
  "dsn.suppressed":
    "a DSN that failed, not reported by another DSN whatever its from said (messageId: the DSN's, recipients, rule)",
  // HTTP on the wire.
  "http.request":
    "a request sent (exchangeId, method, url, headers, bodySize, bodyDigest, body? | bodyBase64? with whole bodies recorded)",
  "http.response":
    "its answer (exchangeId, status, statusText?, headers, bodySize, bodyDigest, bodyDurationMs?, fault?, body? | bodyBase64?)",
  "http.failure":
    "no answer (exchangeId, kind: connection-refused | connection-reset | tls | timeout | aborted | error, message, fault?)",
  // The receiver.
  // Each of these carries exchangeId?: the HTTP exchange (http.request) it answers, when the host gave one.
  "receiver.request": "a request reached the receiver, traced on arrival (exchangeId?, method, path, idempotencyKey?)",
  "receiver.response":
    "the receiver's answer (exchangeId?, status, signingDomain? once verified, problem?, recipients?)",
  "idempotency.replay":
    "a known key with the same content: the stored answer replayed (exchangeId?, signingDomain, key)",
  "idempotency.conflict": "a known key with other content (exchangeId?, signingDomain, key)",
  "mailbox.delivered": "a message stored in a mailbox (exchangeId?, mailbox, messageId?, size)",
  "failure.after-acceptance": "an accepted message that later failed (mailbox, status), answered by a DSN",
  // `mailscope probe`: a real receiver checked from outside (docs/probe.md); its trace holds these and the wire.
  "probe.started":
    "a probe of a receiver starts (target, origin?, domain, from, keyid, keyRecord, mailboxes, absent, plan: { cases, requests, messages, messagesAtMost })",
  "probe.tls":
    "a TLS handshake the probe made to test the origin (version: TLSv1.3 | TLSv1.2, outcome: established | refused | failed, protocol?, cipher?, authorized?, authorizationError?, message?)",
  "probe.case":
    "one probe case's verdict (id, rule, rules, grade: MUST | SHOULD | MAY, title, expected, actual, result: PASS | FAIL | SKIP, why?, exchanges, evidence)",
  // Checks of a simulation run.
  "invariant.checked":
    "an invariant over the whole run (id, passed, detail, evidence?: the seqs of the events behind the verdict, rules)",
  "expectation.checked":
    "a scenario expectation (id, passed, detail, evidence?: the seqs of the events it was judged on)",
} as const;

export type TraceEventName = keyof typeof traceEventNames;

export function isTraceEventName(name: string): name is TraceEventName {
  return Object.hasOwn(traceEventNames, name);
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
  const names = Object.keys(traceEventNames) as TraceEventName[];
  const closest = names.map((n) => ({ n, d: distance(name, n) })).sort((a, b) => a.d - b.d)[0];
  return closest !== undefined && closest.d <= 3 ? closest.n : undefined;
}
