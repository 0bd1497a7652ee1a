/**
 * `mailscope lint-request FILE`: reads a raw HTTP/1.1 request (as captured,
 * or hand-written) and runs the receiver's checks of POST /v1/messages on it
 * in G10's order (`app/receiver/checks.ts`), one line per check: pass or fail,
 * the rule, and the answer a receiver would give.
 *
 * The signature is checked twice over: once as RFC 9421 alone, whatever
 * components it covers and whatever algorithm its key has (so the RFC's own
 * examples can be checked, with keys from a JWKS file), and then against
 * Mailscope's profile (G1–G4: required components, ed25519, `created` within
 * the tolerance, the keyid's form). Checks that need the receiver's memory
 * (idempotency, rate limits) or its mailboxes are not run.
 */
import { type CliIo } from "./io.ts";
import { Command, CommanderError } from "commander";
import { webcrypto } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseContentDigest, verifyContentDigest } from "../protocol/digest.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import { parseContentType, parseMultipartBody } from "../protocol/multipart.ts";
import {
  checkAlgorithm,
  checkComponents,
  checkCreated,
  checkKeyid,
  DEFAULT_TOLERANCE_S,
  importPublicKeyRaw,
  parseKeyRecord,
  PROFILE_ALGORITHM,
  signingDomainOfKeyid,
  type ProfileCheck,
} from "../protocol/profile.ts";
import { DEFAULT_MAX_RECIPIENTS, MIN_MAX_MESSAGE_SIZE, parseEnvelope, parseJson } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import {
  parseSignature,
  parseSignatureInput,
  verifyRequestSignature,
  type SignatureInputMember,
} from "../protocol/signature.ts";
import { parseVersionPath } from "../protocol/versions.ts";
import type { ReceiverCheckId } from "../receiver/checks.ts";
import type { ReceiverConfig } from "../receiver/config.ts";
import {
  formatRawHttpProblems,
  parseRawHttpRequest,
  type RawHttpProblem,
  type RawHttpRequest,
} from "../node/rawHttp.ts";
import { formatConfigError, loadReceiverConfigFile } from "../node/receiverConfigFile.ts";

type Key = webcrypto.CryptoKey;

/** pass, fail, or not run (an earlier failure or missing input left nothing to check). */
export type LintStatus = "pass" | "fail" | "skip";

/** One line of the report: one check of the receiver. */
export interface LintLine {
  /** The check, e.g. `signature`, `header idempotency-key`, `components`. */
  readonly check: string;
  /** The step of G10's order it belongs to (`receiverChecks`). */
  readonly step: ReceiverCheckId;
  readonly status: LintStatus;
  /** The rule ID (or gap ID) the check enforces. */
  readonly rule: string;
  readonly detail: string;
  /** What a receiver answers when this is the first failing check. */
  readonly answer?: { readonly status: number; readonly problem: ProblemIdentifier };
}

/** A set of verification keys by keyid, from a JWKS file or a receiver configuration's key records. */
export interface LintKeys {
  /** The key for a keyid, imported for the algorithm the signature names (or the JWK's `alg`). */
  lookup(keyid: string | undefined, alg?: string): Promise<{ key: Key; source: string } | undefined>;
}

/** What {@link lintRequest} needs. */
export interface LintOptions {
  /** The receiver's clock, seconds since the epoch. */
  readonly nowS: number;
  readonly keys?: LintKeys;
  /** A receiver's configuration: its versions, limits, served domains, G3 tolerance and key records. */
  readonly config?: ReceiverConfig;
}

const ANSWER = {
  notFound: { status: 404, problem: "invalid_request" },
  unsupported: { status: 404, problem: "unsupported_version" },
  method: { status: 405, problem: "invalid_request" },
  badRequest: { status: 400, problem: "invalid_request" },
  tooLarge: { status: 413, problem: "message_too_large" },
  badSignature: { status: 401, problem: "invalid_signature" },
} as const satisfies Record<string, LintLine["answer"]>;

/** The steps not run offline: they need the receiver's state. */
export const NOT_LINTED =
  "idempotency, rate limit, policy and the per-recipient checks (they need the receiver's state)";

