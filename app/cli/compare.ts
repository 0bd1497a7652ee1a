/**
 * `mailscope compare <scenario>`: runs one scenario twice — under two
 * readings (`--set A --set B`), two seeds (`--seed-a N --seed-b M`), or as
 * itself and a fork at a time (`--fork-at 30m --end-fault b-down`) — and
 * prints the difference table (each recipient's outcome, time, attempts,
 * POSTs and rule in run A and run B, the differing fields marked `*`), a
 * one-line verdict per recipient (app/sim/compare.ts; a DSN matched by what it
 * reports on, not by its Message-ID) and where the two runs first part (the
 * first decision one made otherwise, with both). For a fork it also checks
 * that the two runs are identical before the fork point (hash of the trace
 * prefix). `--json` prints the same as JSON.
 *
 * Exit codes, as diff(1): 0 the two runs ended the same for every recipient
 * (and a fork's prefix is identical), 1 they differ, 2 bad input.
 */
import { Command, CommanderError } from "commander";
import { writeFile } from "node:fs/promises";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import {
  checkPrefix,
  COMPARE_FIELDS,
  compareRuns,
  FIELD_TEXT,
  fieldText,
  VERDICT_KIND_TEXT,
  type CompareTable,
  type Parting,
  type PrefixCheck,
} from "../sim/compare.ts";
import { forkScenario, type ForkChange } from "../sim/fork.ts";
import { runLoadedScenario, type ScenarioRun } from "../sim/runScenario.ts";
import {
  formatScenarioError,
  loadScenario,
  parseSetArgument,
  resolveReadings,
  type LoadedScenario,
} from "../sim/scenario.ts";
import { WorldError } from "../sim/world.ts";
import { formatOffset, parseOffset } from "../trace/offset.ts";
import { eventsOf } from "../trace/store.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { mailscopeVersion, parseSeed } from "./run.ts";
import { maxOf } from "../protocol/lists.ts";

/** Exit codes: 0 the runs agree, 1 they differ, 2 bad input. */
export const COMPARE_EXIT = { same: 0, differ: 1, badInput: 2 } as const;

/** The options of `compare`, as commander hands them over. */
export interface CompareOptions {
  readonly set?: readonly string[];
  readonly seed?: string;
  readonly seedA?: string;
  readonly seedB?: string;
  readonly forkAt?: string;
  readonly endFault?: string;
  readonly startFault?: string;
  readonly probability?: string;
  readonly submit?: string;
  readonly saveFork?: string;
  readonly json?: boolean;
}

/** One side of the comparison, as the options say it. */
interface Side {
  readonly label: "A" | "B";
  readonly readings: [string, string][];
  readonly seed?: number | string;
  /** Words for the side: `G16=fallback-window=1h`, `seed 3`, `fork at +0:30:00: ended fault b-down`. */
  readonly describe: string;
}

class BadInput extends Error {}

/** `G16=fallback-window=1h;G7=ignored` → the settings of one side. */
function sideReadings(text: string | undefined): [string, string][] {
  if (text === undefined) return [];
  const settings = text
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return parseSetArgument(s);
      } catch (error) {
        throw new BadInput((error as Error).message);
      }
    });
  const check = resolveReadings(settings);
  if (!check.ok) throw new BadInput(`--set ${check.id}: ${check.message}`);
  return settings;
}

