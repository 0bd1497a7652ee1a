/**
 * What each event name's `data` holds, as JSON Schema, for
 * schemas/trace.schema.json: the fields every event of that name carries
 * (docs/trace-format.md's table), with their types, and the enumerations the
 * table gives. Fields an event may carry are not listed: `data` stays open, as
 * the reader treats it. Fields added in trace version 2 (`exchangeId` on the
 * receiver's events, `deliveryActor` on discovery) are not required, so a
 * version-1 trace still fits.
 */
import type { TraceEventName } from "./events.ts";

type JsonSchema = Readonly<Record<string, unknown>>;

const str: JsonSchema = { type: "string" };
const num: JsonSchema = { type: "number" };
const int: JsonSchema = { type: "integer", minimum: 0 };
const bool: JsonSchema = { type: "boolean" };
const strings: JsonSchema = { type: "array", items: { type: "string" } };
const obj: JsonSchema = { type: "object" };
const oneOf = (...values: readonly string[]): JsonSchema => ({ type: "string", enum: values });

/** Per event name: the fields it always has and their schemas. */
export const EVENT_DATA: Readonly<Partial<Record<TraceEventName, Readonly<Record<string, JsonSchema>>>>> = {
  "message.submitted": { messageId: str, from: { type: ["string", "null"] }, to: strings },
  "recipient.outcome": {
    messageId: str,
    recipient: str,
    outcome: oneOf("accepted", "rejected", "smtp", "bounced"),
    rule: str,
  },
  "fault.window": {
    id: str,
    layer: oneOf("network", "dns"),
    kind: str,
    fromMs: num,
    untilMs: { type: ["number", "null"] },
  },
  "dns.changed": { name: str, records: { type: ["object", "null"] } },
  "dns.query": { name: str, type: str },
  "dns.answer": { name: str, type: str, kind: oneOf("answer", "nxdomain", "nodata", "servfail", "timeout") },
  "discovery.resolved": { domain: str },
  "capabilities.fetched": { domain: str, origin: str, capabilities: obj, maxAgeS: num },
  "capabilities.cached": { domain: str, origin: str, ageS: num },
  "capabilities.invalid": { domain: str, origin: str },
  "pin.set": { domain: str, expiresAtMs: num },
  "pin.removed": { domain: str, reason: str },
  "version.negotiated": { domain: str },
  "delivery.created": { messageId: str, domain: str, deliveryId: str, idempotencyKey: str, recipients: strings },
  "machine.started": { deliveryActor: str, machine: str, state: str },
  "machine.transition": { deliveryActor: str, from: str, to: str },
  "attempt.started": { deliveryId: str, attempt: int, url: str },
  "attempt.ended": { deliveryId: str, attempt: int, class: str, fallbackEligible: bool },
  "attempt.judged": {
    deliveryActor: str,
    attempt: int,
    startedAtMs: num,
    endedAtMs: num,
    stage: oneOf("discovery", "capabilities", "version", "post"),
    class: str,
    posts: int,
    fallbackEligible: bool,
    rule: str,
  },
  "recipient.result": { deliveryId: str, recipient: str, status: str },
  "timer.set": { deliveryActor: str, retry: int, atMs: num, delayMs: num },
  "timer.fired": { deliveryActor: str },
  "smtp.handoff": {
    messageId: str,
    recipients: strings,
    reason: oneOf("no-service", "fallback", "no-common-version"),
    accepted: bool,
  },
  "delivery.bounced": { messageId: str, domain: str, recipients: strings, attempts: int },
  "dsn.sent": { messageId: str, to: str, reason: str, recipients: strings },
  "dsn.suppressed": { messageId: str, recipients: strings, rule: str },
  "http.request": { exchangeId: str, method: str, url: str, headers: obj, bodySize: int },
  "http.response": { exchangeId: str, status: int, headers: obj, bodySize: int },
  "http.failure": { exchangeId: str, kind: str, message: str },
  "receiver.request": { method: str, path: str },
  "receiver.response": { status: int },
  "idempotency.replay": { signingDomain: str, key: str },
  "idempotency.conflict": { signingDomain: str, key: str },
  "mailbox.delivered": { mailbox: str, size: int },
  "failure.after-acceptance": { mailbox: str, status: str },
  "probe.started": { target: str, plan: obj },
  "probe.tls": { version: oneOf("TLSv1.3", "TLSv1.2"), outcome: oneOf("established", "refused", "failed") },
  "probe.case": {
    id: str,
    rule: str,
    grade: oneOf("MUST", "SHOULD", "MAY"),
    result: oneOf("PASS", "FAIL", "SKIP"),
    exchanges: strings,
  },
  "invariant.checked": { id: str, passed: bool },
  "expectation.checked": { id: str, passed: bool },
};

/** The `allOf` of if-name-then-data clauses that constrains an event's `data` by its name. */
export function eventDataJsonSchema(): JsonSchema[] {
  return Object.entries(EVENT_DATA).map(([name, fields]) => ({
    if: { properties: { name: { const: name } }, required: ["name"] },
    then: {
      properties: { data: { type: "object", required: Object.keys(fields ?? {}), properties: fields } },
      required: ["data"],
    },
  }));
}
