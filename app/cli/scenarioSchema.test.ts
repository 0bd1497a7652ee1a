/**
 * schemas/scenario.schema.json against the parser: every scenario the parser
 * refuses for a reason JSON Schema can state (patterns, enums) is refused by
 * the schema too, so an editor flags it; the cases only the parser can catch
 * (cross-field checks, ranges inside a reading) are listed here on purpose.
 * And the schema refuses nothing the parser accepts: every scenario of
 * scenarios/ validates.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { MAX_CHUNK_BYTES } from "../sim/network.ts";
import {
  formatScenarioError,
  MAX_MESSAGE_BYTES,
  MAX_RECIPIENTS,
  MAX_RECIPIENTS_PER_MESSAGE,
  MAX_SECONDS,
  parseScenarioText,
} from "../sim/scenario.ts";
import { MAX_LATENCY_WHY as LATENCY_WHY, MAX_VIRTUAL_MS } from "../sim/faultScope.ts";
import { MAX_PIN_AGE_S, MAX_SPAN_WHY as SPAN_WHY } from "../protocol/resources.ts";
import { MAX_POLICY_SECONDS } from "../receiver/config.ts";
import { GIVE_UP_AFTER_MS } from "../sender/retrySchedule.ts";

const MESSAGE_WHY =
  "a resource limit: 100 MiB, four times the smallest max_message_size (26214400, CAP-7), to go over any usual limit";

const schema = JSON.parse(readFileSync("schemas/scenario.schema.json", "utf8")) as Record<string, unknown>;
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

const DOMAINS = `domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
`;
const message = (fields: string): string => `messages:\n  - { ${fields} }\n`;
const OK = message("from: alice@a.example, to: bob@b.example");
/** Ten messages of 10,000 recipients each: the most a scenario may have in all (MAX_RECIPIENTS), on lines 8 to 17. */
const TEN_FULL_MESSAGES = `messages:\n${`  - { from: alice@a.example, to: [${Array.from({ length: 10_000 }, () => "bob@b.example").join(", ")}] }\n`.repeat(10)}`;

