/**
 * Mailscope's signature profile: what SPEC.md leaves as "not shown" under
 * Authentication 8, filled by the design's gaps G1–G4 (`gaps.ts`).
 *
 * - G1 algorithm: Ed25519 (RFC 9421 `ed25519`).
 * - G2 covered components: `@method @target-uri content-type content-digest
 *   idempotency-key`; parameters `created` and `keyid` required.
 * - G3 `created` within 300 s of the receiver's clock, either side.
 * - G4 key publication: DNS TXT at the keyid name, `<selector>._svckey.<signing-domain>`,
 *   record `v=svc1; k=ed25519; p=<base64 raw public key>`.
 *
 * The generic RFC 9421 / RFC 9530 machinery is in `signature.ts` and `digest.ts`.
 */
import { asBufferSource, base64ToBytes, base64UrlToBytes, bytesToBase64, fromArrayBuffer } from "./base64.ts";
import { checkContentDigest, parseContentDigest } from "./digest.ts";
import { keptAnswers } from "./memo.ts";
import type { BodyDigests, ParsedContentDigest } from "./digest.ts";
import { ProtocolError, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import { fromRequest, headerValue, signatureFieldsFor, signatureFields, verifyRequestSignature } from "./signature.ts";
import type { ComponentIdentifier, HttpMessageView, ParsedSignatureFields, SignatureInputMember } from "./signature.ts";
import { subtle } from "./webCrypto.ts";
import { errorMessage } from "../errorMessage.ts";

/** G2: the covered components, in the order the sender writes them. */
export const PROFILE_COMPONENTS = [
  "@method",
  "@target-uri",
  "content-type",
  "content-digest",
  "idempotency-key",
] as const;
/** G2: the signature parameters that must be present. */
export const PROFILE_REQUIRED_PARAMS = ["created", "keyid"] as const;
/** G1: the only algorithm. */
export const PROFILE_ALGORITHM = "ed25519";
/** The label the sender uses. The receiver reads the first label, whatever its name. */
export const PROFILE_LABEL = "sig1";
/** G3: the default tolerance on `created`, either side of the receiver's clock. */
export const DEFAULT_TOLERANCE_S = 300;
/** G4: what separates the selector from the signing domain in a keyid. */
export const KEYID_INFIX = "._svckey.";

// Rule IDs: spec rules from rules.ts, gap IDs from gaps.ts.
const R = {
  digest: "POST-5",
  signatureHeader: "POST-3",
  signatureInputHeader: "POST-4",
  digestCovered: "AUTH-2",
  params: "AUTH-3",
  fromDomain: "AUTH-4",
  check: "AUTH-5",
} as const satisfies Record<string, RuleId>;
const G1 = "G1";
const G2 = "G2";
const G3 = "G3";
const G4 = "G4";

// ---------------------------------------------------------------------------
// Keyid and key record (G4)

/** The keyid for a selector of a signing domain: `<selector>._svckey.<domain>`. */
export function keyidFor(selector: string, domain: string): string {
  return `${selector}${KEYID_INFIX}${domain}`;
}

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * The signing domain named by a keyid (G4): what follows `._svckey.`,
 * lowercased because DNS names compare without case. The selector and the
 * domain must each be one or more host-name labels (letters, digits, hyphen;
 * A-labels for IDNs); the whole name at most 253 characters, no trailing dot.
 */
export function signingDomainOfKeyid(keyid: string): Parsed<string> {
  return keyidDomains(keyid);
}

/** Each keyid's signing domain as read before: every delivery reads its keyid's three times. */
const keyidDomains = keptAnswers(readSigningDomain, 1024);

function readSigningDomain(keyid: string): Parsed<string> {
  const bad = (message: string) =>
    fail({ path: "keyid", rule: G4, message: `keyid ${JSON.stringify(keyid)} ${message}` });
  const at = keyid.indexOf(KEYID_INFIX);
  if (at < 0) return bad(`is not of the form <selector>${KEYID_INFIX}<signing-domain>`);
  const selector = keyid.slice(0, at);
  const domain = keyid.slice(at + KEYID_INFIX.length);
  if (keyid.length > 253) return bad("is longer than a DNS name may be (253 characters)");
  if (selector === "" || !selector.split(".").every((l) => LABEL.test(l)))
    return bad("has no valid selector before ._svckey.");
  if (domain === "" || !domain.split(".").every((l) => LABEL.test(l)))
    return bad("has no valid signing domain after ._svckey.");
  return ok(domain.toLowerCase());
}

/** A parsed key record (G4). */
export interface KeyRecord {
  readonly version: "svc1";
  readonly keyType: "ed25519";
  readonly publicKey: Uint8Array;
}

/** The TXT record publishing a raw 32-byte Ed25519 public key (G4). */
export function buildKeyRecord(publicKeyRaw: Uint8Array): string {
  if (publicKeyRaw.length !== 32)
    throw new RangeError(`an Ed25519 public key has 32 bytes, not ${publicKeyRaw.length}`);
  return `v=svc1; k=ed25519; p=${bytesToBase64(publicKeyRaw)}`;
}

/**
 * Parses a key TXT record (G4), DKIM-like (RFC 6376 §3.6.1): `;`-separated
 * `tag=value` pairs in any order, whitespace around tags and inside the
 * base64 tolerated, unknown tags ignored, a trailing `;` allowed. Strict on
 * what decides the key: `v` must be `svc1`, `k` must be `ed25519`, `p` must
 * be canonical base64 of exactly 32 bytes (an empty `p` is a revoked key),
 * and no tag may appear twice. A TXT record of several character-strings is
 * passed joined, as DKIM does.
 */
export function parseKeyRecord(txt: string): Parsed<KeyRecord> {
  const problems: Violation[] = [];
  const bad = (tag: string, message: string): void => {
    problems.push({ path: tag === "" ? "$" : `$.${tag}`, rule: G4, message });
  };
  const tags = new Map<string, string>();
  for (const part of txt.split(";")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (eq < 0 || !/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) {
      bad("", `"${part.trim()}" is not a tag=value pair`);
      continue;
    }
    if (tags.has(name)) {
      bad(name, `tag ${name} appears more than once`);
      continue;
    }
    tags.set(name, part.slice(eq + 1).trim());
  }
  const v = tags.get("v");
  const k = tags.get("k");
  const p = tags.get("p");
  if (v === undefined) bad("v", "the record has no v= tag (expected v=svc1)");
  else if (v !== "svc1") bad("v", `version ${JSON.stringify(v)} is not svc1`);
  if (k === undefined) bad("k", "the record has no k= tag (expected k=ed25519)");
  else if (k !== "ed25519") bad("k", `key type ${JSON.stringify(k)} is not ed25519 (G1)`);
  let publicKey: Uint8Array | undefined;
  if (p === undefined) bad("p", "the record has no p= tag");
  else {
    const compact = p.replace(/[ \t\r\n]+/g, "");
    if (compact === "") bad("p", "p= is empty: the key is revoked");
    else {
      publicKey = base64ToBytes(compact);
      if (publicKey === undefined) bad("p", "p= is not canonical base64");
      else if (publicKey.length !== 32) bad("p", `p= holds ${publicKey.length} bytes; an Ed25519 public key has 32`);
    }
  }
  if (problems.length > 0 || publicKey === undefined) return failWith(problems);
  return ok({ version: "svc1", keyType: "ed25519", publicKey });
}

/** {@link parseKeyRecord}, remembered for a few hundred record texts: the same record arrives with every delivery of a sender. */
const parseKeyRecordKept = keptAnswers(parseKeyRecord, 256);

// ---------------------------------------------------------------------------
// Keys (G1): Ed25519 through WebCrypto

/** A fresh Ed25519 key pair; the private key is extractable so a simulator can save it. */
export async function generateSigningKey(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
}

/** DER prefix of a PKCS#8 Ed25519 private key (RFC 8410 §7); the 32-byte seed follows. */
const PKCS8_ED25519_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/**
 * The Ed25519 key pair of a 32-byte seed (the RFC 8032 private key), so that
 * a simulation seeded once gets the same keys on every run. WebCrypto cannot
 * derive a public key directly; the private key's JWK export carries it (`x`).
 *
 * @throws RangeError when the seed is not 32 bytes.
 */
export async function importSigningKeyFromSeed(seed32: Uint8Array): Promise<CryptoKeyPair> {
  if (seed32.length !== 32) throw new RangeError(`an Ed25519 seed has 32 bytes, not ${seed32.length}`);
  const pkcs8 = new Uint8Array(PKCS8_ED25519_PREFIX.length + 32);
  pkcs8.set(PKCS8_ED25519_PREFIX);
  pkcs8.set(seed32, PKCS8_ED25519_PREFIX.length);
  const privateKey = await subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const { x } = await subtle.exportKey("jwk", privateKey);
  if (x === undefined) throw new Error("the Ed25519 JWK export has no public part");
  const publicKey = await subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, true, [
    "verify",
  ]);
  return { privateKey, publicKey };
}

