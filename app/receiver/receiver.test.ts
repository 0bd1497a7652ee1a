import { describe, expect, it } from "vitest";
import { errorsTable } from "../protocol/errors.ts";
import { parseCapabilities, parseDeliveryResult, parseProblem } from "../protocol/resources.ts";
import { isTraceEventName } from "../trace/events.ts";
import { receiverCheck, receiverChecks } from "./checks.ts";
import { createMemoryMailStore } from "./memoryMailStore.ts";
import { TEST_PROBLEM_BASE, createReceiverHarness, readProblem, textMessage } from "./testing.ts";
import type { ReceiverHarness } from "./testing.ts";

const MX = "https://mx.b.example";

async function expectProblem(response: Response, status: number, identifier: string): Promise<Record<string, unknown>> {
  const answer = await readProblem(response);
  expect(answer.status).toBe(status);
  expect(answer.contentType).toBe("application/problem+json");
  expect(answer.identifier).toBe(identifier);
  expect(answer.json["status"]).toBe(status);
  const parsed = parseProblem(answer.json, TEST_PROBLEM_BASE, { strict: true });
  expect(parsed.ok).toBe(true);
  return answer.json;
}

async function results(
  response: Response,
): Promise<{ recipient: string; status: string; problem?: { type: string }; retry_after?: number }[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  const json = (await response.json()) as {
    results: { recipient: string; status: string; problem?: { type: string }; retry_after?: number }[];
  };
  expect(parseDeliveryResult(json, undefined, { strict: true }).ok).toBe(true);
  return json.results;
}

const type = (identifier: string): string => `${TEST_PROBLEM_BASE}/${identifier}`;

describe("GET /v1/capabilities", () => {
  it("GET-1, GET-3, GET-5, AUTH-7, CAP-12: unsigned GET gets the Capabilities document with Cache-Control max-age=3600", async () => {
    const h = await createReceiverHarness();
    const response = await h.receiver(new Request(`${MX}/v1/capabilities`));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("max-age=3600");
    const json: unknown = await response.json();
    const parsed = parseCapabilities(json);
    expect(parsed.ok).toBe(true);
    expect(json).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
      discovery_pin_max_age: 604800,
      abuse_contact: "mailto:abuse@b.example",
    });
  });

  it("CAP-11, CAP-4: a configured null pin age leaves the member out; versions as configured", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      capabilities: { max_message_size: 30000000, discovery_pin_max_age: null, versions: ["v1", "v2"] },
    }));
    const json = (await (await h.receiver(new Request(`${MX}/v1/capabilities`))).json()) as Record<string, unknown>;
    expect(json).toEqual({ versions: ["v1", "v2"], max_message_size: 30000000, max_recipients: 100 });
  });

  it("GET-3: HEAD gets the same status and headers without a body", async () => {
    const h = await createReceiverHarness();
    const response = await h.receiver(new Request(`${MX}/v1/capabilities`, { method: "HEAD" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("max-age=3600");
    expect(await response.text()).toBe("");
  });

  it("GET-4, POST-21: another method on /v1/capabilities is 405 with Allow and a problem document", async () => {
    const h = await createReceiverHarness();
    const response = await h.receiver(new Request(`${MX}/v1/capabilities`, { method: "DELETE" }));
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    await expectProblem(response, 405, "invalid_request");
  });

  it("CAP-5, STATE-4: a receiver that serves only v2 still publishes its versions at /v1/capabilities, and answers /v1/messages 404", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      capabilities: { max_message_size: 26214400, versions: ["v2"] },
    }));
    const caps = (await (await h.receiver(new Request(`${MX}/v1/capabilities`))).json()) as { versions: string[] };
    expect(caps.versions).toEqual(["v2"]);
    const json = await expectProblem(await h.deliver(), 404, "unsupported_version");
    expect(json["versions"]).toEqual(["v2"]);
  });
});

