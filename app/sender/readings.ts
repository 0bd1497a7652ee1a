/**
 * The readings of switchable gaps that the sender follows (docs/gaps.md): one
 * object in the sender's config, recorded in the trace wherever a decision
 * depends on one. Each field is named after its gap; the values are the
 * reading names of the gaps table.
 */
import { DEFAULT_FALLBACK_WINDOW_S } from "./retrySchedule.ts";

export interface SenderReadings {
  /** G7: whether a valid discovery pin turns a missing SVCB record or a failed DNS answer into a temporary failure. */
  readonly G7: "enforced" | "ignored";
  /** G8: a failed DNS lookup without a pin is a temporary failure (fallback-eligible), or SMTP at once. */
  readonly G8: "temporary-failure" | "smtp";
  /** G12: more recipients than `max_recipients`: split into batches, or send one POST and take `invalid_request`. */
  readonly G12: "split" | "send-whole";
  /** G13: a body over `max_message_size`: refuse before sending (permanent failure and DSN), or send and take 413. */
  readonly G13: "pre-check" | "send";
  /** G16: jitter on or off, and the fallback window in seconds (1 to 4 hours in production, RETRY-5). */
  readonly G16: { readonly jitter: boolean; readonly fallbackWindowS: number };
  /** G26: a request-level `policy_rejected` with Retry-After is permanent, or retried over the service at that time. */
  readonly G26: "permanent" | "retry";
  /** G46: a 4xx answer to the capabilities request is an unfetchable document (fallback-eligible), or shows the endpoint alive (never falls back). */
  readonly G46: "fallback-eligible" | "alive";
  /** G47: a Retry-After on a failed capabilities answer is ignored, or a lower bound for the next attempt. */
  readonly G47: "ignored" | "lower-bound";
}

/** The default reading of each gap, as docs/gaps.md gives it. */
export const defaultReadings: SenderReadings = {
  G7: "enforced",
  G8: "temporary-failure",
  G12: "split",
  G13: "pre-check",
  G16: { jitter: true, fallbackWindowS: DEFAULT_FALLBACK_WINDOW_S },
  G26: "permanent",
  G46: "fallback-eligible",
  G47: "ignored",
};

/** The readings in the gaps table's own notation (`{ G16: "jitter=off, fallback-window=7200s" }`), for the trace. */
export function readingsForTrace(readings: SenderReadings): Record<string, string> {
  return {
    G7: readings.G7,
    G8: readings.G8,
    G12: readings.G12,
    G13: readings.G13,
    G16: `jitter=${readings.G16.jitter ? "on" : "off"}, fallback-window=${readings.G16.fallbackWindowS}s`,
    G26: readings.G26,
    G46: readings.G46,
    G47: readings.G47,
  };
}
