import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64ToBytes, binaryString, bytesToBase64 } from "./base64.ts";

/** One character per byte, the long way. */
const byteByByte = (bytes: Uint8Array): string => Array.from(bytes, (b) => String.fromCharCode(b)).join("");

describe("binaryString and bytesToBase64 (the trace's bytes and digests, POST-5's Content-Digest)", () => {
  it("POST-5 (property): one character of each byte's code, in order, across the chunk boundary too", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(binaryString(bytes)).toBe(byteByByte(bytes));
        expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
    // Longer than one chunk (0x8000 bytes): chunks joined in order, none lost or repeated.
    const long = Uint8Array.from({ length: 0x8000 * 2 + 17 }, (_, i) => (i * 31 + (i >> 8)) & 0xff);
    expect(binaryString(long)).toBe(byteByByte(long));
    expect(binaryString(long.subarray(5, 0x8000 + 9))).toBe(byteByByte(long.subarray(5, 0x8000 + 9)));
  });

  it("POST-5: no bytes are the empty string, and the empty base64", () => {
    expect(binaryString(new Uint8Array(0))).toBe("");
    expect(bytesToBase64(new Uint8Array(0))).toBe("");
  });
});
