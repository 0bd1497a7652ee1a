import { describe, expect, it } from "vitest";
import { bytesToHex } from "../protocol/base64.ts";
import { createContentDigest, digestBytes } from "../protocol/digest.ts";
import { buildMultipartBody } from "../protocol/multipart.ts";
import type { KeyRecordLookup } from "../protocol/profile.ts";
import type { DnsAnswer, Resolver, SvcbRecord } from "../ports.ts";
import { createMemoryIdempotencyStore } from "./idempotencyStore.ts";
import type { IdempotencyRecord } from "./idempotencyStore.ts";
import { createReceiverHarness, createTestSender, readProblem, textMessage } from "./testing.ts";
import type { ReceiverHarness } from "./testing.ts";

// The receiver's key cache after the performance pass (G44): a key TXT answer is kept per keyid for
// its TTL, at most 1 hour, on the receiver's Clock; SERVFAIL, timeout and missing records are never
// kept. With the key at hand the signature check starts before the body is read, and the verdict
// must still come in G10's order. And one SHA-256 of the body serves both the digest check and the
// idempotency record (G11, G35).

const SECOND = 1000;
const BOUNDARY = "mailscope-test-boundary-0f3c9a";

/** A resolver whose TXT answers (with their TTL) are set per name, counting the questions per name. */
interface CountingResolver extends Resolver {
  set(name: string, answer: DnsAnswer<string>): void;
  publish(name: string, records: readonly string[], ttlS: number): void;
  asked(name: string): number;
  total(): number;
}

function createCountingResolver(): CountingResolver {
  const answers = new Map<string, DnsAnswer<string>>();
  const counts = new Map<string, number>();
  let total = 0;
  return {
    set: (name, answer) => answers.set(name.toLowerCase(), answer),
    publish: (name, records, ttlS) => answers.set(name.toLowerCase(), { kind: "answer", records, ttlS }),
    asked: (name) => counts.get(name.toLowerCase()) ?? 0,
    total: () => total,
    svcb(): Promise<DnsAnswer<SvcbRecord>> {
      return Promise.resolve({ kind: "nxdomain" });
    },
    txt(name): Promise<DnsAnswer<string>> {
      total += 1;
      counts.set(name.toLowerCase(), (counts.get(name.toLowerCase()) ?? 0) + 1);
      return Promise.resolve(answers.get(name.toLowerCase()) ?? { kind: "nxdomain" });
    },
  };
}

/** A harness whose resolver is a counting one, with a.example's key published at `ttlS`. */
async function harness(ttlS = 300): Promise<{ h: ReceiverHarness; dns: CountingResolver }> {
  const dns = createCountingResolver();
  const h = await createReceiverHarness(undefined, { resolver: dns });
  dns.publish(h.sender.keyid, [h.sender.keyRecord], ttlS);
  return { h, dns };
}

async function problemOf(response: Response): Promise<{ status: number; identifier?: string; detail: string }> {
  const answer = await readProblem(response);
  return {
    status: answer.status,
    ...(answer.identifier !== undefined && { identifier: answer.identifier }),
    detail: String(answer.json["detail"]),
  };
}

/** The same request with some headers changed (a string) or removed (null), the body unchanged. */
async function withHeaders(request: Request, changes: Record<string, string | null>): Promise<Request> {
  const headers = new Headers(request.headers);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return new Request(request.url, { method: request.method, headers, body: await request.arrayBuffer() });
}

/** The Signature header with its first signature byte changed: still well-formed, no longer valid. */
function tampered(signature: string | null): string {
  if (signature === null) throw new Error("no Signature header");
  const at = signature.indexOf(":") + 1;
  const flipped = signature[at] === "A" ? "B" : "A";
  return `${signature.slice(0, at)}${flipped}${signature.slice(at + 1)}`;
}

/** Everything a response carries, for byte-for-byte comparison. */
async function snapshot(response: Response): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

