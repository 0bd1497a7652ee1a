import { describe, expect, it } from "vitest";
import { parseDsn } from "../protocol/dsn.ts";
import { deliveryMachine } from "./deliveryMachine.ts";
import type { SenderReadings } from "./readings.ts";
import { baseRetryDelayMs } from "./retrySchedule.ts";
import {
  PROBLEM_BASE,
  T0,
  allRecipients,
  capabilitiesAnswer,
  createSenderHarness,
  problemAnswer,
  resultsAnswer,
} from "./testing.ts";
import type { SenderHarness, SenderHarnessOptions } from "./testing.ts";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const noJitter = (fallbackWindowS = 7_200): Partial<SenderReadings> => ({
  retryTiming: { jitter: false, fallbackWindowS },
});

async function harness(options: SenderHarnessOptions = {}): Promise<SenderHarness> {
  return createSenderHarness({ readings: noJitter(), ...options });
}

function send(
  h: SenderHarness,
  to: readonly string[] = ["bob@b.example", "carol@b.example"],
  from: string | null = "alice@a.example",
) {
  return h.sender.submit({ messageId: "m1@a.example", from, to, message: h.message() });
}

/** Minutes after T0 of each POST the receiver saw. */
const postMinutes = (h: SenderHarness) => h.receiver.posts.map((p) => (p.atMs - T0) / MIN);
/** The machine.transition events' names, in order. */
const transitions = (h: SenderHarness) => h.trace.data("machine.transition").map((d) => d["transition"]);
const rowsTaken = (h: SenderHarness) =>
  h.trace.data("machine.transition").flatMap((d) => (d["row"] === undefined ? [] : [d["row"]]));
const outcomesOf = (h: SenderHarness) =>
  h.trace
    .data("recipient.outcome")
    .filter((d) => d["messageId"] === "m1@a.example")
    .map((d) => [d["recipient"], d["outcome"], d["rule"]]);

