/** Where the built CLI goes by default (scripts/build-cli.mjs). */
export const CLI_OUTDIR: string;
/** Builds the CLI into `outdir` (emptied first); resolves to the source files it was built from, relative to the root. */
export function buildCli(outdir?: string): Promise<string[]>;
