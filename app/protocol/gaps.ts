/**
 * The gaps table as data: where SPEC.md is silent or pulls two ways, the
 * reading Mailscope takes by default and, for switchable gaps, the other
 * readings a scenario (`readings: { G7: ignored }`) or the command line
 * (`--set G7=ignored`) can choose. docs/gaps.md is the user-facing copy.
 *
 * G1–G20 come from the design's gaps table; G21–G32 were found while
 * cataloguing the rules (`rules.ts`); G33 onward while building the receiver,
 * the sender and the protocol library; G46 and G47 where the spec contradicts
 * itself about the capabilities request. IDs are stable and never reused.
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
    defaultReading:
      "Ed25519 (RFC 9421 `ed25519`), through WebCrypto; an `alg` parameter, when present, must be `ed25519`.",
    switchable: false,
  },
  {
    id: "G2",
    title: "Signature profile: covered components",
    defaultReading:
      '`"@method" "@target-uri" "content-type" "content-digest" "idempotency-key"`, each as a bare name (extra components allowed); parameters `created` and `keyid` required; a signature missing any of them is `invalid_signature`. The receiver reads the first signature label; duplicated header lines are combined (RFC 9421 §2.1).',
    switchable: false,
  },
  {
    id: "G3",
    title: "Signature timestamp tolerance",
    defaultReading: "`created` within 300 s of the receiver's clock, either side, inclusive.",
    switchable: true,
    readings: ["tolerance-seconds=<n>"],
    defaultValue: "tolerance-seconds=300",
  },
  {
    id: "G4",
    title: "Key publication",
    defaultReading:
      "DNS TXT at the `keyid` name, DKIM-like: `keyid` is `<selector>._svckey.<signing-domain>`, record `v=svc1; k=ed25519; p=<base64 raw public key>` (tags in any order, unknown tags ignored, `v`, `k` and `p` required, an empty `p` a revoked key); the signing domain is what follows `._svckey.`.",
    switchable: false,
  },
  {
    id: "G5",
    title: "SVCB record format",
    defaultReading:
      "RFC 9460 at `_svc.<domain>`: ServiceMode records tried in priority order, AliasMode followed, `port` honoured, target `.` means the owner name, taken literally: the origin is then `https://_svc.<domain>`, an underscore name no certificate covers (a problem of the spec; `mailscope send --resolve` answers `1 <domain>. port=N` instead).",
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
      "RFC 2046 boundary (1–70 characters), CRLF line breaks only, a line starting with `--boundary` always a delimiter (RFC 2046 prefix match), preamble and epilogue tolerated, each part's own headers may hold only Content-Type (others ignored, except a Content-Transfer-Encoding on part 2 other than 7bit, 8bit or binary: `invalid_request`, POST-9); not exactly two parts in the given order is `invalid_request`.",
    switchable: false,
  },
  {
    id: "G10",
    title: "Order of the receiver's checks",
    defaultReading:
      "Version path (404; other paths and methods: G33) → availability (a receiver configured as unavailable: 503, before the header check) → headers present and well-formed (400) → size (413) → target host (401, G48) → signature, from the headers alone, before the body is read (401) → digest matches body (else 401) → `from` domain equals signing domain (else 401) → idempotency (replay / 409) → envelope (400) → recipients not of a served domain (400) → rate limit (429) → policy (403) → per-recipient checks → 200.",
    switchable: false,
  },
  {
    id: "G11",
    title: 'What idempotency "content" means',
    defaultReading:
      "The SHA-256 of the whole body (envelope and message), computed by the receiver, not the Content-Digest string (a retry that adds a `sha-512` member is no conflict); a replay returns the stored response byte for byte, whatever the current mailbox state. Which answers are stored: G35.",
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
      "Delay before retry n (n ≥ 1) is min(60 s · 2^(n−1), 3600 s) after the start of attempt n−1, each delay × uniform(0.8, 1.2); next attempt at max(scheduled, Retry-After / retry_after), the latest lower bound when several deferred recipients of one delivery name different `retry_after` values (one schedule per message and recipient domain); attempts counted across request-level retries and deferred re-deliveries of one message to one domain; fallback window 2 h.",
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
      "SMTP delivery is outside the service: a hand-off is final for the service; the simulator's SMTP relay accepts unless the scenario says otherwise (per domain). A refused hand-off (`fail`) is final too: the outcome stays `smtp` and the service sends no DSN.",
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
      "Before each POST unless a fresh cached document exists (G27); a stale document is fetched again, and a failed fetch is a request-level temporary failure (Errors rule 3, GET-9); whether one answered with a 4xx is fallback-eligible is G46, whether its Retry-After counts is G47.",
    switchable: false,
  },
  {
    id: "G29",
    title: "DSN fields: Reporting-MTA, Status codes, Diagnostic-Code",
    defaultReading:
      "`Reporting-MTA: dns; <reporting domain>`; `Action: failed`; Status from the problem: `recipient_not_found` 5.1.1, `policy_rejected` 5.7.1, `message_too_large` 5.3.4, `invalid_signature` 5.7.7, `invalid_request`, `idempotency_conflict` and `unsupported_version` 5.5.0, give-up after temporary answers 4.4.7 (class 4 with `Action: failed`), otherwise `mailbox_full` 4.2.2, `rate_limited` 4.7.0, `temporary_failure` 4.0.0; `Diagnostic-Code: x-svc; <problem type URI>`; non-ASCII addresses as RFC 6533 `utf-8;` with `\\x{..}`.",
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
  // ── Found while building the receiver, the sender and the library ────
  {
    id: "G33",
    title: "Requests outside the two endpoints: other paths, version-like segments, other methods",
    defaultReading:
      "A first path segment of `v` and digits is a version path (`/v0`, `/v01`, a bare `/v2`): 404 `unsupported_version` unless served. An unversioned path or an unknown resource is 404, a wrong method 405 with `Allow`; both carry the `invalid_request` problem type.",
    switchable: false,
  },
  {
    id: "G34",
    title:
      "Where the capabilities document is fetched before a version is agreed, and a receiver that does not serve v1",
    defaultReading:
      "The sender asks `/{highest version it supports}/capabilities` and reads `versions` from a 404 `unsupported_version` there (no probing). The receiver serves `/v1/capabilities` even when v1 is not among its versions (it is where a sender learns them); a path under an advertised version other than v1 is 404 `invalid_request`.",
    switchable: false,
  },
  {
    id: "G35",
    title:
      "Which answers an idempotency replay returns, from when retention counts, and two identical requests at once",
    defaultReading:
      "200, 400 and a 403 without Retry-After are stored and replayed byte for byte; 429, 503 and a 403 with Retry-After are not (retries reuse the key, POST-24), nor is any failure before the idempotency step. Retention counts from when the answer was stored. Two identical requests (same key, same body) in flight at once are coordinated in the handler's process: the second gets the first's answer.",
    switchable: false,
  },
  {
    id: "G36",
    title: "The key lookup fails in DNS (SERVFAIL, timeout of the keyid TXT)",
    defaultReading: "503 `temporary_failure` with Retry-After, not 401: the key may well exist.",
    switchable: false,
  },
  {
    id: "G37",
    title: "Which Content-Digest algorithms count, and a header naming only others",
    defaultReading:
      "`sha-256` and `sha-512` (RFC 9530's active ones); every one present must match the body. A Content-Digest naming only unsupported algorithms (such as `md5`) is 401 `invalid_signature`: it cannot be matched to the body.",
    switchable: false,
  },
  {
    id: "G38",
    title: "The receiver's per-recipient checks: their order, what the quota counts, a store that fails",
    defaultReading:
      "Per recipient, in the order of `to`: exists → policy → planned temporary failure → rate limit → quota → store; the first that fails gives the entry. The quota counts the message part's bytes (`max_message_size` counts the whole request body, G24). A store that fails for one recipient after validation makes that recipient `deferred` with `temporary_failure`, not a request-level 503.",
    switchable: false,
  },
  {
    id: "G39",
    title: "`{problem_base}` is per receiver but never advertised",
    defaultReading:
      "The problem base is configured in the sender: one base for the simulated world; `mailscope send --problem-base` (default `https://<recipient domain>/problems`). A type under another base is handled as an unknown problem type (ERR-19, ERR-20).",
    switchable: false,
  },
  {
    id: "G40",
    title: "Discovery on retries, and an SVCB record that disappears mid-delivery",
    defaultReading:
      "The SVCB lookup is made before every attempt; capabilities come from the cache while fresh (G27). A record that disappears after answers that are not fallback-eligible, with no pin, is not plain SMTP (G6): the delivery is retried as row 4 of the states table until give-up.",
    switchable: false,
  },
  {
    id: "G41",
    title: "Domain syntax beyond the character set: length, numeric last label, A-label validity",
    defaultReading:
      "At most 253 characters (DNS), so the 320-character mailbox limit never binds on its own (64 + 1 + 253); an all-numeric last label is refused (RFC 1123); an A-label must decode and encode back to itself (Punycode round trip).",
    switchable: false,
  },
  {
    id: "G42",
    title: "Minimal quoting and backslash escapes inside a needed quoted-string",
    defaultReading:
      'Minimal form also forbids needless backslash escapes: in a quoted-string that is needed, the only escapes are `\\"` and `\\\\`, so every mailbox has one spelling.',
    switchable: false,
  },
  {
    id: "G43",
    title: "A problem identifier that disagrees with what carries it: HTTP status, recipient status, level",
    defaultReading:
      "A known identifier decides the class even if the status disagrees; SMTP fallback needs a temporary identifier and a request-level 5xx. An unknown recipient status with a permanent problem stays `deferred` (RCP-3 is a MUST), flagged inconsistent. A known identifier at a level the errors table does not list for it (a P-only identifier at request level) is handled as unknown.",
    switchable: false,
  },
  {
    id: "G44",
    title: "How long a receiver may keep a sender's key record",
    defaultReading:
      "A key TXT answer is kept per keyid for its DNS TTL, at most 1 hour, on the receiver's clock; failures (SERVFAIL, timeout) and missing records are never kept, so the next request asks again. A rotated or revoked key is seen once the kept answer expires.",
    switchable: false,
  },
  {
    id: "G45",
    title: "What of a delivery in progress survives a restart of the sending side",
    defaultReading:
      "`mailscope serve` keeps each DSN it sends (G17) in a durable outbox until every recipient has a final outcome, and resubmits what is left there when it starts again. The resubmission is a new delivery: a new Idempotency-Key, and the retry schedule, fallback window and 5-day give-up count from its own first attempt. A DSN accepted just before a stop or crash, whose answer was not yet recorded, can therefore arrive twice. A failure after acceptance still waiting for its `delayMs` when serve stops is not kept, and sends no DSN.",
    switchable: false,
  },
  // ── Found by checking the engine against the spec from outside ──
  {
    id: "G46",
    title:
      "A capabilities endpoint that answers 4xx (such as 429): an unfetchable document (fallback-eligible) or an alive endpoint (never falls back)",
    defaultReading:
      "An unfetchable document: a request-level `temporary_failure`, fallback-eligible (the GET Failure row, Errors rule 3), so after the fallback window the message is handed to SMTP. Switch to `alive` to read Errors rules 4–5 and the states table's row 4: a 4xx answer shows the endpoint alive, so the failure is still temporary and retried, but never falls back (a 5xx answer or no answer stays fallback-eligible under both readings).",
    switchable: true,
    readings: ["fallback-eligible", "alive"],
    defaultValue: "fallback-eligible",
  },
  {
    id: "G47",
    title: "A Retry-After on a capabilities answer (a 503 or 429 to the GET)",
    defaultReading:
      "Ignored: the capabilities request is not a delivery request, and its failure is handled as an unfetchable document (GET-9), so the schedule alone decides the next attempt (the trace says the Retry-After was ignored). Switch to `lower-bound` to read RETRY-7's request-level Retry-After as covering it: the next attempt is no earlier than the Retry-After.",
    switchable: true,
    readings: ["ignored", "lower-bound"],
    defaultValue: "ignored",
  },
  // ── Found by trying `serve` as an attacker ──
  {
    id: "G48",
    title: "A delivery signed for another receiver's URI: whether the receiver checks the signed target host",
    defaultReading:
      "Checked: the spec has the target URI signed (`@target-uri`, G2) but never says the receiver compares it with itself, so a delivery signed for `https://mx.other.example/v1/messages` could be replayed to any receiver. `mailscope serve` answers 401 `invalid_signature` to a POST whose target host (the Host it was sent with, which the signed `@target-uri` holds) is none of its names: the served domains and their subdomains, and the names of its certificate. It checks this before the signature, and before reading the body. The simulator does not check: its network delivers a request only to the receiver at its host.",
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
