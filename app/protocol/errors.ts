/**
 * The errors table of SPEC.md ("Errors") as data, and the sender's reading of
 * answers: request-level problems, per-recipient results, transport failures
 * and Retry-After.
 *
 * Readings taken where the spec is silent (see docs/decisions and the gaps):
 * - A known identifier decides the class. An identifier that is not listed for
 *   the level it arrives at (`mailbox_full` as a request-level answer,
 *   `invalid_request` inside a result) is handled like an unknown problem type.
 * - SMTP fallback after the window needs a request-level 5xx (ERR-22) as well
 *   as a fallback-eligible identifier: `temporary_failure` sent with 400 is
 *   retried but never falls back (ERR-23: "all 4xx problems").
 * - A per-recipient known problem decides the outcome by its class (ERR-17,
 *   ERR-18), except that an unknown status stays `deferred` (RCP-3 is a MUST).
 *   Status and class disagreeing is reported as `consistent: false`.
 */
import { problemIdentifier } from "./resources.ts";
import type { Problem, RecipientResult } from "./resources.ts";
import type { RuleId } from "./rules.ts";

export const PROBLEM_IDENTIFIERS = [
  "invalid_request",
  "invalid_signature",
  "policy_rejected",
  "recipient_not_found",
  "unsupported_version",
  "idempotency_conflict",
  "message_too_large",
  "rate_limited",
  "mailbox_full",
  "temporary_failure",
] as const;

export type ProblemIdentifier = (typeof PROBLEM_IDENTIFIERS)[number];
/** R: request-level problem response (nothing delivered); P: per-recipient problem inside a 200 result. */
export type ErrorLevel = "R" | "P" | "R, P";
export type ErrorClass = "permanent" | "temporary";
export type RetryOverService = "no" | "yes" | "yes, honoring Retry-After / retry_after";
export type SmtpFallback = "never" | "immediately" | "after the fallback window (R only)";

/** One row of the errors table. */
export interface ErrorsTableRow {
  readonly identifier: ProblemIdentifier;
  readonly level: ErrorLevel;
  /** The request-level HTTP status; `null` for P-only identifiers ("none"). */
  readonly httpStatus: number | null;
  readonly class: ErrorClass;
  readonly retryOverService: RetryOverService;
  readonly smtpFallback: SmtpFallback;
  /** The table row's rule first, then the rules that name the same identifier elsewhere. */
  readonly rules: readonly RuleId[];
}

/** SPEC.md's errors table, row for row. */
export const errorsTable: { readonly [I in ProblemIdentifier]: ErrorsTableRow & { readonly identifier: I } } = {
  invalid_request: {
    identifier: "invalid_request",
    level: "R",
    httpStatus: 400,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-1", "POST-13", "ERR-11", "ERR-16", "LIM-4"],
  },
  invalid_signature: {
    identifier: "invalid_signature",
    level: "R",
    httpStatus: 401,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-2", "POST-14", "AUTH-5"],
  },
  policy_rejected: {
    identifier: "policy_rejected",
    level: "R, P",
    httpStatus: 403,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-3", "POST-15", "ERR-16", "ERR-27"],
  },
  recipient_not_found: {
    identifier: "recipient_not_found",
    level: "P",
    httpStatus: null,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-4", "ERR-16"],
  },
  unsupported_version: {
    identifier: "unsupported_version",
    level: "R",
    httpStatus: 404,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "immediately",
    rules: ["ERR-5", "POST-16", "ERR-14", "ERR-15", "ERR-26", "GET-10", "VER-7"],
  },
  idempotency_conflict: {
    identifier: "idempotency_conflict",
    level: "R",
    httpStatus: 409,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-6", "POST-17", "ERR-13", "POST-26"],
  },
  message_too_large: {
    identifier: "message_too_large",
    level: "R",
    httpStatus: 413,
    class: "permanent",
    retryOverService: "no",
    smtpFallback: "never",
    rules: ["ERR-7", "POST-18", "ERR-12", "LIM-2"],
  },
  rate_limited: {
    identifier: "rate_limited",
    level: "R, P",
    httpStatus: 429,
    class: "temporary",
    retryOverService: "yes, honoring Retry-After / retry_after",
    smtpFallback: "never",
    rules: ["ERR-8", "POST-19", "ERR-27"],
  },
  mailbox_full: {
    identifier: "mailbox_full",
    level: "P",
    httpStatus: null,
    class: "temporary",
    retryOverService: "yes",
    smtpFallback: "never",
    rules: ["ERR-9"],
  },
  temporary_failure: {
    identifier: "temporary_failure",
    level: "R, P",
    httpStatus: 503,
    class: "temporary",
    retryOverService: "yes",
    smtpFallback: "after the fallback window (R only)",
    rules: ["ERR-10", "POST-20", "ERR-21"],
  },
};

/** Whether `identifier` is one of the errors table's identifiers. */
export function isProblemIdentifier(identifier: string | undefined): identifier is ProblemIdentifier {
  return identifier !== undefined && Object.hasOwn(errorsTable, identifier);
}

