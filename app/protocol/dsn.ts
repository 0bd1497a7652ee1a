/**
 * Delivery status notifications (RFC 3464 inside an RFC 6522
 * multipart/report): the only after-the-fact report of the service (SPEC.md
 * Events). The receiver builds one for a failure after acceptance (G17,
 * STATE-8); the sender builds one for a bounce after give-up (STATE-7,
 * EVT-3), for recipients answered `rejected` (G14) and for request-level
 * permanent failures (G31). The field readings follow gap G29: `Reporting-MTA:
 * dns; <reporting domain>`, Status codes from {@link statusFor}, and
 * `Diagnostic-Code: x-svc; <problem type URI>` ({@link problemDiagnostic}).
 *
 * Addresses: an ASCII address is typed `rfc822`; a non-ASCII one (RFC 6531)
 * is typed `utf-8` with RFC 6533 §3 `utf-8-addr-xtext` (`\x{HEX}` for
 * everything outside QCHAR), which keeps the message/delivery-status part
 * 7-bit as RFC 3464 requires. Free text in the fields (the diagnostic) gets
 * the same `\x{HEX}` escapes for non-ASCII characters and loses its control
 * characters, so no input can start a field of its own.
 *
 * Parsing uses postal-mime for the MIME structure (headers, transfer and
 * charset decoding of the human-readable and delivery-status parts) and the
 * byte scanner of `multipart.ts` for what postal-mime cannot give: it turns
 * CRLF into LF and keeps the delimiter's line break in a part, so part 3
 * (the returned headers) is taken from the raw bytes, byte for byte.
 */
import type { ProblemIdentifier } from "./errors.ts";
import PostalMime from "postal-mime";
import type { Address, Email } from "postal-mime";
import {
  boundaryProblem,
  concatBytes,
  indexOfBytes,
  parameterValue,
  parseHeaderBlock,
  parseMediaType,
  splitMultipart,
} from "./multipart.ts";
import type { HeaderField } from "./multipart.ts";
import { ProtocolError, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import { errorMessage } from "../errorMessage.ts";
import { minOf, pushAll } from "./lists.ts";
import { isAscii } from "./ascii.ts";

/** Events: "DSN contents follow RFC 3464" — every DSN violation cites it. */
const RULE = "EVT-4";

const CRLF = "\r\n";
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

/** RFC 3464 §2.3.3 action values. */
export const DSN_ACTIONS = ["failed", "delayed", "delivered", "relayed", "expanded"] as const;
export type DsnAction = (typeof DSN_ACTIONS)[number];

/**
 * RFC 3464 §2.3.4 / RFC 3463 §2 status-code: class 2, 4 or 5, then subject
 * and detail of 1 to 3 digits, without leading zeros (RFC 3463: "leading
 * zeros are not permitted" — `0` itself is fine).
 */
export const STATUS_PATTERN = /^[245]\.(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})$/;

/** The diagnostic-type of G29: the service's own, for a problem type URI. */
export const SERVICE_DIAGNOSTIC_TYPE = "x-svc";

/** RFC 3464 `diagnostic-type` / `mta-name-type` / `address-type`: an RFC 822 atom. */
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+$/;
/** A host name as the service uses them (A-labels, digits, dot, hyphen), for `dns;` MTA names. */
const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/;
/** The longest free text put in a field, so that no line can pass RFC 5322's 998 characters. */
const MAX_FIELD_TEXT = 900;

// ── Status codes ────────────────────────────────────────────────────────

/**
 * RFC 3463 enhanced status code per problem identifier, and why. The
 * permanent ones are G29's readings where it names one; the temporary ones
 * are what a `delayed` DSN would say before give-up.
 */
const STATUS_BY_PROBLEM: Readonly<Record<ProblemIdentifier, { readonly status: string; readonly permanent: boolean }>> =
  {
    // X.1.1 "Bad destination mailbox address": the mailbox does not exist (G29).
    recipient_not_found: { status: "5.1.1", permanent: true },
    // X.7.1 "Delivery not authorized, message refused": receiver policy (G29).
    policy_rejected: { status: "5.7.1", permanent: true },
    // X.3.4 "Message too big for system": over max_message_size (G29).
    message_too_large: { status: "5.3.4", permanent: true },
    // X.7.7 "Message integrity failure": the signature or digest did not verify (G29).
    invalid_signature: { status: "5.7.7", permanent: true },
    // X.5.0 "Other or undefined protocol status": the request broke the protocol (G29).
    invalid_request: { status: "5.5.0", permanent: true },
    // X.5.0 again: a sender bug in the protocol's idempotency rules (G29).
    idempotency_conflict: { status: "5.5.0", permanent: true },
    // X.5.0 too: no common protocol version. Normally handed to SMTP (ERR-26); only a bounce if that is not possible.
    unsupported_version: { status: "5.5.0", permanent: true },
    // X.2.2 "Mailbox full": persistent transient (RFC 3463 §3.3).
    mailbox_full: { status: "4.2.2", permanent: false },
    // X.7.0 "Other or undefined security status": rate limits are receiver-local policy (SVC-10), not congestion.
    rate_limited: { status: "4.7.0", permanent: false },
    // X.0.0 "Other undefined status": the identifier covers 503, connection and TLS failures alike, no narrower subject fits.
    temporary_failure: { status: "4.0.0", permanent: false },
  };

