import { beforeAll, describe, expect, it } from "vitest";
import { TransportError } from "../ports.ts";
import { verifyContentDigest } from "../protocol/digest.ts";
import { parseSignatureInput } from "../protocol/signature.ts";
import { createTestSender } from "../receiver/testing.ts";
import type { TestSender } from "../receiver/testing.ts";
import { attemptDelivery } from "./attempt.ts";
import type { AttemptDeps, AttemptOutcome, OpenDelivery } from "./attempt.ts";
import type { Endpoint } from "./discovery.ts";
import { defaultReadings } from "./readings.ts";
import type { SenderReadings } from "./readings.ts";
import {
  PROBLEM_BASE,
  allRecipients,
  createScriptedReceiver,
  createSteppingClock,
  createTraceLog,
  problemAnswer,
  resultsAnswer,
} from "./testing.ts";
import type { ScriptedAnswer, SeenPost } from "./testing.ts";

let key: TestSender;
beforeAll(async () => {
  key = await createTestSender("a.example");
});

const endpoint: Endpoint = {
  origin: "https://mx.b.example",
  version: "v1",
  capabilities: { versions: ["v1"], max_message_size: 26214400, max_recipients: 100 },
};
const delivery: OpenDelivery = {
  deliveryId: "m1→b.example#1",
  idempotencyKey: "key-1.A_b~c",
  recipients: ["bob@b.example", "carol@b.example"],
  boundary: "mailscope-test-boundary",
};
const message = new TextEncoder().encode("From: <alice@a.example>\r\nSubject: Hi\r\n\r\nHello.\r\n");

function setup(readings: Partial<SenderReadings> = {}) {
  const clock = createSteppingClock();
  const trace = createTraceLog();
  const receiver = createScriptedReceiver("https://mx.b.example", clock);
  const deps: AttemptDeps = {
    fetch: receiver.fetch,
    clock,
    trace,
    privateKey: key.privateKey,
    keyid: key.keyid,
    problemBase: PROBLEM_BASE,
    readings: { ...defaultReadings, ...readings },
    senderDomain: "a.example",
  };
  const attempt = (
    answer?: (post: SeenPost) => ScriptedAnswer,
    overrides: Partial<OpenDelivery> = {},
    ep: Endpoint = endpoint,
  ): Promise<AttemptOutcome> => {
    if (answer !== undefined) receiver.queue(answer);
    return attemptDelivery(
      { delivery: { ...delivery, ...overrides }, from: "alice@a.example", message, endpoint: ep, attempt: 1 },
      deps,
    );
  };
  return { clock, trace, receiver, deps, attempt };
}

describe("an attempt: build, digest, sign, POST", () => {
  it("POST-2..POST-9, POST-24: headers, two-part body, and on a retry the same key and body with a fresh created", async () => {
    const { attempt, receiver, clock } = setup();
    await attempt();
    clock.advanceTo(clock.now() + 60_000);
    await attempt();
    const [first, second] = receiver.posts;
    expect(first?.url).toBe("https://mx.b.example/v1/messages");
    expect(first?.envelope).toEqual({ from: "alice@a.example", to: ["bob@b.example", "carol@b.example"] });
    expect(first?.message).toEqual(message);
    expect(first?.idempotencyKey).toBe("key-1.A_b~c");
    expect(second?.idempotencyKey).toBe(first?.idempotencyKey);
    expect(second?.contentDigest).toBe(first?.contentDigest);
    const created = (post: SeenPost | undefined) => {
      const parsed = parseSignatureInput(post?.signatureInput ?? "");
      if (!parsed.ok) throw new Error("unreadable Signature-Input");
      const member = parsed.value.get("sig1");
      return { created: member?.params.created, keyid: member?.params.keyid };
    };
    expect(created(first)).toEqual({ created: Math.floor((clock.now() - 60_000) / 1000), keyid: key.keyid });
    expect(created(second)).toEqual({ created: Math.floor(clock.now() / 1000), keyid: key.keyid });
  });

  it("POST-5, AUTH-2: the Content-Digest is the digest of the body sent", async () => {
    const requests: Request[] = [];
    const { deps } = setup();
    await attemptDelivery(
      { delivery, from: "alice@a.example", message, endpoint, attempt: 1 },
      { ...deps, fetch: (r) => (requests.push(r.clone()), Promise.resolve(resultsAnswer([]))) },
    );
    const request = requests[0];
    const body = new Uint8Array(await (request as Request).arrayBuffer());
    expect(await verifyContentDigest(body, request?.headers.get("content-digest") ?? "")).toMatchObject({ ok: true });
    expect(request?.headers.get("content-type")).toMatch(/^multipart\/mixed; boundary=/);
    expect(request?.redirect).toBe("manual");
  });
});

