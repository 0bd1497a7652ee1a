import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseContentDigest } from "./digest.ts";
import { parseDsn } from "./dsn.ts";
import { gapById } from "./gaps.ts";
import { parseMailbox } from "./mailbox.ts";
import dsnFixture from "./fixtures/rfc3464.json" with { type: "json" };
import vectors9421 from "./fixtures/rfc9421-vectors.json" with { type: "json" };
import problems9457 from "./fixtures/rfc9457-examples.json" with { type: "json" };
import vectors9530 from "./fixtures/rfc9530-vectors.json" with { type: "json" };
import { buildMultipartBody, parseContentType, parseMultipartBody } from "./multipart.ts";
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

// ---------------------------------------------------------------------------
// Mutation fuzzing: random input stops at a parser's first check (for parseDsn every random input
// did, for parseMultipartBody ~99 % stopped at the boundary parameter). Small breaks of valid
// encodings — the published vectors and bodies built as a sender builds them — reach the later
// checks. Each parser's inputs are sorted by the stage that stopped them (the first violation's
// path, indices dropped) or `accepted`; the tests print the shares and require every stage listed
// to be reached and a minimum share to get past the first check.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One small break of a text: a character changed, deleted or inserted; a line deleted, repeated or swapped; cut short. */
function mutateText(text: string, op: number, where: number, char: string): string {
  const at = where % (text.length + 1);
  const lines = text.split("\r\n");
  const line = where % lines.length;
  switch (op % 7) {
    case 0:
      return text.slice(0, at) + char + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + char + text.slice(at);
    case 3:
      return lines.filter((_, i) => i !== line).join("\r\n");
    case 4:
      return [...lines.slice(0, line + 1), ...lines.slice(line)].join("\r\n");
    case 5:
      return [...lines.slice(0, line), lines[line + 1] ?? "", lines[line] ?? "", ...lines.slice(line + 2)].join("\r\n");
    default:
      return text.slice(0, at);
  }
}

const mutationChars = fc.constantFrom(..." =:;,.\"'()-_@<>\\/aZ09\r\n\t", "\u00e9", "\u0000");

/** `count` mutations of `seeds`, each one to three breaks deep. */
const mutated = (seeds: readonly string[]) =>
  fc
    .tuple(
      fc.constantFrom(...seeds),
      fc.array(fc.tuple(fc.nat(), fc.nat(), mutationChars), { minLength: 1, maxLength: 3 }),
    )
    .map(([seed, ops]) => ops.reduce((text, [op, where, char]) => mutateText(text, op, where, char), seed));

/** The stage an input reached: `accepted`, or the path of the check that stopped it. */
function stage(parsed: Parsed<unknown>, withMessage = false): string {
  if (parsed.ok) return "accepted";
  const first = parsed.violations[0];
  const path = (first?.path ?? "?").replace(/\[\d+\]/g, "[]");
  // Where one path covers several checks, the first words of the message tell them apart.
  const words = (/^[A-Za-z ]*/.exec(first?.message ?? "")?.[0] ?? "").trim().split(" ").slice(0, 3).join(" ");
  return withMessage && path.startsWith("body") ? `${path} (${words})` : path;
}

function shares(stages: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of stages) counts.set(s, (counts.get(s) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => b[1] - a[1]).map(([s, n]) => [s, n / stages.length]));
}

function report(name: string, stages: readonly string[]): Map<string, number> {
  const table = shares(stages);
  const line = [...table].map(([s, share]) => `${s} ${(share * 100).toFixed(1)} %`).join(", ");
  console.info(`${name} (${stages.length} mutated inputs): ${line}`);
  return table;
}

const DSN_EML: string = dsnFixture.eml;
const isExample = (e: unknown): e is { body_as_printed: string } =>
  typeof e === "object" && e !== null && typeof (e as { body_as_printed?: unknown }).body_as_printed === "string";
const SEED_ENVELOPE = { from: "alice@a.example", to: ["bob@b.example", "carol@b.example"] };
const SEED_MESSAGE =
  "From: alice@a.example\r\nTo: bob@b.example\r\nSubject: hi\r\nMessage-ID: <m1@a.example>\r\n\r\nHello\r\n";

