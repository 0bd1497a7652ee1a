import { describe, expect, it } from "vitest";
import { exportJson } from "./exportJson.ts";
import { importTrace } from "./importer.ts";
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
    const newer = { ...sampleTrace(), version: 2, mailscope: "9.0.0" };
    expect(messages(JSON.stringify(newer))).toEqual([
      "$.version TRACE-VERSION: this trace is version 2, written by Mailscope 9.0.0; this Mailscope reads trace version 1 only. Open it with a newer Mailscope.",
    ]);
  });

  it("refuses a version that is not a whole number from 1", () => {
    expect(messages(JSON.stringify({ ...sampleTrace(), version: "1" }))[0]).toMatch(
      /^\$\.version TRACE-VERSION: the trace version is "1"; .*reads version 1/,
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
});
