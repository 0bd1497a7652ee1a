import { describe, expect, it } from "vitest";
import type { UntypedTraceEvent } from "../ports.ts";
import { attemptFailure, describeEvent, shortDuration, timelineLevel, type DescribeFlavour } from "./describe.ts";
import { traceEventNames, type TraceEventName } from "./events.ts";

const AT = Date.UTC(2026, 0, 15, 10, 56, 55);
const timeline: DescribeFlavour = { flavour: "timeline", full: false };
const full: DescribeFlavour = { flavour: "timeline", full: true };
const send: DescribeFlavour = { flavour: "progress", command: "send" };
const serve: DescribeFlavour = { flavour: "progress", command: "serve" };

function event(name: TraceEventName, data: Record<string, unknown>): UntypedTraceEvent {
  return { name, timeMs: AT, domain: "a.example", data };
}

/** The line in each flavour: the timeline without and with `full`, then send's progress. */
function lines(e: UntypedTraceEvent): [string | undefined, string | undefined, string | undefined] {
  return [describeEvent(e, timeline), describeEvent(e, full), describeEvent(e, send)];
}

describe("trace events in words, one wording for run's timeline and send's and serve's progress", () => {
  it("a sender's step reads the same in the timeline and in progress", () => {
    const same: [UntypedTraceEvent, string][] = [
      [
        event("message.submitted", { messageId: "m1@a.example", from: "alice@a.example", to: ["bob@b.example"] }),
        "message m1@a.example from alice@a.example to bob@b.example",
      ],
      [
        event("discovery.resolved", {
          domain: "b.example",
          outcome: "no-service",
          answer: "nxdomain",
          gap: "G6",
          rule: "SVC-11",
        }),
        "b.example has no usable SVCB record (nxdomain): plain SMTP [SVC-11, G6]",
      ],
      [
        event("discovery.resolved", {
          domain: "b.example",
          outcome: "dns-failure",
          answer: "servfail",
          gap: "G8",
          rule: "ERR-21",
        }),
        "SVCB lookup for b.example failed (servfail) [ERR-21, G8]",
      ],
      [
        event("discovery.resolved", {
          domain: "b.example",
          outcome: "no-record",
          answer: "nxdomain",
          gap: "G7",
          rule: "ERR-25",
        }),
        "SVCB lookup for b.example failed (nxdomain), and a discovery pin is valid [ERR-25, G7]",
      ],
      [
        event("capabilities.invalid", {
          domain: "b.example",
          origin: "https://b.example",
          violations: [{ message: "max_message_size is below 26214400" }, { message: "versions is empty" }],
          rule: "GET-9",
        }),
        "capabilities of https://b.example unusable: max_message_size is below 26214400; versions is empty [GET-9]",
      ],
      [
        event("version.negotiated", { domain: "b.example", ours: ["v1"], theirs: ["v2"], rule: "STATE-4" }),
        "no common version with b.example (ours v1, theirs v2) [STATE-4]",
      ],
      [
        event("attempt.started", {
          attempt: 1,
          url: "https://b.example/v1/messages",
          bodySize: 26214401,
          maxMessageSize: 26214400,
          sent: false,
        }),
        "attempt 1: not sent: size 26214401 > max_message_size 26214400 [G13]",
      ],
      [
        event("attempt.ended", {
          attempt: 1,
          status: 403,
          problem: "https://b.example/problems/policy_rejected",
          retryAfterIgnored: "600",
          class: "permanent",
          fallbackEligible: false,
          rule: "ERR-3",
          gaps: ["G26"],
        }),
        'attempt 1: 403 policy_rejected (permanent, Retry-After "600" ignored (G26 permanent)) [ERR-3]',
      ],
      [
        event("attempt.ended", {
          attempt: 2,
          status: 503,
          problem: "https://b.example/problems/temporary_failure",
          retryAfterIgnored: "soon",
          class: "temporary",
          fallbackEligible: true,
          rule: "ERR-10",
          gaps: ["G21"],
        }),
        'attempt 2: 503 temporary_failure (temporary, fallback-eligible, Retry-After "soon" ignored (G21: not a delay or a date)) [ERR-10]',
      ],
      [
        event("capabilities.invalid", {
          domain: "b.example",
          origin: "https://mx.b.example",
          failure: "HTTP 429",
          status: 429,
          retryAfterS: 60,
          G46: "alive",
          G47: "lower-bound",
          fallbackEligible: false,
          rule: "GET-9",
        }),
        "capabilities of https://mx.b.example unusable: HTTP 429 (G46 alive: a 4xx shows the endpoint alive, so it is retried and never falls back to SMTP; G47 lower-bound: no retry before its Retry-After 60s) [GET-9]",
      ],
      [
        event("attempt.ended", {
          attempt: 1,
          problem: "https://b.example/problems/message_too_large",
          class: "permanent",
          fallbackEligible: false,
          rule: "ERR-12",
          sent: false,
        }),
        "attempt 1: not sent: message_too_large (permanent) [ERR-12]",
      ],
      [
        event("attempt.ended", {
          attempt: 2,
          status: 503,
          problem: "https://b.example/problems/temporary_failure",
          retryAfterS: 300,
          class: "temporary",
          fallbackEligible: true,
          rule: "ERR-10",
        }),
        "attempt 2: 503 temporary_failure (temporary, fallback-eligible, Retry-After 300s) [ERR-10]",
      ],
      [
        event("attempt.ended", {
          attempt: 3,
          problem: "https://b.example/problems/temporary_failure",
          failure: "tls",
          class: "temporary",
          fallbackEligible: true,
          rule: "ERR-21",
        }),
        "attempt 3: no answer (tls) (temporary, fallback-eligible) [ERR-21]",
      ],
      [
        event("recipient.result", {
          recipient: "bob@b.example",
          status: "deferred",
          problem: "https://b.example/problems/temporary_failure/",
          retryAfterS: 600,
        }),
        "  bob@b.example: deferred (temporary_failure), retry_after 600s",
      ],
      [event("timer.fired", { deliveryActor: "m1→b.example", retry: 1 }), "retrying (attempt 2)"],
      [
        event("delivery.bounced", { recipients: ["bob@b.example"], attempts: 27, rule: "STATE-7" }),
        "gave up on bob@b.example after 27 attempts: bounced [STATE-7]",
      ],
      [
        event("delivery.bounced", { recipients: ["bob@b.example"], attempts: 1, rule: "STATE-7" }),
        "gave up on bob@b.example after 1 attempt: bounced [STATE-7]",
      ],
      [
        event("dsn.sent", {
          to: "alice@a.example",
          recipients: ["carol@b.example"],
          reason: "rejected",
          rule: "EVT-4",
        }),
        "DSN to alice@a.example about carol@b.example (rejected) [EVT-4]",
      ],
    ];
    for (const [e, line] of same) expect(lines(e), e.name).toEqual([line, line, line]);
  });

  it("the routine steps of a discovery that went well: always in progress, in the timeline only with --full", () => {
    const routine: [UntypedTraceEvent, string][] = [
      [
        event("discovery.resolved", { domain: "b.example", origin: "https://b.example:8443" }),
        "b.example is served at https://b.example:8443",
      ],
      [
        event("capabilities.fetched", {
          domain: "b.example",
          origin: "https://b.example:8443",
          capabilities: { versions: ["v1"], max_message_size: 26214400 },
          maxAgeS: 3600,
        }),
        "capabilities of https://b.example:8443: versions v1, max_message_size 26214400, max-age 3600s",
      ],
      [event("version.negotiated", { domain: "b.example", version: "v1", rule: "VER-5" }), "version v1 with b.example"],
    ];
    for (const [e, line] of routine) expect(lines(e), e.name).toEqual([undefined, line, line]);
  });

  it("a retry: the attempt it starts (attempt.started's numbering, not the retry's), how far off in the timeline, when on the wall clock in progress", () => {
    const schedule = event("timer.set", {
      atMs: AT + 57_000,
      delayMs: 57_000,
      reason: "schedule",
      retry: 1,
      rule: "RETRY-1",
    });
    expect(lines(schedule)).toEqual([
      "attempt 2 in 57s [RETRY-1]",
      "attempt 2 in 57s [RETRY-1]",
      "attempt 2 in 57s, at 2026-01-15T10:57:52Z [RETRY-1]",
    ]);
    const retryAfter = event("timer.set", {
      atMs: AT + 3_720_000,
      delayMs: 3_720_000,
      reason: "retry-after",
      retry: 2,
      attempt: 3,
      rule: "RETRY-7",
    });
    expect(lines(retryAfter)).toEqual([
      "attempt 3 in 1h2m (Retry-After) [RETRY-7]",
      "attempt 3 in 1h2m (Retry-After) [RETRY-7]",
      "attempt 3 in 1h2m, at 2026-01-15T11:58:55Z (Retry-After) [RETRY-7]",
    ]);
    const perRecipient = event("timer.set", {
      atMs: AT + 600_000,
      delayMs: 600_000,
      reason: "retry-after",
      lowerBoundFrom: "retry_after",
      retry: 1,
      rule: "RETRY-7",
    });
    expect(describeEvent(perRecipient, timeline)).toBe("attempt 2 in 10m (retry_after) [RETRY-7]");
    // A retry the give-up comes before is not announced as one (STATE-7 cancels it).
    const cancelled = event("timer.set", {
      atMs: AT + 144 * 3_600_000,
      delayMs: 144 * 3_600_000,
      giveUpAtMs: AT + 120 * 3_600_000,
      reason: "retry-after",
      retry: 1,
      rule: "RETRY-7",
    });
    expect(describeEvent(cancelled, timeline)).toBe(
      "no attempt 2: it would come in 144h, after the give-up in 120h [STATE-7]",
    );
  });

  it("an idempotent replay names the recipients of the request it answered", () => {
    expect(
      describeEvent(
        event("idempotency.replay", {
          signingDomain: "a.example",
          key: "k1",
          recipients: ["bob@b.example", "carol@b.example"],
        }),
        timeline,
      ),
    ).toBe("replayed the stored answer for key k1 to bob@b.example, carol@b.example [POST-12]");
  });

  it("a hand-off to SMTP: the simulated relay's answer in the timeline; not sent, for want of an SMTP client, in progress", () => {
    const handOff = event("smtp.handoff", {
      recipients: ["bob@b.example"],
      reason: "no-service",
      rule: "SVC-11",
      accepted: false,
    });
    expect(describeEvent(handOff, timeline)).toBe(
      "handed bob@b.example to SMTP (no-service); the relay refused [SVC-11]",
    );
    expect(describeEvent({ ...handOff, data: { ...handOff.data, accepted: true } }, timeline)).toBe(
      "handed bob@b.example to SMTP (no-service); the relay accepted [SVC-11]",
    );
    expect(describeEvent(handOff, send)).toBe(
      "would hand bob@b.example to SMTP (no-service): not sent, mailscope send has no SMTP client [SVC-11]",
    );
    expect(describeEvent(handOff, serve)).toBe(
      "would hand bob@b.example to SMTP (no-service): not sent, mailscope serve has no SMTP client [SVC-11]",
    );
  });

  it("the receivers' side, the outcomes and the pins are the timeline's; progress leaves them to the summary", () => {
    const timelineOnly: [UntypedTraceEvent, string][] = [
      [event("mailbox.delivered", { mailbox: "bob@b.example", size: 546 }), "stored in bob@b.example (546 bytes)"],
      [
        event("recipient.outcome", { messageId: "m1", recipient: "bob@b.example", outcome: "accepted", rule: "RCP-2" }),
        "bob@b.example of m1: ACCEPTED [RCP-2]",
      ],
      [
        event("pin.removed", { domain: "b.example", reason: "not-advertised", rule: "CAP-11" }),
        "discovery pin for b.example removed (not-advertised) [CAP-11]",
      ],
      [
        event("idempotency.conflict", { signingDomain: "a.example", key: "k1" }),
        "key k1 reused with another body: 409 [POST-26]",
      ],
    ];
    for (const [e, line] of timelineOnly) expect(lines(e), e.name).toEqual([line, line, undefined]);
  });

  it("the wire and the state machine only in the full timeline; the checks never", () => {
    expect(lines(event("dns.query", { name: "_svc.b.example", type: "SVCB" }))).toEqual([
      undefined,
      "DNS SVCB _svc.b.example?",
      undefined,
    ]);
    expect(lines(event("http.response", { status: 200, bodySize: 80, fault: "slow-body" }))).toEqual([
      undefined,
      "← 200 (80 bytes) [fault slow-body]",
      undefined,
    ]);
    expect(
      lines(event("machine.started", { deliveryActor: "m1→b.example", state: "attemptingOverService.discovering" })),
    ).toEqual([undefined, "m1→b.example: started in attemptingOverService.discovering", undefined]);
    const attempt = {
      deliveryActor: "m1→b.example",
      attempt: 7,
      stage: "capabilities",
      class: "temporary",
      posts: 0,
      fallbackEligible: true,
      rule: "GET-9",
    };
    expect(lines(event("attempt.judged", attempt))).toEqual([
      undefined,
      "m1→b.example: attempt 7 over at capabilities (temporary, fallback-eligible, 0 POSTs) [GET-9]",
      undefined,
    ]);
    const first = {
      ...attempt,
      attempt: 1,
      stage: "post",
      posts: 1,
      fallbackEligible: false,
      rule: "ERR-8",
      fallbackWindowStartMs: 0,
      fallbackWindowEndMs: 7_200_000,
      giveUpAtMs: 432_000_000,
    };
    expect(lines(event("attempt.judged", first))[1]).toBe(
      "m1→b.example: attempt 1 over at post (temporary, 1 POST); fallback window 2h, give-up after 120h [ERR-8]",
    );
    expect(lines(event("invariant.checked", { id: "one-outcome", passed: true }))).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("a fault's window and a DNS change, in the full timeline", () => {
    const window = {
      id: "b-down",
      layer: "network",
      kind: "connection-refused",
      scope: { host: "mx.b.example" },
      fromMs: Date.UTC(2026, 0, 1, 0, 0, 30),
      untilMs: null,
      probability: 1,
      settings: {},
    };
    expect(lines(event("fault.window", window))).toEqual([
      undefined,
      "fault b-down: network connection-refused for host=mx.b.example, from 2026-01-01T00:00:30Z on",
      undefined,
    ]);
    expect(
      lines(event("fault.window", { ...window, scope: {}, untilMs: Date.UTC(2026, 0, 1, 1), probability: 0.5 }))[1],
    ).toBe(
      "fault b-down: network connection-refused, from 2026-01-01T00:00:30Z until 2026-01-01T01:00:00Z, probability 0.5",
    );
    // With the run's start, the times are offsets from it, as the line's own time is (+h:mm:ss, days as +Nd).
    const start = { flavour: "timeline", full: true, startMs: Date.UTC(2026, 0, 1) } as const;
    expect(describeEvent(event("fault.window", { ...window, untilMs: Date.UTC(2026, 0, 2, 1) }), start)).toBe(
      "fault b-down: network connection-refused for host=mx.b.example, from +0:00:30 until +1d 1:00:00",
    );
    expect(
      describeEvent(event("pin.set", { domain: "b.example", expiresAtMs: Date.UTC(2026, 0, 8, 0, 0, 0, 250) }), start),
    ).toBe("discovery pin for b.example until +7d 0:00:00.250");
    expect(describeEvent(event("pin.set", { domain: "b.example", expiresAtMs: "soon" }), start)).toBe(
      "discovery pin for b.example until soon",
    );
    expect(lines(event("dns.changed", { name: "_svc.b.example", records: null }))[1]).toBe(
      "DNS _svc.b.example removed (NXDOMAIN from now on)",
    );
    expect(lines(event("dns.changed", { name: "_svc.b.example", records: { svcb: [{}], txt: [] } }))[1]).toBe(
      "DNS _svc.b.example now holds 1 SVCB and 0 TXT records",
    );
  });

  it("every event name has words of its own, none falls back to its raw data, and fields missing never throw", () => {
    for (const name of Object.keys(traceEventNames) as TraceEventName[]) {
      const [, line] = lines(event(name, {}));
      if (name === "invariant.checked" || name === "expectation.checked") continue;
      expect(line, name).toBeDefined();
      expect(line, name).not.toContain(`${name} {`);
    }
    expect(describeEvent(event("timer.set", { atMs: "soon", delayMs: 1000, retry: 1 }), send)).toBe(
      "attempt 2 in 1s, at soon",
    );
    expect(describeEvent(event("timer.set", { delayMs: 1000 }), timeline)).toBe("the next attempt in 1s");
    expect(describeEvent(event("timer.fired", { retry: 1, attempt: 2 }), timeline)).toBe("retrying (attempt 2)");
  });

  it("small pieces: an attempt's failure and a short duration", () => {
    expect(attemptFailure({ status: 429, problem: "https://b.example/problems/rate_limited" })).toBe(
      "429 rate_limited",
    );
    expect(attemptFailure({ failure: "connection-refused", problem: "x/temporary_failure" })).toBe(
      "no answer (connection-refused)",
    );
    expect(attemptFailure({})).toBe("not sent");
    expect([shortDuration(500), shortDuration(90_000), shortDuration(7_200_000), shortDuration(7_500_000)]).toEqual([
      "1s",
      "1m30s",
      "2h",
      "2h5m",
    ]);
  });
});

describe("timelineLevel: whether run's timeline has a line, without writing it (the app's log)", () => {
  it("is plain, full or none exactly as describeEvent gives text, for every event name", () => {
    const variants: Readonly<Record<string, unknown>>[] = [
      {},
      { origin: "https://mx.b.example" },
      { version: "v1" },
      { from: null, messageId: "d1@a.example" },
    ];
    for (const name of Object.keys(traceEventNames) as TraceEventName[]) {
      for (const data of variants) {
        const e: UntypedTraceEvent = { name, timeMs: 0, data };
        const plain = describeEvent(e, { flavour: "timeline", full: false });
        const full = describeEvent(e, { flavour: "timeline", full: true });
        const expected = plain !== undefined ? "plain" : full !== undefined ? "full" : undefined;
        expect(timelineLevel(e), `${name} ${JSON.stringify(data)}`).toBe(expected);
      }
    }
  });
});