describe("unknown major versions (404 unsupported_version)", () => {
  for (const [method, path] of [
    ["POST", "/v2/messages"],
    ["GET", "/v2/capabilities"],
    ["GET", "/v0/x"],
    ["POST", "/v10/messages"],
    ["POST", "/v01/messages"],
    ["GET", "/v3"],
  ] as const) {
    it(`GET-10, ERR-14, ERR-15, VER-7, PRB-4, POST-16: ${method} ${path} → 404 with versions`, async () => {
      const h = await createReceiverHarness();
      const json = await expectProblem(
        await h.receiver(new Request(`${MX}${path}`, { method })),
        404,
        "unsupported_version",
      );
      expect(json["versions"]).toEqual(["v1"]);
      expect(h.store.all()).toHaveLength(0);
    });
  }

  it("ERR-15, CAP-5: versions lists every major version served", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      capabilities: { max_message_size: 26214400, versions: ["v1", "v3"] },
    }));
    const json = await expectProblem(
      await h.receiver(new Request(`${MX}/v2/messages`, { method: "POST" })),
      404,
      "unsupported_version",
    );
    expect(json["versions"]).toEqual(["v1", "v3"]);
  });

  it("G10, ERR-14: the version path is checked before anything else (an unsigned, bodiless POST to /v2 is still 404)", async () => {
    const h = await createReceiverHarness();
    const request = await h.request({ url: `${MX}/v2/messages`, headers: { "idempotency-key": "bad key!" } });
    await expectProblem(await h.receiver(request), 404, "unsupported_version");
  });

  it("POST-21, PRB-5: paths outside the service get a problem without versions", async () => {
    const h = await createReceiverHarness();
    for (const path of ["/", "/messages", "/v1/other", "/v1/messages/"]) {
      const json = await expectProblem(
        await h.receiver(new Request(`${MX}${path}`, { method: "POST" })),
        404,
        "invalid_request",
      );
      expect(json["versions"]).toBeUndefined();
    }
  });

  it("POST-21: GET /v1/messages is 405 with Allow: POST", async () => {
    const h = await createReceiverHarness();
    const response = await h.receiver(new Request(`${MX}/v1/messages`));
    expect(response.headers.get("allow")).toBe("POST");
    await expectProblem(response, 405, "invalid_request");
  });
});