/**
 * Runs the receiver's checks on a parsed request, in G10's order, one line
 * per check, going on past failures wherever a later check can still run.
 */
export async function lintRequest(parsed: RawHttpRequest, options: LintOptions): Promise<LintLine[]> {
  const lines: LintLine[] = [];
  const add = (line: LintLine): void => {
    lines.push(line);
  };
  const config = options.config;
  const versions = config?.capabilities.versions ?? ["v1"];
  const maxSize = config?.capabilities.max_message_size ?? MIN_MAX_MESSAGE_SIZE;
  const maxRecipients = config?.capabilities.max_recipients ?? DEFAULT_MAX_RECIPIENTS;
  const toleranceS = config?.readings.G3.toleranceS ?? DEFAULT_TOLERANCE_S;
  const view = parsed.view;
  const header = (name: string): string | undefined => {
    const values = view.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
    return values.length === 0 ? undefined : values.join(", ");
  };

  // ── version-path (404) and the resource ──────────────────────────
  const path = new URL(parsed.url).pathname;
  const version = parseVersionPath(path);
  if (!version.versioned) {
    add({
      check: "version-path",
      step: "version-path",
      status: "fail",
      rule: "POST-1",
      detail: `${path} is not a path of the service: deliveries go to /v1/messages`,
      answer: ANSWER.notFound,
    });
  } else if (!versions.includes(version.segment)) {
    add({
      check: "version-path",
      step: "version-path",
      status: "fail",
      rule: "VER-7",
      detail: `${version.segment} is not served (served: ${versions.join(", ")})`,
      answer: ANSWER.unsupported,
    });
  } else if (version.rest !== "/messages") {
    add({
      check: "version-path",
      step: "version-path",
      status: "fail",
      rule: "POST-1",
      detail: `${path} is not /${version.segment}/messages`,
      answer: ANSWER.notFound,
    });
  } else if (parsed.method !== "POST") {
    add({
      check: "version-path",
      step: "version-path",
      status: "fail",
      rule: "POST-1",
      detail: `${parsed.method} ${path}: deliveries are POSTed`,
      answer: ANSWER.method,
    });
  } else {
    add({ check: "version-path", step: "version-path", status: "pass", rule: "VER-1", detail: `POST ${path}` });
  }

  // ── headers (400), one line each ─────────────────────────────────
  const key = header("idempotency-key");
  add(
    key === undefined
      ? headerLine("idempotency-key", "POST-2", "the Idempotency-Key header is missing")
      : key.length < 1 || key.length > 128
        ? headerLine(
            "idempotency-key",
            "LIM-5",
            `the Idempotency-Key has ${key.length} characters; 1 to 128 are allowed`,
          )
        : !/^[A-Za-z0-9._~-]+$/.test(key)
          ? headerLine("idempotency-key", "POST-2", "the Idempotency-Key may hold only A-Z a-z 0-9 . _ ~ -")
          : headerLine("idempotency-key", "POST-2", `${key}`, true),
  );
  const inputHeader = header("signature-input");
  const signatureHeader = header("signature");
  let member: SignatureInputMember | undefined;
  if (inputHeader === undefined) {
    add(headerLine("signature-input", "POST-4", "the Signature-Input header is missing"));
  } else {
    const inputs = parseSignatureInput(inputHeader);
    if (!inputs.ok) add(headerLine("signature-input", "POST-4", text(inputs.violations)));
    else {
      member = [...inputs.value.values()][0];
      const more = inputs.value.size > 1 ? ` (and ${inputs.value.size - 1} more; the first is checked)` : "";
      add(
        headerLine(
          "signature-input",
          "POST-4",
          `signature ${member?.label ?? "?"}: ${member?.signatureParams ?? ""}${more}`,
          true,
        ),
      );
    }
  }
  if (signatureHeader === undefined) {
    add(headerLine("signature", "POST-3", "the Signature header is missing"));
  } else {
    const signatures = parseSignature(signatureHeader);
    if (!signatures.ok) add(headerLine("signature", "POST-3", text(signatures.violations)));
    else if (member !== undefined && !signatures.value.has(member.label)) {
      add(
        headerLine(
          "signature",
          "POST-3",
          `Signature has no member "${member.label}", which Signature-Input names first`,
        ),
      );
    } else
      add(
        headerLine(
          "signature",
          "POST-3",
          `${signatures.value.size} signature${signatures.value.size === 1 ? "" : "s"}`,
          true,
        ),
      );
  }
  const digestHeader = header("content-digest");
  let digestUsable = false;
  if (digestHeader === undefined) {
    add(headerLine("content-digest", "POST-5", "the Content-Digest header is missing"));
  } else {
    const digest = parseContentDigest(digestHeader);
    digestUsable = digest.ok;
    add(
      digest.ok
        ? headerLine("content-digest", "POST-5", [...digest.value.keys()].join(", "), true)
        : headerLine("content-digest", "POST-5", text(digest.violations)),
    );
  }
  const contentTypeHeader = header("content-type");
  const contentType = parseContentType(contentTypeHeader ?? null);
  add(
    contentType.ok
      ? headerLine("content-type", "POST-6", `multipart/mixed, boundary ${contentType.value.boundary}`, true)
      : headerLine("content-type", "POST-6", text(contentType.violations)),
  );

  // ── size (413) ───────────────────────────────────────────────────
  const size = parsed.body.length;
  add(
    size > maxSize
      ? {
          check: "size",
          step: "size",
          status: "fail",
          rule: "ERR-12",
          detail: `the body has ${size} bytes, over max_message_size ${maxSize}`,
          answer: ANSWER.tooLarge,
        }
      : { check: "size", step: "size", status: "pass", rule: "LIM-2", detail: `${size} bytes, at most ${maxSize}` },
  );

  // ── digest (401) ─────────────────────────────────────────────────
  if (digestHeader === undefined || !digestUsable) {
    add({
      check: "digest",
      step: "digest",
      status: "skip",
      rule: "POST-5",
      detail: "not checked: no usable Content-Digest",
    });
  } else {
    const verdict = await verifyContentDigest(parsed.body, digestHeader);
    add(
      verdict.ok
        ? {
            check: "digest",
            step: "digest",
            status: "pass",
            rule: "POST-5",
            detail: `${verdict.algorithm} matches the body`,
          }
        : {
            check: "digest",
            step: "digest",
            status: "fail",
            rule: "POST-5",
            detail: verdict.violation.message,
            answer: ANSWER.badSignature,
          },
    );
  }

  // ── signature (401): RFC 9421 as such, any components, any algorithm ──
  let verifiedAlgorithm: string | undefined;
  if (member === undefined || signatureHeader === undefined) {
    add({
      check: "signature",
      step: "signature",
      status: "skip",
      rule: "AUTH-5",
      detail: "not checked: no usable Signature-Input and Signature",
    });
  } else {
    let source: string | undefined;
    const keys = options.keys;
    const result = await verifyRequestSignature(view, {
      label: member.label,
      nowS: options.nowS,
      keyLookup: async (keyid, alg) => {
        const found = await keys?.lookup(keyid, alg);
        source = found?.source;
        return found?.key as CryptoKey | undefined;
      },
    });
    const covered = member.components
      .map(
        (c) =>
          `"${c.name}"${Object.entries(c.params ?? {})
            .map(([k, v]) => (v === true ? `;${k}` : `;${k}=${JSON.stringify(v)}`))
            .join("")}`,
      )
      .join(" ");
    if (result.ok) {
      verifiedAlgorithm = result.algorithm;
      add({
        check: "signature",
        step: "signature",
        status: "pass",
        rule: "AUTH-5",
        detail: `${result.algorithm} signature ${result.label} over (${covered}) verifies with ${source ?? "the key"}`,
      });
    } else {
      const hint =
        result.reason === "unknown-key" ? "; give the key with --keys jwks.json or the keyRecords of --config" : "";
      add({
        check: "signature",
        step: "signature",
        status: "fail",
        rule: "AUTH-5",
        detail: `${result.reason}: ${text(result.violations)}${hint}`,
        answer: ANSWER.badSignature,
      });
    }
  }

  // ── the profile (G1–G4, 401) ─────────────────────────────────────
  if (member === undefined) {
    for (const [check, rule] of [
      ["components", "G2"],
      ["algorithm", "G1"],
      ["created", "G3"],
      ["keyid", "G4"],
    ] as const) {
      add({ check, step: "signature", status: "skip", rule, detail: "not checked: no usable Signature-Input" });
    }
  } else {
    add(profileLine(checkComponents(member)));
    const algorithm = checkAlgorithm(member);
    if (algorithm.pass && verifiedAlgorithm !== undefined && verifiedAlgorithm !== PROFILE_ALGORITHM) {
      add({
        check: "algorithm",
        step: "signature",
        status: "fail",
        rule: "G1",
        detail: `the key is ${verifiedAlgorithm}; the profile signs with ${PROFILE_ALGORITHM} only`,
        answer: ANSWER.badSignature,
      });
    } else {
      add(profileLine(algorithm));
    }
    add(profileLine(checkCreated(member, options.nowS, toleranceS)));
    add(profileLine(checkKeyid(member)));
  }
  const keyid = member?.params.keyid;
  const signingDomain = keyid === undefined ? undefined : signingDomainOfKeyid(keyid);

  // ── the body: from-domain (401), envelope (400), mailboxes, recipient-domain ──
  let envelopeJson: unknown;
  let bodyProblem: string | undefined;
  if (!contentType.ok) {
    bodyProblem = "no multipart/mixed Content-Type to split the body by";
  } else {
    const multipart = parseMultipartBody(parsed.body, contentTypeHeader ?? "");
    if (!multipart.ok) bodyProblem = text(multipart.violations);
    else {
      const json = parseJson(multipart.value.envelopeJson, "$", "POST-8");
      if (!json.ok) bodyProblem = text(json.violations);
      else envelopeJson = json.value;
    }
  }
  const from = fromOf(envelopeJson);
  if (bodyProblem !== undefined || envelopeJson === undefined) {
    add({
      check: "from-domain",
      step: "from-domain",
      status: "skip",
      rule: "AUTH-4",
      detail: "not checked: no envelope",
    });
  } else if (signingDomain === undefined || !signingDomain.ok) {
    add({
      check: "from-domain",
      step: "from-domain",
      status: "skip",
      rule: "AUTH-4",
      detail: "not checked: no signing domain (the keyid is not of the G4 form)",
    });
  } else if (from === null) {
    add({
      check: "from-domain",
      step: "from-domain",
      status: "pass",
      rule: "AUTH-4",
      detail: "null from (a DSN): no domain to compare",
    });
  } else if (from === undefined || from.domain !== signingDomain.value) {
    add({
      check: "from-domain",
      step: "from-domain",
      status: from === undefined ? "skip" : "fail",
      rule: "AUTH-4",
      detail:
        from === undefined
          ? "not checked: the envelope from is not a mailbox"
          : `the envelope from is in ${from.domain}, but the signature is by ${signingDomain.value} (G19)`,
      ...(from !== undefined && {
        answer:
          config?.readings.G19 === "403" ? { status: 403, problem: "policy_rejected" as const } : ANSWER.badSignature,
      }),
    });
  } else {
    add({
      check: "from-domain",
      step: "from-domain",
      status: "pass",
      rule: "AUTH-4",
      detail: `${from.domain} is the signing domain`,
    });
  }

  if (bodyProblem !== undefined || envelopeJson === undefined) {
    add({
      check: "body",
      step: "envelope",
      status: "fail",
      rule: "POST-7",
      detail: bodyProblem ?? "no envelope",
      answer: ANSWER.badRequest,
    });
    add({
      check: "envelope",
      step: "envelope",
      status: "skip",
      rule: "ENV-1",
      detail: "not checked: no envelope part",
    });
    add({
      check: "mailboxes",
      step: "envelope",
      status: "skip",
      rule: "MBX-1",
      detail: "not checked: no envelope part",
    });
    add({
      check: "recipient-domain",
      step: "recipient-domain",
      status: "skip",
      rule: "POST-22",
      detail: "not checked: no envelope part",
    });
  } else {
    add({
      check: "body",
      step: "envelope",
      status: "pass",
      rule: "POST-7",
      detail: "two parts: application/json, message/rfc822",
    });
    const envelope = parseEnvelope(envelopeJson, { maxRecipients });
    const violations = envelope.ok ? [] : envelope.violations;
    const mailboxViolations = violations.filter((v) => v.rule.startsWith("MBX-"));
    const otherViolations = violations.filter((v) => !v.rule.startsWith("MBX-"));
    add(
      otherViolations.length > 0
        ? {
            check: "envelope",
            step: "envelope",
            status: "fail",
            rule: otherViolations[0]?.rule ?? "ENV-1",
            detail: pathText(otherViolations),
            answer: ANSWER.badRequest,
          }
        : { check: "envelope", step: "envelope", status: "pass", rule: "ENV-1", detail: envelopeSummary(envelopeJson) },
    );
    // ENV-8 comes first, on the length of `to` alone: the recipients of a `to` that is too long are not read.
    const tooMany = otherViolations.some((v) => v.rule === "ENV-8");
    add(
      tooMany
        ? {
            check: "mailboxes",
            step: "envelope",
            status: "skip",
            rule: "MBX-1",
            detail: `not checked: "to" has more than ${maxRecipients} recipients (ENV-8 comes first)`,
          }
        : mailboxViolations.length > 0
          ? {
              check: "mailboxes",
              step: "envelope",
              status: "fail",
              rule: mailboxViolations[0]?.rule ?? "MBX-1",
              detail: pathText(mailboxViolations),
              answer: ANSWER.badRequest,
            }
          : {
              check: "mailboxes",
              step: "envelope",
              status: "pass",
              rule: "MBX-1",
              detail: "every mailbox is well-formed",
            },
    );
    const domain = envelope.ok ? envelope.value.to[0]?.domain : undefined;
    if (config === undefined) {
      add({
        check: "recipient-domain",
        step: "recipient-domain",
        status: "skip",
        rule: "POST-22",
        detail: "not checked: which domains are served? (give --config)",
      });
    } else if (domain === undefined) {
      add({
        check: "recipient-domain",
        step: "recipient-domain",
        status: "skip",
        rule: "POST-22",
        detail: "not checked: no valid envelope",
      });
    } else if (!config.domains.includes(domain)) {
      add({
        check: "recipient-domain",
        step: "recipient-domain",
        status: "fail",
        rule: "POST-22",
        detail: `${domain} is not served here (served: ${config.domains.join(", ")})`,
        answer: ANSWER.badRequest,
      });
    } else {
      add({
        check: "recipient-domain",
        step: "recipient-domain",
        status: "pass",
        rule: "POST-22",
        detail: `${domain} is served here`,
      });
    }
  }
  return lines;
}

