/**
 * The receiver's answers before they become Responses: bytes, so that an answer can be stored for
 * replays and given again byte for byte (G11); problem details (ERR-1, PRB-1) in the receiver's words.
 */
import { responseWithBody } from "../protocol/bodies.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import { createProblem, problemJson, PROBLEM_MEDIA_TYPE } from "../protocol/resources.ts";
import type { Problem } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import { keptAnswers } from "../protocol/memo.ts";
import { StorageError } from "../ports.ts";
import { errorMessage } from "../errorMessage.ts";
import type { ReceiverConfig } from "./config.ts";
import type { StoredResponse } from "./idempotencyStore.ts";

export const JSON_MEDIA_TYPE = "application/json";
const encoder = new TextEncoder();
/**
 * The header fields of a 200 and of a problem without Retry-After or Allow, shared by every answer that has
 * them, and as `Headers` for {@link toResponse}: a Response copies a `Headers` list as it is, where it converts
 * an array of pairs one by one first.
 */
const JSON_HEADERS: StoredResponse["headers"] = [["content-type", JSON_MEDIA_TYPE]];
const PROBLEM_HEADERS: StoredResponse["headers"] = [["content-type", PROBLEM_MEDIA_TYPE]];
const SHARED_HEADERS = new Map<StoredResponse["headers"], Headers>([
  [JSON_HEADERS, new Headers(JSON_HEADERS as [string, string][])],
  [PROBLEM_HEADERS, new Headers(PROBLEM_HEADERS as [string, string][])],
]);
/** At most this many violations are spelled out in a problem's detail; the rest are counted. */
const DETAIL_VIOLATIONS = 20;

export const TITLES: Readonly<Record<ProblemIdentifier, string>> = {
  invalid_request: "Invalid request",
  invalid_signature: "Invalid signature",
  policy_rejected: "Rejected by policy",
  recipient_not_found: "Recipient not found",
  unsupported_version: "Unsupported version",
  idempotency_conflict: "Idempotency key conflict",
  message_too_large: "Message too large",
  rate_limited: "Rate limited",
  mailbox_full: "Mailbox full",
  temporary_failure: "Temporary failure",
};

/** An answer before it becomes a Response: bytes, so that it can be stored and replayed byte for byte. */
export interface Answer {
  readonly response: StoredResponse;
  /** For the trace: the problem identifier of a problem answer. */
  readonly problem?: ProblemIdentifier;
  /** For the trace: the recipients' results of a 200. */
  readonly recipients?: readonly { recipient: string; status: string; problem?: ProblemIdentifier }[];
}

/** One recipient's entry of the DeliveryResult being built. */
export interface Outcome {
  readonly recipient: string;
  readonly status: "accepted" | "rejected" | "deferred";
  readonly problem?: ProblemIdentifier;
  readonly detail?: string;
  readonly retryAfterS?: number;
}

/** What a problem answer adds to its problem: Retry-After (G21: delta-seconds) and Allow (a 405). */
export interface ProblemOptions {
  readonly retryAfterS?: number;
  readonly allow?: string;
}

/** A problem answer of this receiver (its problem base; an `unsupported_version` lists its versions, VER-7). */
export function problemAnswer(
  cfg: Pick<ReceiverConfig, "problem_base" | "capabilities">,
  identifier: ProblemIdentifier,
  status: number,
  detail: string,
  options: ProblemOptions = {},
): Answer {
  const problem: Problem =
    identifier === "unsupported_version"
      ? createProblem("unsupported_version", {
          problemBase: cfg.problem_base,
          title: TITLES[identifier],
          detail,
          versions: cfg.capabilities.versions,
        })
      : createProblem(identifier, { problemBase: cfg.problem_base, title: TITLES[identifier], detail });
  let headers = PROBLEM_HEADERS;
  if (options.retryAfterS !== undefined || options.allow !== undefined) {
    const more: [string, string][] = [["content-type", PROBLEM_MEDIA_TYPE]];
    // G21: the receiver sends delta-seconds.
    if (options.retryAfterS !== undefined) more.push(["retry-after", String(options.retryAfterS)]);
    if (options.allow !== undefined) more.push(["allow", options.allow]);
    headers = more;
  }
  const body = encoder.encode(JSON.stringify({ ...problemJson(problem), status }));
  return {
    response: { status, headers, body },
    problem: identifier,
  };
}

