import { describe, expect, it } from "vitest";
import { SCENARIO } from "../sim/fixtures/determinismScenario.ts";
import { runScenarioText } from "../sim/runScenario.ts";
import { Sha256 } from "../protocol/sha256.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { canonicalJson, canonicalJsonChunks, exportJson, exportJsonChunks, traceHash } from "./exportJson.ts";
import type { Trace } from "./schema.ts";
import { sampleTrace } from "./sampleTrace.ts";

describe("JSON export", () => {
  it("in pieces: a run's trace written one piece at a time is JSON.stringify's layout of the document, byte for byte", async () => {
    const outcome = await runScenarioText(SCENARIO, { recordBodies: true });
    if (!outcome.ok) throw new Error("the determinism scenario does not load");
    const trace = outcome.run.trace;
    expect(trace.events.length).toBeGreaterThan(50);
    for (const options of [{}, { full: true }, { indent: 0 }, { indent: 4, full: true }]) {
      const pieces = [...exportJsonChunks(trace, options)];
      const text = pieces.join("");
      expect(text).toBe(exportJson(trace, options));
      // The layout JSON.stringify gives the same document, and the same document as a whole-trace redaction.
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, options.indent ?? 2)}\n`);
      const doc = JSON.parse(text) as { events: unknown[]; redactions: string[] };
      expect(doc.events).toHaveLength(trace.events.length);
      expect(doc.redactions).toEqual("full" in options ? ["private-keys"] : ["bodies", "private-keys"]);
    }
    // A trace without events, and a large one in more than one piece.
    expect(JSON.parse([...exportJsonChunks({ ...trace, events: [] })].join(""))).toMatchObject({ events: [] });
    const many = { ...trace, events: Array.from({ length: 3 }, () => trace.events).flat() };
    expect([...exportJsonChunks(many)].length).toBeGreaterThan(1);
    expect(JSON.parse([...exportJsonChunks(many)].join(""))).toEqual(JSON.parse(exportJson(many)));
  });

  it("writes a stable key order: schema order at the top, the events last, seq/timeMs/name/domain/data", () => {
    const doc = JSON.parse(exportJson(sampleTrace())) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual([
      "format",
      "version",
      "mailscope",
      "redactions",
      "scenario",
      "seed",
      "readings",
      "startedAtMs",
      "invariants",
      "expectations",
      "events",
    ]);
    expect(Object.keys(doc["readings"] as object)).toEqual(["G3", "G7", "G16"]);
    const event = (doc["events"] as Record<string, unknown>[])[0] ?? {};
    expect(Object.keys(event)).toEqual(["seq", "timeMs", "name", "domain", "data"]);
    expect(Object.keys(event["data"] as object)).toEqual(["from", "messageId", "to"]);
  });

  it("gives the same bytes for the same trace, whatever the insertion order of members", () => {
    const a = sampleTrace();
    const reversed = JSON.parse(
      JSON.stringify(a, (_key, value: unknown) =>
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value).reverse())
          : value,
      ),
    ) as typeof a;
    expect(exportJson(reversed)).toBe(exportJson(a));
  });

  it("leaves out message bodies and private keys by default, and says so", () => {
    const text = exportJson(sampleTrace());
    const doc = JSON.parse(text) as {
      redactions: string[];
      events: { name: string; data?: Record<string, unknown> }[];
      scenario: { source: string };
    };
    expect(doc.redactions).toEqual(["bodies", "private-keys"]);
    const http = doc.events.filter((e) => e.name.startsWith("http."));
    expect(http.some((e) => e.data && "body" in e.data)).toBe(false);
    expect(http.filter((e) => e.data?.["bodyRedacted"] === true)).toHaveLength(4);
    expect(doc.events.find((e) => e.name === "smtp.handoff")?.data?.["message"]).toBe("[redacted]");
    expect(doc.events.find((e) => e.name === "delivery.created")?.data?.["signingKey"]).toEqual({
      crv: "Ed25519",
      d: "[redacted]",
      kty: "OKP",
      x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    });
    expect(text).not.toContain("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A");
    expect(text).not.toContain("Hello.");
    expect(doc.scenario.source).not.toContain("MC4CAQAwBQYDK2VwBCIEIJ");
    expect(doc.scenario.source).toContain("privateKey: [redacted]");
    expect(doc.scenario.source).toContain("mailboxes: [bob@b.example]");
  });

  it("full: true keeps the bodies but still not the private keys", () => {
    const text = exportJson(sampleTrace(), { full: true });
    const doc = JSON.parse(text) as { redactions: string[] };
    expect(doc.redactions).toEqual(["private-keys"]);
    expect(text).toContain("Hello.");
    expect(text).toContain('"max_message_size\\":26214400');
    expect(text).not.toContain("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A");
    expect(text).not.toContain("-----BEGIN PRIVATE KEY-----");
  });

  it("canonical JSON sorts keys at every level and drops undefined", () => {
    expect(canonicalJson({ b: [{ d: 1, c: undefined, a: 2 }], a: "x" })).toBe('{"a":"x","b":[{"a":2,"d":1}]}');
  });

  it("traceHash is SHA-256 of the canonical JSON: equal for equal runs, different for any change", async () => {
    const hash = await traceHash(sampleTrace());
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await traceHash(sampleTrace())).toBe(hash);
    const changed = sampleTrace();
    const tweaked = {
      ...changed,
      events: changed.events.map((e, i) => (i === 2 ? { ...e, timeMs: e.timeMs + 1 } : e)),
    };
    expect(await traceHash(tweaked)).not.toBe(hash);
  });

  it("canonical JSON in pieces is canonicalJson's text, and traceHash hashes the same bytes in pieces or whole", async () => {
    const outcome = await runScenarioText(SCENARIO, { recordBodies: true });
    if (!outcome.ok) throw new Error("the determinism scenario does not load");
    const run = outcome.run.trace;
    // Enough events for several pieces, text outside the BMP (a surrogate pair), members JSON leaves out or
    // writes as null, and an integer-like member JSON.stringify writes first.
    const odd = {
      ...run,
      events: [
        ...Array.from({ length: 4 }, () => run.events).flat(),
        { seq: 1, timeMs: 0, name: "note", data: { text: "📬 — ü", gone: undefined, list: [undefined, () => 1] } },
      ],
      "7": "integer-like",
      skipped: undefined,
      fn: () => 1,
    } as unknown as Trace;
    for (const trace of [run, odd, { ...run, events: [] }]) {
      const pieces = [...canonicalJsonChunks(trace)];
      expect(pieces.join("")).toBe(canonicalJson(trace));
      const whole = await traceHash(trace); // WebCrypto alone: the pieces joined, hashed at once
      // A provider with a digest in pieces (as the CLI's Node provider has): the pieces fed one by one.
      const stop = useCryptoProvider({
        incrementalDigest: () => {
          const running = new Sha256();
          return { update: (bytes) => void running.update(bytes), digest: () => running.digest() };
        },
      });
      try {
        expect(await traceHash(trace)).toBe(whole);
      } finally {
        stop();
      }
    }
    expect([...canonicalJsonChunks(odd)].length).toBeGreaterThan(1);
    // The hash of the text itself, computed apart from the code under test.
    const text = new TextEncoder().encode(canonicalJson(run));
    const expected = [...new Uint8Array(await crypto.subtle.digest("SHA-256", text))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    expect(await traceHash(run)).toBe(expected);
  });
});
