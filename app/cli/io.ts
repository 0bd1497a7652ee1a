/** Where a command writes: results to `out`, progress and errors to `err`. Tests pass their own to capture them. */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Real ms, for progress lines (default `performance.now()`): tests pass a clock they move themselves. */
  readonly now?: () => number;
  /** Whether `err` is a terminal (progress lines are printed by default then). */
  readonly errIsTty?: boolean;
}

/** The terminal: stdout and stderr. */
export const consoleIo: CliIo = {
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  now: () => performance.now(),
  errIsTty: process.stderr.isTTY,
};
