import fc from "fast-check";
import { parseDictionary as libraryParseDictionary, serializeDictionary, Token } from "structured-headers";
import type { BareItem, Dictionary, InnerList, Item, Parameters } from "structured-headers";
import { describe, expect, it } from "vitest";
import { fastDictionary, parseDictionary, serializeByteSequences } from "./structuredFields.ts";

/** What the library makes of `text`: its Dictionary, or the fact that it refuses it. */
function library(text: string): { ok: true; value: Dictionary } | { ok: false; message: string } {
  try {
    return { ok: true, value: libraryParseDictionary(text) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** The fast parser agrees with the library on `text`: the same Dictionary, or it declines. */
function expectAgreement(text: string): void {
  const fast = fastDictionary(text);
  const lib = library(text);
  if (!lib.ok) {
    expect(fast, `the library refuses ${JSON.stringify(text)} (${lib.message}); the fast parser must decline`).toBe(
      undefined,
    );
    expect(() => parseDictionary(text)).toThrow(lib.message);
    return;
  }
  if (fast !== undefined) expect(fast).toEqual(lib.value);
  expect(parseDictionary(text)).toEqual(lib.value);
}

const keyArb = fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,6}$/);
const bareItemArb: fc.Arbitrary<BareItem> = fc.oneof(
  fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 12 }),
  fc.boolean(),
  fc.uint8Array({ maxLength: 70 }).map((b) => b.slice().buffer),
  fc.stringMatching(/^[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]{0,6}$/).map((t) => new Token(t)),
  fc.integer({ min: -99_999, max: 99_999 }).map((n) => n / 1000),
);
const paramsArb: fc.Arbitrary<Parameters> = fc
  .array(fc.tuple(keyArb, bareItemArb), { maxLength: 3 })
  .map((entries) => new Map(entries));
const itemArb: fc.Arbitrary<Item> = fc.tuple(bareItemArb, paramsArb);
const innerListArb: fc.Arbitrary<InnerList> = fc.tuple(fc.array(itemArb, { maxLength: 5 }), paramsArb);
const dictionaryArb: fc.Arbitrary<Dictionary> = fc
  .array(fc.tuple(keyArb, fc.oneof(itemArb, innerListArb)), { minLength: 1, maxLength: 4 })
  .map((entries) => new Map(entries));

/** Characters that matter to the grammar, for edits that break a valid field in every place. */
const editChar = fc.constantFrom(...' \t,;=():"\\?-.09aZ*@%/+é\n\x7f\x1f'.split(""));

