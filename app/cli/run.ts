/**
 * `mailscope run <scenario>`: plays one scenario at full speed and prints a
 * readable timeline — virtual time as `+0:01:00` offsets, the domain, the
 * event in words — then each recipient's outcome and the checks (invariants
 * and expectations). `--trace`, `--har` and `--report` write the trace as
 * JSON, its HTTP exchanges as HAR 1.2, and a Markdown bug report. Exit 0 when
 * every check passed, 1 when one failed (the command that reproduces the run
 * is printed, seed and all), 2 for bad input.
 */
import { consoleIo, type CliIo } from "./io.ts";
import { progressPrinter, progressWanted } from "./progress.ts";
import { writeFile } from "node:fs/promises";
import { checkOutputPaths } from "../node/outputPaths.ts";
import { BUNDLE_SUFFIX, bundleTextChunks } from "../trace/bundle.ts";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { describeEvent } from "../trace/describe.ts";
import { exportHarChunks } from "../trace/exportHar.ts";
import { exportJsonChunks, traceHash } from "../trace/exportJson.ts";
import { eventsOf } from "../trace/store.ts";
import { exportMarkdown } from "../trace/exportMarkdown.ts";
import { formatOffset, readableRecordedText } from "../trace/offset.ts";
import { evidenceText, explainOutcomes, type Why } from "../trace/explain.ts";
import { indexTrace } from "../sim/expectations.ts";
import { outcomeRows } from "../sim/outcomeRows.ts";
import { runLoadedScenario, type ScenarioRun } from "../sim/runScenario.ts";
import {
  defaultScenarioReadings,
  formatScenarioError,
  parseSetArgument,
  readingsNotation,
  resolveReadings,
} from "../sim/scenario.ts";
import { WorldError } from "../sim/world.ts";
import { MAILSCOPE_VERSION } from "./version.ts";
import { maxOf, pushAll } from "../protocol/lists.ts";
import { departures, departuresText } from "../sim/constants.ts";

/** Exit codes: 0 every check passed, 1 a check failed, 2 bad input. */
export const RUN_EXIT = { passed: 0, failed: 1, badInput: 2 } as const;

/** The version of this Mailscope (package.json), for traces. */
export function mailscopeVersion(): string {
  return MAILSCOPE_VERSION;
}

/** The options of `run`, as commander hands them over. */
export interface RunOptions {
  readonly seed?: string;
  readonly set?: readonly string[];
  readonly trace?: string;
  readonly har?: string;
  readonly report?: string;
  readonly bundle?: string;
  readonly full?: boolean;
  readonly json?: boolean;
  /** After the outcomes, why each recipient got its outcome (app/trace/explain.ts). */
  readonly explain?: boolean;
  /** Progress lines on stderr: true, false, or (undefined) when stderr is a terminal. */
  readonly progress?: boolean;
}

/** The options of `run` that name a file to write: each is checked before the run starts. */
export const RUN_OUTPUTS = ["trace", "har", "report", "bundle"] as const;

/** `--seed 42` is the number 42; anything else is a string seed. */
export function parseSeed(text: string): number | string {
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
}

/**
 * Runs `file` with the options and prints the result; resolves to the exit
 * code. Bad input (a scenario error, a bad `--set`) is printed as
 * `file:line:column: field: message` lines with exit code 2.
 */
