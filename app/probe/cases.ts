/**
 * The cases of `mailscope probe`, as data: every receiver-side requirement of
 * SPEC.md that can be provoked from outside, each with the rule it checks
 * (IDs of `app/protocol/rules.ts`), its grade and what a receiver that follows
 * the spec answers. `probe.ts` runs them; the reports, the trace and the app
 * show them from here.
 *
 * The grade is the strength of the requirement for a receiver: MUST for the
 * spec's MUST, MUST NOT and REQUIRED, and for the rows of its tables that say
 * what a receiver answers (FACT in the catalogue: "Response 401 carries a
 * Problem `invalid_signature`" binds as much as a MUST); SHOULD and MAY as the
 * spec writes them (docs/decisions/0043-probe-cases-and-safety.md).
 *
 * Cases are judged one rule each, so that a receiver that breaks one rule
 * fails one case: the count of results and their order are two cases, the
 * form of `max_message_size` and its bound are two more. Several cases may
 * read one exchange (the capabilities document answers ten of them).
 */
import type { RuleId } from "../protocol/rules.ts";

/** How strongly the spec asks it of a receiver. */
export type ProbeGrade = "MUST" | "SHOULD" | "MAY";

/** The groups cases run in, in this order; a group's requests are made once for all its cases. */
export type ProbeStep =
  "tls" | "capabilities" | "versions" | "delivery" | "bad-requests" | "signatures" | "size" | "answers";

/** What a case needs besides the origin, so that it is skipped, with why, when it is not given. */
export type ProbeNeed =
  /** `--from` and `--key`: a signing identity. */
  | "key"
  /** `--mailbox`: recipients that exist and may get the probe's messages. */
  | "mailbox"
  /** `--absent`: a recipient that does not exist. */
  | "absent"
  /** `--absent` with `{n}`: as many recipients that do not exist as the case needs. */
  | "absent-pattern";

/** One case of the probe. */
export interface ProbeCase {
  /** Stable, short, kebab-case: `results-order`. */
  readonly id: string;
  /** The rule the case checks; `rules` lists it first, then the rules around it. */
  readonly rule: RuleId;
  readonly rules: readonly RuleId[];
  /** Readings of the spec's gaps the expectation depends on (docs/gaps.md). */
  readonly gaps?: readonly string[];
  readonly grade: ProbeGrade;
  readonly step: ProbeStep;
  /** What is checked, in a line. */
  readonly title: string;
  /** What a receiver that follows the spec does. */
  readonly expected: string;
  readonly needs: readonly ProbeNeed[];
  /** Messages a receiver that follows the spec stores from this case's own requests. */
  readonly delivers: number;
  /** Messages it would store at most if it took every request of the case (those it must refuse too). */
  readonly mayDeliver: number;
}

type Def = Omit<ProbeCase, "rules" | "needs" | "delivers" | "mayDeliver"> & {
  readonly also?: readonly RuleId[];
  readonly needs?: readonly ProbeNeed[];
  readonly delivers?: number;
  readonly mayDeliver?: number;
};

/** A POST that must be refused but names --mailbox: a receiver that takes it stores one message. */
const refused = { needs: ["key", "mailbox"], mayDeliver: 1 } as const;