/** The raw 32-byte public key, as the key record publishes it. */
export async function exportPublicKeyRaw(publicKey: CryptoKey): Promise<Uint8Array> {
  return fromArrayBuffer(await subtle.exportKey("raw", publicKey));
}

/** An Ed25519 verification key from its 32 raw bytes. */
export async function importPublicKeyRaw(raw: Uint8Array): Promise<CryptoKey> {
  return subtle.importKey("raw", asBufferSource(raw), { name: "Ed25519" }, true, ["verify"]);
}

/** The JWK (RFC 8037 OKP) of an Ed25519 key; it must be extractable. */
export async function exportSigningKeyJwk(key: CryptoKey): Promise<JsonWebKey> {
  return subtle.exportKey("jwk", key);
}

/** An Ed25519 key from a JWK: a signing key when it has `d`, else a verification key. */
export async function importSigningKeyJwk(jwk: JsonWebKey): Promise<CryptoKey> {
  const { kty, crv, x, d } = jwk;
  if (kty !== "OKP" || crv !== "Ed25519" || x === undefined || base64UrlToBytes(x)?.length !== 32) {
    throw new RangeError("not an Ed25519 JWK (kty OKP, crv Ed25519, 32-byte x)");
  }
  const clean: JsonWebKey = d === undefined ? { kty, crv, x } : { kty, crv, x, d };
  return subtle.importKey("jwk", clean, { name: "Ed25519" }, true, d === undefined ? ["verify"] : ["sign"]);
}

