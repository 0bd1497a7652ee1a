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
import { parseContentType } from "../protocol/multipart.ts";
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
import { pushAll } from "../protocol/lists.ts";
import { DEFAULT_MAX_RECIPIENTS, MIN_MAX_MESSAGE_SIZE } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import {
  parseSignature,
  parseSignatureInput,
  verifyRequestSignature,
  type HttpMessageView,
  type SignatureInputMember,
} from "../protocol/signature.ts";
import { checkOrder, type ReceiverCheckId, type RequestCheckId } from "./checks.ts";
import { lintReceiverConfigSchema, type ReceiverConfig, type ReceiverConfigInput } from "./config.ts";
import type { LintKeys } from "./lintKeys.ts";
import {
  firstLabelViolation,
  fromDomainAnswer,
  fromDomainMismatch,
  idempotencyKeyViolation,
  parseBody,
  versionPathVerdict,
  type ParsedBody,
} from "./requestChecks.ts";

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

/** What the dry walk reads of one request, and what its steps learn on the way (each step reads what the earlier ones left). */
interface LintContext {
  readonly request: LintedRequest;
  readonly view: HttpMessageView;
  readonly options: LintOptions;
  readonly config: LintReceiverConfig | undefined;
  readonly versions: readonly string[];
  readonly maxSize: number;
  readonly maxRecipients: number;
  readonly toleranceS: number;
  /** A field's value, repeated fields combined with ", " (as fetch and RFC 9421 combine them). */
  header(name: string): string | undefined;
  /** `headers`: the first member of a Signature-Input that parses. */
  member?: SignatureInputMember;
  /** `headers`: a Content-Digest that parses, for `digest`. */
  digest?: string;
  /** `headers`: whether the Content-Type is multipart/mixed with a boundary, to split the body by. */
  contentTypeOk: boolean;
  /** `from-domain`: the body parsed as far as the envelope (the receiver's own parse), or why it could not be. */
  body?: { readonly parsed: ParsedBody } | { readonly problem: string };
}

/** One check run dry: its lines. */
type LintStep = (c: LintContext) => LintLine[] | Promise<LintLine[]>;

/**
 * The checks run dry, by ID. Those left out need the receiver's state or its host (availability,
 * target-host, idempotency, rate-limit, policy: {@link NOT_LINTED}) and give no line.
 */
const lintSteps: { readonly [id in RequestCheckId]: LintStep | undefined } = {
  "version-path": versionPathLines,
  availability: undefined,
  headers: headerLines,
  size: sizeLines,
  "target-host": undefined,
  signature: signatureLines,
  digest: digestLines,
  "from-domain": fromDomainLines,
  idempotency: undefined,
  envelope: envelopeLines,
  "recipient-domain": recipientDomainLines,
  "rate-limit": undefined,
  policy: undefined,
};

/**
 * Runs the receiver's checks on a request, in G10's order (`checkOrder`, the order the handler walks its
 * steps in), one line per check, going on past failures wherever a later check can still run. Dry: nothing
 * is stored, no state is read or changed. Never throws for what the request holds; a key set's `lookup`
 * may throw (a key that cannot be imported), and that error comes through.
 */
export async function lintChecks(request: LintedRequest, options: LintOptions): Promise<LintLine[]> {
  const view = viewOf(request);
  const config = options.config;
  const c: LintContext = {
    request,
    view,
    options,
    config,
    versions: config?.capabilities.versions ?? ["v1"],
    maxSize: config?.capabilities.max_message_size ?? MIN_MAX_MESSAGE_SIZE,
    maxRecipients: config?.capabilities.max_recipients ?? DEFAULT_MAX_RECIPIENTS,
    toleranceS: config?.readings.signatureTolerance.toleranceS ?? DEFAULT_TOLERANCE_S,
    header: (name) => {
      const values = view.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
      return values.length === 0 ? undefined : values.join(", ");
    },
    contentTypeOk: false,
  };
  const lines: LintLine[] = [];
  for (const id of checkOrder("R")) {
    const step = lintSteps[id];
    if (step !== undefined) pushAll(lines, await step(c));
  }
  return lines;
}