const defs: readonly Def[] = [
  // ── TLS ──────────────────────────────────────────────────────────────
  {
    id: "tls13",
    rule: "AUTH-8",
    also: ["SVC-6"],
    grade: "MUST",
    step: "tls",
    title: "a TLS 1.3 connection is accepted",
    expected: "the handshake completes with TLS 1.3",
  },
  {
    id: "certificate",
    rule: "AUTH-8",
    also: ["SVC-6"],
    grade: "MUST",
    step: "tls",
    title: "the certificate is valid for the origin's host name",
    expected: "a certificate for the host, from a CA the probe trusts (--ca, else the system's)",
  },
  {
    id: "tls12-refused",
    rule: "SVC-6",
    also: ["AUTH-8"],
    grade: "MUST",
    step: "tls",
    title: "a handshake that offers only TLS 1.2 is refused",
    expected: "the handshake fails: TLS 1.3 is mandatory on all requests",
  },
  // ── GET /v1/capabilities ─────────────────────────────────────────────
  {
    id: "capabilities-200",
    rule: "GET-3",
    also: ["GET-1", "AUTH-7"],
    grade: "MUST",
    step: "capabilities",
    title: "GET /v1/capabilities, unsigned, is answered 200 with a JSON document",
    expected: "200, Content-Type application/json, a JSON object",
  },
  {
    id: "capabilities-cache-control",
    rule: "GET-3",
    grade: "MUST",
    step: "capabilities",
    title: "the capabilities document comes with a Cache-Control header",
    expected: "a Cache-Control header",
    gaps: ["G27"],
  },
  {
    id: "capabilities-max-age",
    rule: "GET-5",
    also: ["GET-6"],
    grade: "SHOULD",
    step: "capabilities",
    title: "the capabilities document may be cached for an hour",
    expected: "Cache-Control: max-age=3600",
    gaps: ["G27"],
  },
  {
    id: "capabilities-max-message-size",
    rule: "CAP-6",
    grade: "MUST",
    step: "capabilities",
    title: "max_message_size is present, an integer",
    expected: "max_message_size: an integer number of bytes",
  },
  {
    id: "capabilities-max-message-size-bound",
    rule: "CAP-7",
    also: ["LIM-1"],
    grade: "MUST",
    step: "capabilities",
    title: "max_message_size is at least 26214400 (25 MiB)",
    expected: "max_message_size ≥ 26214400",
  },
  {
    id: "capabilities-max-recipients",
    rule: "CAP-8",
    also: ["LIM-3", "CAP-9"],
    grade: "MUST",
    step: "capabilities",
    title: "max_recipients, when present, is an integer of at least 100",
    expected: "max_recipients absent (100) or an integer ≥ 100",
  },
  {
    id: "capabilities-versions",
    rule: "CAP-3",
    also: ["CAP-1", "CAP-2", "CAP-5", "VER-4"],
    grade: "MUST",
    step: "capabilities",
    title: "versions, when present, is a non-empty list of unique major versions that includes v1",
    expected: 'versions absent (["v1"]) or unique items matching ^v[1-9][0-9]*$, v1 among them',
  },
  {
    id: "capabilities-pin-max-age",
    rule: "CAP-10",
    grade: "MUST",
    step: "capabilities",
    title: "discovery_pin_max_age, when present, is an integer of at least 0",
    expected: "discovery_pin_max_age absent or an integer ≥ 0",
  },
  {
    id: "capabilities-pin-advertised",
    rule: "CAP-12",
    grade: "SHOULD",
    step: "capabilities",
    title: "the receiver advertises a discovery pin of 7 days",
    expected: "discovery_pin_max_age: 604800",
  },
  {
    id: "capabilities-abuse-contact",
    rule: "CAP-14",
    grade: "MAY",
    step: "capabilities",
    title: "the receiver may name an abuse contact; when it does, one mailto: URI without header fields",
    expected: "abuse_contact absent, or matching ^mailto:[^?]+$",
  },
  // ── Versions ─────────────────────────────────────────────────────────
  {
    id: "unsupported-version",
    rule: "GET-10",
    also: ["VER-7", "ERR-14", "ERR-5"],
    grade: "MUST",
    step: "versions",
    title: "a path under a major version the receiver does not serve is answered 404 unsupported_version",
    expected: "GET /v<n>/capabilities: 404, problem unsupported_version",
  },
  {
    id: "unsupported-version-versions",
    rule: "ERR-15",
    also: ["PRB-4", "PRB-6", "VER-7"],
    grade: "MUST",
    step: "versions",
    title: "the unsupported_version problem lists the versions served",
    expected: "a versions member equal to the capabilities' versions",
  },
  {
    id: "unsupported-version-post",
    rule: "POST-16",
    also: ["GET-10", "ERR-14"],
    grade: "MUST",
    step: "versions",
    title: "a POST under an unserved major version is answered 404 unsupported_version",
    expected: "POST /v<n>/messages: 404, problem unsupported_version",
  },
  // ── A valid delivery, and what follows from it ──────────────────────
  {
    id: "deliver",
    rule: "POST-11",
    also: ["DLR-1", "POST-1"],
    grade: "MUST",
    step: "delivery",
    title: "a valid delivery is answered 200 with a DeliveryResult",
    expected: "200, Content-Type application/json, { results: [...] }",
    needs: ["key", "mailbox", "absent"],
    delivers: 1,
    mayDeliver: 1,
  },
  {
    id: "results-count",
    rule: "DLR-2",
    also: ["SVC-4", "RCP-1"],
    grade: "MUST",
    step: "delivery",
    title: "the DeliveryResult has one entry per envelope recipient",
    expected: "each recipient of `to` once, no other",
    needs: ["key", "mailbox", "absent"],
  },
  {
    id: "results-order",
    rule: "DLR-3",
    grade: "MUST",
    step: "delivery",
    title: "the entries are in the order of `to`",
    expected: "results in the order of `to`",
    needs: ["key", "mailbox", "absent"],
  },
  {
    id: "result-fields",
    rule: "RCP-2",
    also: ["RCP-4", "RCP-5"],
    grade: "MUST",
    step: "delivery",
    title: "each entry has a status of accepted, rejected or deferred, and a problem unless accepted",
    expected:
      "status accepted | rejected | deferred; a problem with a type when not accepted; retry_after an integer ≥ 0",
    needs: ["key", "mailbox", "absent"],
  },
  {
    id: "recipient-not-found",
    rule: "SVC-7",
    also: ["ERR-4", "ERR-17"],
    grade: "SHOULD",
    step: "delivery",
    title: "a recipient that does not exist is rejected before the 200",
    expected: "the --absent recipient rejected with recipient_not_found",
    needs: ["key", "mailbox", "absent"],
  },
  {
    id: "replay",
    rule: "POST-12",
    also: ["POST-23", "POST-24", "POST-25"],
    grade: "MUST",
    step: "delivery",
    title: "a retry with a known Idempotency-Key gets the original response",
    expected: "the same request again, re-signed: the first answer byte for byte (status, Content-Type, body)",
    needs: ["key", "mailbox", "absent"],
    gaps: ["G35"],
  },
  {
    id: "idempotency-conflict",
    rule: "POST-26",
    also: ["ERR-13", "POST-17", "ERR-6"],
    grade: "MUST",
    step: "delivery",
    title: "the same Idempotency-Key with another body is a conflict",
    expected: "409, problem idempotency_conflict",
    needs: ["key", "mailbox", "absent"],
    mayDeliver: 1,
    gaps: ["G11"],
  },
  {
    id: "all-rejected",
    rule: "POST-11",
    also: ["ERR-17"],
    grade: "MUST",
    step: "delivery",
    title: "a delivery whose every recipient is rejected is still answered 200",
    expected: "200 with the --absent recipient rejected, not a 4xx",
    needs: ["key", "absent"],
  },
  {
    id: "unknown-envelope-fields",
    rule: "ENV-9",
    also: ["VER-3"],
    grade: "MUST",
    step: "delivery",
    title: "unknown fields of the envelope are ignored",
    expected: "an envelope with an extra member delivered as without it: 200",
    needs: ["key", "mailbox"],
    delivers: 1,
    mayDeliver: 1,
  },
  // ── 400 invalid_request ──────────────────────────────────────────────
  {
    id: "missing-idempotency-key",
    rule: "POST-2",
    also: ["POST-13"],
    gaps: ["G10"],
    grade: "MUST",
    step: "bad-requests",
    title: "a delivery without Idempotency-Key is refused",
    expected: "400 invalid_request (401 invalid_signature taken too: the order of checks is G10's)",
    ...refused,
  },
  {
    id: "idempotency-key-too-long",
    rule: "LIM-5",
    also: ["POST-2", "POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an Idempotency-Key of 129 characters is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "idempotency-key-characters",
    rule: "POST-2",
    also: ["POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an Idempotency-Key with characters outside A-Z a-z 0-9 . _ ~ - is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "missing-content-digest",
    rule: "POST-5",
    also: ["POST-13", "AUTH-1"],
    gaps: ["G10"],
    grade: "MUST",
    step: "bad-requests",
    title: "a delivery without Content-Digest is refused",
    expected: "400 invalid_request (401 invalid_signature taken too: G10)",
    ...refused,
  },
  {
    id: "missing-signature",
    rule: "POST-3",
    also: ["POST-4", "AUTH-1", "POST-13"],
    gaps: ["G10"],
    grade: "MUST",
    step: "bad-requests",
    title: "a delivery without Signature and Signature-Input is refused",
    expected: "400 invalid_request (401 invalid_signature taken too: G10)",
    ...refused,
  },
  {
    id: "content-type",
    rule: "POST-6",
    also: ["POST-13"],
    gaps: ["G9"],
    grade: "MUST",
    step: "bad-requests",
    title: "a delivery whose Content-Type is not multipart/mixed is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "part-order",
    rule: "POST-7",
    also: ["POST-13"],
    gaps: ["G9"],
    grade: "MUST",
    step: "bad-requests",
    title: "a body with the message first and the envelope second is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "part-types",
    rule: "POST-9",
    also: ["POST-7", "POST-13"],
    gaps: ["G9"],
    grade: "MUST",
    step: "bad-requests",
    title: "a body whose second part is not message/rfc822 is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "envelope-not-json",
    rule: "POST-8",
    also: ["POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope that is not JSON is refused",
    expected: "400 invalid_request",
    needs: ["key"],
  },
  {
    id: "envelope-missing-to",
    rule: "ENV-4",
    also: ["POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope without `to` is refused",
    expected: "400 invalid_request",
    needs: ["key"],
  },
  {
    id: "envelope-empty-to",
    rule: "ENV-5",
    also: ["POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope whose `to` is empty is refused",
    expected: "400 invalid_request",
    needs: ["key"],
  },
  {
    id: "envelope-duplicate-to",
    rule: "ENV-6",
    also: ["POST-13"],
    gaps: ["G22"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope naming one recipient twice is refused",
    expected: "400 invalid_request",
    ...refused,
  },
  {
    id: "envelope-two-domains",
    rule: "ENV-7",
    also: ["POST-1", "POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope whose recipients are in two domains is refused",
    expected: "400 invalid_request (the other recipient is in .invalid: nobody can have it)",
    ...refused,
  },
  {
    id: "envelope-from-domain",
    rule: "AUTH-4",
    also: ["ENV-2", "POST-14"],
    gaps: ["G19"],
    grade: "MUST",
    step: "bad-requests",
    title: "an envelope `from` outside the signing domain is refused",
    expected: "401 invalid_signature (403 policy_rejected taken too: G19)",
    ...refused,
  },
  {
    id: "mailbox-syntax",
    rule: "MBX-1",
    also: ["POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "a recipient that is not a mailbox (no @) is refused",
    expected: "400 invalid_request",
    needs: ["key"],
  },
  {
    id: "mailbox-local-part-length",
    rule: "MBX-6",
    also: ["MBX-9", "LIM-8", "POST-13"],
    grade: "MUST",
    step: "bad-requests",
    title: "a recipient whose local part is longer than 64 octets is refused",
    expected: "400 invalid_request",
    needs: ["key"],
    mayDeliver: 1,
  },
  {
    id: "mailbox-minimal-quoting",
    rule: "MBX-7",
    also: ["MBX-9", "POST-13"],
    gaps: ["G42"],
    grade: "MUST",
    step: "bad-requests",
    title: "a recipient quoted where a dot-string would do is refused",
    expected: '400 invalid_request ("bob"@… for bob@…)',
    ...refused,
  },
  {
    id: "too-many-recipients",
    rule: "ERR-11",
    also: ["ENV-8", "LIM-4", "POST-13"],
    gaps: ["G12"],
    grade: "MUST",
    step: "bad-requests",
    title: "a `to` longer than max_recipients is refused",
    expected: "400 invalid_request for max_recipients + 1 recipients (made from --absent's {n})",
    needs: ["key", "absent-pattern"],
  },
  // ── 401 invalid_signature ────────────────────────────────────────────
  {
    id: "signature-untrusted-key",
    rule: "AUTH-5",
    also: ["POST-14", "AUTH-1"],
    gaps: ["G4"],
    grade: "MUST",
    step: "signatures",
    title: "a delivery signed with a key the receiver does not know is refused",
    expected: "401 invalid_signature (a new key under the probe's keyid)",
    ...refused,
  },
  {
    id: "signature-stale",
    rule: "AUTH-5",
    also: ["AUTH-3", "POST-14"],
    gaps: ["G3"],
    grade: "MUST",
    step: "signatures",
    title: "a signature created an hour ago is refused",
    expected: "401 invalid_signature (created 3600 s before now)",
    ...refused,
  },
  {
    id: "signature-future",
    rule: "AUTH-5",
    also: ["AUTH-3", "POST-14"],
    gaps: ["G3"],
    grade: "MUST",
    step: "signatures",
    title: "a signature created an hour from now is refused",
    expected: "401 invalid_signature (created 3600 s after now)",
    ...refused,
  },
  {
    id: "signature-no-created",
    rule: "AUTH-3",
    also: ["AUTH-5", "POST-4", "POST-14"],
    gaps: ["G2"],
    grade: "MUST",
    step: "signatures",
    title: "a signature without `created` is refused",
    expected: "401 invalid_signature",
    ...refused,
  },
  {
    id: "signature-component-missing",
    rule: "AUTH-5",
    also: ["AUTH-3", "POST-14"],
    gaps: ["G2"],
    grade: "MUST",
    step: "signatures",
    title: "a signature that does not cover @target-uri is refused",
    expected:
      "401 invalid_signature (the profile's components: @method @target-uri content-type content-digest idempotency-key)",
    ...refused,
  },
  {
    id: "signature-digest-not-covered",
    rule: "AUTH-2",
    also: ["AUTH-5", "POST-5", "POST-14"],
    gaps: ["G2"],
    grade: "MUST",
    step: "signatures",
    title: "a signature that does not cover Content-Digest is refused",
    expected: "401 invalid_signature",
    ...refused,
  },
  {
    id: "body-changed",
    rule: "POST-5",
    also: ["AUTH-2", "AUTH-5", "POST-14"],
    grade: "MUST",
    step: "signatures",
    title: "a body changed after signing is refused",
    expected: "401 invalid_signature (the Content-Digest no longer matches)",
    ...refused,
  },
  // ── 413 ──────────────────────────────────────────────────────────────
  {
    id: "too-large",
    rule: "ERR-12",
    also: ["LIM-2", "POST-18", "ERR-7"],
    gaps: ["G24"],
    grade: "MUST",
    step: "size",
    title: "a body larger than max_message_size is refused",
    expected:
      "413 message_too_large for max_message_size + 1 bytes, sent with its Content-Length; the probe stops sending once answered",
    ...refused,
  },
  // ── Every answer of the run ──────────────────────────────────────────
  {
    id: "problem-media-type",
    rule: "PRB-1",
    also: ["GET-4", "POST-21"],
    grade: "MUST",
    step: "answers",
    title: "every answer other than 200 is a problem document",
    expected: "Content-Type application/problem+json on every 4xx and 5xx answer of the run",
  },
  {
    id: "problem-type",
    rule: "PRB-2",
    gaps: ["G39"],
    grade: "MUST",
    step: "answers",
    title: "every problem's type is {problem_base}/<identifier>, one base for the receiver",
    expected: "type: an absolute URI ending in an identifier of the Errors table, the same base on every problem",
  },
  {
    id: "problem-versions",
    rule: "PRB-5",
    grade: "MUST",
    step: "answers",
    title: "only unsupported_version problems carry versions",
    expected: "no versions member in any other problem",
  },
  {
    id: "retry-after",
    rule: "POST-20",
    also: ["POST-19"],
    gaps: ["G21"],
    grade: "MUST",
    step: "answers",
    title: "429 and 503 answers carry Retry-After",
    expected: "a Retry-After header on every 429 and 503 of the run (skipped when there was none)",
  },
];

/** Every case, in the order the probe runs them. */
export const probeCases: readonly ProbeCase[] = defs.map((d) => {
  const { also, ...rest } = d;
  return {
    ...rest,
    rules: [d.rule, ...(also ?? [])],
    needs: d.needs ?? [],
    delivers: d.delivers ?? 0,
    mayDeliver: d.mayDeliver ?? 0,
  };
});

const byId = new Map(probeCases.map((c) => [c.id, c]));

/** The case with this id. @throws RangeError for an unknown one (a mistake in the probe's code). */
export function probeCase(id: string): ProbeCase {
  const found = byId.get(id);
  if (found === undefined) throw new RangeError(`no probe case ${id}`);
  return found;
}

/**
 * Whether `selector` (from `--only` / `--skip`) names the case: its id, one
 * of its rules, or a rule prefix (`AUTH`, `AUTH-`, case-insensitive).
 */
export function caseMatches(c: ProbeCase, selector: string): boolean {
  const s = selector.trim().toUpperCase();
  if (s === "") return false;
  if (c.id.toUpperCase() === s) return true;
  return c.rules.some((r) => r === s || (!/\d$/.test(s) && r.startsWith(s.endsWith("-") ? s : `${s}-`)));
}

/** Selectors that name no case: an `--only` or `--skip` the user mistyped. */
export function unknownSelectors(selectors: readonly string[]): string[] {
  return selectors.filter((s) => !probeCases.some((c) => caseMatches(c, s)));
}

/** The cases `--only` (none: all) and `--skip` select, in order. */
export function selectCases(only: readonly string[], skip: readonly string[]): ProbeCase[] {
  return probeCases.filter(
    (c) => (only.length === 0 || only.some((s) => caseMatches(c, s))) && !skip.some((s) => caseMatches(c, s)),
  );
}