// ---------------------------------------------------------------------------
// Signing a delivery

/** What {@link signDelivery} needs. */
export interface SignDeliveryOptions {
  readonly privateKey: CryptoKey;
  /** `<selector>._svckey.<signing-domain>` (G4). */
  readonly keyid: string;
  /** Seconds since the epoch, from the caller's clock. */
  readonly createdS: number;
}

/**
 * A copy of `request` signed under the profile: label `sig1`, the G2
 * components, `created` and `keyid`. The request must already carry
 * Content-Type, Content-Digest and Idempotency-Key. Signature fields already
 * present are replaced, because a retry re-signs with a fresh timestamp
 * (POST-24). The body moves to the new request.
 *
 * @throws ProtocolError when the keyid is not of the G4 form or a covered
 * header is missing: mistakes of the sender, not input from a peer.
 */
export async function signDelivery(request: Request, options: SignDeliveryOptions): Promise<Request> {
  const headers = new Headers(request.headers);
  headers.delete("signature");
  headers.delete("signature-input");
  const signed = await deliverySignature({ method: request.method, url: request.url, headers: [...headers] }, options);
  headers.append("signature-input", signed.signatureInput);
  headers.append("signature", signed.signature);
  return new Request(request, { headers });
}

/**
 * The Signature-Input and Signature field values that sign a delivery under
 * the profile, as {@link signDelivery} puts them on its copy: for a sender
 * that adds them to the one Request it sends. `message` is that request's
 * method, URL (as `Request.url` gives it) and header fields, without
 * signature fields.
 *
 * @throws ProtocolError as {@link signDelivery}.
 */
export async function deliverySignature(
  message: HttpMessageView,
  options: SignDeliveryOptions,
): Promise<{ readonly signatureInput: string; readonly signature: string }> {
  const domain = signingDomainOfKeyid(options.keyid);
  if (!domain.ok) throw new ProtocolError(domain.violations);
  return signatureFields(message, {
    key: options.privateKey,
    keyid: options.keyid,
    label: PROFILE_LABEL,
    components: PROFILE_COMPONENTS,
    created: options.createdS,
  });
}

// ---------------------------------------------------------------------------
// Checking a delivery

/** The checks of the profile, in the order the receiver runs them. */
export type ProfileCheckName =
  "signature-input" | "digest" | "components" | "algorithm" | "created" | "keyid" | "key" | "signature";

/**
 * The problem a failed check answers with. `temporary_failure` only for a key
 * lookup that failed in DNS (SERVFAIL, timeout): the key may well exist, so a
 * permanent 401 would be wrong (G36).
 */
export type ProfileProblem = "invalid_signature" | "invalid_request" | "temporary_failure";

/** One line of {@link profileChecks}. */
export interface ProfileCheck {
  readonly check: ProfileCheckName;
  readonly pass: boolean;
  /** True when the check could not run because an earlier one failed; `pass` is then false. */
  readonly skipped: boolean;
  readonly rule: string;
  /** The answer a failure gets; absent when the check passed or was skipped. */
  readonly problem?: ProfileProblem;
  readonly detail: string;
}