describe("200 DeliveryResult", () => {
  it("POST-11, DLR-1, DLR-2, DLR-3, SVC-4, RCP-1, RCP-2: one entry per recipient in the order of to", async () => {
    const h = await createReceiverHarness();
    const to = ["carol@b.example", "nobody@b.example", "bob@b.example"];
    const list = await results(await h.deliver({ to }));
    expect(list.map((r) => r.recipient)).toEqual(to);
    expect(list.map((r) => r.status)).toEqual(["accepted", "rejected", "accepted"]);
    expect(list[0]?.problem).toBeUndefined();
  });

  it("POST-11, ERR-4, ERR-17, RCP-4: always 200 once the request is acceptable, even if every recipient is rejected", async () => {
    const h = await createReceiverHarness();
    const list = await results(await h.deliver({ to: ["x@b.example", "y@b.example"] }));
    expect(list.map((r) => [r.status, r.problem?.type])).toEqual([
      ["rejected", type("recipient_not_found")],
      ["rejected", type("recipient_not_found")],
    ]);
    expect(h.store.all()).toHaveLength(0);
  });

  it("POST-9, POST-10, SVC-7: an accepted message is stored byte for byte per recipient, DKIM-Signature and all", async () => {
    const h = await createReceiverHarness();
    const message = textMessage({
      from: "alice@a.example",
      to: ["bob@b.example", "carol@b.example"],
      body: "Caf\u00e9 \u2603\r\n.\r\nend",
    });
    await results(await h.deliver({ to: ["bob@b.example", "carol@b.example"], message }));
    expect(h.store.messages("bob@b.example")[0]?.message).toEqual(message);
    expect(h.store.messages("carol@b.example")[0]?.message).toEqual(message);
    expect(new TextDecoder().decode(h.store.messages("bob@b.example")[0]?.message)).toContain("DKIM-Signature: v=1;");
  });

  it("ENV-3, AUTH-4: a null from (a DSN) is accepted", async () => {
    const h = await createReceiverHarness();
    const list = await results(await h.deliver({ from: null }));
    expect(list[0]?.status).toBe("accepted");
  });

  it("MBX-3, G22: recipients compare with the domain case-insensitively; the result names the mailbox as sent in form", async () => {
    const h = await createReceiverHarness();
    const list = await results(await h.deliver({ to: ["bob@B.Example"] }));
    expect(list[0]).toEqual({ recipient: "bob@b.example", status: "accepted" });
  });

  it("G22: local parts compare exactly: Bob@b.example is not bob@b.example", async () => {
    const h = await createReceiverHarness();
    const list = await results(await h.deliver({ to: ["Bob@b.example"] }));
    expect(list[0]?.status).toBe("rejected");
  });

  it("ENV-9, VER-3: unknown envelope fields are ignored", async () => {
    const h = await createReceiverHarness();
    const list = await results(
      await h.deliver({
        envelope: { from: "alice@a.example", to: ["bob@b.example"], x_priority: 1, notify: { on: "never" } },
      }),
    );
    expect(list[0]?.status).toBe("accepted");
  });

  it("SVC-7: catchAll makes every local part of a served domain exist", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, catchAll: true }));
    const list = await results(await h.deliver({ to: ["anyone@b.example"] }));
    expect(list[0]?.status).toBe("accepted");
  });
});

describe("per-recipient problems (level P)", () => {
  it("ERR-9, ERR-18, SVC-7: over quota → deferred mailbox_full", async () => {
    const h = await createReceiverHarness();
    expect((await results(await h.deliver({ to: ["dave@b.example"] })))[0]?.status).toBe("accepted");
    const second = await results(await h.deliver({ to: ["dave@b.example", "bob@b.example"] }));
    expect(second.map((r) => [r.status, r.problem?.type])).toEqual([
      ["deferred", type("mailbox_full")],
      ["accepted", undefined],
    ]);
    expect(h.store.messages("dave@b.example")).toHaveLength(1);
  });

  it("ERR-9: a byte quota counts the message part's bytes", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      mailboxes: [{ address: "bob@b.example", quota: { bytes: 400 } }],
    }));
    const small = await results(await h.deliver({ message: "Subject: a\r\n\r\nshort\r\n" }));
    expect(small[0]?.status).toBe("accepted");
    const big = await results(await h.deliver({ message: `Subject: b\r\n\r\n${"x".repeat(400)}\r\n` }));
    expect(big[0]?.problem?.type).toBe(type("mailbox_full"));
  });

  it("ERR-3, ERR-16, ERR-17: a recipient refusing the sender → rejected policy_rejected; others still accepted", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: {
        recipientRefusals: [
          { mailbox: "carol@b.example", senders: ["a.example"] },
          { mailbox: "bob@b.example", senders: ["eve@a.example"] },
        ],
      },
    }));
    const list = await results(await h.deliver({ to: ["carol@b.example", "bob@b.example"] }));
    expect(list.map((r) => [r.status, r.problem?.type])).toEqual([
      ["rejected", type("policy_rejected")],
      ["accepted", undefined],
    ]);
  });

  it("ERR-8, ERR-18, RCP-5, RCP-6: a recipient over its rate limit → deferred rate_limited with retry_after", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { recipientRateLimits: [{ mailbox: "bob@b.example", max: 1, windowS: 60 }] },
    }));
    expect((await results(await h.deliver()))[0]?.status).toBe("accepted");
    await h.clock.advance(20_000);
    const second = await results(await h.deliver());
    expect(second[0]).toMatchObject({ status: "deferred", problem: { type: type("rate_limited") }, retry_after: 40 });
    await h.clock.advance(40_000);
    expect((await results(await h.deliver()))[0]?.status).toBe("accepted");
  });

  it("ERR-10, ERR-18: a planned temporary failure → deferred temporary_failure, then accepted after `times`", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { temporaryFailures: [{ mailbox: "bob@b.example", times: 1, retryAfterS: 120 }] },
    }));
    const first = await results(await h.deliver());
    expect(first[0]).toMatchObject({
      status: "deferred",
      problem: { type: type("temporary_failure") },
      retry_after: 120,
    });
    expect((await results(await h.deliver()))[0]?.status).toBe("accepted");
  });

  it("ERR-10, ERR-18: a mail store that fails for one mailbox → that recipient deferred temporary_failure", async () => {
    const store = createMemoryMailStore({ failFor: ["carol@b.example"] });
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const list = await results(await h.deliver({ to: ["bob@b.example", "carol@b.example"] }));
    expect(list.map((r) => [r.status, r.problem?.type])).toEqual([
      ["accepted", undefined],
      ["deferred", type("temporary_failure")],
    ]);
    expect(store.all().map((m) => m.mailbox)).toEqual(["bob@b.example"]);
  });

  it("ERR-17, ERR-18: the order of per-recipient checks follows receiverChecks (not found before policy before quota)", async () => {
    const ids = receiverChecks.filter((c) => c.level === "P").map((c) => c.id);
    expect(ids).toEqual([
      "recipient-exists",
      "recipient-policy",
      "recipient-temporary-failure",
      "recipient-rate-limit",
      "quota",
      "store",
    ]);
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: {
        recipientRefusals: [{ mailbox: "dave@b.example" }],
        temporaryFailures: [{ mailbox: "dave@b.example" }],
      },
    }));
    const list = await results(await h.deliver({ to: ["dave@b.example"] }));
    expect(list[0]?.problem?.type).toBe(type("policy_rejected"));
  });
});

