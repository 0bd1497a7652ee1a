import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_SUFFIX, readBundle } from "../trace/bundle.ts";
import { exploreCheckAction, exploreCommandAction, type ExploreCliOptions } from "./explore.ts";

/** Small worlds and few lanes, so that a test's exploration is a few dozen quick runs. */
const SMALL = "domains: { max: 2 }\nmessages: { max: 2 }\nrecipients: { max: 3 }\nlanes: 4\nshrinkRuns: 40\n";
/** A property every world violates: something is submitted. Shrinking keeps one message. */
const NOTHING_SUBMITTED =
  "properties:\n  - id: nothing-submitted\n    description: no message is ever submitted\n    never: message.submitted\n";

let dir: string;
let options: string;
let properties: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-explore-"));
  options = join(dir, "options.yaml");
  properties = join(dir, "properties.yaml");
  await writeFile(options, SMALL);
  await writeFile(properties, NOTHING_SUBMITTED);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function capture(extra: { errIsTty?: boolean; now?: () => number } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), ...extra }, out, err };
}

async function explore(opts: ExploreCliOptions, extra: Parameters<typeof capture>[0] = {}) {
  const c = capture(extra);
  const code = await exploreCommandAction({ options, seed: "5", workers: "1", progress: false, ...opts }, c.io);
  return { code, out: c.out.join("\n"), err: c.err.join("\n") };
}

