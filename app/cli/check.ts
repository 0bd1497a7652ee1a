/**
 * `mailscope check [paths…]`: plays every scenario (default: the `scenarios/`
 * folder), checks its expectations and the invariants, and prints a summary
 * table; a line per scenario goes to stderr as it runs. Exit 0 when every
 * scenario passed, 1 otherwise; each failure comes with the command that
 * reproduces it. `--junit out.xml` writes a JUnit report for CI, `--json` a
 * JSON one instead of the table. `--coverage` adds the rules catalogue's
 * coverage by the scenarios: per section, how many rules some scenario's
 * events cite, and the rules none does.
 */
import { Command, CommanderError } from "commander";
import { writeFile } from "node:fs/promises";
import { rules as catalogue } from "../protocol/rules.ts";
import { ruleCounts, ruleCoverage, type CoverageReport } from "../trace/ruleEvidence.ts";
import type { CheckResult } from "../trace/schema.ts";
import { eventsOf } from "../trace/store.ts";
import { xmlText as xml } from "../trace/xmlText.ts";
import { checkOutputPaths } from "../node/outputPaths.ts";
import { findScenarioFiles, loadScenarioFile } from "../node/scenarioLoader.ts";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { formatScenarioError } from "../sim/scenario.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { progressPrinter, progressWanted } from "./progress.ts";
import { formatOffset, readableRecordedText } from "../trace/offset.ts";
import { mailscopeVersion } from "./run.ts";
import type { RunProgress } from "../sim/runScenario.ts";
import { errorMessage } from "../errorMessage.ts";
import { maxOf } from "../protocol/lists.ts";

/** How one scenario fared. */
export interface ScenarioCheck {
  readonly file: string;
  /** The scenario's name (the file when it could not be read). */
  readonly name: string;
  /** passed: every check passed; failed: one did; invalid: the scenario could not be loaded or run. */
  readonly status: "passed" | "failed" | "invalid";
  readonly seed?: number | string;
  readonly checks: readonly CheckResult[];
  /** Problems with the scenario itself (`file:line:column: field: message`) or the run. */
  readonly errors: readonly string[];
  /** Virtual time the run covered. */
  readonly virtualMs: number;
  readonly wallMs: number;
  readonly events: number;
  /** The command that reproduces the run (passed and failed scenarios). */
  readonly reproduce?: string;
  /** With `coverage`: how many of the run's events cite each rule (`ruleCounts`). */
  readonly rulesCited?: Readonly<Record<string, number>>;
}

/** The whole check. */
export interface CheckReport {
  readonly scenarios: readonly ScenarioCheck[];
  readonly passed: boolean;
  readonly wallMs: number;
}

/** Options of {@link checkScenarios}. */
export interface CheckScenariosOptions {
  /** Called before and after each scenario (the progress lines). */
  readonly onProgress?: (event: {
    readonly index: number;
    readonly total: number;
    readonly file: string;
    readonly result?: ScenarioCheck;
  }) => void;
  readonly mailscope?: string;
  /** Keep each run's cited rules (`rulesCited`), for {@link coverageOf}. */
  readonly coverage?: boolean;
  /** Where a long run stands, as `runLoadedScenario` reports it: a callback per scenario file. */
  readonly runProgress?: (file: string) => (progress: RunProgress) => void;
}

/** Plays every scenario file under `paths` and checks it. Never throws for a bad scenario: it is `invalid`. */
export async function checkScenarios(
  paths: readonly string[],
  options: CheckScenariosOptions = {},
): Promise<CheckReport> {
  const started = performance.now();
  const files = await findScenarioFiles(paths);
  const scenarios: ScenarioCheck[] = [];
  for (const [index, file] of files.entries()) {
    options.onProgress?.({ index, total: files.length, file });
    const result = await checkOne(
      file,
      options.mailscope ?? mailscopeVersion(),
      options.coverage === true,
      options.runProgress?.(file),
    );
    scenarios.push(result);
    options.onProgress?.({ index, total: files.length, file, result });
  }
  return {
    scenarios,
    passed: scenarios.length > 0 && scenarios.every((s) => s.status === "passed"),
    wallMs: performance.now() - started,
  };
}

async function checkOne(
  file: string,
  mailscope: string,
  coverage: boolean,
  onProgress: ((progress: RunProgress) => void) | undefined,
): Promise<ScenarioCheck> {
  const started = performance.now();
  const load = await loadScenarioFile(file);
  if (!load.ok) {
    return {
      file,
      name: file,
      status: "invalid",
      checks: [],
      errors: load.errors.map(formatScenarioError),
      virtualMs: 0,
      wallMs: performance.now() - started,
      events: 0,
    };
  }
  const { scenario } = load.loaded;
  try {
    const run = await runLoadedScenario(load.loaded, { mailscope, ...(onProgress !== undefined && { onProgress }) });
    const checks = [...run.invariants, ...run.expectations];
    return {
      file,
      name: scenario.name,
      status: run.passed ? "passed" : "failed",
      seed: run.trace.seed,
      checks,
      errors: run.error !== undefined ? [run.error] : [],
      virtualMs: run.endMs - run.world.startMs,
      wallMs: performance.now() - started,
      // From the recorder's store when it holds them: a fleet's events are never all built as objects (0225).
      events: eventsOf(run.trace).length,
      reproduce: run.reproduce,
      ...(coverage && { rulesCited: ruleCounts(eventsOf(run.trace)) }),
    };
  } catch (error) {
    return {
      file,
      name: scenario.name,
      status: "invalid",
      seed: scenario.seed,
      checks: [],
      errors: [errorMessage(error)],
      virtualMs: 0,
      wallMs: performance.now() - started,
      events: 0,
    };
  }
}

