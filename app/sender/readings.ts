/**
 * The readings of switchable gaps that the sender follows (docs/gaps.md): one
 * object in the sender's config, recorded in the trace wherever a decision
 * depends on one. Each field has the gap's reading name
 * (app/protocol/readingNames.ts) and cites its gap; the values are the
 * reading names of the gaps table.
 */
import { DEFAULT_FALLBACK_WINDOW_S } from "./retrySchedule.ts";

export interface SenderReadings {
  /** G7: whether a valid discovery pin turns a missing SVCB record or a failed DNS answer into a temporary failure. */
  readonly discoveryPin: "enforced" | "ignored";
  /** G8: a failed DNS lookup without a pin is a temporary failure (fallback-eligible), or SMTP at once. */
  readonly dnsFailureWithoutPin: "temporary-failure" | "smtp";
  /** G12: more recipients than `max_recipients`: split into batches, or send one POST and take `invalid_request`. */
  readonly overMaxRecipients: "split" | "send-whole";
  /** G13: a body over `max_message_size`: refuse before sending (permanent failure and DSN), or send and take 413. */
  readonly overMaxMessageSize: "pre-check" | "send";
  /** G16: jitter on or off, and the fallback window in seconds (1 to 4 hours in production, RETRY-5). */
  readonly retryTiming: { readonly jitter: boolean; readonly fallbackWindowS: number };
  /** G26: a request-level `policy_rejected` with Retry-After is permanent, or retried over the service at that time. */
  readonly policyRejectedRetryAfter: "permanent" | "retry";
  /** G46: a 4xx answer to the capabilities request is an unfetchable document (fallback-eligible), or shows the endpoint alive (never falls back). */
  readonly capabilities4xx: "fallback-eligible" | "alive";
  /** G47: a Retry-After on a failed capabilities answer is ignored, or a lower bound for the next attempt. */
  readonly capabilitiesRetryAfter: "ignored" | "lower-bound";
}

/** The default reading of each gap, as docs/gaps.md gives it. */
export const defaultReadings: SenderReadings = {
  discoveryPin: "enforced",
  dnsFailureWithoutPin: "temporary-failure",
  overMaxRecipients: "split",
  overMaxMessageSize: "pre-check",
  retryTiming: { jitter: true, fallbackWindowS: DEFAULT_FALLBACK_WINDOW_S },
  policyRejectedRetryAfter: "permanent",
  capabilities4xx: "fallback-eligible",
  capabilitiesRetryAfter: "ignored",
};

/** The readings in the gaps table's own notation, keyed by gap (`{ G16: "jitter=off, fallback-window=7200s" }`), for the trace. */
export function readingsForTrace(readings: SenderReadings): Record<string, string> {
  return {
    G7: readings.discoveryPin,
    G8: readings.dnsFailureWithoutPin,
    G12: readings.overMaxRecipients,
    G13: readings.overMaxMessageSize,
    G16: `jitter=${readings.retryTiming.jitter ? "on" : "off"}, fallback-window=${readings.retryTiming.fallbackWindowS}s`,
    G26: readings.policyRejectedRetryAfter,
    G46: readings.capabilities4xx,
    G47: readings.capabilitiesRetryAfter,
  };
}
