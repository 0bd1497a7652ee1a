/**
 * The DSNs the sender writes (RFC 3464 inside an RFC 6522 multipart/report,
 * built by `protocol/dsn.ts`): for recipients the receiver rejected (G14), for
 * every recipient of a request-level permanent failure (G31) or of a message
 * G13's pre-check refused, and for the recipients still undelivered at the
 * 5-day give-up (STATE-7, RETRY-6, EVT-3). Fields per G29: `Reporting-MTA:
 * dns; <sending domain>`, `Action: failed`, the Status from the problem
 * (4.4.7 after give-up on temporary answers), `Diagnostic-Code: x-svc;
 * <problem type URI>`, Arrival-Date and Last-Attempt-Date, the original
 * headers as part 3.
 *
 * The DSN goes to the envelope sender as a normal message with a null `from`
 * (ENV-3); a message whose own `from` is null gets none, so DSNs never loop.
 */
import type { Random } from "../ports.ts";
import { bytesToHex } from "../protocol/base64.ts";
import { buildDsn, problemDiagnostic, statusFor } from "../protocol/dsn.ts";
import { chooseBoundary, concatBytes, indexOfBytes } from "../protocol/multipart.ts";
import type { ProblemSummary } from "./http.ts";
import { minOf } from "../protocol/lists.ts";

const encoder = new TextEncoder();

/** Why a recipient failed for good at the sender. */
export type FailureKind = "rejected" | "bounced";

/** One recipient a DSN reports. */
export interface FailedRecipient {
  readonly recipient: string;
  readonly kind: FailureKind;
  /** The problem that decided (or, for a bounce, the last one seen); absent when none is known. */
  readonly problem?: ProblemSummary;
  /** Whether that problem was permanent; decides the Status class of an unknown identifier (ERR-19, ERR-20). */
  readonly permanent: boolean;
  /** When the last attempt to this recipient started, epoch ms. */
  readonly lastAttemptAtMs?: number;
  /** The receiver's origin that answered, when one did. */
  readonly remoteOrigin?: string;
  /** The rule and gaps that decided the failure, for the trace (`G14`, `G31`, `G13` …). */
  readonly rule?: string;
  readonly gaps?: readonly string[];
}

/** What happened to one message, from the sender's side, that its envelope sender must be told. */
export interface FailureReport {
  readonly messageId: string;
  /** The original envelope sender: the DSN's recipient. Null means no DSN. */
  readonly from: string | null;
  /** The original message, whose header block part 3 returns. */
  readonly message: Uint8Array;
  /** When the sender took the message (Arrival-Date), epoch ms. */
  readonly arrivalAtMs: number;
  /** The receiving domain the failures are in; empty for recipients that were not mailboxes at all. */
  readonly domain: string;
  readonly recipients: readonly FailedRecipient[];
}

/**
 * The header block of an RFC 5322 message: everything before the empty line,
 * with the last header line's line break; the whole message when it has no body.
 */
export function headerBlockOf(message: Uint8Array): Uint8Array {
  const crlf = indexOfBytes(message, encoder.encode("\r\n\r\n"), 0);
  const lf = indexOfBytes(message, encoder.encode("\n\n"), 0);
  const ends = [crlf < 0 ? undefined : crlf + 2, lf < 0 ? undefined : lf + 1].filter(
    (n): n is number => n !== undefined,
  );
  return message.subarray(0, ends.length === 0 ? message.length : minOf(ends));
}

/** The RFC 3463 status of a failed recipient (G29). */
export function statusOf(failure: FailedRecipient): string {
  const identifier = failure.problem?.identifier ?? (failure.permanent ? "unknown" : "temporary_failure");
  return statusFor(identifier, { gaveUp: failure.kind === "bounced", permanent: failure.permanent });
}

function explanation(failure: FailedRecipient): string {
  const problem =
    failure.problem === undefined
      ? ""
      : ` (${failure.problem.identifier ?? failure.problem.type}${failure.problem.detail === undefined ? "" : `: ${failure.problem.detail}`})`;
  return failure.kind === "bounced"
    ? `<${failure.recipient}>: still undeliverable after 5 days of retrying${problem}`
    : `<${failure.recipient}>: the receiving domain refused it for good${problem}`;
}

/** The host of an origin when it is a plain host name (RFC 3464 `dns;`); an underscore name (G5's `.` target) is left out. */
function remoteMtaOf(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  const host = URL.canParse(origin) ? new URL(origin).hostname : "";
  return /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host) ? host : undefined;
}

/** A DSN ready to submit: its own Message-ID and bytes. */
export interface BuiltDsn {
  readonly dsnMessageId: string;
  readonly to: string;
  readonly bytes: Uint8Array;
}

/**
 * The DSN for `report`, or undefined when the envelope sender is null (no DSN
 * about a DSN) or nothing failed. Message-ID and boundary are drawn from
 * `random`, so a seeded run repeats.
 */
export function buildFailureReport(
  report: FailureReport,
  options: { readonly reportingDomain: string; readonly nowMs: number; readonly random: Random },
): BuiltDsn | undefined {
  if (report.from === null || report.recipients.length === 0) return undefined;
  const original = headerBlockOf(report.message);
  const bounced = report.recipients.some((r) => r.kind === "bounced");
  const humanReadable = [
    `This is the mail system at ${options.reportingDomain}.`,
    "",
    bounced
      ? `Your message could not be delivered to ${report.domain}; the sender gave up after 5 days.`
      : report.domain === ""
        ? "Your message could not be delivered: some recipients are not valid mailboxes."
        : `Your message could not be delivered to ${report.domain}.`,
    "",
    ...report.recipients.map(explanation),
  ].join("\n");
  const dsnMessageId = `dsn.${bytesToHex(options.random.bytes(12))}@${options.reportingDomain}`;
  const boundary = chooseBoundary(options.random.bytes(24), concatBytes([original, encoder.encode(humanReadable)]));
  const bytes = buildDsn({
    reportingMta: options.reportingDomain,
    arrivalDate: report.arrivalAtMs,
    to: report.from,
    recipients: report.recipients.map((failure) => ({
      finalRecipient: failure.recipient,
      action: "failed" as const,
      status: statusOf(failure),
      ...(failure.problem !== undefined && {
        diagnosticCode: problemDiagnostic(failure.problem.type, failure.problem.detail),
      }),
      ...(failure.lastAttemptAtMs !== undefined && { lastAttemptDate: failure.lastAttemptAtMs }),
      ...(remoteMtaOf(failure.remoteOrigin) !== undefined && { remoteMta: remoteMtaOf(failure.remoteOrigin) }),
    })),
    originalHeaders: original,
    humanReadable,
    dateMs: options.nowMs,
    messageId: dsnMessageId,
    boundary,
  });
  return { dsnMessageId, to: report.from, bytes };
}
