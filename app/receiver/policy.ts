/**
 * The receiver's local policy (SVC-10) as state over the Clock: sliding-window
 * rate limits (LIM-14: the numbers are the receiver's own), counters of
 * planned temporary failures, and the matching of refused senders.
 */
import type { PolicyConfig } from "./config.ts";
import { maxOf } from "../protocol/lists.ts";

/**
 * A sliding-window limit: at most `max` events in any `windowS` seconds.
 * Deterministic on the Clock; keeps at most `max` timestamps per key.
 */
export interface SlidingWindow {
  /** Seconds until one more event fits (at least 1), or 0 when it fits now. */
  waitS(key: string, nowMs: number): number;
  /** Records one event at `nowMs`. */
  record(key: string, nowMs: number): void;
}

export function createSlidingWindow(max: number, windowS: number): SlidingWindow {
  const events = new Map<string, number[]>();
  const windowMs = windowS * 1000;
  function live(key: string, nowMs: number): number[] {
    const list = (events.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    if (list.length === 0) events.delete(key);
    else events.set(key, list);
    return list;
  }
  return {
    waitS(key, nowMs) {
      const list = live(key, nowMs);
      if (list.length < max) return 0;
      const oldest = list[list.length - max] ?? nowMs;
      return Math.max(1, Math.ceil((oldest + windowMs - nowMs) / 1000));
    },
    record(key, nowMs) {
      const list = live(key, nowMs);
      list.push(nowMs);
      if (list.length > max) list.splice(0, list.length - max);
      events.set(key, list);
    },
  };
}

/** The policy's state for one receiver. */
export interface PolicyState {
  /** Request level: seconds to wait when the signing domain is over a limit, else 0 (and the delivery is counted). */
  takeSigningDomainSlot(signingDomain: string, nowMs: number): number;
  /** Request level: whether the receiver answers 503 to this delivery, with its Retry-After. */
  takeUnavailable(): { readonly retryAfterS: number } | undefined;
  /** Request level: whether the sender is refused. */
  refusesSender(from: string | null, signingDomain: string): boolean;
  /** Per recipient: whether the mailbox refuses this sender. */
  recipientRefuses(mailbox: string, from: string | null, signingDomain: string): boolean;
  /** Per recipient: a planned temporary failure for this delivery, with its optional retry_after. */
  takeTemporaryFailure(mailbox: string): { readonly retryAfterS?: number } | undefined;
  /** Per recipient: seconds to wait when the mailbox is over its rate limit, else 0. */
  recipientWaitS(mailbox: string, nowMs: number): number;
  /** Per recipient: counts an accepted delivery against the mailbox's rate limits. */
  recordRecipientDelivery(mailbox: string, nowMs: number): void;
}

/** The policy state for `policy`; all counters start at zero. */
export function createPolicyState(policy: PolicyConfig): PolicyState {
  const domainLimits = policy.rateLimits.map((rule) => ({ rule, window: createSlidingWindow(rule.max, rule.windowS) }));
  const recipientLimits = policy.recipientRateLimits.map((rule) => ({
    rule,
    window: createSlidingWindow(rule.max, rule.windowS),
  }));
  const temporaryCounts = new Map<number, number>();
  let unavailableCount = 0;

  function senderMatches(patterns: readonly string[], from: string | null, signingDomain: string): boolean {
    // A pattern with "@" names one sender; without, a domain, matched against the signing domain (which `from` must be in).
    return patterns.some((p) => (p.includes("@") ? p === from : p === signingDomain));
  }

  return {
    takeSigningDomainSlot(signingDomain, nowMs) {
      const applicable = domainLimits.filter(
        ({ rule }) => rule.signingDomain === "*" || rule.signingDomain === signingDomain,
      );
      const waitS = maxOf(
        applicable.map(({ window }) => window.waitS(signingDomain, nowMs)),
        0,
      );
      if (waitS === 0) for (const { window } of applicable) window.record(signingDomain, nowMs);
      return waitS;
    },
    takeUnavailable() {
      const rule = policy.unavailable;
      if (rule === undefined) return undefined;
      if (rule.times !== undefined && unavailableCount >= rule.times) return undefined;
      unavailableCount += 1;
      return { retryAfterS: rule.retryAfterS };
    },
    refusesSender(from, signingDomain) {
      return (from !== null && policy.refusedSenders.includes(from)) || policy.refusedDomains.includes(signingDomain);
    },
    recipientRefuses(mailbox, from, signingDomain) {
      return policy.recipientRefusals.some(
        (rule) =>
          rule.mailbox === mailbox && (rule.senders === undefined || senderMatches(rule.senders, from, signingDomain)),
      );
    },
    takeTemporaryFailure(mailbox) {
      const index = policy.temporaryFailures.findIndex((rule) => rule.mailbox === mailbox);
      const rule = policy.temporaryFailures[index];
      if (rule === undefined) return undefined;
      const used = temporaryCounts.get(index) ?? 0;
      if (rule.times !== undefined && used >= rule.times) return undefined;
      temporaryCounts.set(index, used + 1);
      return rule.retryAfterS === undefined ? {} : { retryAfterS: rule.retryAfterS };
    },
    recipientWaitS(mailbox, nowMs) {
      return maxOf(
        recipientLimits
          .filter(({ rule }) => rule.mailbox === mailbox)
          .map(({ window }) => window.waitS(mailbox, nowMs)),
        0,
      );
    },
    recordRecipientDelivery(mailbox, nowMs) {
      for (const { rule, window } of recipientLimits) if (rule.mailbox === mailbox) window.record(mailbox, nowMs);
    },
  };
}
