import { describe, expect, it } from "vitest";
import { createContentDigest } from "./digest.ts";
import {
  buildKeyRecord,
  exportPublicKeyRaw,
  importPublicKeyRaw,
  importSigningKeyFromSeed,
  keyidFor,
  profileChecks,
  signDelivery,
  startSignatureCheck,
  verifyDelivery,
} from "./profile.ts";
import type { KeyImporter, KeyRecordLookup, ProfileOptions, ProfileVerdict } from "./profile.ts";
import { fromRequest, parseSignatureFields, signRequest } from "./signature.ts";
import type { HttpMessageView } from "./signature.ts";

// startSignatureCheck begins the key import and the Ed25519 verification from the headers alone,
// before the body has arrived, when the key is at hand (knownKey) without asking anyone.
// verifyDelivery, given what it started, must still give G10's verdict: the digest (POST-5) before
// the signature's claims (G2, G1, G3, G4) before the key (G4, G36) before the signature (AUTH-5).
// The overlap may change only when the work is done, never the answer.

const NOW_S = 1_768_467_600;
const KEYID = keyidFor("s1", "a.example");
const URL_ = "https://mx.b.example/v1/messages";
const encoder = new TextEncoder();
const BODY = encoder.encode(
  '--b\r\nContent-Type: application/json\r\n\r\n{"from":"alice@a.example","to":["bob@b.example"]}\r\n--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: hi\r\n\r\nhello\r\n--b--\r\n',
);
const OTHER_BODY = encoder.encode(
  '--b\r\nContent-Type: application/json\r\n\r\n{"from":"alice@a.example","to":["bob@b.example"]}\r\n--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: hi\r\n\r\nswapped\r\n--b--\r\n',
);

async function keyPair(label: string): Promise<{ pair: CryptoKeyPair; record: string }> {
  const seed = new Uint8Array(32);
  for (let i = 0; i < 32; i++) seed[i] = (label.charCodeAt(i % label.length) * (i + 7)) & 0xff;
  const pair = await importSigningKeyFromSeed(seed);
  return { pair, record: buildKeyRecord(await exportPublicKeyRaw(pair.publicKey)) };
}

const published = keyPair("published key");
const rotated = keyPair("rotated key");

interface Build {
  readonly createdS?: number;
  /** Signs without idempotency-key among the components (a G2 failure). */
  readonly missingComponent?: boolean;
  readonly badSignature?: boolean;
  /** Replaces Content-Digest after signing with a value that is no Structured Fields Dictionary of byte sequences. */
  readonly malformedDigest?: boolean;
}

/** A delivery of BODY signed by the published key, as a view, with the defects asked for. */
async function delivery(build: Build = {}): Promise<HttpMessageView> {
  const unsigned = new Request(URL_, {
    method: "POST",
    headers: {
      "Content-Type": "multipart/mixed; boundary=b",
      "Idempotency-Key": "key-1",
      "Content-Digest": await createContentDigest(BODY),
    },
  });
  const privateKey = (await published).pair.privateKey;
  const createdS = build.createdS ?? NOW_S;
  const signedHeaders =
    build.missingComponent === true
      ? (
          await signRequest(unsigned, {
            key: privateKey,
            keyid: KEYID,
            label: "sig1",
            components: ["@method", "@target-uri", "content-type", "content-digest"],
            created: createdS,
          })
        ).headers
      : (await signDelivery(unsigned, { privateKey, keyid: KEYID, createdS })).headers;
  const view = fromRequest(new Request(URL_, { method: "POST", headers: signedHeaders }));
  const headers = view.headers.map(([name, value]): [string, string] => {
    if (name === "signature" && build.badSignature === true) {
      const at = value.indexOf(":") + 1;
      return [name, `${value.slice(0, at)}${value[at] === "A" ? "B" : "A"}${value.slice(at + 1)}`];
    }
    if (name === "content-digest" && build.malformedDigest === true) return [name, "sha-256=notbytes"];
    return [name, value];
  });
  return { ...view, headers };
}

/** A key lookup that counts its questions. */
function lookups(answer: KeyRecordLookup): { resolveKey: ProfileOptions["resolveKey"]; calls: () => number } {
  let calls = 0;
  return {
    resolveKey: () => {
      calls += 1;
      return Promise.resolve(answer);
    },
    calls: () => calls,
  };
}

/** An importer that counts its imports (no cache: each call imports). */
function importer(): { importKey: KeyImporter; calls: () => number } {
  let calls = 0;
  return {
    importKey: (_record, raw) => {
      calls += 1;
      return importPublicKeyRaw(raw);
    },
    calls: () => calls,
  };
}

