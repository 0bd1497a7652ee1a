/**
 * The shape every bench file has: `bench/<name>.bench.ts` exports `bench`
 * (or a default export) of type {@link Bench}; `bench/run.ts` finds the files,
 * runs them in name order and prints one table.
 */

/** A goal a measure is held to, printed with pass or fail beside it. */
export interface BenchTarget {
  /** `>=` for rates and ratios, `<=` for costs such as memory. */
  readonly op: ">=" | "<=";
  readonly value: number;
  /** How the target reads in the table, e.g. `≥ 50 % of bare crypto`. */
  readonly label: string;
}

/** One measured number. */
export interface BenchResult {
  /** What was measured, e.g. `in-process deliveries (10 KB)`. */
  readonly name: string;
  readonly value: number;
  /** `deliveries/s`, `MiB/s`, `ratio`, `× message size`… */
  readonly unit: string;
  readonly target?: BenchTarget;
  /** How it was measured, in a few words (sample size, concurrency). */
  readonly note?: string;
}

/** A bench file's export. */
export interface Bench {
  readonly name: string;
  readonly description?: string;
  run(): Promise<readonly BenchResult[]>;
}

/** Whether a result meets its target; `undefined` when it has none. */
export function meetsTarget(result: BenchResult): boolean | undefined {
  if (result.target === undefined) return undefined;
  return result.target.op === ">=" ? result.value >= result.target.value : result.value <= result.target.value;
}
