import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseContentDigest } from "./digest.ts";
import { parseDsn } from "./dsn.ts";
import { gapById } from "./gaps.ts";
import { parseMailbox } from "./mailbox.ts";
import { parseContentType, parseMultipartBody } from "./multipart.ts";
import { parseKeyRecord, signingDomainOfKeyid } from "./profile.ts";
import {
  parseCapabilities,
  parseDeliveryResult,
  parseEnvelope,
  parseJson,
  parseProblem,
  parseRecipientResult,
} from "./resources.ts";
import type { Parsed } from "./result.ts";
import { ruleById } from "./rules.ts";
import { parseSignature, parseSignatureInput } from "./signature.ts";

// Bad input to every parser yields violations naming the field and the rule;
// no exception escapes. fast-check throws arbitrary values and strings at each.
const runs = { numRuns: 300, seed: 20261121 };

function expectWellFormed(parsed: Parsed<unknown>): void {
  if (parsed.ok) return;
  expect(parsed.violations.length).toBeGreaterThan(0);
  for (const v of parsed.violations) {
    expect(typeof v.path).toBe("string");
    expect(v.path.length).toBeGreaterThan(0);
    expect(v.message.length).toBeGreaterThan(0);
    // Every violation cites a rule of the catalogue or a gap reading.
    expect(ruleById(v.rule) ?? gapById(v.rule), `unknown rule ${v.rule} at ${v.path}`).toBeDefined();
  }
}

const jsonParsers: [string, (json: unknown) => Parsed<unknown>][] = [
  ["parseMailbox", (j) => parseMailbox(j)],
  ["parseEnvelope", (j) => parseEnvelope(j)],
  ["parseCapabilities", (j) => parseCapabilities(j)],
  ["parseDeliveryResult", (j) => parseDeliveryResult(j)],
  ["parseRecipientResult", (j) => parseRecipientResult(j)],
  ["parseProblem", (j) => parseProblem(j, "https://problems.example/svc")],
];

const textParsers: [string, (text: string) => Parsed<unknown>][] = [
  ["parseJson", (t) => parseJson(t)],
  ["parseContentDigest", (t) => parseContentDigest(t)],
  ["parseSignatureInput", (t) => parseSignatureInput(t)],
  ["parseSignature", (t) => parseSignature(t)],
  ["parseContentType", (t) => parseContentType(t)],
  ["parseKeyRecord", (t) => parseKeyRecord(t)],
  ["signingDomainOfKeyid", (t) => signingDomainOfKeyid(t)],
];

// Values shaped like the resources, with wrong parts, find more paths than random JSON alone.
const resourceLike = fc.record(
  {
    from: fc.oneof(fc.constant(null), fc.string(), fc.integer(), fc.constant("a@b.example")),
    to: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constant("x@b.example"), fc.integer())), fc.string()),
    versions: fc.oneof(fc.array(fc.string()), fc.constant(["v1", "v1"]), fc.integer()),
    max_message_size: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.bigInt().map(String)),
    results: fc.array(fc.record({ recipient: fc.string(), status: fc.string(), problem: fc.anything() })),
    type: fc.oneof(fc.webUrl(), fc.string()),
    status: fc.oneof(fc.integer(), fc.string()),
  },
  { requiredKeys: [] },
);

describe("every parser: bad input gives violations with field and rule, never an exception", () => {
  it.each(jsonParsers)("%s on arbitrary JSON values", (_name, parse) => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything(), resourceLike), (value) => {
        expectWellFormed(parse(value));
      }),
      runs,
    );
  });

  it.each(textParsers)("%s on arbitrary strings", (_name, parse) => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.stringMatching(/^[a-z0-9=:;,.\-"() ]*$/)),
        (text) => {
          expectWellFormed(parse(text));
        },
      ),
      runs,
    );
  });

  it("parseMultipartBody on arbitrary bytes and boundaries (POST-7, G9)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.string({ maxLength: 80 }), (body, boundary) => {
        expectWellFormed(parseMultipartBody(body, `multipart/mixed; boundary="${boundary}"`));
      }),
      runs,
    );
  });

  it("parseDsn on arbitrary bytes (EVT-4)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        expectWellFormed(await parseDsn(bytes));
      }),
      { ...runs, numRuns: 100 },
    );
  });
});
