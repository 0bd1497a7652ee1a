/**
 * `mailscope check` over the whole scenario library: every scenario in
 * scenarios/ must pass its expectations and the invariants, so `npm test`
 * runs the library as CI would (`mailscope check scenarios/`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scenarioJsonSchema } from "../sim/scenario.ts";
import { checkCommandAction, checkScenarios, formatCheckReport, junitXml } from "./check.ts";
import { rules } from "../protocol/rules.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe("mailscope check", () => {
  // The library grows; each scenario takes well under a second, the whole of it some seconds.
  it("every scenario of scenarios/ passes its expectations and the invariants", { timeout: 120_000 }, async () => {
    const report = await checkScenarios(["scenarios"]);
    expect(report.scenarios.length).toBeGreaterThanOrEqual(3);
    const failures = report.scenarios.filter((s) => s.status !== "passed");
    // On failure the message carries the table, each failed check and the command that reproduces it.
    expect(failures, formatCheckReport(report).join("\n")).toEqual([]);
    expect(report.passed).toBe(true);
  });

  it("schemas/scenario.schema.json is up to date (node scripts/gen-scenario-schema.ts)", () => {
    const onDisk = readFileSync("schemas/scenario.schema.json", "utf8");
    expect(onDisk).toBe(`${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
  });

  it("a failing scenario: exit 1, the failed check, and the command that reproduces it with its seed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-check-"));
    writeFileSync(
      join(dir, "wrong.yaml"),
      "name: wrong\nseed: 99\ndomains:\n  a.example: { mailboxes: [alice] }\n  b.example: { mailboxes: [bob] }\nmessages:\n  - { from: alice@a.example, to: bob@b.example }\nexpectations:\n  - { outcome: smtp }\n",
    );
    writeFileSync(join(dir, "broken.yaml"), "name: broken\ndomains:\n  a.example: { mailbox: [alice] }\n");
    const { io, out, err } = capture();
    const junit = join(dir, "out.xml");
    expect(await checkCommandAction([dir], { junit }, io)).toBe(1);
    expect(err).toEqual([
      expect.stringMatching(/^\[1\/2\] .*broken\.yaml INVALID \d+\.\d\d s$/),
      expect.stringMatching(/^\[2\/2\] .*wrong\.yaml FAILED \(1 of 8 checks\) \d+\.\d\d s$/),
    ]);
    const text = out.join("\n");
    expect(text).toContain("2 scenarios: 0 passed, 1 failed, 1 invalid");
    expect(text).toContain(`${join(dir, "broken.yaml")}:3:16: domains["a.example"].mailbox: unknown field "mailbox"`);
    expect(text).toContain(
      "expectations[0]: every message every recipient smtp: m1 bob@b.example: expected smtp, got accepted",
    );
    expect(text).toContain(`reproduce: mailscope run ${join(dir, "wrong.yaml")} --seed 99`);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="mailscope check" tests="9" failures="1" errors="1"/,
    );
    expect(xml).toContain('<testcase classname="');
    expect(xml).toContain("<failure message=");
    expect(xml).toContain("<error message=");
  });

  it("--json prints the report; no scenario files is exit 2", async () => {
    const { io, out } = capture();
    expect(await checkCommandAction(["scenarios/happy-path.yaml"], { json: true }, io)).toBe(0);
    const report = JSON.parse(out.join("\n")) as { passed: boolean; scenarios: { name: string; status: string }[] };
    expect(report.passed).toBe(true);
    expect(report.scenarios.map((s) => [s.name, s.status])).toEqual([["happy-path", "passed"]]);
    const empty = mkdtempSync(join(tmpdir(), "mailscope-empty-"));
    const second = capture();
    expect(await checkCommandAction([empty], {}, second.io)).toBe(2);
    expect(second.err.at(-1)).toContain("no scenario files (*.yaml)");
  });

  it("--coverage: per section, and the rules no scenario exercises; --json has them too", async () => {
    const files = ["scenarios/happy-path.yaml", "scenarios/rate-limited-then-down.yaml"];
    const { io, out } = capture();
    expect(await checkCommandAction(files, { coverage: true }, io)).toBe(0);
    const text = out.join("\n");
    expect(text).toMatch(/^rule coverage: \d+ of \d+ rules cited by some scenario's events \(\d+%\)$/m);
    expect(text).toMatch(/^section\s+rules\s+exercised\s+not\s+coverage$/m);
    expect(text).toMatch(/^States and transitions\s+\d+\s+\d+\s+\d+\s+\d+%$/m);
    // Neither scenario falls back to SMTP (STATE-3); the give-up (STATE-7) is exercised.
    expect(text).toMatch(/^rules no scenario exercises \(\d+\):$/m);
    expect(text).toMatch(/^ {2}STATE-3 /m);
    expect(text).not.toMatch(/^ {2}STATE-7 /m);

    const json = capture();
    expect(await checkCommandAction(files, { coverage: true, json: true }, json.io)).toBe(0);
    const report = JSON.parse(json.out.join("\n")) as {
      scenarios: { name: string; rulesCited: Record<string, number> }[];
      coverage: {
        covered: number;
        total: number;
        uncovered: string[];
        unknown: string[];
        rules: { id: string; events: number; scenarios: string[] }[];
      };
    };
    expect(report.coverage.total).toBe(rules.length);
    expect(report.coverage.covered + report.coverage.uncovered.length).toBe(rules.length);
    expect(report.coverage.uncovered).toContain("STATE-3");
    expect(report.coverage.unknown).toEqual([]);
    expect(report.coverage.rules.find((r) => r.id === "STATE-7")?.scenarios).toEqual(["rate-limited-then-down"]);
    expect(report.scenarios[1]?.rulesCited["STATE-7"]).toBe(3);
  });

  it("a --junit path in a missing folder is exit 2 before any scenario runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-check-"));
    const out: string[] = [];
    const err: string[] = [];
    const junit = join(dir, "no", "out.xml");
    expect(
      await checkCommandAction(
        ["scenarios/happy-path.yaml"],
        { junit },
        { out: (l) => out.push(l), err: (l) => err.push(l) },
      ),
    ).toBe(2);
    expect(err).toEqual([
      `mailscope check: --junit ${junit}: cannot be written: the folder ${join(dir, "no")} does not exist`,
    ]);
    expect(out).toEqual([]);
  });

  it("junitXml escapes what XML cannot hold", () => {
    const xml = junitXml({
      passed: false,
      wallMs: 1,
      scenarios: [
        {
          file: "a&b.yaml",
          name: 'say "hi" <now>',
          status: "failed",
          checks: [{ id: "x", passed: false, detail: "bad \u0001 & <worse>" }],
          errors: [],
          virtualMs: 0,
          wallMs: 1,
          events: 0,
        },
      ],
    });
    expect(xml).toContain('name="say &quot;hi&quot; &lt;now&gt;" file="a&amp;b.yaml"');
    expect(xml).toContain('<failure message="bad  &amp; &lt;worse&gt;">');
  });
});