describe("the states table, row by row", () => {
  it("row 1, STATE-2: a request-level temporary failure below the fallback window schedules a retry", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0, 1]);
    expect(transitions(h)).toContain("retryWithinFallbackWindow");
    expect(rowsTaken(h)).toEqual([1]);
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
    expect(h.smtp.handOffs).toHaveLength(0);
  });

  it("row 2, STATE-3, RETRY-4: the same failures, at the attempt made at or after 2 h, every attempt fallback-eligible: SMTP", async () => {
    const h = await harness();
    h.receiver.otherwise(() => problemAnswer("temporary_failure", 503));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    expect(h.smtp.handOffs).toEqual([
      expect.objectContaining({
        messageId: "m1@a.example",
        from: "alice@a.example",
        to: ["bob@b.example", "carol@b.example"],
        reason: "fallback",
      }),
    ]);
    expect(transitions(h).at(-2)).toBe("fallBackToSmtpAfterWindow");
    expect((await handle.done).map((o) => [o.outcome, o.rule])).toEqual([
      ["smtp", "STATE-3"],
      ["smtp", "STATE-3"],
    ]);
    expect(h.clock.now() - T0).toBe(123 * MIN);
    expect(h.clock.pending()).toBe(0);
  });

  it("row 3, STATE-4, ERR-26: unsupported_version sends the message to SMTP at once", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("unsupported_version", 404, { versions: ["v2"] }));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0]);
    expect(h.smtp.handOffs.map((x) => [x.reason, x.to])).toEqual([
      ["no-common-version", ["bob@b.example", "carol@b.example"]],
    ]);
    expect(rowsTaken(h)).toEqual([3]);
    expect((await handle.done).every((o) => o.outcome === "smtp" && o.rule === "STATE-4")).toBe(true);
  });

  it("row 3, STATE-4: a versions list with no version in common goes to SMTP at once, even with a valid pin (G32)", async () => {
    const h = await harness();
    h.receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    send(h, ["bob@b.example"]);
    await h.run();
    expect(h.sender.cache.validPin("b.example")).toBeDefined();
    h.receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, versions: ["v2"], discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    h.sender.submit({
      messageId: "m2@a.example",
      from: "alice@a.example",
      to: ["carol@b.example"],
      message: h.message(),
    });
    await h.run();
    expect(h.receiver.posts.map((p) => p.envelope.to)).toEqual([["bob@b.example"]]);
    expect(h.smtp.handOffs.map((x) => [x.messageId, x.reason])).toEqual([["m2@a.example", "no-common-version"]]);
  });

  it("row 4, STATE-5, ERR-8, RETRY-7: rate_limited keeps retrying over the service, not before its Retry-After", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("rate_limited", 429, { retryAfter: "600" }));
    send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0, 10]);
    expect(rowsTaken(h)).toEqual([4]);
    expect(h.trace.data("timer.set")[0]).toMatchObject({
      reason: "retry-after",
      rule: "RETRY-7",
      lowerBoundMs: T0 + 10 * MIN,
      scheduledAtMs: T0 + MIN,
    });
  });

  it("row 5, STATE-6, POST-27: a deferred recipient is retried as a new delivery with a new key; accepted ones are not sent again", async () => {
    const h = await harness();
    h.receiver.queue(() =>
      resultsAnswer([
        { recipient: "bob@b.example", status: "accepted" },
        {
          recipient: "carol@b.example",
          status: "deferred",
          problem: { type: `${PROBLEM_BASE}/mailbox_full` },
          retry_after: 30,
        },
      ]),
    );
    const handle = send(h);
    await h.run();
    const [first, second] = h.receiver.posts;
    expect(h.receiver.posts).toHaveLength(2);
    expect(first?.envelope.to).toEqual(["bob@b.example", "carol@b.example"]);
    expect(second?.envelope.to).toEqual(["carol@b.example"]);
    expect(second?.idempotencyKey).not.toBe(first?.idempotencyKey);
    expect(postMinutes(h)).toEqual([0, 1]);
    expect(transitions(h)).toContain("retryDeferredAsNewDelivery");
    // The deferral is row 5 both times (judged, then retried), never row 4: no request-level answer was temporary.
    expect(rowsTaken(h)).toEqual([5, 5]);
    expect(transitions(h)).not.toContain("retryNotFallbackEligible");
    expect(h.trace.data("machine.transition").flatMap((d) => d["rules"] as string[])).not.toContain("STATE-5");
    expect(h.trace.data("delivery.created").map((d) => [d["recipients"], d["rule"]])).toEqual([
      [["bob@b.example", "carol@b.example"], "POST-23"],
      [["carol@b.example"], "STATE-6"],
    ]);
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["bob@b.example", "accepted"],
      ["carol@b.example", "accepted"],
    ]);
  });

  it("POST-24: a delivery retried after a request-level failure keeps its key (fresh signature, same body)", async () => {
    const h = await harness();
    h.receiver.queue(
      () => problemAnswer("temporary_failure", 503),
      () => ({ fail: "connection-reset" }),
    );
    send(h);
    await h.run();
    const keys = new Set(h.receiver.posts.map((p) => p.idempotencyKey));
    const digests = new Set(h.receiver.posts.map((p) => p.contentDigest));
    expect(h.receiver.posts).toHaveLength(3);
    expect(keys.size).toBe(1);
    expect(digests.size).toBe(1);
    expect(new Set(h.receiver.posts.map((p) => p.signatureInput)).size).toBe(3);
    expect(transitions(h).filter((t) => t === "retrySameDelivery")).toHaveLength(2);
  });

  it("row 6, STATE-7, RETRY-6: rate_limited, then an outage: never SMTP, bounce at exactly 5 days with a DSN to the sender", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("rate_limited", 429));
    h.receiver.otherwise(() => problemAnswer("temporary_failure", 503));
    const handle = send(h);
    await h.run();
    expect(h.smtp.handOffs.filter((x) => x.messageId === "m1@a.example")).toHaveLength(0);
    expect(h.clock.now() - T0).toBe(5 * DAY);
    const minutes = postMinutes(h);
    expect(minutes.slice(0, 9)).toEqual([0, 1, 3, 7, 15, 31, 63, 123, 183]);
    expect(minutes.at(-1)).toBe(123 + 60 * 117);
    expect(transitions(h)).toContain("giveUpWhileRetrying");
    expect(rowsTaken(h).at(-1)).toBe(6);
    // Row 4 (STATE-5) once, for the 429; the 503s after it are fallback-eligible, but the 429 ruled SMTP out (ERR-23).
    const judged = transitions(h).filter((t) => t === "retryNotFallbackEligible" || t === "retrySmtpRuledOut");
    expect(judged[0]).toBe("retryNotFallbackEligible");
    expect(judged.slice(1).every((t) => t === "retrySmtpRuledOut")).toBe(true);
    expect(rowsTaken(h).filter((r) => r === 4)).toHaveLength(1);
    const outcomes = await handle.done;
    expect(outcomes.map((o) => [o.outcome, o.rule])).toEqual([
      ["bounced", "STATE-7"],
      ["bounced", "STATE-7"],
    ]);
    expect(h.trace.data("delivery.bounced")).toEqual([
      expect.objectContaining({ messageId: "m1@a.example", recipients: ["bob@b.example", "carol@b.example"] }),
    ]);
    // The DSN goes to alice@a.example as a normal message with a null from; a.example has no SVCB record, so plain SMTP.
    const dsn = h.smtp.handOffs.find((x) => x.from === null);
    expect(dsn).toMatchObject({ to: ["alice@a.example"], reason: "no-service" });
    const parsed = await parseDsn(dsn?.message ?? new Uint8Array());
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
    expect(parsed.value.deliveryStatus.recipients.map((r) => [r.finalRecipient.value, r.action, r.status])).toEqual([
      ["bob@b.example", "failed", "4.4.7"],
      ["carol@b.example", "failed", "4.4.7"],
    ]);
  });

  it("row 7, STATE-8: an accepted recipient is final for the sender; a failure after acceptance is the receiver's DSN (G17)", async () => {
    const h = await harness();
    const handle = send(h);
    await h.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
    expect(transitions(h).at(-1)).toBe("finishAllAccepted");
    expect(h.trace.named("dsn.sent")).toHaveLength(0);
    expect(h.sender.actors()[0]?.actor.getSnapshot().value).toBe("finished");
  });

  it("row 8, STATE-9, G31: a 4xx problem finishes the delivery: not retried, never SMTP, a DSN to the sender", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("invalid_signature", 401));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0]);
    expect(rowsTaken(h)).toEqual([8]);
    expect((await handle.done).map((o) => [o.outcome, o.rule, o.gaps])).toEqual([
      ["rejected", "STATE-9", ["G31"]],
      ["rejected", "STATE-9", ["G31"]],
    ]);
    const dsns = h.smtp.handOffs.filter((x) => x.from === null);
    expect(dsns).toHaveLength(1);
    const parsed = await parseDsn(dsns[0]?.message ?? new Uint8Array());
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
    expect(parsed.value.deliveryStatus.recipients.map((r) => [r.status, r.diagnosticCode?.value])).toEqual([
      ["5.7.7", `${PROBLEM_BASE}/invalid_signature`],
      ["5.7.7", `${PROBLEM_BASE}/invalid_signature`],
    ]);
  });

  it("row 8, STATE-9, G14: a rejected recipient is final at once (DSN now) while a deferred one goes on", async () => {
    const h = await harness();
    h.receiver.queue(() =>
      resultsAnswer([
        { recipient: "bob@b.example", status: "rejected", problem: { type: `${PROBLEM_BASE}/recipient_not_found` } },
        { recipient: "carol@b.example", status: "deferred", problem: { type: `${PROBLEM_BASE}/temporary_failure` } },
      ]),
    );
    send(h);
    await h.run(T0);
    expect(outcomesOf(h)).toEqual([["bob@b.example", "rejected", "STATE-9"]]);
    expect(h.trace.data("dsn.sent")).toEqual([
      expect.objectContaining({ reason: "rejected", recipients: ["bob@b.example"], to: "alice@a.example" }),
    ]);
    await h.run();
    expect(h.receiver.posts.map((p) => p.envelope.to)).toEqual([
      ["bob@b.example", "carol@b.example"],
      ["carol@b.example"],
    ]);
    expect(outcomesOf(h)).toEqual([
      ["bob@b.example", "rejected", "STATE-9"],
      ["carol@b.example", "accepted", "RCP-2"],
    ]);
    expect(h.smtp.handOffs.filter((x) => x.from !== null)).toHaveLength(0);
  });

  it("G14: no DSN for a message whose own from is null", async () => {
    const h = await harness();
    h.receiver.queue((post) => allRecipients(post, "rejected", "recipient_not_found"));
    send(h, ["bob@b.example"], null);
    await h.run();
    expect(outcomesOf(h)).toEqual([["bob@b.example", "rejected", "STATE-9"]]);
    expect(h.trace.named("dsn.sent")).toHaveLength(0);
    expect(h.smtp.handOffs).toHaveLength(0);
  });
});