export async function runCommandAction(file: string, options: RunOptions, io: CliIo = consoleIo): Promise<number> {
  let overrides: [string, string][];
  try {
    overrides = (options.set ?? []).map(parseSetArgument);
  } catch (error) {
    io.err(`mailscope run: ${(error as Error).message}`);
    return RUN_EXIT.badInput;
  }
  const check = resolveReadings(overrides);
  if (!check.ok) {
    io.err(`mailscope run: --set ${check.id}: ${check.message}`);
    return RUN_EXIT.badInput;
  }
  // A bundle is JSON inside; its own extension (.msbundle) lets the desktop app open it by double-click.
  if (options.bundle !== undefined && !/\.(msbundle|json)$/i.test(options.bundle)) {
    io.err(
      `mailscope run: --bundle ${options.bundle}: a bug bundle is one JSON file: name it *${BUNDLE_SUFFIX} (e.g. out${BUNDLE_SUFFIX}; *.json is taken too)`,
    );
    return RUN_EXIT.badInput;
  }
  // Every output path is checked before the run, not found unwritable after it.
  const unwritable = await checkOutputPaths(RUN_OUTPUTS.map((o) => [`--${o}`, options[o]] as const));
  if (unwritable !== undefined) {
    io.err(`mailscope run: ${unwritable}`);
    return RUN_EXIT.badInput;
  }
  const load = await loadScenarioFile(file);
  if (!load.ok) {
    for (const error of load.errors) io.err(formatScenarioError(error));
    return RUN_EXIT.badInput;
  }
  const started = performance.now();
  let run: ScenarioRun;
  try {
    run = await runLoadedScenario(load.loaded, {
      ...(options.seed !== undefined && { seed: parseSeed(options.seed) }),
      readings: overrides,
      recordBodies: options.full === true,
      mailscope: mailscopeVersion(),
      ...(progressWanted(options.progress, io) && { onProgress: progressPrinter(io) }),
    });
  } catch (error) {
    if (!(error instanceof WorldError)) throw error;
    io.err(`${file}: ${error.message}`);
    return RUN_EXIT.badInput;
  }
  const wallMs = performance.now() - started;
  const { trace } = run;
  const written: string[] = [];
  if (options.trace !== undefined) {
    // Streamed, a piece at a time: a fleet's trace is hundreds of MB as one string.
    await writeFile(options.trace, exportJsonChunks(trace, { full: options.full === true }));
    written.push(`trace ${options.trace}`);
  }
  if (options.har !== undefined) {
    await writeFile(options.har, exportHarChunks(trace, { full: options.full === true })); // a piece at a time
    written.push(`HAR ${options.har}`);
  }
  if (options.report !== undefined) {
    await writeFile(options.report, exportMarkdown(trace, { file }));
    written.push(`report ${options.report}`);
  }
  if (options.bundle !== undefined) {
    // Streamed, a piece at a time, as --trace (decision 0225): the events are read from the run's store.
    const bundle = await bundleTextChunks(trace, {
      recordBodies: options.full === true,
      full: options.full === true,
      file,
      passed: run.passed,
      // The bytes of the scenario's eml: files, so that `mailscope replay` and the app re-run it without them.
      emls: Object.fromEntries(load.loaded.emls),
    });
    await writeFile(options.bundle, bundle);
    written.push(`bug bundle ${options.bundle}`);
  }

  if (options.json === true) {
    io.out(
      JSON.stringify(
        {
          scenario: trace.scenario.name,
          file,
          seed: trace.seed,
          readings: trace.readings,
          ...(trace.constants !== undefined && { constants: trace.constants }),
          passed: run.passed,
          complete: run.complete,
          virtualMs: run.endMs - run.world.startMs,
          wallMs: Math.round(wallMs),
          events: eventsOf(trace).length,
          traceHash: await traceHash(trace),
          outcomes: jsonOutcomes(run),
          invariants: run.invariants,
          expectations: run.expectations,
          ...(run.error !== undefined && { error: run.error }),
          reproduce: run.reproduce,
          written,
        },
        null,
        2,
      ),
    );
    return run.passed ? RUN_EXIT.passed : RUN_EXIT.failed;
  }

  for (const line of report(run, file, wallMs, options.full === true, options.explain === true)) io.out(line);
  for (const w of written) io.out(`wrote ${w}`);
  if (!run.passed) io.err(`reproduce: ${run.reproduce}`);
  return run.passed ? RUN_EXIT.passed : RUN_EXIT.failed;
}

/**
 * The outcomes for `--json`: each recipient's row with when it came (`at`),
 * the problem that decided it, the recipient's attempts and POSTs, when the
 * message was submitted and each of those attempts started, as offsets, and
 * why (`why`: app/trace/explain.ts, each clause's evidence as seqs).
 */
