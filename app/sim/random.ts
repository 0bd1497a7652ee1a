/**
 * The simulator's randomness: a seeded PRNG (xoshiro128**) implementing the
 * Random port, with independent streams per component.
 *
 * Determinism across Node and browsers is the point (ARCHITECTURE.md
 * "Determinism"): the generator uses 32-bit integer arithmetic only
 * (`Math.imul`, shifts, xor), seeds are hashed from their text form (UTF-16
 * code units, the same in every engine), and the samplers below use only
 * `+ - * /` and `Math.sqrt`, which IEEE 754 rounds the same everywhere —
 * never `Math.log`, `Math.exp` or `Math.cos`, whose last bit engines may
 * approximate differently.
 *
 * Streams: `fork(label)` derives a new generator from the root seed and the
 * label path alone, not from how many numbers the parent has drawn. So the
 * network's fault streams, the DNS latency stream and each sender's jitter
 * stay put when a scenario adds a fault or a domain (after TigerBeetle's VOPR,
 * where one seed builds the whole run).
 */
import type { Random } from "../ports.ts";

/** A seed as a scenario or the command line gives it: a safe non-negative integer, or any string. */
export type Seed = number | string;

/** A seeded generator: the Random port plus integer draws and forks. */
export interface SeededRandom extends Random {
  /** The root seed this generator (and every fork of it) came from. */
  readonly seed: Seed;
  /** The fork labels from the root, `""` at the root: `network/fault:0`. */
  readonly path: string;
  /** Uniform in [0, 1), 53 random bits. */
  next(): number;
  /** `length` random bytes. */
  bytes(length: number): Uint8Array;
  /** A uniform unsigned 32-bit integer. */
  uint32(): number;
  /** A uniform integer in [minInclusive, maxExclusive); the range may be at most 2^32. */
  int(minInclusive: number, maxExclusive: number): number;
  /** True with probability `p` (0 → never draws true, 1 → always). Always draws one number, so the stream does not depend on `p`. */
  chance(p: number): boolean;
  /** An independent stream named `label`, the same for the same seed and path whatever this one has drawn. */
  fork(label: string): SeededRandom;
}

/**
 * A generator for `seed`. Numbers must be safe non-negative integers; the
 * number 7 and the string "7" are different seeds.
 *
 * @throws RangeError for a negative, fractional or unsafe numeric seed.
 */
export function createRandom(seed: Seed): SeededRandom {
  if (typeof seed === "number" && !(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new RangeError(`a numeric seed is a safe integer ≥ 0, not ${seed}`);
  }
  return new Xoshiro128(seed, "");
}

/** The text a seed is hashed from; a fork appends `/label` (labels escaped so `a/b` is not fork a, fork b). */
function material(seed: Seed, path: string): string {
  return `${typeof seed === "number" ? "n" : "s"}:${seed}${path}`;
}

class Xoshiro128 implements SeededRandom {
  readonly seed: Seed;
  readonly path: string;
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  constructor(seed: Seed, path: string) {
    this.seed = seed;
    this.path = path;
    const [a, b, c, d] = seedWords(material(seed, path));
    this.#s0 = a;
    this.#s1 = b;
    this.#s2 = c;
    this.#s3 = d;
    // xoshiro's one forbidden state; unreachable from splitmix output in practice, but cheap to rule out.
    if ((a | b | c | d) === 0) this.#s0 = 0x9e3779b9;
  }

  uint32(): number {
    const s0 = this.#s0;
    const s1 = this.#s1;
    const s2 = this.#s2;
    const s3 = this.#s3;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    const n2 = s2 ^ s0;
    const n3 = s3 ^ s1;
    this.#s1 = s1 ^ n2;
    this.#s0 = s0 ^ n3;
    this.#s2 = n2 ^ t;
    this.#s3 = rotl(n3, 11);
    return result;
  }

  next(): number {
    const high = this.uint32() >>> 5; // 27 bits
    const low = this.uint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }

  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i += 4) {
      let word = this.uint32();
      for (let j = i; j < Math.min(i + 4, length); j++) {
        out[j] = word & 0xff;
        word >>>= 8;
      }
    }
    return out;
  }

  int(minInclusive: number, maxExclusive: number): number {
    const range = maxExclusive - minInclusive;
    if (!Number.isSafeInteger(minInclusive) || !Number.isSafeInteger(maxExclusive) || range <= 0 || range > 2 ** 32) {
      throw new RangeError(`int(${minInclusive}, ${maxExclusive}): need integers with 0 < max - min ≤ 2^32`);
    }
    // Rejection sampling: no modulo bias.
    const limit = Math.floor(2 ** 32 / range) * range;
    for (;;) {
      const u = this.uint32();
      if (u < limit) return minInclusive + (u % range);
    }
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  fork(label: string): SeededRandom {
    return new Xoshiro128(this.seed, `${this.path}/${encodeURIComponent(label)}`);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Four 32-bit words from a string: cyrb128 (bryc, public domain), each word then run through splitmix32. */
function seedWords(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [splitmix32(h1), splitmix32(h2), splitmix32(h3), splitmix32(h4)];
}

/** One step of splitmix32: a bijective 32-bit mixer. */
function splitmix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z ^= z >>> 16;
  z = Math.imul(z, 0x21f0aaad);
  z ^= z >>> 15;
  z = Math.imul(z, 0x735a2d97);
  z ^= z >>> 15;
  return z >>> 0;
}

// ---------------------------------------------------------------------------
// Samplers, for latency distributions. All take any Random.

/** Uniform in [min, max). */
export function sampleUniform(random: Random, min: number, max: number): number {
  return min + (max - min) * random.next();
}

/** Normal with the given mean and standard deviation (Marsaglia's polar method, with {@link deterministicLn}). */
export function sampleNormal(random: Random, mean: number, stddev: number): number {
  for (;;) {
    const u = 2 * random.next() - 1;
    const v = 2 * random.next() - 1;
    const s = u * u + v * v;
    if (s > 0 && s < 1) return mean + stddev * u * Math.sqrt((-2 * deterministicLn(s)) / s);
  }
}

/** Exponential with the given mean (inversion, with {@link deterministicLn}). */
export function sampleExponential(random: Random, mean: number): number {
  // 1 - next() is in (0, 1], so the logarithm is finite.
  return -mean * deterministicLn(1 - random.next());
}

/**
 * The natural logarithm from `+ - * /` alone, so that it gives the same bits
 * in every engine (`Math.log` is implementation-approximated in ECMAScript).
 * Accurate to a few ulps, which is far more than latency sampling needs.
 *
 * @throws RangeError unless `x` is positive and finite.
 */
export function deterministicLn(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeError(`ln(${x}) is not a finite number`);
  // x = m · 2^e with m in [√½, √2): halving and doubling are exact.
  let m = x;
  let e = 0;
  while (m >= Math.SQRT2) {
    m /= 2;
    e++;
  }
  while (m < Math.SQRT1_2) {
    m *= 2;
    e--;
  }
  // ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.172: the series converges fast.
  const s = (m - 1) / (m + 1);
  const s2 = s * s;
  let term = s;
  let sum = 0;
  for (let k = 1; k <= 31; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2 * sum + e * Math.LN2;
}
