import { describe, expect, it } from "vitest";
import fc from "fast-check";
import vectors from "./fixtures/rfc9460-examples.json" with { type: "json" };
import type { SvcbRecord } from "../ports.ts";
import { bytesToBase64, bytesToHex, hexToBytes } from "./base64.ts";
import { ProtocolError } from "./result.ts";
import type { Parsed } from "./result.ts";
import {
  decodeSvcbRdata,
  encodeSvcbRdata,
  formatIpv6,
  formatSvcbPresentation,
  parseIpv6,
  parseSvcbPresentation,
  svcParamKeyName,
  svcParamKeyNumber,
} from "./svcb.ts";

function hex(text: string): Uint8Array {
  const bytes = hexToBytes(text);
  if (bytes === undefined) throw new Error(`bad hex in test: ${text}`);
  return bytes;
}

function value<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(parsed.violations.map((v) => `${v.path}: ${v.message}`).join("; "));
  return parsed.value;
}

function messages(parsed: Parsed<unknown>): string {
  return parsed.ok ? "(accepted)" : parsed.violations.map((v) => v.message).join("; ");
}

interface VectorParam {
  readonly key: string;
  readonly key_number: number;
  readonly value_decoded: unknown;
}

/** What the published `decoded` params say the record must hold, in SvcbRecord terms. */
function expectParams(record: SvcbRecord, params: readonly VectorParam[]): void {
  const other: Record<string, string> = {};
  for (const param of params) {
    switch (param.key) {
      case "port":
        expect(record.port).toBe(param.value_decoded);
        break;
      case "alpn":
        expect(record.alpn).toEqual(param.value_decoded);
        break;
      case "ipv4hint":
        expect(record.ipv4hint).toEqual(param.value_decoded);
        break;
      case "ipv6hint":
        // Compared as addresses: RFC 5952 text may differ from the printed form (D.2-7 embeds an IPv4 tail).
        expect(record.ipv6hint?.map((a) => bytesToHex(parseIpv6(a) ?? new Uint8Array()))).toEqual(
          (param.value_decoded as string[]).map((a) => bytesToHex(parseIpv6(a) ?? new Uint8Array())),
        );
        break;
      case "mandatory":
        other.mandatory = [...(param.value_decoded as string[])]
          .sort((a, b) => (svcParamKeyNumber(a) ?? 0) - (svcParamKeyNumber(b) ?? 0))
          .join(",");
        break;
      default:
        other[param.key] = (param.value_decoded as { hex: string }).hex;
    }
  }
  expect(record.other ?? {}).toEqual(other);
  for (const key of ["port", "alpn", "ipv4hint", "ipv6hint"] as const) {
    if (!params.some((p) => p.key === key)) expect(record[key]).toBeUndefined();
  }
}

// Valid records, in the form decoding gives them back, so that round trips can compare whole records.
const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
const target = fc.oneof(
  fc.constant("."),
  fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join(".")),
);
const alpnId = fc.stringMatching(/^[a-z0-9][a-z0-9./-]{0,7}$/);
const otherKey = fc.integer({ min: 16, max: 65534 }).map(svcParamKeyName);
const validRecord: fc.Arbitrary<SvcbRecord> = fc
  .record(
    {
      priority: fc.integer({ min: 0, max: 65535 }),
      target,
      port: fc.integer({ min: 0, max: 65535 }),
      alpn: fc.uniqueArray(alpnId, { minLength: 1, maxLength: 3 }),
      ipv4hint: fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }),
      ipv6hint: fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }).map(formatIpv6), {
        minLength: 1,
        maxLength: 2,
      }),
      keys: fc.dictionary(otherKey, fc.uint8Array({ maxLength: 6 }).map(bytesToHex), { maxKeys: 2 }),
      ech: fc.uint8Array({ minLength: 1, maxLength: 12 }).map(bytesToBase64),
      noDefaultAlpn: fc.boolean(),
      mandatory: fc.boolean(),
    },
    { requiredKeys: ["priority", "target", "keys", "noDefaultAlpn", "mandatory"] },
  )
  .map(({ keys, ech, noDefaultAlpn, mandatory, ...fields }) => {
    const other: Record<string, string> = { ...keys };
    if (ech !== undefined) other["ech"] = ech;
    if (noDefaultAlpn && fields.alpn !== undefined) other["no-default-alpn"] = "";
    const present = [
      ...(["port", "alpn", "ipv4hint", "ipv6hint"] as const).filter((k) => fields[k] !== undefined),
      ...Object.keys(other),
    ];
    if (mandatory && present.length > 0) {
      other["mandatory"] = present
        .sort((a, b) => (svcParamKeyNumber(a) ?? 0) - (svcParamKeyNumber(b) ?? 0))
        .slice(0, 2)
        .join(",");
    }
    return { ...fields, ...(Object.keys(other).length > 0 && { other }) };
  });