function headerLine(name: string, rule: string, detail: string, pass = false): LintLine {
  return pass
    ? { check: `header ${name}`, step: "headers", status: "pass", rule, detail }
    : { check: `header ${name}`, step: "headers", status: "fail", rule, detail, answer: ANSWER.badRequest };
}

function profileLine(check: ProfileCheck): LintLine {
  const status: LintStatus = check.pass ? "pass" : check.skipped ? "skip" : "fail";
  return {
    check: check.check,
    step: "signature",
    status,
    rule: check.rule,
    detail: check.detail,
    ...(status === "fail" && { answer: ANSWER.badSignature }),
  };
}

function fromOf(json: unknown): { domain: string } | null | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const from = (json as Record<string, unknown>)["from"];
  if (from === null) return null;
  if (typeof from !== "string" || !from.includes("@")) return undefined;
  return {
    domain: from
      .slice(from.lastIndexOf("@") + 1)
      .toLowerCase()
      .replace(/\.$/, ""),
  };
}

function envelopeSummary(json: unknown): string {
  const record = json as { from?: unknown; to?: unknown };
  const to = Array.isArray(record.to) ? record.to.length : 0;
  return `from ${record.from === null ? "null" : String(record.from)}, ${to} recipient${to === 1 ? "" : "s"}`;
}