describe("per-recipient results in a 200 (the errors table, level P)", () => {
  it("ERR-17, ERR-18, RCP-2: accepted, rejected with a permanent problem, deferred with a temporary one and retry_after", async () => {
    const { attempt, trace } = setup();
    const outcome = await attempt(() =>
      resultsAnswer([
        { recipient: "bob@b.example", status: "accepted" },
        {
          recipient: "carol@b.example",
          status: "deferred",
          problem: { type: `${PROBLEM_BASE}/mailbox_full` },
          retry_after: 120,
        },
      ]),
    );
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [
        { recipient: "bob@b.example", outcome: "accepted" },
        {
          recipient: "carol@b.example",
          outcome: "deferred",
          retryAfterS: 120,
          rule: "ERR-18",
          problem: { identifier: "mailbox_full" },
        },
      ],
    });
    const rejected = await attempt(() =>
      resultsAnswer([
        { recipient: "bob@b.example", status: "rejected", problem: { type: `${PROBLEM_BASE}/recipient_not_found` } },
        { recipient: "carol@b.example", status: "rejected", problem: { type: `${PROBLEM_BASE}/policy_rejected` } },
      ]),
    );
    expect(rejected).toMatchObject({
      kind: "results",
      verdicts: [
        { outcome: "rejected", rule: "ERR-17" },
        { outcome: "rejected", rule: "ERR-17" },
      ],
    });
    expect(trace.data("recipient.result")).toHaveLength(4);
  });

  it("ERR-8, ERR-10: rate_limited and temporary_failure inside a result are deferred", async () => {
    const { attempt } = setup();
    const outcome = await attempt((post) => allRecipients(post, "deferred", "rate_limited", { retry_after: 30 }));
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [
        { outcome: "deferred", retryAfterS: 30 },
        { outcome: "deferred", retryAfterS: 30 },
      ],
    });
    const failure = await attempt((post) => allRecipients(post, "deferred", "temporary_failure"));
    expect(failure).toMatchObject({
      kind: "results",
      verdicts: [{ outcome: "deferred", problem: { identifier: "temporary_failure" } }, { outcome: "deferred" }],
    });
  });

  it("RCP-3: an unknown status is deferred", async () => {
    const { attempt } = setup();
    const outcome = await attempt((post) => allRecipients(post, "queued", "recipient_not_found"));
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [{ outcome: "deferred", rule: "RCP-3" }, { outcome: "deferred" }],
    });
  });

  it("ERR-20: an unknown problem type inside a result goes by the result's status", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() =>
      resultsAnswer([
        { recipient: "bob@b.example", status: "rejected", problem: { type: "https://other.example/p/gone" } },
        { recipient: "carol@b.example", status: "deferred", problem: { type: "https://other.example/p/busy" } },
      ]),
    );
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [
        { outcome: "rejected", rule: "ERR-20" },
        { outcome: "deferred", rule: "ERR-20" },
      ],
    });
  });

  it("G15, RCP-4: a non-accepted entry without problem is deferred with temporary_failure", async () => {
    const { attempt } = setup();
    const outcome = await attempt((post) => allRecipients(post, "rejected"));
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [
        { outcome: "deferred", rule: "RCP-4", gaps: ["G15"], problem: { identifier: "temporary_failure" } },
        { outcome: "deferred" },
      ],
    });
  });

  it("G25, DLR-2, DLR-3: entries are matched by recipient; a recipient without an entry is deferred", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() =>
      resultsAnswer([
        { recipient: "carol@B.EXAMPLE", status: "accepted" },
        { recipient: "mallory@b.example", status: "accepted" },
      ]),
    );
    expect(outcome).toMatchObject({
      kind: "results",
      verdicts: [
        { recipient: "bob@b.example", outcome: "deferred", gaps: ["G25", "G15"] },
        { recipient: "carol@b.example", outcome: "accepted" },
      ],
    });
    expect(outcome.kind === "results" && outcome.notes.map((n) => n.rule)).toContain("DLR-2");
  });

  it("G15, ERR-21: a 200 whose body does not parse is a request-level temporary failure, fallback-eligible", async () => {
    const { attempt } = setup();
    for (const body of ["{oops", JSON.stringify({ results: "nope" })]) {
      const outcome = await attempt(() => new Response(body, { status: 200 }));
      expect(outcome).toMatchObject({
        kind: "request-level",
        status: 200,
        reading: { class: "temporary", fallbackEligible: true, gaps: ["G15"] },
      });
    }
  });
});

