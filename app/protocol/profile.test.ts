import { describe, expect, it } from "vitest";
import vectors from "./fixtures/rfc9421-vectors.json" with { type: "json" };
import { asBufferSource, base64UrlToBytes, bytesToBase64, bytesToHex, hexToBytes } from "./base64.ts";
import { createContentDigest } from "./digest.ts";
import { gapById } from "./gaps.ts";
import {
  DEFAULT_TOLERANCE_S,
  PROFILE_COMPONENTS,
  buildKeyRecord,
  checkSignatureProfile,
  exportPublicKeyRaw,
  exportSigningKeyJwk,
  generateSigningKey,
  importPublicKeyRaw,
  importSigningKeyFromSeed,
  importSigningKeyJwk,
  keyidFor,
  parseKeyRecord,
  profileChecks,
  signDelivery,
  signingDomainOfKeyid,
} from "./profile.ts";
import { verifyDelivery } from "./profile.ts";
import type { KeyRecordLookup, ProfileOptions, ProfileVerdict } from "./profile.ts";
import { ruleById } from "./rules.ts";
import {
  createSignatureBase,
  fromRequest,
  parseSignatureInput,
  signatureBaseBytes,
  verifyRequestSignature,
} from "./signature.ts";
import type { ComponentInput, HttpMessageView, SignatureParams } from "./signature.ts";

// ---------------------------------------------------------------------------
// A delivery from a.example to b.example, signed with a key from a fixed seed

const NOW_S = 1_700_000_000;
const KEYID = keyidFor("s1", "a.example");
const URL_ = "https://mx.b.example/v1/messages";
const BODY = new TextEncoder().encode(
  '--b\r\nContent-Type: application/json\r\n\r\n{"from":"alice@a.example","to":["bob@b.example"]}\r\n--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: hi\r\n\r\nhello\r\n--b--\r\n',
);
const OTHER_BODY = new TextEncoder().encode("--b\r\nContent-Type: application/json\r\n\r\n{}\r\n--b--\r\n");

const rfcKey = vectors.keys["test-key-ed25519"];
const seed = hexToBytes(rfcKey.raw_private_seed_hex) ?? new Uint8Array();
const pairPromise = importSigningKeyFromSeed(seed);

async function publishedRecord(): Promise<string> {
  return buildKeyRecord(await exportPublicKeyRaw((await pairPromise).publicKey));
}

async function zone(records: Record<string, KeyRecordLookup> = {}): Promise<ProfileOptions["resolveKey"]> {
  const all: Record<string, KeyRecordLookup> = {
    [KEYID]: { kind: "records", txt: [await publishedRecord()] },
    ...records,
  };
  return (keyid) => Promise.resolve(all[keyid] ?? { kind: "none" });
}

async function options(extra: Partial<ProfileOptions> = {}): Promise<ProfileOptions> {
  return { nowS: NOW_S, resolveKey: await zone(), ...extra };
}

async function unsignedDelivery(body: Uint8Array = BODY, digestOf: Uint8Array = body): Promise<Request> {
  return new Request(URL_, {
    method: "POST",
    headers: {
      "Content-Type": "multipart/mixed; boundary=b",
      "Idempotency-Key": "key-1",
      "Content-Digest": await createContentDigest(digestOf),
    },
    body: asBufferSource(body),
  });
}

async function signedDelivery(
  createdS: number = NOW_S,
  body: Uint8Array = BODY,
  digestOf: Uint8Array = body,
): Promise<Request> {
  return signDelivery(await unsignedDelivery(body, digestOf), {
    privateKey: (await pairPromise).privateKey,
    keyid: KEYID,
    createdS,
  });
}

/** Signs with any components and parameters, bypassing the profile, as an attacker or a careless sender would. */
async function customSigned(
  components: readonly ComponentInput[],
  params: SignatureParams,
  key?: CryptoKey,
): Promise<HttpMessageView> {
  const view = fromRequest(await unsignedDelivery());
  const built = createSignatureBase(view, components, params);
  if (!built.ok) throw new Error(built.violations.map((v) => v.message).join("; "));
  const signature = new Uint8Array(
    await crypto.subtle.sign("Ed25519", key ?? (await pairPromise).privateKey, signatureBaseBytes(built.value.base)),
  );
  return {
    ...view,
    headers: [
      ...view.headers,
      ["Signature-Input", `sig1=${built.value.signatureParams}`],
      ["Signature", `sig1=:${bytesToBase64(signature)}:`],
    ],
  };
}

