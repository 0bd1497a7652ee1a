/**
 * The gaps table as data: where SPEC.md is silent or pulls two ways, the
 * reading Mailscope takes by default and, for switchable gaps, the other
 * readings a scenario (`readings: { G7: ignored }`) or the command line
 * (`--set G7=ignored`) can choose. docs/gaps.md is the user-facing copy.
 *
 * G1–G20 come from the design's gaps table; G21 onward were found while
 * cataloguing the rules (`rules.ts`). IDs are stable and never reused.
 *
 * `rules` is derived from the catalogue: the IDs of every rule whose `gaps`
 * cites this gap, so the two cannot drift apart.
 */

import { rules as catalogue } from "./rules.ts";
import type { Rule } from "./rules.ts";

export interface Gap {
  /** `G1`, `G2`, … */
  readonly id: string;
  /** What SPEC.md leaves open. */
  readonly title: string;
  /** The reading Mailscope takes unless told otherwise. */
  readonly defaultReading: string;
  /** Whether a scenario or the command line can choose another reading. */
  readonly switchable: boolean;
  /** Names of the readings (switchable gaps only); `<n>`-style entries take a value. */
  readonly readings?: readonly string[];
  /** The default setting, in the same notation as `readings`. */
  readonly defaultValue?: string;
  /** IDs of the rules this gap fills or qualifies. */
  readonly rules: readonly string[];
}

type GapRow = Omit<Gap, "rules">;

