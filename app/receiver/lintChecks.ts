/**
 * The receiver's checks of POST /v1/messages run on one request, offline:
 * in G10's order (`checks.ts`), one line per check with pass, fail or not
 * run, the rule, and the answer a receiver would give when it is the first
 * failure. `mailscope lint-request` prints these lines for a file; the app's
 * inspector shows them for a request recorded in a trace
 * ({@link lintedRequestOfTraceEvent}).
 *
 * The signature is checked twice over: against Mailscope's profile (G1–G4:
 * required components, ed25519, `created` within the tolerance, the keyid's
 * form), and as RFC 9421 alone, whatever components it covers and whatever
 * algorithm its key has (so the RFC's own examples can be checked, with keys
 * from a JWKS). The lines come in `serve`'s order, so the first failure is
 * the reason it would give: the profile's claims, then the key and the
 * verification, then the Content-Digest against the body (decision 0017). Checks that need the receiver's memory
 * (idempotency, rate limits) or its mailboxes are not run.
 *
 * Web APIs only: no Node module, so it runs in the app as in the terminal.
 */
import { base64ToBytes } from "../protocol/base64.ts";
import { parseContentDigest, verifyContentDigest } from "../protocol/digest.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import { parseContentType, parseMultipartBody } from "../protocol/multipart.ts";
import {
  checkAlgorithm,
  checkComponents,
  checkCreated,
  checkKeyid,
  DEFAULT_TOLERANCE_S,
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
  type HttpMessageView,
  type SignatureInputMember,
} from "../protocol/signature.ts";
import { parseVersionPath } from "../protocol/versions.ts";
import type { ReceiverCheckId } from "./checks.ts";
import { lintReceiverConfigSchema, type ReceiverConfig, type ReceiverConfigInput } from "./config.ts";
import type { LintKeys } from "./lintKeys.ts";

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

/** A request as recorded: read from a file, or from a trace's `http.request` event. */
export interface LintedRequest {
  readonly method: string;
  /** The absolute target URI. */
  readonly url: string;
  /**
   * The field lines in order, names in any case, as a signature covers them;
   * or an object of names to values, as a trace records them (repeated
   * fields already combined with ", ", as fetch and RFC 9421 combine them).
   */
  readonly headers: readonly (readonly [string, string])[] | Readonly<Record<string, string>>;
  /** The whole body. */
  readonly body: Uint8Array;
}

/** What of a receiver's configuration the checks read: its served domains, its capabilities (versions, limits), its readings (G3, G19). */
export type LintReceiverConfig = Pick<ReceiverConfig, "domains" | "capabilities" | "readings">;

/** The part of a receiver's configuration the checks read, with its defaults filled in (small enough to pass around). */
export function lintReceiverConfig(config: ReceiverConfigInput | ReceiverConfig): LintReceiverConfig {
  return lintReceiverConfigSchema.parse(config);
}

/** What {@link lintChecks} needs. */
export interface LintOptions {
  /**
   * The receiver's clock, seconds since the epoch. For a recorded request,
   * the time it reached the receiver (its `receiver.request`), not the time
   * it was sent: a network that holds a request makes it old on arrival (G3).
   */
  readonly nowS: number;
  readonly keys?: LintKeys;
  /** A receiver's configuration: its versions, limits, served domains, G3 tolerance and key records. */
  readonly config?: LintReceiverConfig;
  /** What the lines say when something is missing, for the tool that shows them. */
  readonly hints?: {
    /** Appended to the signature line when no key has the keyid. */
    readonly unknownKey?: string;
    /** Appended to "not checked: which domains are served?" when there is no configuration. */
    readonly noConfig?: string;
  };
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
 * Runs the receiver's checks on a request, in G10's order, one line per
 * check, going on past failures wherever a later check can still run. Never
 * throws for what the request holds; a key set's `lookup` may throw (a key
 * that cannot be imported), and that error comes through.
 */
export async function lintChecks(request: LintedRequest, options: LintOptions): Promise<LintLine[]> {
  const parsed = { ...request, view: viewOf(request) };
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
  const path = pathOf(parsed.url);
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

  // ── signature (401): RFC 9421 as such, any components, any algorithm ──
  // Verified here, reported after the profile's lines: serve checks what the Signature-Input claims
  // before it looks the key up, so a request wrong in both is refused for its claims (G10).
  let verifiedAlgorithm: string | undefined;
  let signatureLine: LintLine;
  if (member === undefined || signatureHeader === undefined) {
    signatureLine = {
      check: "signature",
      step: "signature",
      status: "skip",
      rule: "AUTH-5",
      detail: "not checked: no usable Signature-Input and Signature",
    };
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
      signatureLine = {
        check: "signature",
        step: "signature",
        status: "pass",
        rule: "AUTH-5",
        detail: `${result.algorithm} signature ${result.label} over (${covered}) verifies with ${source ?? "the key"}`,
      };
    } else {
      const hint = result.reason === "unknown-key" ? (options.hints?.unknownKey ?? "") : "";
      signatureLine = {
        check: "signature",
        step: "signature",
        status: "fail",
        rule: "AUTH-5",
        detail: `${result.reason}: ${text(result.violations)}${hint}`,
        answer: ANSWER.badSignature,
      };
    }
  }

  // ── the profile (G1–G4, 401), then the signature ────────────────
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
  add(signatureLine);

  // ── digest (401): after the signature, as serve reads the body only once it verifies ──
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
        detail: `not checked: which domains are served?${options.hints?.noConfig ?? " (no receiver configuration)"}`,
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

/**
 * What a receiver answers a request with these lines: the first failing
 * check's answer, or undefined when none fails with one (a receiver would go
 * on to the checks not run here).
 */
export function lintAnswer(
  lines: readonly LintLine[],
): { readonly status: number; readonly problem: ProblemIdentifier; readonly check: string } | undefined {
  const first = lines.find((c) => c.status === "fail" && c.answer !== undefined);
  return first?.answer === undefined ? undefined : { ...first.answer, check: first.check };
}

/**
 * The request an `http.request` trace event records, when the trace kept its
 * body (`recordBodies`: `body` as UTF-8 text or `bodyBase64`); undefined when
 * it did not, or when the event is not a request.
 */
export function lintedRequestOfTraceEvent(event: {
  readonly name: string;
  readonly data?: Readonly<Record<string, unknown>>;
}): LintedRequest | undefined {
  const d = event.data;
  if (event.name !== "http.request" || d === undefined) return undefined;
  const { method, url, headers } = d;
  if (typeof method !== "string" || typeof url !== "string") return undefined;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return undefined;
  const fields = Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === "string");
  const body =
    typeof d["body"] === "string"
      ? new TextEncoder().encode(d["body"])
      : typeof d["bodyBase64"] === "string"
        ? base64ToBytes(d["bodyBase64"])
        : d["bodySize"] === 0
          ? new Uint8Array(0)
          : undefined;
  if (body === undefined) return undefined;
  return { method, url, headers: fields, body };
}

function viewOf(request: LintedRequest): HttpMessageView {
  const headers: readonly (readonly [string, string])[] = Array.isArray(request.headers)
    ? (request.headers as readonly (readonly [string, string])[])
    : Object.entries(request.headers as Readonly<Record<string, string>>);
  return { method: request.method, url: request.url, headers };
}

/** The URL's path, or the text itself when it is not an absolute URL. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
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
