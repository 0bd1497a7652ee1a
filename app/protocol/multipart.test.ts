import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bytesEqual } from "./base64.ts";
import {
  MAX_BOUNDARY_LENGTH,
  buildMultipartBody,
  chooseBoundary,
  concatBytes,
  indexOfBytes,
  isValidBoundary,
  multipartBytes,
  parseContentType,
  parseMultipartBody,
  splitMultipart,
} from "./multipart.ts";
import { ProtocolError } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string): Uint8Array => enc.encode(s);
const CT = "multipart/mixed; boundary=b0undary";
const ENVELOPE = '{"from":"a@sender.example","to":["b@receiver.example"]}';

/** A body written by hand, for the shapes the builder never makes. */
function body(...lines: string[]): Uint8Array {
  return bytes(lines.join("\r\n"));
}

function violations<T>(parsed: Parsed<T>): readonly Violation[] {
  if (parsed.ok) throw new Error(`expected violations, got ${JSON.stringify(parsed.value)}`);
  return parsed.violations;
}

function value<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(`expected a value, got ${JSON.stringify(parsed.violations)}`);
  return parsed.value;
}

function thrown(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error("expected a ProtocolError");
}

/** Deterministic bytes (xorshift32), as tests in app/ may not call Math.random. */
function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const allByteValues = Uint8Array.from({ length: 256 }, (_, i) => i);
const trickyMessage = concatBytes([
  bytes("From: a@sender.example\r\nTo: b@receiver.example\r\nSubject: bytes\r\n\r\n"),
  allByteValues,
  bytes("\r\nCRLF line\r\nlone LF\nlone CR\rmixed\n\r"),
  bytes("\r\n--other-boundaryX\r\n--other-boundary--\r\n--mailscope\r\n-- \r\n--\r\n"),
  bytes("\r\n\r\n"),
]);

describe("buildMultipartBody", () => {
  it("POST-6, POST-7, POST-8, POST-9, G9: lays out two parts with CRLF, Content-Type only, close delimiter and final CRLF", () => {
    const { body: built, contentType } = buildMultipartBody(ENVELOPE, bytes("Subject: hi\r\n\r\nbody"), "b0undary");
    expect(contentType).toBe("multipart/mixed; boundary=b0undary");
    expect(dec.decode(built)).toBe(
      "--b0undary\r\nContent-Type: application/json\r\n\r\n" +
        ENVELOPE +
        "\r\n--b0undary\r\nContent-Type: message/rfc822\r\n\r\n" +
        "Subject: hi\r\n\r\nbody" +
        "\r\n--b0undary--\r\n",
    );
  });

  it("POST-8: serializes a non-string envelope with JSON.stringify and takes a string as the JSON text", () => {
    const envelope = { from: null, to: ["x@y.example"] };
    const parsed = value(
      parseMultipartBody(buildMultipartBody(envelope, bytes("m"), "b").body, "multipart/mixed; boundary=b"),
    );
    expect(JSON.parse(dec.decode(parsed.envelopeJson))).toEqual(envelope);
    const raw = value(
      parseMultipartBody(buildMultipartBody("{not json", bytes("m"), "b").body, "multipart/mixed; boundary=b"),
    );
    expect(dec.decode(raw.envelopeJson)).toBe("{not json");
  });

  it("POST-6, G9: quotes a boundary that is not a token in the Content-Type", () => {
    const { contentType, body: built } = buildMultipartBody(ENVELOPE, bytes("m"), "a b:c=d?");
    expect(contentType).toBe('multipart/mixed; boundary="a b:c=d?"');
    expect(value(parseMultipartBody(built, contentType)).message).toEqual(bytes("m"));
  });

  it("POST-6, G9: refuses a boundary that is not RFC 2046 (empty, 71 characters, bad character, trailing space)", () => {
    for (const bad of ["", "x".repeat(MAX_BOUNDARY_LENGTH + 1), "a;b", "ends-in-space ", "ümlaut"]) {
      expect(() => buildMultipartBody(ENVELOPE, bytes("m"), bad)).toThrow(ProtocolError);
    }
    expect(() => buildMultipartBody(ENVELOPE, bytes("m"), "x".repeat(MAX_BOUNDARY_LENGTH))).not.toThrow();
  });

  it("POST-7, G9: refuses a boundary that the message or the envelope contains as --boundary", () => {
    expect(() => buildMultipartBody(ENVELOPE, bytes("text --b0undary text"), "b0undary")).toThrow(ProtocolError);
    expect(() => buildMultipartBody('{"x":"--b0undary"}', bytes("m"), "b0undary")).toThrow(ProtocolError);
    const error = thrown(() => buildMultipartBody(ENVELOPE, bytes("\r\n--b0undaryX"), "b0undary"));
    expect(error.violations).toEqual([expect.objectContaining({ path: "message", rule: "POST-7" })]);
  });
});

