import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_RECIPIENTS,
  matchResults,
  parseCapabilities,
  parseDeliveryResult,
  parseEnvelope,
} from "./resources.ts";
import type { EnvelopeOptions } from "./resources.ts";
import { parseHeaderBlock, parseMediaType } from "./multipart.ts";
import { parseDeliveryStatus } from "./dsn.ts";
import { createSignatureBase } from "./signature.ts";

// parseEnvelope compared every recipient with every other before it
// looked at max_recipients, so one envelope of 100,000 recipients held a
// receiver for 103 s. The work is counted here in steps (WorkMeter), not
// timed: a step is a constant amount of work or one character read.

const runs = { numRuns: 200, seed: 20261125 };

/** The steps parseEnvelope takes on `json`, and its answer. */
function measure(json: unknown, options: EnvelopeOptions = {}) {
  let steps = 0;
  const parsed = parseEnvelope(json, {
    ...options,
    work: (n) => {
      steps += n;
    },
  });
  return { steps, parsed };
}

/** The bytes of the envelope as JSON text, what a receiver is handed. */
const bytesOf = (json: unknown): number => new TextEncoder().encode(JSON.stringify(json)).length;

const rules = (parsed: ReturnType<typeof parseEnvelope>): string[] =>
  parsed.ok ? [] : parsed.violations.map((v) => `${v.path} ${v.rule}`);

/** Recipients as an attacker or a sloppy sender writes them: repeats, other domains, broken ones, not strings. */
const recipient = fc.oneof(
  fc.constantFrom("a@b.example", "a@B.EXAMPLE", "A@b.example", "c@other.example", '"a b"@b.example', "no-at-sign", ""),
  fc.stringMatching(/^[a-z0-9.]{1,12}@b\.example$/),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.constant(null),
  fc.constant({}),
);