/** `version-path` (404, 405): where the receiver sends the request (`versionPathVerdict`, as it does). */
function versionPathLines(c: LintContext): LintLine[] {
  const { method, url } = c.request;
  const path = pathOf(url);
  const verdict = versionPathVerdict(method, path, c.versions);
  const fail = (rule: string, detail: string, answer?: LintLine["answer"]): LintLine[] =>
    stepLine("version-path", rule)("fail", detail, answer);
  switch (verdict.kind) {
    case "delivery":
      return [{ check: "version-path", step: "version-path", status: "pass", rule: "VER-1", detail: `POST ${path}` }];
    case "unversioned":
      return fail("POST-1", `${path} is not a path of the service: deliveries go to /v1/messages`, ANSWER.notFound);
    case "capabilities":
      return fail(
        "POST-1",
        `${path} is the capabilities document, not /v1/messages`,
        verdict.allowed ? undefined : ANSWER.method,
      );
    case "unsupported":
      return fail("VER-7", `${verdict.segment} is not served (served: ${c.versions.join(", ")})`, ANSWER.unsupported);
    case "unimplemented":
      return fail(
        "VER-1",
        `${verdict.segment} is served, but Mailscope's receiver implements only v1`,
        ANSWER.notFound,
      );
    case "no-resource":
      return fail("POST-1", `${path} is not /${verdict.segment}/messages`, ANSWER.notFound);
    case "method":
      return fail("POST-1", `${method} ${path}: deliveries are POSTed`, ANSWER.method);
  }
}

