/**
 * What the request-level checks decide, written once for the two walks of `checks.ts`'s order: the
 * handler's steps (requestSteps.ts), which stop at the first failure and answer with a problem, and the
 * dry walk of lintChecks.ts, which goes on and says what each check found. Pure functions of the request
 * and the configuration: no state, no side effect.
 */
import { parseMailbox } from "../protocol/mailbox.ts";
import { parseMultipartBody } from "../protocol/multipart.ts";
import type { MultipartContentType } from "../protocol/multipart.ts";
import { parseEnvelope, parseJson } from "../protocol/resources.ts";
import type { Envelope } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import type { SignatureInputMember } from "../protocol/signature.ts";
import { parseVersionPath } from "../protocol/versions.ts";
import type { WorkMeter } from "../protocol/work.ts";

/** POST-2, LIM-5: 1 to 128 characters of A-Z a-z 0-9 . _ ~ - */
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._~-]{1,128}$/;

/**
 * `version-path` (VER-1, VER-7, GET-10, ERR-14, POST-1): where a request goes. The capabilities document
 * is where a sender learns the versions, so it is served under /v1 even when v1 is not.
 */
export type VersionPathVerdict =
  /** POST /v1/messages: a delivery. */
  | { readonly kind: "delivery" }
  /** /v1/capabilities; `allowed` for GET and HEAD. */
  | { readonly kind: "capabilities"; readonly allowed: boolean }
  /** Not under a version segment (404 invalid_request). */
  | { readonly kind: "unversioned" }
  /** Under a version not served (404 unsupported_version, VER-7). */
  | { readonly kind: "unsupported"; readonly segment: string }
  /** Under a version served but not implemented: Mailscope implements v1 only (404). */
  | { readonly kind: "unimplemented"; readonly segment: string }
  /** A path of v1 that is no resource (404). */
  | { readonly kind: "no-resource"; readonly segment: string }
  /** /v1/messages with another method than POST (405). */
  | { readonly kind: "method" };

/** See {@link VersionPathVerdict}. */
export function versionPathVerdict(method: string, path: string, versions: readonly string[]): VersionPathVerdict {
  // The two paths every request of the protocol asks for, answered without reading the path's segments.
  if (path === "/v1/messages" && versions.includes("v1")) return method === "POST" ? DELIVERY : METHOD;
  if (path === "/v1/capabilities") return method === "GET" || method === "HEAD" ? CAPABILITIES : CAPABILITIES_NOT;
  const version = parseVersionPath(path);
  if (!version.versioned) return { kind: "unversioned" };
  if (version.segment === "v1" && version.rest === "/capabilities") {
    return { kind: "capabilities", allowed: method === "GET" || method === "HEAD" };
  }
  if (!versions.includes(version.segment)) return { kind: "unsupported", segment: version.segment };
  if (version.segment !== "v1") return { kind: "unimplemented", segment: version.segment };
  if (version.rest !== "/messages") return { kind: "no-resource", segment: version.segment };
  return method === "POST" ? { kind: "delivery" } : { kind: "method" };
}

const DELIVERY: VersionPathVerdict = { kind: "delivery" };
const METHOD: VersionPathVerdict = { kind: "method" };
const CAPABILITIES: VersionPathVerdict = { kind: "capabilities", allowed: true };
const CAPABILITIES_NOT: VersionPathVerdict = { kind: "capabilities", allowed: false };

/** `headers` (POST-2, LIM-5): what is wrong with an Idempotency-Key (`null`: the header is missing), or undefined. */
export function idempotencyKeyViolation(key: string | null): Violation | undefined {
  const path = "headers.Idempotency-Key";
  if (key === null) return { path, rule: "POST-2", message: "the Idempotency-Key header is missing" };
  if (key.length < 1 || key.length > 128) {
    return { path, rule: "LIM-5", message: `the Idempotency-Key has ${key.length} characters; 1 to 128 are allowed` };
  }
  if (!IDEMPOTENCY_KEY.test(key)) {
    return { path, rule: "POST-2", message: "the Idempotency-Key may hold only A-Z a-z 0-9 . _ ~ -" };
  }
  return undefined;
}

/** `headers` (POST-3): the profile reads the first signature, so its label must be in Signature too. */
export function firstLabelViolation(
  first: SignatureInputMember | undefined,
  signatures: ReadonlyMap<string, Uint8Array>,
): Violation | undefined {
  if (first === undefined || signatures.has(first.label)) return undefined;
  return {
    path: "headers.Signature",
    rule: "POST-3",
    message: `Signature has no member "${first.label}", which Signature-Input names first`,
  };
}

/** The body of a delivery parsed (`envelope`), and the envelope's JSON as far as it got. */
export type ParsedBody =
  | {
      readonly ok: true;
      readonly envelope: Envelope;
      readonly message: Uint8Array;
      readonly json: unknown;
      readonly fromDomain?: string;
    }
  | {
      readonly ok: false;
      /** Where it failed: the two parts (POST-7), the envelope's JSON (POST-8), the Envelope (ENV-*, MBX-*). */
      readonly stage: "multipart" | "json" | "envelope";
      readonly violations: readonly Violation[];
      readonly json?: unknown;
      readonly fromDomain?: string;
    };

/**
 * `envelope` (POST-7, POST-8, ENV-1 to ENV-8): a body of two parts whose first is a valid Envelope of at
 * most `maxRecipients` (ENV-8 checked before any recipient is read). `from-domain` reads its `fromDomain`.
 */
export function parseBody(
  body: Uint8Array,
  contentType: string | MultipartContentType,
  options: { readonly maxRecipients: number; readonly work?: WorkMeter | undefined },
): ParsedBody {
  const multipart = parseMultipartBody(body, contentType);
  if (!multipart.ok) return { ok: false, stage: "multipart", violations: multipart.violations };
  const json = parseJson(multipart.value.envelopeJson, "$", "POST-8");
  if (!json.ok) return { ok: false, stage: "json", violations: json.violations };
  const fromDomain = fromDomainOf(json.value);
  const envelope = parseEnvelope(json.value, {
    maxRecipients: options.maxRecipients,
    ...(options.work !== undefined && { work: options.work }),
  });
  if (!envelope.ok) {
    return {
      ok: false,
      stage: "envelope",
      violations: envelope.violations,
      json: json.value,
      ...(fromDomain !== undefined && { fromDomain }),
    };
  }
  return {
    ok: true,
    envelope: envelope.value,
    message: multipart.value.message,
    json: json.value,
    ...(fromDomain !== undefined && { fromDomain }),
  };
}

/** `from-domain` (AUTH-4): the domain of the envelope's `from` when it is a valid mailbox; undefined for null or anything invalid (left to `envelope`). */
export function fromDomainOf(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const from = (json as Record<string, unknown>)["from"];
  if (typeof from !== "string") return undefined;
  const parsed = parseMailbox(from);
  return parsed.ok ? parsed.value.domain : undefined;
}

/** `from-domain` (AUTH-4, G19): the words of a `from` in another domain than the signature's. */
export function fromDomainMismatch(fromDomain: string, signingDomain: string): string {
  return `the envelope from is in ${fromDomain}, but the signature is by ${signingDomain}`;
}

/** `from-domain`'s answer under G19's reading: 401 invalid_signature, or 403 policy_rejected. */
export function fromDomainAnswer(g19: "401" | "403"): {
  readonly status: 401 | 403;
  readonly problem: "invalid_signature" | "policy_rejected";
} {
  return g19 === "403" ? { status: 403, problem: "policy_rejected" } : { status: 401, problem: "invalid_signature" };
}