describe("400 invalid_request", () => {
  const headerCases: [string, Parameters<ReceiverHarness["request"]>[0], string][] = [
    ["POST-2: Idempotency-Key missing", { headers: { "idempotency-key": null } }, "POST-2"],
    ["POST-2: Idempotency-Key with a space", { idempotencyKey: "two words" }, "POST-2"],
    ["POST-2: Idempotency-Key with a slash", { idempotencyKey: "a/b" }, "POST-2"],
    ["LIM-5: Idempotency-Key of 129 characters", { idempotencyKey: "k".repeat(129) }, "LIM-5"],
    ["LIM-5: empty Idempotency-Key", { headers: { "idempotency-key": "" } }, "LIM-5"],
    ["POST-3: Signature missing", { headers: { signature: null } }, "POST-3"],
    ["POST-4: Signature-Input missing", { headers: { "signature-input": null } }, "POST-4"],
    ["POST-4: Signature-Input not a dictionary", { headers: { "signature-input": "sig1=(((" } }, "POST-4"],
    ["POST-3: Signature not a byte sequence", { headers: { signature: "sig1=abc" } }, "POST-3"],
    ["POST-3: Signature without the label Signature-Input names", { headers: { signature: "other=:AAAA:" } }, "POST-3"],
    ["POST-5: Content-Digest missing", { headers: { "content-digest": null } }, "POST-5"],
    ["POST-5: Content-Digest not a byte sequence", { contentDigest: "sha-256=abc" }, "POST-5"],
    ["POST-5: Content-Digest empty", { contentDigest: "" }, "POST-5"],
    ["POST-6: Content-Type missing", { headers: { "content-type": null } }, "POST-6"],
    [
      "POST-6: Content-Type multipart/form-data",
      { contentType: "multipart/form-data; boundary=mailscope-test-boundary-0f3c9a" },
      "POST-6",
    ],
    ["POST-6: Content-Type multipart/mixed without boundary", { contentType: "multipart/mixed" }, "POST-6"],
    [
      "POST-6, G9: a boundary of 71 characters",
      { contentType: `multipart/mixed; boundary=${"b".repeat(71)}` },
      "POST-6",
    ],
    ["POST-6: Content-Type application/json", { contentType: "application/json" }, "POST-6"],
  ];
  for (const [title, options, rule] of headerCases) {
    it(`ERR-16, POST-13, G10: ${title} → 400 naming ${rule}`, async () => {
      const h = await createReceiverHarness();
      const json = await expectProblem(await h.deliver(options), 400, "invalid_request");
      expect(String(json["detail"])).toContain(`[${rule}]`);
      expect(h.store.all()).toHaveLength(0);
    });
  }

  it("POST-13: every header problem is reported at once", async () => {
    const h = await createReceiverHarness();
    const json = await expectProblem(
      await h.deliver({ idempotencyKey: "a b", contentType: "text/plain" }),
      400,
      "invalid_request",
    );
    expect(String(json["detail"])).toMatch(/\[POST-2\].*\[POST-6\]/);
  });

  const bodyCases: [string, Parameters<ReceiverHarness["request"]>[0], string][] = [
    [
      "ERR-11, LIM-4, ENV-8: more recipients than max_recipients",
      { to: Array.from({ length: 101 }, (_, i) => `u${i}@b.example`) },
      "ENV-8",
    ],
    ["ENV-5: an empty to", { envelope: { from: "alice@a.example", to: [] } }, "ENV-5"],
    ["ENV-6: duplicate recipients", { to: ["bob@b.example", "carol@b.example", "bob@B.EXAMPLE"] }, "ENV-6"],
    ["ENV-7, POST-22: recipients in two domains", { to: ["bob@b.example", "zed@c.example"] }, "ENV-7"],
    ["ENV-1: no from", { envelope: { to: ["bob@b.example"] } }, "ENV-1"],
    ["ENV-4: to is a string", { envelope: { from: "alice@a.example", to: "bob@b.example" } }, "ENV-4"],
    ["MBX-1: a recipient without @", { to: ["bob.b.example"], url: `${MX}/v1/messages` }, "MBX-1"],
    ["MBX-6, LIM-8: a local part of 65 octets", { to: [`${"l".repeat(65)}@b.example`] }, "MBX-6"],
    ["MBX-3: a recipient domain with an underscore", { to: ["bob@b_x.example"], url: `${MX}/v1/messages` }, "MBX-3"],
    ["MBX-7: a needlessly quoted local part", { to: ['"bob"@b.example'] }, "MBX-7"],
    ["POST-8: the envelope is not JSON", { envelope: "{from: alice}" }, "POST-8"],
    ["POST-8: the envelope is JSON but not an object", { envelope: "[1,2]" }, "ENV-1"],
  ];
  for (const [title, options, rule] of bodyCases) {
    it(`ERR-16, POST-13: ${title} → 400 naming ${rule}`, async () => {
      const h = await createReceiverHarness();
      const json = await expectProblem(await h.deliver(options), 400, "invalid_request");
      expect(String(json["detail"])).toContain(`[${rule}]`);
      expect(h.store.all()).toHaveLength(0);
    });
  }

  it("POST-7, G9: a body of one part → 400", async () => {
    const h = await createReceiverHarness();
    const body = new TextEncoder().encode(
      '--bnd\r\nContent-Type: application/json\r\n\r\n{"from":null,"to":["bob@b.example"]}\r\n--bnd--\r\n',
    );
    const json = await expectProblem(
      await h.deliver({ body, contentType: "multipart/mixed; boundary=bnd" }),
      400,
      "invalid_request",
    );
    expect(String(json["detail"])).toContain("[POST-7]");
  });

  it("POST-7, POST-8, POST-9, G9: parts in the wrong order → 400", async () => {
    const h = await createReceiverHarness();
    const body = new TextEncoder().encode(
      '--bnd\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\nhi\r\n--bnd\r\nContent-Type: application/json\r\n\r\n{"from":null,"to":["bob@b.example"]}\r\n--bnd--\r\n',
    );
    const json = await expectProblem(
      await h.deliver({ body, contentType: "multipart/mixed; boundary=bnd" }),
      400,
      "invalid_request",
    );
    expect(String(json["detail"])).toMatch(/\[POST-8\]|\[POST-9\]/);
  });

  it("POST-9: a message part with a transfer encoding → 400", async () => {
    const h = await createReceiverHarness();
    const body = new TextEncoder().encode(
      '--bnd\r\nContent-Type: application/json\r\n\r\n{"from":null,"to":["bob@b.example"]}\r\n--bnd\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\nU3ViamVjdDogeA==\r\n--bnd--\r\n',
    );
    const json = await expectProblem(
      await h.deliver({ body, contentType: "multipart/mixed; boundary=bnd" }),
      400,
      "invalid_request",
    );
    expect(String(json["detail"])).toContain("[POST-9]");
  });

  it("POST-1, POST-22, ERR-16: recipients in a domain this receiver does not serve → 400", async () => {
    const h = await createReceiverHarness();
    const json = await expectProblem(
      await h.deliver({ to: ["zed@c.example"], url: `${MX}/v1/messages` }),
      400,
      "invalid_request",
    );
    expect(String(json["detail"])).toContain("c.example");
  });

  it("CAP-8, ERR-11: max_recipients of the configuration is what counts (150 allows 150)", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      catchAll: true,
      capabilities: { max_message_size: 26214400, max_recipients: 150 },
    }));
    const to = Array.from({ length: 150 }, (_, i) => `u${i}@b.example`);
    expect((await results(await h.deliver({ to }))).length).toBe(150);
    await expectProblem(await h.deliver({ to: [...to, "u150@b.example"] }), 400, "invalid_request");
  });
});

