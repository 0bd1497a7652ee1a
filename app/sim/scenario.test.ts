import { describe, expect, it } from "vitest";
import {
  applyReading,
  defaultScenarioReadings,
  ENUM_READINGS,
  SWITCHABLE_GAPS,
  type ScenarioReadings,
  formatScenarioError,
  headerMessageId,
  loadScenario,
  parseScenarioText,
  parseSetArgument,
  parseSizeBytes,
  readingsNotation,
  resolveReadings,
  scenarioJsonSchema,
  type ScenarioError,
} from "./scenario.ts";
import { gapById } from "../protocol/gaps.ts";
import { READING_GAPS } from "../protocol/readingNames.ts";

const MINIMAL = `name: minimal
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
messages:
  - from: alice@a.example
    to: bob@b.example
`;

function errorsOf(text: string): ScenarioError[] {
  const result = parseScenarioText(text, "s.yaml");
  if (result.ok) throw new Error("expected errors");
  return [...result.errors];
}

function formatted(text: string): string[] {
  return errorsOf(text).map(formatScenarioError);
}

describe("scenario files: the schema", () => {
  it("a minimal scenario parses, with the defaults filled in", () => {
    const result = parseScenarioText(MINIMAL);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const s = result.scenario;
    expect(s.seed).toBe(1);
    expect(s.readings).toEqual({});
    expect(s.messages[0]?.at).toBe(0);
    expect(s.domains["a.example"]?.keys).toEqual({ selector: "s1", publish: true });
    expect(s.faults).toEqual({ network: [], dns: [], dnsChanges: [] });
    expect(s.expectations).toEqual([]);
  });

  it("reuses the receiver's policy and capabilities schemas: CAP-7 and ERR-9 settings are checked there", () => {
    const text = `${MINIMAL.replace("    mailboxes: [bob]", "    mailboxes: [bob]\n    capabilities: { max_message_size: 1000 }")}`;
    expect(formatted(text)).toEqual([
      `s.yaml:7:39: domains["b.example"].capabilities.max_message_size: max_message_size is at least 26214400 (CAP-7)`,
    ]);
  });

  it("reuses the network fault schema: an unknown kind names the kinds, at its line and column", () => {
    const text = `${MINIMAL}faults:\n  network:\n    - kind: unavailble\n      host: mx.b.example\n`;
    const [error] = errorsOf(text);
    expect(error).toMatchObject({ line: 12, column: 13, field: "faults.network[0].kind" });
    expect(error?.message).toContain('unknown kind "unavailble"; the kinds are connection-refused');
  });

  it("reuses the DNS fault schema: an unknown field is pointed at by its key", () => {
    const text = `${MINIMAL}faults:\n  dns:\n    - kind: servfail\n      nmae: _svc.b.example\n`;
    expect(formatted(text)).toEqual(['s.yaml:13:7: faults.dns[0].nmae: unknown field "nmae"']);
  });

  it("an unknown top-level field suggests the close one", () => {
    expect(formatted(`${MINIMAL}expectation: []\n`)).toEqual([
      's.yaml:10:1: expectation: unknown field "expectation" (did you mean "expectations"?)',
    ]);
  });

  it("a missing required field points at the object that lacks it", () => {
    expect(formatted("domains:\n  a.example: {}\n")).toEqual(["s.yaml:1:1: name: is required (string)"]);
  });

  it("YAML syntax errors come with their line and column", () => {
    const [error] = errorsOf("name: x\ndomains:\n  a.example: {\n    mailboxes: [alice]\n  b.example: 1: 2\n");
    expect(error).toMatchObject({ file: "s.yaml", field: "(yaml)" });
    expect(error?.line).toBeGreaterThan(2);
  });

  it("an empty file and a file that is not a mapping say so", () => {
    expect(formatted("")[0]).toContain("(file): the file is empty");
    expect(formatted("- a\n- b\n")[0]).toContain("(file): a scenario is a mapping");
  });

  it("MBX-*: a recipient that is not a mailbox is an error citing the mailbox rule", () => {
    const [error] = errorsOf(MINIMAL.replace("to: bob@b.example", "to: [bob@b.example, not-a-mailbox]"));
    expect(error).toMatchObject({ field: "messages[0].to[1]", line: 9, column: 25 });
    expect(error?.message).toMatch(/"not-a-mailbox" is not a mailbox: .*\[MBX-\d+\]/);
  });

  it("recipients and senders must be in declared domains (receiver: none for an SMTP-only one)", () => {
    expect(formatted(MINIMAL.replace("to: bob@b.example", "to: zed@z.example"))).toEqual([
      "s.yaml:9:9: messages[0].to: z.example is not a domain of the scenario; declare it under domains (receiver: none for an SMTP-only domain)",
    ]);
  });

  it("ENV-3: a null reverse-path needs a sender domain; AUTH-3: the sender domain is the from domain", () => {
    expect(formatted(MINIMAL.replace("from: alice@a.example", "from: null"))[0]).toContain(
      "messages[0].sender: a message with from: null (a null reverse-path) needs `sender`",
    );
    expect(
      formatted(MINIMAL.replace("from: alice@a.example", "from: alice@a.example\n    sender: b.example"))[0],
    ).toContain("the sender domain must be the domain of from (a.example): AUTH-3");
  });

  it("message ids are unique, and at most one of size, eml and text", () => {
    const text = `${MINIMAL}  - id: m1\n    from: alice@a.example\n    to: bob@b.example\n    size: 2KB\n    text: "x"\n`;
    expect(formatted(text)).toEqual([
      "s.yaml:10:9: messages[1].id: the id m1 is also the id of messages[0]",
      "s.yaml:14:11: messages[1].text: give one of size, eml and text, not size and text",
    ]);
  });

  it("expectations refer to messages and recipients that exist", () => {
    const text = `${MINIMAL}expectations:\n  - { message: m9, outcome: accepted }\n  - { recipient: carol@b.example, outcome: accepted }\n  - { outcome: accepted, never: [accepted] }\n  - { outcome: bounced, reason: fallback }\n`;
    expect(formatted(text)).toEqual([
      "s.yaml:11:16: expectations[0].message: no message has the id m9 (ids: m1)",
      "s.yaml:12:18: expectations[1].recipient: carol@b.example is not a recipient of any message",
      "s.yaml:13:33: expectations[2].never: accepted cannot be both the outcome and never",
      "s.yaml:14:33: expectations[3].reason: reason goes with outcome: smtp",
    ]);
  });

  it("a domain without a receiver cannot have mailboxes or a policy", () => {
    const text = MINIMAL.replace("    mailboxes: [bob]", "    receiver: none\n    mailboxes: [bob]");
    expect(formatted(text)).toEqual([
      's.yaml:7:16: domains["b.example"].mailboxes: b.example has no receiver (receiver: none), so it has no mailboxes',
    ]);
  });

  it("mailboxes and policy mailboxes belong to their domain; none is listed twice", () => {
    const text = MINIMAL.replace(
      "    mailboxes: [bob]",
      "    mailboxes: [bob, bob@b.example, carol@c.example]\n    policy:\n      temporaryFailures: [{ mailbox: eve@a.example }]",
    );
    expect(formatted(text)).toEqual([
      's.yaml:6:22: domains["b.example"].mailboxes[1]: bob@b.example is listed twice',
      's.yaml:6:37: domains["b.example"].mailboxes[2]: carol@c.example is not in b.example',
      's.yaml:8:38: domains["b.example"].policy.temporaryFailures[0].mailbox: eve@a.example is not in b.example',
    ]);
  });

  it("G5: an SVCB record that does not parse (RFC 9460 presentation) is an error at the record", () => {
    const text = MINIMAL.replace(
      "    mailboxes: [bob]",
      '    mailboxes: [bob]\n    svcb: ["1 mx.b.example. port=notaport"]',
    );
    const [error] = errorsOf(text);
    expect(error).toMatchObject({ field: 'domains["b.example"].svcb[0]', line: 7, column: 12 });
    expect(error?.message).toContain('"1 mx.b.example. port=notaport" is not an SVCB record');
  });

  it("times and sizes: durations and units are read, nonsense is refused", () => {
    expect(parseSizeBytes("2KB")).toBe(2000);
    expect(parseSizeBytes("2KiB")).toBe(2048);
    expect(parseSizeBytes("30MiB")).toBe(31_457_280);
    expect(parseSizeBytes(512)).toBe(512);
    expect(parseSizeBytes("2 parsecs")).toBeUndefined();
    expect(formatted(MINIMAL.replace("    to: bob@b.example", "    to: bob@b.example\n    at: soon"))[0]).toContain(
      "messages[0].at: a time is ms after the start",
    );
  });

  it("the JSON Schema is draft 2020-12, closed objects, and names every top-level field", () => {
    const schema = scenarioJsonSchema() as {
      $schema: string;
      properties: Record<string, unknown>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(Object.keys(schema.properties)).toEqual([
      "name",
      "description",
      "title",
      "lesson",
      "annotations",
      "seed",
      "start",
      "horizon",
      "problemBase",
      "readings",
      "constants",
      "network",
      "dns",
      "domains",
      "messages",
      "faults",
      "expectations",
    ]);
    expect(schema.required).toEqual(["name", "domains"]);
    expect(schema.additionalProperties).toBe(false);
  });
});

describe("readings of the switchable gaps (docs/gaps.md notation)", () => {
  it("G7, G16: a scenario's readings are checked against the gaps table", () => {
    const text = `${MINIMAL}readings:\n  G7: ignord\n  G5: x\n  G16: "jitter=off, fallback-window=5h"\n  G99: y\n`;
    expect(formatted(text)).toEqual([
      's.yaml:11:7: readings.G7: G7 reads "enforced" or "ignored", not "ignord"',
      `s.yaml:12:7: readings.G5: G5 (SVCB record format) is not switchable; its reading is fixed: ${gapById("G5")?.defaultReading ?? ""}`,
      "s.yaml:13:8: readings.G16: G16: fallback-window is 5h; it must be within 1h and 4h (RETRY-5)",
      "s.yaml:14:8: readings.G99: there is no gap G99 (docs/gaps.md lists G1 to G48)",
    ]);
  });

  it("G46, G47: the capabilities request's two contradictions are switchable, each with both readings", () => {
    const alive = applyReading(defaultScenarioReadings, "G46", "alive");
    expect(alive.ok && alive.readings.capabilities4xx).toBe("alive");
    const bound = applyReading(defaultScenarioReadings, "G47", "lower-bound");
    expect(bound.ok && bound.readings.capabilitiesRetryAfter).toBe("lower-bound");
    expect(applyReading(defaultScenarioReadings, "G46", "never")).toEqual({
      ok: false,
      message: 'G46 reads "fallback-eligible" or "alive", not "never"',
    });
    expect(readingsNotation(defaultScenarioReadings)).toMatchObject({ G46: "fallback-eligible", G47: "ignored" });
  });

  it("G16: parameters left out keep their value; jitter and window parse", () => {
    const off = applyReading(defaultScenarioReadings, "G16", "jitter=off");
    expect(off.ok && off.readings.retryTiming).toEqual({ jitter: false, fallbackWindowS: 7200 });
    const both = resolveReadings([
      ["G16", "jitter=off"],
      ["G16", "fallback-window=90m"],
    ]);
    expect(both.ok && both.readings.retryTiming).toEqual({ jitter: false, fallbackWindowS: 5400 });
    expect(applyReading(defaultScenarioReadings, "G16", "jitter=maybe")).toEqual({
      ok: false,
      message: 'G16: jitter is on or off, not "maybe"',
    });
  });

  it("G3 takes tolerance-seconds=<n> or a bare number; G19 takes a YAML number", () => {
    const g3 = applyReading(defaultScenarioReadings, "G3", "tolerance-seconds=60");
    expect(g3.ok && g3.readings.signatureTolerance).toEqual({ toleranceS: 60 });
    const bare = applyReading(defaultScenarioReadings, "G3", 45);
    expect(bare.ok && bare.readings.signatureTolerance).toEqual({ toleranceS: 45 });
    const g19 = applyReading(defaultScenarioReadings, "G19", 403);
    expect(g19.ok && g19.readings.fromDomainMismatch).toBe("403");
  });

  it("the trace notation of the defaults is each gap's defaultValue in gaps.ts", () => {
    const notation = readingsNotation(defaultScenarioReadings);
    for (const [id, value] of Object.entries(notation)) expect(value).toBe(gapById(id)?.defaultValue);
  });

  it("keys the readings by their readable names and writes them by gap ID: each name reads one gap, each gap one name", () => {
    expect(Object.keys(defaultScenarioReadings)).toEqual(Object.keys(READING_GAPS));
    expect(Object.keys(readingsNotation(defaultScenarioReadings))).toEqual([...SWITCHABLE_GAPS]);
    expect([...SWITCHABLE_GAPS]).toEqual(Object.values(READING_GAPS));
    // Switching one gap by its ID changes the reading of its name, and only that one.
    for (const [name, id] of Object.entries(READING_GAPS)) {
      const value = id === "G3" ? "10" : id === "G16" ? "jitter=off" : ENUM_READINGS[id]?.[1];
      const applied = applyReading(defaultScenarioReadings, id, value ?? "");
      if (!applied.ok) throw new Error(applied.message);
      const changed = Object.keys(applied.readings).filter(
        (k) =>
          JSON.stringify(applied.readings[k as keyof ScenarioReadings]) !==
          JSON.stringify(defaultScenarioReadings[k as keyof ScenarioReadings]),
      );
      expect(changed, id).toEqual([name]);
    }
  });

  it("--set G7=ignored splits at the first '='; G16=jitter=off,fallback-window=3h keeps the rest", () => {
    expect(parseSetArgument("G7=ignored")).toEqual(["G7", "ignored"]);
    expect(parseSetArgument("g16=jitter=off,fallback-window=3h")).toEqual(["G16", "jitter=off,fallback-window=3h"]);
    expect(() => parseSetArgument("ignored")).toThrow(/--set takes <gap>=<reading>/);
  });
});

describe("loading: the .eml files a scenario names", () => {
  const EML = MINIMAL.replace("    to: bob@b.example", "    to: bob@b.example\n    eml: mail/hello.eml");

  it("POST-9: reads each eml once, through the caller's reader", async () => {
    const asked: string[] = [];
    const bytes = new TextEncoder().encode("Message-ID: <hello@a.example>\r\n\r\nHi\r\n");
    const result = await loadScenario(EML, {
      file: "s.yaml",
      readFile: (path) => {
        asked.push(path);
        return Promise.resolve(bytes);
      },
    });
    expect(result.ok).toBe(true);
    expect(asked).toEqual(["mail/hello.eml"]);
    if (result.ok) expect(result.loaded.emls.get("mail/hello.eml")).toBe(bytes);
  });

  it("an eml that cannot be read is an error at its field; without a reader too", async () => {
    const failing = await loadScenario(EML, {
      file: "s.yaml",
      readFile: () => Promise.reject(new Error("no such file")),
    });
    expect(failing.ok).toBe(false);
    if (!failing.ok)
      expect(failing.errors.map(formatScenarioError)).toEqual([
        "s.yaml:10:10: messages[0].eml: cannot read mail/hello.eml: no such file",
      ]);
    const noReader = await loadScenario(EML, { file: "s.yaml" });
    expect(noReader.ok).toBe(false);
  });

  it("two messages with the same Message-ID are refused: the duplicate-delivery invariant needs them apart", async () => {
    const text = `${MINIMAL}  - from: alice@a.example\n    to: bob@b.example\n    text: "Message-ID: <same@a.example>\\n\\nOne\\n"\n  - from: alice@a.example\n    to: bob@b.example\n    text: "Message-ID: <same@a.example>\\n\\nTwo\\n"\n`;
    const result = await loadScenario(text, { file: "s.yaml" });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors[0]?.message).toContain(
        "its Message-ID <same@a.example> is also the Message-ID of messages[1]",
      );
  });

  it("headerMessageId reads the header block only, with or without angle brackets, folded or not", () => {
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(headerMessageId(enc("Subject: x\r\nMessage-ID: <a@b>\r\n\r\nbody"))).toBe("a@b");
    expect(headerMessageId(enc("message-id:\r\n  <folded@b>\r\n\r\n"))).toBe("folded@b");
    expect(headerMessageId(enc("Subject: x\r\n\r\nMessage-ID: <in-body@b>\r\n"))).toBeUndefined();
  });
});