/** Whether a row may arrive at this level. */
export function allowedAt(row: ErrorsTableRow, level: "R" | "P"): boolean {
  return row.level === level || row.level === "R, P";
}

/** How the sender handles a request-level answer or a transport failure. */
export interface RequestLevelReading {
  /** The errors-table row the answer is handled as; `undefined` for an unknown problem handled by status class alone. */
  readonly identifier: ProblemIdentifier | undefined;
  /** The problem `type` as sent, if there was a problem document. */
  readonly typeAsSent: string | undefined;
  /** The identifier came from a problem type listed for request level. */
  readonly known: boolean;
  readonly class: ErrorClass;
  /** Retried over the service (temporary answers). */
  readonly retry: boolean;
  /**
   * Counts towards the SMTP fallback after the fallback window (ERR-22): a
   * connection or TLS failure, or a request-level 5xx that is temporary.
   */
  readonly fallbackEligible: boolean;
  /** When SMTP may take over: never, at once (no common version, ERR-26), or after the fallback window. */
  readonly smtpFallback: "never" | "immediately" | "after the fallback window";
  /** The rule that decided. */
  readonly rule: RuleId;
  /** Gap readings applied, for the trace. */
  readonly gaps: readonly string[];
}

function reading(fields: Omit<RequestLevelReading, "retry" | "fallbackEligible">): RequestLevelReading {
  return {
    ...fields,
    retry: fields.class === "temporary",
    fallbackEligible: fields.smtpFallback === "after the fallback window",
  };
}

/**
 * The sender's reading of a non-200 answer (or a 200 whose body did not parse,
 * G15). A known identifier listed for level R decides by the errors table; an
 * unknown type, or no problem document, by the status class (ERR-19): 4xx
 * permanent and never fallback-eligible (so also 429 without `rate_limited`,
 * G30), 5xx temporary and fallback-eligible (ERR-21, ERR-22). Statuses outside
 * 4xx/5xx are a temporary, fallback-eligible failure (G30).
 */
export function interpretRequestLevel(
  status: number,
  problem: Problem | undefined,
  problemBase: string,
): RequestLevelReading {
  const typeAsSent = problem?.type;
  const identifier = problem === undefined ? undefined : problemIdentifier(problem, problemBase);
  const is5xx = status >= 500 && status <= 599;
  if (isProblemIdentifier(identifier) && allowedAt(errorsTable[identifier], "R")) {
    const row = errorsTable[identifier];
    const smtpFallback =
      row.smtpFallback === "immediately"
        ? "immediately"
        : row.smtpFallback === "after the fallback window (R only)" && is5xx
          ? "after the fallback window"
          : "never";
    const rule = smtpFallback === "immediately" ? "ERR-26" : (row.rules[0] ?? "ERR-19");
    return reading({
      identifier,
      typeAsSent,
      known: true,
      class: row.class,
      smtpFallback,
      rule,
      gaps: smtpFallback === "immediately" ? ["G32"] : [],
    });
  }
  if (status >= 400 && status <= 499) {
    return reading({
      identifier: undefined,
      typeAsSent,
      known: false,
      class: "permanent",
      smtpFallback: "never",
      rule: "ERR-19",
      gaps: problem === undefined ? ["G30"] : [],
    });
  }
  if (is5xx) {
    return problem === undefined
      ? reading({
          identifier: "temporary_failure",
          typeAsSent,
          known: false,
          class: "temporary",
          smtpFallback: "after the fallback window",
          rule: "ERR-21",
          gaps: [],
        })
      : reading({
          identifier: undefined,
          typeAsSent,
          known: false,
          class: "temporary",
          smtpFallback: "after the fallback window",
          rule: "ERR-19",
          gaps: [],
        });
  }
  return reading({
    identifier: "temporary_failure",
    typeAsSent,
    known: false,
    class: "temporary",
    smtpFallback: "after the fallback window",
    rule: "ERR-21",
    gaps: [status === 200 ? "G15" : "G30"],
  });
}

export type TransportFailureKind = "connection" | "tls" | "timeout" | "capabilities";

/**
 * A failure with no HTTP answer to read: connection, TLS, timeout, or a
 * capabilities document that cannot be fetched or is invalid. All are
 * `temporary_failure`, fallback-eligible (ERR-21, GET-9). A timeout counts as
 * a connection failure: the endpoint did not answer.
 */
export function transportFailure(kind: TransportFailureKind): RequestLevelReading {
  return reading({
    identifier: "temporary_failure",
    typeAsSent: undefined,
    known: false,
    class: "temporary",
    smtpFallback: "after the fallback window",
    rule: kind === "capabilities" ? "GET-9" : "ERR-21",
    gaps: kind === "capabilities" ? ["G28"] : [],
  });
}

/**
 * No major version in common (a capabilities `versions` list without one the
 * sender speaks): like an `unsupported_version` answer, SMTP at once
 * (STATE-4, ERR-26, G32).
 */
export function noCommonVersion(): RequestLevelReading {
  return reading({
    identifier: "unsupported_version",
    typeAsSent: undefined,
    known: false,
    class: "permanent",
    smtpFallback: "immediately",
    rule: "ERR-26",
    gaps: ["G32"],
  });
}

