import { describe, expect, it } from "vitest";
import fc from "fast-check";
import vectors from "./fixtures/rfc9530-vectors.json" with { type: "json" };
import { base64ToBytes, bytesToBase64, hexToBytes } from "./base64.ts";
import {
  createContentDigest,
  createDigester,
  digestBytes,
  incrementalDigester,
  parseContentDigest,
  serializeContentDigest,
  verifyContentDigest,
} from "./digest.ts";
import type { DigestAlgorithm } from "./digest.ts";

const bodies = vectors.bodies as Record<string, { hex: string; "sha-256"?: string; "sha-512"?: string }>;

function body(name: string): Uint8Array {
  const entry = bodies[name];
  if (entry === undefined) throw new Error(`no body ${name} in the fixture`);
  const bytes = hexToBytes(entry.hex);
  if (bytes === undefined) throw new Error(`bad hex for ${name}`);
  return bytes;
}

const digestCases = vectors.field_cases.filter(
  (c): c is typeof c & { digest_input: string; algorithm: string; canonical_value: string } =>
    typeof c.digest_input === "string" && typeof c.canonical_value === "string",
);

describe("createContentDigest", () => {
  it.each(digestCases.map((c) => [c.id, c] as const))(
    "POST-5, RFC 9530 %s: the digest of the stated content is the canonical field value",
    async (_id, c) => {
      const value = await createContentDigest(body(c.digest_input), [c.algorithm as DigestAlgorithm]);
      expect(value).toBe(c.canonical_value);
    },
  );

  it('POST-5, RFC 9530 App. D: sha-256 and sha-512 of {"hello": "world"} are the sample values', async () => {
    const printed = vectors.sample_digest_values.values_as_printed;
    const value = await createContentDigest(body("hello"), ["sha-256", "sha-512"]);
    expect(value).toBe(`sha-256=${printed["sha-256"]}, sha-512=${printed["sha-512"]}`);
  });

  it("POST-5, RFC 9530 §2: defaults to sha-256 alone and drops repeated algorithms", async () => {
    expect(await createContentDigest(body("empty"))).toBe(`sha-256=:${bodies["empty"]?.["sha-256"]}:`);
    expect(await createContentDigest(body("empty"), ["sha-512", "sha-512"])).toBe(
      `sha-512=:${bodies["empty"]?.["sha-512"]}:`,
    );
  });
});

describe("parseContentDigest", () => {
  it("POST-5, RFC 9530 §2: the two-member example parses with and without the space after the comma", () => {
    const sec2b = vectors.field_cases.find((c) => c.id === "sec2-b");
    expect(sec2b?.value_as_printed).toBeDefined();
    for (const text of [sec2b?.value_as_printed ?? "", sec2b?.unwrapped_exact ?? ""]) {
      const parsed = parseContentDigest(text);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) continue;
      expect([...parsed.value.keys()]).toEqual(["sha-256", "sha-512"]);
      expect(bytesToBase64(parsed.value.get("sha-256") ?? new Uint8Array())).toBe(
        "d435Qo+nKZ+gLcUHn7GQtQ72hiBVAgqoLsZnZPiTGPk=",
      );
      expect(parsed.value.get("sha-512")?.length).toBe(64);
    }
  });

  it("POST-5, RFC 9530 App. D: deprecated algorithms are kept by the parser", () => {
    const printed = vectors.sample_digest_values.values_as_printed;
    const header = Object.entries(printed)
      .map(([name, value]) => `${name}=${value}`)
      .join(", ");
    const parsed = parseContentDigest(header);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect([...parsed.value.keys()]).toEqual(Object.keys(printed));
    expect(bytesToBase64(parsed.value.get("md5") ?? new Uint8Array())).toBe("Sd/dVLAcvNLSq16eXua5uQ==");
  });

  it.each(vectors.field_cases.filter((c) => c.printed_value_exact === false).map((c) => [c.id, c] as const))(
    "POST-5, RFC 9530 %s: the printed `==` padding typo is rejected as malformed, the canonical value is not",
    (_id, c) => {
      const typo = parseContentDigest(c.value_as_printed);
      expect(typo.ok).toBe(false);
      if (!typo.ok) {
        expect(typo.violations[0]?.path).toBe("Content-Digest");
        expect(typo.violations[0]?.rule).toBe("POST-5");
      }
      expect(parseContentDigest(c.canonical_value ?? "").ok).toBe(true);
    },
  );

  it.each([
    ["empty field", ""],
    ["a token instead of a byte sequence", "sha-256=abc"],
    ["a string instead of a byte sequence", 'sha-256="X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="'],
    ["an inner list", "sha-256=(:AAAA:)"],
    ["uppercase key", "SHA-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"],
    ["unclosed byte sequence", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="],
    ["legacy Digest syntax", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="],
    ["trailing comma", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:,"],
  ])("POST-5, RFC 9530 §2, RFC 8941 §3.2: %s is malformed", (_name, text) => {
    const parsed = parseContentDigest(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.violations.every((v) => v.rule === "POST-5" && v.path === "Content-Digest")).toBe(true);
  });

  it("POST-5, RFC 9530 §2: member parameters are ignored", () => {
    const parsed = parseContentDigest("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:;x=1");
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.value.get("sha-256")?.length).toBe(32);
  });
});

describe("verifyContentDigest", () => {
  it.each(digestCases.map((c) => [c.id, c] as const))(
    "POST-5, RFC 9530 %s: the canonical value verifies against its content",
    async (_id, c) => {
      const verdict = await verifyContentDigest(body(c.digest_input), c.canonical_value);
      expect(verdict).toEqual({ ok: true, algorithm: c.algorithm });
    },
  );

  it("POST-5, RFC 9530 §2: the two-member example fails, because its digests are of different content", async () => {
    const sec2b = vectors.field_cases.find((c) => c.id === "sec2-b");
    const verdict = await verifyContentDigest(body("hello_lf"), sec2b?.value_as_printed ?? "");
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toBe("mismatch");
      expect(verdict.violation.message).toContain("sha-256");
    }
  });

  it("POST-5, RFC 9530 App. B.6: both digests of one content verify; the strongest is reported", async () => {
    const b6 = vectors.field_cases.find((c) => c.id === "B.6-resp-256");
    const verdict = await verifyContentDigest(body("hello_lf_brotli"), b6?.full_field_value_unwrapped ?? "");
    expect(verdict).toEqual({ ok: true, algorithm: "sha-512" });
  });

  it("POST-5, RFC 9530 §2: a digest of other content is a mismatch", async () => {
    const verdict = await verifyContentDigest(body("hello"), `sha-256=:${bodies["hello_lf"]?.["sha-256"]}:`);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toBe("mismatch");
      expect(verdict.violation.rule).toBe("POST-5");
    }
  });

  it("POST-5, RFC 9530 §2: a digest of the wrong length is a mismatch, and says so", async () => {
    const verdict = await verifyContentDigest(body("hello"), "sha-256=:AAAA:");
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toBe("mismatch");
      expect(verdict.violation.message).toContain("3 bytes");
    }
  });

  it("POST-5, RFC 9530 App. D: only deprecated algorithms means no supported algorithm", async () => {
    const printed = vectors.sample_digest_values.values_as_printed;
    const verdict = await verifyContentDigest(body("hello"), `md5=${printed.md5}, sha=${printed.sha}`);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toBe("no-supported-algorithm");
      expect(verdict.violation.message).toContain("md5, sha");
    }
  });

  it("POST-5, RFC 9530 App. D: an unknown algorithm beside a correct sha-256 is ignored", async () => {
    const printed = vectors.sample_digest_values.values_as_printed;
    const verdict = await verifyContentDigest(body("hello"), `md5=${printed.md5}, sha-256=${printed["sha-256"]}`);
    expect(verdict).toEqual({ ok: true, algorithm: "sha-256" });
  });

  it("POST-5, RFC 9530 App. B.5: the `==` typo is malformed, not a mismatch", async () => {
    const b5 = vectors.field_cases.find((c) => c.id === "B.5-req");
    const verdict = await verifyContentDigest(body("hello_lf"), b5?.value_as_printed ?? "");
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toBe("malformed");
  });

  it("POST-5, RFC 9530 §2: any body round-trips through create and verify", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const header = await createContentDigest(bytes, ["sha-256", "sha-512"]);
        const verdict = await verifyContentDigest(bytes, header);
        expect(verdict).toEqual({ ok: true, algorithm: "sha-512" });
      }),
      { numRuns: 50 },
    );
  });
});