/**
 * X.4.7 "Delivery time expired" with class 4: what G29 gives a bounce after
 * the 5-day give-up (STATE-7) on temporary answers. Class 4 is right with
 * `Action: failed`: RFC 3463 defines it as "persistence of some temporary
 * condition has caused abandonment … of attempts".
 */
export const GIVE_UP_STATUS = "4.4.7";

export interface StatusOptions {
  /** The sender has given up after 5 days (STATE-7): a temporary problem yields {@link GIVE_UP_STATUS}. */
  readonly gaveUp?: boolean;
  /**
   * For an identifier the spec does not list: whether it is permanent, from
   * the HTTP status class or the result status (ERR-19, ERR-20). Default true.
   */
  readonly permanent?: boolean;
}

/**
 * The RFC 3463 status code for a problem identifier (see the table above for
 * each choice): permanent problems keep their 5.x.x code; temporary ones have
 * their 4.x.x code, or 4.4.7 once the sender has given up (G29). An unknown
 * identifier falls back to 5.0.0 or 4.0.0 by `options.permanent`.
 */
export function statusFor(problem: string, options: StatusOptions = {}): string {
  const known = Object.hasOwn(STATUS_BY_PROBLEM, problem) ? STATUS_BY_PROBLEM[problem as ProblemIdentifier] : undefined;
  const permanent = known?.permanent ?? options.permanent ?? true;
  if (permanent) return known?.status ?? "5.0.0";
  if (options.gaveUp === true) return GIVE_UP_STATUS;
  return known?.status ?? "4.0.0";
}

/** G29's Diagnostic-Code for a problem: `x-svc; <problem type URI>`, with the detail after it when given. */
export function problemDiagnostic(problemType: string, detail?: string): { type: string; text: string } {
  return {
    type: SERVICE_DIAGNOSTIC_TYPE,
    text: detail === undefined || detail === "" ? problemType : `${problemType} ${detail}`,
  };
}

// ── Building ────────────────────────────────────────────────────────────

/** One recipient block of a DSN (RFC 3464 §2.3). */
export interface DsnRecipientInput {
  /** The recipient the report is about (Final-Recipient). */
  readonly finalRecipient: string;
  /** The recipient as the sender first gave it, when it differs or is known (Original-Recipient). */
  readonly originalRecipient?: string;
  readonly action: DsnAction;
  /** RFC 3463 status code, e.g. `5.1.1`; see {@link statusFor}. */
  readonly status: string;
  /** `smtp` with an SMTP reply, or G29's `x-svc` with a problem type URI ({@link problemDiagnostic}); any atom is allowed. */
  readonly diagnosticCode?: { readonly type: string; readonly text: string };
  /** When delivery to this recipient was last attempted, epoch ms. */
  readonly lastAttemptDate?: number;
  /** For `delayed`: when the sender will give up, epoch ms. */
  readonly willRetryUntil?: number;
  /** The host name of the receiver that answered, as `dns; <name>`. */
  readonly remoteMta?: string;
}

/** Everything a DSN says; time and identifiers are passed in, nothing is drawn here. */
export interface DsnInput {
  /** The reporting domain (Reporting-MTA: dns; <name>). */
  readonly reportingMta: string;
  /** When the reporting side received the message, epoch ms (Arrival-Date). */
  readonly arrivalDate?: number;
  /** The ENVID of the original message, if any (Original-Envelope-Id); printable ASCII without spaces. */
  readonly originalEnvelopeId?: string;
  /** The From header's address; default `mailer-daemon@<reportingMta>`. */
  readonly from?: string;
  /** The envelope sender of the original message: the DSN's recipient. */
  readonly to: string;
  readonly recipients: readonly DsnRecipientInput[];
  /** The original message's header block, returned verbatim as part 3; empty leaves part 3 out. */
  readonly originalHeaders: Uint8Array;
  /** The human-readable explanation (part 1); line breaks become CRLF. */
  readonly humanReadable: string;
  /** The DSN's Date, epoch ms. */
  readonly dateMs: number;
  /** The DSN's Message-ID, with or without angle brackets. */
  readonly messageId: string;
  /** The multipart boundary (from `chooseBoundary`); must not occur in the content. */
  readonly boundary: string;
  /** Subject; default chosen from the actions. */
  readonly subject?: string;
}

/**
 * A complete DSN as an RFC 5322 message with CRLF line breaks: headers
 * (From, To, Subject, Date, Message-ID, Auto-Submitted, MIME-Version,
 * Content-Type multipart/report; report-type=delivery-status), then part 1
 * text/plain (human readable), part 2 message/delivery-status (per-message
 * fields, then one block per recipient), part 3 text/rfc822-headers with the
 * original header block byte for byte (message/global-headers, RFC 6533 §6,
 * when those headers carry non-ASCII bytes).
 *
 * Throws a {@link ProtocolError} on input a caller should never pass: no
 * recipients, a malformed status, action or MTA name, a header value with a
 * line break, a bad boundary or one that occurs in the content.
 */
