/**
 * `mailscope replay <bundle>`: re-runs the scenario of a bug bundle
 * (app/trace/bundle.ts) with the bundled seed, readings and body recording,
 * and checks that it reproduces: the re-run's trace, exported as the bundle's
 * was, has the bundle's trace hash. Exit 0 and "reproduced" when it does; 1
 * and the first differing event (or member) when it does not; 2 for a bad
 * bundle (not JSON, not a bundle, a newer version, a missing member, a trace
 * changed after export, an `eml:` file of the scenario it does not hold, a
 * scenario that no longer loads), each problem as `file: $.path: message [RULE]`.
 * The bundle is read with the limit of a trace the app opens (256 MiB).
 */
import { Command, CommanderError } from "commander";
import { readBoundedText, readErrorReason } from "../node/boundedRead.ts";
import { runScenarioText } from "../sim/runScenario.ts";
import { emlReader, formatScenarioError } from "../sim/scenario.ts";
import { compareReplay, readBundle, replaySettings, replaySummary } from "../trace/bundle.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { mailscopeVersion } from "./run.ts";

/** Exit codes: 0 reproduced, 1 not reproduced, 2 bad input. */
export const REPLAY_EXIT = { reproduced: 0, differs: 1, badInput: 2 } as const;

/** Replays `file`; resolves to the exit code. */
export async function replayCommandAction(file: string, io: CliIo = consoleIo): Promise<number> {
  let text: string;
  try {
    text = await readBoundedText(file, "traces");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(`mailscope replay: ${file}: ${code === "EISDIR" ? "a folder, not a bundle file" : readErrorReason(error)}`);
    return REPLAY_EXIT.badInput;
  }
  const read = await readBundle(text);
  if (!read.ok) {
    for (const v of read.violations) io.err(`${file}: ${v.path}: ${v.message} [${v.rule}]`);
    return REPLAY_EXIT.badInput;
  }
  const bundle = read.value;
  const replay = replaySettings(bundle);
  if (!replay.ok) {
    for (const v of replay.violations) io.err(`${file}: ${v.path}: ${v.message} [${v.rule}]`);
    return REPLAY_EXIT.badInput;
  }
  const settings = replay.value;
  io.out(
    `replaying ${bundle.scenario.name} (${file}), seed ${String(bundle.seed)}, recorded by Mailscope ${bundle.mailscope}`,
  );
  const version = mailscopeVersion();
  if (version !== bundle.mailscope) {
    io.out(
      `note: this is Mailscope ${version}; the trace names its version, so the hashes can only match on ${bundle.mailscope}`,
    );
  }
  const outcome = await runScenarioText(settings.text, {
    file: settings.file,
    seed: settings.seed,
    readings: settings.readings,
    recordBodies: settings.recordBodies,
    mailscope: version,
    readFile: emlReader(settings.emls),
  });
  if (!outcome.ok) {
    io.err(`${file}: $.scenario.text: the bundled scenario does not load here:`);
    for (const error of outcome.errors) io.err(`  ${formatScenarioError(error)}`);
    return REPLAY_EXIT.badInput;
  }
  const comparison = await compareReplay(bundle, outcome.run.trace);
  for (const line of replaySummary(comparison)) io.out(line);
  return comparison.reproduced ? REPLAY_EXIT.reproduced : REPLAY_EXIT.differs;
}

/** `mailscope replay <bundle>`. */
export function replayCommand(): Command {
  return new Command("replay")
    .description("re-run a bug bundle's scenario (same seed and readings) and check that it reproduces the same trace")
    .argument("<bundle>", "a bug bundle (mailscope run --bundle, or the app's Export ▸ Bug bundle)")
    .action(async (file: string) => {
      const code = await replayCommandAction(file);
      if (code !== 0) throw new CommanderError(code, "mailscope.replay.exit", "");
    });
}