describe("mailscope explore: bad input is a located error and exit 2", () => {
  it.each([
    [{ runs: "abc" }, "--runs abc: a whole number from 1 to 100000000"],
    [{ runs: "0" }, "--runs 0: a whole number"],
    [{ time: "6x" }, "--time 6x: a duration such as 60s, 5m or 1h"],
    [{ workers: "many" }, "--workers many: a whole number"],
    [{ shard: "0/4" }, "--shard 0/4: the shard's number is 1 to 4"],
    [{ shard: "5/4" }, "--shard 5/4: the shard's number is 1 to 4"],
    [{ shard: "2" }, "--shard 2: write the shard as i/n"],
    [{ shard: "5/5" }, "--shard 5/5: an exploration has 4 lanes, so at most 4 shards"],
    [{ run: "12x" }, '--run "12x" is not a run\'s seed'],
  ] as const)("%j", async (opts, message) => {
    const { code, err } = await explore({ out: join(dir, "bad"), ...opts });
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it("a properties file that does not parse: file:line:column: field: message", async () => {
    const bad = join(dir, "bad-properties.yaml");
    await writeFile(bad, "properties:\n  - id: x\n    never: smtp.handof\n");
    const { code, err } = await explore({ properties: bad, out: join(dir, "bad") });
    expect(code).toBe(2);
    expect(err).toMatch(
      new RegExp(`^${bad.replace(/[.]/g, "\\.")}:3:12: properties\\[0\\]\\.never: unknown event "smtp\\.handof"`),
    );
  });

  it("an options file with a mistake: located too", async () => {
    const bad = join(dir, "bad-options.yaml");
    await writeFile(bad, "domains: { max: 9 }\n");
    const { code, err } = await explore({ options: bad, out: join(dir, "bad") });
    expect(code).toBe(2);
    expect(err).toMatch(/bad-options\.yaml:1:17: domains\.max: /);
  });

  it("a corpus entry that is not one, and an --out that is a file", async () => {
    const corpus = join(dir, "bad-corpus");
    await writeFile(join(dir, "a-file"), "x");
    expect((await explore({ out: join(dir, "a-file") })).err).toContain("a file is there; --out names a folder");
    await rm(corpus, { recursive: true, force: true });
    await mkdir(corpus);
    await writeFile(join(corpus, "1.json"), '{"format": "something-else"}');
    const { code, err } = await explore({ corpus, out: join(dir, "bad") });
    expect(code).toBe(2);
    expect(err).toContain("1.json: not a corpus entry of mailscope explore");
  });
});

describe("mailscope explore: a violation", () => {
  let out: string;
  let result: { code: number; out: string; err: string };
  beforeAll(async () => {
    out = join(dir, "violation");
    result = await explore({ runs: "6", properties, out, junit: join(dir, "junit.xml") });
  });

  it("exits 1 and prints what was violated, where the shrunk scenario is and the command that reproduces it", () => {
    expect(result.code).toBe(1);
    const file = join(out, "violations", "nothing-submitted.yaml");
    expect(result.out).toContain("VIOLATED nothing-submitted: no message is ever submitted");
    expect(result.out).toMatch(/6 of 6 runs; the first is run 0, seed \d+: mailscope explore --run \d+ --options /);
    expect(result.out).toContain(`to 1 domain, 1 message, 1 recipient, 0 faults: ${file}`);
    expect(result.out).toContain(`reproduce: mailscope explore check ${file} --properties ${properties}`);
    // Each lane's first violation is on stderr as soon as it is shrunk, with its seed.
    expect(result.err).toMatch(
      /^explore: run \d+ \(seed \d+\) violates nothing-submitted: no message is ever submitted: .* — shrunk in \d+ runs to 1 domain, 1 message, 1 recipient, 0 faults$/m,
    );
  });

  it("writes the shrunk scenario with a comment saying what it violates, and a bug bundle of it", async () => {
    const file = join(out, "violations", "nothing-submitted.yaml");
    const text = await readFile(file, "utf8");
    expect(text).toMatch(
      /^# mailscope explore: this scenario violates nothing-submitted: no message is ever submitted\.\n/,
    );
    expect(text).toContain("# Reproduce: mailscope explore check");
    const bundle = await readBundle(await readFile(file.replace(/\.yaml$/, BUNDLE_SUFFIX), "utf8"));
    expect(bundle.ok).toBe(true);
    if (bundle.ok) expect(bundle.value.scenario.text).toBe(text);
    // The reproduce command: the same property fails on the file.
    const c = capture();
    expect(await exploreCheckAction(file, { properties }, c.io)).toBe(1);
    expect(c.out.join("\n")).toContain(
      "FAIL  nothing-submitted: no message is ever submitted: message.submitted at seq 0",
    );
  });

  it("writes JUnit: a test case per property, the violated one failed", async () => {
    const xml = await readFile(join(dir, "junit.xml"), "utf8");
    expect(xml).toContain('<testcase classname="mailscope explore" name="terminal-outcome"/>');
    expect(xml).toMatch(
      /<testcase classname="mailscope explore" name="nothing-submitted">\n\s+<failure message="no message is ever submitted: /,
    );
    expect(xml).toMatch(/failures="1"/);
  });

  it("--run rebuilds the first violating run from its printed seed, and judges it the same", async () => {
    const seed = /the first is run 0, seed (\d+)/.exec(result.out)?.[1] as string;
    const { code, out: text } = await explore({ run: seed, properties, out });
    expect(code).toBe(1);
    expect(text).toContain(`wrote ${join(out, "runs", `${seed}.yaml`)}`);
    expect(text).toContain("FAIL  nothing-submitted");
  });
});

describe("mailscope explore: output", () => {
  it("--json prints the report, the same as report.json; exit 0 when every property held", async () => {
    const out = join(dir, "json");
    const { code, out: text } = await explore({ runs: "5", out, json: true });
    expect(code).toBe(0);
    const file = await readFile(join(out, "report.json"), "utf8");
    expect(`${text}\n`).toBe(file);
    const report = JSON.parse(text) as { runs: number; violations: unknown[]; gallery: { seed: string }[] };
    expect(report.runs).toBe(5);
    expect(report.violations).toEqual([]);
    // Each gallery entry is a scenario file, and its seed rebuilds it.
    expect((await readdir(join(out, "gallery"))).length).toBe(report.gallery.length);
  });

  it("prints progress about once a second (runs, runs/s, coverage, violations)", async () => {
    let t = 0;
    const { err } = await explore({ runs: "4", out: join(dir, "progress"), progress: true }, { now: () => (t += 600) });
    expect(err).toMatch(/^explore: \d\/4 runs, [\d.]+ runs\/s, \d+ behaviours, \d+ paths, no violation$/m);
  });

  it("gives the same report with 2 worker threads as with 1", async () => {
    await explore({ runs: "8", out: join(dir, "w1"), workers: "1" });
    await explore({ runs: "8", out: join(dir, "w2"), workers: "2" });
    expect(await readFile(join(dir, "w2", "report.json"), "utf8")).toBe(
      await readFile(join(dir, "w1", "report.json"), "utf8"),
    );
  });

  it("keeps a corpus and resumes from it", async () => {
    const corpus = join(dir, "corpus");
    await explore({ runs: "4", out: join(dir, "c1"), corpus });
    const entries = await readdir(corpus);
    expect(entries.length).toBeGreaterThan(0);
    const { out } = await explore({ runs: "4", seed: "6", out: join(dir, "c2"), corpus });
    expect(out).toContain(`resuming a corpus of ${entries.length}`);
  });
});

describe("mailscope explore check", () => {
  // Every scenario of the library run and judged: as check.test.ts's run of the library, two minutes.
  it(
    "holds on every bundled scenario but the one whose sender reuses keys on purpose (STATE-6, POST-27)",
    {
      timeout: 120_000,
    },
    async () => {
      const failed: string[] = [];
      for (const file of (await readdir("scenarios")).filter((f) => f.endsWith(".yaml")).sort()) {
        const c = capture();
        if ((await exploreCheckAction(join("scenarios", file), {}, c.io)) !== 0) {
          failed.push(`${file}: ${c.out.filter((l) => l.includes("FAIL")).join("; ")}`);
        }
      }
      // error-idempotency-conflict.yaml turns on senderMisbehaviour.reuseIdempotencyKey: idempotency-keys sees it.
      expect(failed).toEqual([expect.stringMatching(/^error-idempotency-conflict\.yaml: +FAIL +idempotency-keys: /)]);
    },
  );

  it("refuses a scenario with a mistake: file:line:column, exit 2", async () => {
    const bad = join(dir, "bad-scenario.yaml");
    await writeFile(bad, "name: x\ndomains: {}\n");
    const c = capture();
    expect(await exploreCheckAction(bad, {}, c.io)).toBe(2);
    expect(c.err.join("\n")).toMatch(/bad-scenario\.yaml:2:10: domains: /);
  });
});
