/**
 * Where the receiver remembers idempotency keys (POST-12, POST-25, POST-26):
 * per (signing domain, key), the digest of the body that came with it (G11)
 * and the response it got, byte for byte, until the record expires.
 *
 * The interface is small on purpose, so that a persistent store can replace
 * the in-memory one: the simulator keeps the in-memory store below (its
 * traces do not depend on a disk), `mailscope serve` a SQLite file
 * (app/node/sqliteIdempotencyStore.ts, decision note 0013) that outlives a
 * restart or a crash. Coordination of two identical
 * requests in flight at the same time is not the store's job: the handler
 * does it within its process (see `receiver.ts`).
 */

import { binaryToBytes, bytesToBinary } from "../protocol/base64.ts";

/** A response as it was sent: replayed from this, byte for byte. */
export interface StoredResponse {
  readonly status: number;
  /** Header fields in the order they were sent, names as written. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
}

/** What the receiver keeps for one (signing domain, key). */
export interface IdempotencyRecord {
  /** G11: `sha-256:<hex>` of the whole request body. */
  readonly contentDigest: string;
  readonly response: StoredResponse;
  /** Clock time the response was stored, ms since the epoch. */
  readonly storedAtMs: number;
  /** Clock time from which the record is forgotten, ms since the epoch. */
  readonly expiresAtMs: number;
}

/**
 * A delivery that is about to store mail under a key: kept by a durable store before the first
 * message is stored, and replaced by the record when the answer is known. One left without a record
 * after a restart belongs to a delivery a crash cut off between storing and answering: its retry resumes
 * it under the same delivery id, and a mailbox that already holds that delivery's message is not given
 * it again.
 */
export interface DeliveryIntent {
  /** G11: `sha-256:<hex>` of the whole request body. */
  readonly contentDigest: string;
  /** The delivery id its messages were stored under. */
  readonly deliveryId: string;
  readonly startedAtMs: number;
  /** Forgotten from then on, as a record would be. */
  readonly expiresAtMs: number;
}

/** The receiver's memory of idempotency keys. */
export interface IdempotencyStore {
  /**
   * The record of `key` for `signingDomain`, or `undefined` when there is none
   * or it has expired by `nowMs`. Keys of one signing domain never see
   * another's (AUTH-6).
   */
  get(signingDomain: string, key: string, nowMs: number): Promise<IdempotencyRecord | undefined>;
  /**
   * Stores (or replaces) the record; may drop records that expired by
   * `record.storedAtMs`. Resolves once the record is kept as durably as the
   * store keeps anything (a durable store: on disk, flushed); the receiver
   * answers only after it settles.
   */
  put(signingDomain: string, key: string, record: IdempotencyRecord): Promise<void>;
  /**
   * Optional (a store that outlives a crash): keeps `intent` as durably as `put` keeps a record, before
   * the delivery stores its first message; the `put` of the same key removes it.
   */
  begin?(signingDomain: string, key: string, intent: DeliveryIntent): Promise<void>;
  /** Optional, with `begin`: the intent left for this key without a record (a delivery cut off), unless expired by `nowMs`. */
  intent?(signingDomain: string, key: string, nowMs: number): Promise<DeliveryIntent | undefined>;
}

/** The in-memory store, with a way to look inside for tests and the simulator's inspector. */
export interface MemoryIdempotencyStore extends IdempotencyStore {
  /** How many records are held, expired ones not yet dropped included. */
  size(): number;
}

/**
 * A record as the in-memory store keeps it: the response's body as latin1 text, one string, where a
 * `Uint8Array` costs its own object, an `ArrayBuffer` and a separate block of bytes (~0.3 KiB more a
 * record); a receiver holds every record of the retention window (7 days: all of a fleet's). Each `get`
 * makes the record's bytes again (decision 0185).
 */
interface KeptRecord {
  readonly contentDigest: string;
  readonly status: number;
  readonly headers: StoredResponse["headers"];
  readonly body: string;
  readonly storedAtMs: number;
  readonly expiresAtMs: number;
}

function kept(record: IdempotencyRecord): KeptRecord {
  const { contentDigest, response, storedAtMs, expiresAtMs } = record;
  const { status, headers, body } = response;
  return { contentDigest, status, headers, body: bytesToBinary(body), storedAtMs, expiresAtMs };
}

function recordOf(k: KeptRecord): IdempotencyRecord {
  const response: StoredResponse = { status: k.status, headers: k.headers, body: binaryToBytes(k.body) };
  return { contentDigest: k.contentDigest, response, storedAtMs: k.storedAtMs, expiresAtMs: k.expiresAtMs };
}

/**
 * An in-memory {@link IdempotencyStore}. Scopes are kept apart by a nested
 * map rather than a joined string, so no spelling of a domain and a key can
 * collide with another pair. Expired records are dropped lazily on `get`
 * and swept on `put`, from the oldest, until the first live one.
 */
export function createMemoryIdempotencyStore(): MemoryIdempotencyStore {
  const scopes = new Map<string, Map<string, KeptRecord>>();
  /** Insertion order of (domain, key), for the sweep: records are put in clock order. */
  const order: { domain: string; key: string; expiresAtMs: number }[] = [];
  let held = 0;

  function remove(domain: string, key: string): void {
    const scope = scopes.get(domain);
    if (scope?.delete(key) === true) {
      held -= 1;
      if (scope.size === 0) scopes.delete(domain);
    }
  }

  function sweep(nowMs: number): void {
    let dropped = 0;
    for (const entry of order) {
      if (entry.expiresAtMs > nowMs) break;
      const current = scopes.get(entry.domain)?.get(entry.key);
      // A key put again later has a newer record; only the record this entry describes may go.
      if (current !== undefined && current.expiresAtMs <= nowMs) remove(entry.domain, entry.key);
      dropped += 1;
    }
    if (dropped > 0) order.splice(0, dropped);
  }

  return {
    get(signingDomain, key, nowMs) {
      const record = scopes.get(signingDomain)?.get(key);
      if (record === undefined) return Promise.resolve(undefined);
      if (record.expiresAtMs <= nowMs) {
        remove(signingDomain, key);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(recordOf(record));
    },
    put(signingDomain, key, record) {
      sweep(record.storedAtMs);
      let scope = scopes.get(signingDomain);
      if (scope === undefined) {
        scope = new Map();
        scopes.set(signingDomain, scope);
      }
      if (!scope.has(key)) held += 1;
      scope.set(key, kept(record));
      order.push({ domain: signingDomain, key, expiresAtMs: record.expiresAtMs });
      return Promise.resolve();
    },
    size: () => held,
  };
}