/** What the key TXT lookup at the keyid name gave. */
export type KeyRecordLookup =
  | { readonly kind: "records"; readonly txt: readonly string[] }
  | { readonly kind: "none" }
  | { readonly kind: "error"; readonly detail?: string };

/** What {@link verifyDelivery} and {@link profileChecks} need. */
export interface ProfileOptions {
  /** The receiver's clock, seconds since the epoch. */
  readonly nowS: number;
  /** G3; default 300. */
  readonly toleranceS?: number;
  /** The TXT lookup at a keyid name (G4). */
  readonly resolveKey: (keyid: string) => Promise<KeyRecordLookup>;
  /**
   * When given (the domain of the envelope `from`), a keyid of another domain
   * fails the keyid check (AUTH-4, answered with 401 as G19 reads it). The
   * receiver that parses the envelope later can leave it out and compare
   * `signingDomain` itself.
   */
  readonly expectedSigningDomain?: string;
  /** Signature-Input and Signature as the caller already parsed them (used only if parsed from these very values). */
  readonly signatureFields?: ParsedSignatureFields;
  /** The body's digests the caller has (or is computing); the digest check hashes the body itself for any other. */
  readonly bodyDigest?: BodyDigests;
  /** Content-Digest as the caller already parsed it (used only if parsed from this very value). */
  readonly contentDigest?: ParsedContentDigest;
  /**
   * The key lookup's answer when it is at hand without asking anyone (a
   * configured record, a TXT answer still within its TTL); `undefined` when
   * only `resolveKey` can tell. With the answer at hand, the key import and
   * the signature verification run while the body's digest is computed;
   * `resolveKey` is still only asked once the checks before it have passed.
   */
  readonly knownKey?: (keyid: string) => KeyRecordLookup | undefined;
  /**
   * Imports the public key of the usable key record `record` (a cache may
   * answer it at once, without a promise). Default: {@link importPublicKeyRaw}.
   */
  readonly importKey?: KeyImporter;
  /** Steps 7 and 8 as {@link startSignatureCheck} began them before the body arrived. */
  readonly started?: SignatureCheckStarted;
}

/** Imports the Ed25519 public key `publicKeyRaw` of the key record text `record`. */
export type KeyImporter = (record: string, publicKeyRaw: Uint8Array) => CryptoKey | Promise<CryptoKey>;

/** The receiver's verdict on a delivery's signature. */
export type ProfileVerdict =
  | {
      readonly ok: true;
      readonly signingDomain: string;
      readonly keyid: string;
      readonly created: number;
      readonly label: string;
    }
  | {
      readonly ok: false;
      readonly check: ProfileCheckName;
      readonly rule: string;
      readonly problem: ProfileProblem;
      readonly detail: string;
    };

function passed(check: ProfileCheckName, rule: string, detail: string): ProfileCheck {
  return { check, pass: true, skipped: false, rule, detail };
}

function failed(
  check: ProfileCheckName,
  rule: string,
  detail: string,
  problem: ProfileProblem = "invalid_signature",
): ProfileCheck {
  return { check, pass: false, skipped: false, rule, problem, detail };
}

function skipped(check: ProfileCheckName, rule: string, because: string): ProfileCheck {
  return { check, pass: false, skipped: true, rule, detail: `not checked: ${because}` };
}

const COMPONENTS_COVERED = `covers ${PROFILE_COMPONENTS.join(" ")}; has created and keyid`;

/**
 * G2 and AUTH-2/AUTH-3: every profile component covered (extra ones are
 * allowed), each as the bare name (`"content-digest";sf` does not count), and
 * `created` and `keyid` present.
 */
export function checkComponents(member: SignatureInputMember): ProfileCheck {
  // The usual case, every one covered and both parameters there, found without building the sets below.
  if (coversProfile(member)) return passed("components", G2, COMPONENTS_COVERED);
  const covered = new Set(member.components.filter((c) => c.params === undefined).map((c) => c.name));
  const missing = PROFILE_COMPONENTS.filter((c) => !covered.has(c));
  const missingParams = PROFILE_REQUIRED_PARAMS.filter((p) => member.params[p] === undefined);
  if (missing.length === 0 && missingParams.length === 0) {
    return passed("components", G2, COMPONENTS_COVERED);
  }
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`does not cover ${missing.map((c) => `"${c}"`).join(" ")}`);
  if (missingParams.length > 0)
    parts.push(`lacks the ${missingParams.join(" and ")} parameter${missingParams.length > 1 ? "s" : ""}`);
  const rule = missing.includes("content-digest") ? R.digestCovered : missing.length > 0 ? G2 : R.params;
  return failed("components", rule, `signature ${member.label} ${parts.join(" and ")}`);
}

