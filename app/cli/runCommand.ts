/**
 * The `run` and `check` commands' lines (their arguments and options) and
 * where their runs happen: app/cli/run.ts's `runCommandAction` and
 * app/cli/check.ts's `checkCommandAction`, for a large scenario in a worker
 * thread with a bounded heap (app/node/runThread.ts, decisions 0130, 0195,
 * 0225), so that a large run holds less; a small one on this thread, where it
 * starts sooner. This module loads no engine: the thread does, or run.ts and
 * check.ts when the run stays here.
 */
import { Command, CommanderError } from "commander";
import { stat } from "node:fs/promises";
import { consoleIo, type CliIo } from "./io.ts";
import type { RunOptions } from "./run.ts";
import type { CheckOptions } from "./check.ts";
import { startRunThread } from "../node/runThread.ts";
import { findScenarioFiles } from "../node/findScenarioFiles.ts";

/** What the run's thread is given: the command (`run` a file, or `check` paths) with its options. */
export type RunThreadData = (
  | { readonly command: "run"; readonly file: string; readonly options: RunOptions }
  | { readonly command: "check"; readonly paths: readonly string[]; readonly options: CheckOptions }
) & {
  /** Whether this process's stderr is a terminal (a thread's is not): progress is printed by default then. */
  readonly errIsTty: boolean;
};

/** What the run's thread posts: lines for stdout (a batch), a line for stderr, the exit code, or an error it did not expect. */
export type RunThreadMessage =
  | { readonly out: readonly string[] }
  | { readonly err: string }
  | { readonly exit: number }
  | { readonly failed: string };

/**
 * The thread's module: the TypeScript beside this file, or in the built CLI
 * (scripts/build-cli.mjs) the entry `dist-cli/runCommandThread.js`, this
 * module being bundled into a chunk of `dist-cli/chunks/`.
 */
const THREAD_MODULE = import.meta.url.endsWith(".ts")
  ? new URL("./runCommandThread.ts", import.meta.url)
  : new URL("../runCommandThread.js", import.meta.url);

/**
 * A scenario file of this many bytes or more runs in a thread. A scenario
 * lists its messages, domains and faults one by one, so its size is what a
 * run's grows with; a thread costs a fresh process ~0.08 s of CPU and ~14 MiB
 * more (Node and the engine loaded a second time), which only a run of some
 * hundreds of messages pays back (0130). The scenarios/ files are 1–7 KB.
 */
export const RUN_THREAD_MIN_BYTES = 32 * 1024;

/** Whether `file` is run in a thread: a file of {@link RUN_THREAD_MIN_BYTES} or more (one that cannot be read stays here, and says so). */
export async function runsInThread(file: string): Promise<boolean> {
  try {
    return (await stat(file)).size >= RUN_THREAD_MIN_BYTES;
  } catch {
    return false;
  }
}

/**
 * Whether `mailscope check paths` plays its scenarios in a thread: when one of
 * its scenario files would (a fleet among small scenarios holds as much as on
 * its own). The default `scenarios/` files are all small.
 */
export async function checksInThread(paths: readonly string[]): Promise<boolean> {
  for (const file of await findScenarioFiles(paths)) if (await runsInThread(file)) return true;
  return false;
}

/**
 * `runCommandAction(file, options)` in the run's thread, its lines written to
 * `io` in the order it wrote them; resolves to its exit code, rejects with
 * the message of an error it did not expect (as `runCommandAction` throws it).
 */
export function runInThread(file: string, options: RunOptions, io: CliIo = consoleIo): Promise<number> {
  return commandInThread({ command: "run", file, options: { ...options }, errIsTty: io.errIsTty === true }, io);
}

/** `checkCommandAction(paths, options)` in the run's thread, as {@link runInThread} runs `run`'s. */
export function checkInThread(paths: readonly string[], options: CheckOptions, io: CliIo = consoleIo): Promise<number> {
  return commandInThread(
    { command: "check", paths: [...paths], options: { ...options }, errIsTty: io.errIsTty === true },
    io,
  );
}

function commandInThread(data: RunThreadData, io: CliIo): Promise<number> {
  const thread = startRunThread(THREAD_MODULE, data);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (act: () => void): void => {
      if (settled) return;
      settled = true;
      act();
    };
    thread.on("message", (message: RunThreadMessage) => {
      if ("out" in message) for (const line of message.out) io.out(line);
      else if ("err" in message) io.err(message.err);
      else if ("exit" in message) settle(() => resolve(message.exit));
      else settle(() => reject(new Error(message.failed)));
    });
    thread.on("error", (error: Error) => settle(() => reject(error)));
    thread.on("exit", (code) =>
      settle(() => reject(new Error(`the run's thread stopped with exit code ${code} before the run ended`))),
    );
  });
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `mailscope run <scenario> [--seed N] [--set G7=ignored]… [--trace out.mstrace] [--har out.har] [--report out.md] [--bundle out.msbundle] [--full] [--json] [--explain]`. */
export function runCommand(): Command {
  return new Command("run")
    .description("play a scenario at full speed: timeline, outcomes, invariants and expectations")
    .argument("<scenario>", "a scenario file (YAML)")
    .option("--seed <n>", "the seed (a number, or any string); default the scenario's")
    .option(
      "--set <gap=reading|knob=value>",
      "a gap reading over the scenario's, e.g. G7=ignored or G16.fallback-window=3h, or one of the draft's numbers, e.g. RETRY-2.cap=30m (repeatable)",
      collect,
    )
    .option("--trace <out.mstrace>", "write the trace (JSON; .mstrace opens in the desktop app by double-click)")
    .option("--har <out.har>", "write the HTTP exchanges as HAR 1.2")
    .option("--report <out.md>", "write a Markdown bug report with a sequence diagram")
    .option(
      "--bundle <out.msbundle>",
      "write a bug bundle: scenario and its eml: files, seed, readings, version, trace and report in one JSON file (mailscope replay checks it)",
    )
    .option("--full", "print every event, and keep message bodies in the trace")
    .option("--json", "print a JSON summary instead of the timeline")
    .option(
      "--explain",
      "after the outcomes, why each recipient got its outcome: the decisive events, with their times, rules and seqs",
    )
    .option("--progress", "print progress to stderr about once a second (default when stderr is a terminal)")
    .option("--no-progress", "print no progress")
    .action(async (file: string, options: RunOptions) => {
      const code = (await runsInThread(file))
        ? await runInThread(file, options)
        : await (await import("./run.ts")).runCommandAction(file, options);
      if (code !== 0) throw new CommanderError(code, "mailscope.run.exit", "");
    });
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
      // A fleet-sized scenario is played in the run's thread, as `run` plays it (decision 0225's addendum).
      const code = (await checksInThread(paths.length > 0 ? paths : ["scenarios"]))
        ? await checkInThread(paths, options)
        : await (await import("./check.ts")).checkCommandAction(paths, options);
      if (code !== 0) throw new CommanderError(code, "mailscope.check.exit", "");
    });
}