/** `headers` (400): one line per header, with the receiver's rules (`idempotencyKeyViolation`, `firstLabelViolation`). */
function headerLines(c: LintContext): LintLine[] {
  const lines: LintLine[] = [];
  const key = c.header("idempotency-key");
  const keyViolation = idempotencyKeyViolation(key ?? null);
  lines.push(
    keyViolation === undefined
      ? headerLine("idempotency-key", "POST-2", `${key}`, true)
      : headerLine("idempotency-key", keyViolation.rule, keyViolation.message),
  );
  const inputHeader = c.header("signature-input");
  const signatureHeader = c.header("signature");
  if (inputHeader === undefined) {
    lines.push(headerLine("signature-input", "POST-4", "the Signature-Input header is missing"));
  } else {
    const inputs = parseSignatureInput(inputHeader);
    if (!inputs.ok) lines.push(headerLine("signature-input", "POST-4", text(inputs.violations)));
    else {
      const member = [...inputs.value.values()][0];
      if (member !== undefined) c.member = member;
      const more = inputs.value.size > 1 ? ` (and ${inputs.value.size - 1} more; the first is checked)` : "";
      lines.push(
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
    lines.push(headerLine("signature", "POST-3", "the Signature header is missing"));
  } else {
    const signatures = parseSignature(signatureHeader);
    const label = signatures.ok ? firstLabelViolation(c.member, signatures.value) : undefined;
    if (!signatures.ok) lines.push(headerLine("signature", "POST-3", text(signatures.violations)));
    else if (label !== undefined) lines.push(headerLine("signature", label.rule, label.message));
    else {
      const n = signatures.value.size;
      lines.push(headerLine("signature", "POST-3", `${n} signature${n === 1 ? "" : "s"}`, true));
    }
  }
  const digestHeader = c.header("content-digest");
  if (digestHeader === undefined) {
    lines.push(headerLine("content-digest", "POST-5", "the Content-Digest header is missing"));
  } else {
    const digest = parseContentDigest(digestHeader);
    if (digest.ok) c.digest = digestHeader;
    lines.push(
      digest.ok
        ? headerLine("content-digest", "POST-5", [...digest.value.keys()].join(", "), true)
        : headerLine("content-digest", "POST-5", text(digest.violations)),
    );
  }
  const contentType = parseContentType(c.header("content-type") ?? null);
  c.contentTypeOk = contentType.ok;
  lines.push(
    contentType.ok
      ? headerLine("content-type", "POST-6", `multipart/mixed, boundary ${contentType.value.boundary}`, true)
      : headerLine("content-type", "POST-6", text(contentType.violations)),
  );
  return lines;
}

/** `size` (413): the whole body against max_message_size. */
function sizeLines(c: LintContext): LintLine[] {
  const size = c.request.body.length;
  return [
    size > c.maxSize
      ? {
          check: "size",
          step: "size",
          status: "fail",
          rule: "ERR-12",
          detail: `the body has ${size} bytes, over max_message_size ${c.maxSize}`,
          answer: ANSWER.tooLarge,
        }
      : { check: "size", step: "size", status: "pass", rule: "LIM-2", detail: `${size} bytes, at most ${c.maxSize}` },
  ];
}

/**
 * `signature` (401): the profile's claims (G1–G4), then RFC 9421 as such, any components, any algorithm.
 * Verified first, reported after the profile's lines: serve checks what the Signature-Input claims before
 * it looks the key up, so a request wrong in both is refused for its claims (G10).
 */
async function signatureLines(c: LintContext): Promise<LintLine[]> {
  const { member, options } = c;
  const signatureHeader = c.header("signature");
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
    const result = await verifyRequestSignature(c.view, {
      label: member.label,
      nowS: options.nowS,
      keyLookup: async (keyid, alg) => {
        const found = await keys?.lookup(keyid, alg);
        source = found?.source;
        return found?.key as CryptoKey | undefined;
      },
    });
    if (result.ok) {
      verifiedAlgorithm = result.algorithm;
      signatureLine = {
        check: "signature",
        step: "signature",
        status: "pass",
        rule: "AUTH-5",
        detail: `${result.algorithm} signature ${result.label} over (${coveredText(member)}) verifies with ${source ?? "the key"}`,
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
  return [...profileLines(c, verifiedAlgorithm), signatureLine];
}

/** The profile's lines (G1–G4): its components, algorithm (and the key's, once verified), `created`, keyid. */
function profileLines(c: LintContext, verifiedAlgorithm: string | undefined): LintLine[] {
  const { member } = c;
  if (member === undefined) {
    return (
      [
        ["components", "G2"],
        ["algorithm", "G1"],
        ["created", "G3"],
        ["keyid", "G4"],
      ] as const
    ).map(([check, rule]) => ({
      check,
      step: "signature",
      status: "skip",
      rule,
      detail: "not checked: no usable Signature-Input",
    }));
  }
  const algorithm = checkAlgorithm(member);
  return [
    profileLine(checkComponents(member)),
    algorithm.pass && verifiedAlgorithm !== undefined && verifiedAlgorithm !== PROFILE_ALGORITHM
      ? {
          check: "algorithm",
          step: "signature",
          status: "fail",
          rule: "G1",
          detail: `the key is ${verifiedAlgorithm}; the profile signs with ${PROFILE_ALGORITHM} only`,
          answer: ANSWER.badSignature,
        }
      : profileLine(algorithm),
    profileLine(checkCreated(member, c.options.nowS, c.toleranceS)),
    profileLine(checkKeyid(member)),
  ];
}

/** `digest` (401): after the signature, as serve reads the body only once it verifies. */
async function digestLines(c: LintContext): Promise<LintLine[]> {
  if (c.digest === undefined) {
    return [
      {
        check: "digest",
        step: "digest",
        status: "skip",
        rule: "POST-5",
        detail: "not checked: no usable Content-Digest",
      },
    ];
  }
  const verdict = await verifyContentDigest(c.request.body, c.digest);
  return [
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
  ];
}

/** The body parsed as the receiver parses it (`parseBody`), once: `from-domain` and `envelope` read it. */
function bodyOf(c: LintContext): { readonly parsed: ParsedBody } | { readonly problem: string } {
  if (c.body !== undefined) return c.body;
  let body: { readonly parsed: ParsedBody } | { readonly problem: string };
  if (!c.contentTypeOk) {
    body = { problem: "no multipart/mixed Content-Type to split the body by" };
  } else {
    const parsed = parseBody(c.request.body, c.header("content-type") ?? "", { maxRecipients: c.maxRecipients });
    body = !parsed.ok && parsed.stage !== "envelope" ? { problem: text(parsed.violations) } : { parsed };
  }
  c.body = body;
  return body;
}

/** `from-domain` (401, or 403 under G19's reading): the envelope's `from` as the receiver reads it (`fromDomainOf`). */
function fromDomainLines(c: LintContext): LintLine[] {
  const line = stepLine("from-domain", "AUTH-4");
  const body = bodyOf(c);
  if (!("parsed" in body)) return line("skip", "not checked: no envelope");
  const keyid = c.member?.params.keyid;
  const signingDomain = keyid === undefined ? undefined : signingDomainOfKeyid(keyid);
  if (signingDomain === undefined || !signingDomain.ok) {
    return line("skip", "not checked: no signing domain (the keyid is not of the G4 form)");
  }
  if (fromOf(body.parsed.json) === null) return line("pass", "null from (a DSN): no domain to compare");
  const from = body.parsed.fromDomain;
  if (from === undefined) return line("skip", "not checked: the envelope from is not a mailbox");
  if (from !== signingDomain.value) {
    return line(
      "fail",
      `${fromDomainMismatch(from, signingDomain.value)} (G19)`,
      fromDomainAnswer(c.config?.readings.fromDomainMismatch ?? "401"),
    );
  }
  return line("pass", `${from} is the signing domain`);
}

/** `envelope` (400): the two parts, the Envelope, its mailboxes (ENV-8 first: the recipients of a `to` too long are not read). */
function envelopeLines(c: LintContext): LintLine[] {
  const body = bodyOf(c);
  if (!("parsed" in body)) {
    return [
      {
        check: "body",
        step: "envelope",
        status: "fail",
        rule: "POST-7",
        detail: body.problem,
        answer: ANSWER.badRequest,
      },
      { check: "envelope", step: "envelope", status: "skip", rule: "ENV-1", detail: "not checked: no envelope part" },
      { check: "mailboxes", step: "envelope", status: "skip", rule: "MBX-1", detail: "not checked: no envelope part" },
    ];
  }
  const { parsed } = body;
  const violations = parsed.ok ? [] : parsed.violations;
  const mailboxViolations = violations.filter((v) => v.rule.startsWith("MBX-"));
  const otherViolations = violations.filter((v) => !v.rule.startsWith("MBX-"));
  const tooMany = otherViolations.some((v) => v.rule === "ENV-8");
  return [
    {
      check: "body",
      step: "envelope",
      status: "pass",
      rule: "POST-7",
      detail: "two parts: application/json, message/rfc822",
    },
    otherViolations.length > 0
      ? {
          check: "envelope",
          step: "envelope",
          status: "fail",
          rule: otherViolations[0]?.rule ?? "ENV-1",
          detail: pathText(otherViolations),
          answer: ANSWER.badRequest,
        }
      : { check: "envelope", step: "envelope", status: "pass", rule: "ENV-1", detail: envelopeSummary(parsed.json) },
    tooMany
      ? {
          check: "mailboxes",
          step: "envelope",
          status: "skip",
          rule: "MBX-1",
          detail: `not checked: "to" has more than ${c.maxRecipients} recipients (ENV-8 comes first)`,
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
  ];
}

/** `recipient-domain` (400): the recipients' domain is served (needs the configuration). */
function recipientDomainLines(c: LintContext): LintLine[] {
  const line = stepLine("recipient-domain", "POST-22");
  const body = bodyOf(c);
  if (!("parsed" in body)) return line("skip", "not checked: no envelope part");
  const { config } = c;
  if (config === undefined) {
    return line(
      "skip",
      `not checked: which domains are served?${c.options.hints?.noConfig ?? " (no receiver configuration)"}`,
    );
  }
  const domain = body.parsed.ok ? body.parsed.envelope.to[0]?.domain : undefined;
  if (domain === undefined) return line("skip", "not checked: no valid envelope");
  if (!config.domains.includes(domain)) {
    return line("fail", `${domain} is not served here (served: ${config.domains.join(", ")})`, ANSWER.badRequest);
  }
  return line("pass", `${domain} is served here`);
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

/** The one line of a step that gives one, named as the step: its status, detail and answer. */
function stepLine(
  step: ReceiverCheckId,
  rule: string,
): (status: LintStatus, detail: string, answer?: LintLine["answer"]) => LintLine[] {
  return (status, detail, answer) => [
    { check: step, step, status, rule, detail, ...(answer !== undefined && { answer }) },
  ];
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

/** The envelope's raw `from`: null for a DSN (undefined when the JSON is not an object). */
function fromOf(json: unknown): unknown {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  return (json as Record<string, unknown>)["from"];
}

/** The components a signature covers, as its Signature-Input writes them. */
function coveredText(member: SignatureInputMember): string {
  return member.components
    .map(
      (c) =>
        `"${c.name}"${Object.entries(c.params ?? {})
          .map(([k, v]) => (v === true ? `;${k}` : `;${k}=${JSON.stringify(v)}`))
          .join("")}`,
    )
    .join(" ");
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