/** The fork change the options ask for, if any; exactly one with `--fork-at`. */
function forkChange(options: CompareOptions): ForkChange | undefined {
  const changes: ForkChange[] = [];
  if (options.endFault !== undefined) changes.push({ kind: "end-fault", fault: options.endFault });
  if (options.startFault !== undefined) {
    const [kind, host] = options.startFault.split("@");
    if (!kind || !host)
      throw new BadInput(
        `--start-fault takes <kind>@<host>, e.g. connection-refused@mx.b.example; not "${options.startFault}"`,
      );
    changes.push({ kind: "start-fault", faultKind: kind, host });
  }
  if (options.probability !== undefined) {
    const eq = options.probability.lastIndexOf("=");
    const p = Number(options.probability.slice(eq + 1));
    if (eq <= 0 || options.probability.slice(eq + 1).trim() === "" || !Number.isFinite(p)) {
      throw new BadInput(`--probability takes <fault>=<0…1>, e.g. b-down=0.5; not "${options.probability}"`);
    }
    changes.push({ kind: "set-probability", fault: options.probability.slice(0, eq), probability: p });
  }
  if (options.submit !== undefined) {
    const arrow = options.submit.indexOf("->");
    const from = arrow < 0 ? "" : options.submit.slice(0, arrow).trim();
    const to =
      arrow < 0
        ? []
        : options.submit
            .slice(arrow + 2)
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean);
    if (from === "" || to.length === 0) {
      throw new BadInput(
        `--submit takes <from>-><to>[,<to>…], e.g. alice@a.example->bob@b.example; not "${options.submit}"`,
      );
    }
    changes.push({ kind: "submit", from, to });
  }
  if (options.forkAt === undefined) {
    if (changes.length > 0)
      throw new BadInput("--end-fault, --start-fault, --probability and --submit need --fork-at <time>");
    return undefined;
  }
  if (changes.length !== 1) {
    throw new BadInput("--fork-at takes exactly one change: --end-fault, --start-fault, --probability or --submit");
  }
  return changes[0];
}

/** What a run of one side gives the comparison. */
interface SideRun {
  readonly side: Side;
  readonly run: ScenarioRun;
}

async function runSide(loaded: LoadedScenario, side: Side, file: string): Promise<SideRun> {
  try {
    const run = await runLoadedScenario(loaded, {
      ...(side.seed !== undefined && { seed: side.seed }),
      readings: side.readings,
      mailscope: mailscopeVersion(),
    });
    return { side, run };
  } catch (error) {
    if (!(error instanceof WorldError)) throw error;
    throw new BadInput(`${file}: run ${side.label}: ${error.message}`);
  }
}

/**
 * Runs the comparison of `file` with the options and prints it; resolves to
 * the exit code. Bad input is printed as `file:line:column: field: message`
 * lines (or `mailscope compare: …` for a bad option) with exit code 2.
 */