describe("createDigester", () => {
  it("POST-5, RFC 9530 §2: incremental sha-256 and sha-512 equal the published values and WebCrypto for every body of the fixture", async () => {
    for (const algorithm of ["sha-256", "sha-512"] as const) {
      for (const [name, entry] of Object.entries(bodies)) {
        const digester = createDigester(algorithm);
        const bytes = body(name);
        for (let i = 0; i < bytes.length; i += 5) digester.update(bytes.subarray(i, i + 5));
        const digest = await digester.finish();
        if (entry[algorithm] !== undefined) expect(bytesToBase64(digest)).toBe(entry[algorithm]);
        expect(digest).toEqual(await digestBytes(algorithm, bytes));
      }
    }
  });

  it("without a crypto provider (WebCrypto alone, as in a browser) there is no digester that keeps nothing: sha-256 is the TypeScript one, sha-512 buffers", () => {
    expect(incrementalDigester("sha-256")).toBeUndefined();
    expect(incrementalDigester("sha-512")).toBeUndefined();
  });

  it("POST-5, FIPS 180-4: incremental sha-256 and sha-512 equal WebCrypto for any body split anywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 400 }),
        fc.array(fc.nat({ max: 400 }), { maxLength: 6 }),
        fc.constantFrom<DigestAlgorithm>("sha-256", "sha-512"),
        async (bytes, cuts, algorithm) => {
          const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
          const digester = createDigester(algorithm);
          let from = 0;
          for (const to of [...points, bytes.length]) {
            digester.update(bytes.subarray(from, to));
            from = to;
          }
          expect(await digester.finish()).toEqual(await digestBytes(algorithm, bytes));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("POST-5, FIPS 180-4: sha-256 across the 55/56/64-byte padding boundaries equals WebCrypto", async () => {
    for (const length of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000]) {
      const bytes = new Uint8Array(length).map((_, i) => (i * 7) & 0xff);
      const digester = createDigester("sha-256");
      digester.update(bytes);
      expect(await digester.finish()).toEqual(await digestBytes("sha-256", bytes));
    }
  });

  it("POST-5, RFC 9530 §2: a digester's output serializes to the same field as createContentDigest", async () => {
    const bytes = body("hello");
    const digester = createDigester("sha-256");
    digester.update(bytes);
    const header = serializeContentDigest(new Map([["sha-256", await digester.finish()]]));
    expect(header).toBe(await createContentDigest(bytes));
    expect(base64ToBytes(header.slice("sha-256=:".length, -1))).toEqual(await digestBytes("sha-256", bytes));
  });
});
