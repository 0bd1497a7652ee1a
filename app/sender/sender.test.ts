/**
 * The sender end to end against the real receiver, in process: two domains,
 * a.example (alice) and b.example (bob, carol, dave), each with a sender and a
 * receiver, one DNS zone, one network that routes by origin, one virtual clock.
 */
import { describe, expect, it } from "vitest";
import { TransportError } from "../ports.ts";
import type { Fetch } from "../ports.ts";
import { parseDsn } from "../protocol/dsn.ts";
import type { ReceiverConfigInput } from "../receiver/config.ts";
import { createMemoryMailStore } from "../receiver/memoryMailStore.ts";
import type { MemoryMailStore } from "../receiver/memoryMailStore.ts";
import { createReceiver } from "../receiver/receiver.ts";
import { createTestSender } from "../receiver/testing.ts";
import { isTraceEventName } from "../trace/events.ts";
import { READING_GAPS, type ReadingName } from "../protocol/readingNames.ts";
import { readingsForTrace } from "./readings.ts";
import { createSender } from "./sender.ts";
import type { Sender, SenderConfig } from "./sender.ts";
import {
  PROBLEM_BASE,
  T0,
  createSeededRandom,
  createSmtpRecorder,
  createSteppingClock,
  createTestZone,
  createTraceLog,
  publishService,
  runUntilQuiet,
} from "./testing.ts";

const MIN = 60_000;
const encoder = new TextEncoder();

interface WorldOptions {
  /** Edits b.example's receiver configuration. */
  readonly b?: (config: ReceiverConfigInput) => ReceiverConfigInput;
  /** Wraps the network (to lose answers, say). */
  readonly network?: (fetch: Fetch) => Fetch;
  readonly senderConfig?: Partial<SenderConfig>;
}

async function world(options: WorldOptions = {}) {
  const clock = createSteppingClock();
  const random = createSeededRandom(11);
  const zone = createTestZone();
  const trace = createTraceLog();
  const smtp = createSmtpRecorder();
  const keyA = await createTestSender("a.example");
  const keyB = await createTestSender("b.example");
  zone.setTxt(keyA.keyid, [keyA.keyRecord]);
  zone.setTxt(keyB.keyid, [keyB.keyRecord]);
  publishService(zone, "a.example");
  publishService(zone, "b.example");

  const senders: Record<string, Sender> = {};
  const storeA = createMemoryMailStore();
  const storeB = createMemoryMailStore();
  const outboundOf = (domain: string) => ({
    submit: (m: { from: null; to: string[]; message: Uint8Array }) => {
      senders[domain]?.submit({ from: m.from, to: m.to, message: m.message });
      return Promise.resolve();
    },
  });
  const receiverA = createReceiver(
    {
      domains: ["a.example"],
      capabilities: { max_message_size: 26214400 },
      problem_base: PROBLEM_BASE,
      mailboxes: [{ address: "alice@a.example" }],
    },
    { clock, resolver: zone, mailStore: storeA, trace, outbound: outboundOf("a.example") },
  );
  const configB: ReceiverConfigInput = {
    domains: ["b.example"],
    capabilities: { max_message_size: 26214400, max_recipients: 100 },
    problem_base: PROBLEM_BASE,
    mailboxes: [{ address: "bob@b.example" }, { address: "carol@b.example" }, { address: "dave@b.example" }],
  };
  const receiverB = createReceiver((options.b ?? ((c) => c))(configB), {
    clock,
    resolver: zone,
    mailStore: storeB,
    trace,
    outbound: outboundOf("b.example"),
  });
  const routes: Record<string, (r: Request) => Promise<Response>> = {
    "mx.a.example": receiverA,
    "mx.b.example": receiverB,
  };
  const plain: Fetch = (request) => {
    const route = routes[new URL(request.url).hostname];
    return route === undefined ? Promise.reject(new TransportError("connection-refused", request.url)) : route(request);
  };
  const network = options.network === undefined ? plain : options.network(plain);
  const ports = { clock, random, resolver: zone, fetch: network, smtp, trace };
  const readings = { retryTiming: { jitter: false, fallbackWindowS: 7_200 } };
  senders["a.example"] = createSender(
    {
      domain: "a.example",
      signingKey: keyA.privateKey,
      keyid: keyA.keyid,
      problemBase: PROBLEM_BASE,
      readings,
      ...options.senderConfig,
    },
    ports,
  );
  senders["b.example"] = createSender(
    { domain: "b.example", signingKey: keyB.privateKey, keyid: keyB.keyid, problemBase: PROBLEM_BASE, readings },
    ports,
  );
  const alice = senders["a.example"];
  const run = (untilMs?: number) => runUntilQuiet(clock, Object.values(senders), untilMs);
  const message = (subject = "Hello") =>
    encoder.encode(
      `From: Alice <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, "")}@a.example>\r\nDKIM-Signature: v=1; d=a.example; b=kept\r\n\r\nHello, Bob.\r\n`,
    );
  return { clock, zone, trace, smtp, alice, senders, storeA, storeB, run, message };
}

