/**
 * `mailscope explore`: searches the space of worlds and faults from one seed
 * (docs/explore.md). Each run draws a small world and its faults
 * (app/explore/generate.ts), runs it with the engine, judges it by every
 * property and reads what it covered; the runs that add coverage join a
 * corpus, a violation is shrunk to a small scenario with a bug bundle and the
 * command that reproduces it, and the smallest world of each path through
 * the delivery machine goes into a gallery.
 *
 * - `mailscope explore [--runs N | --time 60s] [--seed S] [--workers K]`
 *   explores and writes `<out>/report.json`, `<out>/violations/` and
 *   `<out>/gallery/`; `--shard i/n` explores one shard and writes
 *   `<out>/shard-i-of-n.json`, and `mailscope explore merge <shard files…>`
 *   makes the report one process would have written from them.
 * - `mailscope explore --run <seed>` builds and judges one run's world again.
 * - `mailscope explore check <scenario>` judges a scenario file (a shrunk one)
 *   by every property.
 *
 * Exit 0 when every property held, 1 on a violation, 2 for bad input.
 */
import { Command, CommanderError } from "commander";
import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { generateWorld, scenarioYaml, worldSize } from "../explore/generate.ts";
import { parseGenome } from "../explore/genome.ts";
import { BUILT_IN_PROPERTIES, judgeLoaded, judgeScenario, type Judgement } from "../explore/judge.ts";
import { exploreOptions, readExploreOptions, type ExploreOptions } from "../explore/options.ts";
import {
  buildReport,
  corpusAdditions,
  exploreHeader,
  mergeShards,
  reportText,
  shardFile,
  sizeWords,
  type ExploreFiles,
  type ExploreReport,
} from "../explore/report.ts";
import { shardLanes, type CorpusEntry, type LaneResult, type RunReport } from "../explore/search.ts";
import { parseUserProperties, type UserProperty } from "../explore/userProperties.ts";
import { readBoundedText, readErrorReason } from "../node/boundedRead.ts";
import { runLanesInWorkers } from "../node/exploreWorkers.ts";
import { checkOutputPaths } from "../node/outputPaths.ts";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import { parseDurationMs } from "../sim/faultScope.ts";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { formatScenarioError, loadScenario } from "../sim/scenario.ts";
import type { Seed } from "../sim/random.ts";
import { formatFileError } from "../sim/yamlPosition.ts";
import { BUNDLE_SUFFIX, bundleText, createBundle } from "../trace/bundle.ts";
import { xmlText } from "../trace/xmlText.ts";
import { readableRecordedText } from "../trace/offset.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { PROGRESS_INTERVAL_MS } from "./progress.ts";
import { mailscopeVersion, parseSeed } from "./run.ts";

/** Exit codes: 0 every property held, 1 a violation, 2 bad input. */
export const EXPLORE_EXIT = { held: 0, violated: 1, badInput: 2 } as const;

/** Runs when neither `--runs` nor `--time` is given. */
export const DEFAULT_RUNS = 1000;
/** Where the report and its files go unless `--out` says. */
export const DEFAULT_OUT = "explore-report";
/** The most bytes of an options or properties file. */
const SMALL_FILE_BYTES = 1_048_576;

/** The options of `explore`, as commander hands them over. */
export interface ExploreCliOptions {
  readonly seed?: string;
  readonly runs?: string;
  readonly time?: string;
  readonly workers?: string;
  readonly shard?: string;
  readonly out?: string;
  readonly corpus?: string;
  readonly properties?: string;
  readonly options?: string;
  readonly json?: boolean;
  readonly junit?: string;
  readonly progress?: boolean;
  readonly run?: string;
}

class BadInput extends Error {}
/** Errors located in a file (`file:line:column: field: message`), printed as they are. */
class LocatedErrors extends BadInput {}

function positiveInt(option: string, text: string, max: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1 || Number(text) > max) {
    throw new BadInput(`${option} ${text}: a whole number from 1 to ${max}`);
  }
  return Number(text);
}

