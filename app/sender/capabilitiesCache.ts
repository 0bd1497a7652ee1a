/**
 * What a sender remembers about each receiving domain between deliveries: the
 * last capabilities document (with its freshness) and the discovery pin. Both
 * live on the Clock port, so virtual time ages them.
 *
 * Capabilities (GET-5, GET-6, GET-7, LIM-9, LIM-10, G27): fresh for the
 * `Cache-Control` max-age, 1 hour without one, never more than 24 hours; a
 * stale document is never used, only fetched again (G28).
 *
 * Pin (GET-8, CAP-11, CAP-13, LIM-11, G7): each successful fetch sets or
 * refreshes it for `discovery_pin_max_age` seconds (above 31557600 read as
 * 31557600); 0 or an absent member removes it.
 */
import type { Clock } from "../ports.ts";
import type { Capabilities } from "../protocol/resources.ts";
import { SPEC_CONSTANTS, type SpecConstants } from "../protocol/specConstants.ts";

/** GET-6, LIM-9: the freshness assumed without a usable `max-age`. */
export const DEFAULT_CAPABILITIES_MAX_AGE_S = SPEC_CONSTANTS.capabilitiesDefaultMaxAgeS;
/** GET-7, LIM-10: a document older than this is never used. */
export const MAX_CAPABILITIES_AGE_S = SPEC_CONSTANTS.capabilitiesMaxAgeS;

/** How long a capabilities document stays fresh, read from its `Cache-Control` (G27). */
export interface Freshness {
  readonly maxAgeS: number;
  /** The rule or gap that decided: GET-6 (assumed 1 hour), GET-7 (capped at 24 hours) or G27 (read from max-age). */
  readonly rule: "GET-6" | "GET-7" | "G27";
}

/**
 * Reads `Cache-Control` for a capabilities document (G27): a `max-age`
 * directive sets the freshness, capped at 24 hours (GET-7); without a usable
 * `max-age` (absent header, `no-store` or `no-cache` alone, unparsable value)
 * the sender assumes 1 hour (GET-6). `max-age=0` means fetching again before
 * every delivery. The first `max-age` counts when there are several. The
 * 1 hour and the 24 hours are those of `constants` (SPEC.md's by default).
 */
export function freshnessOf(cacheControl: string | null, constants: SpecConstants = SPEC_CONSTANTS): Freshness {
  const assumed = constants.capabilitiesDefaultMaxAgeS;
  if (cacheControl === null) return { maxAgeS: assumed, rule: "GET-6" };
  for (const directive of cacheControl.split(",")) {
    const match = /^\s*max-age\s*=\s*(?:([0-9]+)|"([0-9]+)")\s*$/i.exec(directive);
    if (match === null) continue;
    const value = Number(match[1] ?? match[2]);
    const oldest = constants.capabilitiesMaxAgeS;
    return value > oldest ? { maxAgeS: oldest, rule: "GET-7" } : { maxAgeS: value, rule: "G27" };
  }
  return { maxAgeS: assumed, rule: "GET-6" };
}

/** A capabilities document as the sender keeps it. */
export interface CachedCapabilities {
  readonly capabilities: Capabilities;
  /** The origin that served it (the endpoint discovery chose). */
  readonly origin: string;
  readonly fetchedAtMs: number;
  readonly maxAgeS: number;
}

/** A discovery pin: the receiving domain is known to offer the service until `expiresAtMs`. */
export interface DiscoveryPin {
  readonly setAtMs: number;
  readonly expiresAtMs: number;
  /** The lifetime applied, after the clamp of CAP-13. */
  readonly maxAgeS: number;
}

/** What a successful fetch did to the pin (GET-8). */
export type PinChange =
  | {
      readonly kind: "set";
      readonly pin: DiscoveryPin;
      readonly refreshed: boolean;
      readonly advertisedS: number;
      readonly clamped: boolean;
    }
  | { readonly kind: "removed"; readonly reason: "max-age-0" | "absent" }
  | { readonly kind: "none"; readonly reason: "max-age-0" | "absent" };

export interface CapabilitiesCache {
  /** The document for `domain` when it is still fresh, with its age; undefined when absent or stale (LIM-10). */
  fresh(domain: string): { readonly entry: CachedCapabilities; readonly ageS: number } | undefined;
  /** Keeps a freshly fetched document. */
  store(domain: string, entry: CachedCapabilities): void;
  /** Forgets the document of `domain` (for example after it turned out unusable). */
  forget(domain: string): void;
  /** The pin of `domain` when one is held and not expired. */
  validPin(domain: string): DiscoveryPin | undefined;
  /** Sets, refreshes or removes the pin after a successful fetch (GET-8, CAP-11, CAP-13, LIM-11). */
  applyPin(domain: string, capabilities: Pick<Capabilities, "discovery_pin_max_age">): PinChange;
}

function key(domain: string): string {
  return domain.toLowerCase().replace(/\.$/, "");
}

/**
 * A cache and pin store on `clock`, one entry per receiving domain, with the
 * 24-hour limit (GET-7) and the pin cap (CAP-13) of `constants`.
 */
export function createCapabilitiesCache(
  clock: Pick<Clock, "now">,
  constants: SpecConstants = SPEC_CONSTANTS,
): CapabilitiesCache {
  const { capabilitiesMaxAgeS: oldestS, pinMaxAgeS: pinCapS } = constants;
  const documents = new Map<string, CachedCapabilities>();
  const pins = new Map<string, DiscoveryPin>();
  return {
    fresh(domain) {
      const entry = documents.get(key(domain));
      if (entry === undefined) return undefined;
      const ageMs = clock.now() - entry.fetchedAtMs;
      const lifetimeMs = Math.min(entry.maxAgeS, oldestS) * 1000;
      if (ageMs < 0 || ageMs >= lifetimeMs) return undefined;
      return { entry, ageS: Math.floor(ageMs / 1000) };
    },
    store(domain, entry) {
      documents.set(key(domain), entry);
    },
    forget(domain) {
      documents.delete(key(domain));
    },
    validPin(domain) {
      const pin = pins.get(key(domain));
      if (pin === undefined) return undefined;
      if (clock.now() >= pin.expiresAtMs) {
        pins.delete(key(domain));
        return undefined;
      }
      return pin;
    },
    applyPin(domain, capabilities) {
      const advertisedS = capabilities.discovery_pin_max_age;
      const had = this.validPin(domain) !== undefined;
      if (advertisedS === undefined || advertisedS <= 0) {
        const reason = advertisedS === undefined ? "absent" : "max-age-0";
        pins.delete(key(domain));
        return had ? { kind: "removed", reason } : { kind: "none", reason };
      }
      const maxAgeS = Math.min(advertisedS, pinCapS);
      const nowMs = clock.now();
      const pin: DiscoveryPin = { setAtMs: nowMs, expiresAtMs: nowMs + maxAgeS * 1000, maxAgeS };
      pins.set(key(domain), pin);
      return { kind: "set", pin, refreshed: had, advertisedS, clamped: maxAgeS < advertisedS };
    },
  };
}