/** One small break of valid RDATA: a byte changed, the data cut short, a byte inserted, or a stretch repeated. */
function mutateBytes(bytes: Uint8Array, op: number, where: number, byte: number): Uint8Array {
  const at = where % (bytes.length + 1);
  switch (op % 4) {
    case 0:
      return bytes.map((b, i) => (i === at % bytes.length ? byte : b));
    case 1:
      return bytes.slice(0, at);
    case 2:
      return new Uint8Array([...bytes.subarray(0, at), byte, ...bytes.subarray(at)]);
    default:
      return new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at, at + 4), ...bytes.subarray(at)]);
  }
}

/** One small break of presentation text: a character changed, deleted or inserted. */
function mutateText(text: string, op: number, where: number, char: string): string {
  const at = where % (text.length + 1);
  switch (op % 3) {
    case 0:
      return text.slice(0, at) + char + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    default:
      return text.slice(0, at) + char + text.slice(at);
  }
}

const valid = vectors.vectors.filter((v) => v.valid);
const invalid = vectors.vectors.filter((v) => !v.valid);

describe("RFC 9460 Appendix D valid vectors (G5, SVC-5)", () => {
  it("has the 9 valid and 6 failure vectors of Appendix D", () => {
    expect(valid).toHaveLength(9);
    expect(invalid).toHaveLength(6);
  });

  for (const vector of valid) {
    describe(`${vector.id} ${vector.figure_title} (${vector.rfc_section})`, () => {
      const decoded = vector.decoded as { priority: number; target: string; params: VectorParam[] };

      it("decodes the RDATA to the published priority, target and params (RFC 9460 §2.2)", () => {
        const record = value(decodeSvcbRdata(hex(vector.rdata_hex ?? "")));
        expect(record.priority).toBe(decoded.priority);
        expect(record.target).toBe(decoded.target === "." ? "." : decoded.target.replace(/\.$/, ""));
        expectParams(record, decoded.params);
      });

      it("re-encodes the decoded record to the exact published hex (RFC 9460 §2.2)", () => {
        const record = value(decodeSvcbRdata(hex(vector.rdata_hex ?? "")));
        expect(bytesToHex(encodeSvcbRdata(record))).toBe(vector.rdata_hex);
      });

      for (const [i, line] of vector.records.entries()) {
        it(`parses presentation form ${i + 1} to the same RDATA (RFC 9460 §2.1, Appendix A)`, () => {
          const record = value(parseSvcbPresentation(line));
          expect(bytesToHex(encodeSvcbRdata(record))).toBe(vector.rdata_hex);
        });
      }

      it("formats to presentation text that parses back to the same record (RFC 9460 §2.1)", () => {
        const record = value(decodeSvcbRdata(hex(vector.rdata_hex ?? "")));
        expect(value(parseSvcbPresentation(formatSvcbPresentation(record)))).toEqual(record);
      });
    });
  }

  it("D.2-5 keeps the generic key667 value as hex in other, bytes beyond ASCII included (RFC 9460 §2.1)", () => {
    const record = value(parseSvcbPresentation('1 foo.example.com. key667="hello\\210qoo"'));
    expect(record.other).toEqual({ key667: "68656c6c6fd2716f6f" });
  });

  it("D.2-9 decodes the escaped alpn list into f\\oo,bar and h2 (RFC 9460 Appendix A.1)", () => {
    const record = value(
      decodeSvcbRdata(hex("001003666f6f076578616d706c65036f7267000001000c08665c6f6f2c626172026832")),
    );
    expect(record.alpn).toEqual(["f\\oo,bar", "h2"]);
  });
});