describe("401 invalid_signature, from domain (G19)", () => {
  it("AUTH-4, ENV-2, G19: from in another domain than the signer → 401 by default", async () => {
    const h = await createReceiverHarness();
    const json = await expectProblem(await h.deliver({ from: "mallory@evil.example" }), 401, "invalid_signature");
    expect(String(json["detail"])).toContain("[AUTH-4]");
    expect(h.store.all()).toHaveLength(0);
  });

  it("AUTH-4, G19: under the 403 reading the same request is 403 policy_rejected", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, readings: { G19: "403" } }));
    await expectProblem(await h.deliver({ from: "mallory@evil.example" }), 403, "policy_rejected");
  });

  it("AUTH-4, G22: the from domain compares without case", async () => {
    const h = await createReceiverHarness();
    expect((await results(await h.deliver({ from: "alice@A.EXAMPLE" })))[0]?.status).toBe("accepted");
  });
});

describe("403 policy_rejected (request level)", () => {
  it("ERR-3, POST-15, SVC-10: a refused sender → 403", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { refusedSenders: ["alice@a.example"] } }));
    const response = await h.deliver();
    expect(response.headers.get("retry-after")).toBeNull();
    await expectProblem(response, 403, "policy_rejected");
    expect(h.store.all()).toHaveLength(0);
  });

  it("ERR-3, POST-15: a refused signing domain → 403 (also for a null from)", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { refusedDomains: ["a.example"] } }));
    await expectProblem(await h.deliver({ from: null }), 403, "policy_rejected");
  });

  it("ERR-27, G26: a 403 with a configured Retry-After carries it", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { refusedDomains: ["a.example"], refusedRetryAfterS: 900 },
    }));
    const response = await h.deliver();
    expect(response.headers.get("retry-after")).toBe("900");
    await expectProblem(response, 403, "policy_rejected");
  });
});

