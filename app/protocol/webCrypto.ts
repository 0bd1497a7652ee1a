/**
 * The core's one door to WebCrypto. Every `crypto.subtle` call of the core
 * goes through {@link subtle}, so that whoever needs to know when crypto work
 * is outstanding can watch it: the simulator's scheduler tracks each operation
 * and starts the next event only once all of them have settled
 * (ARCHITECTURE.md "Determinism"). WebCrypto settles on real host tasks, so
 * without this the order of events could depend on how fast the machine is.
 */

/**
 * Sees each operation as it starts. It may hand back a promise for the core to
 * await instead, settling as the operation does, e.g. one that also waits for
 * the operations started before it, so that results are released in the order
 * the operations started rather than in the order a thread pool finished them.
 */
type Observer = (operation: Promise<unknown>) => Promise<unknown> | void;

const observers = new Set<Observer>();

/**
 * Calls `observer` with the promise of every WebCrypto operation the core
 * starts from now on. Returns the function that stops observing.
 */
export function observeWebCrypto(observer: Observer): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/**
 * The result a provider last computed on the calling thread ({@link settledHere}): a provider's call is
 * synchronous up to the promise it returns, so `subtle` compares that promise with this one and clears it.
 */
let computedHere: Promise<unknown> | undefined;

/**
 * A provider's result computed on the calling thread (app/node/nodeCrypto.ts),
 * as a promise already settled: no host task settles it, so the observers have
 * nothing to wait for or to order, and it is handed to the core unobserved.
 * Each observed operation costs the simulator's scheduler a held promise, a
 * tracked batch and a real-time watchdog for the event (decision 0210); a
 * provider's fallbacks to WebCrypto itself are observed as any operation is.
 */
export function settledHere<T>(value: T): Promise<T> {
  const promise = Promise.resolve(value);
  computedHere = promise;
  return promise;
}

function observed<T>(operation: Promise<T>): Promise<T> {
  let awaited: Promise<unknown> = operation;
  for (const observer of observers) awaited = observer(awaited) ?? awaited;
  return awaited as Promise<T>;
}

/** The operations the core uses. */
export type CryptoOperation = "digest" | "sign" | "verify" | "importKey" | "exportKey" | "generateKey";

/**
 * Another implementation of some of the operations, with WebCrypto's
 * semantics exactly: the same results for the same arguments (Ed25519 and
 * SHA-256 are deterministic, so signatures and digests are byte-identical),
 * the same errors, the same `CryptoKey` objects. A provider only changes how
 * fast the answer comes: in Node, app/node/nodeCrypto.ts computes small
 * Ed25519 and SHA-256 operations on the calling thread, which spares the
 * thread-pool round trip WebCrypto makes for each (docs/decisions/0010).
 */
export type CryptoProvider = Partial<Pick<SubtleCrypto, CryptoOperation>> & {
  /**
   * A digest fed piece by piece, which WebCrypto does not offer: lets a large
   * body be hashed while it arrives rather than held until it has. `algorithm`
   * is a WebCrypto name ("SHA-256", "SHA-512"); undefined for one the provider
   * does not hash in pieces. Optional; without it the core hashes the whole
   * input with `subtle.digest`.
   */
  readonly incrementalDigest?: (algorithm: IncrementalAlgorithm) => IncrementalDigest | undefined;
  /**
   * The digest of `data` computed at once on the calling thread, which
   * WebCrypto has no form of either; undefined when the provider does not
   * (then the core hashes another way). Optional.
   */
  readonly digestNow?: (algorithm: IncrementalAlgorithm, data: Uint8Array) => Uint8Array | undefined;
};

/** The digests the core may ask for in pieces (RFC 9530's active algorithms, by their WebCrypto names). */
export type IncrementalAlgorithm = "SHA-256" | "SHA-512";

/** A digest fed in pieces; `digest()` ends it. */
export interface IncrementalDigest {
  update(bytes: Uint8Array): void;
  digest(): Uint8Array;
}

/**
 * A digest of `algorithm` to feed in pieces when the provider in use offers
 * one, else undefined (hash the whole input with `subtle.digest` instead).
 * The same bytes either way.
 */
export function startDigest(algorithm: IncrementalAlgorithm): IncrementalDigest | undefined {
  return provider.incrementalDigest?.(algorithm);
}

/**
 * Whether the provider in use hashes on the calling thread ({@link CryptoProvider.digestNow}); when not, a
 * digest is a job of WebCrypto's own threads, which can run while this thread does something else.
 */
export function hashesOnThisThread(): boolean {
  return provider.digestNow !== undefined;
}

/**
 * The digest of `data` at once, when the provider in use computes one on the
 * calling thread ({@link CryptoProvider.digestNow}), else undefined. The same
 * bytes as any other way of hashing them.
 */
export function digestNow(algorithm: IncrementalAlgorithm, data: Uint8Array): Uint8Array | undefined {
  return provider.digestNow?.(algorithm, data);
}

let provider: CryptoProvider = {};

/**
 * Makes `implementation` answer the operations it has, from now on, for the
 * whole process (or Worker); the rest stay with WebCrypto. Only entry points
 * call it (the CLI, benches), never the core. Returns the function that puts
 * back the provider there was before.
 */
export function useCryptoProvider(implementation: CryptoProvider): () => void {
  const before = provider;
  provider = implementation;
  return () => {
    provider = before;
  };
}

function wrap<K extends CryptoOperation>(name: K): SubtleCrypto[K] {
  return ((...args: unknown[]) => {
    const own = provider[name];
    if (own !== undefined) {
      const result = (own as (...a: unknown[]) => Promise<unknown>)(...args);
      const here = result === computedHere;
      computedHere = undefined;
      return here ? result : observed(result);
    }
    // eslint-disable-next-line no-restricted-syntax -- the one place the core touches WebCrypto itself
    const real = globalThis.crypto.subtle;
    return observed((real[name] as (...a: unknown[]) => Promise<unknown>).apply(real, args));
  }) as SubtleCrypto[K];
}

/** `crypto.subtle`, observed. Use it instead of the global everywhere in the core. */
export const subtle: Pick<SubtleCrypto, CryptoOperation> = {
  digest: wrap("digest"),
  sign: wrap("sign"),
  verify: wrap("verify"),
  importKey: wrap("importKey"),
  exportKey: wrap("exportKey"),
  generateKey: wrap("generateKey"),
};
