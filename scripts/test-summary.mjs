// Sums every suite of `npm test` into the one plain closing line CI reads:
// `N passed, N failed, N skipped`. Typecheck, lint, format, generated files and build count as
// one check each; Vitest and Playwright count their tests.
//
//   node scripts/test-summary.mjs <reports dir> --steps typecheck,lint,…,unit[,e2e] [--quick]
//
// It fails closed: the expected steps come from scripts/test.sh (`--steps`, the one list of
// steps), and each of them must have left a status file holding `pass` or `fail`. A step whose
// status is missing or anything else, a status file of a step not in the list, a suite whose
// report is missing, unreadable or not the shape its runner writes: each is a failure with a
// line saying so. The failed tests are named (file, test, the first line of why; at most 12 a
// suite), and notes (end-to-end tests not run under `--quick`, or skipped) follow, on lines
// above the closing line, which is always printed and always last: CI shows the output's tail.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";

/** Suites with a JSON report: how to count their tests, and what the note calls them. */
const SUITES = {
  unit: {
    report: "vitest.json",
    count: (r) => ({
      passed: r.numPassedTests,
      failed: r.numFailedTests,
      skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
    }),
    failures: vitestFailures,
  },
  e2e: {
    report: "playwright.json",
    count: (r) => ({
      passed: r.stats?.expected + (r.stats?.flaky ?? 0),
      failed: r.stats?.unexpected,
      skipped: r.stats?.skipped,
    }),
    failures: playwrightFailures,
  },
};

/** How many failed tests the summary names (CI shows the output's tail: the names must sit near it). */
const MAX_NAMED = 12;

/** A failure message's first line, without colour codes, at most 200 characters. */
function firstLine(message) {
  const line =
    String(message ?? "")
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .find((l) => l.trim() !== "") ?? "";
  const trimmed = line.trim();
  return trimmed.length > 200 ? `${trimmed.slice(0, 199)}…` : trimmed;
}

/** A path under the working directory relative to it, any other as given. */
function shortPath(path) {
  const rel = relative(process.cwd(), path);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

/** Vitest's JSON report: each failed test (file › name: first line of why), and each file that failed outside a test. */
function vitestFailures(r) {
  const out = [];
  for (const file of Array.isArray(r.testResults) ? r.testResults : []) {
    const name = typeof file.name === "string" ? shortPath(file.name) : "?";
    const failedTests = (Array.isArray(file.assertionResults) ? file.assertionResults : []).filter(
      (t) => t.status === "failed",
    );
    for (const t of failedTests) {
      out.push(`${name} › ${t.fullName ?? t.title ?? "?"}: ${firstLine(t.failureMessages?.[0])}`);
    }
    if (file.status === "failed" && failedTests.length === 0) out.push(`${name}: ${firstLine(file.message)}`);
  }
  return out;
}

/** Playwright's JSON report: each test whose outcome was unexpected (file:line › title: first line of why). */
function playwrightFailures(r) {
  const out = [];
  const walk = (suite, titles) => {
    for (const spec of Array.isArray(suite.specs) ? suite.specs : []) {
      for (const t of Array.isArray(spec.tests) ? spec.tests : []) {
        if (t.status !== "unexpected") continue;
        const error = (t.results ?? []).map((x) => x.error?.message).find((m) => m !== undefined);
        const title = [...titles, spec.title].filter((x) => x !== "").join(" › ");
        out.push(`${spec.file ?? "?"}:${spec.line ?? "?"} [${t.projectName ?? "?"}] › ${title}: ${firstLine(error)}`);
      }
    }
    for (const child of Array.isArray(suite.suites) ? suite.suites : []) {
      walk(child, child.file !== undefined && child.title === child.file ? titles : [...titles, child.title ?? ""]);
    }
  };
  for (const suite of Array.isArray(r.suites) ? r.suites : []) walk(suite, []);
  return out;
}

/**
 * Reads the arguments; on a wrong one returns `{ error }` rather than throwing.
 * @param {string[]} argv
 */
function parseArgs(argv) {
  let dir;
  let steps;
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") quick = true;
    else if (arg === "--steps") {
      const value = argv[++i];
      if (value === undefined) return { error: "--steps needs a comma-separated list of steps" };
      steps = value.split(",").filter((s) => s !== "");
    } else if (arg.startsWith("--")) return { error: `unknown option ${arg}` };
    else if (dir === undefined) dir = arg;
    else return { error: `unexpected argument ${arg}` };
  }
  if (steps === undefined || steps.length === 0) {
    return { error: "no list of expected steps (--steps a,b,c): nothing can be checked" };
  }
  return { dir: dir ?? ".reports", steps, quick };
}