describe("the key TXT answer is kept for its TTL (G44, AUTH-9, G4)", () => {
  it("G44, G4: a second delivery within the TTL does not ask DNS again", async () => {
    const { h, dns } = await harness(300);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    await h.clock.advance(299 * SECOND);
    expect((await h.deliver()).status).toBe(200);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    expect(h.store.all()).toHaveLength(3);
  });

  it("G44: once the TTL has passed on the receiver's clock, DNS is asked again (kept for less than the TTL, not a moment more)", async () => {
    const { h, dns } = await harness(300);
    expect((await h.deliver()).status).toBe(200);
    await h.clock.advance(300 * SECOND - 1);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    await h.clock.advance(1);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(2);
    // The fresh answer is kept again, from the time it came.
    await h.clock.advance(299 * SECOND);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(2);
  });

  it("G44: a TTL over one hour is kept one hour only", async () => {
    const { h, dns } = await harness(86_400);
    expect((await h.deliver()).status).toBe(200);
    await h.clock.advance(3599 * SECOND);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    await h.clock.advance(1 * SECOND);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(2);
  });

  it("G44: a TTL of 0 is not kept at all: every delivery asks", async () => {
    const { h, dns } = await harness(0);
    for (let i = 0; i < 3; i++) expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(3);
  });

  it("G44, G4: answers are kept per keyid: two selectors of one domain are each asked once", async () => {
    const { h, dns } = await harness(300);
    const other = await createTestSender("a.example", "s2");
    dns.publish(other.keyid, [other.keyRecord], 300);
    for (let i = 0; i < 2; i++) {
      expect((await h.deliver()).status).toBe(200);
      expect((await h.deliver({ key: other.privateKey, keyid: other.keyid })).status).toBe(200);
    }
    expect(dns.asked(h.sender.keyid)).toBe(1);
    expect(dns.asked(other.keyid)).toBe(1);
    expect(dns.total()).toBe(2);
  });

  it("G44, G36, ERR-10, POST-20: SERVFAIL is never kept: 503 each time, the next request asks again, and succeeds once DNS does", async () => {
    const { h, dns } = await harness(300);
    dns.set(h.sender.keyid, { kind: "servfail" });
    for (let i = 1; i <= 2; i++) {
      const response = await h.deliver();
      expect(response.headers.get("retry-after")).not.toBeNull();
      expect(await problemOf(response)).toMatchObject({ status: 503, identifier: "temporary_failure" });
      expect(dns.asked(h.sender.keyid)).toBe(i);
    }
    dns.publish(h.sender.keyid, [h.sender.keyRecord], 300);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(3);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(3);
  });

  it("G44, G36: a timeout is never kept either", async () => {
    const { h, dns } = await harness(300);
    dns.set(h.sender.keyid, { kind: "timeout" });
    expect((await problemOf(await h.deliver())).status).toBe(503);
    dns.publish(h.sender.keyid, [h.sender.keyRecord], 300);
    expect((await h.deliver()).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(2);
  });

  for (const kind of ["nxdomain", "nodata"] as const) {
    it(`G44, G4, AUTH-5: no record (${kind}) is never kept: 401, then the next request asks again and finds the published key`, async () => {
      const { h, dns } = await harness(300);
      dns.set(h.sender.keyid, { kind });
      for (let i = 1; i <= 2; i++) {
        expect(await problemOf(await h.deliver())).toMatchObject({ status: 401, identifier: "invalid_signature" });
        expect(dns.asked(h.sender.keyid)).toBe(i);
      }
      dns.publish(h.sender.keyid, [h.sender.keyRecord], 300);
      expect((await h.deliver()).status).toBe(200);
      expect(dns.asked(h.sender.keyid)).toBe(3);
    });
  }

  it("G44, G36: a kept answer that has expired is not served stale when DNS then fails: 503", async () => {
    const { h, dns } = await harness(300);
    expect((await h.deliver()).status).toBe(200);
    dns.set(h.sender.keyid, { kind: "servfail" });
    await h.clock.advance(300 * SECOND);
    expect(await problemOf(await h.deliver())).toMatchObject({ status: 503, identifier: "temporary_failure" });
    expect(dns.asked(h.sender.keyid)).toBe(2);
  });

  it("G44, G4, AUTH-5: a rotated key record is seen once the kept answer expires (not before)", async () => {
    const { h, dns } = await harness(300);
    const rotated = await createTestSender("a.example", "rotated-key");
    expect((await h.deliver()).status).toBe(200);
    // The sender rotates: a new key at the same keyid, and signs with it.
    dns.publish(h.sender.keyid, [rotated.keyRecord], 300);
    const early = await problemOf(await h.deliver({ key: rotated.privateKey }));
    expect(early).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(early.detail).toMatch(/^signature:/);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    await h.clock.advance(300 * SECOND);
    expect((await h.deliver({ key: rotated.privateKey })).status).toBe(200);
    expect(dns.asked(h.sender.keyid)).toBe(2);
    // The old key is gone with the old answer.
    expect(await problemOf(await h.deliver())).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(dns.asked(h.sender.keyid)).toBe(2);
  });

  it("G44, G4: a revoked key (empty p=) is seen once the kept answer expires", async () => {
    const { h, dns } = await harness(300);
    expect((await h.deliver()).status).toBe(200);
    dns.publish(h.sender.keyid, ["v=svc1; k=ed25519; p="], 300);
    await h.clock.advance(300 * SECOND);
    const revoked = await problemOf(await h.deliver());
    expect(revoked).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(revoked.detail).toMatch(/^key:/);
  });

  it("G44: a keyLookup port replaces the lookup and its cache: it is asked on every delivery", async () => {
    const sender = await createTestSender("a.example");
    let calls = 0;
    const keyLookup = (keyid: string): Promise<KeyRecordLookup> => {
      calls += 1;
      return Promise.resolve(keyid === sender.keyid ? { kind: "records", txt: [sender.keyRecord] } : { kind: "none" });
    };
    const dns = createCountingResolver();
    const h = await createReceiverHarness(undefined, { resolver: dns, keyLookup });
    for (let i = 0; i < 3; i++) expect((await h.deliver()).status).toBe(200);
    expect(calls).toBe(3);
    expect(dns.total()).toBe(0);
  });

  it("G44, G4: a configured key record is used without asking DNS at all", async () => {
    const sender = await createTestSender("a.example");
    const dns = createCountingResolver();
    const h = await createReceiverHarness((c) => ({ ...c, keyRecords: { [sender.keyid]: sender.keyRecord } }), {
      resolver: dns,
    });
    for (let i = 0; i < 2; i++) expect((await h.deliver()).status).toBe(200);
    expect(dns.total()).toBe(0);
  });

  it("G44: at most 1024 keyids are kept; the least recently used is asked again first", async () => {
    const { h, dns } = await harness(3600);
    const keyid = (i: number): string => `k${i}._svckey.a.example`;
    for (let i = 0; i <= 1024; i++) dns.publish(keyid(i), [h.sender.keyRecord], 3600);
    for (let i = 0; i <= 1024; i++) {
      const response = await h.deliver({ keyid: keyid(i) });
      expect(response.status).toBe(200);
    }
    expect(dns.total()).toBe(1025);
    // The most recent one is still kept; the first, pushed out by the 1025th, is asked again.
    expect((await h.deliver({ keyid: keyid(1024) })).status).toBe(200);
    expect(dns.asked(keyid(1024))).toBe(1);
    expect((await h.deliver({ keyid: keyid(0) })).status).toBe(200);
    expect(dns.asked(keyid(0))).toBe(2);
  }, 60_000);
});

describe("G10's order with the key at hand (the signature check started before the body)", () => {
  /** A harness whose key answer is already kept (one good delivery made), so later checks overlap the body read. */
  async function warm(): Promise<{ h: ReceiverHarness; dns: CountingResolver }> {
    const warmed = await harness(3600);
    expect((await warmed.h.deliver()).status).toBe(200);
    expect(warmed.dns.asked(warmed.h.sender.keyid)).toBe(1);
    return warmed;
  }

  it("G10, POST-5, AUTH-5: a bad signature and a body that does not match its digest → 401 for the signature, checked before the body is read", async () => {
    const { h, dns } = await warm();
    const signed = await h.request({
      bodyAfterSigning: buildMultipartBody(
        { from: "alice@a.example", to: ["bob@b.example"] },
        textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "swapped" }),
        BOUNDARY,
      ).body,
    });
    const request = await withHeaders(signed, { signature: tampered(signed.headers.get("signature")) });
    const answer = await problemOf(await h.receiver(request));
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^signature:/);
    expect(dns.asked(h.sender.keyid)).toBe(1);
    expect(h.store.all()).toHaveLength(1);
  });

  it("G10, AUTH-5: a bad signature alone, key at hand → 401 for the signature (the overlapped check's verdict stands)", async () => {
    const { h, dns } = await warm();
    const signed = await h.request();
    const answer = await problemOf(
      await h.receiver(await withHeaders(signed, { signature: tampered(signed.headers.get("signature")) })),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^signature:/);
    expect(dns.asked(h.sender.keyid)).toBe(1);
  });

  it("G10, AUTH-5, POST-13: a bad signature with a bad envelope too → 401 before 400", async () => {
    const { h } = await warm();
    for (const envelope of ['{"from": "alice@a.example", "to": ', { from: "alice@a.example", to: [] }]) {
      const signed = await h.request({ envelope });
      const bad = await withHeaders(signed, { signature: tampered(signed.headers.get("signature")) });
      expect(await problemOf(await h.receiver(bad))).toMatchObject({ status: 401, identifier: "invalid_signature" });
      // The same envelope with a good signature is the 400 it would otherwise be.
      expect(await problemOf(await h.deliver({ envelope }))).toMatchObject({
        status: 400,
        identifier: "invalid_request",
      });
    }
  });

  it("G10, G3: a created out of tolerance, key at hand and signature bad → 401 for created, the overlapped verification unused", async () => {
    const { h } = await warm();
    const signed = await h.request({ createdS: h.clock.nowS() - 301 });
    const answer = await problemOf(
      await h.receiver(await withHeaders(signed, { signature: tampered(signed.headers.get("signature")) })),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^created:/);
  });

  it("G10, G4, POST-5: an unknown key with a body that does not match its digest → 401 for the key, looked up before the body is read", async () => {
    const { h, dns } = await warm();
    const unknown = await createTestSender("a.example", "unpublished");
    const answer = await problemOf(
      await h.deliver({
        key: unknown.privateKey,
        keyid: unknown.keyid,
        contentDigest: await createContentDigest(new Uint8Array([1, 2, 3])),
      }),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^key:/);
    expect(dns.asked(unknown.keyid)).toBe(1);
  });

  it("G10, G4, AUTH-5: an unknown key with a bad envelope → 401 for the key (asked in DNS), before the envelope's 400", async () => {
    const { h, dns } = await warm();
    const unknown = await createTestSender("a.example", "unpublished");
    const answer = await problemOf(
      await h.deliver({ key: unknown.privateKey, keyid: unknown.keyid, envelope: { from: "alice@a.example" } }),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^key:/);
    expect(dns.asked(unknown.keyid)).toBe(1);
  });

  it("G10, AUTH-4, G19: a good signature by the kept key but an envelope from another domain → 401 from-domain", async () => {
    const { h } = await warm();
    const answer = await problemOf(
      await h.deliver({
        from: "mallory@c.example",
        message: textMessage({ from: "m@c.example", to: ["bob@b.example"] }),
      }),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/AUTH-4/);
  });
});

