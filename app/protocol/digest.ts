/**
 * Content-Digest (RFC 9530 §2): a Structured Fields Dictionary whose keys are
 * hash algorithm names and whose values are Byte Sequences holding the digest
 * of the message content. SPEC.md Authentication 1 makes it mandatory on every
 * delivery and requires the signature to cover it, so this is what binds the
 * body to the signature.
 */
import { parseDictionary, serializeDictionary } from "structured-headers";
import type { Dictionary } from "structured-headers";
import { asBufferSource, bytesEqual, fromArrayBuffer } from "./base64.ts";
import { fail, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import { subtle } from "./webCrypto.ts";

/** The algorithms RFC 9530 §7.2 registers as "Active"; the only ones we compute or trust. */
export type DigestAlgorithm = "sha-256" | "sha-512";

/** Supported algorithms, in the order we prefer them when several are present. */
export const DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = ["sha-512", "sha-256"];

const HEADER = "Content-Digest";
/**
 * POST-5: the request header Content-Digest is required, the RFC 9530 digest of
 * the request body. It covers both a field of the wrong shape and a digest that
 * is not the body's; the verdict's `reason` tells them apart.
 */
const RULE = "POST-5" satisfies RuleId;

const WEBCRYPTO_NAME: Record<DigestAlgorithm, string> = { "sha-256": "SHA-256", "sha-512": "SHA-512" };
const DIGEST_LENGTH: Record<DigestAlgorithm, number> = { "sha-256": 32, "sha-512": 64 };

/** The raw digest of `body` with one algorithm, through WebCrypto. */
export async function digestBytes(algorithm: DigestAlgorithm, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return fromArrayBuffer(await subtle.digest(WEBCRYPTO_NAME[algorithm], asBufferSource(body)));
}

/** Serializes digests already computed (for example by {@link createDigester}) as a Content-Digest value. */
export function serializeContentDigest(digests: ReadonlyMap<string, Uint8Array>): string {
  const dict: Dictionary = new Map();
  for (const [algorithm, digest] of digests) dict.set(algorithm, [asBufferSource(digest), new Map()]);
  return serializeDictionary(dict);
}

/**
 * The Content-Digest field value for `body`, e.g. `sha-256=:X48E9q…BPE=:`.
 * Members appear in the order of `algorithms`; duplicates are dropped.
 */
export async function createContentDigest(
  body: Uint8Array,
  algorithms: readonly DigestAlgorithm[] = ["sha-256"],
): Promise<string> {
  const digests = new Map<string, Uint8Array>();
  for (const algorithm of algorithms) {
    if (!digests.has(algorithm)) digests.set(algorithm, await digestBytes(algorithm, body));
  }
  return serializeContentDigest(digests);
}

/**
 * Parses a Content-Digest field value into algorithm → digest bytes. Keys the
 * registry does not know (or deprecates, like `md5`) are kept, so a caller can
 * report them, but {@link verifyContentDigest} ignores them. Member parameters
 * carry no meaning in RFC 9530 and are dropped.
 *
 * Malformed: not a Structured Fields Dictionary (this includes base64 that
 * `atob` rejects, such as RFC 9530's printed `…FabDg==` typo, whose 45
 * characters are no valid base64), a member that is not a Byte Sequence, or
 * an empty dictionary (a digest field that states no digest is a wrong shape,
 * not a mismatch).
 */
export function parseContentDigest(header: string): Parsed<Map<string, Uint8Array>> {
  let dict: Dictionary;
  try {
    dict = parseDictionary(header);
  } catch (error) {
    return fail(shapeViolation(`not a Structured Fields Dictionary of byte sequences (${errorText(error)})`));
  }
  if (dict.size === 0) return fail(shapeViolation("names no digest"));
  const out = new Map<string, Uint8Array>();
  const problems: Violation[] = [];
  for (const [algorithm, member] of dict) {
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) {
      problems.push(shapeViolation(`member "${algorithm}" is not a byte sequence (:base64:)`));
      continue;
    }
    out.set(algorithm, fromArrayBuffer(value));
  }
  return problems.length > 0 ? fail(...problems) : ok(out);
}

