import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Sha256, sha256 } from "./sha256.ts";

const hex = (bytes: Uint8Array | ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

describe("sha256: SHA-256 in TypeScript (the same bytes as WebCrypto's SHA-256, as in POST-5's Content-Digest)", () => {
  it("gives the FIPS 180-4 known answers", () => {
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(hex(sha256(text("")))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hex(sha256(text("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hex(sha256(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("agrees with crypto.subtle.digest at every length around the block and padding boundaries", async () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = new Uint8Array(length).map((_, i) => (i * 31 + length) & 0xff);
      expect(hex(sha256(bytes))).toBe(hex(await crypto.subtle.digest("SHA-256", bytes)));
    }
  });

  it("agrees with crypto.subtle.digest on any bytes, also a view into a larger buffer", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), fc.nat(7), async (bytes, offset) => {
        const buffer = new Uint8Array(bytes.length + offset);
        buffer.set(bytes, offset);
        const view = buffer.subarray(offset);
        expect(hex(sha256(view))).toBe(hex(await crypto.subtle.digest("SHA-256", bytes)));
      }),
      { numRuns: 60 },
    );
  });
});

describe("Sha256 over chunks (the receiver's incremental digest)", () => {
  it("gives the one-shot digest for any split of the input", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.array(fc.nat(600), { maxLength: 6 }), (bytes, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const hash = new Sha256();
        let at = 0;
        for (const point of [...points, bytes.length]) {
          hash.update(bytes.subarray(at, point));
          at = point;
        }
        expect(hex(hash.digest())).toBe(hex(sha256(bytes)));
      }),
      { numRuns: 300, seed: 7 },
    );
  });
  it("refuses to be used after its digest", () => {
    const hash = new Sha256().update(new Uint8Array(3));
    hash.digest();
    expect(() => hash.update(new Uint8Array(1))).toThrow(/already finished/);
  });
});