/** Scenario texts the parser refuses, by what is wrong with them. */
const REFUSED: Readonly<Record<string, string>> = {
  "an unknown gap": `readings: { G99: x }\n${DOMAINS}${OK}`,
  "a gap that is not switchable": `readings: { G5: x }\n${DOMAINS}${OK}`,
  "a reading the gap does not know": `readings: { G7: ignord }\n${DOMAINS}${OK}`,
  "a reading of G46 it does not know": `readings: { G46: never }\n${DOMAINS}${OK}`,
  "G16 with an unknown parameter": `readings: { G16: "jitter=maybe" }\n${DOMAINS}${OK}`,
  "G3 that is not a number of seconds": `readings: { G3: "tolerance-seconds=soon" }\n${DOMAINS}${OK}`,
  "G19 other than 401 or 403": `readings: { G19: 404 }\n${DOMAINS}${OK}`,
  "a malformed duration": `horizon: 2 hours\n${DOMAINS}${OK}`,
  "a malformed time": `${DOMAINS}${message("at: tomorrow, from: alice@a.example, to: bob@b.example")}`,
  "a malformed size": `${DOMAINS}${message("from: alice@a.example, to: bob@b.example, size: 2 lots")}`,
  "a malformed recipient": `${DOMAINS}${message("from: alice@a.example, to: bob")}`,
  "a malformed sender": `${DOMAINS}${message('from: "alice at a.example", to: bob@b.example')}`,
  "a recipient with a space": `${DOMAINS}${message('from: alice@a.example, to: "bob smith@b.example"')}`,
  "a domain that is no host name": `domains:\n  a_example:\n    mailboxes: [alice]\n${OK}`,
  "an expectation's malformed recipient": `${DOMAINS}${OK}expectations:\n  - { recipient: bob, outcome: accepted }\n`,
  // What the parser refuses and JSON Schema can say (minProperties, a URI pattern, uniqueItems, a pattern).
  "no domain at all": `domains: {}\n`,
  "a problemBase that is no URI": `problemBase: not a uri\n${DOMAINS}${OK}`,
  "a fault's problemBase that is no URI": `${DOMAINS}${OK}faults:\n  network:\n    - { kind: unavailable, problemBase: "problems here" }\n`,
  "a version advertised twice": `domains:\n  a.example:\n    mailboxes: [alice]\n  b.example:\n    mailboxes: [bob]\n    capabilities: { max_message_size: 26214400, versions: [v1, v1] }\n${OK}`,
  "a diagnostic of two lines": `domains:\n  a.example:\n    mailboxes: [alice]\n  b.example:\n    mailboxes: [bob]\n    policy: { failAfterAcceptance: [{ mailbox: bob@b.example, status: 5.2.1, diagnostic: "smtp; one\\ntwo" }] }\n${OK}`,
  // Absurd numbers are refused with a bound, not run (a size that fails to allocate, a time that prints as 2.7e293 hours).
  "a size of 1e15 bytes": `${DOMAINS}${message("from: alice@a.example, to: bob@b.example, size: 1e15")}`,
  "a size of 2GiB": `${DOMAINS}${message("from: alice@a.example, to: bob@b.example, size: 2GiB")}`,
  "a time 1e300 ms after the start": `${DOMAINS}${message("at: 1e300, from: alice@a.example, to: bob@b.example")}`,
  "a duration string of twelve digits": `${DOMAINS}${message('at: "100000000000s", from: alice@a.example, to: bob@b.example')}`,
  "a latency of 1e308 ms": `network: { latency: 1e308 }\n${DOMAINS}${OK}`,
  "a sampled latency over an hour": `dns: { latency: { distribution: uniform, minMs: 0, maxMs: 1e9 } }\n${DOMAINS}${OK}`,
  "a horizon over two years, in ms": `horizon: 1e12\n${DOMAINS}${OK}`,
  "a DNS timeout over an hour": `dns: { timeoutMs: 1e7 }\n${DOMAINS}${OK}`,
  "a TTL over 2^31 - 1": `dns: { defaultTtlS: 1e10 }\n${DOMAINS}${OK}`,
  "a Retry-After over two years": `${DOMAINS}${OK}faults:\n  network:\n    - { kind: rate-limited, retryAfterS: 1000000000000 }\n`,
  "a timeout fault over an hour": `${DOMAINS}${OK}faults:\n  network:\n    - { kind: timeout, afterMs: 1e9 }\n`,
  "a receiver's Retry-After over two years": `domains:\n  a.example:\n    mailboxes: [alice]\n  b.example:\n    mailboxes: [bob]\n    policy: { unavailable: { retryAfterS: 1e12 } }\n${OK}`,
  "a message with 10,001 recipients": `${DOMAINS}messages:\n  - from: alice@a.example\n    to: [${Array.from({ length: 10_001 }, () => "bob@b.example").join(", ")}]\n`,
  "a slow-body chunk over 100 MiB": `${DOMAINS}${OK}faults:\n  network:\n    - { kind: slow-body, chunkBytes: 1e9 }\n`,
  // A lesson's annotations are about a time or an event kind, and the kinds are the trace's.
  "an annotation with neither at nor on": `${DOMAINS}${OK}annotations:\n  - { note: hello }\n`,
  "an annotation with both at and on": `${DOMAINS}${OK}annotations:\n  - { at: 1m, on: smtp.handoff, note: hello }\n`,
  "an annotation's nth without on": `${DOMAINS}${OK}annotations:\n  - { at: 1m, nth: 2, note: hello }\n`,
  "an annotation on an event kind the trace has not": `${DOMAINS}${OK}annotations:\n  - { on: smtp.handof, note: hello }\n`,
  "an annotation without a note": `${DOMAINS}${OK}annotations:\n  - { at: 1m }\n`,
  "a lesson without what to watch for": `lesson: { order: 1, watchFor: [] }\n${DOMAINS}${OK}`,
  // Only the parser: the checks across fields, and ranges inside a reading's text.
  "a recipient of an undeclared domain": `${DOMAINS}${message("from: alice@a.example, to: bob@c.example")}`,
  "a sender of an undeclared domain": `${DOMAINS}${message("from: carol@c.example, to: bob@b.example")}`,
  "a G16 window outside 1h to 4h": `readings: { G16: "fallback-window=5h" }\n${DOMAINS}${OK}`,
  "two messages with one id": `${DOMAINS}messages:\n  - { id: m, from: alice@a.example, to: bob@b.example }\n  - { id: m, from: alice@a.example, to: bob@b.example }\n`,
  "an expectation of an unknown message": `${DOMAINS}${OK}expectations:\n  - { message: m9, outcome: accepted }\n`,
  "reason without outcome smtp": `${DOMAINS}${OK}expectations:\n  - { outcome: accepted, reason: fallback }\n`,
  "a local part the mailbox syntax refuses": `${DOMAINS}${message('from: alice@a.example, to: "bob..smith@b.example"')}`,
  "a horizon string over two years": `horizon: 731d\n${DOMAINS}${OK}`,
  "a size with a unit just over 100 MiB": `${DOMAINS}${message("from: alice@a.example, to: bob@b.example, size: 101MiB")}`,
  "an ISO time more than two years after the start": `${DOMAINS}${message('at: "2030-01-01T00:00:00Z", from: alice@a.example, to: bob@b.example')}`,
  "100,001 recipients in all, no message over 10,000": `${DOMAINS}${TEN_FULL_MESSAGES}  - { from: alice@a.example, to: bob@b.example }\n`,
};

