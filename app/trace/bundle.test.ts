import { describe, expect, it } from "vitest";
import TEXT from "../../scenarios/state-1-temporary-failure-retried.yaml?raw";
import { runScenarioText } from "../sim/runScenario.ts";
import {
  BUNDLE_FORMAT,
  bundleText,
  checkBundleValue,
  compareReplay,
  createBundle,
  readBundle,
  replaySettings,
  replaySummary,
  type Bundle,
} from "./bundle.ts";
import { exportJson, traceHash } from "./exportJson.ts";
import type { Trace } from "./schema.ts";

const FILE = "scenarios/state-1-temporary-failure-retried.yaml";

async function run(options: { seed?: number; readings?: [string, string][]; recordBodies?: boolean } = {}) {
  const outcome = await runScenarioText(TEXT, { file: FILE, mailscope: "0.1.0", ...options });
  if (!outcome.ok) throw new Error("the scenario did not load");
  return outcome.run;
}

describe("bug bundle (issue 15: Bug bundle and images)", () => {
  it("holds the scenario text and name, seed, readings, version, the exported trace and the report", async () => {
    const r = await run({ readings: [["G7", "ignored"]] });
    const bundle = await createBundle(r.trace, { recordBodies: false, file: FILE });
    expect(bundle.format).toBe(BUNDLE_FORMAT);
    expect(bundle.scenario).toEqual({ name: r.trace.scenario.name, file: FILE, text: TEXT });
    expect(bundle.seed).toBe(r.trace.seed);
    expect(bundle.readings["G7"]).toBe("ignored");
    expect(bundle.mailscope).toBe("0.1.0");
    expect(bundle.report).toMatch(/^# Mailscope run: /);
    expect(bundle.report).toContain("--set G7=ignored");
    expect(bundle.trace).toEqual(JSON.parse(exportJson(r.trace)));
    expect(bundle.traceHash).toBe(await traceHash(bundle.trace));
    expect(bundle.passed).toBe(r.passed);
  });

  it("reads back what it writes, byte for byte the same on a second write", async () => {
    const bundle = await createBundle((await run()).trace, { recordBodies: false });
    const text = bundleText(bundle);
    const read = await readBundle(text);
    expect(read.ok).toBe(true);
    if (read.ok) expect(bundleText(read.value)).toBe(text);
  });

  it("a replay of the same settings reproduces (same hash), with and without recorded bodies", async () => {
    for (const recordBodies of [false, true]) {
      const bundle = await createBundle((await run({ seed: 5, recordBodies })).trace, { recordBodies });
      const s = replaySettings(bundle);
      const again = await run({
        seed: s.seed as number,
        readings: [...s.readings] as [string, string][],
        recordBodies: s.recordBodies,
      });
      const verdict = await compareReplay(bundle, again.trace);
      expect(verdict).toEqual({ reproduced: true, hash: bundle.traceHash });
      expect(replaySummary(verdict)[0]).toMatch(/^reproduced: /);
    }
  });

  it("a re-run that departs names the first differing event", async () => {
    const bundle = await createBundle((await run()).trace, { recordBodies: false });
    // A consistent forgery: event 5 changed and the hash recomputed, so only the replay can tell.
    const events = bundle.trace.events.map((e) => (e.seq === 5 ? { ...e, timeMs: e.timeMs + 1 } : e));
    const trace: Trace = { ...bundle.trace, events };
    const forged: Bundle = { ...bundle, trace, traceHash: await traceHash(trace) };
    const verdict = await compareReplay(forged, (await run()).trace);
    expect(verdict.reproduced).toBe(false);
    if (verdict.reproduced) return;
    expect(verdict.difference.path).toBe("$.events[5]");
    expect(verdict.difference.seq).toBe(5);
    const lines = replaySummary(verdict);
    expect(lines[1]).toBe("first differing event: $.events[5]");
    expect(lines[2]).toMatch(/^ {2}bundle: #5 \+/);
  });

  it("another seed differs, and says where", async () => {
    const bundle = await createBundle((await run({ seed: 1 })).trace, { recordBodies: false });
    const verdict = await compareReplay(bundle, (await run({ seed: 2 })).trace);
    expect(verdict.reproduced).toBe(false);
    if (!verdict.reproduced) expect(verdict.difference.path).toMatch(/^\$\.(events|seed)/);
  });

  describe("bad bundles: located errors", () => {
    const valid = async () =>
      JSON.parse(bundleText(await createBundle((await run()).trace, { recordBodies: false }))) as Record<
        string,
        unknown
      >;

    it("not JSON", async () => {
      const read = await readBundle("{ nope");
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.violations[0]).toMatchObject({ path: "$", rule: "BUNDLE-FORMAT" });
    });

    it("a trace, not a bundle", async () => {
      const trace = exportJson((await run()).trace);
      const read = await readBundle(trace);
      expect(read.ok).toBe(false);
      if (!read.ok) {
        expect(read.violations[0]).toMatchObject({ path: "$.format", rule: "BUNDLE-FORMAT" });
        expect(read.violations[0]?.message).toContain("it is a trace");
      }
    });

    it("a newer version", async () => {
      const doc = { ...(await valid()), version: 2 };
      const read = checkBundleValue(doc);
      expect(read.ok).toBe(false);
      if (!read.ok) {
        expect(read.violations[0]).toMatchObject({ path: "$.version", rule: "BUNDLE-VERSION" });
        expect(read.violations[0]?.message).toContain("newer Mailscope");
      }
    });

    it("missing members, each at its path", async () => {
      const doc = await valid();
      delete doc["seed"];
      delete doc["report"];
      (doc["scenario"] as Record<string, unknown>)["text"] = 3;
      const read = checkBundleValue(doc);
      expect(read.ok).toBe(false);
      if (!read.ok) {
        const paths = read.violations.map((v) => v.path);
        expect(paths).toEqual(expect.arrayContaining(["$.seed", "$.report", "$.scenario.text"]));
        expect(read.violations.every((v) => v.rule === "BUNDLE-SCHEMA")).toBe(true);
      }
    });

    it("a missing trace, and a broken one under $.trace", async () => {
      const doc = await valid();
      const trace = doc["trace"] as { events: Record<string, unknown>[] };
      delete doc["trace"];
      let read = checkBundleValue(doc);
      expect(!read.ok && read.violations.map((v) => v.path)).toEqual(["$.trace"]);
      trace.events[3] = { ...trace.events[3], seq: 9 };
      read = checkBundleValue({ ...doc, trace });
      expect(!read.ok && read.violations[0]).toMatchObject({ path: "$.trace.events[3].seq", rule: "TRACE-SCHEMA" });
    });

    it("a trace changed after export fails its hash", async () => {
      const doc = await valid();
      const trace = doc["trace"] as { events: { domain?: string }[] };
      (trace.events[4] as { domain?: string }).domain = "x.example";
      const read = await readBundle(JSON.stringify(doc));
      expect(!read.ok && read.violations[0]).toMatchObject({ path: "$.traceHash", rule: "BUNDLE-HASH" });
    });

    it("a seed that disagrees with the trace's", async () => {
      const doc = { ...(await valid()), seed: 99 };
      const read = checkBundleValue(doc);
      expect(!read.ok && read.violations[0]).toMatchObject({ path: "$.seed", rule: "BUNDLE-SCHEMA" });
    });
  });
});
