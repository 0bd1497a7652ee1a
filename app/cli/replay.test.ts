import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleText, readBundle } from "../trace/bundle.ts";
import { traceHash } from "../trace/exportJson.ts";
import type { Trace } from "../trace/schema.ts";
import { main } from "./main.ts";
import { replayCommandAction } from "./replay.ts";
import { runCommandAction } from "./run.ts";
import { EML_BYTES, EML_SCENARIO } from "../sim/testing.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

const SCENARIO = "scenarios/state-1-temporary-failure-retried.yaml";

async function writeBundle(dir: string, args: { seed?: string; set?: string[]; full?: boolean } = {}): Promise<string> {
  const path = join(dir, "out.msbundle");
  const { io, out } = capture();
  await runCommandAction(SCENARIO, { ...args, bundle: path }, io);
  expect(out.at(-1)).toBe(`wrote bug bundle ${path}`);
  return path;
}

describe("mailscope run --bundle and mailscope replay (Bug bundle)", () => {
  it("run --bundle writes one JSON file with the scenario, seed, readings, version, trace and report", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
    const path = await writeBundle(dir, { seed: "3", set: ["G7=ignored"] });
    const read = await readBundle(readFileSync(path, "utf8"));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.scenario.file).toBe(SCENARIO);
    expect(read.value.scenario.text).toBe(readFileSync(SCENARIO, "utf8"));
    expect(read.value.seed).toBe(3);
    expect(read.value.readings["G7"]).toBe("ignored");
    expect(read.value.report).toContain("## Reproduce");
    expect(read.value.trace.format).toBe("mailscope-trace");
  });

  it("replay of a fresh bundle prints reproduced, exit 0 (with --full bodies too)", async () => {
    for (const full of [false, true]) {
      const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
      const path = await writeBundle(dir, { seed: "4", set: ["G16=fallback-window=4h"], full });
      const { io, out, err } = capture();
      expect(await replayCommandAction(path, io)).toBe(0);
      expect(err).toEqual([]);
      expect(out.at(-1)).toMatch(/^reproduced: the re-run's trace hash is the bundle's \([0-9a-f]{64}\)$/);
    }
  });

  it("a bundle whose run does not reproduce: exit 1 and the first differing event", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
    const path = await writeBundle(dir);
    const read = await readBundle(readFileSync(path, "utf8"));
    if (!read.ok) throw new Error("unreadable");
    // Event 7 edited and the hash recomputed: a consistent bundle of a run this scenario does not make.
    const events = read.value.trace.events.map((e) => (e.seq === 7 ? { ...e, domain: "elsewhere.example" } : e));
    const trace: Trace = { ...read.value.trace, events };
    writeFileSync(path, bundleText({ ...read.value, trace, traceHash: await traceHash(trace) }));
    const { io, out } = capture();
    expect(await replayCommandAction(path, io)).toBe(1);
    expect(out).toContain("first differing event: $.events[7]");
    expect(out.find((l) => l.startsWith("  bundle: "))).toMatch(
      /^ {2}bundle: #7 \+0:00:00(\.\d+)? elsewhere\.example /,
    );
    expect(out.find((l) => l.startsWith("  re-run: "))).toMatch(/^ {2}re-run: #7 /);
  });

  it("a corrupted bundle (its trace edited after export): exit 2, file: $.traceHash: … [BUNDLE-HASH]", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
    const path = await writeBundle(dir);
    const doc = JSON.parse(readFileSync(path, "utf8")) as { trace: { events: { domain?: string }[] } };
    (doc.trace.events[2] as { domain?: string }).domain = "z.example";
    writeFileSync(path, JSON.stringify(doc));
    const { io, err } = capture();
    expect(await replayCommandAction(path, io)).toBe(2);
    expect(err[0]).toMatch(new RegExp(`^${path.replace(/[.\\]/g, "\\$&")}: \\$\\.traceHash: .* \\[BUNDLE-HASH\\]$`));
  });

  it("bad bundles: truncated JSON, a trace, a missing member, a newer version, no file: exit 2 with where and what", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
    const path = await writeBundle(dir);
    const text = readFileSync(path, "utf8");
    const cases: [string, string, RegExp][] = [
      ["truncated.json", text.slice(0, 500), /: \$: the file is not JSON .* \[BUNDLE-FORMAT\]$/],
      [
        "trace.json",
        JSON.stringify((JSON.parse(text) as { trace: unknown }).trace),
        /: \$\.format: not a Mailscope bug bundle: it is a trace .* \[BUNDLE-FORMAT\]$/,
      ],
      ["noseed.json", JSON.stringify({ ...JSON.parse(text), seed: undefined }), /: \$\.seed: .* \[BUNDLE-SCHEMA\]$/],
      [
        "v9.json",
        JSON.stringify({ ...JSON.parse(text), version: 9 }),
        /: \$\.version: this bundle is version 9.* \[BUNDLE-VERSION\]$/,
      ],
    ];
    for (const [name, contents, message] of cases) {
      writeFileSync(join(dir, name), contents);
      const { io, err, out } = capture();
      expect(await replayCommandAction(join(dir, name), io)).toBe(2);
      expect(out).toEqual([]);
      expect(err[0]).toMatch(message);
      expect(err[0]?.startsWith(join(dir, name))).toBe(true);
    }
    const { io, err } = capture();
    expect(await replayCommandAction(join(dir, "missing.json"), io)).toBe(2);
    expect(err).toEqual([`mailscope replay: ${join(dir, "missing.json")}: no such file`]);
  });

  it("run --bundle checks its path before the run: not *.msbundle or *.json, or no such folder → exit 2, nothing run", async () => {
    for (const [bundle, message] of [
      [
        "out.zip",
        /a bug bundle is one JSON file: name it \*\.msbundle \(e\.g\. out\.msbundle; \*\.json is taken too\)/,
      ],
      ["/no/such/folder/out.msbundle", /the folder \/no\/such\/folder does not exist/],
    ] as const) {
      const { io, out, err } = capture();
      expect(await runCommandAction(SCENARIO, { bundle }, io)).toBe(2);
      expect(out).toEqual([]);
      expect(err[0]).toMatch(message);
    }
  });

  it("mailscope replay is a command of the program", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-"));
    const path = await writeBundle(dir);
    expect(await main(["replay", path])).toBe(0);
    expect(await main(["replay"])).toBe(2);
  });

  describe("a scenario that takes a message from an eml: file (POST-9)", () => {
    /** A scenario and its eml: file on disk, bundled by `run --bundle`. */
    async function emlBundle(): Promise<{ dir: string; path: string }> {
      const dir = mkdtempSync(join(tmpdir(), "mailscope-bundle-eml-"));
      mkdirSync(join(dir, "mail"));
      writeFileSync(join(dir, "mail", "hello.eml"), EML_BYTES);
      writeFileSync(join(dir, "raw.yaml"), EML_SCENARIO);
      const path = join(dir, "raw.mailscope-bundle.json");
      const { io, out } = capture();
      expect(await runCommandAction(join(dir, "raw.yaml"), { bundle: path }, io)).toBe(0);
      expect(out.at(-1)).toBe(`wrote bug bundle ${path}`);
      return { dir, path };
    }

    it("run --bundle carries the file's bytes; replay, without the file, reproduces", async () => {
      const { dir, path } = await emlBundle();
      const doc = JSON.parse(readFileSync(path, "utf8")) as { version: number; emls: Record<string, string> };
      expect(doc.version).toBe(2);
      expect(doc.emls).toEqual({ "mail/hello.eml": Buffer.from(EML_BYTES).toString("base64") });
      // The replay reads the bundle alone: the scenario's folder is gone from its reach.
      writeFileSync(join(dir, "mail", "hello.eml"), "From: <someone@else.example>\r\n\r\nnot the bundled one\r\n");
      const { io, out, err } = capture();
      expect(await replayCommandAction(path, io)).toBe(0);
      expect(err).toEqual([]);
      expect(out.at(-1)).toMatch(/^reproduced: /);
    });

    it('a missing or bad eml: entry: exit 2, file: $.emls["mail/hello.eml"]: … [BUNDLE-SCHEMA]', async () => {
      const { path } = await emlBundle();
      const doc = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
      const cases: [Record<string, unknown>, string][] = [
        [
          { ...doc, emls: {} },
          "missing: the scenario's messages[0] takes its message from mail/hello.eml, and the bundle does not hold that file's bytes",
        ],
        [
          { ...doc, emls: { "mail/hello.eml": "%%%%" } },
          "not base64: a file's bytes are written as base64 (RFC 4648 §4, with padding)",
        ],
      ];
      for (const [bad, message] of cases) {
        writeFileSync(path, JSON.stringify(bad));
        const { io, out, err } = capture();
        expect(await replayCommandAction(path, io)).toBe(2);
        expect(err).toEqual([`${path}: $.emls["mail/hello.eml"]: ${message} [BUNDLE-SCHEMA]`]);
        expect(out.some((l) => l.startsWith("reproduced") || l.startsWith("not reproduced"))).toBe(false);
      }
    });
  });
});