describe("429 rate_limited and 503 temporary_failure", () => {
  it("ERR-8, POST-19, LIM-14, G21: over the signing domain's rate limit → 429 with Retry-After in seconds", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { rateLimits: [{ signingDomain: "a.example", max: 2, windowS: 60 }] },
    }));
    expect((await h.deliver()).status).toBe(200);
    await h.clock.advance(10_000);
    expect((await h.deliver()).status).toBe(200);
    const limited = await h.deliver();
    expect(limited.headers.get("retry-after")).toBe("50");
    await expectProblem(limited, 429, "rate_limited");
    expect(h.store.all()).toHaveLength(2);
    await h.clock.advance(50_000);
    expect((await h.deliver()).status).toBe(200);
  });

  it("ERR-8: `*` limits each signing domain on its own", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { rateLimits: [{ signingDomain: "*", max: 1, windowS: 60 }] },
    }));
    expect((await h.deliver()).status).toBe(200);
    await expectProblem(await h.deliver(), 429, "rate_limited");
  });

  it("ERR-10, POST-20: a receiver configured unavailable → 503 with Retry-After, then serves after `times`", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { unavailable: { times: 1, retryAfterS: 30 } } }));
    const first = await h.deliver();
    expect(first.headers.get("retry-after")).toBe("30");
    await expectProblem(first, 503, "temporary_failure");
    expect((await h.deliver()).status).toBe(200);
  });

  it("ERR-10, POST-20, G4: a key lookup that fails in DNS (SERVFAIL) → 503 with Retry-After, not 401", async () => {
    const h = await createReceiverHarness();
    h.resolver.setOutcome(h.sender.keyid, "servfail");
    const response = await h.deliver();
    expect(response.headers.get("retry-after")).toBe("60");
    await expectProblem(response, 503, "temporary_failure");
  });

  it("ERR-10: an unexpected failure inside the handler is a 503 problem, not a thrown error", async () => {
    const h = await createReceiverHarness((c) => c, {
      idempotencyStore: { get: () => Promise.reject(new Error("disk on fire")), put: () => Promise.resolve() },
    });
    const response = await h.deliver();
    const json = await expectProblem(response, 503, "temporary_failure");
    expect(String(json["detail"])).toContain("disk on fire");
  });
});