describe("RFC 9460 Appendix D.3 failure vectors are refused (G5)", () => {
  for (const vector of invalid) {
    for (const [i, line] of vector.records.entries()) {
      it(`${vector.id} form ${i + 1}: ${vector.why_invalid ?? ""} (RFC 9460 Appendix D.3)`, () => {
        const parsed = parseSvcbPresentation(line);
        expect(parsed.ok, `${line} should be refused`).toBe(false);
        if (!parsed.ok) {
          expect(parsed.violations.length).toBeGreaterThan(0);
          expect(parsed.violations.every((v) => v.rule === "G5")).toBe(true);
        }
      });
    }
  }

  it("D.3-10 names the repeated key (RFC 9460 §2.1)", () => {
    expect(messages(parseSvcbPresentation("1 foo.example.com. ( key123=abc key123=def )"))).toMatch(
      /key123 appears more than once/,
    );
  });

  it("D.3-14 says mandatory must not list itself (RFC 9460 §8)", () => {
    expect(messages(parseSvcbPresentation("1 foo.example.com. mandatory=mandatory"))).toMatch(/must not list itself/);
  });

  it("D.3-13 names the missing mandatory key (RFC 9460 §8)", () => {
    expect(messages(parseSvcbPresentation("1 foo.example.com. mandatory=key123"))).toMatch(
      /key123, which the record does not have/,
    );
  });
});

describe("malformed RDATA is refused with a violation (RFC 9460 §2.2, G5)", () => {
  // Target foo.example.com. in wire form, and a helper for one SvcParam.
  const target = "03666f6f076578616d706c6503636f6d00";
  const param = (key: number, valueHex: string): string =>
    key.toString(16).padStart(4, "0") + (valueHex.length / 2).toString(16).padStart(4, "0") + valueHex;
  const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
    [
      "D.3-10 on the wire: a key twice",
      `0001${target}${param(123, "616263")}${param(123, "646566")}`,
      /more than once/,
    ],
    [
      "keys out of order (port before alpn)",
      `0001${target}${param(3, "0035")}${param(1, "026832")}`,
      /strictly increasing/,
    ],
    ["D.3-11 on the wire: empty mandatory", `0001${target}${param(0, "")}`, /mandatory must list one or more keys/],
    ["D.3-11 on the wire: empty alpn", `0001${target}${param(1, "")}`, /alpn must list at least one/],
    ["D.3-11 on the wire: empty port", `0001${target}${param(3, "")}`, /port must be 2 bytes/],
    ["D.3-11 on the wire: empty ipv4hint", `0001${target}${param(4, "")}`, /ipv4hint must hold one or more/],
    ["D.3-11 on the wire: empty ipv6hint", `0001${target}${param(6, "")}`, /ipv6hint must hold one or more/],
    [
      "D.3-12 on the wire: no-default-alpn with a value",
      `0001${target}${param(1, "026832")}${param(2, "616263")}`,
      /no-default-alpn must have an empty value/,
    ],
    ["D.3-13 on the wire: mandatory key missing", `0001${target}${param(0, "007b")}`, /does not have/],
    ["D.3-14 on the wire: mandatory lists itself", `0001${target}${param(0, "0000")}`, /must not list itself/],
    [
      "D.3-15 on the wire: mandatory lists a key twice",
      `0001${target}${param(0, "007b007b")}${param(123, "616263")}`,
      /more than once/,
    ],
    [
      "mandatory keys not ascending",
      `0001${target}${param(0, "00040001")}${param(1, "026832")}${param(4, "c0000201")}`,
      /increasing order/,
    ],
    ["port of 3 bytes", `0001${target}${param(3, "003500")}`, /port must be 2 bytes; it has 3/],
    ["ipv4hint of 5 bytes", `0001${target}${param(4, "c000020101")}`, /4-byte addresses; it has 5/],
    [
      "ipv6hint of 17 bytes",
      `0001${target}${param(6, "20010db8000000000000000000000001ff")}`,
      /16-byte addresses; it has 17/,
    ],
    ["alpn with an empty identifier", `0001${target}${param(1, "00")}`, /empty protocol identifier/],
    ["alpn identifier running past its value", `0001${target}${param(1, "056832")}`, /do not exactly fill/],
    ["no-default-alpn without alpn (§7.1.1)", `0001${target}${param(2, "")}`, /without alpn/],
    ["the reserved key65535", `0001${target}${param(65535, "")}`, /Invalid key/],
    ["RDATA ends inside a SvcParam's value", `0001${target}000300040035`, /ends inside the value of port/],
    ["RDATA ends inside a SvcParam's key", `0001${target}0003`, /ends inside a SvcParam/],
    ["a compressed target", "0001c00c", /compressed/],
    ["RDATA ends inside the target", "000103666f", /ends inside a label/],
    ["RDATA without the target's root label", "000103666f6f", /ends inside TargetName/],
    ["RDATA of 2 bytes", "0001", /too short/],
    ["a label of the reserved type 0x40", "000140", /unknown type/],
  ];
  for (const [title, rdata, message] of cases) {
    it(`${title}`, () => {
      const parsed = decodeSvcbRdata(hex(rdata));
      expect(messages(parsed)).toMatch(message);
      if (!parsed.ok) expect(parsed.violations[0]?.rule).toBe("G5");
    });
  }

  it("a target longer than 255 octets (RFC 1035 §3.1)", () => {
    const label = `3f${"61".repeat(63)}`;
    expect(messages(decodeSvcbRdata(hex(`0001${label.repeat(4)}00`)))).toMatch(/longer than 255/);
  });

  it("never throws on arbitrary bytes, and what it accepts re-encodes byte for byte (RFC 9460 §2.2)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const parsed = decodeSvcbRdata(bytes);
        if (parsed.ok) expect(bytesToHex(encodeSvcbRdata(parsed.value))).toBe(bytesToHex(bytes));
      }),
    );
  });

  it("valid records broken one byte at a time: never throws, what it accepts re-encodes byte for byte, both sides reached (RFC 9460 §2.2)", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(validRecord, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (record, op, where, byte) => {
        const bytes = mutateBytes(encodeSvcbRdata(record), op, where, byte);
        const parsed = decodeSvcbRdata(bytes);
        if (parsed.ok) {
          accepted++;
          expect(bytesToHex(encodeSvcbRdata(parsed.value))).toBe(bytesToHex(bytes));
        } else {
          refused++;
          expect(parsed.violations.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400, seed: 9460 },
    );
    // Neither side of the property may go quiet: a share of the broken records still decodes.
    expect(accepted / (accepted + refused)).toBeGreaterThanOrEqual(0.1);
    expect(refused / (accepted + refused)).toBeGreaterThanOrEqual(0.3);
  });
});

