/**
 * How the receiver finds a sender's public key (G4): a configured key record, else the TXT record at the
 * keyid's DNS name, each answer kept for its TTL; and the key of a record imported once, not per delivery.
 */
import { importPublicKeyRaw } from "../protocol/profile.ts";
import type { KeyRecordLookup } from "../protocol/profile.ts";
import type { Clock, Resolver } from "../ports.ts";
import { createLru } from "./lru.ts";

/** Imported public keys kept, by key record text; the least recently used goes first. */
const KEY_CACHE_ENTRIES = 1024;
/** Key TXT answers kept, by keyid, each for its TTL but at most this long. */
const TXT_CACHE_ENTRIES = 1024;
const TXT_CACHE_MAX_S = 3600;

/** What the signature check is given to find and import a key (`verifyDelivery`'s options). */
export interface ReceiverKeys {
  /** The key record(s) at `keyid`: configured, kept, or looked up now. */
  resolveKey(keyid: string): Promise<KeyRecordLookup>;
  /** The lookup's answer when no one needs asking; undefined when someone does. */
  knownKey(keyid: string): KeyRecordLookup | undefined;
  /** The public key of a key record, imported once and then answered at once, without a promise. */
  importKey(record: string, publicKeyRaw: Uint8Array): CryptoKey | Promise<CryptoKey>;
}

/**
 * The receiver's key lookup over its configured `keyRecords` (by keyid), its resolver and clock; a
 * `keyLookup` replaces the lookup entirely and is asked every time.
 */
export function createReceiverKeys(
  configured: Readonly<Record<string, string>>,
  ports: {
    readonly clock: Clock;
    readonly resolver: Resolver;
    readonly keyLookup?: ((keyid: string) => Promise<KeyRecordLookup>) | undefined;
  },
): ReceiverKeys {
  const { clock, keyLookup } = ports;
  /** The configured key records by keyid in lower case: a keyid is a DNS name, matched whatever its case. */
  const keyRecords = new Map(Object.entries(configured).map(([keyid, record]) => [keyid.toLowerCase(), record]));
  /** Public keys imported before, by the key record that published them. */
  const importedKeys = createLru<string, CryptoKey | Promise<CryptoKey>>(KEY_CACHE_ENTRIES);
  /** The resolver's TXT answers at keyids, until their TTL runs out on the clock. */
  const keyAnswers = createLru<string, { readonly txt: readonly string[]; readonly untilMs: number }>(
    TXT_CACHE_ENTRIES,
  );

  async function resolveKey(keyid: string): Promise<KeyRecordLookup> {
    if (keyLookup !== undefined) return keyLookup(keyid);
    const known = knownKey(keyid);
    if (known !== undefined) return known;
    const answer = await ports.resolver.txt(keyid);
    switch (answer.kind) {
      case "answer": {
        const keepS = Math.min(answer.ttlS, TXT_CACHE_MAX_S);
        if (keepS > 0)
          keyAnswers.set(keyid.toLowerCase(), { txt: answer.records, untilMs: clock.now() + keepS * 1000 });
        return { kind: "records", txt: answer.records };
      }
      case "nxdomain":
      case "nodata":
        return { kind: "none" };
      default:
        return { kind: "error", detail: answer.kind };
    }
  }

  /**
   * The key lookup's answer when no one needs asking: a configured record, or
   * a TXT answer still within its TTL. Not with a `keyLookup` port, which
   * replaces the lookup entirely and is asked every time.
   */
  function knownKey(keyid: string): KeyRecordLookup | undefined {
    if (keyLookup !== undefined) return undefined;
    const fixed = keyRecords.get(keyid.toLowerCase());
    if (fixed !== undefined) return { kind: "records", txt: [fixed] };
    const kept = keyAnswers.get(keyid.toLowerCase());
    if (kept === undefined) return undefined;
    if (clock.now() < kept.untilMs) return { kind: "records", txt: kept.txt };
    keyAnswers.delete(keyid.toLowerCase());
    return undefined;
  }

  function importKey(record: string, publicKeyRaw: Uint8Array): CryptoKey | Promise<CryptoKey> {
    const kept = importedKeys.get(record);
    if (kept !== undefined) return kept;
    const importing = importPublicKeyRaw(publicKeyRaw);
    importedKeys.set(record, importing);
    importing.then(
      (key) => {
        if (importedKeys.peek(record) === importing) importedKeys.set(record, key);
      },
      () => {
        // Not kept: the next delivery tries again (and is told why it failed).
        if (importedKeys.peek(record) === importing) importedKeys.delete(record);
      },
    );
    return importing;
  }

  return { resolveKey, knownKey, importKey };
}