describe("the fallback point (STATE-2, STATE-3, ERR-22)", () => {
  const eligible: [
    string,
    () => ReturnType<typeof problemAnswer> | { fail: "connection-refused" | "tls" | "timeout" },
  ][] = [
    ["503 temporary_failure", () => problemAnswer("temporary_failure", 503)],
    ["a 5xx without a problem", () => new Response("down", { status: 502 })],
    ["a connection failure", () => ({ fail: "connection-refused" })],
    ["a TLS failure", () => ({ fail: "tls" })],
    ["a timeout", () => ({ fail: "timeout" })],
  ];
  for (const [name, answer] of eligible) {
    it(`ERR-21, ERR-22: ${name} every time falls back at the first attempt at or after 2 h (minute 123)`, async () => {
      const h = await harness();
      h.receiver.otherwise(answer);
      send(h);
      await h.run();
      expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["fallback", 123]]);
    });
  }

  it("ERR-21, G8: a DNS failure every time falls back at minute 123 too", async () => {
    const h = await harness();
    h.zone.setOutcome("_svc.b.example", "servfail");
    send(h);
    await h.run();
    expect(h.receiver.posts).toHaveLength(0);
    expect(h.zone.svcbQueries.filter((q) => q === "_svc.b.example")).toHaveLength(8);
    expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["fallback", 123]]);
  });

  it("GET-9: an unusable capabilities document every time falls back at minute 123", async () => {
    const h = await harness();
    h.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 5 }));
    send(h);
    await h.run();
    expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["fallback", 123]]);
  });

  it("ERR-22: a mixture of eligible failures (503, connection, DNS, capabilities, TLS) still falls back at minute 123", async () => {
    const h = await harness();
    h.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, "max-age=0"));
    h.receiver.queue(
      () => problemAnswer("temporary_failure", 503),
      () => ({ fail: "connection-refused" }),
      () => ({ fail: "tls" }),
    );
    h.receiver.otherwise(() => new Response(null, { status: 500 }));
    send(h);
    await h.run(T0 + 10 * MIN);
    h.zone.setOutcome("_svc.b.example", "timeout");
    await h.run(T0 + 20 * MIN);
    h.zone.clear("_svc.b.example");
    h.zone.setSvcb("_svc.b.example", [{ priority: 1, target: "mx.b.example" }]);
    h.receiver.capabilities(() => new Response("{", { status: 200 }));
    await h.run(T0 + 40 * MIN);
    h.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, "max-age=0"));
    await h.run();
    expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["fallback", 123]]);
  });

  it("RETRY-5, G16: with a 1-hour window the fallback is at minute 63; with 4 hours at minute 243", async () => {
    for (const [windowS, minute] of [
      [3_600, 63],
      [14_400, 243],
    ] as const) {
      const h = await harness({ readings: noJitter(windowS) });
      h.receiver.otherwise(() => problemAnswer("temporary_failure", 503));
      send(h);
      await h.run();
      expect(h.smtp.handOffs.map(() => (h.clock.now() - T0) / MIN)).toEqual([minute]);
    }
  });

  it("STATE-3, ERR-23: one rate_limited answer forbids the fallback for the rest of the message's life", async () => {
    const h = await harness();
    h.receiver.queue(
      () => problemAnswer("temporary_failure", 503),
      () => problemAnswer("temporary_failure", 503),
      () => problemAnswer("rate_limited", 429),
    );
    h.receiver.otherwise(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run(T0 + DAY);
    expect(h.smtp.handOffs).toHaveLength(0);
    const snapshot = h.sender.actors()[0]?.actor.getSnapshot();
    expect(snapshot?.value).toBe("retryScheduled");
    expect(snapshot?.context.allAttemptsFallbackEligible).toBe(false);
    expect(rowsTaken(h)).toEqual([1, 1, 4]);
    // The 503s after the 429 are fallback-eligible, but the 429 ruled SMTP out: no row of the table, ERR-23 and ERR-24.
    const after = h.trace.data("machine.transition").filter((d) => d["from"] === "attemptingOverService.judging");
    expect(new Set(after.slice(3).map((d) => [d["transition"], ...(d["rules"] as string[])].join(" ")))).toEqual(
      new Set(["retrySmtpRuledOut ERR-24 ERR-23 RETRY-8"]),
    );
  });

  it("ERR-23: one per-recipient deferred answer forbids the fallback too", async () => {
    const h = await harness();
    h.receiver.queue((post) => allRecipients(post, "deferred", "mailbox_full"));
    h.receiver.otherwise(() => ({ fail: "connection-refused" }));
    send(h);
    await h.run(T0 + 6 * 60 * MIN);
    expect(h.smtp.handOffs).toHaveLength(0);
    expect(h.sender.actors()[0]?.actor.getSnapshot().value).toBe("retryScheduled");
  });

  it("ERR-25, G7: with a valid pin, a vanished SVCB record is retried and falls back after the window, not at once", async () => {
    const h = await harness();
    h.receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run(T0);
    h.zone.clear("_svc.b.example");
    await h.run();
    expect(h.receiver.posts).toHaveLength(1);
    expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["fallback", 123]]);
  });

  it("G6, G7 ignored: without the pin's protection, a vanished record is plain SMTP at the next attempt", async () => {
    const h = await harness({ readings: { ...noJitter(), discoveryPin: "ignored" } });
    h.receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run(T0);
    h.zone.clear("_svc.b.example");
    await h.run();
    expect(h.smtp.handOffs.map((x) => [x.reason, (h.clock.now() - T0) / MIN])).toEqual([["no-service", 1]]);
  });

  it("ERR-23: after a rate_limited answer, a vanished record (no pin) is not plain SMTP either: retried until give-up", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("rate_limited", 429));
    send(h);
    await h.run(T0);
    h.zone.clear("_svc.b.example");
    await h.run(T0 + 3 * 60 * MIN);
    expect(h.smtp.handOffs).toHaveLength(0);
    expect(h.sender.actors()[0]?.actor.getSnapshot().value).toBe("retryScheduled");
  });
});

