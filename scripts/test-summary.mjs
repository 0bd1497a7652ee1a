// Sums every suite of `npm test` into the one plain closing line CI reads:
// `N passed, N failed, N skipped`. Typecheck, lint, format, generated files and build count as
// one check each; Vitest and Playwright count their tests. A suite that
// crashed before writing its report counts as one failure.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? ".reports";
const read = (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : undefined);
let passed = 0;
let failed = 0;
let skipped = 0;
const lines = [];

for (const check of ["typecheck", "lint", "format", "generated", "build"]) {
  const status = read(`${check}.status`)?.trim();
  if (status === "pass") passed++;
  else if (status === "fail") failed++;
  else continue;
  lines.push(`${check.padEnd(10)} ${status}`);
}

function suite(name, reportFile, statusFile, count) {
  const status = read(statusFile)?.trim();
  if (status === undefined) return;
  const report = read(reportFile);
  if (!report) {
    failed++;
    lines.push(`${name.padEnd(10)} crashed before reporting`);
    return;
  }
  const c = count(JSON.parse(report));
  if (status === "fail" && c.failed === 0) c.failed = 1; // e.g. an error outside any test
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
  lines.push(`${name.padEnd(10)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
}

suite("unit", "vitest.json", "unit.status", (r) => ({
  passed: r.numPassedTests ?? 0,
  failed: r.numFailedTests ?? 0,
  skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
}));
suite("e2e", "playwright.json", "e2e.status", (r) => ({
  passed: (r.stats?.expected ?? 0) + (r.stats?.flaky ?? 0),
  failed: r.stats?.unexpected ?? 0,
  skipped: r.stats?.skipped ?? 0,
}));

console.log("\n== summary ==");
for (const line of lines) console.log(line);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 ? 1 : 0;