/**
 * The 200 of deliveries whose recipients were all accepted, by their recipients (one per line: an address holds
 * no line break), made once: most answers of a receiver are one of a few such. Its bytes are shared as the
 * capabilities answer's are (an answer's bytes are only ever read, see {@link toResponse}).
 */
const allAccepted = keptAnswers(
  // No problem is written for an accepted recipient, so no problem base is read.
  (recipients: string): Answer => resultsAnswerOf({ problem_base: "" }, recipients.split("\n").map(acceptedOutcome)),
  256,
  4096,
);

function acceptedOutcome(recipient: string): Outcome {
  return { recipient, status: "accepted" };
}

/** The 200 of a delivery (POST-11): one result per envelope recipient, in the order of `to` (DLR-2). */
export function resultsAnswer(cfg: Pick<ReceiverConfig, "problem_base">, outcomes: readonly Outcome[]): Answer {
  if (outcomes.length > 0 && outcomes.every(isPlainAcceptance)) {
    return allAccepted(outcomes.map((o) => o.recipient).join("\n"));
  }
  return resultsAnswerOf(cfg, outcomes);
}

function isPlainAcceptance(o: Outcome): boolean {
  return (
    o.status === "accepted" && o.problem === undefined && o.retryAfterS === undefined && !o.recipient.includes("\n")
  );
}

function resultsAnswerOf(cfg: Pick<ReceiverConfig, "problem_base">, outcomes: readonly Outcome[]): Answer {
  const results = outcomes.map((o) => ({
    recipient: o.recipient,
    status: o.status,
    ...(o.problem !== undefined && {
      problem: problemJson(
        createProblem(o.problem, {
          problemBase: cfg.problem_base,
          title: TITLES[o.problem],
          ...(o.detail !== undefined && { detail: o.detail }),
        }),
      ),
    }),
    ...(o.retryAfterS !== undefined && { retry_after: o.retryAfterS }),
  }));
  return {
    response: {
      status: 200,
      headers: JSON_HEADERS,
      body: encoder.encode(JSON.stringify({ results })),
    },
    recipients: outcomes.map((o) => ({
      recipient: o.recipient,
      status: o.status,
      ...(o.problem !== undefined && { problem: o.problem }),
    })),
  };
}

/** Violations in a problem's detail: bad input can hold one per line or per recipient, so the first few are spelled out. */
export function violationsDetail(violations: readonly Violation[]): string {
  const shown = violations.slice(0, DETAIL_VIOLATIONS).map((v) => `${v.path}: ${v.message} [${v.rule}]`);
  const more = violations.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; and ${more} more` : shown.join("; ");
}

/** The Response of an answer (no body for a HEAD). */
export function toResponse(answer: Answer, method: string): Response {
  const { status, headers, body } = answer.response;
  // No copy here: a Response takes a copy of the bytes it is given (Fetch "extract a body"), and a reader
  // in this process given the bytes themselves (app/protocol/bodies.ts) only reads them, so a stored answer
  // replayed later stays as it was.
  // A Response reads its init's headers and keeps none of them: given as they are, not copied first.
  return responseWithBody(method === "HEAD" ? null : body, {
    status,
    headers: SHARED_HEADERS.get(headers) ?? (headers as [string, string][]),
  });
}

/**
 * Whether an answer is remembered for replays. 200 and the permanent answers
 * after the idempotency step (400, and 403 without Retry-After) are: the
 * sender never retries them. 429 and 503, and a 403 that invites a retry
 * (G26), are not: a retry with the same key (POST-24) must get a new chance.
 */
export function isRemembered(answer: Answer): boolean {
  const { status, headers } = answer.response;
  if (status === 200 || status === 400) return true;
  return status === 403 && !headers.some(([name]) => name === "retry-after");
}

/** A recipient deferred because a store failed: temporary_failure (ERR-21), the store (and its path) named. */
export function deferredByStore(recipient: string, store: "mail store" | "idempotency store", error: unknown): Outcome {
  return { recipient, status: "deferred", problem: "temporary_failure", detail: storeFailed(store, error) };
}

/**
 * A store's failure in an answer: the store and the path it names itself ({@link StorageError}, the stores on
 * disk), else the store this step called and its words.
 */
export function storeFailed(store: "mail store" | "idempotency store", error: unknown): string {
  return error instanceof StorageError
    ? `the ${error.store} failed at ${error.path}: ${error.reason}`
    : `the ${store} failed: ${errorMessage(error)}`;
}