function withoutHeader(view: HttpMessageView, name: string): HttpMessageView {
  return { ...view, headers: view.headers.filter(([n]) => n.toLowerCase() !== name) };
}

function replaceHeader(view: HttpMessageView, name: string, value: string): HttpMessageView {
  return { ...view, headers: view.headers.map(([n, v]) => [n, n.toLowerCase() === name ? value : v] as const) };
}

function expectFailure(verdict: ProfileVerdict, check: string, rule: string, problem = "invalid_signature"): void {
  expect(verdict).toMatchObject({ ok: false, check, rule, problem });
  if (!verdict.ok) expect(verdict.detail.length).toBeGreaterThan(0);
}

// ---------------------------------------------------------------------------

describe("verifyDelivery: a good delivery", () => {
  it("AUTH-1, AUTH-3, G1–G4: a delivery signed under the profile passes and names its signing domain", async () => {
    const verdict = await verifyDelivery(await signedDelivery(), BODY, await options());
    expect(verdict).toEqual({ ok: true, signingDomain: "a.example", keyid: KEYID, created: NOW_S, label: "sig1" });
  });

  it("G2: signDelivery covers exactly the profile components with created and keyid", async () => {
    const signed = await signedDelivery();
    expect(signed.headers.get("signature-input")).toBe(
      `sig1=("@method" "@target-uri" "content-type" "content-digest" "idempotency-key");created=${NOW_S};keyid="${KEYID}"`,
    );
    expect(new Uint8Array(await signed.arrayBuffer())).toEqual(BODY);
  });

  it("AUTH-1, G1–G4: profileChecks lists every check in the receiver's order, all passing", async () => {
    const checks = await profileChecks(await signedDelivery(), BODY, await options());
    expect(checks.map((c) => [c.check, c.pass, c.rule])).toEqual([
      ["signature-input", true, "POST-4"],
      ["digest", true, "POST-5"],
      ["components", true, "G2"],
      ["algorithm", true, "G1"],
      ["created", true, "G3"],
      ["keyid", true, "G4"],
      ["key", true, "G4"],
      ["signature", true, "AUTH-5"],
    ]);
  });

  it("G3: created exactly at the tolerance either side still passes", async () => {
    for (const createdS of [NOW_S - DEFAULT_TOLERANCE_S, NOW_S + DEFAULT_TOLERANCE_S]) {
      expect(await verifyDelivery(await signedDelivery(createdS), BODY, await options())).toMatchObject({
        ok: true,
        created: createdS,
      });
    }
  });

  it("POST-24: signing again replaces the old signature with one with the fresh timestamp", async () => {
    const first = await signedDelivery(NOW_S - 60);
    const again = await signDelivery(first, {
      privateKey: (await pairPromise).privateKey,
      keyid: KEYID,
      createdS: NOW_S,
    });
    const input = parseSignatureInput(again.headers.get("signature-input") ?? "");
    expect(input.ok && [...input.value.values()].map((m) => m.params.created)).toEqual([NOW_S]);
    expect(await verifyDelivery(again, BODY, await options())).toMatchObject({ ok: true, created: NOW_S });
  });

  it("AUTH-1: a plain message view of the request verifies like the Request itself", async () => {
    expect(await verifyDelivery(fromRequest(await signedDelivery()), BODY, await options())).toMatchObject({
      ok: true,
    });
  });
});

