/**
 * Failure after acceptance (SVC-8, STATE-8, EVT-2, gap G17): a message the
 * receiver answered `accepted` fails later inside the receiving domain. The
 * receiver's domain then builds an RFC 3464 DSN (multipart/report) and hands
 * it to its own outbound side as a normal message with a null `from`
 * (ENV-3), addressed to the envelope sender. No DSN goes to a null sender:
 * a DSN about a DSN could loop.
 */
import { digestBytes } from "../protocol/digest.ts";
import { buildDsn } from "../protocol/dsn.ts";
import { chooseBoundary, concatBytes, indexOfBytes } from "../protocol/multipart.ts";
import { bytesToHex } from "../protocol/base64.ts";
import { minOf } from "../protocol/lists.ts";

const encoder = new TextEncoder();
/** The blank lines that can end a header block, encoded once (the receiver reads each stored message's). */
const CRLF_CRLF = encoder.encode("\r\n\r\n");
const LF_LF = encoder.encode("\n\n");

/** What the receiver hands its outbound side: a DSN, as a normal message with a null `from` (ENV-3). */
export interface OutboundSubmission {
  readonly from: null;
  readonly to: string[];
  readonly message: Uint8Array;
  /** What the DSN reports (the DSN itself says it too): the original delivery, and its recipients that failed. */
  readonly about?: { readonly deliveryId: string; readonly recipients: readonly FailedRecipient[] };
}

/** The receiver's outbound side: a sender of its own domain, which delivers the DSN through the service. */
export interface Outbound {
  submit(submission: OutboundSubmission): Promise<void>;
}

/** One recipient whose accepted message failed afterwards. */
export interface FailedRecipient {
  readonly mailbox: string;
  /** RFC 3463 status, e.g. `5.2.1`. */
  readonly status: string;
  /** `type; text` (RFC 3464 diagnostic-type), or plain text read as `smtp`. */
  readonly diagnostic: string;
}

/** What {@link buildFailureDsn} needs; time and identifiers are passed in. */
export interface FailureDsnInput {
  /** The served domain that reports (Reporting-MTA: dns; <domain>). */
  readonly reportingDomain: string;
  /** The envelope sender of the original message: the DSN's recipient. */
  readonly to: string;
  readonly recipients: readonly FailedRecipient[];
  /** The original message, whose header block part 3 returns. */
  readonly message: Uint8Array;
  /** When the original was accepted (Arrival-Date), ms since the epoch. */
  readonly arrivalMs: number;
  /** The DSN's Date, ms since the epoch. */
  readonly nowMs: number;
  /** Identifies the original delivery; the DSN's Message-ID and boundary derive from it, so runs repeat. */
  readonly deliveryId: string;
}

/** `type; text` → the typed diagnostic; plain text is an `smtp` diagnostic. */
export function parseDiagnostic(diagnostic: string): { type: string; text: string } {
  const match = /^([A-Za-z0-9-]+)\s*;\s*(.*)$/.exec(diagnostic);
  return match !== null
    ? { type: match[1]?.toLowerCase() ?? "smtp", text: match[2] ?? "" }
    : { type: "smtp", text: diagnostic };
}

/**
 * The header block of an RFC 5322 message: everything before the empty line
 * that ends it, with the last header line's CRLF (or LF). A message without
 * a body is all header.
 */
export function headerBlock(message: Uint8Array): Uint8Array {
  const crlf = indexOfBytes(message, CRLF_CRLF, 0);
  // Only an LF LF before the CRLF CRLF can end the block earlier, so the search for it stops there
  // (it would otherwise run through a whole CRLF message, 25 MiB of it at worst).
  const lf = indexOfBytes(crlf < 0 ? message : message.subarray(0, crlf + 2), LF_LF, 0);
  const candidates = [crlf < 0 ? undefined : crlf + 2, lf < 0 ? undefined : lf + 1].filter(
    (n): n is number => n !== undefined,
  );
  const end = candidates.length === 0 ? message.length : minOf(candidates);
  return message.subarray(0, end);
}

/**
 * The DSN for recipients of one delivery that failed after acceptance:
 * `Action: failed`, the configured Status and Diagnostic-Code, the original
 * headers as part 3 (G29's fields). Message-ID and boundary come from a
 * digest of the delivery, not from randomness, so a simulation repeats.
 */
export async function buildFailureDsn(input: FailureDsnInput): Promise<Uint8Array> {
  const original = headerBlock(input.message);
  const seed = await digestBytes(
    "sha-256",
    encoder.encode(`${input.deliveryId}\n${input.recipients.map((r) => r.mailbox).join("\n")}`),
  );
  const humanReadable = [
    `This is the mail system at ${input.reportingDomain}.`,
    "",
    `Your message was accepted for the recipient${input.recipients.length > 1 ? "s" : ""} below, but could not be delivered afterwards.`,
    "",
    ...input.recipients.map((r) => `<${r.mailbox}>: ${r.status} ${parseDiagnostic(r.diagnostic).text}`),
  ].join("\n");
  const content = concatBytes([
    original,
    encoder.encode(humanReadable),
    encoder.encode(input.recipients.map((r) => `${r.mailbox} ${r.diagnostic}`).join("\n")),
  ]);
  return buildDsn({
    reportingMta: input.reportingDomain,
    arrivalDate: input.arrivalMs,
    to: input.to,
    recipients: input.recipients.map((r) => ({
      finalRecipient: r.mailbox,
      action: "failed" as const,
      status: r.status,
      diagnosticCode: parseDiagnostic(r.diagnostic),
      lastAttemptDate: input.nowMs,
    })),
    originalHeaders: original,
    humanReadable,
    dateMs: input.nowMs,
    messageId: `dsn.${bytesToHex(seed.subarray(0, 12))}@${input.reportingDomain}`,
    boundary: chooseBoundary(seed.subarray(12, 32), content),
  });
}
