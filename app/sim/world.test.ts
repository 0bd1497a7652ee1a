import { describe, expect, it } from "vitest";
import { parseKeyRecord } from "../protocol/profile.ts";
import { observeWebCrypto } from "../protocol/webCrypto.ts";
import { traceHash } from "../trace/exportJson.ts";
import { DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS, parseScenarioText, type Scenario } from "./scenario.ts";
import { createWorld, messageBytes, scanDsn, WorldError, type World } from "./world.ts";

function scenario(text: string): Scenario {
  const parsed = parseScenarioText(text);
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  return parsed.scenario;
}

const TWO_DOMAINS = `name: two
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
`;

function named(world: World, name: string): Record<string, unknown>[] {
  return world.recorder.events.filter((e) => e.name === name).map((e) => ({ ...e.data, domain: e.domain }));
}

describe("the world of a scenario", () => {
  it("G4: each domain's Ed25519 key comes from the seed and is published as TXT at <selector>._svckey.<domain>", async () => {
    const s = scenario(
      TWO_DOMAINS.replace("    mailboxes: [bob]", "    mailboxes: [bob]\n    keys: { selector: k2026 }"),
    );
    const world = await createWorld(s);
    const b = world.domains.get("b.example");
    expect(b?.keyid).toBe("k2026._svckey.b.example");
    const answer = world.dns.lookup("k2026._svckey.b.example", "TXT");
    expect(answer).toEqual({ kind: "answer", records: [b?.keyRecord], ttlS: 300 });
    expect(parseKeyRecord(b?.keyRecord ?? "").ok).toBe(true);
    const again = await createWorld(s);
    const other = await createWorld(s, { seed: 2 });
    expect(again.domains.get("b.example")?.keyRecord).toBe(b?.keyRecord);
    expect(other.domains.get("b.example")?.keyRecord).not.toBe(b?.keyRecord);
    // Keys are forked per domain: a's key does not depend on b being there.
    const alone = await createWorld(scenario("name: one\ndomains:\n  a.example: { mailboxes: [alice] }\n"));
    expect(alone.domains.get("a.example")?.keyRecord).toBe(world.domains.get("a.example")?.keyRecord);
  });

  it("G4: a world built again from a seed takes the keys made the first time, without WebCrypto; the run is the same", async () => {
    const s = scenario(`${TWO_DOMAINS}messages:\n  - { from: alice@a.example, to: [bob@b.example] }\n`);
    const first = await createWorld(s, { seed: 4242 });
    await first.run();
    let operations = 0;
    const stop = observeWebCrypto(() => void operations++);
    let again: World;
    try {
      again = await createWorld(s, { seed: 4242 });
    } finally {
      stop();
    }
    expect(operations).toBe(0);
    expect(again.domains.get("a.example")?.keyRecord).toBe(first.domains.get("a.example")?.keyRecord);
    await again.run();
    expect(await traceHash(again.trace())).toBe(await traceHash(first.trace()));
  });

  it("G5: the SVCB record at _svc.<domain> is 1 <host>. port=<port> from the endpoint; the receiver listens there", async () => {
    const world = await createWorld(
      scenario(TWO_DOMAINS.replace("    mailboxes: [bob]", "    mailboxes: [bob]\n    endpoint: mail.b.example:8443")),
    );
    expect(world.dns.lookup("_svc.b.example", "SVCB")).toMatchObject({
      kind: "answer",
      records: [{ priority: 1, target: "mail.b.example", port: 8443 }],
    });
    expect(world.dns.lookup("_svc.a.example", "SVCB")).toMatchObject({
      records: [{ priority: 1, target: "mx.a.example", port: 443 }],
    });
    expect(world.domains.get("b.example")?.origin).toBe("https://mail.b.example:8443");
    expect(world.domains.get("a.example")?.origin).toBe("https://mx.a.example");
  });

  it("G5: a scenario's svcb replaces the record: [] answers NODATA, null NXDOMAIN", async () => {
    const world = await createWorld(
      scenario(
        `${TWO_DOMAINS}  c.example:\n    svcb: []\n  d.example:\n    svcb: null\n  e.example:\n    svcb: ["0 alias.e.example."]\n`,
      ),
    );
    expect(world.dns.lookup("_svc.c.example", "SVCB").kind).toBe("nodata");
    expect(world.dns.lookup("_svc.d.example", "SVCB").kind).toBe("nxdomain");
    expect(world.dns.lookup("_svc.e.example", "SVCB")).toMatchObject({
      records: [{ priority: 0, target: "alias.e.example" }],
    });
  });

  it("G6, SVC-11: a domain with receiver: none has no SVCB record, so mail to it goes to SMTP at once", async () => {
    const world = await createWorld(
      scenario(
        `${TWO_DOMAINS}  legacy.example:\n    receiver: none\nmessages:\n  - { from: alice@a.example, to: carol@legacy.example }\n`,
      ),
    );
    expect(world.domains.get("legacy.example")?.receiver).toBeUndefined();
    expect(world.dns.lookup("_svc.legacy.example", "SVCB").kind).toBe("nxdomain");
    await world.run();
    const handOffs = world.domains.get("a.example")?.smtp.handOffs ?? [];
    expect(handOffs.map((h) => [h.to, h.reason])).toEqual([[["carol@legacy.example"], "no-service"]]);
    expect(named(world, "recipient.outcome")).toMatchObject([
      { recipient: "carol@legacy.example", outcome: "smtp", rule: "SVC-11" },
    ]);
  });

  it("G18: a domain's SMTP relay refuses hand-offs when its G18 is fail; the top-level reading applies elsewhere", async () => {
    const world = await createWorld(
      scenario(
        `name: g18\nreadings: { G18: fail }\ndomains:\n  a.example: { mailboxes: [alice], G18: accept }\n  b.example: {}\n  legacy.example: { receiver: none }\nmessages:\n  - { from: alice@a.example, to: x@legacy.example }\n  - { from: bob@b.example, to: y@legacy.example }\n`,
      ),
    );
    expect(world.domains.get("a.example")?.smtp.accepts).toBe(true);
    expect(world.domains.get("b.example")?.smtp.accepts).toBe(false);
    await world.run();
    expect(named(world, "smtp.handoff").map((h) => [h["domain"], h["accepted"]])).toEqual([
      ["a.example", true],
      ["b.example", false],
    ]);
  });

  it("G4, AUTH-5: with keys.publish false the receiver cannot verify: invalid_signature, rejected for good (G31) with a DSN", async () => {
    const world = await createWorld(
      scenario(
        `${TWO_DOMAINS.replace("    mailboxes: [alice]", "    mailboxes: [alice]\n    keys: { publish: false }")}messages:\n  - { from: alice@a.example, to: bob@b.example }\n`,
      ),
    );
    expect(world.dns.lookup("s1._svckey.a.example", "TXT").kind).toBe("nxdomain");
    await world.run();
    expect(named(world, "attempt.ended")[0]).toMatchObject({ status: 401, class: "permanent" });
    expect(named(world, "recipient.outcome")[0]).toMatchObject({ recipient: "bob@b.example", outcome: "rejected" });
  });

  it("G17, STATE-8: a receiver's DSN after acceptance goes to its own domain's sender and travels as a message", async () => {
    const world = await createWorld(
      scenario(
        TWO_DOMAINS.replace(
          "    mailboxes: [bob]",
          `    mailboxes: [bob]\n    policy:\n      failAfterAcceptance: [{ mailbox: bob@b.example, status: 5.2.2, diagnostic: "mailbox full after all", delayMs: 60000 }]`,
        ) + "messages:\n  - { id: hi, from: alice@a.example, to: bob@b.example }\n",
      ),
      { keepMail: true },
    );
    await world.run();
    const dsn = named(world, "dsn.sent")[0];
    expect(dsn).toMatchObject({
      domain: "b.example",
      messageId: "hi@a.example",
      to: "alice@a.example",
      reason: "failure-after-acceptance",
      recipients: ["bob@b.example"],
      rule: "STATE-8",
    });
    const submitted = named(world, "message.submitted");
    expect(submitted[1]).toMatchObject({
      domain: "b.example",
      from: null,
      messageId: dsn?.["dsnMessageId"],
      to: ["alice@a.example"],
    });
    const inbox = world.domains.get("a.example")?.mailStore.messages("alice@a.example") ?? [];
    expect(inbox).toHaveLength(1);
    expect(inbox[0]?.receivedAtMs).toBe(world.startMs + 60_000);
    expect(new TextDecoder().decode(inbox[0]?.message)).toContain("multipart/report");
  });

  it("MBX quotas: the mailboxes count what they hold, and keep the messages only with keepMail", async () => {
    const text = `${TWO_DOMAINS}messages:\n  - { from: alice@a.example, to: bob@b.example, size: 2000 }\n`;
    const lean = await createWorld(scenario(text));
    const kept = await createWorld(scenario(text), { keepMail: true });
    await lean.run();
    await kept.run();
    const store = (world: World) => world.domains.get("b.example")?.mailStore;
    expect(await store(lean)?.usage("bob@b.example")).toEqual(await store(kept)?.usage("bob@b.example"));
    expect(await store(lean)?.usage("bob@b.example")).toEqual({ messages: 1, bytes: 2000 });
    expect(store(lean)?.messages("bob@b.example")).toEqual([]);
    expect(store(kept)?.messages("bob@b.example")[0]?.message).toHaveLength(2000);
    expect(await traceHash(lean.trace())).toBe(await traceHash(kept.trace()));
  });

  it("messages are submitted at their virtual time, and more can be added at any time", async () => {
    const world = await createWorld(
      scenario(`${TWO_DOMAINS}messages:\n  - { id: later, at: 1h30m, from: alice@a.example, to: bob@b.example }\n`),
    );
    world.submit(
      "b.example",
      {
        from: "bob@b.example",
        to: ["alice@a.example"],
        message: new TextEncoder().encode("Message-ID: <x@b.example>\r\n\r\nHi\r\n"),
        messageId: "x@b.example",
      },
      world.startMs + 45 * 60_000,
    );
    await world.run();
    expect(
      named(world, "message.submitted").map((m) => [
        m["messageId"],
        (world.recorder.events.find((e) => e.name === "message.submitted" && e.data?.["messageId"] === m["messageId"])
          ?.timeMs ?? 0) - world.startMs,
      ]),
    ).toEqual([
      ["x@b.example", 45 * 60_000],
      ["later@a.example", 90 * 60_000],
    ]);
    expect(world.messages).toMatchObject([
      { id: "later", messageId: "later@a.example", atMs: world.startMs + 90 * 60_000 },
    ]);
    expect(() =>
      world.submit("nowhere.example", { from: null, to: ["a@a.example"], message: new Uint8Array() }),
    ).toThrow(WorldError);
  });

  it("a run ends before the horizon when nothing is left; at the horizon otherwise", async () => {
    const s = scenario(
      `${TWO_DOMAINS}horizon: 1h\nmessages:\n  - { from: alice@a.example, to: bob@b.example }\nfaults:\n  network:\n    - { kind: connection-refused, host: mx.b.example }\n`,
    );
    const world = await createWorld(s);
    expect(world.horizonMs).toBe(world.startMs + 3_600_000);
    const result = await world.run();
    expect(result.complete).toBe(false);
    expect(result.nowMs).toBe(world.horizonMs);
    const done = await createWorld(
      scenario(`${TWO_DOMAINS}messages:\n  - { from: alice@a.example, to: bob@b.example }\n`),
    );
    expect(done.horizonMs).toBe(done.startMs + DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS);
    expect((await done.run()).complete).toBe(true);
  });

  it("CAP-13, G7: a message after a one-year pin has run out is taken and run, and finds the pin gone", async () => {
    // b.example advertises a pin longer than the cap: the sender keeps it 31557600 s (365d 6h). Its SVCB record
    // goes at 365d. m2 at 365d 5h is kept on the service by the pin until the pin's end, then goes to SMTP for
    // want of a service (G6); m3 at 365d 7h, after the pin, goes to SMTP at once.
    const s = scenario(`name: year
readings: { G16: jitter=off }
domains:
  a.example: { mailboxes: [alice] }
  b.example:
    mailboxes: [bob]
    capabilities: { max_message_size: 26214400, discovery_pin_max_age: 99999999 }
messages:
  - { id: m1, at: 0, from: alice@a.example, to: bob@b.example }
  - { id: m2, at: 365d5h, from: alice@a.example, to: bob@b.example }
  - { id: m3, at: 365d7h, from: alice@a.example, to: bob@b.example }
faults:
  dnsChanges: [{ at: 365d, name: _svc.b.example, records: null }]
`);
    const world = await createWorld(s);
    await world.run();
    const pinEndMs = world.startMs + 31_557_600_000;
    const outcomes = named(world, "recipient.outcome");
    const at = (id: string) =>
      world.recorder.events.find(
        (e) =>
          e.name === "recipient.outcome" &&
          e.data?.["messageId"] === world.messages.find((m) => m.id === id)?.messageId,
      );
    // SVC-11, G6: no SVCB record and no pin: no service, so SMTP.
    expect(outcomes.map((o) => [o["outcome"], o["rule"]])).toEqual([
      ["accepted", "RCP-2"],
      ["smtp", "SVC-11"],
      ["smtp", "SVC-11"],
    ]);
    const m2 = at("m2");
    expect(m2?.timeMs).toBeGreaterThan(pinEndMs);
    expect(m2?.timeMs).toBeLessThan(pinEndMs + 3_600_000);
    expect(at("m3")?.timeMs).toBe(world.startMs + (365 * 24 + 7) * 3_600_000);
  });

  it("GET-5, G5: when the SVCB record moves to another host while capabilities are cached, the old origin's document is not used", async () => {
    // m1 caches b.example's capabilities from https://mx.b.example (an hour, GET-6). At 10 minutes the record
    // points at mx.c.example instead; m2 at 20 minutes must fetch that origin's document and post there —
    // where b.example is not served (400, G10) — not reuse the cached one and post to the old host.
    const s = scenario(`name: moved
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
  c.example: { mailboxes: [carol] }
messages:
  - { id: m1, at: 0, from: alice@a.example, to: bob@b.example }
  - { id: m2, at: 20m, from: alice@a.example, to: bob@b.example }
faults:
  dnsChanges: [{ at: 10m, name: _svc.b.example, records: { svcb: ["1 mx.c.example."] } }]
`);
    const world = await createWorld(s);
    await world.run();
    const of = (actor: string, name: string) =>
      world.recorder.events
        .filter((e) => e.name === name && e.data?.["deliveryActor"] === actor)
        .map((e) => e.data?.["origin"] ?? e.data?.["url"]);
    expect(of("m1@a.example→b.example", "capabilities.fetched")).toEqual(["https://mx.b.example"]);
    expect(of("m2@a.example→b.example", "capabilities.cached")).toEqual([]);
    expect(of("m2@a.example→b.example", "capabilities.fetched")).toEqual(["https://mx.c.example"]);
    const posts = world.recorder.events.filter(
      (e) => e.name === "attempt.started" && String(e.data?.["deliveryId"]).startsWith("m2@a.example→"),
    );
    expect(posts.map((e) => e.data?.["url"])).toEqual(["https://mx.c.example/v1/messages"]);
    expect(named(world, "recipient.outcome").map((o) => [o["messageId"], o["outcome"]])).toEqual([
      ["m1@a.example", "accepted"],
      ["m2@a.example", "rejected"],
      [expect.stringMatching(/^dsn\./), "accepted"],
    ]);
  });

  it("a bad reading override is a WorldError naming the gap", async () => {
    await expect(createWorld(scenario(TWO_DOMAINS), { readings: [["G7", "sometimes"]] })).rejects.toThrow(
      'G7: G7 reads "enforced" or "ignored", not "sometimes"',
    );
  });
});

