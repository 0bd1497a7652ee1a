import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64Url, bytesToBinary, bytesToBase64, bytesToHex, hexToBytes } from "./base64.ts";

/** One character per byte, the long way. */
const byteByByte = (bytes: Uint8Array): string => Array.from(bytes, (b) => String.fromCharCode(b)).join("");

describe("bytesToBinary and bytesToBase64 (the trace's bytes and digests, POST-5's Content-Digest)", () => {
  it("POST-5 (property): one character of each byte's code, in order, across the chunk boundary too", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(bytesToBinary(bytes)).toBe(byteByByte(bytes));
        expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
    // Longer than several chunks: joined in order, none lost or repeated.
    const long = Uint8Array.from({ length: 0x8000 * 2 + 17 }, (_, i) => (i * 31 + (i >> 8)) & 0xff);
    expect(bytesToBinary(long)).toBe(byteByByte(long));
    expect(bytesToBinary(long.subarray(5, 0x8000 + 9))).toBe(byteByByte(long.subarray(5, 0x8000 + 9)));
  });

  it("POST-5, POST-2 (property): base64 and base64url are btoa's, the URL-safe one without padding, short and long", () => {
    const check = (bytes: Uint8Array): void => {
      const reference = btoa(byteByByte(bytes));
      expect(bytesToBase64(bytes)).toBe(reference);
      expect(bytesToBase64Url(bytes)).toBe(reference.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), check), { numRuns: 300 });
    // Around the length past which btoa does it (3 KiB), and a view into a larger array.
    for (const length of [3070, 3071, 3072, 3073, 3074, 5000]) {
      check(Uint8Array.from({ length }, (_, i) => (i * 37 + (i >> 7)) & 0xff));
    }
    check(Uint8Array.from({ length: 64 }, (_, i) => 255 - i).subarray(3, 40));
  });

  it("POST-5: no bytes are the empty string, and the empty base64", () => {
    expect(bytesToBinary(new Uint8Array(0))).toBe("");
    expect(bytesToBase64(new Uint8Array(0))).toBe("");
  });
});

describe("bytesToHex (POST-26: the idempotency record's sha-256:<hex>, message ids)", () => {
  it("POST-26 (property): two lowercase digits per byte, in order, and hexToBytes gives the bytes back", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const hex = bytesToHex(bytes);
        expect(hex).toBe(Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
        expect(hexToBytes(hex)).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
    expect(bytesToHex(Uint8Array.of(0, 9, 10, 15, 16, 255))).toBe("00090a0f10ff");
    expect(bytesToHex(new Uint8Array(0))).toBe("");
  });
});
