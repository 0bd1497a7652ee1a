/**
 * `npm run bench` (`node bench/run.ts [name…] [--json]`): runs every
 * `bench/*.bench.ts` (or those whose name contains one of the arguments), in
 * file-name order, and prints one table: each measure, its value and unit,
 * and its target with PASS or FAIL beside it. Exits 1 when a target is
 * missed, so CI can run it; benches without targets only report.
 *
 * A bench file exports `bench: Bench` (see `bench/types.ts`); adding a file
 * is all it takes to join the table.
 */
import { readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { meetsTarget, type Bench, type BenchResult } from "./types.ts";
import { maxOf } from "../app/protocol/lists.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** The bench files of this folder, sorted. */
export async function benchFiles(dir = here): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
}

async function load(file: string): Promise<Bench> {
  const module = (await import(pathToFileURL(join(here, file)).href)) as { bench?: Bench; default?: Bench };
  const bench = module.bench ?? module.default;
  if (bench === undefined || typeof bench.run !== "function")
    throw new Error(`${file} exports no bench ({ name, run })`);
  return bench;
}

/** Formats a number for the table: 3 significant digits, thousands kept whole. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString("en-US");
  return Number(value.toPrecision(3)).toString();
}

/** The table: one row per result, columns aligned. */
export function formatTable(rows: readonly { bench: string; result: BenchResult }[]): string {
  const cells = rows.map(({ bench, result }) => {
    const met = meetsTarget(result);
    return [
      bench,
      result.name,
      formatValue(result.value),
      result.unit,
      result.target?.label ?? "",
      met === undefined ? "" : met ? "PASS" : "FAIL",
      result.note ?? "",
    ];
  });
  const header = ["bench", "measure", "value", "unit", "target", "", "how"];
  const widths = header.map((h, i) =>
    maxOf(
      cells.map((c) => (c[i] ?? "").length),
      h.length,
    ),
  );
  const line = (c: readonly string[]): string =>
    c
      .map((v, i) => (i === 2 ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  const filters = argv.filter((a) => !a.startsWith("--"));
  const files = (await benchFiles()).filter((f) => filters.length === 0 || filters.some((n) => f.includes(n)));
  if (files.length === 0) {
    console.error(`no bench file matches ${filters.join(", ")} (have: ${(await benchFiles()).join(", ")})`);
    return 2;
  }
  const rows: { bench: string; result: BenchResult }[] = [];
  let broken = false;
  for (const file of files) {
    const started = performance.now();
    let bench: Bench;
    try {
      bench = await load(file);
      if (!json) console.error(`running ${bench.name}${bench.description ? `: ${bench.description}` : ""} …`);
      for (const result of await bench.run()) rows.push({ bench: bench.name, result });
    } catch (error) {
      broken = true;
      console.error(`${file}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      continue;
    }
    if (!json) console.error(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const failed = rows.filter((r) => meetsTarget(r.result) === false);
  if (json) {
    console.log(
      JSON.stringify(
        rows.map((r) => ({ bench: r.bench, ...r.result, pass: meetsTarget(r.result) })),
        null,
        2,
      ),
    );
  } else {
    console.log(formatTable(rows));
    console.log(
      failed.length === 0
        ? "\nevery target met"
        : `\n${failed.length} target(s) missed: ${failed.map((f) => `${f.bench} / ${f.result.name}`).join("; ")}`,
    );
  }
  return broken || failed.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
