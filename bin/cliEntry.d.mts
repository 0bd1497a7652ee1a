/** The module to import for `main` under `root`, and whether it is the built one (bin/cliEntry.mjs). */
export function cliEntry(root: string, choice?: string): { readonly path: string; readonly built: boolean };