/** `--shard 2/4` → `{ index: 2, count: 4 }`. */
export function parseShard(text: string, lanes: number): { index: number; count: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (match === null) throw new BadInput(`--shard ${text}: write the shard as i/n, e.g. 1/4 (the first of four)`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1) throw new BadInput(`--shard ${text}: there is at least one shard`);
  if (index < 1 || index > count) throw new BadInput(`--shard ${text}: the shard's number is 1 to ${count}`);
  if (count > lanes) {
    throw new BadInput(
      `--shard ${text}: an exploration has ${lanes} lanes, so at most ${lanes} shards (set lanes in --options for more)`,
    );
  }
  return { index, count };
}

/** Reads a small text file (options, properties), or a bad-input error naming it. */
async function readSmall(option: string, file: string): Promise<string> {
  try {
    return await readBoundedText(file, `${option} files`, SMALL_FILE_BYTES);
  } catch (error) {
    throw new BadInput(`${option} ${file}: cannot be read: ${readErrorReason(error)}`);
  }
}

/** The user's properties file (`--properties`), read and checked; none when no file is named. */
async function readProperties(file: string | undefined): Promise<readonly UserProperty[]> {
  if (file === undefined) return [];
  const read = parseUserProperties(
    await readSmall("--properties", file),
    file,
    BUILT_IN_PROPERTIES.map((p) => p.id),
  );
  if (!read.ok) throw new LocatedErrors(read.errors.map(formatFileError).join("\n"));
  return read.properties;
}

/** Everything the command line says, read and checked. */
interface Settings {
  readonly seed: Seed;
  readonly runs?: number;
  readonly timeMs?: number;
  readonly workers: number;
  readonly shard?: { index: number; count: number };
  readonly out: string;
  readonly corpusDir?: string;
  readonly options: ExploreOptions;
  readonly properties: readonly UserProperty[];
  /** The options and properties files, for reproduce commands. */
  readonly files: ExploreFiles;
}

async function readSettings(options: ExploreCliOptions): Promise<Settings> {
  let explore = exploreOptions();
  if (options.options !== undefined) {
    const read = readExploreOptions(await readSmall("--options", options.options), options.options);
    if (!read.ok) throw new LocatedErrors(read.errors.map(formatFileError).join("\n"));
    explore = read.options;
  }
  const properties = await readProperties(options.properties);
  const runs = options.runs !== undefined ? positiveInt("--runs", options.runs, 100_000_000) : undefined;
  let timeMs: number | undefined;
  if (options.time !== undefined) {
    timeMs = parseDurationMs(options.time);
    if (timeMs === undefined || timeMs <= 0) {
      throw new BadInput(`--time ${options.time}: a duration such as 60s, 5m or 1h`);
    }
  }
  const workers =
    options.workers !== undefined ? positiveInt("--workers", options.workers, 256) : availableParallelism();
  const shard = options.shard !== undefined ? parseShard(options.shard, explore.lanes) : undefined;
  return {
    // A seed drawn at random when none is given; printed, so the exploration can be made again.
    seed: options.seed !== undefined ? parseSeed(options.seed) : Math.floor(Math.random() * 2 ** 32),
    ...(runs !== undefined ? { runs } : timeMs === undefined ? { runs: DEFAULT_RUNS } : {}),
    ...(timeMs !== undefined && { timeMs }),
    workers,
    ...(shard !== undefined && { shard }),
    out: options.out ?? DEFAULT_OUT,
    ...(options.corpus !== undefined && { corpusDir: options.corpus }),
    options: explore,
    properties,
    files: {
      ...(options.options !== undefined && { options: options.options }),
      ...(options.properties !== undefined && { properties: options.properties }),
    },
  };
}

/** ` --options f --properties g`: what `--run` needs to make the same world and judge it the same way. */
function runFlags(files: ExploreFiles): string {
  return `${files.options !== undefined ? ` --options ${shellQuote(files.options)}` : ""}${checkFlags(files)}`;
}

