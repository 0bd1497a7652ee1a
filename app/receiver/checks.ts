/**
 * The receiver's checks of POST /v1/messages in the order of gap G10, as
 * data: the handler walks its steps in this order (one function per check,
 * `requestSteps.ts` and `recipientSteps.ts`), and so does the lint-request
 * tool (`lintChecks.ts`); the docs show them from here. When several things are wrong with a request,
 * the first failing check decides the answer.
 *
 * The spec gives no order of checks (G10 is that silence; the only order it
 * states is SVC-7's list of per-recipient checks). The signature comes before
 * the digest because the signature covers the Content-Digest header (AUTH-2):
 * it is verified from the headers alone, before a byte of the body is read
 * (decision 0017), and both failures are 401 `invalid_signature` (AUTH-5), so
 * the order decides only which reason a request wrong in both is given.
 *
 * The work follows the same order: nothing of the body is read
 * before `signature` passes nor parsed before `digest` does, so an
 * unauthenticated request costs no work per recipient; `envelope` checks the length of `to` against
 * max_recipients before it reads any recipient, and every check across
 * recipients takes linear time.
 */
import type { ProblemIdentifier } from "../protocol/errors.ts";
import type { RuleId } from "../protocol/rules.ts";

/** A check of the request as a whole (level R): the first failing one answers the request with a problem. */
export type RequestCheckId =
  | "version-path"
  | "availability"
  | "headers"
  | "size"
  | "target-host"
  | "signature"
  | "digest"
  | "from-domain"
  | "idempotency"
  | "envelope"
  | "recipient-domain"
  | "rate-limit"
  | "policy";

/** A check of one recipient (level P): the first failing one gives that recipient's entry of the 200. */
export type RecipientCheckId =
  "recipient-exists" | "recipient-policy" | "recipient-temporary-failure" | "recipient-rate-limit" | "quota" | "store";

/** The name of one check, used in problem details and the trace. */
export type ReceiverCheckId = RequestCheckId | RecipientCheckId;

/** One step of the receiver's check order. */
export interface ReceiverCheck {
  readonly id: ReceiverCheckId;
  /** What is checked, in a line. */
  readonly title: string;
  /** R: the request is answered with a problem; P: one recipient's entry of the 200 is. */
  readonly level: "R" | "P";
  /** The problem a failure gets; `idempotency` answers a replay with the stored response instead. */
  readonly problem: ProblemIdentifier;
  /** The HTTP status of a request-level failure; `null` for per-recipient checks. */
  readonly status: number | null;
  /** The spec's rules behind the check. */
  readonly rules: readonly RuleId[];
  /** The gaps whose readings the check follows. */
  readonly gaps: readonly string[];
  /** Alternative answers a reading or the configuration can choose. */
  readonly note?: string;
}

/**
 * G10's order. `availability` comes first: a receiver that is down says so
 * before it looks at anything (G10's reading). A
 * request that passes every request-level check gets 200 with one result per
 * recipient; the per-recipient checks run for each recipient in the order of
 * `to`, and the first failing one gives that recipient's entry.
 */