function text(violations: readonly Violation[]): string {
  return violations.map((v) => v.message).join("; ");
}

function pathText(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.path}: ${v.message} [${v.rule}]`).join("; ");
}

// ── Keys ──────────────────────────────────────────────────────────────

interface JwkEntry {
  readonly index: number;
  readonly jwk: Readonly<Record<string, unknown>>;
}

/**
 * The keys of a JWKS (RFC 7517: `{ "keys": [...] }`, or one JWK, or an
 * array), looked up by `kid`. Supported: OKP Ed25519, EC P-256 and P-384,
 * RSA (RSA-PSS SHA-512 or PKCS#1 v1.5 SHA-256, by the JWK's `alg`, else the
 * signature's, else PSS), and oct (HMAC SHA-256). Only public parts are used.
 *
 * @throws Error naming the file and the key when the text is not a JWKS.
 */
export function jwksKeys(textValue: string, file: string): LintKeys {
  let json: unknown;
  try {
    json = JSON.parse(textValue);
  } catch (error) {
    throw new Error(`${file}: not JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  const list: unknown[] = Array.isArray(json)
    ? json
    : typeof json === "object" && json !== null && Array.isArray((json as { keys?: unknown }).keys)
      ? (json as { keys: unknown[] }).keys
      : typeof json === "object" && json !== null && "kty" in json
        ? [json]
        : [];
  if (list.length === 0) throw new Error(`${file}: no keys (expected {"keys": [ ...JWK ]})`);
  const entries: JwkEntry[] = list.map((jwk, index) => {
    if (typeof jwk !== "object" || jwk === null || typeof (jwk as { kty?: unknown }).kty !== "string") {
      throw new Error(`${file}: keys[${index}] is not a JWK (no "kty")`);
    }
    return { index, jwk: jwk as Record<string, unknown> };
  });
  const cache = new Map<string, Promise<Key>>();
  return {
    async lookup(keyid, alg) {
      const entry =
        entries.find((e) => e.jwk["kid"] === keyid) ??
        (entries.length === 1 && entries[0]?.jwk["kid"] === undefined ? entries[0] : undefined);
      if (entry === undefined) return undefined;
      const cacheKey = `${entry.index} ${alg ?? ""}`;
      let imported = cache.get(cacheKey);
      if (imported === undefined) {
        imported = importJwk(entry.jwk, alg).catch((error: unknown) => {
          throw new Error(
            `${file}: keys[${entry.index}]${typeof entry.jwk["kid"] === "string" ? ` (${entry.jwk["kid"]})` : ""} cannot be imported: ${error instanceof Error ? error.message : String(error)}`,
            { cause: error },
          );
        });
        cache.set(cacheKey, imported);
      }
      return { key: await imported, source: `key ${String(entry.jwk["kid"] ?? `#${entry.index}`)} from ${file}` };
    },
  };
}

