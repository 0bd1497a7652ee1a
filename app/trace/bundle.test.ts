import { describe, expect, it } from "vitest";
import TEXT from "../../scenarios/state-1-temporary-failure-retried.yaml?raw";
import rateLimited from "../../scenarios/rate-limited-then-down.yaml?raw";
import { runScenarioText } from "../sim/runScenario.ts";
import { emlReader, MAX_MESSAGE_BYTES } from "../sim/scenario.ts";
import {
  BUNDLE_FORMAT,
  bundleEmls,
  bundleText,
  checkBundleValue,
  compareReplay,
  createBundle,
  firstDifference,
  readBundle,
  replaySettings,
  replaySummary,
  MAX_EML_BYTES,
  whereTheyDiffer,
  type Bundle,
} from "./bundle.ts";
import { sampleTrace } from "./sampleTrace.ts";
import { exportJson, traceHash } from "./exportJson.ts";
import type { Trace } from "./schema.ts";
import { EML_BYTES, EML_SCENARIO } from "../sim/testing.ts";

const FILE = "scenarios/state-1-temporary-failure-retried.yaml";

async function run(options: { seed?: number; readings?: [string, string][]; recordBodies?: boolean } = {}) {
  const outcome = await runScenarioText(TEXT, { file: FILE, mailscope: "0.1.0", ...options });
  if (!outcome.ok) throw new Error("the scenario did not load");
  return outcome.run;
}

describe("bug bundle (Bug bundle and images)", () => {
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
      const settings = replaySettings(bundle);
      if (!settings.ok) throw new Error("no settings");
      const s = settings.value;
      expect(s.emls).toEqual({});
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
      const doc = { ...(await valid()), version: 3 };
      const read = checkBundleValue(doc);
      expect(read.ok).toBe(false);
      if (!read.ok) {
        expect(read.violations[0]).toMatchObject({ path: "$.version", rule: "BUNDLE-VERSION" });
        expect(read.violations[0]?.message).toBe(
          "this bundle is version 3, written by Mailscope 0.1.0; this Mailscope reads bundle versions 1 and 2. Open it with a newer Mailscope.",
        );
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

    it("a scenario text edited after the run (the trace untouched) is refused, at the first line that differs", async () => {
      const doc = await valid();
      const scenario = doc["scenario"] as { text: string };
      const lines = scenario.text.split("\n");
      const at = lines.findIndex((l) => l.startsWith("seed:"));
      expect(at).toBeGreaterThan(0);
      const original = lines[at];
      lines[at] = "seed: 99";
      scenario.text = lines.join("\n");
      // The trace's hash still holds: only the scenario beside it was changed.
      const read = await readBundle(JSON.stringify(doc));
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.violations).toEqual([
        {
          path: "$.scenario.text",
          rule: "BUNDLE-SCHEMA",
          message: `line ${at + 1}: the bundle says "seed: 99" but its trace recorded ${JSON.stringify(original)}`,
        },
      ]);
      // A line added at the end is found too.
      scenario.text = `${lines.join("\n").replace("seed: 99", original ?? "")}\n# more\n`;
      const longer = checkBundleValue(doc);
      expect(!longer.ok && longer.violations[0]?.message).toMatch(
        /^line \d+: the bundle says "# more" but its trace recorded /,
      );
    });

    it("a seed that disagrees with the trace's", async () => {
      const doc = { ...(await valid()), seed: 99 };
      const read = checkBundleValue(doc);
      expect(!read.ok && read.violations[0]).toMatchObject({ path: "$.seed", rule: "BUNDLE-SCHEMA" });
    });
  });

  describe("a scenario that takes a message from an eml: file (POST-9)", () => {
    const emlRun = async (emls: Record<string, Uint8Array>, recordBodies = false) => {
      const outcome = await runScenarioText(EML_SCENARIO, {
        file: "raw.yaml",
        mailscope: "0.1.0",
        recordBodies,
        readFile: emlReader(emls),
      });
      if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
      return outcome.run;
    };
    const emlBundle = async () =>
      createBundle((await emlRun({ "mail/hello.eml": EML_BYTES })).trace, {
        recordBodies: false,
        emls: { "mail/hello.eml": EML_BYTES },
      });

    it("the limit on an eml: file is the scenario's", () => {
      expect(MAX_EML_BYTES).toBe(MAX_MESSAGE_BYTES);
    });

    it("carries the file's bytes as base64 (version 2), reads them back, and replays to the same hash", async () => {
      const bundle = await emlBundle();
      expect(bundle.version).toBe(2);
      expect(bundle.emls).toEqual({
        "mail/hello.eml": btoa(Array.from(EML_BYTES, (b) => String.fromCharCode(b)).join("")),
      });
      const text = bundleText(bundle);
      const read = await readBundle(text);
      expect(read.ok).toBe(true);
      if (!read.ok) return;
      expect(bundleText(read.value)).toBe(text);
      expect(bundleEmls(read.value)["mail/hello.eml"]).toEqual(EML_BYTES);
      const settings = replaySettings(read.value);
      if (!settings.ok) throw new Error(JSON.stringify(settings.violations));
      const again = await emlRun({ ...settings.value.emls });
      expect(await compareReplay(read.value, again.trace)).toEqual({ reproduced: true, hash: bundle.traceHash });
    });

    it("a bundle without eml: files stays version 1, which an older Mailscope reads too", async () => {
      expect((await createBundle((await run()).trace, { recordBodies: false, emls: {} })).version).toBe(1);
    });

    it("an eml: file the bundle does not hold: $.emls[path] missing, and a file the scenario does not name", async () => {
      const bundle = await emlBundle();
      // A version 1 bundle of such a scenario (written before bundles held them) has none.
      const { emls: _emls, ...without } = bundle;
      const missing = replaySettings({ ...without, version: 1 });
      expect(!missing.ok && missing.violations).toEqual([
        {
          path: '$.emls["mail/hello.eml"]',
          rule: "BUNDLE-SCHEMA",
          message:
            "missing: the scenario's messages[0] takes its message from mail/hello.eml, and the bundle does not hold that file's bytes",
        },
      ]);
      // A generated scenario (JSON) names its files alike.
      const json = JSON.stringify({ name: "raw", messages: [{ id: "m0" }, { id: "m1", eml: "mail/hello.eml" }] });
      const generated = replaySettings({ ...without, scenario: { name: "raw", text: json } });
      expect(!generated.ok && generated.violations.map((v) => v.message)).toEqual([
        expect.stringMatching(/^missing: the scenario's messages\[1\] takes its message from mail\/hello\.eml/),
      ]);
      const extra = replaySettings({ ...bundle, emls: { ...bundle.emls, "other.eml": "" } });
      expect(!extra.ok && extra.violations).toEqual([
        {
          path: '$.emls["other.eml"]',
          rule: "BUNDLE-SCHEMA",
          message: "no message of the scenario takes its message from other.eml",
        },
      ]);
    });

    it("an entry that is not base64, or larger than a message may be: located errors on reading", async () => {
      const doc = JSON.parse(bundleText(await emlBundle())) as Record<string, unknown>;
      for (const bad of ["not base64!", "QUJD=", "QQ===", 7]) {
        const read = checkBundleValue({ ...doc, emls: { "mail/hello.eml": bad } });
        expect(!read.ok && read.violations).toEqual([
          {
            path: '$.emls["mail/hello.eml"]',
            rule: "BUNDLE-SCHEMA",
            message:
              typeof bad === "number"
                ? expect.stringMatching(/expected string/)
                : "not base64: a file's bytes are written as base64 (RFC 4648 §4, with padding)",
          },
        ]);
      }
      // One byte over the limit, refused from its length before the text is looked at.
      const over = "A".repeat(Math.ceil((MAX_EML_BYTES + 1) / 3) * 4);
      const read = checkBundleValue({ ...doc, emls: { "mail/hello.eml": over } });
      expect(!read.ok && read.violations).toEqual([
        {
          path: '$.emls["mail/hello.eml"]',
          rule: "BUNDLE-SCHEMA",
          message: "larger than 104857600 bytes (the limit for messages)",
        },
      ]);
      // Exactly the limit (3n + 1 bytes: n groups and one padded by "==") is not refused for its size.
      const limit = `${"A".repeat(Math.floor(MAX_EML_BYTES / 3) * 4)}AA==`;
      expect(Math.floor(MAX_EML_BYTES / 3) * 3 + 1).toBe(MAX_EML_BYTES);
      const at = checkBundleValue({ ...doc, emls: { "mail/hello.eml": limit } });
      expect(at.ok).toBe(true);
    });
  });
});