describe("the order of checks (G10)", () => {
  it("G10: receiverChecks lists the request-level checks in G10's order with real rule IDs", () => {
    expect(receiverChecks.filter((c) => c.level === "R").map((c) => c.id)).toEqual([
      "version-path",
      "availability",
      "headers",
      "size",
      "target-host",
      "signature",
      "digest",
      "from-domain",
      "idempotency",
      "envelope",
      "recipient-domain",
      "rate-limit",
      "policy",
    ]);
    for (const check of receiverChecks) {
      const row = errorsTable[check.problem];
      if (check.level === "R") expect(check.status).toBe(row.httpStatus);
      else expect(row.level).toMatch(/P/);
      expect(receiverCheck(check.id)).toBe(check);
    }
  });

  it("G10: bad headers win over an oversize Content-Length (400 before 413)", async () => {
    const h = await createReceiverHarness();
    await expectProblem(
      await h.deliver({ idempotencyKey: "a b", headers: { "content-length": "999999999" } }),
      400,
      "invalid_request",
    );
  });

  it("G10: an oversize body wins over a bad signature (413 before 401)", async () => {
    const h = await createReceiverHarness();
    await expectProblem(
      await h.deliver({ headers: { "content-length": "999999999", signature: "sig1=:AAAA:" } }),
      413,
      "message_too_large",
    );
  });

  it("G10: a digest mismatch wins over from ≠ signer (401 digest before the from check)", async () => {
    const h = await createReceiverHarness();
    const json = await expectProblem(
      await h.deliver({
        from: "m@evil.example",
        contentDigest: "sha-256=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:",
      }),
      401,
      "invalid_signature",
    );
    expect(String(json["detail"])).toMatch(/^digest:/);
  });

  it("G10: from ≠ signer wins over an invalid envelope (401 before 400)", async () => {
    const h = await createReceiverHarness();
    await expectProblem(await h.deliver({ envelope: { from: "m@evil.example", to: [] } }), 401, "invalid_signature");
  });

  it("G10: an idempotency conflict wins over an invalid envelope (409 before 400)", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ idempotencyKey: "same" })).status).toBe(200);
    await expectProblem(
      await h.deliver({ idempotencyKey: "same", envelope: { from: "alice@a.example", to: [] } }),
      409,
      "idempotency_conflict",
    );
  });

  it("G10: an unserved recipient domain wins over the rate limit (400 before 429)", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { rateLimits: [{ signingDomain: "*", max: 1, windowS: 60 }] },
    }));
    expect((await h.deliver()).status).toBe(200);
    await expectProblem(await h.deliver({ to: ["zed@c.example"], url: `${MX}/v1/messages` }), 400, "invalid_request");
  });

  it("G10: the rate limit wins over policy (429 before 403), and policy over per-recipient checks", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { rateLimits: [{ signingDomain: "*", max: 1, windowS: 60 }], refusedSenders: ["alice@a.example"] },
    }));
    await expectProblem(await h.deliver({ to: ["nobody@b.example"] }), 403, "policy_rejected");
    await expectProblem(await h.deliver({ to: ["nobody@b.example"] }), 429, "rate_limited");
  });
});