function signatureFieldsOf(view: HttpMessageView): ReturnType<typeof parseSignatureFields> {
  const get = (name: string): string => view.headers.find(([n]) => n === name)?.[1] ?? "";
  return parseSignatureFields(get("signature-input"), get("signature"));
}

/** What a verdict decides (the answer), without the wording of its detail. */
function decided(verdict: ProfileVerdict): Record<string, unknown> {
  return verdict.ok
    ? { ok: true, signingDomain: verdict.signingDomain, keyid: verdict.keyid }
    : { ok: false, check: verdict.check, rule: verdict.rule, problem: verdict.problem };
}

describe("startSignatureCheck: started from the headers, before the body (G1, G2, G4, AUTH-5)", () => {
  it("AUTH-5, G4: with the key at hand the import and the verification are done before any body is given; verifyDelivery then asks nobody", async () => {
    const view = await delivery();
    const fields = signatureFieldsOf(view);
    const record = (await published).record;
    const imports = importer();
    const dns = lookups({ kind: "records", txt: [record] });
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    const started = startSignatureCheck(view, { knownKey, importKey: imports.importKey, signatureFields: fields });
    expect(started).toBeDefined();
    expect(started?.keyid).toBe(KEYID);
    // No body yet: the verification has already settled.
    expect(await started?.signature).toMatchObject({ check: "signature", pass: true });
    expect(imports.calls()).toBe(1);
    const verdict = await verifyDelivery(view, BODY, {
      nowS: NOW_S,
      resolveKey: dns.resolveKey,
      knownKey,
      importKey: imports.importKey,
      signatureFields: fields,
      ...(started !== undefined && { started }),
    });
    expect(verdict).toEqual({ ok: true, signingDomain: "a.example", keyid: KEYID, created: NOW_S, label: "sig1" });
    expect(imports.calls()).toBe(1);
    expect(dns.calls()).toBe(0);
  });

  it("G4: an importer that answers at once (a cache) makes the key check synchronous", async () => {
    const view = await delivery();
    const record = (await published).record;
    const key = await importPublicKeyRaw((await exportPublicKeyRaw((await published).pair.publicKey)) as Uint8Array);
    const started = startSignatureCheck(view, {
      knownKey: () => ({ kind: "records", txt: [record] }),
      importKey: () => key,
    });
    expect(started).toBeDefined();
    expect(started?.key instanceof Promise).toBe(false);
    expect(started?.key).toMatchObject({ check: { check: "key", pass: true }, key });
  });

  it("G4, G44: nothing is started when the key is not at hand (knownKey absent or undefined): only resolveKey can tell", async () => {
    const view = await delivery();
    const imports = importer();
    expect(startSignatureCheck(view, { importKey: imports.importKey })).toBeUndefined();
    expect(startSignatureCheck(view, { knownKey: () => undefined, importKey: imports.importKey })).toBeUndefined();
    expect(imports.calls()).toBe(0);
  });

  it("G2, G4, AUTH-4: nothing is started for a signature the profile refuses from its headers alone", async () => {
    const record = (await published).record;
    const imports = importer();
    const options = { knownKey: () => ({ kind: "records", txt: [record] }) as const, importKey: imports.importKey };
    expect(startSignatureCheck(await delivery({ missingComponent: true }), options)).toBeUndefined();
    const view = await delivery();
    const without = (name: string): HttpMessageView => ({
      ...view,
      headers: view.headers.filter(([n]) => n !== name),
    });
    expect(startSignatureCheck(without("signature"), options)).toBeUndefined();
    expect(startSignatureCheck(without("signature-input"), options)).toBeUndefined();
    expect(startSignatureCheck(view, { ...options, expectedSigningDomain: "c.example" })).toBeUndefined();
    expect(imports.calls()).toBe(0);
  });
});