describe("multipartBytes", () => {
  it("POST-6, G9: writes any parts in the builder's framing, the same bytes whether the framing is ASCII or not", () => {
    const message = bytes("Subject: h\u00e9\r\n\r\nbody \u2603");
    for (const type of ["message/rfc822", "text/plain; name=\u00e9t\u00e9"]) {
      const parts = [
        { contentType: "application/json", bytes: bytes(ENVELOPE) },
        { contentType: type, bytes: message },
        { contentType: "text/plain", bytes: new Uint8Array(0) },
      ];
      const expected =
        `--b0undary\r\nContent-Type: application/json\r\n\r\n${ENVELOPE}` +
        `\r\n--b0undary\r\nContent-Type: ${type}\r\n\r\n${dec.decode(message)}` +
        "\r\n--b0undary\r\nContent-Type: text/plain\r\n\r\n\r\n--b0undary--\r\n";
      const built = multipartBytes(parts, "b0undary");
      expect(built.body).toEqual(bytes(expected));
      expect(built.contentType).toBe(CT);
    }
    expect(multipartBytes([], "b0undary").body).toEqual(bytes("--b0undary--\r\n"));
  });

  it("POST-8, G9: a part given as text is its UTF-8, and an envelope of any text is framed and checked alike", () => {
    for (const text of [ENVELOPE, '{"from":"\u00e9@sender.example","to":["b@receiver.example"]}']) {
      const asText = multipartBytes([{ contentType: "application/json", bytes: text }], "b0undary").body;
      expect(asText).toEqual(
        multipartBytes([{ contentType: "application/json", bytes: bytes(text) }], "b0undary").body,
      );
      const built = buildMultipartBody(text, bytes("Subject: hi\r\n\r\nbody"), "b0undary");
      const parsed = parseMultipartBody(built.body, built.contentType);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
      expect(dec.decode(parsed.value.envelopeJson)).toBe(text);
      // The boundary inside the envelope, ASCII or not, at its very end too: found where the envelope is written.
      for (const inside of [`${text}--b0undary`, `"\u00e9--b0undary"`]) {
        expect(() => buildMultipartBody(inside, bytes("x"), "b0undary")).toThrow(/the envelope contains --b0undary/);
      }
      expect(() => buildMultipartBody(text, bytes("x"), "b0undary")).not.toThrow();
    }
  });
});

describe("chooseBoundary", () => {
  it("G9: makes a valid boundary from the given random bytes, the same bytes giving the same boundary", () => {
    const random = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    const boundary = chooseBoundary(random, trickyMessage);
    expect(boundary).toBe("mailscope-00112233445566778899aabbccddeeff");
    expect(isValidBoundary(boundary)).toBe(true);
    expect(chooseBoundary(random, trickyMessage)).toBe(boundary);
    expect(chooseBoundary(pseudoRandomBytes(64, 7), trickyMessage).length).toBeLessThanOrEqual(MAX_BOUNDARY_LENGTH);
  });

  it("G9, POST-7: picks another boundary when the message contains --candidate", () => {
    const random = Uint8Array.of(0xab, 0xcd);
    const first = chooseBoundary(random, bytes("plain"));
    const message = bytes(`line\r\n--${first}\r\nand --${first}.1 too`);
    const chosen = chooseBoundary(random, message);
    expect(chosen).toBe(`${first}.2`);
    expect(indexOfBytes(message, bytes(`--${chosen}`), 0)).toBe(-1);
  });
});