describe("request-level answers (the errors table, level R)", () => {
  const rows = [
    ["invalid_request", 400, "ERR-1"],
    ["invalid_signature", 401, "ERR-2"],
    ["policy_rejected", 403, "ERR-3"],
    ["idempotency_conflict", 409, "ERR-6"],
    ["message_too_large", 413, "ERR-7"],
  ] as const;
  for (const [identifier, status, rule] of rows) {
    it(`${rule}: ${status} ${identifier} is permanent: not retried, never SMTP`, async () => {
      const { attempt } = setup();
      const outcome = await attempt(() => problemAnswer(identifier, status));
      expect(outcome).toMatchObject({
        kind: "request-level",
        status,
        problem: { identifier, type: `${PROBLEM_BASE}/${identifier}` },
        reading: { identifier, class: "permanent", retry: false, fallbackEligible: false, smtpFallback: "never", rule },
      });
    });
  }

  it("ERR-5, ERR-26: 404 unsupported_version allows SMTP at once, with the versions served", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() => problemAnswer("unsupported_version", 404, { versions: ["v2"] }));
    expect(outcome).toMatchObject({
      kind: "request-level",
      versions: ["v2"],
      reading: { smtpFallback: "immediately", rule: "ERR-26" },
    });
  });

  it("ERR-8, RETRY-7: 429 rate_limited is temporary, honours Retry-After, never falls back", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() => problemAnswer("rate_limited", 429, { retryAfter: "600" }));
    expect(outcome).toMatchObject({
      kind: "request-level",
      retryAfterS: 600,
      reading: { class: "temporary", retry: true, fallbackEligible: false, smtpFallback: "never" },
    });
  });

  it("ERR-10, ERR-22: 503 temporary_failure is temporary and fallback-eligible; an HTTP-date Retry-After is read too", async () => {
    const { attempt, clock } = setup();
    const date = new Date(clock.now() + 90_000).toUTCString();
    const outcome = await attempt(() => problemAnswer("temporary_failure", 503, { retryAfter: date }));
    expect(outcome).toMatchObject({
      kind: "request-level",
      retryAfterS: 90,
      reading: { class: "temporary", fallbackEligible: true, smtpFallback: "after the fallback window" },
    });
  });

  it("G21: a 503 or 429 without a usable Retry-After is noted; the schedule decides", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() => problemAnswer("temporary_failure", 503, { retryAfter: "soon" }));
    expect(outcome.kind === "request-level" && outcome.retryAfterS).toBe(undefined);
    expect(outcome.kind === "request-level" && outcome.reading.gaps).toContain("G21");
  });

  it("ERR-21: a 5xx without a problem document, a connection failure, a TLS failure and a timeout are temporary_failure, fallback-eligible", async () => {
    const { attempt } = setup();
    const answers: ScriptedAnswer[] = [
      new Response("<html>bad gateway</html>", { status: 502 }),
      { fail: "connection-refused" },
      { fail: "tls" },
      { fail: "timeout" },
    ];
    for (const answer of answers) {
      const outcome = await attempt(() => answer);
      expect(outcome).toMatchObject({
        kind: "request-level",
        problem: { identifier: "temporary_failure" },
        reading: { class: "temporary", fallbackEligible: true },
      });
    }
  });

  it("ERR-19: an unknown problem type goes by the status class: 4xx permanent, 5xx temporary", async () => {
    const { attempt } = setup();
    const unknown = (status: number) => () =>
      new Response(JSON.stringify({ type: "https://other.example/problems/odd" }), {
        status,
        headers: { "content-type": "application/problem+json" },
      });
    expect(await attempt(unknown(422))).toMatchObject({
      reading: { class: "permanent", fallbackEligible: false, rule: "ERR-19" },
      problem: { type: "https://other.example/problems/odd" },
    });
    expect(await attempt(unknown(500))).toMatchObject({
      reading: { class: "temporary", fallbackEligible: true, rule: "ERR-19" },
    });
  });

  it("G30: a redirect is not followed: a temporary failure; a 4xx without problem document is permanent", async () => {
    const { attempt } = setup();
    expect(
      await attempt(() => new Response(null, { status: 307, headers: { location: "https://elsewhere.example/" } })),
    ).toMatchObject({
      reading: { class: "temporary", fallbackEligible: true, gaps: ["G30"] },
    });
    expect(await attempt(() => new Response("nope", { status: 400 }))).toMatchObject({
      reading: { class: "permanent", gaps: ["G30"] },
    });
  });

  it("G26 permanent: a 403 policy_rejected with Retry-After stays permanent (the Retry-After noted)", async () => {
    const { attempt } = setup();
    const outcome = await attempt(() => problemAnswer("policy_rejected", 403, { retryAfter: "3600" }));
    expect(outcome).toMatchObject({ reading: { class: "permanent", retry: false } });
    expect(outcome.kind === "request-level" && outcome.reading.gaps).toContain("G26");
    expect(outcome.kind === "request-level" && outcome.retryAfterS).toBe(undefined);
  });

  it("G26 retry, ERR-27: a 403 policy_rejected with Retry-After is retried at that time, never falling back", async () => {
    const { attempt } = setup({ policyRejectedRetryAfter: "retry" });
    const outcome = await attempt(() => problemAnswer("policy_rejected", 403, { retryAfter: "3600" }));
    expect(outcome).toMatchObject({
      retryAfterS: 3600,
      reading: { class: "temporary", retry: true, fallbackEligible: false, smtpFallback: "never", rule: "ERR-27" },
    });
    expect(await attempt(() => problemAnswer("policy_rejected", 403))).toMatchObject({
      reading: { class: "permanent" },
    });
  });

  it("a Fetch that throws something other than a TransportError is a connection failure", async () => {
    const { deps } = setup();
    const outcome = await attemptDelivery(
      { delivery, from: "alice@a.example", message, endpoint, attempt: 1 },
      { ...deps, fetch: () => Promise.reject(new TypeError("fetch failed")) },
    );
    expect(outcome).toMatchObject({
      kind: "request-level",
      failure: "connection",
      reading: { fallbackEligible: true },
    });
    const tls = await attemptDelivery(
      { delivery, from: "alice@a.example", message, endpoint, attempt: 1 },
      { ...deps, fetch: () => Promise.reject(new TransportError("tls", "handshake")) },
    );
    expect(tls).toMatchObject({ failure: "tls" });
  });
});