const rows: readonly GapRow[] = [
  {
    id: "G1",
    title: "Signature profile: algorithm",
    defaultReading: "Ed25519 (RFC 9421 `ed25519`), through WebCrypto.",
    switchable: false,
  },
  {
    id: "G2",
    title: "Signature profile: covered components",
    defaultReading:
      '`"@method" "@target-uri" "content-type" "content-digest" "idempotency-key"`; parameters `created` and `keyid` required; a signature missing any of them is `invalid_signature`.',
    switchable: false,
  },
  {
    id: "G3",
    title: "Signature timestamp tolerance",
    defaultReading: "`created` within 300 s of the receiver's clock, either side.",
    switchable: true,
    readings: ["tolerance-seconds=<n>"],
    defaultValue: "tolerance-seconds=300",
  },
  {
    id: "G4",
    title: "Key publication",
    defaultReading:
      "DNS TXT at the `keyid` name, DKIM-like: `keyid` is `<selector>._svckey.<signing-domain>`, record `v=svc1; k=ed25519; p=<base64 raw public key>`; the signing domain is what follows `._svckey.`.",
    switchable: false,
  },
  {
    id: "G5",
    title: "SVCB record format",
    defaultReading:
      "RFC 9460 at `_svc.<domain>`: ServiceMode records tried in priority order, AliasMode followed, `port` honoured, target `.` means the owner name.",
    switchable: false,
  },
  {
    id: "G6",
    title: "No SVCB record (NXDOMAIN / NODATA)",
    defaultReading:
      "The domain does not offer the service: plain SMTP delivery at once (not a fallback), unless a discovery pin is valid (then see G7).",
    switchable: false,
  },
  {
    id: "G7",
    title: "Exact discovery-pin procedure",
    defaultReading:
      "A valid pin turns a missing record or failed DNS answer into a request-level temporary failure (downgrade protection, like MTA-STS); the fallback after the window still applies (Errors rule 6).",
    switchable: true,
    readings: ["enforced", "ignored"],
    defaultValue: "enforced",
  },
  {
    id: "G8",
    title: "DNS lookup failure (SERVFAIL, timeout) without a pin",
    defaultReading: "Request-level temporary failure, fallback-eligible.",
    switchable: true,
    readings: ["temporary-failure", "smtp"],
    defaultValue: "temporary-failure",
  },
  {
    id: "G9",
    title: "Multipart boundary and part-header rules",
    defaultReading:
      "RFC 2046 boundary (1–70 characters), CRLF line breaks, preamble and epilogue tolerated, each part's own headers may hold only Content-Type (others ignored); not exactly two parts in the given order is `invalid_request`.",
    switchable: false,
  },
  {
    id: "G10",
    title: "Order of the receiver's checks",
    defaultReading:
      "Version path (404) → headers present and well-formed (400) → size (413) → digest matches body (else 401) → signature (401) → `from` domain equals signing domain (else 401) → idempotency (replay / 409) → envelope (400) → recipients not of a served domain (400) → rate limit (429) → policy (403) → per-recipient checks → 200.",
    switchable: false,
  },
  {
    id: "G11",
    title: 'What idempotency "content" means',
    defaultReading:
      "The Content-Digest of the whole body (envelope and message); a replay returns the stored response byte for byte, whatever the current mailbox state.",
    switchable: false,
  },
  {
    id: "G12",
    title: '`to` longer than the receiver\'s `max_recipients` vs "one POST per recipient domain"',
    defaultReading:
      "The sender splits the recipients into batches of `max_recipients`, each its own delivery with its own key; the trace marks the split.",
    switchable: true,
    readings: ["split", "send-whole"],
    defaultValue: "split",
  },
  {
    id: "G13",
    title: "Message larger than the advertised `max_message_size`",
    defaultReading: "The sender does not send it: permanent failure, DSN to the envelope sender.",
    switchable: true,
    readings: ["pre-check", "send"],
    defaultValue: "pre-check",
  },
  {
    id: "G14",
    title: "Per-recipient `rejected` at the sender",
    defaultReading: "Final for that recipient; DSN (Action: failed) to the envelope sender, none for a null sender.",
    switchable: false,
  },
  {
    id: "G15",
    title: "Result entry without `problem`, or a 200 body that does not parse",
    defaultReading:
      "Entry: `deferred` with `temporary_failure`. Whole body: request-level temporary failure, fallback-eligible.",
    switchable: false,
  },
  {
    id: "G16",
    title: "Retry timing",
    defaultReading:
      "Delay before retry n (n ≥ 1) is min(60 s · 2^(n−1), 3600 s) after attempt n−1, each delay × uniform(0.8, 1.2); next attempt at max(scheduled, Retry-After / retry_after); attempts counted across request-level retries and deferred re-deliveries of one message to one domain; fallback window 2 h.",
    switchable: true,
    readings: ["jitter=on", "jitter=off", "fallback-window=<1h..4h>"],
    defaultValue: "jitter=on, fallback-window=2h",
  },
  {
    id: "G17",
    title: "Failure after acceptance",
    defaultReading:
      "The receiver's domain sends an RFC 3464 DSN (null `from`) to the envelope sender through the service, as its own sender; no DSN for a null-sender message.",
    switchable: false,
  },
  {
    id: "G18",
    title: "The SMTP side",
    defaultReading:
      "SMTP delivery is outside the service: a hand-off is final for the service; the simulator's SMTP relay accepts unless the scenario says otherwise (per domain).",
    switchable: true,
    readings: ["accept", "fail"],
    defaultValue: "accept",
  },
  {
    id: "G19",
    title: "`from` domain ≠ signing domain",
    defaultReading: "401 `invalid_signature`.",
    switchable: true,
    readings: ["401", "403"],
    defaultValue: "401",
  },
  {
    id: "G20",
    title: "Transitions between recipient statuses",
    defaultReading:
      "A recipient's status is fixed per delivery; a `deferred` recipient re-enters as a new delivery, so across deliveries it may go deferred → accepted / rejected / deferred.",
    switchable: false,
  },
  // ── Found while cataloguing the rules ────────────────────────────────
  {
    id: "G21",
    title: "Retry-After format, and a missing one",
    defaultReading:
      "Senders accept both HTTP forms (delta-seconds and HTTP-date, RFC 9110 §10.2.3); receivers send delta-seconds. A missing, unparsable or negative Retry-After is ignored: the schedule alone decides (the trace notes it).",
    switchable: false,
  },
  {
    id: "G22",
    title: "Mailbox equality (`to` unique items, one domain, `from` domain vs signing domain, matching results)",
    defaultReading:
      "Domains compare case-insensitively (ASCII, A-labels, a trailing dot ignored); local-parts compare exactly, octet for octet (RFC 5321 leaves them case-sensitive). Minimal quoting (MBX-7) makes the comparison of quoted forms unambiguous.",
    switchable: false,
  },
  {
    id: "G23",
    title: "Unit of the 320-character mailbox limit",
    defaultReading: "Unicode code points of the whole string; the 64-octet local-part limit counts UTF-8 octets.",
    switchable: false,
  },
  {
    id: "G24",
    title: "What `max_message_size` measures: the request body (Limits) or the message (its name)",
    defaultReading:
      "The whole request body of POST /v1/messages, multipart framing and envelope included (as the Limits table says); the sender's pre-check (G13) compares the encoded body it would send.",
    switchable: false,
  },
  {
    id: "G25",
    title: "A 200 DeliveryResult that does not match `to` (count, order, unknown recipients)",
    defaultReading:
      "The sender matches entries to recipients by `recipient` (G22 equality), not by position; an order other than `to` is tolerated and noted in the trace; a recipient without an entry is `deferred` with `temporary_failure`; entries for unknown or repeated recipients are ignored (the first one counts).",
    switchable: false,
  },
  {
    id: "G26",
    title: "`policy_rejected` with a Retry-After (Errors rule 8) although it is permanent",
    defaultReading: "Permanent: the Retry-After is ignored (the trace notes it) and nothing is retried.",
    switchable: true,
    readings: ["permanent", "retry"],
    defaultValue: "permanent",
  },
  {
    id: "G27",
    title: "Cache-Control on the capabilities document other than a plain `max-age`",
    defaultReading:
      "A `max-age` directive sets the freshness, capped at 24 hours (`max-age=0` means fetch again before every delivery); no `max-age` (including `no-cache` / `no-store` alone, or an unparsable header) means 1 hour.",
    switchable: false,
  },
  {
    id: "G28",
    title: "When the sender fetches capabilities",
    defaultReading:
      "Before each POST unless a fresh cached document exists (G27); a stale document is fetched again, and a failed fetch is a request-level temporary failure, fallback-eligible (Errors rule 3).",
    switchable: false,
  },
  {
    id: "G29",
    title: "DSN fields: Reporting-MTA, Status codes, Diagnostic-Code",
    defaultReading:
      "`Reporting-MTA: dns; <reporting domain>`; `Action: failed`; Status from the problem: `recipient_not_found` 5.1.1, `policy_rejected` 5.7.1, `message_too_large` 5.3.4, `invalid_signature` 5.7.7, `invalid_request` and `idempotency_conflict` 5.5.0, give-up after temporary answers 4.4.7; `Diagnostic-Code: x-svc; <problem type URI>`.",
    switchable: false,
  },
  {
    id: "G30",
    title: "Answers outside the responses table: 2xx other than 200, 1xx/3xx, or 4xx without a problem document",
    defaultReading:
      "4xx without a problem document is permanent by its status class (like an unknown problem type); redirects are not followed; any other non-200 answer outside 4xx/5xx is a request-level temporary failure, fallback-eligible.",
    switchable: false,
  },
  {
    id: "G31",
    title: "Request-level permanent answer at the sender (400, 401, 403, 409, 413)",
    defaultReading:
      "Every recipient of that delivery has failed for good: DSN (Action: failed) to the envelope sender, none for a null sender.",
    switchable: false,
  },
  {
    id: "G32",
    title: "No common version: the state table hands to SMTP at once, Errors rule 7 only permits it (MAY)",
    defaultReading: "Hand to SMTP immediately, as the state table says; the trace cites both rules.",
    switchable: false,
  },
];

export const gaps: readonly Gap[] = rows.map((g) => ({
  ...g,
  rules: (catalogue as readonly Rule[]).filter((r) => r.gaps?.includes(g.id) === true).map((r) => r.id),
}));

const byId: ReadonlyMap<string, Gap> = new Map(gaps.map((g) => [g.id, g]));

/** The gap with this ID (`G7`), or undefined. */
export function gapById(id: string): Gap | undefined {
  return byId.get(id);
}