export function jsonOutcomes(run: ScenarioRun): Record<string, unknown>[] {
  const startMs = run.world.startMs;
  // Read from the recorder's store when it holds them (decision 0195): a fleet's events are not built all at once.
  const events = eventsOf(run.trace);
  const facts = indexTrace(events);
  const whys = new Map(explainOutcomes(events, startMs).map((w) => [`${w.messageId}\n${w.recipient}`, w]));
  const at = (seq: number | undefined): string | undefined => {
    const t = seq === undefined ? undefined : run.world.recorder.at(seq)?.timeMs;
    return t === undefined ? undefined : formatOffset(t, startMs);
  };
  return run.outcomes.map((o) => {
    const f = facts.facts(o.messageId, o.recipient);
    const evidence = facts.evidence(o.messageId, o.recipient);
    const submittedAt = at(evidence.submitted);
    const attemptsAt = evidence.attempts.map(at).filter((x): x is string => x !== undefined);
    const why = whys.get(`${o.messageId}\n${o.recipient}`);
    return {
      ...o,
      ...(o.atMs !== undefined && { at: formatOffset(o.atMs, startMs) }),
      ...(f.outcome?.problem !== undefined && { problem: f.outcome.problem }),
      attempts: f.attempts,
      posts: f.posts,
      ...(submittedAt !== undefined && { submittedAt }),
      attemptsAt,
      ...(why !== undefined && { why: whyJson(why) }),
    };
  });
}

/** An explanation for `--json`: its clauses' evidence as seqs. */
function whyJson(why: Why): Record<string, unknown> {
  return {
    headline: why.headline,
    explained: why.explained,
    text: why.text,
    ...(why.smtpRuledOut !== undefined && { smtpRuledOut: why.smtpRuledOut }),
    clauses: why.clauses.map((c) => ({
      kind: c.kind,
      at: c.at,
      text: c.text,
      rules: c.rules,
      ...(c.readings.length > 0 && { readings: c.readings }),
      ...(c.attempts !== undefined && { attempts: c.attempts }),
      evidence: [...new Set(c.evidence.map((e) => e.seq))],
    })),
  };
}

/** `why:` and, per recipient, its explanation: the headline, then a clause a line with its evidence. */
export function whyLines(run: ScenarioRun, labels: ReadonlyMap<string, string>): string[] {
  const lines = ["why:"];
  for (const why of explainOutcomes(eventsOf(run.trace), run.world.startMs)) {
    lines.push(`  ${labels.get(why.messageId) ?? why.messageId} ${why.recipient}: ${why.headline}`);
    for (const c of why.clauses) lines.push(`    ${c.text}  [${evidenceText(c)}]`);
  }
  return lines;
}

/** The printed report of a run: header, timeline, outcomes (and with `explain` why), checks, summary. */
export function report(run: ScenarioRun, file: string, wallMs: number, full: boolean, explain = false): string[] {
  const { trace, world } = run;
  const changed = Object.entries(trace.readings)
    .filter(([id, value]) => value !== DEFAULTS[id])
    .map(([id, value]) => `${id}=${value}`);
  const departed = departures(run.world.constants);
  const lines = [
    `${trace.scenario.name} (${file}), seed ${String(trace.seed)}`,
    `readings: ${changed.length === 0 ? "all defaults" : `${changed.join("; ")}; others default`}`,
    ...(departed.length > 0
      ? [`DEPARTS FROM SPEC.md: ${departuresText(departed)}; the checks follow these numbers`]
      : []),
    "",
    ...timeline(eventsOf(trace), world.startMs, full),
    "",
    "outcomes:",
  ];
  // The rows the app's outcomes table shows (app/sim/outcomeRows.ts): each recipient's own attempts and POSTs.
  const labels = new Map(world.messages.map((m) => [m.messageId, m.id]));
  const rows = outcomeRows(eventsOf(trace), world.startMs, labels);
  const width = maxOf(
    rows.map((o) => o.message.length),
    4,
  );
  const rwidth = maxOf(
    rows.map((o) => o.recipient.length),
    9,
  );
  const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  for (const o of rows) {
    const at = o.atMs !== undefined ? formatOffset(o.atMs, world.startMs) : "";
    lines.push(
      `  ${o.message.padEnd(width)}  ${o.recipient.padEnd(rwidth)}  ${o.outcomeText.padEnd(24)} ${at.padEnd(12)} ${count(o.attempts, "attempt").padEnd(12)} ${count(o.posts, "POST").padEnd(9)} ${o.rule ?? ""}`.trimEnd(),
    );
  }
  if (explain) pushAll(lines, ["", ...whyLines(run, labels)]);
  lines.push("", "checks:");
  for (const c of [...run.invariants, ...run.expectations]) {
    lines.push(`  ${c.passed ? "ok  " : "FAIL"}  ${c.id}: ${readableRecordedText(c.detail ?? "")}`);
  }
  const checks = run.invariants.length + run.expectations.length;
  const failed = [...run.invariants, ...run.expectations].filter((c) => !c.passed).length;
  const virtual = formatOffset(run.endMs, world.startMs).slice(1);
  lines.push(
    "",
    `${run.passed ? "passed" : "FAILED"}: ${failed === 0 ? `all ${checks} checks` : `${failed} of ${checks} checks failed`}; ` +
      `${eventsOf(trace).length} events; ${virtual} of virtual time${run.complete ? "" : " (stopped at the horizon)"} in ${(wallMs / 1000).toFixed(2)} s`,
  );
  return lines;
}

