/**
 * SHA-256 (FIPS 180-4) computed synchronously in TypeScript, whole or over
 * chunks. WebCrypto has no incremental digest, and each of its calls is a
 * round trip to the host's thread pool: `createDigester` (digest.ts) hashes a
 * streamed body with this where the crypto provider has no SHA-256 in pieces
 * (a browser, a Worker), and the simulator digests every traced HTTP body with
 * it, leaving nothing outstanding for its scheduler to wait on.
 */

// §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// Message schedule scratch, reused: compress never yields, so no two calls share it at once.
const W = new Int32Array(64);

/** An incremental SHA-256: `update` with chunks, then `digest` once. */
export class Sha256 {
  readonly #h = new Int32Array([
    0x6a09e667,
    0xbb67ae85 | 0,
    0x3c6ef372,
    0xa54ff53a | 0,
    0x510e527f,
    0x9b05688c | 0,
    0x1f83d9ab,
    0x5be0cd19,
  ]);
  readonly #block = new Uint8Array(64);
  #blockLength = 0;
  #totalBytes = 0;
  #done = false;

  /** Adds bytes; returns this, for chaining. */
  update(chunk: Uint8Array): this {
    if (this.#done) throw new Error("sha256: already finished");
    this.#totalBytes += chunk.length;
    let at = 0;
    if (this.#blockLength > 0) {
      const take = Math.min(64 - this.#blockLength, chunk.length);
      this.#block.set(chunk.subarray(0, take), this.#blockLength);
      this.#blockLength += take;
      at = take;
      if (this.#blockLength < 64) return this;
      compress(this.#h, this.#block, 0);
      this.#blockLength = 0;
    }
    for (; at + 64 <= chunk.length; at += 64) compress(this.#h, chunk, at);
    if (at < chunk.length) {
      this.#block.set(chunk.subarray(at), 0);
      this.#blockLength = chunk.length - at;
    }
    return this;
  }

  /** The 32-byte digest of everything added. */
  digest(): Uint8Array<ArrayBuffer> {
    if (this.#done) throw new Error("sha256: already finished");
    // The 0x80 marker, zeros and the length in bits (64-bit big-endian): one or two blocks.
    const rest = this.#blockLength;
    const tail = new Uint8Array(rest < 56 ? 64 : 128);
    tail.set(this.#block.subarray(0, rest));
    tail[rest] = 0x80;
    const bits = this.#totalBytes * 8;
    const view = new DataView(tail.buffer);
    view.setUint32(tail.length - 8, Math.floor(bits / 0x100000000));
    view.setUint32(tail.length - 4, bits >>> 0);
    for (let at = 0; at < tail.length; at += 64) compress(this.#h, tail, at);
    this.#done = true;
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setInt32(4 * i, this.#h[i] as number);
    return out;
  }
}

/** The SHA-256 digest of `bytes`, 32 bytes. */
export function sha256(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Sha256().update(bytes).digest();
}

function compress(H: Int32Array, data: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const j = offset + 4 * i;
    W[i] =
      ((data[j] as number) << 24) |
      ((data[j + 1] as number) << 16) |
      ((data[j + 2] as number) << 8) |
      (data[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15] as number;
    const w2 = W[i - 2] as number;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) | 0;
  }
  let a = H[0] as number;
  let b = H[1] as number;
  let c = H[2] as number;
  let d = H[3] as number;
  let e = H[4] as number;
  let f = H[5] as number;
  let g = H[6] as number;
  let h = H[7] as number;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + (K[i] as number) + (W[i] as number)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = ((H[0] as number) + a) | 0;
  H[1] = ((H[1] as number) + b) | 0;
  H[2] = ((H[2] as number) + c) | 0;
  H[3] = ((H[3] as number) + d) | 0;
  H[4] = ((H[4] as number) + e) | 0;
  H[5] = ((H[5] as number) + f) | 0;
  H[6] = ((H[6] as number) + g) | 0;
  H[7] = ((H[7] as number) + h) | 0;
}