describe("verifyDelivery: the signature attack set (each is invalid_signature with its rule)", () => {
  it("G3: a stale created (301 s old) fails the created check", async () => {
    expectFailure(await verifyDelivery(await signedDelivery(NOW_S - 301), BODY, await options()), "created", "G3");
  });

  it("G3: a created 301 s in the future fails the created check", async () => {
    expectFailure(await verifyDelivery(await signedDelivery(NOW_S + 301), BODY, await options()), "created", "G3");
  });

  it("G3: the tolerance is a setting", async () => {
    const request = await signedDelivery(NOW_S - 100);
    expectFailure(await verifyDelivery(request, BODY, await options({ toleranceS: 60 })), "created", "G3");
  });

  it("POST-5, AUTH-2: a Content-Digest that is not the body's fails the digest check, although the signature is valid", async () => {
    const request = await signedDelivery(NOW_S, BODY, OTHER_BODY);
    expectFailure(await verifyDelivery(request, BODY, await options()), "digest", "POST-5");
    expect(
      await verifyRequestSignature(request, { keyLookup: async () => (await pairPromise).publicKey }),
    ).toMatchObject({ ok: true });
  });

  it("POST-5, AUTH-2: a swapped body under the old digest fails the digest check", async () => {
    expectFailure(await verifyDelivery(await signedDelivery(), OTHER_BODY, await options()), "digest", "POST-5");
  });

  it("POST-5, AUTH-2: a swapped body with a recomputed digest fails the signature check", async () => {
    const view = replaceHeader(
      fromRequest(await signedDelivery()),
      "content-digest",
      await createContentDigest(OTHER_BODY),
    );
    expectFailure(await verifyDelivery(view, OTHER_BODY, await options()), "signature", "AUTH-5");
  });

  it("AUTH-5: a covered header stripped after signing fails the signature check", async () => {
    const view = withoutHeader(fromRequest(await signedDelivery()), "idempotency-key");
    const verdict = await verifyDelivery(view, BODY, await options());
    expectFailure(verdict, "signature", "AUTH-5");
    if (!verdict.ok) expect(verdict.detail).toContain("missing-component");
  });

  it("AUTH-5: a covered header changed after signing fails the signature check", async () => {
    const view = replaceHeader(fromRequest(await signedDelivery()), "idempotency-key", "key-2");
    const verdict = await verifyDelivery(view, BODY, await options());
    expectFailure(verdict, "signature", "AUTH-5");
    if (!verdict.ok) expect(verdict.detail).toContain("bad-signature");
  });

  it("AUTH-5: a request sent to another target URI fails the signature check", async () => {
    const view = { ...fromRequest(await signedDelivery()), url: "https://mx.c.example/v1/messages" };
    expectFailure(await verifyDelivery(view, BODY, await options()), "signature", "AUTH-5");
  });

  it("AUTH-4, G4, G19: a keyid of another domain than the expected signing domain fails the keyid check", async () => {
    const verdict = await verifyDelivery(
      await signedDelivery(),
      BODY,
      await options({ expectedSigningDomain: "evil.example" }),
    );
    expectFailure(verdict, "keyid", "AUTH-4");
    expect(
      await verifyDelivery(await signedDelivery(), BODY, await options({ expectedSigningDomain: "A.Example" })),
    ).toMatchObject({ ok: true });
  });

  it("G4: a keyid not of the form <selector>._svckey.<domain> fails the keyid check", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S, keyid: "test-key-ed25519" });
    expectFailure(await verifyDelivery(view, BODY, await options()), "keyid", "G4");
  });

  it("G4: a keyid with no published key fails the key check", async () => {
    const verdict = await verifyDelivery(
      await signedDelivery(),
      BODY,
      await options({ resolveKey: () => Promise.resolve({ kind: "none" }) }),
    );
    expectFailure(verdict, "key", "G4");
  });

  it("G4: a key lookup that fails in DNS is a temporary failure, not a 401", async () => {
    const resolveKey = () => Promise.resolve<KeyRecordLookup>({ kind: "error", detail: "SERVFAIL" });
    expectFailure(
      await verifyDelivery(await signedDelivery(), BODY, await options({ resolveKey })),
      "key",
      "G4",
      "temporary_failure",
    );
    const throwing = () => Promise.reject(new Error("timeout"));
    expectFailure(
      await verifyDelivery(await signedDelivery(), BODY, await options({ resolveKey: throwing })),
      "key",
      "G4",
      "temporary_failure",
    );
  });

  it("G4: another domain's key published at the keyid fails the signature check", async () => {
    const other = await generateSigningKey();
    const record = buildKeyRecord(await exportPublicKeyRaw(other.publicKey));
    const resolveKey = await zone({ [KEYID]: { kind: "records", txt: [record] } });
    expectFailure(
      await verifyDelivery(await signedDelivery(), BODY, await options({ resolveKey })),
      "signature",
      "AUTH-5",
    );
  });

  it("G1: an alg parameter other than ed25519 fails the algorithm check", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S, keyid: KEYID, alg: "rsa-pss-sha512" });
    expectFailure(await verifyDelivery(view, BODY, await options()), "algorithm", "G1");
    const explicit = await customSigned(PROFILE_COMPONENTS, { created: NOW_S, keyid: KEYID, alg: "ed25519" });
    expect(await verifyDelivery(explicit, BODY, await options())).toMatchObject({ ok: true });
  });

  it("G1, G4: a published key of another type (k=rsa, or a P-256 point) fails the key check", async () => {
    const p256 = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const p256Raw = new Uint8Array(await crypto.subtle.exportKey("raw", p256.publicKey));
    for (const record of [
      (await publishedRecord()).replace("k=ed25519", "k=rsa"),
      `v=svc1; k=ed25519; p=${bytesToBase64(p256Raw)}`,
    ]) {
      const resolveKey = await zone({ [KEYID]: { kind: "records", txt: [record] } });
      expectFailure(await verifyDelivery(await signedDelivery(), BODY, await options({ resolveKey })), "key", "G4");
    }
  });

  it("G2: a signature covering too few components fails the components check", async () => {
    const view = await customSigned(["@method", "@target-uri", "content-type", "content-digest"], {
      created: NOW_S,
      keyid: KEYID,
    });
    const verdict = await verifyDelivery(view, BODY, await options());
    expectFailure(verdict, "components", "G2");
    if (!verdict.ok) expect(verdict.detail).toContain('"idempotency-key"');
  });

  it("AUTH-2, G2: a signature that does not cover content-digest fails the components check under AUTH-2", async () => {
    const view = await customSigned(["@method", "@target-uri", "content-type", "idempotency-key"], {
      created: NOW_S,
      keyid: KEYID,
    });
    expectFailure(await verifyDelivery(view, BODY, await options()), "components", "AUTH-2");
  });

  it("G2: a component covered only with parameters (content-digest;sf) does not count", async () => {
    const components: ComponentInput[] = [
      "@method",
      "@target-uri",
      "content-type",
      { name: "content-digest", params: { sf: true } },
      "idempotency-key",
    ];
    const view = await customSigned(components, { created: NOW_S, keyid: KEYID });
    expectFailure(await verifyDelivery(view, BODY, await options()), "components", "AUTH-2");
  });

  it("AUTH-3, G2: a signature without keyid fails the components check", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S });
    const verdict = await verifyDelivery(view, BODY, await options());
    expectFailure(verdict, "components", "AUTH-3");
    if (!verdict.ok) expect(verdict.detail).toContain("keyid");
  });

  it("AUTH-3, G2: a signature without created fails the components check", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { keyid: KEYID });
    const verdict = await verifyDelivery(view, BODY, await options());
    expectFailure(verdict, "components", "AUTH-3");
    if (!verdict.ok) expect(verdict.detail).toContain("created");
  });

  it("G3: an expires already past fails the created check", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S - 10, expires: NOW_S - 5, keyid: KEYID });
    expectFailure(await verifyDelivery(view, BODY, await options()), "created", "G3");
  });

  it("AUTH-5: a signature by another key under the right keyid fails the signature check", async () => {
    const other = await generateSigningKey();
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S, keyid: KEYID }, other.privateKey);
    expectFailure(await verifyDelivery(view, BODY, await options()), "signature", "AUTH-5");
  });
});