/** The cases of {@link REFUSED} that break a bound on a number: each error cites why the bound is there. */
const REFUSED_BOUNDS_FROM = Object.keys(REFUSED).indexOf("a size of 1e15 bytes");
const REFUSED_BOUNDS_TO = Object.keys(REFUSED).indexOf("a slow-body chunk over 100 MiB") + 1;

/** The refusals JSON Schema cannot state: what the parser alone catches. */
const PARSER_ONLY = [
  "a recipient of an undeclared domain",
  "a sender of an undeclared domain",
  "a G16 window outside 1h to 4h",
  "two messages with one id",
  "an expectation of an unknown message",
  "reason without outcome smtp",
  "a local part the mailbox syntax refuses",
  // The patterns bound the digits of a duration or a size; the exact bounds (730d, 100 MiB) are the parser's.
  "a horizon string over two years",
  "a size with a unit just over 100 MiB",
  "an ISO time more than two years after the start",
  // A sum over the messages.
  "100,001 recipients in all, no message over 10,000",
];

describe("schemas/scenario.schema.json refuses what the parser refuses, where JSON Schema can say it", () => {
  it("every case is refused by the parser; the schema refuses all but the parser-only ones", () => {
    const schemaAccepts: string[] = [];
    for (const [what, text] of Object.entries(REFUSED)) {
      const full = `name: t\n${text}`;
      expect(parseScenarioText(full).ok, `the parser refuses ${what}`).toBe(false);
      if (validate(parse(full))) schemaAccepts.push(what);
    }
    expect(schemaAccepts).toEqual(PARSER_ONLY);
  });

  it("the schema accepts every scenario of scenarios/, and a minimal one", () => {
    expect(validate(parse(`name: t\n${DOMAINS}${OK}`))).toBe(true);
    const files = readdirSync("scenarios").filter((f) => f.endsWith(".yaml"));
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const data: unknown = parse(readFileSync(`scenarios/${file}`, "utf8"));
      expect(validate(data), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("readings the parser takes pass the schema: numbers, parameters in any order, quoted local parts", () => {
    const readings = `readings: { G3: 60, G16: "fallback-window=3h, jitter=off", G19: 403, G46: alive, G47: lower-bound }\n`;
    const text = `name: t\n${readings}${DOMAINS}${message("from: '\"al ice\"@a.example', to: bob@b.example")}`;
    expect(parseScenarioText(text).ok).toBe(true);
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
  });

  it("an absurd number is refused where it is, with its bound", () => {
    const errors = (what: string): string[] => {
      const result = parseScenarioText(`name: t\n${REFUSED[what] ?? ""}`, "s.yaml");
      return result.ok ? [] : result.errors.map(formatScenarioError);
    };
    const bigMessage = `a message is at most 104857600 bytes: ${MESSAGE_WHY}`;
    expect(errors("a size of 1e15 bytes")).toEqual([
      `s.yaml:8:55: messages[0].size: is 1000000000000000 bytes; ${bigMessage}`,
    ]);
    expect(errors("a size of 2GiB")).toEqual([`s.yaml:8:55: messages[0].size: is 2GiB; ${bigMessage}`]);
    expect(errors("a time 1e300 ms after the start")).toEqual([
      `s.yaml:8:11: messages[0].at: is 1e+300 ms; a time after the start is at most 730d (63072000000 ms): ${SPAN_WHY}`,
    ]);
    expect(errors("a latency of 1e308 ms")).toEqual([
      `s.yaml:2:21: network.latency: is 1e+308 ms; a latency is at most 1h (3600000 ms): ${LATENCY_WHY}`,
    ]);
    expect(errors("a horizon string over two years")).toEqual([
      `s.yaml:2:10: horizon: is 731d; a duration is at most 730d: ${SPAN_WHY}`,
    ]);
    expect(errors("an ISO time more than two years after the start")).toEqual([
      `s.yaml:8:11: messages[0].at: 2030-01-01T00:00:00Z is more than 730d after the start of the run: ${SPAN_WHY}`,
    ]);
    expect(errors("a slow-body chunk over 100 MiB")).toEqual([
      "s.yaml:11:38: faults.network[0].chunkBytes: is 1000000000 bytes; a chunk is at most 104857600 bytes: a resource limit: the largest message a scenario makes, 100 MiB, in one chunk",
    ]);
    expect(errors("an annotation with both at and on")).toEqual([
      "s.yaml:10:19: annotations[0].on: give at or on, not both",
    ]);
    expect(errors("an annotation on an event kind the trace has not")).toEqual([
      's.yaml:10:11: annotations[0].on: is "smtp.handof", not an event kind of the trace (did you mean "smtp.handoff"?); the kinds are in docs/trace-format.md',
    ]);
    expect(errors("100,001 recipients in all, no message over 10,000")).toEqual([
      "s.yaml:18:34: messages[10].to: brings the recipients to 100001; a scenario has at most 100000 recipients, all messages together: a resource limit: each costs events, memory and time in every run (the spec names no such number)",
    ]);
  });

  it("every bound on a number cites what it follows from (a rule, an RFC, a resource limit), in the parser's error and the schema alike", () => {
    const CITES = /\b[A-Z]{2,6}-\d+\b|RFC \d+|resource limit/;
    // The parser: each bound-breaking case of the list says why.
    for (const [what, text] of Object.entries(REFUSED).slice(REFUSED_BOUNDS_FROM, REFUSED_BOUNDS_TO)) {
      const result = parseScenarioText(`name: t\n${text}`, "s.yaml");
      const messages = result.ok ? [] : result.errors.map((e) => e.message);
      expect(messages.length, what).toBeGreaterThan(0);
      for (const m of messages) expect(m, what).toMatch(CITES);
    }
    // The schema: every maximum, maxItems and maxLength, but a probability's 1, a pair's 2 and a safe integer's.
    const uncited: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}/${i}`));
      if (typeof node !== "object" || node === null) return;
      const n = node as Record<string, unknown>;
      const description = typeof n["description"] === "string" ? n["description"] : "";
      for (const key of ["maximum", "exclusiveMaximum", "maxItems", "maxLength", "maxProperties"]) {
        const bound = n[key];
        if (bound === undefined || bound === Number.MAX_SAFE_INTEGER) continue;
        if (key === "maximum" && bound === 1 && /\[0, 1\]/.test(description)) continue;
        if (key === "maxItems" && n["minItems"] === bound) continue;
        if (!CITES.test(description)) uncited.push(`${path} ${key} ${String(bound)}`);
      }
      for (const [key, value] of Object.entries(n)) walk(value, `${path}/${key}`);
    };
    walk(schema, "");
    expect(uncited).toEqual([]);
  });

  it("times reach past every limit the spec names, with room: the one-year pin's cap and the give-up after it", () => {
    // CAP-13, LIM-11: a pin is kept at most 31557600 s; RETRY-6: a delivery gives up 5 days after its first attempt.
    expect(MAX_VIRTUAL_MS).toBeGreaterThanOrEqual(1.5 * (MAX_PIN_AGE_S * 1000 + GIVE_UP_AFTER_MS));
    expect(MAX_SECONDS * 1000).toBe(MAX_VIRTUAL_MS);
    expect(MAX_POLICY_SECONDS * 1000).toBe(MAX_VIRTUAL_MS);
    // The outside check's case: a message after the pin's cap, and every kind of time at the edge.
    const edge = `name: t\nhorizon: 730d\n${DOMAINS}messages:
  - { at: 0, from: alice@a.example, to: bob@b.example }
  - { at: 365d7h, from: alice@a.example, to: bob@b.example }
  - { at: 63072000000, from: alice@a.example, to: bob@b.example }
  - { at: "2027-12-31T00:00:00Z", from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: rate-limited, retryAfterS: 63072000, from: 730d, until: 730d }
  dnsChanges:
    - { at: 730d, name: _svc.b.example, records: null }
expectations:
  - { message: m2, outcome: accepted, within: 730d, after: 0 }
`;
    const parsed = parseScenarioText(edge);
    expect(parsed.ok ? [] : parsed.errors.map(formatScenarioError)).toEqual([]);
    expect(validate(parse(edge)), JSON.stringify(validate.errors)).toBe(true);
    const over = parseScenarioText(edge.replace("at: 63072000000,", "at: 63072000001,"), "s.yaml");
    expect(over.ok ? [] : over.errors.map((e) => e.field)).toEqual(["messages[2].at"]);
  });

  it("the bounds at their edge are taken: a 100 MiB chunk, 100,000 recipients in all", () => {
    const chunk = `name: t\n${DOMAINS}${OK}faults:\n  network:\n    - { kind: slow-body, chunkBytes: 104857600 }\n`;
    expect(parseScenarioText(chunk).ok).toBe(true);
    expect(validate(parse(chunk)), JSON.stringify(validate.errors)).toBe(true);
    expect(parseScenarioText(`name: t\n${DOMAINS}${TEN_FULL_MESSAGES}`).ok).toBe(true);
    expect(MAX_CHUNK_BYTES).toBe(MAX_MESSAGE_BYTES);
    expect(MAX_RECIPIENTS).toBe(10 * MAX_RECIPIENTS_PER_MESSAGE);
  });
});