describe("verifyDelivery keeps G10's order when the signature check was started early", () => {
  type KeyState = "published" | "rotated" | "none" | "error";
  type DigestState = "ok" | "mismatch" | "malformed";

  /** G10 and the profile's order, written out independently of the code: the first failure decides. */
  function expected(
    c: { badSignature: boolean; digest: DigestState; stale: boolean; missingComponent: boolean; key: KeyState },
    keyid: string,
  ): Record<string, unknown> {
    if (c.digest === "malformed") return { ok: false, check: "digest", rule: "POST-5", problem: "invalid_request" };
    if (c.digest === "mismatch") return { ok: false, check: "digest", rule: "POST-5", problem: "invalid_signature" };
    if (c.missingComponent) return { ok: false, check: "components", rule: "G2", problem: "invalid_signature" };
    if (c.stale) return { ok: false, check: "created", rule: "G3", problem: "invalid_signature" };
    if (c.key === "none") return { ok: false, check: "key", rule: "G4", problem: "invalid_signature" };
    if (c.key === "error") return { ok: false, check: "key", rule: "G4", problem: "temporary_failure" };
    if (c.key === "rotated" || c.badSignature)
      return { ok: false, check: "signature", rule: "AUTH-5", problem: "invalid_signature" };
    return { ok: true, signingDomain: "a.example", keyid };
  }

  const combos: {
    badSignature: boolean;
    digest: DigestState;
    stale: boolean;
    missingComponent: boolean;
    key: KeyState;
  }[] = [];
  for (const badSignature of [false, true])
    for (const digest of ["ok", "mismatch", "malformed"] as const)
      for (const stale of [false, true])
        for (const missingComponent of [false, true])
          for (const key of ["published", "rotated", "none", "error"] as const)
            combos.push({ badSignature, digest, stale, missingComponent, key });

  it(`G10, POST-5, G2, G3, G4, G36, AUTH-5: all ${combos.length} combinations of defects give the same verdict overlapped (key at hand) or not, and it is the first failure in G10's order`, async () => {
    const records = { published: (await published).record, rotated: (await rotated).record };
    for (const c of combos) {
      const view = await delivery({
        badSignature: c.badSignature,
        malformedDigest: c.digest === "malformed",
        missingComponent: c.missingComponent,
        createdS: c.stale ? NOW_S - 301 : NOW_S,
      });
      const body = c.digest === "mismatch" ? OTHER_BODY : BODY;
      const lookup: KeyRecordLookup =
        c.key === "published" || c.key === "rotated"
          ? { kind: "records", txt: [records[c.key]] }
          : c.key === "none"
            ? { kind: "none" }
            : { kind: "error", detail: "SERVFAIL" };
      const want = expected(c, KEYID);
      const label = JSON.stringify(c);

      // Sequential: the key asked for in its turn.
      const sequentialDns = lookups(lookup);
      const sequential = await verifyDelivery(view, body, { nowS: NOW_S, resolveKey: sequentialDns.resolveKey });
      expect(decided(sequential), label).toEqual(want);
      // The key is looked up only when every check before it passed (G10: no lookup for a request refused anyway).
      const reachesKey = c.digest === "ok" && !c.missingComponent && !c.stale;
      expect(sequentialDns.calls(), label).toBe(reachesKey ? 1 : 0);

      // Overlapped: the key at hand, its check started from the headers before the body.
      const fields = signatureFieldsOf(view);
      const overlappedDns = lookups(lookup);
      const knownKey = (): KeyRecordLookup => lookup;
      const started = startSignatureCheck(view, { knownKey, signatureFields: fields });
      // Started whenever the headers allow it (created is not among what it looks at).
      expect(started !== undefined, label).toBe(!c.missingComponent);
      const overlapped = await verifyDelivery(view, body, {
        nowS: NOW_S,
        resolveKey: overlappedDns.resolveKey,
        knownKey,
        signatureFields: fields,
        ...(started !== undefined && { started }),
      });
      expect(decided(overlapped), label).toEqual(want);
      expect(overlapped, label).toEqual(sequential);
      expect(overlappedDns.calls(), label).toBe(0);
    }
  }, 60_000);

  it("G10, POST-5, AUTH-5: a bad signature, checked early, with a body that does not match Content-Digest → the digest failure is reported", async () => {
    const view = await delivery({ badSignature: true });
    const fields = signatureFieldsOf(view);
    const record = (await published).record;
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    const started = startSignatureCheck(view, { knownKey, signatureFields: fields });
    expect(await started?.signature).toMatchObject({ check: "signature", pass: false });
    const verdict = await verifyDelivery(view, OTHER_BODY, {
      nowS: NOW_S,
      resolveKey: lookups({ kind: "none" }).resolveKey,
      knownKey,
      signatureFields: fields,
      ...(started !== undefined && { started }),
    });
    expect(verdict).toMatchObject({ ok: false, check: "digest", rule: "POST-5", problem: "invalid_signature" });
    if (!verdict.ok) expect(verdict.detail).toMatch(/sha-256 digest does not match the body/);
  });

  it("G10, G4: an unknown key (not at hand, not in DNS) with a body that does not match → the digest failure, and the key is never looked up", async () => {
    const view = await delivery();
    const dns = lookups({ kind: "none" });
    const started = startSignatureCheck(view, { knownKey: () => undefined });
    expect(started).toBeUndefined();
    const verdict = await verifyDelivery(view, OTHER_BODY, {
      nowS: NOW_S,
      resolveKey: dns.resolveKey,
      knownKey: () => undefined,
    });
    expect(verdict).toMatchObject({ ok: false, check: "digest" });
    expect(dns.calls()).toBe(0);
    // With the right body the unknown key is what fails, after one lookup.
    const second = await verifyDelivery(view, BODY, {
      nowS: NOW_S,
      resolveKey: dns.resolveKey,
      knownKey: () => undefined,
    });
    expect(second).toMatchObject({ ok: false, check: "key", rule: "G4", problem: "invalid_signature" });
    expect(dns.calls()).toBe(1);
  });

  it("G4, G10: a key at hand that does not import → the key failure, but after a digest failure", async () => {
    const view = await delivery();
    const fields = signatureFieldsOf(view);
    const record = (await published).record;
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    for (const importKey of [
      (): never => {
        throw new Error("bad key");
      },
      (): Promise<CryptoKey> => Promise.reject(new Error("bad key")),
    ] as KeyImporter[]) {
      const started = startSignatureCheck(view, { knownKey, importKey, signatureFields: fields });
      const options = {
        nowS: NOW_S,
        resolveKey: lookups({ kind: "none" }).resolveKey,
        knownKey,
        importKey,
        signatureFields: fields,
        ...(started !== undefined && { started }),
      };
      expect(await verifyDelivery(view, OTHER_BODY, options)).toMatchObject({ ok: false, check: "digest" });
      const verdict = await verifyDelivery(view, BODY, options);
      expect(verdict).toMatchObject({ ok: false, check: "key", rule: "G4", problem: "invalid_signature" });
      if (!verdict.ok) expect(verdict.detail).toMatch(/not a valid Ed25519 key/);
    }
  });

  it("G10: profileChecks (every check, not stopping) lists them in order with an early start: the digest failure first, then the bad signature", async () => {
    const view = await delivery({ badSignature: true });
    const fields = signatureFieldsOf(view);
    const record = (await published).record;
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    const started = startSignatureCheck(view, { knownKey, signatureFields: fields });
    const checks = await profileChecks(view, OTHER_BODY, {
      nowS: NOW_S,
      resolveKey: lookups({ kind: "none" }).resolveKey,
      knownKey,
      signatureFields: fields,
      ...(started !== undefined && { started }),
    });
    expect(checks.map((c) => [c.check, c.pass])).toEqual([
      ["signature-input", true],
      ["digest", false],
      ["components", true],
      ["algorithm", true],
      ["created", true],
      ["keyid", true],
      ["key", true],
      ["signature", false],
    ]);
  });

  it("AUTH-5: a started check is used only for the very member it checked: fields parsed anew are checked anew", async () => {
    const view = await delivery();
    const record = (await published).record;
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    const imports = importer();
    const started = startSignatureCheck(view, { knownKey, importKey: imports.importKey });
    expect(imports.calls()).toBe(1);
    const verdict = await verifyDelivery(view, BODY, {
      nowS: NOW_S,
      resolveKey: lookups({ kind: "none" }).resolveKey,
      knownKey,
      importKey: imports.importKey,
      ...(started !== undefined && { started }),
    });
    expect(verdict.ok).toBe(true);
    // The run parsed the fields itself, so the member differs and the key was imported again.
    expect(imports.calls()).toBe(2);
  });

  // verifyDelivery takes a started check only for the very message it was started on: another request
  // carrying the same Signature and Signature-Input over other covered values must not pass with it.
  it("POST-5, AUTH-2, AUTH-5: a started check is not carried over to another request with the same signature fields but other covered values", async () => {
    const original = await delivery();
    const fields = signatureFieldsOf(original);
    const record = (await published).record;
    const knownKey = (): KeyRecordLookup => ({ kind: "records", txt: [record] });
    const started = startSignatureCheck(original, { knownKey, signatureFields: fields });
    expect(await started?.signature).toMatchObject({ pass: true });
    // The Signature and Signature-Input of the original, replayed over another body with its own digest.
    const digest = await createContentDigest(OTHER_BODY);
    const forged: HttpMessageView = {
      ...original,
      headers: original.headers.map(([n, v]): [string, string] => [n, n === "content-digest" ? digest : v]),
    };
    const sequential = await verifyDelivery(forged, OTHER_BODY, {
      nowS: NOW_S,
      resolveKey: lookups({ kind: "records", txt: [record] }).resolveKey,
    });
    expect(sequential).toMatchObject({ ok: false, check: "signature" });
    const reused = await verifyDelivery(forged, OTHER_BODY, {
      nowS: NOW_S,
      resolveKey: lookups({ kind: "records", txt: [record] }).resolveKey,
      knownKey,
      signatureFields: fields,
      ...(started !== undefined && { started }),
    });
    expect(reused).toMatchObject({
      ok: false,
      check: "signature",
    });
  });
});