/** ` --properties g`: what `explore check` needs to judge a scenario the same way. */
function checkFlags(files: ExploreFiles): string {
  return files.properties !== undefined ? ` --properties ${shellQuote(files.properties)}` : "";
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** The format of a corpus entry's file. */
const CORPUS_FORMAT = "mailscope-explore-corpus";

/** Reads the corpus of `dir` (each `*.json` an entry), in file-name order; a missing folder is an empty corpus. */
export async function readCorpus(dir: string): Promise<CorpusEntry[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw new BadInput(`--corpus ${dir}: cannot be read: ${readErrorReason(error)}`);
  });
  const entries: CorpusEntry[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const file = join(dir, name);
    let value: unknown;
    try {
      value = JSON.parse(await readBoundedText(file, "corpus entries", SMALL_FILE_BYTES));
    } catch (error) {
      throw new BadInput(
        `${file}: not a corpus entry: ${error instanceof SyntaxError ? error.message : readErrorReason(error)}`,
      );
    }
    const entry = value as { format?: unknown; seed?: unknown; keys?: unknown };
    const seed = typeof entry.seed === "string" ? parseGenome(entry.seed) : undefined;
    if (entry.format !== CORPUS_FORMAT || seed === undefined || !seed.ok || !Array.isArray(entry.keys)) {
      throw new BadInput(
        `${file}: not a corpus entry of mailscope explore ({ "format": "${CORPUS_FORMAT}", "seed": "<run seed>", "keys": [...] })${seed !== undefined && !seed.ok ? `: ${seed.message}` : ""}`,
      );
    }
    entries.push({
      seed: entry.seed as string,
      keys: (entry.keys as unknown[]).filter((k): k is string => typeof k === "string"),
    });
  }
  return entries;
}

/** Writes the runs that added coverage as corpus entries of `dir`. */
async function writeCorpus(dir: string, entries: readonly CorpusEntry[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const entry of entries) {
    await writeFile(
      join(dir, `${entry.seed}.json`),
      `${JSON.stringify({ format: CORPUS_FORMAT, seed: entry.seed, keys: entry.keys }, null, 2)}\n`,
    );
  }
}

/** Progress of an exploration on stderr, about once a second: runs, runs/s, coverage, violations. */
function progressLines(io: CliIo, wanted: boolean, total: number | undefined, resumedKeys: readonly string[]) {
  const now = io.now ?? ((): number => performance.now());
  const started = now();
  let last = started;
  let runs = 0;
  const keys = new Set(resumedKeys);
  const paths = new Set<string>();
  const violated = new Set<string>();
  return (report: RunReport): void => {
    runs++;
    for (const k of report.newKeys) keys.add(k);
    for (const p of report.paths) paths.add(p);
    for (const f of report.failed) violated.add(f);
    // A lane's first violation of a property, as soon as it is shrunk: its seed, what it shows, how small it got.
    for (const f of report.shrunk ?? []) {
      io.err(
        `explore: run ${f.index} (seed ${f.seed}) violates ${f.property}: ${readableRecordedText(f.detail)} — shrunk in ${f.shrinkRuns} runs to ${sizeWords(f.shrunkSize)}`,
      );
    }
    if (!wanted) return;
    const t = now();
    if (t - last < PROGRESS_INTERVAL_MS) return;
    last = t;
    const rate = runs / Math.max(0.001, (t - started) / 1000);
    io.err(
      `explore: ${runs}${total !== undefined ? `/${total}` : ""} runs, ${rate.toFixed(1)} runs/s, ${keys.size} behaviours, ${paths.size} paths, ${violated.size === 0 ? "no violation" : `${violated.size} properties violated (${[...violated].join(", ")})`}`,
    );
  };
}

/** The files a report's violations and gallery are written to, relative to `out`. */
function violationFile(out: string, property: string): string {
  return join(out, "violations", `${property}.yaml`);
}

/** Removes what an earlier exploration wrote in `folder` (its YAML and bundles only). */
async function clearOurFiles(folder: string): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    if (name.endsWith(".yaml") || name.endsWith(BUNDLE_SUFFIX)) await rm(join(folder, name), { force: true });
  }
}