describe("message bytes", () => {
  const base = { from: "alice@a.example", to: "bob@b.example", at: 0 } as const;

  it("a generated message has From, To, Subject, Date (virtual time) and Message-ID <id@sender-domain>", () => {
    const text = new TextDecoder().decode(
      messageBytes({ ...base }, "m1", "a.example", Date.UTC(2026, 0, 1), undefined),
    );
    expect(text).toMatch(/^From: <alice@a\.example>\r\nTo: <bob@b\.example>\r\nSubject: Message m1\r\n/);
    expect(text).toContain("Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n");
    expect(text).toContain("Message-ID: <m1@a.example>\r\n");
  });

  it("size pads the message to exactly that many bytes; a size below the headers is an error", () => {
    expect(messageBytes({ ...base, size: "30KiB" }, "m1", "a.example", 0, undefined)).toHaveLength(30 * 1024);
    expect(messageBytes({ ...base, size: 1000 }, "m1", "a.example", 0, undefined)).toHaveLength(1000);
    expect(() => messageBytes({ ...base, size: 10 }, "m1", "a.example", 0, undefined)).toThrow(
      /smaller than the generated headers/,
    );
  });

  it("POST-9: inline text becomes CRLF; an eml is sent exactly as read", () => {
    expect(
      new TextDecoder().decode(messageBytes({ ...base, text: "Subject: x\n\nHi\n" }, "m1", "a.example", 0, undefined)),
    ).toBe("Subject: x\r\n\r\nHi\r\n");
    const raw = new Uint8Array([0x41, 0x0a, 0x0a, 0xff]);
    expect(messageBytes({ ...base, eml: "x.eml" }, "m1", "a.example", 0, new Map([["x.eml", raw]]))).toBe(raw);
  });

  it("scanDsn reads a DSN's own Message-ID, the original's from part 3, and the final recipients", () => {
    const dsn = new TextEncoder().encode(
      "Message-ID: <dsn.1@b.example>\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\n\r\nhuman\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; b.example\r\n\r\nFinal-Recipient: rfc822; bob@b.example\r\nAction: failed\r\n--x\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <orig@a.example>\r\n--x--\r\n",
    );
    expect(scanDsn(dsn)).toEqual({
      messageId: "dsn.1@b.example",
      originalMessageId: "orig@a.example",
      recipients: ["bob@b.example"],
    });
  });
});
