/**
 * The summarizer of `npm test` fails closed: each way a step or a report can
 * go missing or wrong is a failure with a line of its own, the closing line is
 * always printed and always last, and nothing crashes with a stack trace.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("./test-summary.mjs", import.meta.url));
const STEPS = ["typecheck", "lint", "format", "generated", "build", "unit", "e2e"];
const UNIT_OK = { numPassedTests: 10, numFailedTests: 0, numPendingTests: 1, numTodoTests: 0 };
const E2E_OK = { stats: { expected: 4, flaky: 0, unexpected: 0, skipped: 0 } };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A reports directory: each status and report as given (a string is written as is). */
function reports(files: Record<string, string | object>): string {
  const dir = mkdtempSync(join(tmpdir(), "mailscope-summary-"));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
  }
  return dir;
}

/** Every step passed, with both reports. */
function green(overrides: Record<string, string | object | undefined> = {}): Record<string, string | object> {
  const files: Record<string, string | object | undefined> = {
    ...Object.fromEntries(STEPS.map((s) => [`${s}.status`, "pass\n"])),
    "vitest.json": UNIT_OK,
    "playwright.json": E2E_OK,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(files).filter((e): e is [string, string | object] => e[1] !== undefined));
}

function summarize(args: string[]): { code: number | null; lines: string[]; stderr: string } {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8" });
  return { code: run.status, lines: run.stdout.trimEnd().split("\n"), stderr: run.stderr };
}

function run(dir: string, steps = STEPS, extra: string[] = []) {
  return summarize([dir, "--steps", steps.join(","), ...extra]);
}