/** Outcome of checking a Content-Digest field against the body it came with. */
export type DigestVerdict =
  | { readonly ok: true; readonly algorithm: DigestAlgorithm }
  | {
      readonly ok: false;
      readonly reason: "malformed" | "no-supported-algorithm" | "mismatch";
      readonly violation: Violation;
    };

/**
 * Checks `header` against `body`. Every supported algorithm present must match
 * (a single wrong digest is a mismatch even if another one is right, because
 * the sender claimed both); at least one supported algorithm must be present.
 * On success, `algorithm` is the strongest one that matched.
 *
 * `digestOf`, when given, may supply the body's digest with an algorithm (a
 * receiver hashes the body once, for this check and for its idempotency
 * record); where it gives `undefined`, the body is hashed here.
 */
export async function verifyContentDigest(
  body: Uint8Array,
  header: string,
  digestOf?: BodyDigests,
): Promise<DigestVerdict> {
  const parsed = parseContentDigest(header);
  if (!parsed.ok) {
    const first = parsed.violations[0] ?? shapeViolation("malformed");
    return { ok: false, reason: "malformed", violation: first };
  }
  return checkContentDigest(parsed.value, body, digestOf);
}

/** The body's digest with an algorithm when the caller already has it (or has it under way); `undefined` when not. */
export type BodyDigests = (algorithm: DigestAlgorithm) => Promise<Uint8Array> | undefined;

/** {@link verifyContentDigest} on a Content-Digest already parsed by {@link parseContentDigest}. */
export async function checkContentDigest(
  claimedDigests: ReadonlyMap<string, Uint8Array>,
  body: Uint8Array,
  digestOf?: BodyDigests,
): Promise<DigestVerdict> {
  const present = DIGEST_ALGORITHMS.filter((algorithm) => claimedDigests.has(algorithm));
  const best = present[0];
  if (best === undefined) {
    const names = [...claimedDigests.keys()].join(", ");
    return {
      ok: false,
      reason: "no-supported-algorithm",
      violation: {
        path: HEADER,
        rule: RULE,
        message: `no supported digest algorithm (have ${names}; need sha-256 or sha-512)`,
      },
    };
  }
  for (const algorithm of present) {
    const claimed = claimedDigests.get(algorithm);
    const actual = await (digestOf?.(algorithm) ?? digestBytes(algorithm, body));
    if (claimed === undefined || !bytesEqual(claimed, actual)) {
      const lengthNote =
        claimed !== undefined && claimed.length !== DIGEST_LENGTH[algorithm]
          ? ` (the value has ${claimed.length} bytes, a ${algorithm} digest has ${DIGEST_LENGTH[algorithm]})`
          : "";
      return {
        ok: false,
        reason: "mismatch",
        violation: {
          path: HEADER,
          rule: RULE,
          message: `${algorithm} digest does not match the body${lengthNote}`,
        },
      };
    }
  }
  return { ok: true, algorithm: best };
}

/** An incremental digest: feed the body chunk by chunk, then ask for the digest once. */
export interface Digester {
  readonly algorithm: DigestAlgorithm;
  /** Adds the next chunk. The chunk may be reused by the caller afterwards. */
  update(chunk: Uint8Array): void;
  /** The digest of everything fed so far; the digester cannot be used after this. */
  finish(): Promise<Uint8Array>;
}

/**
 * An incremental digester for a body that arrives as a stream. WebCrypto has
 * no incremental digest, so SHA-256 (our default) is computed here in plain
 * TypeScript and needs only 64 bytes of buffer; SHA-512 buffers the chunks
 * and hashes them at `finish()` through WebCrypto, because a 64-bit SHA-512 in
 * 32-bit JavaScript arithmetic is not worth its weight while a receiver holds
 * the body anyway (it must parse the multipart).
 */
export function createDigester(algorithm: DigestAlgorithm): Digester {
  return algorithm === "sha-256" ? new Sha256Digester() : new BufferingDigester(algorithm);
}