describe("encoding records (RFC 9460 §2.2, G5)", () => {
  it("target '.' is the root label, the record G5 reads as the owner name", () => {
    expect(bytesToHex(encodeSvcbRdata({ priority: 1, target: ".", port: 8443 }))).toBe("000100000300" + "0220fb");
  });

  it("accepts a target with or without its trailing dot", () => {
    expect(bytesToHex(encodeSvcbRdata({ priority: 0, target: "foo.example.com." }))).toBe(
      bytesToHex(encodeSvcbRdata({ priority: 0, target: "foo.example.com" })),
    );
  });

  it("sorts mandatory and params into ascending order (RFC 9460 §2.2, §8)", () => {
    const record: SvcbRecord = {
      priority: 16,
      target: "foo.example.org",
      alpn: ["h2", "h3-19"],
      ipv4hint: ["192.0.2.1"],
      other: { mandatory: "ipv4hint,alpn" },
    };
    expect(bytesToHex(encodeSvcbRdata(record))).toBe(
      "001003666f6f076578616d706c65036f7267000000000400010004000100090268320568332d313900040004c0000201",
    );
  });

  const refusals: ReadonlyArray<readonly [string, SvcbRecord, RegExp]> = [
    ["a priority above 65535", { priority: 70000, target: "." }, /SvcPriority 70000/],
    ["a port above 65535", { priority: 1, target: ".", port: 65536 }, /port 65536/],
    ["an empty alpn identifier", { priority: 1, target: ".", alpn: [""] }, /1 to 255 octets/],
    ["an empty alpn list", { priority: 1, target: ".", alpn: [] }, /at least one/],
    ["a bad IPv4 hint", { priority: 1, target: ".", ipv4hint: ["192.0.2.300"] }, /not an IPv4 address/],
    ["a bad IPv6 hint", { priority: 1, target: ".", ipv6hint: ["2001:db8:::1"] }, /not an IPv6 address/],
    ["a label of 64 octets", { priority: 1, target: `${"a".repeat(64)}.example` }, /longer than 63/],
    ["an empty label", { priority: 1, target: "a..example" }, /empty label/],
    ["a U-label", { priority: 1, target: "bücher.example" }, /A-labels/],
    ["an unknown key name in other", { priority: 1, target: ".", other: { foo: "" } }, /not a SvcParamKey/],
    [
      "port given in other",
      { priority: 1, target: ".", other: { port: "0035" } },
      /belongs in the record's port field/,
    ],
    ["a generic value that is not hex", { priority: 1, target: ".", other: { key667: "hello" } }, /must be hex/],
    ["ech that is not base64", { priority: 1, target: ".", other: { ech: "not base64!" } }, /base64/],
    ["mandatory naming a missing key", { priority: 1, target: ".", other: { mandatory: "alpn" } }, /does not have/],
  ];
  for (const [title, record, message] of refusals) {
    it(`refuses ${title} with a ProtocolError`, () => {
      expect(() => encodeSvcbRdata(record)).toThrow(ProtocolError);
      expect(() => encodeSvcbRdata(record)).toThrow(message);
    });
  }
});

