import fc from "fast-check";
import { serializeInnerList, type BareItem, type Item, type Parameters } from "structured-headers";
import { describe, expect, it } from "vitest";
import { fastSerializeInnerList } from "./signature.ts";

// RFC 9421 §2.3: @signature-params is the RFC 8941 serialization of the inner list. The fast path must
// write exactly what the structured-headers library writes, and step aside for anything it does not know.
const key = fc.stringMatching(/^[a-z*][*\-_.a-z0-9]{0,8}$/);
const bare: fc.Arbitrary<BareItem> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }),
  fc.boolean(),
);
const params: fc.Arbitrary<Parameters> = fc
  .uniqueArray(fc.tuple(key, bare), { selector: ([k]) => k, maxLength: 4 })
  .map((entries) => new Map(entries));
const item: fc.Arbitrary<Item> = fc.tuple(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  params,
);

describe("RFC 9421 §2.3, RFC 8941 §4.1: @signature-params serialization", () => {
  it("the fast path writes exactly what structured-headers writes", () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), params, (items, listParams) => {
        expect(fastSerializeInnerList(items, listParams)).toBe(serializeInnerList([items, listParams]));
      }),
      { numRuns: 500, seed: 9421 },
    );
  });

  it("steps aside for values outside the common case (non-ASCII strings, decimals, invalid keys)", () => {
    expect(fastSerializeInnerList([["é", new Map()]], new Map())).toBeUndefined();
    expect(fastSerializeInnerList([["a", new Map()]], new Map([["created", 1.5]]))).toBeUndefined();
    expect(fastSerializeInnerList([["a", new Map()]], new Map([["Bad", 1]]))).toBeUndefined();
  });
});