const isCount = (n) => Number.isInteger(n) && n >= 0;

/**
 * Sums the reports in `dir` for the expected `steps`.
 * @returns {{ lines: string[], notes: string[], passed: number, failed: number, skipped: number }}
 */
function summarize(dir, steps, quick) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const lines = [];
  const notes = [];
  const failures = [];
  const fail = (name, why) => {
    failed++;
    lines.push(`${name.padEnd(10)} FAILED: ${why}`);
  };
  const read = (name) => {
    const path = join(dir, name);
    if (!existsSync(path)) return { missing: true };
    try {
      return { text: readFileSync(path, "utf8") };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  };

  for (const step of steps) {
    const file = read(`${step}.status`);
    if (file.missing) {
      fail(step, `no status (${step}.status missing): the step did not run or did not finish`);
      continue;
    }
    if (file.error !== undefined) {
      fail(step, `unreadable status: ${file.error}`);
      continue;
    }
    const status = file.text.trim();
    if (status !== "pass" && status !== "fail") {
      fail(step, `unknown status ${JSON.stringify(status.slice(0, 40))} (expected pass or fail)`);
      continue;
    }
    const suite = SUITES[step];
    if (suite === undefined) {
      if (status === "pass") passed++;
      else failed++;
      lines.push(`${step.padEnd(10)} ${status}`);
      continue;
    }
    const report = read(suite.report);
    if (report.missing || report.text === "") {
      fail(step, `crashed before reporting (no ${suite.report})`);
      continue;
    }
    if (report.error !== undefined) {
      fail(step, `unreadable report ${suite.report}: ${report.error}`);
      continue;
    }
    let parsed;
    try {
      parsed = JSON.parse(report.text);
    } catch (error) {
      fail(step, `malformed report ${suite.report}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const c = parsed !== null && typeof parsed === "object" ? suite.count(parsed) : {};
    if (!isCount(c.passed) || !isCount(c.failed) || !isCount(c.skipped)) {
      fail(step, `report ${suite.report} holds no test counts`);
      continue;
    }
    if (status === "fail" && c.failed === 0) c.failed = 1; // e.g. an error outside any test
    passed += c.passed;
    failed += c.failed;
    skipped += c.skipped;
    lines.push(`${step.padEnd(10)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    if (c.failed > 0 && suite.failures !== undefined) {
      let named = [];
      try {
        named = suite.failures(parsed);
      } catch {
        // The counts above already fail the suite; its names are a help, not a check.
      }
      for (const failure of named.slice(0, MAX_NAMED)) failures.push(`failed: ${failure}`);
      if (named.length > MAX_NAMED) failures.push(`failed: … and ${named.length - MAX_NAMED} more (${suite.report})`);
    }
    if (step === "e2e" && c.skipped > 0)
      notes.push(
        `note: ${c.skipped} end-to-end test${c.skipped === 1 ? " was" : "s were"} skipped (see the e2e lines above for why)`,
      );
    if (step === "e2e" && c.passed + c.failed === 0) notes.push("note: no end-to-end test ran");
  }

  let others = [];
  try {
    others = readdirSync(dir)
      .filter((f) => f.endsWith(".status"))
      .map((f) => f.slice(0, -".status".length))
      .filter((name) => !steps.includes(name));
  } catch {
    // A missing directory: every expected step has already failed above.
  }
  for (const name of others.sort()) fail(name, "a status for a step not in the list of expected steps");

  if (quick && !steps.includes("e2e")) notes.push("note: end-to-end tests did not run (--quick)");
  return { lines, notes: [...failures, ...notes], passed, failed, skipped };
}

let passed = 0;
let failed = 0;
let skipped = 0;
const out = [];
try {
  const args = parseArgs(process.argv.slice(2));
  if (args.error !== undefined) {
    failed++;
    out.push(`summary    FAILED: ${args.error}`);
  } else {
    const s = summarize(args.dir, args.steps, args.quick);
    ({ passed, failed, skipped } = s);
    for (const line of [...s.lines, ...s.notes]) out.push(line);
  }
} catch (error) {
  failed++;
  out.push(`summary    FAILED: ${error instanceof Error ? error.message : String(error)}`);
}
console.log("\n== summary ==");
for (const line of out) console.log(line);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 ? 1 : 0;
