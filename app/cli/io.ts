/** Where a command writes: results to `out`, progress and errors to `err`. Tests pass their own to capture them. */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The terminal: stdout and stderr. */
export const consoleIo: CliIo = { out: (text) => console.log(text), err: (text) => console.error(text) };