describe("G13: a message larger than max_message_size", () => {
  const big = new Uint8Array(26214400).fill(0x61);
  const small: Endpoint = { ...endpoint, capabilities: { ...endpoint.capabilities, max_message_size: 26214400 } };

  it("G13 pre-check, G24, ERR-12: the body is measured whole and not sent: a permanent message_too_large", async () => {
    const { deps, receiver, trace } = setup();
    const outcome = await attemptDelivery(
      { delivery, from: "alice@a.example", message: big, endpoint: small, attempt: 1 },
      deps,
    );
    expect(outcome).toMatchObject({
      kind: "request-level",
      sent: false,
      reading: { identifier: "message_too_large", class: "permanent", rule: "ERR-12", gaps: ["G13", "G24"] },
    });
    expect(receiver.posts).toHaveLength(0);
    expect(trace.data("attempt.ended")[0]).toMatchObject({ sent: false, class: "permanent" });
  });

  it("G13 send: the body goes out and the receiver's 413 decides", async () => {
    const { deps, receiver } = setup({ overMaxMessageSize: "send" });
    receiver.queue(() => problemAnswer("message_too_large", 413));
    const outcome = await attemptDelivery(
      { delivery, from: "alice@a.example", message: big, endpoint: small, attempt: 1 },
      deps,
    );
    expect(outcome).toMatchObject({
      kind: "request-level",
      sent: true,
      status: 413,
      reading: { identifier: "message_too_large", class: "permanent", rule: "ERR-7" },
    });
    expect(receiver.posts).toHaveLength(1);
  });
});