/** A verification key from a JWK, for the RFC 9421 algorithm `alg` when given. */
async function importJwk(jwk: Readonly<Record<string, unknown>>, alg?: string): Promise<Key> {
  const subtle = webcrypto.subtle;
  const pick = (...names: string[]): webcrypto.JsonWebKey =>
    Object.fromEntries(names.filter((n) => jwk[n] !== undefined).map((n) => [n, jwk[n]])) as webcrypto.JsonWebKey;
  const jwkAlg = typeof jwk["alg"] === "string" ? jwk["alg"] : undefined;
  switch (jwk["kty"]) {
    case "OKP":
      if (jwk["crv"] !== "Ed25519") throw new Error(`OKP curve ${String(jwk["crv"])} is not supported (Ed25519 is)`);
      return subtle.importKey("jwk", pick("kty", "crv", "x"), { name: "Ed25519" }, true, ["verify"]);
    case "EC":
      if (jwk["crv"] !== "P-256" && jwk["crv"] !== "P-384")
        throw new Error(`EC curve ${String(jwk["crv"])} is not supported (P-256, P-384 are)`);
      return subtle.importKey("jwk", pick("kty", "crv", "x", "y"), { name: "ECDSA", namedCurve: jwk["crv"] }, true, [
        "verify",
      ]);
    case "RSA": {
      const pkcs1 = jwkAlg === "RS256" || (jwkAlg === undefined && alg === "rsa-v1_5-sha256");
      return subtle.importKey(
        "jwk",
        pick("kty", "n", "e"),
        pkcs1 ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } : { name: "RSA-PSS", hash: "SHA-512" },
        true,
        ["verify"],
      );
    }
    case "oct":
      return subtle.importKey("jwk", pick("kty", "k"), { name: "HMAC", hash: "SHA-256" }, true, ["verify"]);
    default:
      throw new Error(`key type ${String(jwk["kty"])} is not supported`);
  }
}