/** How the sender handles one recipient's entry of a DeliveryResult. */
export interface RecipientReading {
  readonly outcome: "accepted" | "rejected" | "deferred";
  /** The errors-table row the entry is handled as; `undefined` when accepted or the problem type is unknown. */
  readonly problem: ProblemIdentifier | undefined;
  /** Seconds to wait at least before retrying (RETRY-7); only with `deferred` (RCP-6). */
  readonly retryAfterS?: number;
  /** Status as sent and problem class agree (ERR-17, ERR-18); false also for an unknown status. */
  readonly consistent: boolean;
  readonly rule: RuleId;
  readonly gaps: readonly string[];
}

/**
 * The sender's reading of one result entry: `accepted` stays accepted; a
 * missing problem is `deferred` with `temporary_failure` (G15); a known
 * per-recipient problem decides by class (permanent → `rejected`, ERR-17;
 * temporary → `deferred`, ERR-18), but an unknown status is always `deferred`
 * (RCP-3); an unknown problem type goes by the status (ERR-20).
 */
export function interpretRecipientResult(entry: RecipientResult, problemBase: string): RecipientReading {
  const statusKnown = entry.status === entry.statusAsSent;
  if (entry.statusAsSent === "accepted") {
    return { outcome: "accepted", problem: undefined, consistent: true, rule: "RCP-2", gaps: [] };
  }
  const withRetry = (r: Omit<RecipientReading, "retryAfterS">): RecipientReading =>
    r.outcome === "deferred" && entry.retry_after !== undefined ? { ...r, retryAfterS: entry.retry_after } : r;
  if (entry.problem === undefined) {
    return withRetry({
      outcome: "deferred",
      problem: "temporary_failure",
      consistent: false,
      rule: "RCP-4",
      gaps: ["G15"],
    });
  }
  const identifier = problemIdentifier(entry.problem, problemBase);
  if (isProblemIdentifier(identifier) && allowedAt(errorsTable[identifier], "P")) {
    const row = errorsTable[identifier];
    const byClass = row.class === "permanent" ? "rejected" : "deferred";
    if (!statusKnown) {
      return withRetry({ outcome: "deferred", problem: identifier, consistent: false, rule: "RCP-3", gaps: [] });
    }
    return withRetry({
      outcome: byClass,
      problem: identifier,
      consistent: byClass === entry.statusAsSent,
      rule: row.class === "permanent" ? "ERR-17" : "ERR-18",
      gaps: [],
    });
  }
  return withRetry({
    outcome: entry.status,
    problem: undefined,
    consistent: statusKnown,
    rule: statusKnown ? "ERR-20" : "RCP-3",
    gaps: [],
  });
}

// ── Retry-After ───────────────────────────────────────────────────────────

/** RFC 9111 §1.2.2: a delta-seconds too large to hold is read as 2^31. */
const MAX_DELTA_SECONDS = 2147483648;

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY_NAME = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY_NAME = "(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})";
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, ([0-9]{2}) ${MONTH} ([0-9]{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY_NAME}, ([0-9]{2})-${MONTH}-([0-9]{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} ([0-9 ][0-9]) ${TIME} ([0-9]{4})$`);

function utcMs(
  year: number,
  month: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  const monthIndex = MONTHS.indexOf(month);
  if (monthIndex < 0 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, monthIndex, day, hour, minute, Math.min(second, 59));
  const check = new Date(ms);
  // Date.UTC rolls 31 Feb over into March; a date that does not exist is not a date.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== monthIndex || check.getUTCDate() !== day)
    return undefined;
  return ms;
}

/** An HTTP-date (RFC 9110 §5.6.7) in ms since the epoch; rfc850's two-digit year is placed relative to `nowMs`. */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m !== null) return utcMs(Number(m[4]), m[3] ?? "", Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  m = ASCTIME_DATE.exec(value);
  if (m !== null)
    return utcMs(Number(m[7]), m[2] ?? "", Number((m[3] ?? "").trim()), Number(m[4]), Number(m[5]), Number(m[6]));
  m = RFC850_DATE.exec(value);
  if (m !== null) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits (RFC 9110 §5.6.7).
    const nowYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(m[4]);
    if (year > nowYear + 50) year -= 100;
    return utcMs(year, m[3] ?? "", Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  return undefined;
}

/**
 * A Retry-After header (RFC 9110 §10.2.3) as seconds to wait from `nowMs`:
 * delta-seconds, or an HTTP-date in any of its three forms (a date in the past
 * gives 0). A missing, unparsable or negative value gives `undefined`, and the
 * schedule alone decides (G21). An HTTP-date needs `nowMs` (the sender's
 * clock, ms since the epoch); without it a date gives `undefined`.
 */
export function parseRetryAfter(header: string | null, nowMs?: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^[0-9]+$/.test(value)) return Math.min(Number(value), MAX_DELTA_SECONDS);
  if (nowMs === undefined) return undefined;
  const dateMs = parseHttpDate(value, nowMs);
  if (dateMs === undefined) return undefined;
  return Math.max(0, Math.ceil((dateMs - nowMs) / 1000));
}