describe("parseContentType", () => {
  it("POST-6, G9: reads multipart/mixed with its boundary, names and type case-insensitive, parameters kept", () => {
    expect(value(parseContentType("Multipart/Mixed; BOUNDARY=abc ; charset=x"))).toEqual({
      type: "multipart/mixed",
      boundary: "abc",
      params: { boundary: "abc", charset: "x" },
    });
  });

  it("POST-6, G9: the sender's own spelling reads as any other spelling of the same type and boundary", () => {
    for (const boundary of ["mailscope-0f3c9a", "a'b+c_d.e-f", "x{|}~`^$%&#!*", "b".repeat(71)]) {
      const plain = parseContentType(`multipart/mixed; boundary=${boundary}`);
      expect(plain).toEqual(parseContentType(`multipart/mixed;  boundary=${boundary}`));
      expect(plain).toEqual(parseContentType(`multipart/mixed; boundary="${boundary}"`));
    }
    expect(value(parseContentType("multipart/mixed; boundary=abc")).params).toEqual({ boundary: "abc" });
    expect(parseContentType("multipart/mixed; boundary=abc\n").ok).toBe(false);
  });

  it("POST-6: parameters named like Object.prototype's members are plain parameters, and a repeated one is still caught", () => {
    const parsed = value(parseContentType("multipart/mixed; __proto__=x; constructor=y; boundary=abc"));
    expect(Object.keys(parsed.params)).toEqual(["__proto__", "constructor", "boundary"]);
    expect(parsed.params["__proto__"]).toBe("x");
    expect(Object.getPrototypeOf(parsed.params)).toBe(Object.prototype);
    expect(parseContentType("multipart/mixed; __proto__=x; __PROTO__=y; boundary=abc").ok).toBe(false);
  });

  it("POST-6, G9: unquotes a quoted boundary parameter (spaces and specials allowed inside quotes)", () => {
    expect(value(parseContentType('multipart/mixed; boundary="simple boundary:=?"')).boundary).toBe(
      "simple boundary:=?",
    );
    expect(value(parseContentType('multipart/mixed;boundary="a\\:b"')).boundary).toBe("a:b");
  });

  it("POST-6: a missing header, another type or a missing boundary is a violation at headers.Content-Type", () => {
    for (const header of [
      null,
      "text/plain",
      "multipart/form-data; boundary=x",
      "multipart/mixed",
      "multipart/mixed; charset=utf-8",
    ]) {
      expect(violations(parseContentType(header))).toEqual([
        expect.objectContaining({ path: "headers.Content-Type", rule: "POST-6" }),
      ]);
    }
  });

  it("POST-6, G9: a boundary of 71 characters, one ending in space, or with a character outside bchars is a violation", () => {
    expect(value(parseContentType(`multipart/mixed; boundary=${"b".repeat(70)}`)).boundary).toHaveLength(70);
    for (const header of [
      `multipart/mixed; boundary=${"b".repeat(71)}`,
      'multipart/mixed; boundary="ends "',
      'multipart/mixed; boundary="semi;colon"',
      'multipart/mixed; boundary=""',
    ]) {
      expect(violations(parseContentType(header))[0]).toMatchObject({ path: "headers.Content-Type", rule: "POST-6" });
    }
  });

  it("POST-6: malformed media types are violations, never exceptions", () => {
    for (const header of [
      "",
      "multipart",
      "multipart/mixed; boundary",
      'multipart/mixed; boundary="open',
      "multipart/mixed; b=1; b=2",
      "multipart/mixed (comment)",
    ]) {
      expect(parseContentType(header).ok).toBe(false);
    }
  });
});