describe("trace", () => {
  it("POST-11, DLR-3: the trace has only listed event names: the request, each delivery, the response with results in order", async () => {
    const h = await createReceiverHarness();
    await h.deliver({ to: ["bob@b.example", "nobody@b.example"] });
    await h.deliver({ idempotencyKey: "bad key" });
    for (const event of h.trace.events) expect(isTraceEventName(event.name)).toBe(true);
    expect(h.trace.events.map((e) => e.name)).toEqual([
      "receiver.request",
      "mailbox.delivered",
      "receiver.response",
      "receiver.request",
      "receiver.response",
    ]);
    expect(h.trace.events[0]?.data).toMatchObject({
      method: "POST",
      path: "/v1/messages",
      idempotencyKey: "key-1",
    });
    expect(h.trace.events[1]?.data).toMatchObject({ mailbox: "bob@b.example", messageId: "<m1@mailscope.test>" });
    expect(h.trace.events[2]?.data).toEqual({
      status: 200,
      signingDomain: "a.example",
      recipients: [
        { recipient: "bob@b.example", status: "accepted" },
        { recipient: "nobody@b.example", status: "rejected", problem: "recipient_not_found" },
      ],
    });
    expect(h.trace.events[4]?.data).toEqual({ status: 400, problem: "invalid_request" });
    expect(h.trace.events.every((e) => e.domain === "b.example")).toBe(true);
  });

  it("puts the host's exchangeId on every event of the request, and traces the request on arrival, before the key lookup", async () => {
    const h = await createReceiverHarness();
    const first = await h.request();
    const arrivalMs = h.clock.now();
    expect((await h.receiver(first, { exchangeId: "x7" })).status).toBe(200);
    // The same key with another body: a conflict (idempotency.conflict), under the second exchange.
    expect((await h.receiver(await h.request({ idempotencyKey: "key-1" }), { exchangeId: "x8" })).status).toBe(409);
    const events = h.trace.events;
    expect(events.map((e) => [e.name, e.data?.["exchangeId"]])).toEqual([
      ["receiver.request", "x7"],
      ["mailbox.delivered", "x7"],
      ["receiver.response", "x7"],
      ["receiver.request", "x8"],
      ["idempotency.conflict", "x8"],
      ["receiver.response", "x8"],
    ]);
    expect(events[0]?.timeMs).toBe(arrivalMs);
    expect(events[0]?.data).not.toHaveProperty("signingDomain");
  });
});