describe("plain SMTP and the readings", () => {
  it("G6, SVC-11: a domain without an SVCB record goes to SMTP at once, as no-service, without any POST", async () => {
    const h = await harness({ unpublished: true });
    const handle = send(h);
    await h.run();
    expect(h.receiver.posts).toHaveLength(0);
    expect(h.receiver.capabilityFetches).toHaveLength(0);
    expect(h.smtp.handOffs.map((x) => x.reason)).toEqual(["no-service"]);
    expect(transitions(h)).toContain("deliverByPlainSmtp");
    expect((await handle.done).map((o) => [o.outcome, o.rule])).toEqual([
      ["smtp", "SVC-11"],
      ["smtp", "SVC-11"],
    ]);
  });

  it("G8 smtp: a DNS failure without a pin goes to SMTP at once", async () => {
    const h = await harness({ readings: { ...noJitter(), dnsFailureWithoutPin: "smtp" } });
    h.zone.setOutcome("_svc.b.example", "timeout");
    send(h);
    await h.run();
    expect(h.smtp.handOffs.map((x) => [x.reason, h.clock.now() - T0])).toEqual([["no-service", 0]]);
  });

  it("G18: a relay that refuses the hand-off still ends the service's part (outcome smtp, noted in the trace)", async () => {
    const h = await harness({ unpublished: true, smtpAccepts: false });
    const handle = send(h);
    await h.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["smtp", "smtp"]);
    expect(h.trace.data("smtp.handoff")[0]).toMatchObject({ accepted: false, reason: "no-service" });
  });

  it("G18: a relay port that fails (its promise rejected) ends the service's part too, with no answer", async () => {
    const h = await harness({ unpublished: true });
    h.smtp.handOff = () => Promise.reject(new Error("relay down"));
    const handle = send(h);
    await h.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["smtp", "smtp"]);
    expect(transitions(h)).toEqual(["discoveryEnded", "deliverByPlainSmtp", "handedOver"]);
    expect(h.trace.data("machine.transition").at(-1)).toMatchObject({
      event: "xstate.error.actor.0.delivery.handingToSmtp",
    });
    expect(h.trace.data("smtp.handoff")[0]).not.toHaveProperty("accepted", true);
  });

  it("stop() (the sender's API, no spec rule): a delivery stopped during its discovery takes no transition when the discovery ends", async () => {
    const h = await harness();
    send(h);
    h.sender.stop();
    await h.run();
    expect(h.trace.data("machine.started")).toHaveLength(1);
    expect(transitions(h)).toEqual([]);
    expect(h.receiver.posts).toHaveLength(0);
  });

  it("G12 split: more recipients than max_recipients go in batches, each its own delivery and key", async () => {
    const h = await harness();
    const to = Array.from({ length: 250 }, (_, i) => `user${i}@b.example`);
    const handle = send(h, to);
    await h.run();
    expect(h.receiver.posts.map((p) => p.envelope.to.length)).toEqual([100, 100, 50]);
    expect(new Set(h.receiver.posts.map((p) => p.idempotencyKey)).size).toBe(3);
    expect(h.trace.data("delivery.created").map((d) => [d["batch"], d["batches"], d["gap"]])).toEqual([
      [1, 3, "G12"],
      [2, 3, "G12"],
      [3, 3, "G12"],
    ]);
    expect((await handle.done).filter((o) => o.outcome === "accepted")).toHaveLength(250);
  });

  it("G12 split: a batch that fails at request level is retried alone, with its key, while the others are done", async () => {
    const h = await harness();
    h.receiver.queue(
      (post) => allRecipients(post, "accepted"),
      () => problemAnswer("temporary_failure", 503),
    );
    const to = Array.from({ length: 150 }, (_, i) => `user${i}@b.example`);
    send(h, to);
    await h.run();
    const [first, second, third] = h.receiver.posts;
    expect(h.receiver.posts).toHaveLength(3);
    expect(third?.idempotencyKey).toBe(second?.idempotencyKey);
    expect(third?.idempotencyKey).not.toBe(first?.idempotencyKey);
    expect(third?.envelope.to).toHaveLength(50);
  });

  it("G12 send-whole, ERR-11: one POST; the receiver's invalid_request rejects them all, with a DSN", async () => {
    const h = await harness({ readings: { ...noJitter(), overMaxRecipients: "send-whole" } });
    h.receiver.queue((post) =>
      post.envelope.to.length > 100 ? problemAnswer("invalid_request", 400) : allRecipients(post, "accepted"),
    );
    const to = Array.from({ length: 101 }, (_, i) => `user${i}@b.example`);
    const handle = send(h, to);
    await h.run();
    expect(h.receiver.posts).toHaveLength(1);
    expect((await handle.done).every((o) => o.outcome === "rejected")).toBe(true);
    expect(h.trace.data("dsn.sent")).toHaveLength(1);
  });

  it("G13 pre-check: a message over max_message_size is not sent: rejected, with a DSN saying 5.3.4", async () => {
    const h = await harness();
    const handle = h.sender.submit({
      messageId: "big@a.example",
      from: "alice@a.example",
      to: ["bob@b.example"],
      message: new Uint8Array(26214400).fill(0x61),
    });
    await h.run();
    expect(h.receiver.posts).toHaveLength(0);
    expect((await handle.done).map((o) => [o.outcome, o.gaps])).toEqual([["rejected", ["G13", "G24", "G31"]]]);
    const dsn = h.smtp.handOffs.find((x) => x.from === null);
    const parsed = await parseDsn(dsn?.message ?? new Uint8Array());
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
    expect(parsed.value.deliveryStatus.recipients[0]?.status).toBe("5.3.4");
  });

  it("G26 retry: a 403 policy_rejected with Retry-After is retried at that time, over the service only", async () => {
    const h = await harness({ readings: { ...noJitter(), policyRejectedRetryAfter: "retry" } });
    h.receiver.queue(() => problemAnswer("policy_rejected", 403, { retryAfter: "7200" }));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0, 120]);
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
  });

  it("G26 permanent: the same answer is final (rejected), its Retry-After ignored", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("policy_rejected", 403, { retryAfter: "7200" }));
    const handle = send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0]);
    expect((await handle.done).map((o) => o.outcome)).toEqual(["rejected", "rejected"]);
  });
});