/** Whether `member` covers every profile component as a bare name and has every required parameter. */
function coversProfile(member: SignatureInputMember): boolean {
  // Loops, not `some`/`every` with a closure per name: this runs on every delivery.
  const { components, params } = member;
  for (const name of PROFILE_COMPONENTS) {
    let covered = false;
    for (let i = 0; i < components.length && !covered; i++) {
      const c = components[i] as ComponentIdentifier;
      covered = c.params === undefined && c.name === name;
    }
    if (!covered) return false;
  }
  for (const p of PROFILE_REQUIRED_PARAMS) if (params[p] === undefined) return false;
  return true;
}

/** G1: an `alg` parameter, when present, must be `ed25519`. */
export function checkAlgorithm(member: SignatureInputMember): ProfileCheck {
  const alg = member.params.alg;
  if (alg === undefined || alg === PROFILE_ALGORITHM) {
    return passed("algorithm", G1, alg === undefined ? "no alg parameter; ed25519 by profile" : "alg is ed25519");
  }
  return failed("algorithm", G1, `alg ${JSON.stringify(alg)} is not ed25519`);
}

/** G3: `created` within `toleranceS` of `nowS` either side (inclusive); an `expires` not yet past. */
export function checkCreated(
  member: SignatureInputMember,
  nowS: number,
  toleranceS: number = DEFAULT_TOLERANCE_S,
): ProfileCheck {
  const created = member.params.created;
  if (created === undefined) return skipped("created", G3, "no created parameter");
  const skew = created - nowS;
  if (skew > toleranceS)
    return failed("created", G3, `created ${created} is ${skew} s in the future (tolerance ${toleranceS} s)`);
  if (-skew > toleranceS)
    return failed("created", G3, `created ${created} is ${-skew} s old (tolerance ${toleranceS} s)`);
  const expires = member.params.expires;
  if (expires !== undefined && expires < nowS)
    return failed("created", G3, `the signature expired at ${expires}, ${nowS - expires} s ago`);
  return passed("created", G3, `created ${created} is within ${toleranceS} s of ${nowS}`);
}

/** G4 (and AUTH-4 when an expected signing domain is given): the keyid's form and domain. */
export function checkKeyid(member: SignatureInputMember, expectedSigningDomain?: string): ProfileCheck {
  const keyid = member.params.keyid;
  if (keyid === undefined) return skipped("keyid", G4, "no keyid parameter");
  const domain = signingDomainOfKeyid(keyid);
  if (!domain.ok) return failed("keyid", G4, domain.violations.map((v) => v.message).join("; "));
  if (expectedSigningDomain !== undefined && domain.value !== expectedSigningDomain.toLowerCase()) {
    return failed(
      "keyid",
      R.fromDomain,
      `keyid names ${domain.value}, but the sender is ${expectedSigningDomain.toLowerCase()}`,
    );
  }
  return passed("keyid", G4, `signing domain ${domain.value}`);
}

/** G2 and G1 on a Signature-Input member alone, without clock, DNS or message: what a sender can check of itself. */
export function checkSignatureProfile(member: SignatureInputMember): readonly ProfileCheck[] {
  return [checkComponents(member), checkAlgorithm(member)];
}

/** G4: the key published at the keyid, and the check line that says so. */
export async function checkKey(
  keyid: string,
  resolveKey: (keyid: string) => Promise<KeyRecordLookup>,
  importKey?: KeyImporter,
): Promise<KeyCheck> {
  let lookup: KeyRecordLookup;
  try {
    lookup = await resolveKey(keyid);
  } catch (error) {
    lookup = { kind: "error", detail: errorMessage(error) };
  }
  return keyCheckOf(keyid, lookup, importKey);
}

/** What {@link checkKey} finds. */
export interface KeyCheck {
  readonly check: ProfileCheck;
  readonly key?: CryptoKey;
}

