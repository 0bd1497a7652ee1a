/** The module to import for `main` under `root`, and whether it is the built one (bin/cliEntry.mjs). */
export function cliEntry(root: string, choice?: string): { readonly path: string; readonly built: boolean };
/** Node's compile cache for this process and the worker threads it starts (bin/cliEntry.mjs). */
export function enableCompileCache(
  nodeModule: { enableCompileCache?: () => { directory?: string } | undefined },
  env?: Record<string, string | undefined>,
): string | undefined;
/** The built CLI's one-file build under its folder (bin/cliEntry.mjs). */
export const ENGINE_FILE: string;
/** The built CLI's `main` for `run` and `check` from its one-file build with a V8 code cache (bin/cliEntry.mjs). */
export function startEngine(
  dist: string,
  argv: readonly string[],
):
  | {
      readonly main: (argv: readonly string[]) => Promise<number>;
      readonly cache: "none" | "taken" | "rejected";
      saveCodeCache(exitCode: number): string | undefined;
    }
  | undefined;
