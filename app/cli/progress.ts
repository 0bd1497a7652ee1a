/**
 * Progress of long runs on stderr (a million messages ran silently
 * for minutes). `mailscope run` and `mailscope check` print a line about once
 * a second while a run lasts — where virtual time is, how many events, how
 * many messages are done — when stderr is a terminal or with `--progress`
 * (`--no-progress` turns it off). A run shorter than the interval prints
 * nothing. The clock is the CliIo's, so tests drive it without wall time.
 */
import type { RunProgress } from "../sim/runScenario.ts";
import { formatOffset } from "../trace/offset.ts";
import type { CliIo } from "./io.ts";

/** Real ms between two progress lines. */
export const PROGRESS_INTERVAL_MS = 1000;

/** `progress: +1d 2:03:04 of +6d 0:00:00 virtual, 120345 events, 5012 of 100000 messages done`. */
export function formatProgress(progress: RunProgress, label?: string): string {
  return (
    `progress${label !== undefined ? ` ${label}` : ""}: ${briefOffset(progress.virtualMs)} of ${briefOffset(progress.horizonMs)} virtual, ` +
    `${progress.events} events, ${progress.messagesDone} of ${progress.messages} messages done`
  );
}

/** An offset to the second, as run's timeline writes it: `+1d 2:03:04`. */
function briefOffset(ms: number): string {
  return formatOffset(Math.floor(Math.max(0, ms) / 1000) * 1000, 0);
}

/** Whether to print progress: `--progress` / `--no-progress` when given, else when stderr is a terminal. */
export function progressWanted(option: boolean | undefined, io: CliIo): boolean {
  return option ?? io.errIsTty === true;
}

/**
 * A progress callback for `runLoadedScenario` that writes a line to `io.err`
 * at most once per {@link PROGRESS_INTERVAL_MS} of `io.now()`, the first one
 * interval after it was made.
 */
export function progressPrinter(io: CliIo, label?: string): (progress: RunProgress) => void {
  const now = io.now ?? ((): number => performance.now());
  let last = now();
  return (progress) => {
    const t = now();
    if (t - last < PROGRESS_INTERVAL_MS) return;
    last = t;
    io.err(formatProgress(progress, label));
  };
}