/** Keys from a receiver configuration's `keyRecords` (G4 TXT records by keyid). */
export function keyRecordKeys(records: Readonly<Record<string, string>>, file: string): LintKeys {
  return {
    async lookup(keyid) {
      if (keyid === undefined) return undefined;
      const record = records[keyid];
      if (record === undefined) return undefined;
      const parsed = parseKeyRecord(record);
      if (!parsed.ok) return undefined;
      return {
        key: (await importPublicKeyRaw(parsed.value.publicKey)) as Key,
        source: `the key record of ${keyid} in ${file}`,
      };
    },
  };
}

/** Tries each key set in turn. */
export function combineKeys(sets: readonly LintKeys[]): LintKeys {
  return {
    async lookup(keyid, alg) {
      for (const set of sets) {
        const found = await set.lookup(keyid, alg);
        if (found !== undefined) return found;
      }
      return undefined;
    },
  };
}

// ── Report ────────────────────────────────────────────────────────────

/** The whole result, as `--json` prints it. */
export interface LintReport {
  readonly file: string;
  readonly request: { readonly method: string; readonly url: string; readonly bodyBytes: number };
  readonly nowS: number;
  /** True when no check failed. */
  readonly ok: boolean;
  /** What a receiver would answer: the first failing check's answer; absent when all pass. */
  readonly answer?: { readonly status: number; readonly problem: ProblemIdentifier; readonly check: string };
  readonly warnings: readonly RawHttpProblem[];
  readonly checks: readonly LintLine[];
  readonly notChecked: string;
}