/**
 * Writes the report and its files under `out`: report.json, each violation's
 * shrunk scenario (with a comment saying what it violates and how to
 * reproduce it) and bug bundle, and the gallery's scenarios.
 */
async function writeReport(report: ExploreReport, out: string, options: ExploreOptions): Promise<void> {
  await mkdir(join(out, "violations"), { recursive: true });
  await mkdir(join(out, "gallery"), { recursive: true });
  await clearOurFiles(join(out, "violations"));
  await clearOurFiles(join(out, "gallery"));
  await writeFile(join(out, "report.json"), reportText(report));
  const version = report.mailscope;
  for (const v of report.violations) {
    const file = violationFile(out, v.property);
    const text = `${violationComments(report, v.property, file)}${v.shrunk.yaml}`;
    await writeFile(file, text);
    const load = await loadScenario(text, { file });
    if (!load.ok) continue;
    const run = await runLoadedScenario(load.loaded, {
      mailscope: version,
      ...(report.plantedBug !== undefined && { plantedBug: report.plantedBug as never }),
    }).catch(() => undefined);
    if (run === undefined) continue;
    const bundle = await createBundle(run.trace, { recordBodies: false, file, passed: false });
    await writeFile(file.replace(/\.yaml$/, BUNDLE_SUFFIX), bundleText(bundle));
  }
  for (const [i, entry] of report.gallery.entries()) {
    const parsed = parseGenome(entry.seed);
    if (!parsed.ok) continue;
    const world = generateWorld(parsed.genome, options);
    const comments = [
      `mailscope explore gallery ${i + 1} of ${report.gallery.length}: the smallest world found that takes this path through the delivery machine:`,
      `  ${entry.path}`,
      `Run ${entry.index} of the exploration with seed ${String(report.seed)}; mailscope explore --run ${entry.seed}${runFlags(report.files)}`,
      `${sizeWords(entry.size)}.`,
    ];
    await writeFile(
      join(out, "gallery", `${String(i + 1).padStart(3, "0")}.yaml`),
      scenarioYaml(world.scenario, comments),
    );
  }
}

/** The comment above a shrunk scenario: what it violates, where it came from, how to reproduce it. */
function violationComments(report: ExploreReport, property: string, file: string): string {
  const v = report.violations.find((x) => x.property === property);
  if (v === undefined) return "";
  const lines = [
    `mailscope explore: this scenario violates ${property}: ${v.title}${v.rules.length > 0 ? ` [${v.rules.join(", ")}]` : ""}.`,
    `What it shows: ${v.shrunk.detail}`,
    `Shrunk in ${v.shrunk.runs} runs from run ${v.first.index} (seed ${v.first.seed}) of mailscope explore --seed ${String(report.seed)}; ${v.count} of ${report.runs} runs violated it.`,
    `Reproduce: mailscope explore check ${shellQuote(file)}${checkFlags(report.files)}`,
    ...(report.plantedBug !== undefined
      ? [
          `Found with the planted bug ${report.plantedBug} on (a test harness's switch, app/sender/plantedBugs.ts): a plain run of this file is the correct sender.`,
        ]
      : []),
  ];
  return lines.map((l) => `# ${l}\n`).join("");
}