export const receiverChecks: readonly ReceiverCheck[] = [
  {
    id: "version-path",
    title: "the path is under a major version the receiver serves",
    level: "R",
    problem: "unsupported_version",
    status: 404,
    rules: ["VER-1", "VER-7", "GET-10", "ERR-14", "ERR-15", "PRB-4", "POST-16"],
    gaps: ["G10"],
  },
  {
    id: "availability",
    title: "the receiver is accepting deliveries at all (policy `unavailable`)",
    level: "R",
    problem: "temporary_failure",
    status: 503,
    rules: ["ERR-10", "POST-20"],
    gaps: ["G21"],
  },
  {
    id: "headers",
    title:
      "Idempotency-Key, Signature, Signature-Input, Content-Digest and Content-Type are present and well-formed (Content-Type multipart/mixed with an RFC 2046 boundary)",
    level: "R",
    problem: "invalid_request",
    status: 400,
    rules: ["POST-2", "POST-3", "POST-4", "POST-5", "POST-6", "LIM-5", "POST-13", "ERR-16"],
    gaps: ["G9", "G10"],
  },
  {
    id: "size",
    title:
      "the request body is at most max_message_size: Content-Length here, the bytes as they arrive once the signature passes",
    level: "R",
    problem: "message_too_large",
    status: 413,
    rules: ["ERR-12", "LIM-2", "CAP-6", "POST-18"],
    gaps: ["G10", "G24"],
  },
  {
    id: "target-host",
    title:
      "the request's target host is a name of this receiver (a served domain, a subdomain of one, or a name of its certificate)",
    level: "R",
    problem: "invalid_signature",
    status: 401,
    rules: ["AUTH-5"],
    gaps: ["G48", "G10"],
    note: "Checked by `mailscope serve` only: the simulator's network delivers a request to the receiver at its host, and lint-request does not know the certificate's names.",
  },
  {
    id: "signature",
    title:
      "the signature, from the headers alone (the body unread): profile components, created and keyid present, alg ed25519, created within tolerance, keyid form, published key, Ed25519 verification",
    level: "R",
    problem: "invalid_signature",
    status: 401,
    rules: ["AUTH-1", "AUTH-3", "AUTH-5", "AUTH-9", "POST-3", "POST-4", "POST-14"],
    gaps: ["G1", "G2", "G3", "G4", "G10"],
    note: "A key lookup that fails in DNS (SERVFAIL, timeout) is 503 temporary_failure: the key may exist.",
  },
  {
    id: "digest",
    title: "the Content-Digest is the digest of the body, read once the signature passes",
    level: "R",
    problem: "invalid_signature",
    status: 401,
    rules: ["POST-5", "AUTH-2", "AUTH-5", "POST-14"],
    gaps: ["G10"],
  },
  {
    id: "from-domain",
    title: "the domain of the envelope `from` is the signing domain (a null `from` passes)",
    level: "R",
    problem: "invalid_signature",
    status: 401,
    rules: ["AUTH-4", "ENV-2"],
    gaps: ["G19", "G22"],
    note: "G19 reading 403: policy_rejected instead.",
  },
  {
    id: "idempotency",
    title:
      "a known (signing domain, Idempotency-Key) with the same body digest is replayed byte for byte; with another digest it conflicts",
    level: "R",
    problem: "idempotency_conflict",
    status: 409,
    rules: ["POST-12", "POST-23", "POST-25", "POST-26", "ERR-13", "AUTH-6", "LIM-6"],
    gaps: ["G11"],
  },
  {
    id: "envelope",
    title:
      "the body is exactly two parts (application/json, message/rfc822) and part 1 is a valid Envelope with at most max_recipients recipients",
    level: "R",
    problem: "invalid_request",
    status: 400,
    rules: [
      "POST-7",
      "POST-8",
      "POST-9",
      "ENV-1",
      "ENV-3",
      "ENV-4",
      "ENV-5",
      "ENV-6",
      "ENV-7",
      "ENV-8",
      "ERR-11",
      "LIM-4",
      "LIM-7",
      "LIM-8",
    ],
    gaps: ["G9", "G22", "G23"],
  },
  {
    id: "recipient-domain",
    title: "the recipients' domain is one this receiver serves",
    level: "R",
    problem: "invalid_request",
    status: 400,
    rules: ["POST-1", "POST-22", "ERR-16"],
    gaps: ["G10"],
  },
  {
    id: "rate-limit",
    title: "the signing domain is within its rate limit",
    level: "R",
    problem: "rate_limited",
    status: 429,
    rules: ["ERR-8", "POST-19", "LIM-14"],
    gaps: ["G21"],
  },
  {
    id: "policy",
    title: "the sender (envelope `from` or signing domain) is not refused by local policy",
    level: "R",
    problem: "policy_rejected",
    status: 403,
    rules: ["ERR-3", "POST-15", "SVC-10", "ERR-27"],
    gaps: ["G26"],
  },
  {
    id: "recipient-exists",
    title: "the recipient's mailbox exists",
    level: "P",
    problem: "recipient_not_found",
    status: null,
    rules: ["SVC-7", "ERR-4", "ERR-17"],
    gaps: [],
  },
  {
    id: "recipient-policy",
    title: "the recipient's mailbox does not refuse this sender",
    level: "P",
    problem: "policy_rejected",
    status: null,
    rules: ["SVC-7", "ERR-3", "ERR-17"],
    gaps: [],
  },
  {
    id: "recipient-temporary-failure",
    title: "the recipient's mailbox is not failing temporarily (policy `temporaryFailures`)",
    level: "P",
    problem: "temporary_failure",
    status: null,
    rules: ["ERR-10", "ERR-18"],
    gaps: [],
  },
  {
    id: "recipient-rate-limit",
    title: "the recipient's mailbox is within its rate limit",
    level: "P",
    problem: "rate_limited",
    status: null,
    rules: ["ERR-8", "ERR-18", "RCP-5"],
    gaps: [],
  },
  {
    id: "quota",
    title: "the message fits the recipient's quota",
    level: "P",
    problem: "mailbox_full",
    status: null,
    rules: ["SVC-7", "ERR-9", "ERR-18"],
    gaps: [],
  },
  {
    id: "store",
    title: "the mail store took the message, byte for byte (else temporary_failure)",
    level: "P",
    problem: "temporary_failure",
    status: null,
    rules: ["POST-9", "POST-10", "ERR-10", "ERR-18"],
    gaps: [],
  },
];

const byId: ReadonlyMap<ReceiverCheckId, ReceiverCheck> = new Map(receiverChecks.map((c) => [c.id, c]));

/** The check with this ID. */
export function receiverCheck(id: ReceiverCheckId): ReceiverCheck {
  const check = byId.get(id);
  if (check === undefined) throw new RangeError(`no receiver check ${id}`);
  return check;
}

/** The IDs of the checks of one level, in G10's order: the order the handler and lintChecks walk them in. */
export function checkOrder(level: "R"): readonly RequestCheckId[];
export function checkOrder(level: "P"): readonly RecipientCheckId[];
export function checkOrder(level: "R" | "P"): readonly ReceiverCheckId[] {
  return receiverChecks.filter((c) => c.level === level).map((c) => c.id);
}