/** The report of a linted request. */
export function lintReport(
  file: string,
  parsed: RawHttpRequest,
  nowS: number,
  checks: readonly LintLine[],
): LintReport {
  const first = checks.find((c) => c.status === "fail" && c.answer !== undefined);
  return {
    file,
    request: { method: parsed.method, url: parsed.url, bodyBytes: parsed.body.length },
    nowS,
    ok: !checks.some((c) => c.status === "fail"),
    ...(first?.answer !== undefined && { answer: { ...first.answer, check: first.check } }),
    warnings: parsed.warnings,
    checks,
    notChecked: NOT_LINTED,
  };
}

/** The report as terminal lines: one per check, then a summary. */
export function formatLintReport(report: LintReport): string {
  const out: string[] = [];
  out.push(
    `${report.file}: ${report.request.method} ${report.request.url}, ${report.request.bodyBytes}-byte body, checked at ${new Date(report.nowS * 1000).toISOString().replace(".000Z", "Z")}`,
  );
  for (const line of formatRawHttpProblems(report.file, report.warnings))
    out.push(line.replace(/^([^:]*:\d+): /, "$1: warning: "));
  const width = Math.max(...report.checks.map((c) => c.check.length));
  for (const c of report.checks) {
    const mark = c.status === "pass" ? "PASS" : c.status === "fail" ? "FAIL" : "SKIP";
    const answer = c.status === "fail" && c.answer !== undefined ? `  → ${c.answer.status} ${c.answer.problem}` : "";
    out.push(`${mark}  ${c.check.padEnd(width)}  ${c.rule.padEnd(7)}  ${c.detail}${answer}`);
  }
  const count = (s: LintStatus): number => report.checks.filter((c) => c.status === s).length;
  out.push(`${count("pass")} passed, ${count("fail")} failed, ${count("skip")} not run.`);
  out.push(
    report.answer === undefined
      ? "A receiver would go on to its own checks; nothing here stops the request."
      : `A receiver answers the first failure: ${report.answer.status} ${report.answer.problem} (${report.answer.check}).`,
  );
  out.push(`Not checked here: ${report.notChecked}.`);
  return out.join("\n");
}