export async function compareCommandAction(
  file: string,
  options: CompareOptions,
  io: CliIo = consoleIo,
): Promise<number> {
  let sides: [Side, Side];
  let change: ForkChange | undefined;
  let forkAtMs: number | undefined;
  try {
    const sets = options.set ?? [];
    change = forkChange(options);
    // A fork compares the scenario with itself changed: every --set is a reading of both runs.
    const forking = options.forkAt !== undefined;
    if (!forking && sets.length > 2)
      throw new BadInput(
        `--set given ${sets.length} times: compare takes two, run A's then run B's (join several readings of one run with ";")`,
      );
    if (!forking && sets.length === 1)
      throw new BadInput("--set given once: compare takes two, run A's then run B's (--set A --set B)");
    if (options.forkAt !== undefined) {
      forkAtMs = parseOffset(options.forkAt);
      if (forkAtMs === undefined)
        throw new BadInput(`--fork-at takes a time after the start, e.g. 30m or +0:30:00; not "${options.forkAt}"`);
    }
    const seedOf = (own: string | undefined): number | string | undefined => {
      const text = own ?? options.seed;
      return text === undefined ? undefined : parseSeed(text);
    };
    const seedA = seedOf(options.seedA);
    const seedB = seedOf(options.seedB);
    const [a, b] = forking
      ? [sideReadings(sets.join(";")), sideReadings(sets.join(";"))]
      : [sideReadings(sets[0]), sideReadings(sets[1])];
    const words = (readings: [string, string][], seed: number | string | undefined): string =>
      [
        readings.map(([g, v]) => `${g}=${v}`).join("; "),
        options.seedA !== undefined || options.seedB !== undefined ? `seed ${String(seed)}` : "",
      ]
        .filter(Boolean)
        .join(", ") || "as the scenario says";
    if (sets.length === 0 && options.seedA === undefined && options.seedB === undefined && change === undefined) {
      throw new BadInput(
        "compare needs two runs: --set A --set B (two readings), --seed-a N --seed-b M (two seeds), or --fork-at <time> with a change",
      );
    }
    sides = [
      { label: "A", readings: a, ...(seedA !== undefined && { seed: seedA }), describe: words(a, seedA) },
      { label: "B", readings: b, ...(seedB !== undefined && { seed: seedB }), describe: words(b, seedB) },
    ];
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(`mailscope compare: ${error.message}`);
    return COMPARE_EXIT.badInput;
  }

  const load = await loadScenarioFile(file);
  if (!load.ok) {
    for (const error of load.errors) io.err(formatScenarioError(error));
    return COMPARE_EXIT.badInput;
  }
  let loadedB = load.loaded;
  let forkText: string | undefined;
  if (change !== undefined && forkAtMs !== undefined) {
    const fork = forkScenario(load.loaded.source, forkAtMs, change, file);
    if (!fork.ok) {
      for (const error of fork.errors) io.err(formatScenarioError(error));
      return COMPARE_EXIT.badInput;
    }
    const forkFile = options.saveFork ?? file;
    const emls = load.loaded.emls;
    const loaded = await loadScenario(fork.text, {
      file: forkFile,
      readFile: async (path) => {
        const bytes = emls.get(path);
        if (bytes === undefined) throw new Error(`${path}: not read for the original`);
        return bytes;
      },
    });
    if (!loaded.ok) {
      for (const error of loaded.errors) io.err(formatScenarioError(error));
      return COMPARE_EXIT.badInput;
    }
    loadedB = loaded.loaded;
    forkText = fork.text;
    sides = [
      {
        ...sides[0],
        describe: `the original${sides[0].describe === "as the scenario says" ? "" : `, ${sides[0].describe}`}`,
      },
      { ...sides[1], describe: `the fork: ${fork.summary}` },
    ];
  }

  let a: SideRun;
  let b: SideRun;
  try {
    a = await runSide(load.loaded, sides[0], file);
    b = await runSide(loadedB, sides[1], file);
  } catch (error) {
    if (!(error instanceof BadInput)) throw error;
    io.err(error.message);
    return COMPARE_EXIT.badInput;
  }
  const startMs = a.run.world.startMs;
  // Each run's events from its recorder's store when it holds them, one at a time (decision 0225).
  const [eventsA, eventsB] = [eventsOf(a.run.trace), eventsOf(b.run.trace)];
  const { table, parting } = compareRuns(eventsA, eventsB, startMs);
  const prefix = forkAtMs !== undefined ? await checkPrefix(eventsA, eventsB, startMs + forkAtMs, startMs) : undefined;
  if (forkText !== undefined && options.saveFork !== undefined) await writeFile(options.saveFork, forkText);
  const same = table.same && (prefix === undefined || prefix.identical);

  if (options.json === true) {
    io.out(
      JSON.stringify(
        {
          scenario: a.run.trace.scenario.name,
          file,
          runs: [a, b].map(({ side, run }) => ({
            label: side.label,
            describe: side.describe,
            seed: run.trace.seed,
            readings: run.trace.readings,
            passed: run.passed,
            events: eventsOf(run.trace).length,
            reproduce: run.reproduce,
          })),
          same,
          differing: table.differing,
          kinds: table.kinds,
          summary: table.summary,
          parting,
          lines: table.lines.map((l) => ({
            message: l.message,
            recipient: l.recipient,
            dsn: l.dsn,
            differs: l.differs,
            kind: l.kind,
            verdict: l.verdict,
            a: l.a === undefined ? null : jsonRow(l.a),
            b: l.b === undefined ? null : jsonRow(l.b),
          })),
          ...(prefix !== undefined && { prefix: jsonPrefix(prefix, startMs) }),
          ...(forkText !== undefined && options.saveFork !== undefined && { savedFork: options.saveFork }),
        },
        null,
        2,
      ),
    );
    return same ? COMPARE_EXIT.same : COMPARE_EXIT.differ;
  }
  for (const line of compareReport(a.run.trace.scenario.name, file, [a, b], table, parting, prefix)) io.out(line);
  if (forkText !== undefined && options.saveFork !== undefined) io.out(`wrote fork ${options.saveFork}`);
  return same ? COMPARE_EXIT.same : COMPARE_EXIT.differ;
}

function jsonRow(row: NonNullable<CompareTable["lines"][number]["a"]>): Record<string, unknown> {
  return {
    outcome: row.outcome,
    outcomeText: row.outcomeText,
    at: row.when || null,
    attempts: row.attempts,
    posts: row.posts,
    rule: row.rule ?? null,
  };
}