describe("a bundle whose scenario text was edited says where", () => {
  it("BUNDLE-SCHEMA: the first line that differs, each side's — not two 160-character prefixes that read the same", async () => {
    const outcome = await runScenarioText(rateLimited, {
      file: "scenarios/rate-limited-then-down.yaml",
      mailscope: "0.1.0",
    });
    if (!outcome.ok) throw new Error("valid");
    const doc = JSON.parse(bundleText(await createBundle(outcome.run.trace, { recordBodies: false }))) as {
      scenario: { text: string };
    };
    const lines = doc.scenario.text.split("\n");
    const at = lines.findIndex((l) => l.startsWith("seed:"));
    expect(at).toBeGreaterThan(5);
    lines[at] = "seed: 4";
    doc.scenario.text = lines.join("\n");
    const read = checkBundleValue(doc);
    expect(read.ok).toBe(false);
    const violation = !read.ok ? read.violations.find((v) => v.path === "$.scenario.text") : undefined;
    expect(violation?.message).toBe(`line ${at + 1}: the bundle says "seed: 4" but its trace recorded "seed: 3"`);
  });

  it("a long line is quoted around where it differs; a replay's first difference in a member goes down to it", () => {
    const long = `${"x".repeat(300)}A${"y".repeat(300)}`;
    const [a, b, where] = whereTheyDiffer(long, long.replace("A", "B"));
    expect(where).toBe("from character 261: ");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^"…x{40}Ay+…"$/);
    const trace = sampleTrace();
    const edited = { ...trace, scenario: { ...trace.scenario, source: "name: a\nseed: 2\n" } };
    const difference = firstDifference(
      { ...trace, scenario: { ...trace.scenario, source: "name: a\nseed: 1\n" } },
      edited,
    );
    expect(difference).toEqual({ path: "$.scenario.source", bundled: 'line 2: "seed: 1"', rerun: 'line 2: "seed: 2"' });
  });
});