/** The summary table, then each failure with its failed checks and the command that reproduces it. */
export function formatCheckReport(report: CheckReport): string[] {
  const rows = report.scenarios.map((s) => {
    const passed = s.checks.filter((c) => c.passed).length;
    return [
      s.file,
      s.status === "passed" ? "passed" : s.status === "failed" ? "FAILED" : "INVALID",
      s.status === "invalid" ? "-" : `${passed}/${s.checks.length}`,
      s.status === "invalid" ? "-" : formatOffset(s.virtualMs, 0).slice(1),
      `${(s.wallMs / 1000).toFixed(2)} s`,
    ];
  });
  const header = ["scenario", "result", "checks", "virtual", "wall"];
  const widths = header.map((h, i) =>
    maxOf(
      rows.map((r) => (r[i] ?? "").length),
      h.length,
    ),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const out = [line(header), ...rows.map(line)];
  const count = (status: ScenarioCheck["status"]): number => report.scenarios.filter((s) => s.status === status).length;
  out.push(
    "",
    report.scenarios.length === 0
      ? "no scenario files found"
      : `${report.scenarios.length} scenario${report.scenarios.length === 1 ? "" : "s"}: ${count("passed")} passed, ${count("failed")} failed, ${count("invalid")} invalid (${(report.wallMs / 1000).toFixed(2)} s)`,
  );
  for (const s of report.scenarios.filter((x) => x.status !== "passed")) {
    out.push("", `${s.status === "failed" ? "FAILED" : "INVALID"} ${s.file} (${s.name})`);
    for (const e of s.errors) out.push(`  ${e}`);
    for (const c of s.checks.filter((x) => !x.passed)) out.push(`  ${c.id}: ${readableRecordedText(c.detail ?? "")}`);
    if (s.reproduce !== undefined) out.push(`  reproduce: ${s.reproduce}`);
  }
  return out;
}

/** The report as JUnit XML: a test suite per scenario, a test case per check (one `load` case for an invalid scenario). */
export function junitXml(report: CheckReport): string {
  const failures = report.scenarios.reduce((n, s) => n + s.checks.filter((c) => !c.passed).length, 0);
  const errors = report.scenarios.filter((s) => s.status === "invalid").length;
  const tests = report.scenarios.reduce((n, s) => n + Math.max(1, s.checks.length), 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mailscope check" tests="${tests}" failures="${failures}" errors="${errors}" time="${seconds(report.wallMs)}">`,
  ];
  for (const s of report.scenarios) {
    const failed = s.checks.filter((c) => !c.passed).length;
    const cases = Math.max(1, s.checks.length);
    out.push(
      `  <testsuite name="${xml(s.name)}" file="${xml(s.file)}" tests="${cases}" failures="${failed}" errors="${s.status === "invalid" ? 1 : 0}" time="${seconds(s.wallMs)}">`,
    );
    if (s.status === "invalid") {
      out.push(
        `    <testcase classname="${xml(s.file)}" name="load">`,
        `      <error message="${xml(s.errors[0] ?? "invalid")}">${xml(s.errors.join("\n"))}</error>`,
        "    </testcase>",
      );
    }
    for (const c of s.checks) {
      const name = `<testcase classname="${xml(s.file)}" name="${xml(c.id)}"`;
      if (c.passed) {
        out.push(`    ${name}/>`);
      } else {
        const body = [c.detail ?? "", ...(s.reproduce !== undefined ? [`reproduce: ${s.reproduce}`] : [])].join("\n");
        out.push(
          `    ${name}>`,
          `      <failure message="${xml(c.detail ?? "failed")}">${xml(body)}</failure>`,
          "    </testcase>",
        );
      }
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>", "");
  return out.join("\n");
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** The catalogue's coverage by the scenarios that ran (those checked with `coverage`). */
export function coverageOf(report: CheckReport): CoverageReport {
  return ruleCoverage(
    report.scenarios.flatMap((s) => (s.rulesCited === undefined ? [] : [{ name: s.name, counts: s.rulesCited }])),
  );
}

/** The coverage as text: a table per section of the spec, then each rule no scenario exercises. */
export function formatCoverage(coverage: CoverageReport): string[] {
  const sections = new Map<string, { total: number; covered: number }>();
  for (const r of coverage.rules) {
    const s = sections.get(r.section) ?? { total: 0, covered: 0 };
    s.total += 1;
    if (r.events > 0) s.covered += 1;
    sections.set(r.section, s);
  }
  const pct = (covered: number, total: number): string =>
    total === 0 ? "-" : `${Math.round((100 * covered) / total)}%`;
  const table = (header: readonly string[], rows: readonly (readonly string[])[], right: number): string[] => {
    const widths = header.map((h, i) =>
      maxOf(
        rows.map((r) => (r[i] ?? "").length),
        h.length,
      ),
    );
    const line = (cells: readonly string[]): string =>
      cells
        .map((c, i) => (i >= right ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd();
    return [line(header), ...rows.map(line)];
  };
  const out = [
    `rule coverage: ${coverage.covered} of ${coverage.total} rules cited by some scenario's events (${pct(coverage.covered, coverage.total)})`,
    "",
    ...table(
      ["section", "rules", "exercised", "not", "coverage"],
      [...sections].map(([section, s]) => [
        section,
        String(s.total),
        String(s.covered),
        String(s.total - s.covered),
        pct(s.covered, s.total),
      ]),
      1,
    ),
  ];
  const texts = new Map<string, string>(catalogue.map((r) => [r.id, r.text]));
  const uncovered = coverage.rules.filter((r) => r.events === 0);
  out.push("", `rules no scenario exercises (${uncovered.length}):`);
  for (const r of uncovered) {
    const text = texts.get(r.id) ?? "";
    out.push(`  ${r.id.padEnd(10)} ${r.strength.padEnd(10)} ${text.length > 90 ? `${text.slice(0, 89)}…` : text}`);
  }
  if (coverage.unknown.length > 0) out.push("", `cited but not in the catalogue: ${coverage.unknown.join(", ")}`);
  return out;
}

/** The options of `check`, as commander hands them over. */
export interface CheckOptions {
  readonly json?: boolean;
  readonly junit?: string;
  readonly coverage?: boolean;
  /** Progress lines of long runs on stderr: true, false, or (undefined) when stderr is a terminal. */
  readonly progress?: boolean;
}

/** Runs the check and prints it; resolves to the exit code (0 all passed, 1 otherwise, 2 when no scenario was found). */
export async function checkCommandAction(
  paths: readonly string[],
  options: CheckOptions,
  io: CliIo = consoleIo,
): Promise<number> {
  const unwritable = await checkOutputPaths([["--junit", options.junit]]);
  if (unwritable !== undefined) {
    io.err(`mailscope check: ${unwritable}`);
    return 2;
  }
  const report = await checkScenarios(paths.length > 0 ? paths : ["scenarios"], {
    ...(options.coverage === true && { coverage: true }),
    ...(progressWanted(options.progress, io) && { runProgress: (file: string) => progressPrinter(io, file) }),
    onProgress: ({ index, total, file, result }) => {
      if (result === undefined) return;
      const what =
        result.status === "passed"
          ? `passed (${result.checks.length} checks)`
          : result.status === "failed"
            ? `FAILED (${result.checks.filter((c) => !c.passed).length} of ${result.checks.length} checks)`
            : "INVALID";
      io.err(`[${index + 1}/${total}] ${file} ${what} ${(result.wallMs / 1000).toFixed(2)} s`);
    },
  });
  if (options.junit !== undefined) await writeFile(options.junit, junitXml(report));
  const coverage = options.coverage === true ? coverageOf(report) : undefined;
  if (options.json === true) {
    // The per-scenario counts stay in the JSON: they say which scenario exercises which rule.
    io.out(JSON.stringify(coverage === undefined ? report : { ...report, coverage }, null, 2));
  } else {
    for (const line of formatCheckReport(report)) io.out(line);
    if (coverage !== undefined) for (const line of ["", ...formatCoverage(coverage)]) io.out(line);
  }
  if (report.scenarios.length === 0) {
    io.err(`mailscope check: no scenario files (*.yaml) under ${paths.length > 0 ? paths.join(", ") : "scenarios"}`);
    return 2;
  }
  return report.passed ? 0 : 1;
}

/** `mailscope check [paths…] [--json] [--junit out.xml] [--coverage]`. */
export function checkCommand(): Command {
  return new Command("check")
    .description("play every scenario (default scenarios/) and check its expectations and the invariants")
    .argument("[paths...]", "scenario files or folders (searched recursively); default scenarios/")
    .option("--json", "print the report as JSON instead of the table")
    .option("--junit <out.xml>", "also write the report as JUnit XML")
    .option("--coverage", "also report which rules of the catalogue no scenario's events cite")
    .option("--progress", "print the progress of long runs to stderr about once a second (default on a terminal)")
    .option("--no-progress", "print no progress of long runs")
    .action(async (paths: string[], options: CheckOptions) => {
      const code = await checkCommandAction(paths, options);
      if (code !== 0) throw new CommanderError(code, "mailscope.check.exit", "");
    });
}