describe("scripts/test-summary.mjs", () => {
  it("sums every step and suite into the closing line, exit 0 when all passed", () => {
    const { code, lines, stderr } = run(reports(green()));
    expect(lines.at(-1)).toBe("19 passed, 0 failed, 1 skipped");
    expect(lines).toContain("unit       10 passed, 0 failed, 1 skipped");
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });

  it("a step of the list whose status file is missing is a failure", () => {
    const { code, lines } = run(reports(green({ "lint.status": undefined })));
    expect(lines).toContain(
      "lint       FAILED: no status (lint.status missing): the step did not run or did not finish",
    );
    expect(lines.at(-1)).toBe("18 passed, 1 failed, 1 skipped");
    expect(code).toBe(1);
  });

  it("a status other than pass or fail is a failure", () => {
    for (const status of ["", "ok\n", "PASS", "passed"]) {
      const { code, lines } = run(reports(green({ "format.status": status })));
      expect(lines.some((l) => l.startsWith("format     FAILED: unknown status"))).toBe(true);
      expect(lines.at(-1)).toBe("18 passed, 1 failed, 1 skipped");
      expect(code).toBe(1);
    }
  });

  it("a status for a step not in the list is a failure (a step added to test.sh only)", () => {
    const { code, lines } = run(reports(green({ "newcheck.status": "pass\n" })));
    expect(lines).toContain("newcheck   FAILED: a status for a step not in the list of expected steps");
    expect(lines.at(-1)).toBe("19 passed, 1 failed, 1 skipped");
    expect(code).toBe(1);
  });

  it("a step in the list with no command behind it never passes (a step added to the list only)", () => {
    const { code, lines } = run(reports(green()), [...STEPS, "newcheck"]);
    expect(lines.some((l) => l.startsWith("newcheck   FAILED: no status"))).toBe(true);
    expect(code).toBe(1);
  });

  it("a malformed report is a failure with a clear line, no stack trace, and the closing line", () => {
    const { code, lines, stderr } = run(reports(green({ "vitest.json": '{"numPassedTests": 3,' })));
    expect(lines.some((l) => l.startsWith("unit       FAILED: malformed report vitest.json:"))).toBe(true);
    expect(lines.at(-1)).toBe("9 passed, 1 failed, 0 skipped");
    expect(stderr).toBe("");
    expect(lines.join("\n")).not.toMatch(/\n\s+at /);
    expect(code).toBe(1);
  });

  it("a report that parses but holds no counts is a failure", () => {
    for (const report of ["null", "[]", "{}", '{"numPassedTests":"3","numFailedTests":0}']) {
      const { code, lines } = run(reports(green({ "vitest.json": report })));
      expect(lines).toContain("unit       FAILED: report vitest.json holds no test counts");
      expect(code).toBe(1);
    }
    const { lines } = run(reports(green({ "playwright.json": { stats: {} } })));
    expect(lines).toContain("e2e        FAILED: report playwright.json holds no test counts");
  });

  it("a missing or empty report is a failure (the suite crashed before reporting)", () => {
    for (const report of [undefined, ""]) {
      const { code, lines } = run(reports(green({ "playwright.json": report })));
      expect(lines).toContain("e2e        FAILED: crashed before reporting (no playwright.json)");
      expect(lines.at(-1)).toBe("15 passed, 1 failed, 1 skipped");
      expect(code).toBe(1);
    }
  });

  it("an unreadable report is a failure with a clear line", () => {
    const dir = reports(green({ "vitest.json": undefined }));
    mkdirSync(join(dir, "vitest.json")); // reading a directory fails (EISDIR)
    const { code, lines, stderr } = run(dir);
    expect(lines.some((l) => l.startsWith("unit       FAILED: unreadable report vitest.json:"))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\d+ passed, 1 failed, \d+ skipped$/);
    expect(stderr).toBe("");
    expect(code).toBe(1);
  });

  it("the failed tests are named above the closing line, with the first line of why (CI shows the tail)", () => {
    const unit = {
      ...UNIT_OK,
      numPassedTests: 9,
      numFailedTests: 1,
      testResults: [
        {
          name: join(process.cwd(), "app/a.test.ts"),
          status: "failed",
          assertionResults: [
            { fullName: "RETRY-3: waits", status: "passed", failureMessages: [] },
            {
              fullName: "RETRY-4: doubles",
              status: "failed",
              failureMessages: ["\u001b[31mAssertionError: expected 2 to be 4\u001b[39m\n    at app/a.test.ts:9"],
            },
          ],
        },
        {
          name: "/elsewhere/b.test.ts",
          status: "failed",
          message: "\nError: Cannot find module './x'",
          assertionResults: [],
        },
      ],
    };
    const test = (title: string, status: string, message?: string) => ({
      projectName: "chromium",
      status,
      results: [message === undefined ? {} : { error: { message } }],
    });
    const e2e = {
      stats: { expected: 3, flaky: 0, unexpected: 1, skipped: 0 },
      suites: [
        {
          title: "run.spec.ts",
          file: "run.spec.ts",
          specs: [],
          suites: [
            {
              title: "running scenarios",
              file: "run.spec.ts",
              specs: [
                { title: "happy-path", file: "run.spec.ts", line: 67, tests: [test("happy-path", "expected")] },
                {
                  title: "bounced",
                  file: "run.spec.ts",
                  line: 86,
                  tests: [test("bounced", "unexpected", "Error: expect(locator).toHaveText(expected)\nmore")],
                },
              ],
            },
          ],
        },
      ],
    };
    const { code, lines } = run(
      reports(green({ "unit.status": "fail\n", "e2e.status": "fail\n", "vitest.json": unit, "playwright.json": e2e })),
    );
    expect(lines.slice(-4)).toEqual([
      "failed: app/a.test.ts › RETRY-4: doubles: AssertionError: expected 2 to be 4",
      "failed: /elsewhere/b.test.ts: Error: Cannot find module './x'",
      "failed: run.spec.ts:86 [chromium] › running scenarios › bounced: Error: expect(locator).toHaveText(expected)",
      "17 passed, 2 failed, 1 skipped",
    ]);
    expect(code).toBe(1);
  });

  it("at most 12 failed tests a suite are named, then how many more", () => {
    const results = Array.from({ length: 15 }, (_, i) => ({
      fullName: `t${i}`,
      status: "failed",
      failureMessages: ["Error: no"],
    }));
    const unit = {
      ...UNIT_OK,
      numFailedTests: 15,
      testResults: [{ name: "/x/a.test.ts", status: "failed", assertionResults: results }],
    };
    const { lines } = run(reports(green({ "unit.status": "fail\n", "vitest.json": unit })));
    expect(lines.filter((l) => l.startsWith("failed: /x/a.test.ts › "))).toHaveLength(12);
    expect(lines).toContain("failed: … and 3 more (vitest.json)");
  });

  it("a failed suite whose report counts no failure still counts one", () => {
    const { code, lines } = run(reports(green({ "unit.status": "fail\n" })));
    expect(lines).toContain("unit       10 passed, 1 failed, 1 skipped");
    expect(code).toBe(1);
  });

  it("a missing reports directory fails every step, with the closing line", () => {
    const { code, lines } = run(join(tmpdir(), "mailscope-summary-no-such-dir"));
    expect(lines.filter((l) => l.includes("FAILED: no status"))).toHaveLength(STEPS.length);
    expect(lines.at(-1)).toBe(`0 passed, ${STEPS.length} failed, 0 skipped`);
    expect(code).toBe(1);
  });

  it("no list of steps is a failure: nothing could be checked", () => {
    const { code, lines } = summarize([reports(green())]);
    expect(lines).toContain("summary    FAILED: no list of expected steps (--steps a,b,c): nothing can be checked");
    expect(lines.at(-1)).toBe("0 passed, 1 failed, 0 skipped");
    expect(code).toBe(1);
  });

  it("--quick: a note that end-to-end tests did not run, above the closing line", () => {
    const steps = STEPS.filter((s) => s !== "e2e");
    const { code, lines } = run(reports(green({ "e2e.status": undefined, "playwright.json": undefined })), steps, [
      "--quick",
    ]);
    expect(lines.at(-2)).toBe("note: end-to-end tests did not run (--quick)");
    expect(lines.at(-1)).toBe("15 passed, 0 failed, 1 skipped");
    expect(code).toBe(0);
  });

  it("skipped end-to-end tests are noted above the closing line", () => {
    const e2e = { stats: { expected: 2, flaky: 0, unexpected: 0, skipped: 3 } };
    const { code, lines } = run(reports(green({ "playwright.json": e2e })));
    expect(lines.at(-2)).toBe("note: 3 end-to-end tests were skipped (see the e2e lines above for why)");
    expect(lines.at(-1)).toBe("17 passed, 0 failed, 4 skipped");
    expect(code).toBe(0);
  });

  it("test.sh hands the summarizer its own list of steps, each with a command", () => {
    const script = readFileSync(fileURLToPath(new URL("./test.sh", import.meta.url)), "utf8");
    const list = /^steps=\(([^)]*)\)$/m.exec(script)?.[1]?.split(/\s+/) ?? [];
    expect([...list, "e2e"]).toEqual(STEPS);
    for (const step of STEPS) expect(script).toMatch(new RegExp(`^\\s+${step}\\) `, "m"));
    expect(script).toContain('node scripts/test-summary.mjs "$reports" "${summary_args[@]}"');
  });
});