/** The key check on a lookup's answer; without a promise when the key is at hand (an importer's cache had it). */
function keyCheckOf(
  keyid: string,
  lookup: KeyRecordLookup,
  importKey: KeyImporter = (_record, raw) => importPublicKeyRaw(raw),
): KeyCheck | Promise<KeyCheck> {
  if (lookup.kind === "error") {
    return {
      check: failed(
        "key",
        G4,
        `the TXT lookup of ${keyid} failed${lookup.detail ? `: ${lookup.detail}` : ""}`,
        "temporary_failure",
      ),
    };
  }
  if (lookup.kind === "none" || lookup.txt.length === 0) {
    return { check: failed("key", G4, `no TXT record at ${keyid}`) };
  }
  const parsed = lookup.txt.map(parseKeyRecordKept);
  const goodIndex = parsed.findIndex((p) => p.ok);
  const good = parsed[goodIndex];
  if (good === undefined || !good.ok) {
    const reasons = parsed.flatMap((p) => (p.ok ? [] : p.violations.map((v) => v.message)));
    return { check: failed("key", G4, `no usable key record at ${keyid}: ${reasons.join("; ")}`) };
  }
  const found = (key: CryptoKey): KeyCheck => ({ check: passed("key", G4, `ed25519 key published at ${keyid}`), key });
  const invalid = (error: unknown): KeyCheck => ({
    check: failed("key", G4, `the published key is not a valid Ed25519 key (${String(error)})`),
  });
  let imported: CryptoKey | Promise<CryptoKey>;
  try {
    imported = importKey(lookup.txt[goodIndex] ?? "", good.value.publicKey);
  } catch (error) {
    return invalid(error);
  }
  return isPromiseLike(imported) ? Promise.resolve(imported).then(found, invalid) : found(imported);
}

interface RunResult {
  readonly checks: readonly ProfileCheck[];
  readonly member?: SignatureInputMember;
  readonly signingDomain?: string;
}

async function run(
  request: Request | HttpMessageView,
  body: Uint8Array,
  options: ProfileOptions,
  stopAtFirstFailure: boolean,
): Promise<RunResult> {
  const view = request instanceof Request ? fromRequest(request) : request;
  const checks: ProfileCheck[] = [];
  const stop = (): boolean => stopAtFirstFailure && checks.some((c) => !c.pass && !c.skipped);
  const done = (extra: Omit<RunResult, "checks"> = {}): RunResult => ({ checks, ...extra });

  // 1. Signature-Input and Signature present and well-formed (G10: header shape is 400 and comes first).
  const inputHeader = headerValue(view, "signature-input");
  const signatureHeader = headerValue(view, "signature");
  let member: SignatureInputMember | undefined;
  let fields: ParsedSignatureFields | undefined;
  if (inputHeader === undefined) {
    checks.push(
      failed("signature-input", R.signatureInputHeader, "the request has no Signature-Input header", "invalid_request"),
    );
  } else if (signatureHeader === undefined) {
    checks.push(failed("signature-input", R.signatureHeader, "the request has no Signature header", "invalid_request"));
  } else {
    fields = signatureFieldsFor(inputHeader, signatureHeader, options.signatureFields);
    const { inputs, signatures } = fields;
    if (!inputs.ok) {
      checks.push(
        failed("signature-input", R.signatureInputHeader, violationText(inputs.violations), "invalid_request"),
      );
    } else if (!signatures.ok) {
      checks.push(
        failed("signature-input", R.signatureHeader, violationText(signatures.violations), "invalid_request"),
      );
    } else {
      // The profile reads the first signature; the sender adds exactly one.
      const first = [...inputs.value.values()][0];
      if (first !== undefined && !signatures.value.has(first.label)) {
        checks.push(
          failed("signature-input", R.signatureHeader, `Signature has no member "${first.label}"`, "invalid_request"),
        );
      } else if (first !== undefined) {
        member = first;
        checks.push(
          passed("signature-input", R.signatureInputHeader, `signature ${first.label}: ${first.signatureParams}`),
        );
      }
    }
  }
  if (stop()) return done();

  // 2. Content-Digest well-formed (400), then equal to the body's (401). The hashing starts below, once the
  // verification (the longer job) has been started, so that the two run side by side; its verdict still
  // takes this place in the order.
  const digestHeader = headerValue(view, "content-digest");
  let digestCheck: ProfileCheck | (() => Promise<ProfileCheck>);
  if (digestHeader === undefined) {
    digestCheck = failed("digest", R.digest, "the request has no Content-Digest header", "invalid_request");
  } else {
    const parsed =
      options.contentDigest?.header === digestHeader ? options.contentDigest.parsed : parseContentDigest(digestHeader);
    if (!parsed.ok) {
      digestCheck = failed("digest", R.digest, violationText(parsed.violations), "invalid_request");
    } else {
      const claimed = parsed.value;
      digestCheck = () =>
        checkContentDigest(claimed, body, options.bodyDigest).then((verdict) =>
          verdict.ok
            ? passed("digest", R.digest, `${verdict.algorithm} matches the body`)
            : failed("digest", R.digest, verdict.violation.message),
        );
    }
  }
  if (typeof digestCheck !== "function") {
    checks.push(digestCheck);
    if (stop()) return done();
  }

  if (member === undefined) {
    if (typeof digestCheck === "function") {
      checks.push(await digestCheck());
      if (stop()) return done();
    }
    for (const [check, rule] of [
      ["components", G2],
      ["algorithm", G1],
      ["created", G3],
      ["keyid", G4],
      ["key", G4],
      ["signature", R.check],
    ] as const) {
      checks.push(skipped(check, rule, "Signature-Input is not usable"));
    }
    return done();
  }

  // 3–6. What the Signature-Input claims, cheapest first: no DNS lookup for a signature the profile already refuses.
  const claims = [
    checkComponents(member),
    checkAlgorithm(member),
    checkCreated(member, options.nowS, options.toleranceS),
    checkKeyid(member, options.expectedSigningDomain),
  ];
  const keyid = member.params.keyid;
  const keyidCheck = claims[3];
  const usableKeyid =
    keyid !== undefined &&
    keyidCheck !== undefined &&
    !keyidCheck.skipped &&
    !(!keyidCheck.pass && keyidCheck.rule === G4);

  // 7–8 ahead of time: when the key is at hand (nobody is asked) and none of 3–6 failed, its import and the
  // verification start now (or were started by the caller before the body had arrived, see
  // startSignatureCheck) and run while the body is hashed and the caller goes on.
  let early: SignatureCheckStarted | undefined;
  if (usableKeyid && keyid !== undefined && claims.every((c) => c.pass)) {
    const started = options.started;
    // Only for this very message: a check started on another request's headers proves nothing here.
    if (started !== undefined && started.view === view && started.keyid === keyid && started.member === member) {
      early = started;
    } else {
      const known = options.knownKey?.(keyid);
      if (known !== undefined) early = startKeyAndSignature(view, member, keyid, known, options.importKey, fields);
    }
  }

  if (typeof digestCheck === "function") {
    checks.push(await digestCheck());
    if (stop()) return done();
  }
  for (const check of claims) {
    checks.push(check);
    if (stop()) return done({ member });
  }

  // 7. The key published at the keyid (G4).
  let key: CryptoKey | undefined;
  if (!usableKeyid || keyid === undefined) {
    checks.push(skipped("key", G4, "no usable keyid"));
  } else {
    // A key at hand (an importer's cache had it) is taken as it is, without a turn of waiting.
    const found =
      early === undefined
        ? await checkKey(keyid, options.resolveKey, options.importKey)
        : early.key instanceof Promise
          ? await early.key
          : early.key;
    checks.push(found.check);
    key = found.key;
  }
  if (stop()) return done({ member });

  // 8. The signature itself (AUTH-5), over the components as the message has them.
  const signature =
    key === undefined
      ? undefined
      : early !== undefined
        ? await early.signature
        : await verifySignature(view, member, key, fields);
  checks.push(signature ?? skipped("signature", R.check, "no key"));
  const domain = keyid === undefined ? undefined : signingDomainOfKeyid(keyid);
  return done({ member, ...(domain?.ok ? { signingDomain: domain.value } : {}) });
}

