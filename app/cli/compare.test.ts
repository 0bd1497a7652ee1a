/**
 * `mailscope compare` (README, "Compare and fork"): the difference table and
 * verdicts of two readings, two seeds and a fork, `--json`, the exit codes
 * (0 same, 1 differ, 2 bad input) and located errors for bad settings.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareCommandAction } from "./compare.ts";
import { main } from "./main.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

const G16 = "scenarios/gap-G16-fallback-window-4h.yaml";
const G16_DEFAULT = "scenarios/gap-G16-fallback-window-2h.yaml";

describe("mailscope compare", () => {
  it("G16 1h vs 4h (RETRY-4, RETRY-5): the table flags every field, the verdict reads smtp at +1:03:00 vs accepted at +3:03:00; exit 1", async () => {
    const { io, out, err } = capture();
    const code = await compareCommandAction(G16, { set: ["G16=fallback-window=1h", "G16=fallback-window=4h"] }, io);
    expect(err).toEqual([]);
    expect(code).toBe(1);
    expect(out[0]).toBe(`gap-G16-fallback-window-4h (${G16}): two runs compared`);
    expect(out[1]).toMatch(/^ {2}A: G16=fallback-window=1h \(seed 16; \d+ events\)$/);
    expect(out).toContain("m1 bob@b.example");
    expect(out).toContain("  outcome   smtp (fallback)  accepted  *");
    expect(out).toContain("  time      +1:03:00         +3:03:00  *");
    expect(out).toContain("  attempts  7                9         *");
    expect(out).toContain("  m1 bob@b.example: different outcome: smtp at +1:03:00 vs accepted at +3:03:00");
    // Where the runs part: where the 1 h window makes A hand off and B retry — not at attempt 1, judged alike
    // under another window (note 0039).
    expect(out).toContain(
      "The runs first part at +1:03:00, after 13 decisions alike: A +1:03:00 handed bob@b.example to SMTP (fallback); the relay accepted [STATE-3]; B +1:03:00 m1@a.example→b.example: attempt 8 in 1h [RETRY-2].",
    );
    expect(out.at(-1)).toBe("Differ: 1 of 1 recipient ended differently.");
  });

  it("the same reading twice: nothing flagged, exit 0", async () => {
    const { io, out } = capture();
    expect(await compareCommandAction(G16, { set: ["G7=enforced", "G7=enforced"] }, io)).toBe(0);
    expect(out).toContain("  m1 bob@b.example: same: accepted at +3:03:00");
    expect(out.some((l) => l.endsWith("*"))).toBe(false);
    expect(out).toContain("The runs never part: they make the same 19 decisions.");
    expect(out.at(-1)).toBe("Same: all 1 recipient ended alike.");
  });

  it("two seeds: --seed-a and --seed-b (jitter on moves the retries)", async () => {
    const { io, out } = capture();
    const code = await compareCommandAction(
      "scenarios/gap-G16-jitter-on.yaml",
      { seedA: "1", seedB: "2", json: true },
      io,
    );
    const json = JSON.parse(out.join("\n")) as { runs: { seed: unknown; describe: string }[]; same: boolean };
    expect(json.runs.map((r) => r.seed)).toEqual([1, 2]);
    expect(json.runs[0]?.describe).toBe("seed 1");
    expect(code).toBe(json.same ? 0 : 1);
  });

  it("fork at +0:30:00 ending the outage: the fork delivers while the original goes to SMTP; identical before the fork; --save-fork writes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-compare-"));
    const saved = join(dir, "fork.yaml");
    const { io, out } = capture();
    const code = await compareCommandAction(
      G16_DEFAULT,
      { forkAt: "+0:30:00", endFault: "b-down", saveFork: saved, json: true },
      io,
    );
    expect(code).toBe(1);
    const json = JSON.parse(out.join("\n")) as {
      lines: { verdict: string; differs: string[]; a: { outcome: string }; b: { outcome: string } }[];
      prefix: { identical: boolean; forkAt: string; text: string; hashA: string; hashB: string };
      runs: { describe: string }[];
    };
    expect(json.lines[0]?.verdict).toBe("smtp at +2:03:00 vs accepted at +0:31:00");
    expect(json.lines[0]?.differs).toContain("outcome");
    expect(json.prefix).toMatchObject({ identical: true, forkAt: "+0:30:00" });
    expect(json.prefix.hashA).toBe(json.prefix.hashB);
    expect(json.runs[1]?.describe).toBe(
      "the fork: Forked from gap-G16-fallback-window-2h at +0:30:00: ended fault b-down.",
    );
    expect(readFileSync(saved, "utf8")).toContain("until: 30m");
    // The saved fork is a scenario: it runs.
    expect(await main(["run", saved])).toBe(0);
  });

  it("with --fork-at, every --set is a reading of both runs: G16 at 4h, the fork ending the outage at +1:00:00 delivers sooner", async () => {
    const { io, out } = capture();
    const code = await compareCommandAction(
      G16_DEFAULT,
      { forkAt: "1h", endFault: "b-down", set: ["G16=fallback-window=4h"], json: true },
      io,
    );
    expect(code).toBe(1);
    const json = JSON.parse(out.join("\n")) as {
      runs: { readings: Record<string, string> }[];
      lines: { verdict: string; kind: string }[];
      prefix: { identical: boolean };
    };
    expect(json.runs.map((r) => r.readings["G16"])).toEqual([
      "jitter=off, fallback-window=4h",
      "jitter=off, fallback-window=4h",
    ]);
    // The same outcome sooner: a class of its own, not "different".
    expect(json.lines[0]).toMatchObject({
      kind: "same-outcome",
      verdict: "accepted in both, at +3:03:00 vs +1:03:00; attempts 9 vs 7",
    });
    expect(json.prefix.identical).toBe(true);
  });

  it("bad input is exit 2 with a clear, located message", async () => {
    const cases: [Parameters<typeof compareCommandAction>[1], string | RegExp][] = [
      [{}, /^mailscope compare: compare needs two runs: --set A --set B/],
      [
        { set: ["G16=fallback-window=1h"] },
        "mailscope compare: --set given once: compare takes two, run A's then run B's (--set A --set B)",
      ],
      [{ set: ["a", "b", "c"] }, /^mailscope compare: --set given 3 times/],
      [{ set: ["G7=ignored", "G99=x"] }, /^mailscope compare: --set G99: /],
      [{ set: ["G7=ignored", "G16=fallback-window=9h"] }, /^mailscope compare: --set G16: /],
      [{ set: ["G7", "G7=ignored"] }, /^mailscope compare: --set takes <gap>=<reading>/],
      [
        { endFault: "b-down" },
        "mailscope compare: --end-fault, --start-fault, --probability and --submit need --fork-at <time>",
      ],
      [
        { forkAt: "soon", endFault: "b-down" },
        'mailscope compare: --fork-at takes a time after the start, e.g. 30m or +0:30:00; not "soon"',
      ],
      [{ forkAt: "30m" }, /^mailscope compare: --fork-at takes exactly one change/],
      [{ forkAt: "30m", probability: "b-down" }, /^mailscope compare: --probability takes <fault>=<0…1>/],
      [
        { forkAt: "30m", endFault: "nope" },
        `${G16_DEFAULT}:1:1: (fork): no fault nope in the scenario (its faults: b-down)`,
      ],
      [
        { forkAt: "3h", endFault: "b-down" },
        /^scenarios\/gap-G16-fallback-window-2h\.yaml:\d+:\d+: faults\.network\[0\]: fault b-down is not active at \+3:00:00/,
      ],
    ];
    for (const [options, message] of cases) {
      const { io, out, err } = capture();
      expect(await compareCommandAction(G16_DEFAULT, options, io), JSON.stringify(options)).toBe(2);
      expect(out).toEqual([]);
      expect(err[0]).toMatch(
        typeof message === "string" ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) : message,
      );
    }
  });

  it("a scenario with errors: file:line:column: field: message, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-compare-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "name: bad\ndomains:\n  a.example: {}\nfaults:\n  network:\n    - { kind: gremlins }\n");
    const { io, err } = capture();
    expect(await compareCommandAction(file, { set: ["G7=ignored", "G7=enforced"] }, io)).toBe(2);
    expect(err[0]).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:6:\\d+: faults\\.network\\[0\\]`),
    );
  });

  it("is a command of the program: exit codes through main", async () => {
    expect(
      await main(["compare", G16, "--set", "G16=fallback-window=1h", "--set", "G16=fallback-window=4h", "--json"]),
    ).toBe(1);
    expect(await main(["compare", G16, "--bogus"])).toBe(2);
  });
});
