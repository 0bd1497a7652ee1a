/**
 * A small hand-made trace: one message from a.example to two recipients at
 * b.example, a lost answer, a retry a minute later, one recipient accepted
 * and one rejected, and a hand-off to SMTP for c.example, which offers no
 * service. It exercises every exporter (bodies, a failure, key material to
 * redact, readings off their defaults) and serves the renderer's tests and
 * demos. Built through the recorder, as a run would be.
 */
import type { TraceEvent, UntypedTraceEvent } from "../ports.ts";
import { createRecorder } from "./recorder.ts";
import type { Trace } from "./schema.ts";

const START_MS = Date.UTC(2026, 0, 1);
const MINUTE_MS = 60_000;

/** The scenario text the sample trace claims to come from, with key material in it to redact. */
export const SAMPLE_SCENARIO_SOURCE = `name: sample
domains:
  a.example:
    privateKey: MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
  b.example:
    mailboxes: [bob@b.example]
messages:
  - at: 0s
    from: alice@a.example
    to: [bob@b.example, carol@b.example, dave@c.example]
faults:
  - kind: connection-reset
    phase: response
    until: 1m
notes: |
  -----BEGIN PRIVATE KEY-----
  MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
  -----END PRIVATE KEY-----
`;

/** The sample trace (recorded with bodies). */
export function sampleTrace(): Trace {
  const r = createRecorder({ recordBodies: true });
  const at = (ms: number): number => START_MS + ms;
  // An event the catalogue would refuse: with fields no producer emits (a message body, a private key), to
  // show that the exporters redact whatever a trace holds, or without fields a producer always gives.
  const emitUntyped = (event: UntypedTraceEvent): void => r.emit(event as TraceEvent);
  const message = "From: alice@a.example\r\nTo: bob@b.example, carol@b.example\r\nSubject: hi\r\n\r\nHello.\r\n";
  const post = (exchangeId: string, timeMs: number): void =>
    r.emit({
      name: "http.request",
      timeMs,
      domain: "a.example",
      data: {
        exchangeId,
        method: "POST",
        url: "https://mx.b.example:8443/v1/messages?trace=1",
        headers: {
          "content-type": "multipart/mixed; boundary=b1",
          "idempotency-key": "k-0001",
          "content-digest": "sha-256=:abc=:",
          "signature-input": 'sig1=("@method" "@target-uri");created=1767225600;keyid="s1._svckey.a.example"',
          signature: "sig1=:AAAA:",
        },
        bodySize: 210,
        bodyDigest: "sha-256=:abc=:",
        body: `--b1\r\nContent-Type: application/json\r\n\r\n{"from":"alice@a.example","to":["bob@b.example","carol@b.example"]}\r\n--b1\r\nContent-Type: message/rfc822\r\n\r\n${message}--b1--\r\n`,
      },
    });

  r.emit({
    name: "message.submitted",
    timeMs: at(0),
    domain: "a.example",
    data: {
      messageId: "<m1@a.example>",
      from: "alice@a.example",
      to: ["bob@b.example", "carol@b.example", "dave@c.example"],
    },
  });
  r.emit({ name: "dns.query", timeMs: at(0), domain: "a.example", data: { name: "_svc.b.example", type: "SVCB" } });
  r.emit({
    name: "dns.answer",
    timeMs: at(20),
    domain: "a.example",
    data: {
      name: "_svc.b.example",
      type: "SVCB",
      kind: "answer",
      records: [{ priority: 1, target: "mx.b.example", port: 8443 }],
      ttlS: 300,
    },
  });
  r.emit({ name: "dns.query", timeMs: at(20), domain: "a.example", data: { name: "_svc.c.example", type: "SVCB" } });
  r.emit({
    name: "dns.answer",
    timeMs: at(40),
    domain: "a.example",
    data: { name: "_svc.c.example", type: "SVCB", kind: "nxdomain" },
  });
  emitUntyped({
    name: "smtp.handoff",
    timeMs: at(40),
    domain: "a.example",
    data: {
      messageId: "<m1@a.example>",
      recipients: ["dave@c.example"],
      reason: "no-service",
      message: new TextEncoder().encode(message),
    },
  });
  r.emit({
    name: "recipient.outcome",
    timeMs: at(40),
    domain: "a.example",
    data: { messageId: "<m1@a.example>", recipient: "dave@c.example", outcome: "smtp", rule: "SVC-5" },
  });
  r.emit({
    name: "http.request",
    timeMs: at(40),
    domain: "a.example",
    data: {
      exchangeId: "x1",
      method: "GET",
      url: "https://mx.b.example:8443/v1/capabilities",
      headers: {},
      bodySize: 0,
      bodyDigest: "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:",
    },
  });
  r.emit({
    name: "http.response",
    timeMs: at(80),
    domain: "a.example",
    data: {
      exchangeId: "x1",
      status: 200,
      headers: { "cache-control": "max-age=3600", "content-type": "application/json" },
      bodySize: 47,
      bodyDigest: "sha-256=:def=:",
      body: '{"versions":["v1"],"max_message_size":26214400}',
    },
  });
  emitUntyped({
    name: "delivery.created",
    timeMs: at(80),
    domain: "a.example",
    data: {
      messageId: "<m1@a.example>",
      domain: "b.example",
      deliveryId: "d1",
      idempotencyKey: "k-0001",
      recipients: ["bob@b.example", "carol@b.example"],
      signingKey: {
        kty: "OKP",
        crv: "Ed25519",
        x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
        d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
      },
    },
  });
  post("x2", at(80));
  r.emit({
    name: "http.failure",
    timeMs: at(120),
    domain: "a.example",
    data: {
      exchangeId: "x2",
      kind: "connection-reset",
      message: "connection reset after the request was handled",
      fault: "0:connection-reset",
    },
  });
  emitUntyped({
    name: "timer.set",
    timeMs: at(120),
    domain: "a.example",
    data: { deliveryActor: "d1", atMs: at(120 + MINUTE_MS), delayMs: MINUTE_MS, reason: "temporary_failure" },
  });
  r.emit({ name: "timer.fired", timeMs: at(120 + MINUTE_MS), domain: "a.example", data: { deliveryActor: "d1" } });
  post("x3", at(120 + MINUTE_MS));
  r.emit({
    name: "http.response",
    timeMs: at(160 + MINUTE_MS),
    domain: "a.example",
    data: {
      exchangeId: "x3",
      status: 200,
      statusText: "OK",
      headers: { "content-type": "application/json" },
      bodySize: 180,
      bodyDigest: "sha-256=:ghi=:",
      bodyDurationMs: 500,
      body: JSON.stringify({
        results: [
          { recipient: "bob@b.example", status: "accepted" },
          {
            recipient: "carol@b.example",
            status: "rejected",
            problem: { type: "https://b.example/problems/recipient_not_found" },
          },
        ],
      }),
    },
  });
  for (const [recipient, outcome, rule] of [
    ["bob@b.example", "accepted", "POST-11"],
    ["carol@b.example", "rejected", "ERR-17"],
  ] as const) {
    r.emit({
      name: "recipient.outcome",
      timeMs: at(660 + MINUTE_MS),
      domain: "a.example",
      data: { messageId: "<m1@a.example>", recipient, outcome, rule },
    });
  }
  return r.toTrace({
    mailscope: "0.1.0",
    scenario: { name: "sample", file: "scenarios/sample.yaml", source: SAMPLE_SCENARIO_SOURCE },
    seed: 42,
    readings: { G7: "enforced", G16: "jitter=off, fallback-window=3h", G3: "tolerance-seconds=300" },
    startedAtMs: START_MS,
    invariants: [{ id: "INV-no-duplicate-delivery", passed: true }],
    expectations: [
      { id: "bob accepted", passed: true },
      { id: "carol accepted", passed: false, detail: "carol@b.example was rejected (recipient_not_found)" },
    ],
  });
}