describe("parseMultipartBody", () => {
  it("POST-9, POST-10, G9: gives part 2 back byte for byte (all 256 byte values, CRLF, lone CR and LF, lines like other delimiters)", () => {
    const boundary = chooseBoundary(pseudoRandomBytes(16, 42), trickyMessage);
    const built = buildMultipartBody(ENVELOPE, trickyMessage, boundary);
    const parsed = value(parseMultipartBody(built.body, built.contentType));
    expect(bytesEqual(parsed.message, trickyMessage)).toBe(true);
    expect(dec.decode(parsed.envelopeJson)).toBe(ENVELOPE);
    expect(parsed.preamble).toBeUndefined();
    expect(parsed.epilogue).toEqual(new Uint8Array(0));
  });

  it("POST-9, G9: near-miss lines inside part 2 stay content: shorter prefix, mid-line, after a bare LF, indented", () => {
    const content = "x--b0undary\r\n--b0undar\r\nbare\n--b0undary\r\n --b0undary\r\n-b0undary--";
    const input = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      content,
      "--b0undary--",
    );
    expect(dec.decode(value(parseMultipartBody(input, CT)).message)).toBe(content);
  });

  it("POST-7, G9: a line --boundaryX inside part 2 is a malformed delimiter (RFC 2046 prefix rule), not content", () => {
    const input = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "a",
      "--b0undaryX",
      "b",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body", rule: "POST-7" }),
    ]);
  });

  it("POST-7, G9: tolerates a preamble and an epilogue and returns them", () => {
    const input = body(
      "This is a preamble.",
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "msg",
      "--b0undary--",
      "epilogue",
      "",
    );
    const parsed = value(parseMultipartBody(input, CT));
    expect(dec.decode(parsed.preamble)).toBe("This is a preamble.");
    expect(dec.decode(parsed.epilogue)).toBe("epilogue\r\n");
    expect(dec.decode(parsed.message)).toBe("msg");
    // An empty preamble: the body starts with CRLF before the first delimiter.
    const empty = value(
      parseMultipartBody(
        bytes(
          "\r\n--b0undary\r\nContent-Type: application/json\r\n\r\n{}\r\n--b0undary\r\nContent-Type: message/rfc822\r\n\r\nm\r\n--b0undary--",
        ),
        CT,
      ),
    );
    expect(empty.preamble).toEqual(new Uint8Array(0));
    expect(empty.epilogue).toBeUndefined();
  });

  it("POST-7, G9: accepts transport padding (spaces, tabs) after delimiters", () => {
    const input = body(
      "--b0undary \t",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary  ",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary-- ",
    );
    expect(dec.decode(value(parseMultipartBody(input, CT)).message)).toBe("m");
  });

  it("POST-8, POST-9, G9: types match case-insensitively with parameters; other part headers are ignored", () => {
    const input = body(
      "--b0undary",
      "content-type: Application/JSON; charset=utf-8",
      "Content-Disposition: inline",
      "",
      "{}",
      "--b0undary",
      "X-Other: ignored",
      "CONTENT-TYPE:   Message/RFC822 ;",
      "Content-Transfer-Encoding: 8bit",
      "",
      "m",
      "--b0undary--",
    );
    expect(dec.decode(value(parseMultipartBody(input, CT)).message)).toBe("m");
  });

  it("POST-6, G9: a folded Content-Type in a part header is unfolded", () => {
    const input = body(
      "--b0undary",
      "Content-Type:",
      " application/json;",
      "\tcharset=utf-8",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary--",
    );
    expect(value(parseMultipartBody(input, CT)).envelopeJson).toEqual(bytes("{}"));
  });

  it("POST-7: one part is invalid_request's shape, a violation at body", () => {
    const input = body("--b0undary", "Content-Type: application/json", "", "{}", "--b0undary--");
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body", rule: "POST-7", message: expect.stringContaining("1 part") }),
    ]);
  });

  it("POST-7: three parts are a violation at body", () => {
    const input = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary",
      "Content-Type: text/plain",
      "",
      "x",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body", rule: "POST-7", message: expect.stringContaining("3 parts") }),
    ]);
  });

  it("POST-8, POST-9: swapped order is a violation on each part's Content-Type", () => {
    const input = body(
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body.part[0].Content-Type", rule: "POST-8" }),
      expect.objectContaining({ path: "body.part[1].Content-Type", rule: "POST-9" }),
    ]);
  });

  it("POST-8, POST-9: wrong content types are violations", () => {
    const input = body(
      "--b0undary",
      "Content-Type: text/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/global",
      "",
      "m",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(input, CT)).map((v) => v.rule)).toEqual(["POST-8", "POST-9"]);
  });

  it("POST-8, POST-9, G9: a part without Content-Type (or with two) is a violation", () => {
    const noHeaders = body("--b0undary", "", "{}", "--b0undary", "X-Other: 1", "", "m", "--b0undary--");
    expect(violations(parseMultipartBody(noHeaders, CT))).toEqual([
      expect.objectContaining({ path: "body.part[0].Content-Type", rule: "POST-8" }),
      expect.objectContaining({ path: "body.part[1].Content-Type", rule: "POST-9" }),
    ]);
    const twice = body(
      "--b0undary",
      "Content-Type: application/json",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(twice, CT))).toEqual([
      expect.objectContaining({ path: "body.part[0].Content-Type", rule: "POST-8" }),
    ]);
  });

  it("POST-9: a transfer encoding on part 2 other than 7bit, 8bit or binary is a violation", () => {
    const input = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "Content-Transfer-Encoding: base64",
      "",
      "bQ==",
      "--b0undary--",
    );
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body.part[1].Content-Transfer-Encoding", rule: "POST-9" }),
    ]);
  });

  it("POST-7, G9: a missing close delimiter is a violation", () => {
    const input = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
    );
    expect(violations(parseMultipartBody(input, CT))).toEqual([
      expect.objectContaining({ path: "body", rule: "POST-7", message: expect.stringContaining("close delimiter") }),
    ]);
    const noDelimiterAtAll = bytes("just bytes");
    expect(violations(parseMultipartBody(noDelimiterAtAll, CT))[0]).toMatchObject({ path: "body", rule: "POST-7" });
  });

  it("POST-7, G9: bare LF line breaks are a violation that says so", () => {
    const lf = bytes(
      "--b0undary\nContent-Type: application/json\n\n{}\n--b0undary\nContent-Type: message/rfc822\n\nm\n--b0undary--\n",
    );
    expect(violations(parseMultipartBody(lf, CT))).toEqual([
      expect.objectContaining({ path: "body", rule: "POST-7", message: expect.stringContaining("LF") }),
    ]);
    const lfAfterPreamble = bytes("preamble\n--b0undary\nContent-Type: application/json\n\n{}\n--b0undary--\n");
    expect(violations(parseMultipartBody(lfAfterPreamble, CT))[0]?.message).toContain("LF");
    const lfInPartHeaders = bytes(
      "--b0undary\r\nContent-Type: application/json\nX: y\r\n\r\n{}\r\n--b0undary\r\nContent-Type: message/rfc822\r\n\r\nm\r\n--b0undary--",
    );
    expect(violations(parseMultipartBody(lfInPartHeaders, CT))).toEqual([
      expect.objectContaining({ path: "body.part[0]", rule: "POST-7" }),
    ]);
  });

  it("POST-7: a close delimiter first, or junk after the close delimiter, is a violation", () => {
    expect(violations(parseMultipartBody(bytes("--b0undary--\r\n"), CT))[0]).toMatchObject({
      path: "body",
      rule: "POST-7",
    });
    const junk = body(
      "--b0undary",
      "Content-Type: application/json",
      "",
      "{}",
      "--b0undary",
      "Content-Type: message/rfc822",
      "",
      "m",
      "--b0undary--junk",
    );
    expect(violations(parseMultipartBody(junk, CT))[0]).toMatchObject({ path: "body", rule: "POST-7" });
  });

  it("POST-6: a bad Content-Type stops before the body is read", () => {
    expect(violations(parseMultipartBody(bytes(""), "multipart/mixed; boundary=" + "x".repeat(71)))).toEqual([
      expect.objectContaining({ path: "headers.Content-Type", rule: "POST-6" }),
    ]);
  });

  it("POST-9, LIM-1, G9: a 26 MiB message part comes back byte for byte, in linear time", () => {
    const size = 26 * 1024 * 1024;
    const message = pseudoRandomBytes(size, 2024);
    const boundary = chooseBoundary(pseudoRandomBytes(16, 9), message);
    const built = buildMultipartBody(ENVELOPE, message, boundary);
    const parsed = value(parseMultipartBody(built.body, built.contentType));
    expect(parsed.message.length).toBe(size);
    expect(bytesEqual(parsed.message, message)).toBe(true);
  });

  it("POST-7, POST-9, G9 (property): build then parse gives back the exact message and envelope for arbitrary bytes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2048 }),
        fc.uint8Array({ minLength: 1, maxLength: 32 }),
        fc.jsonValue(),
        (message, random, envelope) => {
          const boundary = chooseBoundary(random, message);
          const built = buildMultipartBody(envelope, message, boundary);
          const parsed = value(parseMultipartBody(built.body, built.contentType));
          expect(bytesEqual(parsed.message, message)).toBe(true);
          // A string envelope is taken as the JSON text itself.
          expect(dec.decode(parsed.envelopeJson)).toBe(
            typeof envelope === "string" ? envelope : JSON.stringify(envelope),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("POST-7, G9 (property): the parser never throws on arbitrary bytes or Content-Type values", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.string({ maxLength: 80 }), (input, contentType) => {
        expect(typeof parseMultipartBody(input, CT).ok).toBe("boolean");
        expect(typeof parseMultipartBody(input, contentType).ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
    // Bodies near the valid shape reach deeper than random bytes do.
    const valid = buildMultipartBody(ENVELOPE, trickyMessage, "b0undary").body;
    fc.assert(
      fc.property(
        fc.nat({ max: valid.length }),
        fc.nat({ max: valid.length }),
        fc.uint8Array({ maxLength: 4 }),
        (from, to, insert) => {
          const mutated = concatBytes([
            valid.subarray(0, Math.min(from, to)),
            insert,
            valid.subarray(Math.max(from, to)),
          ]);
          expect(typeof parseMultipartBody(mutated, CT).ok).toBe("boolean");
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("splitMultipart", () => {
  it("G9: splits any number of parts with their headers; a part may have no header lines and no body", () => {
    const input = body("--x", "A: 1", " continued", "", "one", "--x", "", "two", "--x", "B: 2", "--x--");
    const split = value(splitMultipart(input, "x", "body", "POST-7"));
    expect(split.parts.map((p) => p.headers)).toEqual([
      [{ name: "A", value: "1 continued" }],
      [],
      [{ name: "B", value: "2" }],
    ]);
    expect(split.parts.map((p) => dec.decode(p.content))).toEqual(["one", "two", ""]);
  });
});