class BufferingDigester implements Digester {
  readonly algorithm: DigestAlgorithm;
  private chunks: Uint8Array[] = [];
  private length = 0;
  private done = false;
  constructor(algorithm: DigestAlgorithm) {
    this.algorithm = algorithm;
  }
  update(chunk: Uint8Array): void {
    if (this.done) throw new Error("digester already finished");
    this.chunks.push(chunk.slice());
    this.length += chunk.length;
  }
  async finish(): Promise<Uint8Array> {
    if (this.done) throw new Error("digester already finished");
    this.done = true;
    const all = new Uint8Array(this.length);
    let at = 0;
    for (const chunk of this.chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    this.chunks = [];
    return digestBytes(this.algorithm, all);
  }
}

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256 (FIPS 180-4) over chunks, for {@link createDigester}. */
class Sha256Digester implements Digester {
  readonly algorithm = "sha-256" as const;
  private readonly h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  private readonly block = new Uint8Array(64);
  private readonly w = new Uint32Array(64);
  private blockLength = 0;
  private totalBytes = 0;
  private done = false;

  update(chunk: Uint8Array): void {
    if (this.done) throw new Error("digester already finished");
    this.totalBytes += chunk.length;
    let at = 0;
    if (this.blockLength > 0) {
      const take = Math.min(64 - this.blockLength, chunk.length);
      this.block.set(chunk.subarray(0, take), this.blockLength);
      this.blockLength += take;
      at = take;
      if (this.blockLength < 64) return;
      this.compress(this.block, 0);
      this.blockLength = 0;
    }
    for (; at + 64 <= chunk.length; at += 64) this.compress(chunk, at);
    if (at < chunk.length) {
      this.block.set(chunk.subarray(at), 0);
      this.blockLength = chunk.length - at;
    }
  }

  finish(): Promise<Uint8Array> {
    if (this.done) return Promise.reject(new Error("digester already finished"));
    const bitLength = this.totalBytes * 8;
    const padLength = this.blockLength < 56 ? 56 - this.blockLength : 120 - this.blockLength;
    const tail = new Uint8Array(padLength + 8);
    tail[0] = 0x80;
    // The message length in bits as a 64-bit big-endian integer; split because bitwise ops are 32-bit.
    const view = new DataView(tail.buffer);
    view.setUint32(padLength, Math.floor(bitLength / 0x100000000));
    view.setUint32(padLength + 4, bitLength >>> 0);
    this.update(tail);
    this.done = true;
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(4 * i, this.h[i] ?? 0);
    return Promise.resolve(out);
  }

  private compress(data: Uint8Array, offset: number): void {
    const w = this.w;
    for (let i = 0; i < 16; i++) {
      const j = offset + 4 * i;
      w[i] = ((data[j] ?? 0) << 24) | ((data[j + 1] ?? 0) << 16) | ((data[j + 2] ?? 0) << 8) | (data[j + 3] ?? 0);
    }
    for (let i = 16; i < 64; i++) {
      const w15 = w[i - 15] ?? 0;
      const w2 = w[i - 2] ?? 0;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      w[i] = ((w[i - 16] ?? 0) + s0 + (w[i - 7] ?? 0) + s1) | 0;
    }
    const h = this.h;
    let a = h[0] ?? 0;
    let b = h[1] ?? 0;
    let c = h[2] ?? 0;
    let d = h[3] ?? 0;
    let e = h[4] ?? 0;
    let f = h[5] ?? 0;
    let g = h[6] ?? 0;
    let hh = h[7] ?? 0;
    for (let i = 0; i < 64; i++) {
      const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + s1 + ch + (K[i] ?? 0) + (w[i] ?? 0)) | 0;
      const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] ?? 0) + a;
    h[1] = (h[1] ?? 0) + b;
    h[2] = (h[2] ?? 0) + c;
    h[3] = (h[3] ?? 0) + d;
    h[4] = (h[4] ?? 0) + e;
    h[5] = (h[5] ?? 0) + f;
    h[6] = (h[6] ?? 0) + g;
    h[7] = (h[7] ?? 0) + hh;
  }
}

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

function shapeViolation(message: string): Violation {
  return { path: HEADER, rule: RULE, message: `Content-Digest ${message}` };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