/**
 * Steps 7 and 8 begun ahead of the body: the key import (answered at once by
 * a cache) and the Ed25519 verification, which needs only the headers. What
 * {@link startSignatureCheck} returns, for {@link ProfileOptions.started}.
 */
export interface SignatureCheckStarted {
  /** The message it checks: {@link verifyDelivery} uses it only when given this very view. */
  readonly view: HttpMessageView;
  readonly keyid: string;
  /** The Signature-Input member it checks: the run uses it only for this very member. */
  readonly member: SignatureInputMember;
  readonly key: KeyCheck | Promise<KeyCheck>;
  readonly signature: Promise<ProfileCheck | undefined>;
}

/**
 * Starts the signature's key import and verification from the headers alone,
 * before the body has arrived, when they will be needed and nobody has to be
 * asked for the key: the first signature's member is well-formed, covers the
 * profile's components, its `alg` and keyid are acceptable, and `knownKey`
 * has the key record. `undefined` when not; {@link verifyDelivery} then does
 * it all in its turn. Nothing here decides an answer: the verdict, in G10's
 * order, is still {@link verifyDelivery}'s, which takes this as `started`.
 */
export function startSignatureCheck(
  request: Request | HttpMessageView,
  options: Pick<ProfileOptions, "signatureFields" | "knownKey" | "importKey" | "expectedSigningDomain">,
): SignatureCheckStarted | undefined {
  const view = request instanceof Request ? fromRequest(request) : request;
  const inputHeader = headerValue(view, "signature-input");
  const signatureHeader = headerValue(view, "signature");
  if (inputHeader === undefined || signatureHeader === undefined || options.knownKey === undefined) return undefined;
  const fields = signatureFieldsFor(inputHeader, signatureHeader, options.signatureFields);
  if (!fields.inputs.ok || !fields.signatures.ok) return undefined;
  const member = [...fields.inputs.value.values()][0];
  const keyid = member?.params.keyid;
  if (member === undefined || keyid === undefined || !fields.signatures.value.has(member.label)) return undefined;
  if (!checkComponents(member).pass || !checkAlgorithm(member).pass) return undefined;
  if (!checkKeyid(member, options.expectedSigningDomain).pass) return undefined;
  const known = options.knownKey(keyid);
  if (known === undefined) return undefined;
  return startKeyAndSignature(view, member, keyid, known, options.importKey, fields);
}

