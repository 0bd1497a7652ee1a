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

function observed<T>(operation: Promise<T>): Promise<T> {
  let awaited: Promise<unknown> = operation;
  for (const observer of observers) awaited = observer(awaited) ?? awaited;
  return awaited as Promise<T>;
}

type Operation = "digest" | "sign" | "verify" | "importKey" | "exportKey" | "generateKey";

function wrap<K extends Operation>(name: K): SubtleCrypto[K] {
  return ((...args: unknown[]) => {
    // eslint-disable-next-line no-restricted-syntax -- the one place the core touches WebCrypto itself
    const real = globalThis.crypto.subtle;
    return observed((real[name] as (...a: unknown[]) => Promise<unknown>).apply(real, args));
  }) as SubtleCrypto[K];
}

/** `crypto.subtle`, observed. Use it instead of the global everywhere in the core. */
export const subtle: Pick<SubtleCrypto, Operation> = {
  digest: wrap("digest"),
  sign: wrap("sign"),
  verify: wrap("verify"),
  importKey: wrap("importKey"),
  exportKey: wrap("exportKey"),
  generateKey: wrap("generateKey"),
};
