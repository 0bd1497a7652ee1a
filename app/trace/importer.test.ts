import { describe, expect, it } from "vitest";
import { exportJson } from "./exportJson.ts";
import { importTrace, importTraceValue, MAX_VIOLATIONS } from "./importer.ts";
import { sampleTrace } from "./sampleTrace.ts";

function messages(text: string): string[] {
  const parsed = importTrace(text);
  return parsed.ok ? [] : parsed.violations.map((v) => `${v.path} ${v.rule}: ${v.message}`);
}

describe("trace importer", () => {
  it("reads back what the JSON exporter wrote", () => {
    const parsed = importTrace(exportJson(sampleTrace(), { full: true }));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.events).toHaveLength(sampleTrace().events.length);
    expect(parsed.value.scenario.name).toBe("sample");
  });

  it("refuses a newer version with a message that says which version this Mailscope reads", () => {
    const newer = { ...sampleTrace(), version: 3, mailscope: "9.0.0" };
    expect(messages(JSON.stringify(newer))).toEqual([
      "$.version TRACE-VERSION: this trace is version 3, written by Mailscope 9.0.0; this Mailscope reads trace versions 1 to 2. Open it with a newer Mailscope.",
    ]);
  });

  it("reads a version 1 trace as it is, and writes version 2", () => {
    expect(sampleTrace().version).toBe(2);
    const parsed = importTrace(JSON.stringify({ ...sampleTrace(), version: 1 }));
    expect(parsed.ok && parsed.value.version).toBe(1);
  });

  it("refuses a version that is not a whole number from 1", () => {
    expect(messages(JSON.stringify({ ...sampleTrace(), version: "1" }))[0]).toMatch(
      /^\$\.version TRACE-VERSION: the trace version is "1"; .*reads versions 1 to 2/,
    );
    expect(messages(JSON.stringify({ ...sampleTrace(), version: 0 }))[0]).toMatch(/TRACE-VERSION/);
  });

  it("says plainly when a file is not a trace at all", () => {
    expect(messages("{not json")[0]).toMatch(/^\$ TRACE-FORMAT: the file is not JSON/);
    expect(messages("[1, 2]")).toEqual(["$ TRACE-FORMAT: a Mailscope trace is a JSON object"]);
    expect(messages(JSON.stringify({ log: { version: "1.2" } }))).toEqual([
      '$.format TRACE-FORMAT: not a Mailscope trace: it has no format member, expected "mailscope-trace"',
    ]);
    expect(messages(JSON.stringify({ format: "har" }))[0]).toMatch(/its format is "har"/);
  });

  it("points at each schema problem with a JSONPath", () => {
    const broken = sampleTrace() as unknown as Record<string, unknown>;
    const events = broken["events"] as Record<string, unknown>[];
    (events[3] as Record<string, unknown>)["name"] = "Not.Dotted Lowercase";
    delete broken["seed"];
    const found = messages(JSON.stringify(broken));
    expect(found.some((m) => m.startsWith("$.events[3].name TRACE-SCHEMA"))).toBe(true);
    expect(found.some((m) => m.startsWith("$.seed TRACE-SCHEMA"))).toBe(true);
  });

  it("refuses events out of order or with gaps in their numbering", () => {
    const trace = sampleTrace();
    const swapped = { ...trace, events: [trace.events[1], trace.events[0], ...trace.events.slice(2)] };
    const found = messages(JSON.stringify(swapped));
    expect(found).toContain("$.events[0].seq TRACE-SCHEMA: event 0 has seq 1; events are numbered from 0 without gaps");
    const backwards = { ...trace, events: trace.events.map((e, i) => (i === 5 ? { ...e, timeMs: 0 } : e)) };
    expect(messages(JSON.stringify(backwards)).some((m) => /events\[5\]\.timeMs.*goes back in time/.test(m))).toBe(
      true,
    );
  });

  it("ignores members it does not know (additive minor changes)", () => {
    const parsed = importTrace(JSON.stringify({ ...sampleTrace(), futureMember: { x: 1 } }));
    expect(parsed.ok).toBe(true);
  });

  it("reads a trace of 250 000 events in one linear pass, and lists the problems of a broken one without overflowing", () => {
    const n = 250_000;
    const events = Array.from({ length: n }, (_, i) => ({
      seq: i,
      timeMs: 1_767_225_600_000 + i,
      name: "dns.query",
      domain: "a.example",
      data: { name: "_svc.b.example", type: "SVCB" },
    }));
    const trace = { ...sampleTrace(), events };
    const parsed = importTraceValue(trace);
    expect(parsed.ok && parsed.value.events.length).toBe(n);
    // Every event goes back in time and has a wrong seq: the first problems are listed, the rest counted.
    const broken = { ...trace, events: events.map((e, i) => ({ ...e, seq: i + 1, timeMs: -i })) };
    const refused = importTraceValue(broken);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.violations).toHaveLength(MAX_VIOLATIONS + 1);
    expect(refused.violations.at(-1)?.message).toBe(`and ${2 * n - 1 - MAX_VIOLATIONS} more problems not listed`);
  });

  it("reports the document's problems and the events' together", () => {
    const trace = sampleTrace();
    const broken = { ...trace, seed: -1, events: trace.events.map((e, i) => (i === 2 ? { ...e, seq: "2" } : e)) };
    const found = messages(JSON.stringify(broken));
    expect(found.some((m) => m.startsWith("$.seed TRACE-SCHEMA"))).toBe(true);
    expect(found).toContain('$.events[2].seq TRACE-SCHEMA: seq is a whole number from 0, not "2"');
    expect(messages(JSON.stringify({ ...trace, events: undefined }))).toEqual([
      "$.events TRACE-SCHEMA: events is missing or not a list",
    ]);
  });
});