describe("one SHA-256 for the digest check and the idempotency record (G11, G35, G37, POST-12)", () => {
  const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"], messageId: "same" });
  const body = buildMultipartBody({ from: "alice@a.example", to: ["bob@b.example"] }, message, BOUNDARY).body;

  /** A harness whose idempotency store records what it is given. */
  async function recording(): Promise<{ h: ReceiverHarness; puts: IdempotencyRecord[] }> {
    const store = createMemoryIdempotencyStore();
    const puts: IdempotencyRecord[] = [];
    const h = await createReceiverHarness(undefined, {
      idempotencyStore: {
        get: (domain, key, nowMs) => store.get(domain, key, nowMs),
        put: (domain, key, record) => {
          puts.push(record);
          return store.put(domain, key, record);
        },
      },
    });
    return { h, puts };
  }

  it("G11: the idempotency record holds the SHA-256 of the whole body, whatever Content-Digest names", async () => {
    for (const algorithms of [["sha-256"], ["sha-512"], ["sha-512", "sha-256"]] as const) {
      const { h, puts } = await recording();
      const response = await h.deliver({
        idempotencyKey: "k1",
        message,
        contentDigest: await createContentDigest(body, algorithms),
      });
      expect(response.status).toBe(200);
      expect(puts.map((p) => p.contentDigest)).toEqual([`sha-256:${bytesToHex(await digestBytes("sha-256", body))}`]);
    }
  });

  it("G11, G35, POST-12, POST-24: a retry that adds a sha-512 member to Content-Digest is a replay, byte for byte, not a conflict", async () => {
    const { h } = await recording();
    const first = await snapshot(await h.deliver({ idempotencyKey: "k1", message }));
    expect(first.status).toBe(200);
    await h.clock.advance(60 * SECOND);
    const retry = await snapshot(
      await h.deliver({
        idempotencyKey: "k1",
        message,
        contentDigest: await createContentDigest(body, ["sha-512", "sha-256"]),
      }),
    );
    expect(retry).toEqual(first);
    await h.clock.advance(60 * SECOND);
    const onlySha512 = await snapshot(
      await h.deliver({ idempotencyKey: "k1", message, contentDigest: await createContentDigest(body, ["sha-512"]) }),
    );
    expect(onlySha512).toEqual(first);
    expect(h.store.all()).toHaveLength(1);
    expect(h.trace.named("idempotency.replay")).toHaveLength(2);
    expect(h.trace.named("idempotency.conflict")).toHaveLength(0);
  });

  it("G11, POST-12: the same key with another body is still 409 idempotency_conflict", async () => {
    const { h } = await recording();
    expect((await h.deliver({ idempotencyKey: "k1", message })).status).toBe(200);
    const other = textMessage({ from: "alice@a.example", to: ["bob@b.example"], messageId: "other" });
    expect(await problemOf(await h.deliver({ idempotencyKey: "k1", message: other }))).toMatchObject({
      status: 409,
      identifier: "idempotency_conflict",
    });
  });

  it("G37, POST-5: a right sha-256 next to a wrong sha-512 is still 401: the shared SHA-256 does not excuse the other member", async () => {
    const { h } = await recording();
    const right = await createContentDigest(body, ["sha-256"]);
    const wrong512 = await createContentDigest(new Uint8Array([0]), ["sha-512"]);
    const answer = await problemOf(
      await h.deliver({ idempotencyKey: "k1", message, contentDigest: `${wrong512}, ${right}` }),
    );
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.detail).toMatch(/^digest: sha-512/);
    // Nothing before the idempotency step is stored (G35): the honest retry is delivered.
    expect((await h.deliver({ idempotencyKey: "k1", message })).status).toBe(200);
  });
});