describe("parseEnvelope: work bounded by the input", () => {
  it("ENV-8 first: a `to` longer than max_recipients is refused on its length alone, no item read", () => {
    const many = Array.from({ length: 100_000 }, () => "same@b.example");
    const { steps, parsed } = measure({ from: "alice@a.example", to: many });
    expect(rules(parsed)).toEqual(["$.to ENV-8"]);
    expect(parsed.ok ? "" : parsed.violations[0]?.message).toBe(
      '"to" has 100000 recipients; this receiver takes at most 100',
    );
    // `from` is read (16 characters), nothing of `to` but its length.
    expect(steps).toBeLessThanOrEqual(20);
  });

  it("ENV-8: broken and repeated items of a `to` that is too long are not reported; `from` still is", () => {
    const many = [...Array.from({ length: 150 }, () => "x@b.example"), 7, "bad"];
    expect(rules(parseEnvelope({ from: 7, to: many }))).toEqual(["$.from ENV-1", "$.to ENV-8"]);
    expect(rules(parseEnvelope({ from: "carol@other.example", to: many }, { signingDomain: "a.example" }))).toEqual([
      "$.from ENV-2",
      "$.to ENV-8",
    ]);
  });

  it("100,000 recipients too many take no more steps than 100 valid ones", () => {
    const to = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@b.example`);
    const small = measure({ from: "alice@a.example", to: to(100) });
    const huge = measure({ from: "alice@a.example", to: to(100_000) });
    expect(small.parsed.ok).toBe(true);
    expect(rules(huge.parsed)).toEqual(["$.to ENV-8"]);
    expect(huge.steps / small.steps).toBeLessThanOrEqual(1);
  });

  it("100,000 different recipients and a repeat, allowed by max_recipients: linear, the repeat found", () => {
    // Each item was compared with those before it: minutes here. A map of addresses takes one lookup per item.
    const to = [...Array.from({ length: 100_000 }, (_, i) => `user${i}@b.example`), "user0@B.EXAMPLE"];
    const json = { from: null, to };
    const { steps, parsed } = measure(json, { maxRecipients: 200_000 });
    expect(rules(parsed)).toEqual(["$.to[100000] ENV-6"]);
    expect(parsed.ok ? undefined : parsed.violations[0]?.message).toBe(
      'user0@b.example repeats item 0 of "to"; recipients must be unique',
    );
    expect(steps / bytesOf(json)).toBeLessThanOrEqual(2);
  });

  it("property: at most 2 steps per byte of JSON text, whatever the items and the limit", () => {
    fc.assert(
      fc.property(
        fc.array(recipient, { maxLength: 300 }),
        fc.integer({ min: DEFAULT_MAX_RECIPIENTS, max: 400 }),
        (to, maxRecipients) => {
          const json = { from: "alice@a.example", to };
          const { steps } = measure(json, { maxRecipients, signingDomain: "a.example" });
          expect(steps).toBeLessThanOrEqual(2 * bytesOf(json));
        },
      ),
      runs,
    );
  });

  it("property: twice the recipients take at most twice the steps", () => {
    fc.assert(
      fc.property(fc.array(recipient, { minLength: 1, maxLength: 200 }), (to) => {
        const options = { maxRecipients: 1000 };
        const once = measure({ from: null, to }, options).steps;
        const twice = measure({ from: null, to: [...to, ...to] }, options).steps;
        expect(twice).toBeLessThanOrEqual(2 * once);
      }),
      runs,
    );
  });

  it("property: the answer does not depend on the meter", () => {
    fc.assert(
      fc.property(fc.array(recipient, { maxLength: 120 }), (to) => {
        const json = { from: null, to };
        expect(measure(json).parsed).toEqual(parseEnvelope(json));
      }),
      runs,
    );
  });
});

describe("the other checks across items are linear too", () => {
  // Each of these compared every item with every other: minutes for 100,000 items, tens of seconds for 30,000.
  it("CAP-2, PRB-6: unique versions are checked in a map; a repeat still names the item it repeats", () => {
    const n = 100_000;
    const versions = Array.from({ length: n }, (_, i) => `v${i + 1}`);
    expect(parseCapabilities({ max_message_size: 26214400, versions }).ok).toBe(true);
    const repeated = parseCapabilities({ max_message_size: 26214400, versions: [...versions, "v7"] });
    expect(repeated.ok ? [] : repeated.violations.map((v) => `${v.path} ${v.rule} ${v.message}`)).toEqual([
      `$.versions[${n}] CAP-2 "v7" repeats item 6; items must be unique`,
    ]);
  });

  it("DLR-2, DLR-3, G25: 30,000 entries against 30,000 recipients, matched by address", () => {
    const n = 30_000;
    const to = Array.from({ length: n }, (_, i) => `user${i}@b.example`);
    const envelope = parseEnvelope({ from: null, to }, { maxRecipients: n });
    if (!envelope.ok) throw new Error("the envelope should parse");
    // In reverse order, the last one missing and one stranger: every entry is out of place.
    const entries = to
      .slice(1)
      .reverse()
      .map((recipient) => ({ recipient, status: "accepted" }));
    entries.push({ recipient: "stranger@b.example", status: "accepted" });
    const parsed = parseDeliveryResult({ results: entries }, envelope.value);
    if (!parsed.ok) throw new Error("the result should parse");
    const notes = parsed.value.notes.map((v) => v.rule);
    expect(notes.filter((r) => r === "DLR-3")).toHaveLength(n - 1);
    expect(notes.filter((r) => r === "DLR-2")).toHaveLength(2);
    const { matched, ignored } = matchResults(envelope.value, parsed.value);
    expect(matched.filter((m) => m.result === undefined).map((m) => m.recipient.address)).toEqual(["user0@b.example"]);
    expect(matched[1]?.result?.recipient.address).toBe("user1@b.example");
    expect(ignored.map((r) => r.recipient.address)).toEqual(["stranger@b.example"]);
  });
});

describe("media types with many parameters", () => {
  const withParams = (names: readonly string[]): string =>
    `application/json; ${names.map((n, i) => `${n}=${i}`).join("; ")}`;

  it("POST-6, POST-8: 100,000 parameters are read in linear time; a repeated name is still refused", () => {
    // A part's Content-Type is in the body, where no header limit applies; each name was compared with those before.
    const names = Array.from({ length: 100_000 }, (_, i) => `p${i}`);
    const parsed = parseMediaType(withParams(names), "body.part[0].Content-Type", "POST-8");
    expect(parsed.ok ? Object.keys(parsed.value.params).length : 0).toBe(100_000);
    const repeated = parseMediaType(withParams([...names, "p5"]), "body.part[0].Content-Type", "POST-8");
    expect(repeated.ok ? "" : repeated.violations[0]?.message).toMatch(/^parameter p5 appears twice in /);
  });

  it("POST-6: a repeated parameter is refused, among few parameters and among many", () => {
    for (const count of [2, 7, 8, 9, 20]) {
      const names = Array.from({ length: count }, (_, i) => `p${i}`);
      expect(parseMediaType(withParams(names), "h", "POST-6").ok).toBe(true);
      for (const repeat of [names[0], names[count - 1]]) {
        const parsed = parseMediaType(withParams([...names, repeat ?? ""]), "h", "POST-6");
        expect(parsed.ok ? "" : parsed.violations[0]?.message).toMatch(
          new RegExp(`^parameter ${repeat} appears twice`),
        );
      }
    }
  });
});

describe("signature bases over many components", () => {
  // Before the signature verifies, each covered component looked through the whole query, or every header
  // field, again: about a second for 300 `@query-param`s over 2,000 parameters, within serve's 16 KiB of headers.
  const n = 5_000;
  const query = Array.from({ length: n }, (_, i) => `a${i}=v${i}`).join("&");
  const url = `https://mx.b.example/v1/messages?${query}&dup=1&dup=2`;

  it("@query-param: thousands of them over thousands of parameters, each found by name", () => {
    const components = Array.from({ length: n }, (_, i) => ({ name: "@query-param", params: { name: `a${i}` } }));
    const base = createSignatureBase({ method: "POST", url, headers: [] }, components, { created: 1 });
    if (!base.ok) throw new Error(base.violations[0]?.message);
    const lines = base.value.base.split("\n");
    expect(lines).toHaveLength(n + 1);
    expect(lines[n - 1]).toBe(`"@query-param";name="a${n - 1}": v${n - 1}`);
  });

  it("@query-param: a repeated parameter is refused, a missing one is missing, as before", () => {
    const view = { method: "POST", url, headers: [] };
    const repeated = createSignatureBase(view, [{ name: "@query-param", params: { name: "dup" } }], {});
    expect(repeated.ok ? "" : repeated.violations[0]?.message).toMatch(/occurs more than once/);
    const missing = createSignatureBase(view, [{ name: "@query-param", params: { name: "nope" } }], {});
    expect(missing.ok ? "" : missing.violations[0]?.message).toMatch(/has no parameter named "nope"/);
  });

  it("header fields: thousands of components over thousands of fields, each found by name, any case", () => {
    const headers = Array.from({ length: n }, (_, i): [string, string] => [`X-H${i}`, `v${i}`]);
    headers.push(["x-h7", "again"]);
    const components = Array.from({ length: n }, (_, i) => `x-h${i}`);
    const base = createSignatureBase({ method: "POST", url, headers }, components, {});
    if (!base.ok) throw new Error(base.violations[0]?.message);
    const lines = base.value.base.split("\n");
    expect(lines[7]).toBe(`"x-h7": v7, again`);
    expect(lines[n - 1]).toBe(`"x-h${n - 1}": v${n - 1}`);
  });
});

describe("parsers with a violation per line never throw", () => {
  it("G9: a header block of 300,000 broken lines gives 300,000 violations", () => {
    const lines = Array.from({ length: 300_000 }, () => "not a header").join("\r\n");
    const parsed = parseHeaderBlock(new TextEncoder().encode(lines), "body.part[0]", "POST-7");
    expect(parsed.ok ? 0 : parsed.violations.length).toBe(300_000);
  });
});

describe("long lists of violations are returned, not spread", () => {
  it("EVT-4: a delivery-status part of 200,000 broken lines answers with 200,000 violations", () => {
    // `fail(...violations)` overflowed the stack from about a hundred thousand items.
    const text = "Reporting-MTA: dns; a.example\r\n\r\n" + "no colon here\r\n".repeat(200_000);
    const parsed = parseDeliveryStatus(text);
    expect(parsed.ok ? 0 : parsed.violations.length).toBe(200_000);
  });
});