/** The DSNs in a mailbox, parsed. */
async function dsnsIn(store: MemoryMailStore, mailbox: string) {
  return Promise.all(
    store.messages(mailbox).map(async (m) => {
      const parsed = await parseDsn(m.message);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
      return parsed.value;
    }),
  );
}

describe("the sender against the real receiver", () => {
  it("SVC-2, POST-11, AUTH-1: a signed delivery is accepted and stored byte for byte, DKIM header and all", async () => {
    const w = await world();
    const message = w.message();
    const handle = w.alice.submit({ from: "alice@a.example", to: ["bob@b.example", "carol@b.example"], message });
    await w.run();
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["bob@b.example", "accepted"],
      ["carol@b.example", "accepted"],
    ]);
    expect(w.storeB.messages("bob@b.example").map((m) => m.message)).toEqual([message]);
    expect(w.storeB.messages("carol@b.example")).toHaveLength(1);
    expect(w.trace.data("attempt.started")).toHaveLength(1);
  });

  it("SVC-2: with keepFinishedActors off, a finished delivery's actor is let go; one still retrying is kept", async () => {
    const w = await world({ senderConfig: { keepFinishedActors: false }, b: (c) => ({ ...c, mailboxes: [] }) });
    const handle = w.alice.submit({
      messageId: "m1@a.example",
      from: "alice@a.example",
      to: ["bob@b.example", "x@c.example"],
      message: w.message(),
    });
    await w.run(T0 + MIN);
    // b.example rejects bob (no such mailbox): finished; c.example has no service: handed to SMTP, final too.
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["bob@b.example", "rejected"],
      ["x@c.example", "smtp"],
    ]);
    expect(w.alice.actors()).toEqual([]);
    expect(handle.outcomes().map((o) => o.outcome)).toEqual(["rejected", "smtp"]);

    // A delivery that has to retry is still in flight: its actor stays until it finishes.
    const down = await world({
      senderConfig: { keepFinishedActors: false },
      network: () => () => Promise.reject(new TransportError("connection-refused", "down")),
    });
    down.alice.submit({
      messageId: "m2@a.example",
      from: "alice@a.example",
      to: ["bob@b.example"],
      message: down.message(),
    });
    await down.run(T0 + MIN);
    expect(down.alice.actors().map((a) => [a.id, a.actor.getSnapshot().value])).toEqual([
      ["m2@a.example→b.example", "retryScheduled"],
    ]);
  });

  it("SVC-2: recipients are grouped by domain, one actor per (message, domain); a domain without SVCB goes to SMTP", async () => {
    const w = await world();
    const handle = w.alice.submit({
      messageId: "m1@a.example",
      from: "alice@a.example",
      to: ["bob@b.example", "x@c.example", "carol@B.EXAMPLE", "bob@b.example"],
      message: w.message(),
    });
    await w.run();
    expect(w.alice.actors().map((a) => [a.id, a.actor.getSnapshot().value])).toEqual([
      ["m1@a.example→b.example", "finished"],
      ["m1@a.example→c.example", "handedToSmtp"],
    ]);
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["bob@b.example", "accepted"],
      ["carol@b.example", "accepted"],
      ["x@c.example", "smtp"],
    ]);
    expect(w.smtp.handOffs.map((h) => [h.to, h.reason])).toEqual([[["x@c.example"], "no-service"]]);
  });

  it("STATE-2, POST-24, POST-12: 503 twice, then accepted: the same key throughout, one stored copy", async () => {
    const w = await world({ b: (c) => ({ ...c, policy: { unavailable: { times: 2, retryAfterS: 60 } } }) });
    const handle = w.alice.submit({ from: "alice@a.example", to: ["bob@b.example"], message: w.message() });
    await w.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted"]);
    const started = w.trace.data("attempt.started");
    expect(started.map((d) => (Number(d["attempt"]) > 0 ? d["idempotencyKey"] : undefined))).toEqual(
      Array(3).fill(started[0]?.["idempotencyKey"]),
    );
    expect(w.trace.named("attempt.started").map((e) => (e.timeMs - T0) / MIN)).toEqual([0, 1, 3]);
    expect(w.storeB.messages("bob@b.example")).toHaveLength(1);
  });

  it("POST-12, POST-24, G11: an answer lost on the way back is retried with the same key and replayed: one stored copy", async () => {
    let lost = 0;
    const w = await world({
      network: (fetch) => async (request) => {
        const response = await fetch(request);
        if (request.method === "POST" && lost === 0) {
          lost += 1;
          throw new TransportError("connection-reset", "the answer was lost");
        }
        return response;
      },
    });
    const handle = w.alice.submit({ from: "alice@a.example", to: ["bob@b.example"], message: w.message() });
    await w.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted"]);
    expect(w.storeB.messages("bob@b.example")).toHaveLength(1);
    expect(w.trace.named("idempotency.replay")).toHaveLength(1);
  });

  it("STATE-6, POST-27: a deferred recipient is retried as a new delivery; the accepted one is not sent again", async () => {
    const w = await world({
      b: (c) => ({ ...c, policy: { temporaryFailures: [{ mailbox: "carol@b.example", times: 1 }] } }),
    });
    const handle = w.alice.submit({
      from: "alice@a.example",
      to: ["bob@b.example", "carol@b.example"],
      message: w.message(),
    });
    await w.run();
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["bob@b.example", "accepted"],
      ["carol@b.example", "accepted"],
    ]);
    const started = w.trace.data("attempt.started");
    expect(started.map((d) => d["recipients"])).toEqual([["bob@b.example", "carol@b.example"], ["carol@b.example"]]);
    expect(started[1]?.["idempotencyKey"]).not.toBe(started[0]?.["idempotencyKey"]);
    expect(w.storeB.messages("bob@b.example")).toHaveLength(1);
    expect(w.storeB.messages("carol@b.example")).toHaveLength(1);
  });

  it("POST-26, STATE-9: misbehaviour reuseIdempotencyKey retries a deferred recipient with the old key: 409, rejected, DSN, never SMTP", async () => {
    const deferCarol = (c: ReceiverConfigInput): ReceiverConfigInput => ({
      ...c,
      policy: { temporaryFailures: [{ mailbox: "carol@b.example", times: 1 }] },
    });
    const w = await world({ b: deferCarol, senderConfig: { misbehaviour: { reuseIdempotencyKey: true } } });
    const handle = w.alice.submit({
      messageId: "k1@a.example",
      from: "alice@a.example",
      to: ["bob@b.example", "carol@b.example"],
      message: w.message("Reused"),
    });
    await w.run();
    const started = w.trace.data("attempt.started").filter((d) => d["url"] === "https://mx.b.example/v1/messages");
    expect(started.map((d) => d["recipients"])).toEqual([["bob@b.example", "carol@b.example"], ["carol@b.example"]]);
    expect(started[1]?.["idempotencyKey"]).toBe(started[0]?.["idempotencyKey"]);
    const created = w.trace.data("delivery.created").filter((d) => d["messageId"] === "k1@a.example");
    expect(created.map((d) => [d["misbehaviour"], d["keyReusedFrom"]])).toEqual([
      [{ reuseIdempotencyKey: true }, undefined],
      [{ reuseIdempotencyKey: true }, "k1@a.example→b.example#1"],
    ]);
    expect(w.trace.named("idempotency.conflict")).toHaveLength(1);
    expect(w.trace.data("attempt.ended").find((d) => d["status"] === 409)).toBeDefined();
    const outcomes = await handle.done;
    expect(outcomes.map((o) => [o.recipient, o.outcome, o.rule, o.problem?.identifier])).toEqual([
      ["bob@b.example", "accepted", "RCP-2", undefined],
      ["carol@b.example", "rejected", "STATE-9", "idempotency_conflict"],
    ]);
    expect(w.storeB.messages("carol@b.example")).toHaveLength(0);
    expect(w.smtp.handOffs).toHaveLength(0);
    const [dsn, ...more] = await dsnsIn(w.storeA, "alice@a.example");
    expect(more).toHaveLength(0);
    expect(dsn?.deliveryStatus.recipients.map((r) => [r.finalRecipient.value, r.action])).toEqual([
      ["carol@b.example", "failed"],
    ]);
    expect(dsn?.deliveryStatus.recipients[0]?.diagnosticCode?.value.split(" ")[0]).toBe(
      `${PROBLEM_BASE}/idempotency_conflict`,
    );

    // Without the misbehaviour: a new key, and carol is accepted.
    const correct = await world({ b: deferCarol });
    const ok = correct.alice.submit({
      from: "alice@a.example",
      to: ["bob@b.example", "carol@b.example"],
      message: correct.message("Reused"),
    });
    await correct.run();
    const keys = correct.trace.data("attempt.started").map((d) => d["idempotencyKey"]);
    expect(keys).toHaveLength(2);
    expect(keys[1]).not.toBe(keys[0]);
    expect(correct.trace.data("delivery.created").some((d) => "misbehaviour" in d)).toBe(false);
    expect((await ok.done).map((o) => o.outcome)).toEqual(["accepted", "accepted"]);
  });

  it("STATE-5, RETRY-7: rate_limited is retried over the service no sooner than its Retry-After", async () => {
    const w = await world({
      b: (c) => ({ ...c, policy: { rateLimits: [{ signingDomain: "*", max: 1, windowS: 600 }] } }),
    });
    w.alice.submit({ from: "alice@a.example", to: ["bob@b.example"], message: w.message("First") });
    w.alice.submit({ from: "alice@a.example", to: ["carol@b.example"], message: w.message("Second") });
    await w.run();
    const ended = w.trace.data("attempt.ended").map((d) => d["status"]);
    expect(ended).toEqual([200, 429, 200]);
    const retry = w.trace.named("attempt.started")[2];
    expect(retry !== undefined && retry.timeMs - T0).toBeGreaterThanOrEqual(600_000 - 1_000);
    expect(w.smtp.handOffs).toHaveLength(0);
  });

  it("RETRY-7, STATE-6: recipients deferred in one answer with different retry_after: the next delivery waits for the latest of them", async () => {
    // carol asks for 15 minutes, bob for 5, dave for 1: the largest is neither the first nor the last.
    for (const order of [
      ["bob@b.example", "carol@b.example", "dave@b.example"],
      ["carol@b.example", "dave@b.example", "bob@b.example"],
      ["dave@b.example", "bob@b.example", "carol@b.example"],
    ]) {
      const w = await world({
        b: (c) => ({
          ...c,
          policy: {
            temporaryFailures: [
              { mailbox: "bob@b.example", times: 1, retryAfterS: 300 },
              { mailbox: "carol@b.example", times: 1, retryAfterS: 900 },
              { mailbox: "dave@b.example", times: 1, retryAfterS: 60 },
            ],
          },
        }),
      });
      const handle = w.alice.submit({ from: "alice@a.example", to: order, message: w.message() });
      await w.run();
      expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted", "accepted", "accepted"]);
      const results = w.trace.data("recipient.result").slice(0, 3);
      expect(results.map((d) => [d["recipient"], d["status"], d["retryAfterS"]])).toEqual(
        order.map((r) => [r, "deferred", { "bob@b.example": 300, "carol@b.example": 900, "dave@b.example": 60 }[r]]),
      );
      const started = w.trace.named("attempt.started");
      expect(started, order.join()).toHaveLength(2);
      // The schedule says 1 minute; every retry_after is a lower bound, so the latest, 15 minutes, decides.
      expect((started[1]?.timeMs ?? 0) - (started[0]?.timeMs ?? 0), order.join()).toBe(15 * MIN);
      expect(w.trace.data("timer.set")[0], order.join()).toMatchObject({ delayMs: 15 * MIN, reason: "retry-after" });
    }
  });

  it("G14, EVT-4, G29: a rejected recipient gets a DSN, delivered to the envelope sender through the service with a null from", async () => {
    const w = await world({ b: (c) => ({ ...c, policy: { recipientRefusals: [{ mailbox: "dave@b.example" }] } }) });
    const message = w.message("Refused");
    const handle = w.alice.submit({
      messageId: "r1@a.example",
      from: "alice@a.example",
      to: ["dave@b.example", "nobody@b.example", "bob@b.example"],
      message,
    });
    await w.run();
    expect((await handle.done).map((o) => [o.recipient, o.outcome])).toEqual([
      ["dave@b.example", "rejected"],
      ["nobody@b.example", "rejected"],
      ["bob@b.example", "accepted"],
    ]);
    const [dsn, ...more] = await dsnsIn(w.storeA, "alice@a.example");
    expect(more).toHaveLength(0);
    expect(dsn?.to).toEqual(["alice@a.example"]);
    expect(dsn?.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "a.example" });
    expect(dsn?.deliveryStatus.arrivalDate).toBe("Thu, 15 Jan 2026 09:00:00 +0000");
    expect(
      dsn?.deliveryStatus.recipients.map((r) => [
        r.finalRecipient.value,
        r.action,
        r.status,
        r.diagnosticCode?.type,
        r.diagnosticCode?.value.split(" ")[0],
        r.lastAttemptDate,
      ]),
    ).toEqual([
      [
        "dave@b.example",
        "failed",
        "5.7.1",
        "x-svc",
        `${PROBLEM_BASE}/policy_rejected`,
        "Thu, 15 Jan 2026 09:00:00 +0000",
      ],
      [
        "nobody@b.example",
        "failed",
        "5.1.1",
        "x-svc",
        `${PROBLEM_BASE}/recipient_not_found`,
        "Thu, 15 Jan 2026 09:00:00 +0000",
      ],
    ]);
    // G29: the receiver's detail follows the problem type.
    expect(dsn?.deliveryStatus.recipients[1]?.diagnosticCode?.value).toBe(
      `${PROBLEM_BASE}/recipient_not_found nobody@b.example does not exist here`,
    );
    expect(new TextDecoder().decode(dsn?.returned?.content)).toContain("Subject: Refused");
    // The DSN itself went out of a.example's sender with a null from, over the service (ENV-3).
    expect(w.trace.data("message.submitted").filter((d) => d["from"] === null)).toHaveLength(1);
    expect(w.trace.data("dsn.sent")).toEqual([
      expect.objectContaining({ messageId: "r1@a.example", to: "alice@a.example", reason: "rejected" }),
    ]);
  });

  it("STATE-8, G17: a failure after acceptance comes back as the receiver's DSN, a normal message to alice", async () => {
    const w = await world({
      b: (c) => ({
        ...c,
        policy: {
          failAfterAcceptance: [
            {
              mailbox: "carol@b.example",
              status: "5.2.1",
              diagnostic: "smtp; 550 5.2.1 mailbox disabled",
              delayMs: 5 * MIN,
            },
          ],
        },
      }),
    });
    const handle = w.alice.submit({ from: "alice@a.example", to: ["carol@b.example"], message: w.message() });
    await w.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["accepted"]);
    const dsns = await dsnsIn(w.storeA, "alice@a.example");
    expect(dsns.map((d) => [d.deliveryStatus.reportingMta.value, d.deliveryStatus.recipients[0]?.status])).toEqual([
      ["b.example", "5.2.1"],
    ]);
  });

  it("EVT-3, STATE-7: a DSN about a DSN is never sent: a null-sender message that fails gets none", async () => {
    const w = await world();
    const handle = w.alice.submit({ from: null, to: ["nobody@b.example"], message: w.message() });
    await w.run();
    expect((await handle.done).map((o) => o.outcome)).toEqual(["rejected"]);
    expect(w.trace.named("dsn.sent")).toHaveLength(0);
    expect(w.storeA.all()).toHaveLength(0);
  });

  it("MBX-1..MBX-8: a recipient that is not a mailbox is rejected at submission, with a DSN; the others go on", async () => {
    const w = await world();
    const handle = w.alice.submit({
      from: "alice@a.example",
      to: ["not a mailbox", "bob@b.example"],
      message: w.message(),
    });
    await w.run();
    expect((await handle.done).map((o) => [o.recipient, o.outcome, o.rule])).toEqual([
      ["not a mailbox", "rejected", "MBX-1"],
      ["bob@b.example", "accepted", "RCP-2"],
    ]);
    expect(await dsnsIn(w.storeA, "alice@a.example")).toHaveLength(1);
  });

  it("whenIdle resolves with work waiting on timers only; stop ends every actor", async () => {
    const w = await world({ b: (c) => ({ ...c, policy: { unavailable: { retryAfterS: 60 } } }) });
    w.alice.submit({ from: "alice@a.example", to: ["bob@b.example"], message: w.message() });
    await w.alice.whenIdle();
    expect(w.alice.actors()[0]?.actor.getSnapshot().value).toBe("retryScheduled");
    expect(w.clock.pending()).toBeGreaterThan(0);
    w.alice.stop();
    expect(w.alice.actors()[0]?.actor.getSnapshot().status).toBe("stopped");
    await w.alice.whenIdle();
  });

  it("RETRY-5: a production sender refuses a fallback window outside 1 to 4 hours; a simulation may use one", async () => {
    const key = await createTestSender("a.example");
    const ports = {
      clock: createSteppingClock(),
      random: createSeededRandom(),
      resolver: createTestZone(),
      fetch: () => Promise.reject(new Error("no")),
      smtp: createSmtpRecorder(),
    };
    const config = { domain: "a.example", signingKey: key.privateKey, keyid: key.keyid, problemBase: PROBLEM_BASE };
    expect(() =>
      createSender({ ...config, readings: { retryTiming: { jitter: true, fallbackWindowS: 600 } } }, ports),
    ).toThrow(/RETRY-5/);
    expect(() =>
      createSender({ ...config, readings: { retryTiming: { jitter: true, fallbackWindowS: 5 * 3600 } } }, ports),
    ).toThrow(/RETRY-5/);
    expect(
      createSender(
        { ...config, production: false, readings: { retryTiming: { jitter: true, fallbackWindowS: 600 } } },
        ports,
      ).readings.retryTiming,
    ).toEqual({ jitter: true, fallbackWindowS: 600 });
    const defaults = createSender(config, ports).readings;
    expect(defaults).toEqual({
      discoveryPin: "enforced",
      dnsFailureWithoutPin: "temporary-failure",
      overMaxRecipients: "split",
      overMaxMessageSize: "pre-check",
      retryTiming: { jitter: true, fallbackWindowS: 7200 },
      policyRejectedRetryAfter: "permanent",
      capabilities4xx: "fallback-eligible",
      capabilitiesRetryAfter: "ignored",
    });
    // Each name is written in the trace under its own gap's ID (app/protocol/readingNames.ts).
    expect(Object.keys(readingsForTrace(defaults))).toEqual(
      Object.keys(defaults).map((name) => READING_GAPS[name as ReadingName]),
    );
  });

  it("the trace records the readings in force with each submitted message", async () => {
    const w = await world({
      senderConfig: { readings: { discoveryPin: "ignored", retryTiming: { jitter: false, fallbackWindowS: 3600 } } },
    });
    w.alice.submit({ from: "alice@a.example", to: ["bob@b.example"], message: w.message() });
    await w.run();
    expect(w.trace.data("message.submitted")[0]?.["readings"]).toEqual({
      G7: "ignored",
      G8: "temporary-failure",
      G12: "split",
      G13: "pre-check",
      G16: "jitter=off, fallback-window=3600s",
      G26: "permanent",
      G46: "fallback-eligible",
      G47: "ignored",
    });
  });

  it("every event the sender emits has a name from the trace catalogue", async () => {
    const w = await world({
      b: (c) => ({ ...c, policy: { unavailable: { times: 1 }, recipientRefusals: [{ mailbox: "dave@b.example" }] } }),
    });
    w.alice.submit({
      from: "alice@a.example",
      to: ["bob@b.example", "dave@b.example", "x@c.example"],
      message: w.message(),
    });
    await w.run();
    const names = new Set(w.trace.events.map((e) => e.name));
    expect([...names].filter((name) => !isTraceEventName(name))).toEqual([]);
    for (const name of [
      "message.submitted",
      "discovery.resolved",
      "capabilities.fetched",
      "version.negotiated",
      "delivery.created",
      "machine.started",
      "machine.transition",
      "attempt.started",
      "attempt.ended",
      "attempt.judged",
      "recipient.result",
      "recipient.outcome",
      "timer.set",
      "timer.fired",
      "smtp.handoff",
      "dsn.sent",
    ]) {
      expect(names).toContain(name);
    }
  });

  it("the same seed gives the same trace, event for event", async () => {
    const once = async () => {
      const w = await world({
        b: (c) => ({
          ...c,
          policy: { unavailable: { times: 3 }, temporaryFailures: [{ mailbox: "carol@b.example", times: 1 }] },
        }),
      });
      w.alice.submit({
        from: "alice@a.example",
        to: ["bob@b.example", "carol@b.example", "nobody@b.example"],
        message: w.message(),
      });
      await w.run();
      return JSON.stringify(w.trace.events);
    };
    expect(await once()).toBe(await once());
  });
});