describe("verifyDelivery: headers of the wrong shape are invalid_request", () => {
  it.each([
    ["no Signature-Input", "signature-input", undefined, "POST-4"],
    ["no Signature", "signature", undefined, "POST-3"],
    ["a Signature-Input that is not a dictionary", "signature-input", "sig1", "POST-4"],
    ["a Signature that is not a byte sequence", "signature", "sig1=abc", "POST-3"],
    ["a Signature without the Signature-Input's label", "signature", "other=:AAAA:", "POST-3"],
  ] as const)("POST-3, POST-4, G10: %s is invalid_request", async (_name, name, value, rule) => {
    const view = fromRequest(await signedDelivery());
    const changed = value === undefined ? withoutHeader(view, name) : replaceHeader(view, name, value);
    expectFailure(await verifyDelivery(changed, BODY, await options()), "signature-input", rule, "invalid_request");
  });

  it.each([
    ["no Content-Digest", undefined],
    ["a Content-Digest in the legacy Digest syntax", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="],
    ["a Content-Digest with the RFC 9530 `==` typo", "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg==:"],
  ] as const)("POST-5, G10: %s is invalid_request", async (_name, value) => {
    const view = fromRequest(await signedDelivery());
    const changed =
      value === undefined ? withoutHeader(view, "content-digest") : replaceHeader(view, "content-digest", value);
    expectFailure(await verifyDelivery(changed, BODY, await options()), "digest", "POST-5", "invalid_request");
  });

  it("G10: a malformed Signature-Input is reported before a digest mismatch", async () => {
    const view = replaceHeader(fromRequest(await signedDelivery()), "signature-input", "sig1=(");
    expectFailure(
      await verifyDelivery(view, OTHER_BODY, await options()),
      "signature-input",
      "POST-4",
      "invalid_request",
    );
  });
});

describe("profileChecks and checkSignatureProfile", () => {
  it("AUTH-1, G2, G3: profileChecks goes on past failures and reports each on its own line", async () => {
    const checks = await profileChecks(await signedDelivery(NOW_S - 1000), OTHER_BODY, await options());
    expect(checks.map((c) => [c.check, c.pass])).toEqual([
      ["signature-input", true],
      ["digest", false],
      ["components", true],
      ["algorithm", true],
      ["created", false],
      ["keyid", true],
      ["key", true],
      ["signature", true],
    ]);
    expect(checks.filter((c) => !c.pass).map((c) => c.problem)).toEqual(["invalid_signature", "invalid_signature"]);
  });

  it("G4: with an unusable keyid, the key and signature checks are listed as skipped", async () => {
    const view = await customSigned(PROFILE_COMPONENTS, { created: NOW_S, keyid: "nokey" });
    const checks = await profileChecks(view, BODY, await options());
    expect(checks.slice(-3).map((c) => [c.check, c.pass, c.skipped])).toEqual([
      ["keyid", false, false],
      ["key", false, true],
      ["signature", false, true],
    ]);
  });

  it("POST-4: with no usable Signature-Input, every later check but the digest is skipped", async () => {
    const view = withoutHeader(fromRequest(await signedDelivery()), "signature-input");
    const checks = await profileChecks(view, BODY, await options());
    expect(checks.map((c) => [c.check, c.pass, c.skipped])).toEqual([
      ["signature-input", false, false],
      ["digest", true, false],
      ["components", false, true],
      ["algorithm", false, true],
      ["created", false, true],
      ["keyid", false, true],
      ["key", false, true],
      ["signature", false, true],
    ]);
  });

  it("AUTH-1, G2, RFC 9421 B.2.6: the RFC's request is cryptographically valid but fails the profile", async () => {
    const ex = vectors.examples.find((e) => e.id === "B.2.6");
    const request = vectors.messages["test-request"];
    const view: HttpMessageView = {
      method: request.method ?? "POST",
      url: `https://${request.authority}${request.request_target}`,
      headers: [
        ...(request.headers as unknown as [string, string][]),
        ["Signature-Input", ex?.signature_input_header_value ?? ""],
        ["Signature", ex?.signature_header_value ?? ""],
      ],
    };
    const publicKey = await importPublicKeyRaw(hexToBytes(rfcKey.raw_public_key_hex) ?? new Uint8Array());
    expect(await verifyRequestSignature(view, { keyLookup: () => Promise.resolve(publicKey) })).toMatchObject({
      ok: true,
      algorithm: "ed25519",
    });
    const body = new TextEncoder().encode(request.body);
    const verdict = await verifyDelivery(view, body, {
      nowS: 1618884473,
      resolveKey: () => Promise.resolve({ kind: "none" }),
    });
    expectFailure(verdict, "components", "AUTH-2");
    const input = parseSignatureInput(ex?.signature_input_header_value ?? "");
    const member = input.ok ? input.value.get("sig-b26") : undefined;
    expect(member && checkSignatureProfile(member).map((c) => [c.check, c.pass])).toEqual([
      ["components", false],
      ["algorithm", true],
    ]);
  });

  it("AUTH-1: every rule a check can cite is in the rules catalogue or the gaps table", async () => {
    const cited = new Set<string>([
      "POST-3",
      "POST-4",
      "POST-5",
      "AUTH-2",
      "AUTH-3",
      "AUTH-4",
      "AUTH-5",
      "G1",
      "G2",
      "G3",
      "G4",
    ]);
    for (const c of await profileChecks(await signedDelivery(NOW_S - 1000), OTHER_BODY, await options()))
      cited.add(c.rule);
    for (const id of cited) expect(ruleById(id) !== undefined || gapById(id) !== undefined, id).toBe(true);
  });
});

describe("key record and keyid (G4)", () => {
  const raw = hexToBytes(rfcKey.raw_public_key_hex) ?? new Uint8Array();
  const b64 = bytesToBase64(raw);

  it("G4: buildKeyRecord writes v=svc1; k=ed25519; p=<base64> and parseKeyRecord reads it back", () => {
    const record = buildKeyRecord(raw);
    expect(record).toBe(`v=svc1; k=ed25519; p=${b64}`);
    const parsed = parseKeyRecord(record);
    expect(parsed).toEqual({ ok: true, value: { version: "svc1", keyType: "ed25519", publicKey: raw } });
    expect(() => buildKeyRecord(raw.subarray(1))).toThrow(RangeError);
  });

  it("G4: whitespace, tag order, a trailing semicolon and unknown tags are tolerated", () => {
    const spaced = `  p = ${b64.slice(0, 20)} ${b64.slice(20)} ;k=ed25519;\tt=y ;  v=svc1 ; `;
    const parsed = parseKeyRecord(spaced);
    expect(parsed.ok && bytesToHex(parsed.value.publicKey)).toBe(rfcKey.raw_public_key_hex);
  });

  it.each([
    ["k=rsa", `v=svc1; k=rsa; p=${b64}`, "$.k"],
    ["no k", `v=svc1; p=${b64}`, "$.k"],
    ["v=svc2", `v=svc2; k=ed25519; p=${b64}`, "$.v"],
    ["no v (a DKIM record)", `k=ed25519; p=${b64}`, "$.v"],
    ["no p", "v=svc1; k=ed25519", "$.p"],
    ["an empty p (revoked)", "v=svc1; k=ed25519; p=", "$.p"],
    ["a 31-byte key", `v=svc1; k=ed25519; p=${bytesToBase64(raw.subarray(1))}`, "$.p"],
    ["a 33-byte key", `v=svc1; k=ed25519; p=${bytesToBase64(new Uint8Array([...raw, 0]))}`, "$.p"],
    ["base64 without padding", `v=svc1; k=ed25519; p=${b64.replace(/=$/, "")}`, "$.p"],
    ["base64url", `v=svc1; k=ed25519; p=${rfcKey.jwk.x}`, "$.p"],
    ["a repeated tag", `v=svc1; k=ed25519; p=${b64}; p=${b64}`, "$.p"],
    ["a part without =", `v=svc1; k=ed25519; p=${b64}; garbage`, "$"],
  ])("G4: a record with %s is refused", (_name, txt, path) => {
    const parsed = parseKeyRecord(txt);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.violations).toContainEqual(expect.objectContaining({ path, rule: "G4" }));
  });

  it("G4: the signing domain is what follows ._svckey., lowercased", () => {
    expect(keyidFor("s1", "a.example")).toBe("s1._svckey.a.example");
    expect(signingDomainOfKeyid("s1._svckey.a.example")).toEqual({ ok: true, value: "a.example" });
    expect(signingDomainOfKeyid("2024-01.s1._svckey.Mail.A.Example")).toEqual({ ok: true, value: "mail.a.example" });
    expect(signingDomainOfKeyid("s1._svckey.xn--bcher-kva.example")).toEqual({
      ok: true,
      value: "xn--bcher-kva.example",
    });
  });

  it.each([
    ["no ._svckey.", "test-key-ed25519"],
    ["an empty selector", "._svckey.a.example"],
    ["an empty domain", "s1._svckey."],
    ["a trailing dot", "s1._svckey.a.example."],
    ["an underscore in the domain", "s1._svckey.a_b.example"],
    ["a label starting with a hyphen", "s1._svckey.-a.example"],
    ["a space", "s 1._svckey.a.example"],
    [
      "a name over 253 characters",
      `s1._svckey.${"a".repeat(60)}.${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.example`,
    ],
  ])("G4: a keyid with %s names no signing domain", (_name, keyid) => {
    const parsed = signingDomainOfKeyid(keyid);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.violations[0]).toMatchObject({ path: "keyid", rule: "G4" });
  });
});

