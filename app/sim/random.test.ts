import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRandom, deterministicLn, sampleExponential, sampleNormal, sampleUniform } from "./random.ts";

describe("seeded PRNG: reproducible (ARCHITECTURE Determinism: all randomness from the seed)", () => {
  it("gives these exact numbers for these seeds, on every engine (known answers)", () => {
    const r = createRandom(42);
    expect([r.uint32(), r.uint32(), r.uint32(), r.uint32()]).toEqual([803720011, 1662791754, 3119130587, 3049023510]);
    const s = createRandom("mailscope");
    expect([s.uint32(), s.uint32(), s.next()]).toEqual([3081121644, 4017189459, 0.1196003909608766]);
    expect(Array.from(createRandom(1).bytes(6))).toEqual([109, 150, 172, 107, 47, 35]);
    expect(createRandom(7).fork("network").uint32()).toBe(807625137);
  });

  it("the same seed gives the same stream; another seed another one", () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.string()), (seed) => {
        const a = createRandom(seed);
        const b = createRandom(seed);
        const drawsA = Array.from({ length: 8 }, () => a.next());
        expect(Array.from({ length: 8 }, () => b.next())).toEqual(drawsA);
      }),
    );
    expect(createRandom(1).uint32()).not.toBe(createRandom(2).uint32());
    expect(createRandom(7).uint32()).not.toBe(createRandom("7").uint32());
  });

  it("next() is in [0, 1) and int() in its range without bias across buckets", () => {
    const r = createRandom("range");
    const buckets = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 60_000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      const k = r.int(0, 6);
      buckets[k] = (buckets[k] ?? 0) + 1;
    }
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
    expect(() => r.int(3, 3)).toThrow(RangeError);
  });

  it("refuses seeds that would not round-trip through a scenario file", () => {
    expect(() => createRandom(-1)).toThrow(RangeError);
    expect(() => createRandom(1.5)).toThrow(RangeError);
    expect(() => createRandom(2 ** 60)).toThrow(RangeError);
  });
});

describe("seeded PRNG: forks are independent streams", () => {
  it("a fork does not depend on how much the parent (or a sibling) has drawn", () => {
    const quiet = createRandom(99);
    const busy = createRandom(99);
    for (let i = 0; i < 1000; i++) busy.next();
    busy.fork("fault:0").next(); // a sibling stream in use
    expect(busy.fork("jitter").next()).toBe(quiet.fork("jitter").next());
  });

  it("drawing from one fork leaves the others unchanged (adding a fault does not shift jitter)", () => {
    const a = createRandom(5);
    const b = createRandom(5);
    const jitterA = a.fork("sender/a.example");
    const jitterB = b.fork("sender/a.example");
    const fault = b.fork("network").fork("fault:new");
    for (let i = 0; i < 100; i++) fault.next();
    expect(Array.from({ length: 10 }, () => jitterB.next())).toEqual(Array.from({ length: 10 }, () => jitterA.next()));
  });

  it("forks with different labels or paths differ, and the path is recorded", () => {
    const root = createRandom(1);
    const x = root.fork("a").fork("b");
    const y = root.fork("a/b");
    expect(x.path).toBe("/a/b");
    expect(y.path).toBe("/a%2Fb");
    expect(x.uint32()).not.toBe(y.uint32());
    expect(root.fork("a").uint32()).not.toBe(root.fork("b").uint32());
    expect(x.seed).toBe(1);
  });
});

describe("samplers: deterministic arithmetic", () => {
  it("deterministicLn agrees with Math.log to within a few ulps", () => {
    for (const x of [1e-300, 2 ** -53, 1e-10, 0.001, 0.5, Math.SQRT1_2, 1, 1.5, 2, Math.E, 10, 12345.678, 1e300]) {
      const expected = Math.log(x);
      expect(Math.abs(deterministicLn(x) - expected)).toBeLessThanOrEqual(
        4 * Number.EPSILON * Math.max(1, Math.abs(expected)),
      );
    }
    expect(() => deterministicLn(0)).toThrow(RangeError);
    expect(() => deterministicLn(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it("normal, exponential and uniform samples have the moments they should", () => {
    const n = 20_000;
    const normal = createRandom(3);
    const exponential = createRandom(4);
    const uniform = createRandom(5);
    let sum = 0;
    let squares = 0;
    let expSum = 0;
    let uniSum = 0;
    for (let i = 0; i < n; i++) {
      const v = sampleNormal(normal, 10, 2);
      sum += v;
      squares += v * v;
      expSum += sampleExponential(exponential, 100);
      const u = sampleUniform(uniform, 20, 40);
      expect(u >= 20 && u < 40).toBe(true);
      uniSum += u;
    }
    const mean = sum / n;
    expect(mean).toBeCloseTo(10, 1);
    expect(Math.sqrt(squares / n - mean * mean)).toBeCloseTo(2, 1);
    expect(expSum / n).toBeGreaterThan(97);
    expect(expSum / n).toBeLessThan(103);
    expect(uniSum / n).toBeCloseTo(30, 0);
  });
});
