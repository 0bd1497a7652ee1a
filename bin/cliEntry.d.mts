/** The module to import for `main` under `root`, and whether it is the built one (bin/cliEntry.mjs). */
export function cliEntry(root: string, choice?: string): { readonly path: string; readonly built: boolean };
/** Node's compile cache for this process and the worker threads it starts (bin/cliEntry.mjs). */
export function enableCompileCache(
  nodeModule: { enableCompileCache?: () => { directory?: string } | undefined },
  env?: Record<string, string | undefined>,
): string | undefined;