describe("signing keys (G1)", () => {
  it("G1, RFC 9421 B.1.4: the key from the RFC's seed has the RFC's public key and signs B.2.6 exactly", async () => {
    const pair = await pairPromise;
    expect(bytesToHex(await exportPublicKeyRaw(pair.publicKey))).toBe(rfcKey.raw_public_key_hex);
    const ex = vectors.examples.find((e) => e.id === "B.2.6");
    const signature = await crypto.subtle.sign(
      "Ed25519",
      pair.privateKey,
      signatureBaseBytes(ex?.signature_base ?? ""),
    );
    expect(bytesToBase64(new Uint8Array(signature))).toBe(ex?.signature_b64);
  });

  it("G1: a seed that is not 32 bytes is refused", async () => {
    await expect(importSigningKeyFromSeed(new Uint8Array(31))).rejects.toThrow(RangeError);
  });

  it("G1: the same seed gives the same keys on every run", async () => {
    const seedBytes = new Uint8Array(32).fill(7);
    const a = await importSigningKeyFromSeed(seedBytes);
    const b = await importSigningKeyFromSeed(seedBytes);
    expect(await exportPublicKeyRaw(a.publicKey)).toEqual(await exportPublicKeyRaw(b.publicKey));
  });

  it("G1, G4: a generated key round-trips through its raw public key and signs deliveries that verify", async () => {
    const pair = await generateSigningKey();
    const raw = await exportPublicKeyRaw(pair.publicKey);
    expect(raw.length).toBe(32);
    const keyid = keyidFor("k2", "c.example");
    const request = await signDelivery(await unsignedDelivery(), {
      privateKey: pair.privateKey,
      keyid,
      createdS: NOW_S,
    });
    const resolveKey = () =>
      Promise.resolve<KeyRecordLookup>({ kind: "records", txt: ["v=DKIM1; k=rsa; p=AAAA", buildKeyRecord(raw)] });
    expect(await verifyDelivery(request, BODY, { nowS: NOW_S, resolveKey })).toMatchObject({
      ok: true,
      signingDomain: "c.example",
    });
    expect(await exportPublicKeyRaw(await importPublicKeyRaw(raw))).toEqual(raw);
  });

  it("G1, RFC 8037: JWK import and export of Ed25519 keys, matching the RFC 9421 B.1.4 JWK", async () => {
    const privateKey = await importSigningKeyJwk(rfcKey.jwk);
    const jwk = await exportSigningKeyJwk(privateKey);
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", x: rfcKey.jwk.x, d: rfcKey.jwk.d });
    const publicKey = await importSigningKeyJwk(rfcKey.public_jwk);
    expect(publicKey.type).toBe("public");
    expect(await exportPublicKeyRaw(publicKey)).toEqual(base64UrlToBytes(rfcKey.jwk.x));
    await expect(importSigningKeyJwk({ kty: "EC", crv: "P-256", x: rfcKey.jwk.x })).rejects.toThrow(RangeError);
  });

  it("G4: signDelivery refuses a keyid not of the G4 form, and a request without a covered header", async () => {
    const privateKey = (await pairPromise).privateKey;
    await expect(
      signDelivery(await unsignedDelivery(), { privateKey, keyid: "s1.a.example", createdS: NOW_S }),
    ).rejects.toThrow(/_svckey/);
    const bare = new Request(URL_, {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=b" },
      body: BODY,
    });
    await expect(signDelivery(bare, { privateKey, keyid: KEYID, createdS: NOW_S })).rejects.toThrow(/content-digest/);
  });
});