/** The report in words, as printed. */
export function formatReport(report: ExploreReport, out: string): string[] {
  const { coverage } = report;
  const lines = [
    `mailscope explore: seed ${String(report.seed)}, ${report.runs} runs${report.runsAsked !== null && report.runsAsked !== report.runs ? ` of ${report.runsAsked}` : ""}${report.corpus.resumed > 0 ? `, resuming a corpus of ${report.corpus.resumed}` : ""}`,
    `coverage: ${coverage.keys} behaviours; delivery machine transitions ${coverage.transitions.covered} of ${coverage.transitions.total}; rules ${coverage.rules.covered} of ${coverage.rules.total} (${coverage.rules.percent} %); gaps ${coverage.gaps.join(", ") || "none"}`,
  ];
  if (coverage.transitions.missing.length > 0)
    lines.push(`  transitions not reached: ${coverage.transitions.missing.join("; ")}`);
  lines.push(
    `corpus: ${report.corpus.added.length} runs added coverage`,
    `gallery: ${report.gallery.length} distinct paths through the delivery machine (${join(out, "gallery")})`,
  );
  if (report.violations.length === 0) {
    lines.push(`every property held on every run (${report.properties.length} properties)`);
  }
  for (const v of report.violations) {
    const file = violationFile(out, v.property);
    lines.push(
      "",
      `VIOLATED ${v.property}: ${v.title}`,
      `  ${v.count} of ${report.runs} runs; the first is run ${v.first.index}, seed ${v.first.seed}: mailscope explore --run ${v.first.seed}${runFlags(report.files)}`,
      `  ${v.first.detail}`,
      `  shrunk in ${v.shrunk.runs} runs${v.shrunk.exhausted ? " (the budget ran out: shrinkRuns)" : ""} to ${sizeWords(v.shrunk.size)}: ${file}`,
      `  ${v.shrunk.detail}`,
      `  bug bundle: ${file.replace(/\.yaml$/, BUNDLE_SUFFIX)}`,
      `  reproduce: mailscope explore check ${shellQuote(file)}${checkFlags(report.files)}`,
    );
  }
  lines.push("", `report: ${join(out, "report.json")}`);
  return lines;
}

/** The report as JUnit XML: a test case per property, failed with its first violation and how to reproduce it. */
export function exploreJunit(report: ExploreReport, out: string): string {
  const failures = report.violations.length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mailscope explore" tests="${report.properties.length}" failures="${failures}" errors="0">`,
    `  <testsuite name="${xmlText(`mailscope explore --seed ${String(report.seed)} (${report.runs} runs)`)}" tests="${report.properties.length}" failures="${failures}" errors="0">`,
  ];
  for (const p of report.properties) {
    const v = report.violations.find((x) => x.property === p.id);
    const name = `<testcase classname="mailscope explore" name="${xmlText(p.id)}"`;
    if (v === undefined) {
      lines.push(`    ${name}/>`);
      continue;
    }
    const body = [
      `${v.count} of ${report.runs} runs violate it; the first is run ${v.first.index}, seed ${v.first.seed}.`,
      v.first.detail,
      `Shrunk to ${sizeWords(v.shrunk.size)}: ${violationFile(out, v.property)}`,
      `reproduce: mailscope explore check ${violationFile(out, v.property)}`,
    ].join("\n");
    lines.push(
      `    ${name}>`,
      `      <failure message="${xmlText(`${p.title}: ${v.shrunk.detail}`)}">${xmlText(body)}</failure>`,
      "    </testcase>",
    );
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}

/** Prints `report` (text or JSON) and writes its files; the exit code. */
async function finish(
  report: ExploreReport,
  settings: { out: string; options: ExploreOptions; json?: boolean; junit?: string },
  io: CliIo,
): Promise<number> {
  await writeReport(report, settings.out, settings.options);
  if (settings.junit !== undefined) await writeFile(settings.junit, exploreJunit(report, settings.out));
  if (settings.json === true) io.out(reportText(report).trimEnd());
  else for (const line of formatReport(report, settings.out)) io.out(line);
  return report.violations.length > 0 ? EXPLORE_EXIT.violated : EXPLORE_EXIT.held;
}

/** Checks that `out` can be a folder of ours: absent (it is made) or a folder. */
async function checkOut(out: string): Promise<void> {
  const found = await stat(out).catch(() => undefined);
  if (found !== undefined && !found.isDirectory())
    throw new BadInput(`--out ${out}: a file is there; --out names a folder`);
}