export function buildDsn(input: DsnInput): Uint8Array {
  const violations = checkDsnInput(input);
  if (violations.length > 0) throw new ProtocolError(violations);

  const human = normalizeLineBreaks(input.humanReadable);
  const humanAscii = isAscii(human);
  const status = deliveryStatusText(input);
  const headersAscii = input.originalHeaders.every((b) => b < 0x80);
  const returned = input.originalHeaders.length > 0;

  const dash = encoder.encode(`--${input.boundary}`);
  const collisions: Violation[] = [];
  for (const [what, bytes] of [
    ["humanReadable", encoder.encode(human)],
    ["recipients", encoder.encode(status)],
    ["originalHeaders", input.originalHeaders],
  ] as const) {
    if (indexOfBytes(bytes, dash, 0) !== -1) {
      collisions.push({ path: what, rule: RULE, message: `contains --${input.boundary}; choose another boundary` });
    }
  }
  if (collisions.length > 0) throw new ProtocolError(collisions);

  const from = input.from ?? `mailer-daemon@${input.reportingMta}`;
  const head =
    `From: ${from.includes("<") ? from : `Mail Delivery System <${from}>`}${CRLF}` +
    `To: <${input.to}>${CRLF}` +
    fold(`Subject: ${input.subject ?? defaultSubject(input.recipients)}`) +
    `Date: ${formatRfc5322Date(input.dateMs)}${CRLF}` +
    `Message-ID: <${input.messageId.replace(/^<|>$/g, "")}>${CRLF}` +
    // RFC 3834 §5: an automatic reply, so that no auto-responder answers it in turn.
    `Auto-Submitted: auto-replied${CRLF}` +
    `MIME-Version: 1.0${CRLF}` +
    `Content-Type: multipart/report; report-type=delivery-status;${CRLF}\tboundary=${parameterValue(input.boundary)}${CRLF}` +
    CRLF +
    `This is a MIME-encapsulated delivery status notification.${CRLF}` +
    `${CRLF}--${input.boundary}${CRLF}` +
    `Content-Type: text/plain; charset=${humanAscii ? "us-ascii" : "utf-8"}${CRLF}` +
    (humanAscii ? "" : `Content-Transfer-Encoding: 8bit${CRLF}`) +
    CRLF +
    human +
    `${CRLF}--${input.boundary}${CRLF}` +
    `Content-Type: message/delivery-status${CRLF}` +
    CRLF +
    status;
  const chunks: Uint8Array[] = [encoder.encode(head)];
  if (returned) {
    chunks.push(
      encoder.encode(
        `${CRLF}--${input.boundary}${CRLF}` +
          `Content-Type: ${headersAscii ? "text/rfc822-headers" : "message/global-headers"}${CRLF}` +
          (headersAscii ? "" : `Content-Transfer-Encoding: 8bit${CRLF}`) +
          CRLF,
      ),
      input.originalHeaders,
    );
  }
  chunks.push(encoder.encode(`${CRLF}--${input.boundary}--${CRLF}`));
  return concatBytes(chunks);
}

/**
 * A date-time as RFC 5322 §3.3 writes it, in UTC: `Fri, 08 Jul 1994
 * 13:21:47 +0000`. Computed with UTC arithmetic only, so the machine's time
 * zone never shows.
 */