const RFC3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)$/;

/** Seconds since the epoch of an RFC 3339 time, or `undefined` when it is not one. */
export function parseRfc3339(value: string): number | undefined {
  if (!RFC3339.test(value)) return undefined;
  const ms = Date.parse(value.replace(" ", "T"));
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The options of the command. */
interface CommandOptions {
  readonly keys?: string;
  readonly now?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** Exit codes: 0 every check passes, 1 some check fails, 2 the input (or an option's file) cannot be read. */
export const EXIT = { ok: 0, failed: 1, unreadable: 2 } as const;

/**
 * Runs the command's work and returns its exit code (never throws for bad input).
 */
export async function runLintRequest(file: string, options: CommandOptions, io: CliIo): Promise<number> {
  const unreadable = (message: string): number => {
    io.err(`mailscope lint-request: ${message}`);
    return EXIT.unreadable;
  };
  let nowS = Math.floor(Date.now() / 1000);
  if (options.now !== undefined) {
    const parsedNow = parseRfc3339(options.now);
    if (parsedNow === undefined)
      return unreadable(`--now ${JSON.stringify(options.now)} is not an RFC 3339 time (e.g. 2021-04-20T02:07:55Z)`);
    nowS = parsedNow;
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (error) {
    return unreadable(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const keySets: LintKeys[] = [];
  if (options.keys !== undefined) {
    try {
      keySets.push(jwksKeys(await readFile(options.keys, "utf8"), options.keys));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return unreadable(code !== undefined ? `${options.keys}: cannot be read (${code})` : (error as Error).message);
    }
  }
  let config: ReceiverConfig | undefined;
  if (options.config !== undefined) {
    const loaded = await loadReceiverConfigFile(options.config);
    if (!loaded.ok) {
      for (const e of loaded.errors) io.err(formatConfigError(e));
      return unreadable(`${options.config}: not a valid receiver configuration`);
    }
    config = loaded.value;
    keySets.push(keyRecordKeys(config.keyRecords, options.config));
  }
  const parsed = parseRawHttpRequest(bytes);
  if (!parsed.ok) {
    for (const line of formatRawHttpProblems(file, parsed.errors)) io.err(line);
    return unreadable(`${file}: not a readable HTTP/1.1 request`);
  }
  let checks: LintLine[];
  try {
    checks = await lintRequest(parsed.value, {
      nowS,
      keys: combineKeys(keySets),
      ...(config !== undefined && { config }),
    });
  } catch (error) {
    // A key that cannot be imported is a bad --keys file.
    return unreadable((error as Error).message);
  }
  const report = lintReport(file, parsed.value, nowS, checks);
  io.out(options.json === true ? JSON.stringify(report, null, 2) : formatLintReport(report));
  return report.ok ? EXIT.ok : EXIT.failed;
}

/** `mailscope lint-request FILE [--keys jwks.json] [--now RFC3339] [--config receiver.yaml] [--json]`. */
export function lintRequestCommand(): Command {
  return new Command("lint-request")
    .description(
      "run the receiver's checks of POST /v1/messages on a raw HTTP/1.1 request, one line per check in the receiver's order (G10), with the rule and the answer a receiver would give",
    )
    .argument("<file>", "the request as raw HTTP/1.1 text (CRLF or LF line ends)")
    .option("--keys <jwks.json>", "verification keys by keyid, as a JWKS (e.g. examples/rfc9421-keys.json)")
    .option("--now <rfc3339>", "the receiver's clock, for the created check (default: now)")
    .option("--config <receiver.yaml>", "a receiver configuration: limits, served domains, G3 tolerance, keyRecords")
    .option("--json", "print the report as JSON")
    .addHelpText(
      "after",
      "\nExit status: 0 when every check passes, 1 when one fails, 2 when the input cannot be read.",
    )
    .action(async (file: string, options: CommandOptions) => {
      const code = await runLintRequest(file, options, {
        out: (t) => console.log(t),
        err: (t) => console.error(t),
      });
      if (code !== EXIT.ok) throw new CommanderError(code, "mailscope.lintRequest", "");
    });
}