/** `mailscope explore`; resolves to the exit code. */
export async function exploreCommandAction(options: ExploreCliOptions, io: CliIo = consoleIo): Promise<number> {
  let settings: Settings;
  try {
    settings = await readSettings(options);
    await checkOut(settings.out);
    const unwritable = await checkOutputPaths([["--junit", options.junit]]);
    if (unwritable !== undefined) throw new BadInput(unwritable);
    if (options.run !== undefined) return await exploreOneRun(options.run, settings, io);
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(error instanceof LocatedErrors ? error.message : `mailscope explore: ${error.message}`);
    return EXPLORE_EXIT.badInput;
  }
  let corpus: CorpusEntry[];
  try {
    corpus = settings.corpusDir !== undefined ? await readCorpus(settings.corpusDir) : [];
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(`mailscope explore: ${error.message}`);
    return EXPLORE_EXIT.badInput;
  }
  const mailscope = mailscopeVersion();
  const config = {
    seed: settings.seed,
    ...(settings.runs !== undefined && { runs: settings.runs }),
    options: settings.options,
    properties: settings.properties,
    corpus,
    mailscope,
  };
  const header = exploreHeader({ ...config, runs: settings.runs, files: settings.files });
  const lanes =
    settings.shard !== undefined
      ? shardLanes(settings.options.lanes, settings.shard)
      : shardLanes(settings.options.lanes, { index: 1, count: 1 });
  io.err(
    `mailscope explore: seed ${String(settings.seed)}, ${settings.runs !== undefined ? `${settings.runs} runs` : ""}${settings.runs !== undefined && settings.timeMs !== undefined ? " or " : ""}${settings.timeMs !== undefined ? `${settings.timeMs / 1000} s` : ""}, ${settings.workers} worker${settings.workers === 1 ? "" : "s"}${settings.shard !== undefined ? `, shard ${settings.shard.index}/${settings.shard.count} (lanes ${lanes.join(", ")})` : ""}`,
  );
  const total = settings.runs === undefined ? undefined : settings.shard === undefined ? settings.runs : undefined;
  const onRun = progressLines(
    io,
    options.progress ?? io.errIsTty === true,
    total,
    corpus.flatMap((e) => e.keys),
  );
  const started = performance.now();
  const running = runLanesInWorkers(config, lanes, settings.workers, onRun);
  const timer = settings.timeMs !== undefined ? setTimeout(() => running.stop(), settings.timeMs) : undefined;
  const interrupt = (): void => {
    io.err("mailscope explore: stopping after the runs under way (Ctrl-C again to quit at once)");
    running.stop();
    process.once("SIGINT", () => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  let results: LaneResult[];
  try {
    results = await running.results;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    process.removeListener("SIGINT", interrupt);
  }
  const seconds = (performance.now() - started) / 1000;
  const runs = results.reduce((n, l) => n + l.runs, 0);
  io.err(
    `${runs} runs in ${seconds.toFixed(1)} s (${(runs / Math.max(seconds, 0.001)).toFixed(1)} runs/s, ${settings.workers} worker${settings.workers === 1 ? "" : "s"})`,
  );
  if (settings.shard !== undefined) {
    const file = join(settings.out, `shard-${settings.shard.index}-of-${settings.shard.count}.json`);
    await mkdir(settings.out, { recursive: true });
    await writeFile(file, `${JSON.stringify(shardFile(header, settings.shard, results), null, 2)}\n`);
    const violated = [...new Set(results.flatMap((l) => l.findings.map((f) => f.property)))];
    io.out(
      `shard ${settings.shard.index}/${settings.shard.count}: ${runs} runs; ${violated.length === 0 ? "no violation" : `violated: ${violated.join(", ")}`}; wrote ${file}`,
    );
    io.out(`merge the shards with: mailscope explore merge ${join(settings.out, "shard-*.json")}`);
    return violated.length > 0 ? EXPLORE_EXIT.violated : EXPLORE_EXIT.held;
  }
  const report = buildReport(header, results);
  if (settings.corpusDir !== undefined) await writeCorpus(settings.corpusDir, corpusAdditions(header, results));
  return finish(
    report,
    {
      ...settings,
      ...(options.json !== undefined && { json: options.json }),
      ...(options.junit !== undefined && { junit: options.junit }),
    },
    io,
  );
}

/** `--run <seed>`: one run's world built again, judged, and written to `<out>/runs/<seed>.yaml`. */
async function exploreOneRun(text: string, settings: Settings, io: CliIo): Promise<number> {
  const parsed = parseGenome(text);
  if (!parsed.ok) throw new BadInput(`--run ${parsed.message}`);
  const world = generateWorld(parsed.genome, settings.options);
  const file = join(settings.out, "runs", `${text.trim()}.yaml`);
  const yaml = scenarioYaml(world.scenario, [
    `The world of run seed ${text.trim()} of mailscope explore${runFlags(settings.files) === "" ? "" : ` (${runFlags(settings.files).trim()})`}.`,
  ]);
  await mkdir(join(settings.out, "runs"), { recursive: true });
  await writeFile(file, yaml);
  const judged = await judgeScenario(
    world.scenario,
    { properties: settings.properties, mailscope: mailscopeVersion() },
    yaml,
    file,
  );
  io.out(
    `run ${text.trim()}: ${sizeWords(worldSize(world.scenario))}; features on: ${[...world.swarm.features].join(", ") || "none"}`,
  );
  io.out(`wrote ${file}`);
  return printJudgement(judged, io);
}

function printJudgement(judged: Judgement, io: CliIo): number {
  for (const c of judged.checks)
    io.out(`  ${c.passed ? "ok  " : "FAIL"}  ${c.id}: ${readableRecordedText(c.detail ?? "")}`);
  const failed = judged.failed.length;
  io.out(failed === 0 ? `every property held (${judged.checks.length})` : `VIOLATED: ${judged.failed.join(", ")}`);
  return failed === 0 ? EXPLORE_EXIT.held : EXPLORE_EXIT.violated;
}

/** The options of `explore merge`. */
export interface ExploreMergeOptions {
  readonly out?: string;
  readonly json?: boolean;
  readonly junit?: string;
  readonly corpus?: string;
}

/** `mailscope explore merge <files…>`: the shards' report, as one process would have written it. */
export async function exploreMergeAction(
  files: readonly string[],
  options: ExploreMergeOptions,
  io: CliIo = consoleIo,
): Promise<number> {
  const out = options.out ?? DEFAULT_OUT;
  const read: { name: string; value: unknown }[] = [];
  try {
    await checkOut(out);
    const unwritable = await checkOutputPaths([["--junit", options.junit]]);
    if (unwritable !== undefined) throw new BadInput(unwritable);
    if (files.length === 0)
      throw new BadInput("merge needs the shard files (mailscope explore merge out/shard-*.json)");
    for (const name of files) {
      let text: string;
      try {
        text = await readBoundedText(name, "shard files", 1_073_741_824);
      } catch (error) {
        throw new BadInput(`${name}: cannot be read: ${readErrorReason(error)}`);
      }
      try {
        read.push({ name, value: JSON.parse(text) });
      } catch (error) {
        throw new BadInput(`${name}: not JSON: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(`mailscope explore merge: ${error.message}`);
    return EXPLORE_EXIT.badInput;
  }
  const merged = mergeShards(read);
  if (!merged.ok) {
    io.err("mailscope explore merge: the files are not the shards of one exploration:");
    for (const p of merged.problems) io.err(`  ${p}`);
    return EXPLORE_EXIT.badInput;
  }
  let explore: ExploreOptions;
  try {
    explore = exploreOptions(merged.header.options as never);
  } catch (error) {
    io.err(`mailscope explore merge: the shards' options are not valid here: ${(error as Error).message}`);
    return EXPLORE_EXIT.badInput;
  }
  const report = buildReport(merged.header, merged.lanes);
  if (options.corpus !== undefined) await writeCorpus(options.corpus, corpusAdditions(merged.header, merged.lanes));
  return finish(
    report,
    {
      out,
      options: explore,
      ...(options.json !== undefined && { json: options.json }),
      ...(options.junit !== undefined && { junit: options.junit }),
    },
    io,
  );
}

/** `mailscope explore check <scenario>`: a scenario file judged by every property. */
export async function exploreCheckAction(
  file: string,
  options: { readonly properties?: string },
  io: CliIo = consoleIo,
): Promise<number> {
  let properties: readonly UserProperty[];
  try {
    properties = await readProperties(options.properties);
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(error instanceof LocatedErrors ? error.message : `mailscope explore check: ${error.message}`);
    return EXPLORE_EXIT.badInput;
  }
  const load = await loadScenarioFile(file);
  if (!load.ok) {
    for (const e of load.errors) io.err(formatScenarioError(e));
    return EXPLORE_EXIT.badInput;
  }
  const judged = await judgeLoaded(load.loaded, { properties, mailscope: mailscopeVersion() });
  io.out(`${load.loaded.scenario.name} (${file}), seed ${String(judged.run?.trace.seed ?? load.loaded.scenario.seed)}`);
  return printJudgement(judged, io);
}

/** Usage errors of the subcommands exit 2, as every command's do (main.ts). */
function usageExit(error: CommanderError): never {
  if (error.exitCode === 0) throw error;
  throw new CommanderError(2, error.code, error.message);
}

/** Exits with `code` through commander when it is not 0. */
function exitWith(code: number): void {
  if (code !== 0) throw new CommanderError(code, "mailscope.explore.exit", "");
}

/** `mailscope explore`, with its `merge` and `check` commands. */
export function exploreCommand(): Command {
  const command = new Command("explore")
    .description(
      "search generated worlds and faults for violations of the spec's guarantees; shrink what it finds; shard over machines",
    )
    .option("--runs <n>", `how many runs (default ${DEFAULT_RUNS} unless --time)`)
    .option("--time <duration>", "explore for this long (60s, 5m); with --runs, whichever ends first")
    .option("--seed <seed>", "the exploration's seed (default: drawn at random, and printed)")
    .option("--workers <k>", "worker threads (default: the machine's cores)")
    .option("--shard <i/n>", "explore shard i of n and write <out>/shard-i-of-n.json (merge them with explore merge)")
    .option("--out <dir>", `where the report, violations and gallery go (default ${DEFAULT_OUT})`)
    .option("--corpus <dir>", "keep the corpus here, and resume from it")
    .option("--properties <file>", "your own properties (YAML; docs/explore.md)")
    .option("--options <file>", "the generator's and the search's options (YAML; docs/explore.md)")
    .option("--json", "print the report as JSON")
    .option("--junit <out.xml>", "also write the report as JUnit XML (a test case per property)")
    .option("--progress", "print progress about once a second (default on a terminal)")
    .option("--no-progress", "print no progress")
    .option("--run <seed>", "build one run's world again from its printed seed, judge it and write it as YAML")
    .enablePositionalOptions()
    .action(async (options: ExploreCliOptions) => exitWith(await exploreCommandAction(options)));
  command.addCommand(
    new Command("merge")
      .description("merge shard files into the report one process would have written")
      .argument("<files...>", "the shard files (<out>/shard-i-of-n.json)")
      .option("--out <dir>", `where the report, violations and gallery go (default ${DEFAULT_OUT})`)
      .option("--json", "print the report as JSON")
      .option("--junit <out.xml>", "also write the report as JUnit XML")
      .option("--corpus <dir>", "also add the runs that added coverage to this corpus")
      .exitOverride(usageExit)
      .showHelpAfterError("(run mailscope explore merge --help)")
      .action(async (files: string[], options: ExploreMergeOptions) =>
        exitWith(await exploreMergeAction(files, options)),
      ),
  );
  command.addCommand(
    new Command("check")
      .description("judge a scenario (a shrunk violation) by every property of explore")
      .argument("<scenario>", "a scenario file")
      .option("--properties <file>", "your own properties (YAML)")
      .exitOverride(usageExit)
      .showHelpAfterError("(run mailscope explore check --help)")
      .action(async (file: string, options: { properties?: string }) =>
        exitWith(await exploreCheckAction(file, options)),
      ),
  );
  return command;
}