describe("mutation fuzzing from valid encodings: every stage reached, and the share reaching each reported", () => {
  it("parseDsn on broken copies of RFC 3464's example DSN (EVT-4)", async () => {
    const stages: string[] = [];
    await fc.assert(
      fc.asyncProperty(mutated([DSN_EML]), async (text) => {
        const parsed = await parseDsn(encoder.encode(text));
        expectWellFormed(parsed);
        stages.push(stage(parsed));
      }),
      { ...runs, numRuns: 400 },
    );
    const table = report("parseDsn", stages);
    expect(table.get("accepted") ?? 0).toBeGreaterThanOrEqual(0.2);
    // Past the header block and its Content-Type: into the parts and the per-recipient fields.
    const past = stages.filter((s) => s !== "dsn" && s !== "dsn.headers.Content-Type").length / stages.length;
    expect(past).toBeGreaterThanOrEqual(0.5);
    for (const reached of [
      "dsn.headers.Content-Type",
      "dsn.body.part[].Content-Type",
      "dsn.delivery-status.per-message.Reporting-MTA",
      "dsn.delivery-status.recipient[].Final-Recipient",
      "dsn.delivery-status.recipient[].Action",
      "dsn.delivery-status.recipient[].Status",
    ]) {
      expect(table.has(reached), reached).toBe(true);
    }
  });

  it("parseMultipartBody on broken copies of request bodies built as a sender builds them (POST-7, G9)", () => {
    const bodies = ["b1", "simple-boundary", "=_Part_0_1234.5678", "a'b(c)d+e_f,g-h.i/j:k=l?m n"].map((boundary) => {
      const built = buildMultipartBody(SEED_ENVELOPE, encoder.encode(SEED_MESSAGE), boundary);
      return { contentType: built.contentType, body: decoder.decode(built.body) };
    });
    const stages: string[] = [];
    const ops = fc.array(fc.tuple(fc.nat(), fc.nat(), mutationChars), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(fc.constantFrom(...bodies), fc.boolean(), ops, ({ body, contentType }, breakHeader, breaks) => {
        // Either the body or its Content-Type broken, never both: each check sees the other side intact.
        const broken = (text: string) => breaks.reduce((t, [op, where, char]) => mutateText(t, op, where, char), text);
        const parsed = breakHeader
          ? parseMultipartBody(encoder.encode(body), broken(contentType))
          : parseMultipartBody(encoder.encode(broken(body)), contentType);
        expectWellFormed(parsed);
        stages.push(stage(parsed, true));
      }),
      { ...runs, numRuns: 600 },
    );
    const table = report("parseMultipartBody", stages);
    expect(table.get("accepted") ?? 0).toBeGreaterThanOrEqual(0.1);
    // Past the Content-Type: the body's checks (delimiters, part headers, part types) see every body mutation.
    const past = stages.filter((s) => !s.startsWith("headers.Content-Type")).length / stages.length;
    expect(past).toBeGreaterThanOrEqual(0.4);
    for (const reached of [
      "body (the delimiter line)",
      "body (the body has)",
      "body.part[] (not a header)",
      "body.part[].Content-Type (part)",
    ]) {
      expect(table.has(reached), reached).toBe(true);
    }
  });

  const signatureVectors = vectors9421.examples;
  const textSeeds: [string, (text: string) => Parsed<unknown>, readonly string[]][] = [
    [
      "parseJson",
      (t) => parseJson(t),
      Object.values(problems9457).flatMap((e) => (isExample(e) ? [e.body_as_printed] : [])),
    ],
    ["parseContentDigest", (t) => parseContentDigest(t), vectors9530.field_cases.map((c) => c.value_as_printed)],
    ["parseSignatureInput", (t) => parseSignatureInput(t), signatureVectors.map((v) => v.signature_input_header_value)],
    ["parseSignature", (t) => parseSignature(t), signatureVectors.map((v) => v.signature_header_value)],
    [
      "parseContentType",
      (t) => parseContentType(t),
      ['multipart/mixed; boundary="b1"', "multipart/mixed;boundary=simple"],
    ],
    ["parseKeyRecord", (t) => parseKeyRecord(t), [`v=svc1; k=ed25519; p=${"A".repeat(43)}=`]],
    ["signingDomainOfKeyid", (t) => signingDomainOfKeyid(t), ["s1._svckey.a.example", "2026._svckey.mail.example.org"]],
  ];

  it.each(textSeeds)("%s on broken copies of published values", (name, parse, seeds) => {
    // Only the published values this parser accepts: a published counter-example is no seed.
    const valid = seeds.filter((seed) => parse(seed).ok);
    expect(valid.length).toBeGreaterThan(0);
    const stages: string[] = [];
    fc.assert(
      fc.property(mutated(valid), (text) => {
        const parsed = parse(text);
        expectWellFormed(parsed);
        stages.push(stage(parsed));
      }),
      runs,
    );
    const table = report(name, stages);
    expect(table.get("accepted") ?? 0).toBeGreaterThanOrEqual(0.02);
    expect(1 - (table.get("accepted") ?? 0)).toBeGreaterThanOrEqual(0.2);
  });
});
