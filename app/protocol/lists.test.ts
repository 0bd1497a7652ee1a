import { describe, expect, it } from "vitest";
import { bytesToBinary } from "./base64.ts";
import { maxOf, minOf, pushAll } from "./lists.ts";

describe("lists of any length (no list spread into a call)", () => {
  const million = Array.from({ length: 1_000_000 }, (_, i) => ((i * 7919) % 1_000_003) - 500_000);

  it("maxOf and minOf take a million values; the floor or ceiling counts as one of them", () => {
    expect(maxOf(million)).toBe(million.reduce((a, b) => (b > a ? b : a)));
    expect(minOf(million)).toBe(million.reduce((a, b) => (b < a ? b : a)));
    expect(maxOf(million, 10_000_000)).toBe(10_000_000);
    expect(minOf(million, -10_000_000)).toBe(-10_000_000);
    expect(maxOf([])).toBe(-Infinity);
    expect(minOf([])).toBe(Infinity);
    expect(maxOf([], 4)).toBe(4);
  });

  it("pushAll appends a million items in order", () => {
    const target = [1, 2];
    expect(pushAll(target, million)).toBe(target);
    expect(target).toHaveLength(1_000_002);
    expect(target.slice(0, 4)).toEqual([1, 2, million[0], million[1]]);
    expect(target.at(-1)).toBe(million.at(-1));
  });

  it("bytesToBinary maps each of 3 MiB of bytes to one character, 0x80–0x9F included", () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 256);
    const binary = bytesToBinary(bytes);
    expect(binary).toHaveLength(bytes.length);
    expect([...binary.slice(0x7e, 0xa1)].map((c) => c.charCodeAt(0))).toEqual(
      Array.from({ length: 0xa1 - 0x7e }, (_, i) => 0x7e + i),
    );
    expect(binary.charCodeAt(bytes.length - 1)).toBe((bytes.length - 1) % 256);
  });
});