describe("presentation format (RFC 9460 §2.1, Appendix A; G5)", () => {
  it("reads the RDATA alone, as scenario files write it", () => {
    expect(value(parseSvcbPresentation("1 . alpn=h2 port=8443"))).toEqual({
      priority: 1,
      target: ".",
      alpn: ["h2"],
      port: 8443,
    });
  });

  it("reads a whole zone line with owner, TTL, class and type", () => {
    expect(value(parseSvcbPresentation("_svc.b.example. 300 IN SVCB 2 mx.b.example. port=443 ; comment"))).toEqual({
      priority: 2,
      target: "mx.b.example",
      port: 443,
    });
  });

  it("reads an AliasMode record (RFC 9460 §2.4.2)", () => {
    expect(value(parseSvcbPresentation("0 pool.svc.example."))).toEqual({ priority: 0, target: "pool.svc.example" });
  });

  it("completes a relative target with the origin (RFC 9460 §10.4.3)", () => {
    const derived = vectors.derived_examples[4];
    const record = value(parseSvcbPresentation("2 backup alpn=h2 port=8443", { origin: "svc.example." }));
    expect(bytesToHex(encodeSvcbRdata(record))).toBe(derived?.rdata_hex_derived);
  });

  it("keeps ech as base64 and no-default-alpn as an empty string (RFC 9460 §7.1.1, §9)", () => {
    const record = value(parseSvcbPresentation("1 . alpn=h2 no-default-alpn ech=AEj+DQA="));
    expect(record.other).toEqual({ "no-default-alpn": "", ech: "AEj+DQA=" });
    expect(value(decodeSvcbRdata(encodeSvcbRdata(record)))).toEqual(record);
  });

  it("writes the 10.4 derived examples to their derived hex (RFC 9460 §10.4)", () => {
    for (const example of vectors.derived_examples) {
      const record = value(parseSvcbPresentation(example.normalized_rdata_presentation));
      expect(bytesToHex(encodeSvcbRdata(record))).toBe(example.rdata_hex_derived);
    }
  });

  const refusals: ReadonlyArray<readonly [string, RegExp]> = [
    ["", /no SvcPriority and TargetName/],
    ["1", /no SvcPriority and TargetName/],
    ["x .", /SvcPriority "x"/],
    ["65536 .", /SvcPriority "65536"/],
    ["1 . port=http", /port "http"/],
    ["1 . port=70000", /port "70000"/],
    ["1 . ipv4hint=192.0.2.1,", /ipv4hint/],
    ["1 . ipv6hint=192.0.2.1", /IPv6/],
    ["1 . alpn=h2,,h3", /alpn is not a comma-separated list/],
    ["1 . Port=1", /not a SvcParamKey/],
    ["1 . key65535=x", /not a SvcParamKey/],
    ["1 . key0123=x", /not a SvcParamKey/],
    ['1 . alpn="h2', /quoted string is not closed/],
    ["1 . ( alpn=h2", /parenthesis is not closed/],
    ["1 . alpn=h2 )", /closing parenthesis/],
    ["1 . mandatory=foo", /not a SvcParamKey/],
    ["1 @ port=1", /needs an origin/],
  ];
  for (const [text, message] of refusals) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(messages(parseSvcbPresentation(text))).toMatch(message);
    });
  }

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const parsed = parseSvcbPresentation(text);
        if (parsed.ok) expect(parsed.value.priority).toBeLessThanOrEqual(65535);
      }),
    );
  });

  it("valid records broken one character at a time: never throws, what it accepts formats and parses back to itself, both sides reached", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(validRecord, fc.nat(), fc.nat(), fc.constantFrom(...' =,."\\a1:-'), (record, op, where, char) => {
        const text = mutateText(formatSvcbPresentation(record), op, where, char);
        const parsed = parseSvcbPresentation(text);
        if (parsed.ok) {
          accepted++;
          expect(value(parseSvcbPresentation(formatSvcbPresentation(parsed.value)))).toEqual(parsed.value);
        } else {
          refused++;
        }
      }),
      { numRuns: 400, seed: 9460 },
    );
    expect(accepted / (accepted + refused)).toBeGreaterThanOrEqual(0.1);
    expect(refused / (accepted + refused)).toBeGreaterThanOrEqual(0.2);
  });
});

