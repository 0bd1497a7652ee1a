/**
 * A crypto provider for Node (app/protocol/webCrypto.ts `useCryptoProvider`):
 * the core's small Ed25519 signatures and verifications and SHA-256 digests
 * computed on the calling thread with node:crypto, the rest left to WebCrypto.
 *
 * Why: Node's WebCrypto runs every operation as a job on libuv's thread pool
 * and settles its promise on a later turn of the event loop. For an Ed25519
 * verification (~110 µs here) the round trip costs as much again in CPU
 * (~60 µs measured on this project's 2-core machines) plus a wait in which a
 * simulation has nothing else to do. Computed in place, the answer is the
 * same — Ed25519 (RFC 8032) and SHA-256 are deterministic, so signatures,
 * digests and therefore traces are byte for byte what WebCrypto gives (tested
 * in nodeCrypto.test.ts and by the scenario library under both) — and the
 * promise is already settled when the core awaits it.
 *
 * Large digests (over {@link SYNC_DIGEST_LIMIT}) stay on the thread pool so a
 * server does not stop answering while it hashes a 25 MiB body. SHA-256 and
 * SHA-512 are also offered fed in pieces (`incrementalDigest`), which
 * WebCrypto has no form of: `serve` hashes a body chunk by chunk as it
 * arrives, so it need not hold it to hash it (docs/decisions/0017). Anything this
 * provider does not recognize exactly — another algorithm, a key whose type or
 * usages do not allow the operation — goes to WebCrypto, which then gives its
 * own answer or its own error.
 */
import {
  createHash,
  createPublicKey,
  hash,
  KeyObject,
  sign as signOneShot,
  verify as verifyOneShot,
} from "node:crypto";
import {
  settledHere,
  type CryptoProvider,
  type IncrementalAlgorithm,
  type IncrementalDigest,
} from "../protocol/webCrypto.ts";

/** Digests of inputs up to this size are computed in place; larger ones on the thread pool. */
export const SYNC_DIGEST_LIMIT = 1024 * 1024;

const ED25519_SIGNATURE_LENGTH = 64;
const ED25519_PUBLIC_KEY_LENGTH = 32;

/** node:crypto's names of the digests the provider hashes in pieces; any other is left to the core's fallback. */
const NODE_HASH: Readonly<Record<string, string>> = { "SHA-256": "sha256", "SHA-512": "sha512" };

/** The KeyObject of each CryptoKey seen, made once (KeyObject.from costs a few µs). */
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: CryptoKey): KeyObject {
  let object = keyObjects.get(key);
  if (object === undefined) {
    object = KeyObject.from(key);
    keyObjects.set(key, object);
  }
  return object;
}

function algorithmName(algorithm: unknown): string | undefined {
  if (typeof algorithm === "string") return algorithm.toUpperCase();
  if (typeof algorithm === "object" && algorithm !== null) {
    const name = (algorithm as { name?: unknown }).name;
    if (typeof name === "string") return name.toUpperCase();
  }
  return undefined;
}

/** A view of a BufferSource's bytes, without copying (WebCrypto reads them at the call, as this does). */
function bytesOf(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/**
 * An ArrayBuffer with exactly these bytes that no one else holds: node:crypto's
 * own when its Buffer is the whole of it (its one-shot hash and sign give such
 * Buffers, made for the call), else a copy (a Buffer may share a pooled slab).
 */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const whole = bytes.buffer;
  if (whole instanceof ArrayBuffer && bytes.byteOffset === 0 && whole.byteLength === bytes.byteLength) return whole;
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}

/**
 * Whether `key` is an Ed25519 key that may do `wanted` (a private key sign, a
 * public one verify), asked for as Ed25519, and extractable: Node deprecates
 * making a KeyObject of a non-extractable CryptoKey (DEP0204), so those stay
 * with WebCrypto. Every key the core makes is extractable (app/protocol/profile.ts).
 */
function ed25519Key(algorithm: unknown, key: unknown, wanted: "private sign" | "public verify"): key is CryptoKey {
  if (algorithmName(algorithm) !== "ED25519" || typeof CryptoKey === "undefined" || !(key instanceof CryptoKey)) {
    return false;
  }
  // A CryptoKey never changes, and its getters copy (`usages` makes a new array each time): read them once.
  let fit = ed25519Fits.get(key);
  if (fit === undefined) {
    fit =
      key.algorithm.name === "Ed25519" && key.extractable
        ? key.type === "private"
          ? key.usages.includes("sign")
            ? "private sign"
            : "none"
          : key.usages.includes("verify")
            ? "public verify"
            : "none"
        : "none";
    ed25519Fits.set(key, fit);
  }
  return fit === wanted;
}

