/**
 * The switchable gaps (gaps.ts, docs/gaps.md) under the names the code reads
 * them by: `readings.overMaxRecipients === "split"` is G12's reading. A gap
 * keeps its ID wherever a reading is written down — a scenario's `readings`,
 * `--set G12=send-whole`, a trace's `readings`, a receiver's config file — and
 * the code's objects of readings (`ScenarioReadings`, `SenderReadings`) are
 * keyed by these names; this table is the one place the two meet.
 */

/** Each reading's name → the gap it reads. */
export const READING_GAPS = {
  /** G3: how far a signature's `created` may be from the receiver's clock. */
  signatureTolerance: "G3",
  /** G7: whether a valid discovery pin turns a missing record or failed DNS answer into a temporary failure. */
  discoveryPin: "G7",
  /** G8: a failed DNS lookup without a pin: a temporary failure, or SMTP at once. */
  dnsFailureWithoutPin: "G8",
  /** G12: more recipients than `max_recipients`: split into batches, or send one POST. */
  overMaxRecipients: "G12",
  /** G13: a body over `max_message_size`: refuse before sending, or send and take 413. */
  overMaxMessageSize: "G13",
  /** G16: retry timing: jitter on or off, and the fallback window. */
  retryTiming: "G16",
  /** G18: whether the SMTP relays accept hand-offs. */
  smtpRelay: "G18",
  /** G19: the answer when the `from` domain is not the signing domain. */
  fromDomainMismatch: "G19",
  /** G26: a request-level `policy_rejected` with Retry-After: permanent, or retried. */
  policyRejectedRetryAfter: "G26",
  /** G46: a 4xx answer to the capabilities request: fallback-eligible, or the endpoint alive. */
  capabilities4xx: "G46",
  /** G47: a Retry-After on a failed capabilities answer: ignored, or a lower bound. */
  capabilitiesRetryAfter: "G47",
} as const;

/** A reading's name in the code (`overMaxRecipients`). */
export type ReadingName = keyof typeof READING_GAPS;

/** The ID of a switchable gap (`G12`). */
export type SwitchableGapId = (typeof READING_GAPS)[ReadingName];

/** Each switchable gap's ID → its reading's name (`G12` → `overMaxRecipients`). */
export const READING_NAMES = Object.fromEntries(Object.entries(READING_GAPS).map(([name, id]) => [id, name])) as {
  readonly [N in ReadingName as (typeof READING_GAPS)[N]]: N;
};

/** The reading's name of a switchable gap (`G12` → `overMaxRecipients`), or undefined for another ID. */
export function readingNameOf(gapId: string): ReadingName | undefined {
  return Object.hasOwn(READING_NAMES, gapId) ? READING_NAMES[gapId as SwitchableGapId] : undefined;
}
