import { describe, expect, it } from "vitest";
import { createContentDigest } from "../protocol/digest.ts";
import { buildMultipartBody } from "../protocol/multipart.ts";
import { createReceiverHarness, createTestSender, readProblem, signedDelivery, textMessage } from "./testing.ts";
import type { ReceiverHarness } from "./testing.ts";

/** The answer must be 401 invalid_signature from the named check, and nothing may be stored. */
async function expect401(
  h: ReceiverHarness,
  response: Response,
  check: string,
  rule?: string,
  storedBefore = 0,
): Promise<string> {
  const answer = await readProblem(response);
  expect(answer.status).toBe(401);
  expect(answer.identifier).toBe("invalid_signature");
  const detail = String(answer.json["detail"]);
  expect(detail.startsWith(`${check}:`)).toBe(true);
  if (rule !== undefined) expect(detail).toContain(`[${rule}]`);
  expect(h.store.all()).toHaveLength(storedBefore);
  return detail;
}

describe("signature attacks", () => {
  it("AUTH-5, G3, POST-24: a replay of a captured request with a stale created (301 s later) → 401", async () => {
    const h = await createReceiverHarness();
    const captured = await h.request();
    const copy = captured.clone();
    expect((await h.receiver(captured)).status).toBe(200);
    await h.clock.advance(301_000);
    await expect401(h, await h.receiver(copy), "created", "G3", 1);
  });

  it("G3: created within the tolerance either side is fine (299 s old, 300 s ahead)", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ createdS: h.clock.nowS() - 299 })).status).toBe(200);
    expect((await h.deliver({ createdS: h.clock.nowS() + 300 })).status).toBe(200);
  });

  it("G3: created more than 300 s in the future → 401", async () => {
    const h = await createReceiverHarness();
    await expect401(h, await h.deliver({ createdS: h.clock.nowS() + 301 }), "created", "G3");
  });

  it("G3 switchable: with tolerance-seconds=60, a request 61 s old → 401, 60 s old passes", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, readings: { G3: { toleranceS: 60 } } }));
    expect((await h.deliver({ createdS: h.clock.nowS() - 60 })).status).toBe(200);
    await expect401(h, await h.deliver({ createdS: h.clock.nowS() - 61 }), "created", "G3", 1);
  });

  it("POST-5, AUTH-2: a Content-Digest that is not the body's (and signed as such) → 401 at the digest check", async () => {
    const h = await createReceiverHarness();
    const wrong = await createContentDigest(new TextEncoder().encode("something else"));
    await expect401(h, await h.deliver({ contentDigest: wrong }), "digest", "POST-5");
  });

  it("AUTH-2: a swapped body under the old digest and signature → 401 at the digest check", async () => {
    const h = await createReceiverHarness();
    const other = buildMultipartBody(
      { from: "alice@a.example", to: ["carol@b.example"] },
      textMessage({ from: "alice@a.example", to: ["carol@b.example"], body: "swapped" }),
      "mailscope-test-boundary-0f3c9a",
    ).body;
    await expect401(h, await h.deliver({ bodyAfterSigning: other }), "digest");
  });

  it("AUTH-2, AUTH-5: a swapped body with a recomputed digest but the old signature → 401 at the signature check", async () => {
    const h = await createReceiverHarness();
    const other = buildMultipartBody(
      { from: "alice@a.example", to: ["carol@b.example"] },
      textMessage({ from: "alice@a.example", to: ["carol@b.example"], body: "swapped" }),
      "mailscope-test-boundary-0f3c9a",
    ).body;
    const detail = await expect401(
      h,
      await h.deliver({ bodyAfterSigning: other, headers: { "content-digest": await createContentDigest(other) } }),
      "signature",
      "AUTH-5",
    );
    expect(detail).toContain("bad-signature");
  });

  it("POST-2, G10: a covered header stripped after signing (Idempotency-Key) → 400, the header shape comes first", async () => {
    const h = await createReceiverHarness();
    const answer = await readProblem(await h.deliver({ headers: { "idempotency-key": null } }));
    expect([answer.status, answer.identifier]).toEqual([400, "invalid_request"]);
  });

  it("AUTH-5: a covered header changed after signing (Idempotency-Key) → 401 bad signature", async () => {
    const h = await createReceiverHarness();
    const detail = await expect401(h, await h.deliver({ headers: { "idempotency-key": "another-key" } }), "signature");
    expect(detail).toContain("bad-signature");
  });

  it("G2, AUTH-3: idempotency-key left out of the covered components → 401", async () => {
    const h = await createReceiverHarness();
    const detail = await expect401(
      h,
      await h.deliver({ components: ["@method", "@target-uri", "content-type", "content-digest"] }),
      "components",
      "G2",
    );
    expect(detail).toContain('"idempotency-key"');
  });

  it("AUTH-2, G2: content-digest left out of the covered components → 401 naming AUTH-2", async () => {
    const h = await createReceiverHarness();
    await expect401(
      h,
      await h.deliver({ components: ["@method", "@target-uri", "content-type", "idempotency-key"] }),
      "components",
      "AUTH-2",
    );
  });

  it("G2: a signature over too few components (only @method) → 401", async () => {
    const h = await createReceiverHarness();
    await expect401(h, await h.deliver({ components: ["@method"] }), "components");
  });

  it("AUTH-3: a Signature-Input without created → 401", async () => {
    const h = await createReceiverHarness();
    const request = await h.request();
    const input = (request.headers.get("signature-input") ?? "").replace(/;created=\d+/, "");
    await expect401(h, await h.deliver({ headers: { "signature-input": input } }), "components", "AUTH-3");
  });

  it("AUTH-5: the request sent to another target URI than the one signed → 401", async () => {
    const h = await createReceiverHarness();
    const signed = await h.request({ url: "https://mx.b.example/v1/messages?x=1" });
    const moved = new Request("https://mx.b.example/v1/messages", {
      method: "POST",
      headers: signed.headers,
      body: await signed.arrayBuffer(),
    });
    await expect401(h, await h.receiver(moved), "signature");
  });

  it("AUTH-4, G4, G19: a keyid of another domain, validly signed by that domain, with from in a.example → 401", async () => {
    const h = await createReceiverHarness();
    const mallory = await createTestSender("c.example");
    h.resolver.setTxt(mallory.keyid, [mallory.keyRecord]);
    const response = await h.deliver({ key: mallory.privateKey, keyid: mallory.keyid });
    const answer = await readProblem(response);
    expect([answer.status, answer.identifier]).toEqual([401, "invalid_signature"]);
    expect(String(answer.json["detail"])).toContain("[AUTH-4]");
    expect(h.store.all()).toHaveLength(0);
  });

  it("G4: a keyid naming a.example but signed with c.example's key → 401 bad signature", async () => {
    const h = await createReceiverHarness();
    const mallory = await createTestSender("c.example");
    await expect401(h, await h.deliver({ key: mallory.privateKey }), "signature");
  });

  it("AUTH-4: from ≠ signer with a perfectly valid signature → 401", async () => {
    const h = await createReceiverHarness();
    const answer = await readProblem(await h.deliver({ from: "ceo@b.example" }));
    expect([answer.status, answer.identifier]).toEqual([401, "invalid_signature"]);
  });

  it("G4: an unknown key (nothing published at the keyid) → 401", async () => {
    const h = await createReceiverHarness();
    await expect401(h, await h.deliver({ keyid: "s9._svckey.a.example" }), "key", "G4");
  });

  it("G4: a revoked key (empty p=) → 401", async () => {
    const h = await createReceiverHarness();
    h.resolver.setTxt(h.sender.keyid, ["v=svc1; k=ed25519; p="]);
    const detail = await expect401(h, await h.deliver(), "key");
    expect(detail).toContain("revoked");
  });

  it("G4: a keyid not of the form <selector>._svckey.<domain> → 401 without a DNS lookup", async () => {
    const h = await createReceiverHarness();
    // signDelivery refuses such a keyid, so the generic RFC 9421 signer makes the request.
    const components = ["@method", "@target-uri", "content-type", "content-digest", "idempotency-key"];
    await expect401(h, await h.deliver({ keyid: "a.example", components }), "keyid", "G4");
    expect(h.resolver.txtQueries).toEqual([]);
  });

  it("G1: a wrong algorithm (ECDSA P-256, alg ecdsa-p256-sha256) → 401", async () => {
    const h = await createReceiverHarness();
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    await expect401(h, await h.deliver({ key: pair.privateKey, alg: "ecdsa-p256-sha256" }), "algorithm", "G1");
  });

  it("G1: an ECDSA signature without alg against the published Ed25519 key → 401", async () => {
    const h = await createReceiverHarness();
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    await expect401(
      h,
      await h.deliver({
        key: pair.privateKey,
        components: ["@method", "@target-uri", "content-type", "content-digest", "idempotency-key"],
      }),
      "signature",
    );
  });

  it("POST-5: a Content-Digest with only an algorithm the receiver does not support (md5) → 401", async () => {
    const h = await createReceiverHarness();
    await expect401(h, await h.deliver({ contentDigest: "md5=:HUXZLQLMuI/KZ5KDcJPcOA==:" }), "digest");
  });

  it("AUTH-5: a flipped signature byte → 401", async () => {
    const h = await createReceiverHarness();
    const request = await h.request();
    const signature = request.headers.get("signature") ?? "";
    const flipped = signature.replace(/:(.)/, (_, c: string) => `:${c === "A" ? "B" : "A"}`);
    await expect401(h, await h.deliver({ headers: { signature: flipped } }), "signature");
  });

  it("AUTH-1, G4: the key published through configured keyRecords verifies without DNS", async () => {
    const sender = await createTestSender("a.example");
    const h = await createReceiverHarness((c) => ({ ...c, keyRecords: { [sender.keyid]: sender.keyRecord } }));
    h.resolver.setOutcome(sender.keyid, "servfail");
    expect((await h.deliver()).status).toBe(200);
  });

  it("G4: a keyid matches keyRecords without regard to case (s1._svckey.A.EXAMPLE, both ways)", async () => {
    const sender = await createTestSender("a.example");
    const upper = sender.keyid.replace("a.example", "A.EXAMPLE");
    const h = await createReceiverHarness((c) => ({ ...c, keyRecords: { [sender.keyid]: sender.keyRecord } }));
    h.resolver.setOutcome(sender.keyid, "nxdomain");
    h.resolver.setOutcome(upper, "nxdomain");
    expect((await h.deliver({ keyid: upper })).status).toBe(200);
    const h2 = await createReceiverHarness((c) => ({ ...c, keyRecords: { [upper]: sender.keyRecord } }));
    h2.resolver.setOutcome(sender.keyid, "nxdomain");
    expect((await h2.deliver()).status).toBe(200);
  });

  it("G48, AUTH-5: a delivery signed for another receiver's URI (mx.other.example) is 401; the receiver's own names pass", async () => {
    const h = await createReceiverHarness((c) => c, { hostnames: ["localhost", "127.0.0.1", "::1"] });
    const other = await readProblem(await h.deliver({ url: "https://mx.other.example/v1/messages" }));
    expect(other).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(other.json["detail"]).toMatch(/mx\.other\.example, which is not a name of this receiver.*\(G48\)/);
    expect(h.store.all()).toHaveLength(0);
    for (const url of [
      "https://mx.b.example/v1/messages",
      "https://MX.B.Example./v1/messages",
      "https://b.example/v1/messages",
      "https://localhost:8443/v1/messages",
      "https://[::1]:8443/v1/messages",
    ]) {
      expect((await h.deliver({ url })).status, url).toBe(200);
    }
    // A look-alike is not a subdomain.
    expect((await h.deliver({ url: "https://mx.notb.example/v1/messages" })).status).toBe(401);
  });

  it("G48: without the receiver's names (the simulator), the target host is not checked", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ url: "https://mx.other.example/v1/messages" })).status).toBe(200);
  });

  it("AUTH-1: an injected keyLookup replaces DNS entirely", async () => {
    const sender = await createTestSender("a.example");
    const asked: string[] = [];
    const h = await createReceiverHarness((c) => c, {
      keyLookup: (keyid) => {
        asked.push(keyid);
        return Promise.resolve({ kind: "records", txt: [sender.keyRecord] });
      },
    });
    h.resolver.setOutcome(sender.keyid, "nxdomain");
    expect((await h.deliver()).status).toBe(200);
    expect(asked).toEqual([sender.keyid]);
  });

  it("AUTH-1: a request signed by hand with signedDelivery from another sender verifies", async () => {
    const h = await createReceiverHarness();
    const other = await createTestSender("x.example", "sel2");
    h.resolver.setTxt(other.keyid, [other.keyRecord]);
    const request = await signedDelivery({
      from: "zoe@x.example",
      to: ["bob@b.example"],
      message: textMessage({ from: "zoe@x.example", to: ["bob@b.example"] }),
      key: other.privateKey,
      keyid: other.keyid,
      createdS: h.clock.nowS(),
      idempotencyKey: "zoe-1",
    });
    expect((await h.receiver(request)).status).toBe(200);
  });
});