function startKeyAndSignature(
  view: HttpMessageView,
  member: SignatureInputMember,
  keyid: string,
  lookup: KeyRecordLookup,
  importKey: KeyImporter | undefined,
  fields: ParsedSignatureFields | undefined,
): SignatureCheckStarted {
  const key = keyCheckOf(keyid, lookup, importKey);
  const signature =
    key instanceof Promise
      ? key.then((found) => verifySignature(view, member, found.key, fields))
      : verifySignature(view, member, key.key, fields);
  // Settled even when an earlier check decides the answer and nobody awaits it.
  signature.catch(() => {});
  return { view, keyid, member, key, signature };
}

/** Step 8: the Ed25519 signature over the signature base; `undefined` without a key. */
async function verifySignature(
  view: HttpMessageView,
  member: SignatureInputMember,
  key: CryptoKey | undefined,
  fields: ParsedSignatureFields | undefined,
): Promise<ProfileCheck | undefined> {
  if (key === undefined) return undefined;
  const result = await verifyRequestSignature(view, {
    label: member.label,
    keyLookup: () => key,
    algorithms: [PROFILE_ALGORITHM],
    ...(fields !== undefined && { parsedFields: fields }),
  });
  return result.ok
    ? passed("signature", R.check, `ed25519 signature ${member.label} verifies`)
    : failed("signature", R.check, `${result.reason}: ${violationText(result.violations)}`);
}

/**
 * Every check of the profile on a delivery, in order, one line each, going on
 * past a failure wherever the later check can still run (a lint tool shows
 * them all). Checks that cannot run are listed as skipped.
 */
export async function profileChecks(
  request: Request | HttpMessageView,
  body: Uint8Array,
  options: ProfileOptions,
): Promise<readonly ProfileCheck[]> {
  return (await run(request, body, options, false)).checks;
}

/**
 * The receiver's signature verdict on a delivery (G10's "digest matches body"
 * and "signature" steps, with the header-shape step for the three signature
 * headers before them), stopping at the first failure:
 *
 * 1. Signature-Input / Signature present and well-formed, else 400 `invalid_request`;
 * 2. Content-Digest well-formed (else 400) and equal to the body's digest (else 401);
 * 3. G2 components and `created`/`keyid` present; 4. G1 `alg`; 5. G3 `created`;
 * 6. G4 keyid form (and domain, if expected); 7. G4 key record; 8. the Ed25519 signature.
 *
 * Steps 3–6 come before the DNS lookup and the cryptography so that a request
 * the profile refuses anyway costs no lookup. All of 2–8 answer 401
 * `invalid_signature`, so the order among them only changes which reason is
 * reported; a DNS failure of the key lookup answers `temporary_failure`.
 */
export async function verifyDelivery(
  request: Request | HttpMessageView,
  body: Uint8Array,
  options: ProfileOptions,
): Promise<ProfileVerdict> {
  const result = await run(request, body, options, true);
  const failure = result.checks.find((c) => !c.pass && !c.skipped);
  if (failure !== undefined) {
    return {
      ok: false,
      check: failure.check,
      rule: failure.rule,
      problem: failure.problem ?? "invalid_signature",
      detail: failure.detail,
    };
  }
  const { member, signingDomain } = result;
  const created = member?.params.created;
  const keyid = member?.params.keyid;
  if (member === undefined || signingDomain === undefined || created === undefined || keyid === undefined) {
    // Unreachable when every check passed; kept so the verdict never claims more than was checked.
    return {
      ok: false,
      check: "signature",
      rule: R.check,
      problem: "invalid_signature",
      detail: "the signature could not be checked",
    };
  }
  return { ok: true, signingDomain, keyid, created, label: member.label };
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

function violationText(violations: readonly Violation[]): string {
  return violations.map((v) => v.message).join("; ");
}
