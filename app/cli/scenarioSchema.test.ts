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
import { parseScenarioText } from "../sim/scenario.ts";

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
  // Only the parser: the checks across fields, and ranges inside a reading's text.
  "a recipient of an undeclared domain": `${DOMAINS}${message("from: alice@a.example, to: bob@c.example")}`,
  "a sender of an undeclared domain": `${DOMAINS}${message("from: carol@c.example, to: bob@b.example")}`,
  "a G16 window outside 1h to 4h": `readings: { G16: "fallback-window=5h" }\n${DOMAINS}${OK}`,
  "two messages with one id": `${DOMAINS}messages:\n  - { id: m, from: alice@a.example, to: bob@b.example }\n  - { id: m, from: alice@a.example, to: bob@b.example }\n`,
  "an expectation of an unknown message": `${DOMAINS}${OK}expectations:\n  - { message: m9, outcome: accepted }\n`,
  "reason without outcome smtp": `${DOMAINS}${OK}expectations:\n  - { outcome: accepted, reason: fallback }\n`,
  "a local part the mailbox syntax refuses": `${DOMAINS}${message('from: alice@a.example, to: "bob..smith@b.example"')}`,
};

/** The refusals JSON Schema cannot state: what the parser alone catches. */
const PARSER_ONLY = [
  "a recipient of an undeclared domain",
  "a sender of an undeclared domain",
  "a G16 window outside 1h to 4h",
  "two messages with one id",
  "an expectation of an unknown message",
  "reason without outcome smtp",
  "a local part the mailbox syntax refuses",
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
});