describe("the schedule as the machine keeps it", () => {
  it("RETRY-3: with jitter on, each retry lies within ±20 % of its delay after the previous attempt", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const h = await createSenderHarness({ seed });
      h.receiver.otherwise(() => problemAnswer("rate_limited", 429));
      send(h);
      await h.run(T0 + 12 * 60 * MIN);
      const times = h.receiver.posts.map((p) => p.atMs);
      expect(times.length).toBeGreaterThan(10);
      times.slice(1).forEach((at, index) => {
        const gap = at - (times[index] ?? 0);
        const base = baseRetryDelayMs(index + 1);
        expect(gap).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
        expect(gap).toBeLessThanOrEqual(Math.ceil(base * 1.2));
      });
      h.sender.stop();
    }
  });

  it("G16, RETRY-8: attempts count across request-level retries and new deliveries, on one schedule", async () => {
    const h = await harness();
    h.receiver.queue(
      () => problemAnswer("temporary_failure", 503),
      (post) => allRecipients(post, "deferred", "mailbox_full"),
      () => ({ fail: "tls" }),
    );
    send(h);
    await h.run();
    expect(postMinutes(h)).toEqual([0, 1, 3, 7]);
    expect(new Set(h.receiver.posts.map((p) => p.idempotencyKey)).size).toBe(2);
  });

  it("STATE-2, RETRY-7: the context keeps the first attempt, the count, the flag, the key, the pending recipients and the last problem", async () => {
    const h = await harness();
    h.receiver.otherwise(() => problemAnswer("temporary_failure", 503, { retryAfter: "1" }));
    send(h);
    await h.run(T0 + 4 * MIN);
    const context = h.sender.actors()[0]?.actor.getSnapshot().context;
    expect(context).toMatchObject({
      firstAttemptAtMs: T0,
      attempts: 3,
      attemptAtMs: T0 + 3 * MIN,
      allAttemptsFallbackEligible: true,
      waiting: [],
      lastProblem: { identifier: "temporary_failure", status: 503 },
      retryPlan: { retry: 3, atMs: T0 + 7 * MIN },
    });
    expect(context?.deliveries.map((d) => [d.idempotencyKey, d.recipients])).toEqual([
      [h.receiver.posts[0]?.idempotencyKey, ["bob@b.example", "carol@b.example"]],
    ]);
    h.sender.stop();
  });

  it("machine.transition events come from XState's inspection, naming the table row and its rules", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run();
    expect(h.trace.data("machine.started")).toEqual([
      {
        deliveryActor: "m1@a.example→b.example",
        machine: "delivery",
        state: "attemptingOverService.discovering",
        messageId: "m1@a.example",
        domain: "b.example",
        recipients: ["bob@b.example", "carol@b.example"],
      },
    ]);
    expect(h.trace.events.findIndex((e) => e.name === "machine.started")).toBeLessThan(
      h.trace.events.findIndex((e) => e.name === "discovery.resolved"),
    );
    expect(h.trace.data("machine.transition")).toEqual([
      expect.objectContaining({
        from: "attemptingOverService.discovering",
        to: "attemptingOverService.posting",
        transition: "postToEndpoint",
      }),
      expect.objectContaining({
        from: "attemptingOverService.posting",
        to: "attemptingOverService.judging",
        transition: "answersRead",
      }),
      expect.objectContaining({
        from: "attemptingOverService.judging",
        to: "retryScheduled",
        row: 1,
        rule: "STATE-2",
        deliveryActor: "m1@a.example→b.example",
      }),
      expect.objectContaining({
        from: "retryScheduled",
        to: "attemptingOverService.discovering",
        transition: "retrySameDelivery",
        rule: "POST-24",
      }),
      expect.objectContaining({ from: "attemptingOverService.discovering", to: "attemptingOverService.posting" }),
      expect.objectContaining({ from: "attemptingOverService.posting", to: "attemptingOverService.judging" }),
      expect.objectContaining({ to: "finished", transition: "finishAllAccepted" }),
    ]);
    expect(h.trace.data("timer.set")).toEqual([
      expect.objectContaining({ atMs: T0 + MIN, delayMs: MIN, reason: "schedule", rule: "RETRY-1", gap: "G16" }),
    ]);
    expect(h.trace.data("timer.fired")).toHaveLength(1);
  });

  it("one attempt numbering: each machine.transition names the attempt it belongs to (or starts), as attempt.started, attempt.judged and the timers do", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run();
    expect(h.trace.data("machine.transition").map((d) => [d["transition"], d["attempt"]])).toEqual([
      ["postToEndpoint", 1],
      ["answersRead", 1],
      ["retryWithinFallbackWindow", 1],
      ["retrySameDelivery", 2],
      ["postToEndpoint", 2],
      ["answersRead", 2],
      ["finishAllAccepted", 2],
    ]);
    expect(h.trace.data("attempt.started").map((d) => d["attempt"])).toEqual([1, 2]);
    expect(h.trace.data("attempt.judged").map((d) => d["attempt"])).toEqual([1, 2]);
    // The timer that starts attempt 2 says so (its `retry` counts retries: 1).
    expect(h.trace.data("timer.set").map((d) => [d["retry"], d["attempt"]])).toEqual([[1, 2]]);
    expect(h.trace.data("timer.fired").map((d) => [d["retry"], d["attempt"]])).toEqual([[1, 2]]);
  });
});