/**
 * The raw Ed25519 public keys imported so far, by their bytes (base64url), at most {@link PUBLIC_KEYS},
 * the oldest let go first: the KeyObject, and the CryptoKey handed out for it (extractable or not). A
 * simulated fleet's hundred receivers each import the same few senders' keys: `createPublicKey` (~20 µs,
 * most of it node:crypto checking its argument) and `toCryptoKey` run once per key. A CryptoKey never
 * changes, so every import of the same bytes with the same settings may have the same one.
 */
const publicKeys = new Map<string, { readonly object: KeyObject; extractable?: CryptoKey; fixed?: CryptoKey }>();
const PUBLIC_KEYS = 4096;

/** What each CryptoKey seen may do here: the one operation {@link ed25519Key} lets through for it, or none. */
const ed25519Fits = new WeakMap<CryptoKey, "private sign" | "public verify" | "none">();

function webCrypto(): SubtleCrypto {
  return globalThis.crypto.subtle;
}

/** The provider: install it with `useCryptoProvider(nodeCryptoProvider())` at a Node entry point. */
export function nodeCryptoProvider(): CryptoProvider {
  return {
    digest(algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer> {
      const bytes = bytesOf(data);
      if (algorithmName(algorithm) === "SHA-256" && bytes !== undefined && bytes.byteLength <= SYNC_DIGEST_LIMIT) {
        return settledHere(ownBuffer(hash("sha256", bytes, "buffer")));
      }
      return webCrypto().digest(algorithm, data);
    },

    sign(algorithm: AlgorithmIdentifier, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer> {
      const bytes = bytesOf(data);
      if (bytes !== undefined && ed25519Key(algorithm, key, "private sign")) {
        return settledHere(ownBuffer(signOneShot(null, bytes, keyObjectOf(key))));
      }
      return webCrypto().sign(algorithm, key, data);
    },

    verify(
      algorithm: AlgorithmIdentifier,
      key: CryptoKey,
      signature: BufferSource,
      data: BufferSource,
    ): Promise<boolean> {
      const bytes = bytesOf(data);
      const signatureBytes = bytesOf(signature);
      if (bytes !== undefined && signatureBytes !== undefined && ed25519Key(algorithm, key, "public verify")) {
        // WebCrypto answers false, not an error, for a signature of the wrong length.
        if (signatureBytes.byteLength !== ED25519_SIGNATURE_LENGTH) return settledHere(false);
        return settledHere(verifyOneShot(null, bytes, keyObjectOf(key), signatureBytes));
      }
      return webCrypto().verify(algorithm, key, signature, data);
    },

    importKey(
      format: KeyFormat,
      keyData: BufferSource | JsonWebKey,
      algorithm: AlgorithmIdentifier,
      extractable: boolean,
      keyUsages: readonly KeyUsage[],
    ): Promise<CryptoKey> {
      // A receiver imports each sender's published key (G4): 32 raw bytes, Ed25519, verify only.
      const bytes = format === "raw" ? bytesOf(keyData) : undefined;
      if (
        bytes !== undefined &&
        bytes.byteLength === ED25519_PUBLIC_KEY_LENGTH &&
        algorithmName(algorithm) === "ED25519" &&
        keyUsages.length === 1 &&
        keyUsages[0] === "verify"
      ) {
        const x = Buffer.from(bytes).toString("base64url");
        let imported = publicKeys.get(x);
        if (imported === undefined) {
          imported = { object: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }) };
          if (publicKeys.size >= PUBLIC_KEYS) publicKeys.delete(publicKeys.keys().next().value!);
          publicKeys.set(x, imported);
        }
        const which = extractable ? "extractable" : "fixed";
        let key = imported[which];
        if (key === undefined) {
          // The same CryptoKey WebCrypto would make, without a round trip to its thread pool (Node types it apart).
          key = imported.object.toCryptoKey({ name: "Ed25519" }, extractable, ["verify"]) as unknown as CryptoKey;
          keyObjects.set(key, imported.object);
          imported[which] = key;
        }
        return settledHere(key);
      }
      return format === "jwk"
        ? webCrypto().importKey(format, keyData as JsonWebKey, algorithm, extractable, [...keyUsages])
        : webCrypto().importKey(format as Exclude<KeyFormat, "jwk">, keyData as BufferSource, algorithm, extractable, [
            ...keyUsages,
          ]);
    },

    digestNow(algorithm: IncrementalAlgorithm, data: Uint8Array): Uint8Array | undefined {
      const name = NODE_HASH[algorithm];
      if (name === undefined || data.byteLength > SYNC_DIGEST_LIMIT) return undefined;
      return new Uint8Array(ownBuffer(hash(name, data, "buffer")));
    },

    incrementalDigest(algorithm: IncrementalAlgorithm): IncrementalDigest | undefined {
      const name = NODE_HASH[algorithm];
      if (name === undefined) return undefined;
      const running = createHash(name);
      return {
        update: (bytes: Uint8Array) => void running.update(bytes),
        digest: () => new Uint8Array(ownBuffer(running.digest())),
      };
    },
  };
}