describe("structured fields: the fast Dictionary parser is the library's, sooner (AUTH-2, POST-5)", () => {
  it("AUTH-2, POST-5: the published Signature-Input, Signature and Content-Digest values of RFC 9421 and RFC 9530", () => {
    for (const text of [
      'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
      "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:",
      'sig1=("@method" "@target-uri" "content-type" "content-digest" "idempotency-key");created=1800000000;keyid="s1._svckey.a.example"',
      "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
      "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:",
      'sig1=("@method" "@authority" "@path");created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd", sig2=("@status");created=1618884473;keyid="test-key-ecc-p256"',
      "a=1, b;x=?0, c=(1 2 3);y, d=:: , e=?1",
      "  a=1  ,\tb=2\t",
    ]) {
      expectAgreement(text);
      expect(fastDictionary(text), text).not.toBe(undefined);
    }
  });

  it("AUTH-2, POST-5 (property): any Dictionary the library writes parses to what the library reads", () => {
    fc.assert(
      fc.property(dictionaryArb, (dictionary) => {
        expectAgreement(serializeDictionary(dictionary));
      }),
      { numRuns: 3000, seed: 20261125 },
    );
  });

  it("AUTH-2, POST-5 (property): a written Dictionary broken by edits anywhere is refused, or read, exactly as the library does", () => {
    fc.assert(
      fc.property(
        dictionaryArb,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom("insert", "delete", "replace"), editChar), {
          minLength: 1,
          maxLength: 4,
        }),
        (dictionary, edits) => {
          let text = serializeDictionary(dictionary);
          for (const [at, kind, char] of edits) {
            const i = text.length === 0 ? 0 : at % (text.length + (kind === "insert" ? 1 : 0));
            if (kind === "insert") text = text.slice(0, i) + char + text.slice(i);
            else if (kind === "delete") text = text.slice(0, i) + text.slice(i + 1);
            else text = text.slice(0, i) + char + text.slice(i + 1);
          }
          expectAgreement(text);
        },
      ),
      { numRuns: 5000, seed: 11 },
    );
  });

  it("AUTH-2, POST-5 (property): short strings over the grammar's characters agree with the library", () => {
    fc.assert(
      fc.property(fc.array(editChar, { maxLength: 16 }), (chars) => {
        expectAgreement(chars.join(""));
      }),
      { numRuns: 5000, seed: 3 },
    );
  });

  it("AUTH-2, POST-5: the edges of the grammar — integer length, string characters, escapes, whitespace, commas, empty values", () => {
    for (const text of [
      "a=999999999999999",
      "a=-999999999999999",
      "a=1234567890123456",
      "a=-0",
      "a=-",
      "a=01",
      'a="x\x7fy"',
      'a="x\x1fy"',
      'a="tab\there"',
      'a="q\\"q\\\\"',
      'a="bad\\x"',
      'a="open',
      "a=:AAA=:",
      "a=:AA:",
      "a=:A:",
      "a=:A=AA:",
      "a=:AAAA",
      "a=:AA AA:",
      "a=:AA\\nAA:",
      "a=:AA-_:",
      "a=?2",
      "a=?",
      "a=(1  2)",
      "a=( 1 2 )",
      "a=(1,2)",
      "a=(1 2",
      "a=1,",
      "a=1 ,  b=2",
      "a=1,\tb=2",
      " a=1",
      "\ta=1",
      "a=1 ",
      "A=1",
      "*a=1",
      "a;b;c=1",
      "a=1;b=2;b=3, a=4",
      "",
      " ",
    ]) {
      expectAgreement(text);
    }
  });

  it("AUTH-2: what the fast parser leaves to the library (Tokens, Decimals, Dates, Display Strings) still parses", () => {
    for (const text of ["a=tok", "a=1.5", "a=@1659578233", 'a=%"caf%c3%a9"', "a=(x y);p=z"]) {
      expect(fastDictionary(text), text).toBe(undefined);
      expectAgreement(text);
    }
  });
});

describe("structured fields: Byte Sequence Dictionaries written as the library writes them (POST-5, AUTH-2)", () => {
  /** What the library writes for `members`, or the error it throws. */
  function librarySerialized(members: ReadonlyMap<string, Uint8Array>): { text: string } | { error: string } {
    const dict: Dictionary = new Map();
    for (const [key, bytes] of members) dict.set(key, [bytes.slice().buffer, new Map()]);
    try {
      return { text: serializeDictionary(dict) };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }

  it("POST-5, AUTH-2: a Content-Digest or Signature of any members is the library's text; a key it refuses, its error", () => {
    const anyKey = fc.oneof(keyArb, fc.string({ maxLength: 5 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(anyKey, fc.uint8Array({ maxLength: 80 })), { maxLength: 4 }), (entries) => {
        const members = new Map(entries);
        const lib = librarySerialized(members);
        if ("text" in lib) expect(serializeByteSequences(members)).toBe(lib.text);
        else expect(() => serializeByteSequences(members)).toThrow(lib.error);
      }),
      { numRuns: 500 },
    );
    // A view into a larger buffer is written for its own bytes only.
    const pooled = new Uint8Array([9, 9, 1, 2, 3, 9]).subarray(2, 5);
    expect(serializeByteSequences(new Map([["sha-256", pooled]]))).toBe("sha-256=:AQID:");
    expect(serializeByteSequences(new Map())).toBe("");
  });
});