describe("every attempt in the trace (attempt.judged), and each retry's plan (timer.set)", () => {
  const judged = (h: SenderHarness) => h.trace.data("attempt.judged");

  it("ERR-21, ERR-22, GET-9, RETRY-4, RETRY-6: attempts that end before any POST are events too, each with the stage it reached; the first gives the window and the give-up", async () => {
    const h = await harness();
    h.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, "max-age=0"));
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run(T0 + 30_000);
    h.zone.setOutcome("_svc.b.example", "timeout");
    await h.run(T0 + 2 * MIN);
    h.zone.clear("_svc.b.example");
    h.zone.setSvcb("_svc.b.example", [{ priority: 1, target: "mx.b.example" }]);
    h.receiver.capabilities(() => new Response("{", { status: 200 }));
    await h.run(T0 + 5 * MIN);
    h.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, "max-age=0"));
    await h.run();

    expect(
      judged(h).map((d) => [
        d["attempt"],
        ((d["startedAtMs"] as number) - T0) / MIN,
        d["stage"],
        d["class"],
        d["posts"],
        d["fallbackEligible"],
        d["allAttemptsFallbackEligible"],
      ]),
    ).toEqual([
      [1, 0, "post", "temporary", 1, true, true],
      [2, 1, "discovery", "temporary", 0, true, true],
      [3, 3, "capabilities", "temporary", 0, true, true],
      [4, 7, "post", "results", 1, false, false],
    ]);
    expect(
      judged(h)
        .map((d) => d["rule"])
        .slice(1),
    ).toEqual(["ERR-21", "GET-9", "POST-11"]);
    expect(judged(h).every((d) => d["deliveryActor"] === "m1@a.example→b.example")).toBe(true);
    expect(judged(h).every((d) => d["endedAtMs"] === d["startedAtMs"])).toBe(true);
    // The POSTs keep their own events, numbered by the attempt they belong to.
    expect(h.trace.data("attempt.started").map((d) => d["attempt"])).toEqual([1, 4]);
    expect(judged(h)[0]).toMatchObject({
      fallbackWindowS: 7_200,
      fallbackWindowStartMs: T0,
      fallbackWindowEndMs: T0 + 120 * MIN,
      giveUpAtMs: T0 + 5 * DAY,
    });
    expect(
      judged(h)
        .slice(1)
        .some((d) => "fallbackWindowEndMs" in d || "giveUpAtMs" in d),
    ).toBe(false);
    // Each attempt's event comes before the retry it leads to.
    const names = h.trace.events.map((e) => e.name).filter((n) => n === "attempt.judged" || n === "timer.set");
    expect(names).toEqual([
      "attempt.judged",
      "timer.set",
      "attempt.judged",
      "timer.set",
      "attempt.judged",
      "timer.set",
      "attempt.judged",
    ]);
  });

  it("SVC-11, STATE-4: no SVCB record ends the attempt at discovery; no common version at the version step", async () => {
    const none = await harness({ unpublished: true });
    send(none);
    await none.run();
    expect(judged(none)).toEqual([
      expect.objectContaining({ attempt: 1, stage: "discovery", class: "no-service", posts: 0, rule: "SVC-11" }),
    ]);
    const other = await harness();
    other.receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, versions: ["v2"] }));
    send(other);
    await other.run();
    expect(judged(other)).toEqual([
      expect.objectContaining({ stage: "version", class: "no-common-version", fallbackEligible: false }),
    ]);
  });

  it("RETRY-1, RETRY-2, RETRY-7: each timer.set gives the base delay, the jittered one, the Retry-After bound, and which decided", async () => {
    const h = await harness();
    h.receiver.queue(
      () => problemAnswer("rate_limited", 429, { retryAfter: "120" }),
      () => problemAnswer("temporary_failure", 503),
    );
    send(h);
    await h.run();
    expect(h.trace.data("timer.set")).toEqual([
      expect.objectContaining({
        retry: 1,
        attemptStartedAtMs: T0,
        baseDelayMs: MIN,
        jitter: false,
        jitteredDelayMs: MIN,
        scheduledAtMs: T0 + MIN,
        lowerBoundMs: T0 + 2 * MIN,
        lowerBoundDelayMs: 2 * MIN,
        atMs: T0 + 2 * MIN,
        decidedBy: "retry-after",
        reason: "retry-after",
        rule: "RETRY-7",
      }),
      expect.objectContaining({
        retry: 2,
        attemptStartedAtMs: T0 + 2 * MIN,
        baseDelayMs: 2 * MIN,
        jitteredDelayMs: 2 * MIN,
        atMs: T0 + 4 * MIN,
        decidedBy: "base-delay",
        reason: "schedule",
        rule: "RETRY-2",
      }),
    ]);
    expect(h.trace.data("timer.set")[1]).not.toHaveProperty("lowerBoundMs");
  });

  it("RETRY-3: with jitter on, the jittered delay is the base one × 0.8 … 1.2, and it decides", async () => {
    const h = await createSenderHarness({ seed: 5 });
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run();
    const [plan] = h.trace.data("timer.set");
    expect(plan).toMatchObject({ baseDelayMs: MIN, jitter: true, decidedBy: "jittered-delay" });
    const jittered = plan?.["jitteredDelayMs"] as number;
    expect(jittered).toBeGreaterThanOrEqual(0.8 * MIN);
    expect(jittered).toBeLessThanOrEqual(1.2 * MIN);
    expect(plan?.["atMs"]).toBe(T0 + jittered);
  });
});