const DEFAULTS: Readonly<Record<string, string>> = readingsNotation(defaultScenarioReadings);

/** An offset to the second, for lists: `+0:02:36`, `+5d 0:00:00`. */
function briefOffset(at: string): string {
  return at.replace(/\.\d{3}$/, "");
}

/** The start times of folded repeats: all when few, else the first three, `…` and the last two. */
function foldedTimes(times: readonly string[]): string {
  const brief = times.map(briefOffset);
  return brief.length <= 6 ? brief.join(", ") : `${brief.slice(0, 3).join(", ")} … ${brief.slice(-2).join(", ")}`;
}

/**
 * The timeline: one line per event worth reading (every event with `full`),
 * and runs of alike attempts collapsed into one line saying how many and
 * until when.
 */
export function timeline(events: Iterable<RecordedEvent>, startMs: number, full: boolean): string[] {
  let width = 0;
  const described: { at: string; domain: string; text: string }[] = [];
  for (const event of events) {
    width = Math.max(width, (event.domain ?? "").length);
    const text = describeEvent(event, { flavour: "timeline", full, startMs });
    if (text === undefined) continue;
    described.push({ at: formatOffset(event.timeMs, startMs), domain: event.domain ?? "", text });
  }
  // 14 columns hold +h:mm:ss.mmm; a run of days (+4d 23:40:45.301) widens the column for every line.
  const column = maxOf(
    described.map((l) => l.at.length),
    14,
  );
  const lines: TimelineLine[] = described.map(({ at, domain, text }) => ({
    text: `${at.padStart(column)}  ${domain.padEnd(width)}  ${text}`,
    shape: shapeOf(`${domain} ${text}`),
    at,
  }));
  return full ? lines.map((l) => l.text) : collapse(lines, column);
}

interface TimelineLine {
  readonly text: string;
  /** The line with numbers and times blanked: alike lines have the same shape. */
  readonly shape: string;
  readonly at: string;
}

function shapeOf(text: string): string {
  return text
    .replace(/\b(?:\d+(?:\.\d+)?(?:ms|[smhdw]))+\b/g, "#")
    .replace(/[+-]?\d[\d:.,]*/g, "#")
    .replace(/\b[A-Za-z0-9_-]{20,}\b/g, "~");
}

const MAX_PERIOD = 8;
const MIN_REPEATS = 3;

/** Finds blocks of 1…8 lines repeated at least three times in a row and prints the first once, then a count. */
function collapse(lines: readonly TimelineLine[], column: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    let best: { period: number; repeats: number } | undefined;
    for (let period = 1; period <= MAX_PERIOD && i + period * MIN_REPEATS <= lines.length; period++) {
      let repeats = 1;
      while (
        i + (repeats + 1) * period <= lines.length &&
        lines.slice(i + repeats * period, i + (repeats + 1) * period).every((l, k) => l.shape === lines[i + k]?.shape)
      ) {
        repeats++;
      }
      if (repeats >= MIN_REPEATS && (best === undefined || repeats * period > best.repeats * best.period)) {
        best = { period, repeats };
      }
    }
    if (best === undefined) {
      out.push((lines[i] as TimelineLine).text);
      i++;
      continue;
    }
    for (const line of lines.slice(i, i + best.period)) out.push(line.text);
    const last = lines[i + best.repeats * best.period - 1] as TimelineLine;
    const period = best.period;
    const starts = Array.from({ length: best.repeats - 1 }, (_, r) => (lines[i + (r + 1) * period] as TimelineLine).at);
    out.push(
      `${"".padStart(column)}  … the same ${best.repeats - 1} more time${best.repeats - 1 === 1 ? "" : "s"}, at ${foldedTimes(starts)}; the last ending at ${last.at}`,
    );
    i += best.repeats * best.period;
  }
  return out;
}