function jsonPrefix(prefix: PrefixCheck, startMs: number): Record<string, unknown> {
  return {
    forkAt: formatOffset(prefix.forkMs, startMs),
    identical: prefix.identical,
    hashA: prefix.hashA,
    hashB: prefix.hashB,
    eventsA: prefix.eventsA,
    eventsB: prefix.eventsB,
    text: prefix.text,
    ...(prefix.firstDifference !== undefined && { firstDifference: prefix.firstDifference }),
  };
}

/** The printed comparison: the two runs, the difference table, the verdicts, where they part, the prefix check. */
export function compareReport(
  name: string,
  file: string,
  runs: readonly SideRun[],
  table: CompareTable,
  parting: Parting,
  prefix: PrefixCheck | undefined,
): string[] {
  const lines = [`${name} (${file}): two runs compared`];
  for (const { side, run } of runs) {
    lines.push(
      `  ${side.label}: ${side.describe} (seed ${String(run.trace.seed)}; ${eventsOf(run.trace).length} events)`,
    );
  }
  lines.push("");
  const cells = table.lines.flatMap((l) =>
    COMPARE_FIELDS.map((f) => ({ l, f, a: fieldText(l.a, f), b: fieldText(l.b, f), differs: l.differs.includes(f) })),
  );
  const wa = maxOf(
    cells.map((c) => c.a.length),
    1,
  );
  const wb = maxOf(
    cells.map((c) => c.b.length),
    1,
  );
  lines.push(`  ${"".padEnd(10)}${"A".padEnd(wa)}  B`);
  for (const l of table.lines) {
    lines.push(`${l.message} ${l.recipient}`);
    for (const c of cells.filter((c) => c.l === l)) {
      lines.push(
        `  ${FIELD_TEXT[c.f].padEnd(10)}${c.a.padEnd(wa)}  ${c.b.padEnd(wb)}${c.differs ? "  *" : ""}`.trimEnd(),
      );
    }
  }
  lines.push("", "verdicts:");
  for (const l of table.lines) {
    lines.push(
      `  ${l.message} ${l.recipient}: ${l.kind === "same" ? "" : `${VERDICT_KIND_TEXT[l.kind]}: `}${l.verdict}`,
    );
  }
  lines.push("", parting.text);
  if (prefix !== undefined) lines.push("", `before the fork: ${prefix.text}`);
  lines.push("", table.summary);
  return lines;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `mailscope compare <scenario> --set A --set B | --seed-a N --seed-b M | --fork-at T --end-fault ID … [--json]`. */
export function compareCommand(): Command {
  return new Command("compare")
    .description(
      "run a scenario twice (two readings, two seeds, or a fork at a time) and print how each recipient's outcome differs; exit 0 same, 1 different, 2 bad input",
    )
    .argument("<scenario>", "a scenario file (YAML)")
    .option(
      "--set <gap=reading|knob=value>",
      "run A's reading or draft number (RETRY-2.cap=30m), then run B's (given twice; several for one run joined by \";\"); with --fork-at, settings of both",
      collect,
    )
    .option("--seed <n>", "the seed of both runs; default the scenario's")
    .option("--seed-a <n>", "run A's seed")
    .option("--seed-b <n>", "run B's seed")
    .option("--fork-at <time>", "run B is a fork of the scenario at this time (30m, +0:30:00) with one change:")
    .option("--end-fault <id>", "  the fault ends at the fork time")
    .option(
      "--start-fault <kind@host>",
      "  a network fault starts at the fork time, e.g. connection-refused@mx.b.example",
    )
    .option("--probability <id=p>", "  the fault goes on with probability p from the fork time")
    .option("--submit <from->to>", "  a message is submitted at the fork time, e.g. alice@a.example->bob@b.example")
    .option("--save-fork <out.yaml>", "write the fork's scenario")
    .option("--json", "print JSON instead of the table")
    .action(async (file: string, options: CompareOptions) => {
      const code = await compareCommandAction(file, options);
      if (code !== 0) throw new CommanderError(code, "mailscope.compare.exit", "");
    });
}