describe("one machine for every actor (the states table as a module-level definition)", () => {
  it("STATE-2 … STATE-9: each actor runs `deliveryMachine` itself, its ports and settings in its input", async () => {
    const h = await harness();
    h.receiver.queue(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run();
    const actor = h.sender.actors()[0]?.actor;
    expect(actor?.logic).toBe(deliveryMachine);
    const deps = actor?.getSnapshot().context.input.deps;
    expect(deps?.senderDomain).toBe("a.example");
    expect(deps?.readings.retryTiming).toEqual({ jitter: false, fallbackWindowS: 7_200 });
    expect(transitions(h)).toContain("retryWithinFallbackWindow");
  });

  it("STATE-3: the context stays under 19 top-level fields, its input one of them, through retries and a hand-off", async () => {
    // XState copies the context with Object.assign on every assign; past ~19 fields V8 makes each copy a
    // dictionary-mode object, ~5 KB and slow to read (decision 0205).
    const h = await harness();
    h.receiver.otherwise(() => problemAnswer("temporary_failure", 503));
    send(h);
    await h.run();
    const context = h.sender.actors()[0]?.actor.getSnapshot().context;
    expect(context?.smtp?.reason).toBe("fallback");
    expect(context?.input.messageId).toBe("m1@a.example");
    // 17 here; `lastDeliveryOf`, under a misbehaviour only, makes 18.
    expect(Object.keys(context ?? {}).length).toBeLessThanOrEqual(17);
  });
});