describe("key names and addresses (RFC 9460 §2.1, §7.3; RFC 5952)", () => {
  it("names registered keys and writes others as keyNNNNN", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 667].map(svcParamKeyName)).toEqual([
      "mandatory",
      "alpn",
      "no-default-alpn",
      "port",
      "ipv4hint",
      "ech",
      "ipv6hint",
      "key7",
      "key667",
    ]);
    expect(svcParamKeyNumber("key667")).toBe(667);
    expect(svcParamKeyNumber("key1")).toBe(1);
  });

  it("formats IPv6 hints in RFC 5952 form", () => {
    expect(formatIpv6(hex("20010db8000000000000000000000001"))).toBe("2001:db8::1");
    expect(formatIpv6(hex("20010db8000000000000000000530001"))).toBe("2001:db8::53:1");
    expect(formatIpv6(hex("20010db80000000100000000000000001".slice(0, 32)))).toBe("2001:db8:0:1::");
    expect(formatIpv6(hex("00000000000000000000ffffc0000201"))).toBe("::ffff:192.0.2.1");
    expect(formatIpv6(hex("20010db8000100000001000100010001"))).toBe("2001:db8:1:0:1:1:1:1");
    expect(formatIpv6(new Uint8Array(16))).toBe("::");
  });

  it("parses and re-formats any IPv6 address to the same bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        expect(bytesToHex(parseIpv6(formatIpv6(bytes)) ?? new Uint8Array())).toBe(bytesToHex(bytes));
      }),
    );
  });
});

describe("round trips over generated valid records (RFC 9460 §2.1, §2.2)", () => {
  it("every generated record encodes, decodes to itself, and re-encodes to the same bytes", () => {
    let runs = 0;
    fc.assert(
      fc.property(validRecord, (record) => {
        const bytes = encodeSvcbRdata(record);
        expect(value(decodeSvcbRdata(bytes))).toEqual(record);
        expect(bytesToHex(encodeSvcbRdata(value(decodeSvcbRdata(bytes))))).toBe(bytesToHex(bytes));
        runs++;
      }),
      { numRuns: 300, seed: 9460 },
    );
    expect(runs).toBe(300);
  });

  it("every generated record formats to presentation text that parses back to it, with the same RDATA", () => {
    let runs = 0;
    fc.assert(
      fc.property(validRecord, (record) => {
        const parsed = value(parseSvcbPresentation(formatSvcbPresentation(record)));
        expect(parsed).toEqual(record);
        expect(bytesToHex(encodeSvcbRdata(parsed))).toBe(bytesToHex(encodeSvcbRdata(record)));
        runs++;
      }),
      { numRuns: 300, seed: 9460 },
    );
    expect(runs).toBe(300);
  });

  it("the generator covers every kind of param", () => {
    const sample = fc.sample(validRecord, { numRuns: 200, seed: 9460 });
    for (const field of ["port", "alpn", "ipv4hint", "ipv6hint"] as const) {
      expect(sample.filter((r) => r[field] !== undefined).length).toBeGreaterThan(40);
    }
    for (const key of ["mandatory", "ech", "no-default-alpn"]) {
      expect(sample.filter((r) => r.other?.[key] !== undefined).length).toBeGreaterThan(20);
    }
    expect(
      sample.filter((r) => r.priority === 0).length + sample.filter((r) => r.target === ".").length,
    ).toBeGreaterThan(0);
  });
});