export function formatRfc5322Date(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) throw new RangeError(`not a time: ${ms}`);
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n: number): string => String(n).padStart(2, "0");
  return (
    `${days[d.getUTCDay()] ?? ""}, ${two(d.getUTCDate())} ${months[d.getUTCMonth()] ?? ""} ${d.getUTCFullYear()} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
  );
}

/**
 * An address as a typed DSN field value: `rfc822; <address>` when it is
 * ASCII, else `utf-8; <utf-8-addr-xtext>` (RFC 6533 §3), e.g.
 * `utf-8; J\x{F6}rg@example.com`.
 */
export function typedAddress(address: string): string {
  return /^[\x20-\x7e]*$/.test(address) ? `rfc822; ${address}` : `utf-8; ${encodeUtf8AddrXtext(address)}`;
}

/** RFC 6533 §3 `utf-8-addr-xtext`: QCHARs as they are, every other character as `\x{HEX}`. */
export function encodeUtf8AddrXtext(address: string): string {
  let out = "";
  for (const ch of address) {
    const cp = ch.codePointAt(0) ?? 0;
    out += isQchar(cp) ? ch : embeddedUnicode(cp);
  }
  return out;
}

/** Decodes `\x{HEX}` escapes (RFC 6533 §3 EmbeddedUnicodeChar); a malformed escape stays as written. */
export function decodeUtf8AddrXtext(text: string): string {
  return text.replace(/\\x\{([0-9A-Fa-f]{2,6})\}/g, (whole, hex: string) => {
    const cp = Number.parseInt(hex, 16);
    return cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? whole : String.fromCodePoint(cp);
  });
}

// ── Parsing ─────────────────────────────────────────────────────────────

/** A typed field value, `type; value` (address-type, mta-name-type or diagnostic-type). */
export interface DsnTypedValue {
  /** The type before the `;`, lower-cased: `rfc822`, `utf-8`, `dns`, `smtp`, `x-svc`, … */
  readonly type: string;
  /** The text after the `;`, trimmed; a `utf-8` address with its `\x{…}` escapes decoded. */
  readonly value: string;
}

/** One recipient block, parsed (RFC 3464 §2.3). */
export interface DsnRecipient {
  readonly finalRecipient: DsnTypedValue;
  readonly originalRecipient?: DsnTypedValue;
  readonly action: DsnAction;
  /** The status code alone, e.g. `5.0.0`. */
  readonly status: string;
  /** The comment after the status code, without its parentheses. */
  readonly statusComment?: string;
  readonly remoteMta?: DsnTypedValue;
  readonly diagnosticCode?: DsnTypedValue;
  readonly lastAttemptDate?: string;
  readonly willRetryUntil?: string;
  readonly finalLogId?: string;
  /** Every field of the block in order, values unfolded, extension fields included. */
  readonly fields: readonly HeaderField[];
}

/** The content of a message/delivery-status part. */
export interface DeliveryStatus {
  readonly reportingMta: DsnTypedValue;
  readonly originalEnvelopeId?: string;
  readonly dsnGateway?: DsnTypedValue;
  readonly receivedFromMta?: DsnTypedValue;
  readonly arrivalDate?: string;
  /** Every per-message field in order, values unfolded. */
  readonly perMessageFields: readonly HeaderField[];
  readonly recipients: readonly DsnRecipient[];
}

/** A whole DSN message, parsed. */
export interface ParsedDsn {
  /** The From header's address. */
  readonly from?: string;
  /** The To header's addresses. */
  readonly to: readonly string[];
  readonly subject?: string;
  /** The Date header as written. */
  readonly date?: string;
  readonly messageId?: string;
  /** The report-type parameter, lower-cased: `delivery-status` (or RFC 6533's `global-delivery-status`). */
  readonly reportType: string;
  /** The media types of the top-level parts in order, lower-cased. */
  readonly partTypes: readonly string[];
  /** Part 1, decoded by postal-mime (charset and transfer encoding), with LF line breaks. */
  readonly humanReadable: string;
  readonly deliveryStatus: DeliveryStatus;
  /** Part 3, when present: its media type and its bytes exactly as they stand in the message. */
  readonly returned?: { readonly contentType: string; readonly content: Uint8Array };
}

const STATUS_PART_TYPES = new Set(["message/delivery-status", "message/global-delivery-status"]);

/**
 * Whether a message is a DSN by its own header block, whatever its envelope says: a Content-Type
 * multipart/report with report-type delivery-status (RFC 6522 §3; RFC 6533's global-delivery-status too).
 * A DSN's failure is never reported by another DSN (RFC 3461 §6.2 sends DSNs with the null reverse-path,
 * ENV-3, so that none is): the engine reads this rather than trusting the `from` a sender gave.
 * Tolerant: CRLF or bare LF, folded or not, any case; a message without such a header is no DSN.
 */
export function isDsnMessage(message: Uint8Array): boolean {
  const crlf = indexOfBytes(message, encoder.encode("\r\n\r\n"), 0);
  const lf = indexOfBytes(message, encoder.encode("\n\n"), 0);
  const ends = [crlf, lf].filter((i) => i >= 0);
  const head = new TextDecoder("latin1").decode(message.subarray(0, ends.length === 0 ? message.length : minOf(ends)));
  const contentType = /^content-type[ \t]*:(.*(?:\r?\n[ \t].*)*)/im.exec(head)?.[1];
  if (contentType === undefined) return false;
  const value = contentType.replace(/\r?\n/g, "");
  return (
    /^\s*multipart\/report\s*(;|$)/i.test(value) &&
    /;\s*report-type\s*=\s*"?(?:global-)?delivery-status"?\s*(;|$)/i.test(value)
  );
}

/**
 * Parses a DSN: a multipart/report with report-type delivery-status (RFC
 * 6522 §3; RFC 6533's global-delivery-status accepted too) of two or three
 * parts, the second message/delivery-status. The delivery-status fields are
 * read by {@link parseDeliveryStatus}, which checks the required ones.
 * Asynchronous because postal-mime is. Never throws: every problem is a
 * violation of EVT-4 at a path under `dsn`.
 */
export async function parseDsn(message: Uint8Array): Promise<Parsed<ParsedDsn>> {
  // The raw structure first: top-level headers, Content-Type, parts.
  const blank =
    message[0] === 0x0d && message[1] === 0x0a ? -2 : indexOfBytes(message, Uint8Array.of(0x0d, 0x0a, 0x0d, 0x0a), 0);
  if (blank === -1)
    return fail({ path: "dsn", rule: RULE, message: "no blank line (CRLF CRLF) ends the message's header block" });
  const headers = parseHeaderBlock(message.subarray(0, blank + 2), "dsn.headers", RULE);
  if (!headers.ok) return headers;
  const contentTypes = headers.value.filter((h) => h.name.toLowerCase() === "content-type");
  const [contentType] = contentTypes;
  if (contentType === undefined || contentTypes.length > 1) {
    return fail({
      path: "dsn.headers.Content-Type",
      rule: RULE,
      message: "a DSN has exactly one Content-Type: multipart/report",
    });
  }
  const mediaType = parseMediaType(contentType.value, "dsn.headers.Content-Type", RULE);
  if (!mediaType.ok) return mediaType;
  const { type, params } = mediaType.value;
  const reportType = (params["report-type"] ?? "").toLowerCase();
  const boundary = params["boundary"];
  const typeViolations: Violation[] = [];
  if (type !== "multipart/report")
    typeViolations.push({
      path: "dsn.headers.Content-Type",
      rule: RULE,
      message: `the DSN is ${type}; it must be multipart/report`,
    });
  if (reportType !== "delivery-status" && reportType !== "global-delivery-status") {
    typeViolations.push({
      path: "dsn.headers.Content-Type",
      rule: RULE,
      message: `report-type is ${JSON.stringify(params["report-type"] ?? null)}; a DSN has report-type=delivery-status`,
    });
  }
  const problem = boundary === undefined ? "multipart/report without a boundary" : boundaryProblem(boundary);
  if (problem !== undefined) typeViolations.push({ path: "dsn.headers.Content-Type", rule: RULE, message: problem });
  if (typeViolations.length > 0 || boundary === undefined) return failWith(typeViolations);

  const split = splitMultipart(message.subarray(blank + 4), boundary, "dsn.body", RULE);
  if (!split.ok) return split;
  const { parts } = split.value;
  const partTypes: string[] = [];
  const violations: Violation[] = [];
  parts.forEach((part, i) => {
    const declared = part.headers.find((h) => h.name.toLowerCase() === "content-type");
    // RFC 2046 §5.1: a part without Content-Type is text/plain; charset=us-ascii.
    const parsed =
      declared === undefined ? undefined : parseMediaType(declared.value, `dsn.body.part[${i}].Content-Type`, RULE);
    if (parsed !== undefined && !parsed.ok) pushAll(violations, parsed.violations);
    partTypes.push(parsed === undefined ? "text/plain" : parsed.ok ? parsed.value.type : "");
  });
  if (parts.length < 2 || parts.length > 3) {
    violations.push({
      path: "dsn.body",
      rule: RULE,
      message: `the report has ${parts.length} parts; RFC 6522 gives it two or three`,
    });
  }
  const statusType = partTypes[1];
  if (statusType !== undefined && !STATUS_PART_TYPES.has(statusType)) {
    violations.push({
      path: "dsn.body.part[1].Content-Type",
      rule: RULE,
      message: `part 2 is ${statusType}; it must be message/delivery-status`,
    });
  }
  if (violations.length > 0) return failWith(violations);

  // Then postal-mime for the decoded content.
  let email: Email;
  try {
    email = await PostalMime.parse(message, { forceRfc822Attachments: true, attachmentEncoding: "arraybuffer" });
  } catch (error) {
    return fail({
      path: "dsn",
      rule: RULE,
      message: `the MIME structure does not parse: ${errorMessage(error)}`,
    });
  }
  const statusPart = email.attachments.find((a) => STATUS_PART_TYPES.has(a.mimeType));
  if (statusPart === undefined) {
    return fail({ path: "dsn.body.part[1]", rule: RULE, message: "no message/delivery-status part found" });
  }
  const statusText = typeof statusPart.content === "string" ? statusPart.content : decoder.decode(statusPart.content);
  const deliveryStatus = parseDeliveryStatus(statusText, "dsn.delivery-status");
  if (!deliveryStatus.ok) return deliveryStatus;

  const third = parts[2];
  const thirdType = partTypes[2];
  const dateHeader = email.headers.find((h) => h.key === "date")?.value;
  const from = mailboxAddress(email.from);
  return ok({
    ...(from !== undefined ? { from } : {}),
    to: (email.to ?? []).flatMap(addresses),
    ...(email.subject !== undefined ? { subject: email.subject } : {}),
    ...(dateHeader !== undefined ? { date: dateHeader } : {}),
    ...(email.messageId !== undefined ? { messageId: email.messageId } : {}),
    reportType,
    partTypes,
    humanReadable: humanReadableText(email.text ?? "", parts[0]?.headers ?? []),
    deliveryStatus: deliveryStatus.value,
    ...(third !== undefined && thirdType !== undefined
      ? { returned: { contentType: thirdType, content: third.content.slice() } }
      : {}),
  });
}

/**
 * Parses the content of a message/delivery-status part (RFC 3464 §2.1–2.3):
 * blocks of header-style fields separated by blank lines, continuation lines
 * unfolded (RFC 5322 §2.2.3: the line break goes, the whitespace stays), CRLF
 * or LF line breaks. The first block holds the per-message fields, each
 * further one a recipient. Checks what RFC 3464 requires: Reporting-MTA once,
 * at least one recipient block, in each Final-Recipient, Action (one of the
 * five values) and Status (RFC 3463 syntax, optional comment) once, and the
 * `type; value` form of the typed fields.
 */
export function parseDeliveryStatus(text: string, path = "delivery-status"): Parsed<DeliveryStatus> {
  const blocks = readBlocks(text, path);
  if (!blocks.ok) return blocks;
  const violations: Violation[] = [];
  const [perMessage, ...recipientBlocks] = blocks.value;
  if (perMessage === undefined) return fail({ path, rule: RULE, message: "the delivery-status part is empty" });

  const perMessagePath = `${path}.per-message`;
  const reportingMta = typedField(perMessage, "Reporting-MTA", perMessagePath, true, violations);
  const dsnGateway = typedField(perMessage, "DSN-Gateway", perMessagePath, false, violations);
  const receivedFromMta = typedField(perMessage, "Received-From-MTA", perMessagePath, false, violations);
  const originalEnvelopeId = single(perMessage, "Original-Envelope-Id", perMessagePath, false, violations);
  const arrivalDate = single(perMessage, "Arrival-Date", perMessagePath, false, violations);
  if (recipientBlocks.length === 0) {
    violations.push({
      path,
      rule: RULE,
      message: "no per-recipient block: RFC 3464 requires at least one, after a blank line",
    });
  }

  const recipients: DsnRecipient[] = [];
  recipientBlocks.forEach((block, i) => {
    const at = `${path}.recipient[${i}]`;
    const finalRecipient = typedField(block, "Final-Recipient", at, true, violations);
    const originalRecipient = typedField(block, "Original-Recipient", at, false, violations);
    const remoteMta = typedField(block, "Remote-MTA", at, false, violations);
    const diagnosticCode = typedField(block, "Diagnostic-Code", at, false, violations);
    const lastAttemptDate = single(block, "Last-Attempt-Date", at, false, violations);
    const willRetryUntil = single(block, "Will-Retry-Until", at, false, violations);
    const finalLogId = single(block, "Final-Log-ID", at, false, violations);

    const actionText = single(block, "Action", at, true, violations);
    const action = actionText === undefined ? undefined : stripComment(actionText).toLowerCase();
    if (action !== undefined && !(DSN_ACTIONS as readonly string[]).includes(action)) {
      violations.push({
        path: `${at}.Action`,
        rule: RULE,
        message: `Action ${JSON.stringify(actionText)} is not one of ${DSN_ACTIONS.join(", ")}`,
      });
    }
    const statusText = single(block, "Status", at, true, violations);
    const status = statusText === undefined ? undefined : /^(\S+)\s*(?:\((.*)\))?\s*$/.exec(statusText);
    if (
      statusText !== undefined &&
      (status === null || status === undefined || !STATUS_PATTERN.test(status[1] ?? ""))
    ) {
      violations.push({
        path: `${at}.Status`,
        rule: RULE,
        message: `Status ${JSON.stringify(statusText)} is not an RFC 3463 code such as 5.1.1 (class 2, 4 or 5)`,
      });
    }
    if (finalRecipient === undefined || action === undefined || status === null || status === undefined) return;
    const comment = status[2];
    recipients.push({
      finalRecipient,
      ...(originalRecipient !== undefined ? { originalRecipient } : {}),
      action: action as DsnAction,
      status: status[1] ?? "",
      ...(comment !== undefined ? { statusComment: comment.trim() } : {}),
      ...(remoteMta !== undefined ? { remoteMta } : {}),
      ...(diagnosticCode !== undefined ? { diagnosticCode } : {}),
      ...(lastAttemptDate !== undefined ? { lastAttemptDate } : {}),
      ...(willRetryUntil !== undefined ? { willRetryUntil } : {}),
      ...(finalLogId !== undefined ? { finalLogId } : {}),
      fields: block,
    });
  });
  if (violations.length > 0 || reportingMta === undefined) return failWith(violations);
  return ok({
    reportingMta,
    ...(originalEnvelopeId !== undefined ? { originalEnvelopeId } : {}),
    ...(dsnGateway !== undefined ? { dsnGateway } : {}),
    ...(receivedFromMta !== undefined ? { receivedFromMta } : {}),
    ...(arrivalDate !== undefined ? { arrivalDate } : {}),
    perMessageFields: perMessage,
    recipients,
  });
}

// ── Internals ───────────────────────────────────────────────────────────

function checkDsnInput(input: DsnInput): Violation[] {
  const v: Violation[] = [];
  const add = (path: string, message: string): void => {
    v.push({ path, rule: RULE, message });
  };
  if (!HOST_NAME.test(input.reportingMta))
    add("reportingMta", `not a host name: ${JSON.stringify(input.reportingMta)}`);
  const problem = boundaryProblem(input.boundary);
  if (problem !== undefined) add("boundary", problem);
  if (input.recipients.length === 0) add("recipients", "a DSN reports on at least one recipient");
  for (const [name, value] of [
    ["to", input.to],
    ["from", input.from],
    ["messageId", input.messageId],
    ["subject", input.subject],
  ] as const) {
    if (value !== undefined && /[\r\n]/.test(value)) add(name, "a header value may not hold a line break");
  }
  if (input.to === "" || /[<>]/.test(input.to)) add("to", "the envelope sender's address, without angle brackets");
  if (!/^<?[^<>\s]+>?$/.test(input.messageId)) add("messageId", `not a Message-ID: ${JSON.stringify(input.messageId)}`);
  if (input.originalEnvelopeId !== undefined && !/^[\x21-\x7e]+$/.test(input.originalEnvelopeId)) {
    add("originalEnvelopeId", "printable ASCII without spaces");
  }
  for (const [key, ms] of [
    ["dateMs", input.dateMs],
    ["arrivalDate", input.arrivalDate],
  ] as const) {
    if (ms !== undefined && Number.isNaN(new Date(ms).getTime())) add(key, `not a time: ${ms}`);
  }
  input.recipients.forEach((r, i) => {
    const at = `recipients[${i}]`;
    if (r.finalRecipient === "") add(`${at}.finalRecipient`, "empty");
    if (!(DSN_ACTIONS as readonly string[]).includes(r.action))
      add(`${at}.action`, `not an RFC 3464 action: ${JSON.stringify(r.action)}`);
    if (!STATUS_PATTERN.test(r.status)) add(`${at}.status`, `not an RFC 3463 status code: ${JSON.stringify(r.status)}`);
    if (r.remoteMta !== undefined && !HOST_NAME.test(r.remoteMta))
      add(`${at}.remoteMta`, `not a host name: ${JSON.stringify(r.remoteMta)}`);
    if (r.diagnosticCode !== undefined && !ATOM.test(r.diagnosticCode.type)) {
      add(`${at}.diagnosticCode.type`, `not a diagnostic-type atom: ${JSON.stringify(r.diagnosticCode.type)}`);
    }
    for (const [key, ms] of [
      ["lastAttemptDate", r.lastAttemptDate],
      ["willRetryUntil", r.willRetryUntil],
    ] as const) {
      if (ms !== undefined && Number.isNaN(new Date(ms).getTime())) add(`${at}.${key}`, `not a time: ${ms}`);
    }
  });
  return v;
}

/** The message/delivery-status content: per-message block, then one block per recipient, each ending in CRLF. */
function deliveryStatusText(input: DsnInput): string {
  let out = "";
  if (input.originalEnvelopeId !== undefined) out += fold(`Original-Envelope-Id: ${input.originalEnvelopeId}`);
  out += `Reporting-MTA: dns; ${input.reportingMta}${CRLF}`;
  if (input.arrivalDate !== undefined) out += `Arrival-Date: ${formatRfc5322Date(input.arrivalDate)}${CRLF}`;
  for (const r of input.recipients) {
    out += CRLF;
    if (r.originalRecipient !== undefined)
      out += fold(`Original-Recipient: ${typedAddress(fieldText(r.originalRecipient))}`);
    out += fold(`Final-Recipient: ${typedAddress(fieldText(r.finalRecipient))}`);
    out += `Action: ${r.action}${CRLF}`;
    out += `Status: ${r.status}${CRLF}`;
    if (r.remoteMta !== undefined) out += `Remote-MTA: dns; ${r.remoteMta}${CRLF}`;
    if (r.diagnosticCode !== undefined) {
      out += fold(`Diagnostic-Code: ${r.diagnosticCode.type}; ${asciiText(r.diagnosticCode.text)}`);
    }
    if (r.lastAttemptDate !== undefined) out += `Last-Attempt-Date: ${formatRfc5322Date(r.lastAttemptDate)}${CRLF}`;
    if (r.willRetryUntil !== undefined) out += `Will-Retry-Until: ${formatRfc5322Date(r.willRetryUntil)}${CRLF}`;
  }
  return out;
}

/** Subject from the most severe action reported. */
function defaultSubject(recipients: readonly DsnRecipientInput[]): string {
  const actions = new Set(recipients.map((r) => r.action));
  if (actions.has("failed")) return "Undelivered Mail Returned to Sender";
  if (actions.has("delayed")) return "Delayed Mail (still being retried)";
  if (actions.has("delivered")) return "Successful Mail Delivery Report";
  return "Delivery Status Notification (Relayed)";
}

/** Control characters out (CR and LF first), so the text cannot start a field of its own. */
function fieldText(text: string): string {
  // eslint-disable-next-line no-control-regex -- the point is to find control characters
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
}

/** Free text for a 7-bit field: control characters out, non-ASCII as `\x{HEX}`, at most 900 characters. */
function asciiText(text: string): string {
  let out = "";
  for (const ch of fieldText(text)) {
    const cp = ch.codePointAt(0) ?? 0;
    out += cp < 0x80 ? ch : embeddedUnicode(cp);
  }
  return out.length > MAX_FIELD_TEXT ? `${out.slice(0, MAX_FIELD_TEXT - 3)}...` : out;
}

/**
 * Folds a header line at spaces so that lines stay within 78 characters
 * where the words allow (RFC 5322 §2.1.1); the CRLF goes before the space,
 * so unfolding gives the line back exactly. Ends the field with CRLF.
 */
function fold(line: string): string {
  const lines: string[] = [];
  let rest = line;
  const valueStart = line.indexOf(":") + 2;
  while (rest.length > 78) {
    let cut = rest.lastIndexOf(" ", 78);
    // Never fold right after the colon, nor at a continuation line's own leading space.
    if (cut <= 0 || (lines.length === 0 && cut < valueStart)) {
      cut = rest.indexOf(" ", 79);
      if (cut === -1) break;
    }
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  lines.push(rest);
  return lines.join(CRLF) + CRLF;
}

function normalizeLineBreaks(text: string): string {
  return text.replace(/\r\n|\r|\n/g, CRLF);
}

/** RFC 6533 QCHAR: printable ASCII except `\`, `+` and `=`. */
function isQchar(cp: number): boolean {
  return cp >= 0x21 && cp <= 0x7e && cp !== 0x5c && cp !== 0x2b && cp !== 0x3d;
}

/** RFC 6533 EmbeddedUnicodeChar: `\x{HEX}`, upper-case hex, at least two digits, no leading zeros beyond that. */
function embeddedUnicode(cp: number): string {
  return `\\x{${cp.toString(16).toUpperCase().padStart(2, "0")}}`;
}

/** Splits the delivery-status text into blocks of unfolded fields. */
function readBlocks(text: string, path: string): Parsed<HeaderField[][]> {
  const blocks: HeaderField[][] = [];
  let block: HeaderField[] = [];
  let current: { name: string; value: string } | undefined;
  const violations: Violation[] = [];
  const flushField = (): void => {
    if (current !== undefined) block.push({ name: current.name, value: current.value.trim() });
    current = undefined;
  };
  const flushBlock = (): void => {
    flushField();
    if (block.length > 0) blocks.push(block);
    block = [];
  };
  for (const line of text.split(/\r\n|\n/)) {
    if (/^[ \t]*$/.test(line)) {
      flushBlock();
      continue;
    }
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (current === undefined)
        violations.push({ path, rule: RULE, message: "a continuation line with no field before it" });
      else current.value += line;
      continue;
    }
    flushField();
    const colon = line.indexOf(":");
    const name = colon === -1 ? "" : line.slice(0, colon).trim();
    if (colon === -1 || !/^[!-9;-~]+$/.test(name)) {
      violations.push({ path, rule: RULE, message: `not a field: ${JSON.stringify(line.slice(0, 60))}` });
      continue;
    }
    current = { name, value: line.slice(colon + 1) };
  }
  flushBlock();
  if (violations.length > 0) return failWith(violations);
  return ok(blocks);
}

/** The one value of a field in a block; a repeated field is a violation, a missing required one too. */
function single(
  block: readonly HeaderField[],
  name: string,
  at: string,
  required: boolean,
  violations: Violation[],
): string | undefined {
  const found = block.filter((f) => f.name.toLowerCase() === name.toLowerCase());
  const path = `${at}.${name}`;
  if (found.length === 0) {
    if (required) violations.push({ path, rule: RULE, message: `${name} is required` });
    return undefined;
  }
  if (found.length > 1)
    violations.push({ path, rule: RULE, message: `${name} appears ${found.length} times; at most once` });
  return found[0]?.value;
}

/** A `type; value` field (RFC 3464 address-type / mta-name-type / diagnostic-type). */
function typedField(
  block: readonly HeaderField[],
  name: string,
  at: string,
  required: boolean,
  violations: Violation[],
): DsnTypedValue | undefined {
  const raw = single(block, name, at, required, violations);
  if (raw === undefined) return undefined;
  const semicolon = raw.indexOf(";");
  const type = semicolon === -1 ? "" : raw.slice(0, semicolon).trim().toLowerCase();
  if (!ATOM.test(type)) {
    violations.push({
      path: `${at}.${name}`,
      rule: RULE,
      message: `${name} ${JSON.stringify(raw)} is not of the form "type; value"`,
    });
    return undefined;
  }
  const value = raw.slice(semicolon + 1).trim();
  return { type, value: type === "utf-8" ? decodeUtf8AddrXtext(value) : value };
}

/**
 * Part 1 as postal-mime decodes it, minus the line break it keeps from the
 * next delimiter (RFC 2046 makes that CRLF part of the delimiter, not of the
 * text). Only for parts without a real transfer encoding: there postal-mime
 * reads line by line, and it is the extra line; a base64 or
 * quoted-printable text is decoded as a whole and has no such line.
 */
function humanReadableText(text: string, headers: readonly HeaderField[]): string {
  const encoding = headers.find((h) => h.name.toLowerCase() === "content-transfer-encoding")?.value.toLowerCase();
  const identity = encoding === undefined || encoding === "7bit" || encoding === "8bit" || encoding === "binary";
  return identity && text.endsWith("\n") ? text.slice(0, -1) : text;
}

/** A value without a trailing RFC 822 comment, e.g. `failed (see below)` → `failed`. */
function stripComment(value: string): string {
  return value.replace(/\s*\(.*\)\s*$/, "").trim();
}

function mailboxAddress(address: Address | undefined): string | undefined {
  return address === undefined ? undefined : addresses(address)[0];
}

function addresses(address: Address): string[] {
  if (address.group !== undefined) return address.group.map((m) => m.address);
  return [address.address];
}
