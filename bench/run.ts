/**
 * `npm run bench` (`node bench/run.ts [name…] [--json]`): runs every
 * `bench/*.bench.ts` (or those whose name contains one of the arguments), in
 * file-name order, and prints one table: each measure, its value and unit,
 * and its target with PASS or FAIL beside it. Exits 1 when a target is
 * missed, so CI can run it; benches without targets only report.
 *
 * `--baseline <git-rev> [--rounds N]` compares this tree with another commit on
 * this machine in one run: the other commit is checked out in a temporary git
 * worktree (its CLI built when it has a CLI build, its renderer when an app
 * bench is asked for), and each bench file is run as a child process in both
 * trees in turn, N rounds (default 1) alternating which goes first, so that
 * both see the same machine. Every measure found in both is printed with its
 * value here, there and the change; a measure with a target that is more than
 * {@link REGRESSION} worse here, in its target's direction, is a REGRESSION
 * and the run exits 1. Measures one side lacks are printed with a dash.
 *
 * A bench file exports `bench: Bench` (see `bench/types.ts`); adding a file
 * is all it takes to join the table.
 */
import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
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
  const baselineAt = argv.indexOf("--baseline");
  const roundsAt = argv.indexOf("--rounds");
  const valued = new Set([baselineAt + 1, roundsAt + 1].filter((i) => i > 0));
  const filters = argv.filter((a, i) => !a.startsWith("--") && !valued.has(i));
  if (baselineAt >= 0) {
    const rev = argv[baselineAt + 1];
    const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 1;
    if (rev === undefined || rev.startsWith("--") || !(Number.isInteger(rounds) && rounds >= 1)) {
      console.error("usage: node bench/run.ts [name…] --baseline <git-rev> [--rounds N]");
      return 2;
    }
    return compareWithBaseline(rev, filters, rounds);
  }
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

// ── Comparing two commits ────────────────────────────────────────────

/** A measure more than this much worse than the baseline's, in its target's direction, is a regression. */
export const REGRESSION = 0.2;

const root = join(here, "..");

interface Row {
  readonly bench: string;
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly target?: BenchResult["target"];
}

/** Runs a command to its end; its stdout. Rejects when it cannot start (a non-zero exit is the caller's to judge). */
function output(
  command: string,
  args: readonly string[],
  cwd: string,
  inherit = false,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", inherit ? "inherit" : "pipe"] });
    let out = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", () => undefined);
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** The rows a bench file prints with `--json` when run in the tree at `dir`; none when it broke. */
async function rowsOf(dir: string, name: string): Promise<Row[]> {
  const { out } = await output(process.execPath, [join(dir, "bench", "run.ts"), name, "--json"], dir, true);
  const start = out.indexOf("[");
  if (start < 0) return [];
  try {
    return JSON.parse(out.slice(start)) as Row[];
  } catch {
    return [];
  }
}

/** `value` of `now` against `base`: the change, and whether it is a regression in the direction of the target. */
export function judge(
  now: number,
  base: number,
  target: BenchResult["target"],
): { change: number; regression: boolean } {
  const change = now / base - 1;
  if (target === undefined || !Number.isFinite(change)) return { change, regression: false };
  return { change, regression: target.op === ">=" ? now < base * (1 - REGRESSION) : now > base * (1 + REGRESSION) };
}

async function compareWithBaseline(rev: string, filters: readonly string[], rounds: number): Promise<number> {
  const files = (await benchFiles()).filter((f) => filters.length === 0 || filters.some((n) => f.includes(n)));
  const base = await mkdtemp(join(tmpdir(), "mailscope-bench-baseline-"));
  const added = await output("git", ["worktree", "add", "--detach", base, rev], root);
  if (added.code !== 0) {
    console.error(`cannot check out ${rev} in a temporary worktree`);
    await rm(base, { recursive: true, force: true });
    return 2;
  }
  try {
    // The same dependencies: this tree's node_modules (the lockfile may differ; the bench says which commit it ran).
    await symlink(realpathSync(join(root, "node_modules")), join(base, "node_modules"));
    const names = files.map((f) => f.replace(/\.bench\.ts$/, ""));
    const there = new Set((await readdir(join(base, "bench"))).filter((f) => f.endsWith(".bench.ts")));
    if (existsSync(join(base, "scripts", "build-cli.mjs")))
      await output(process.execPath, [join(base, "scripts", "build-cli.mjs")], base);
    if (names.some((n) => n === "app" || n === "timeline"))
      await output(process.execPath, [join(base, "scripts", "build.mjs"), "renderer"], base);
    const now = new Map<string, number[]>();
    const then = new Map<string, number[]>();
    const meta = new Map<string, Row>();
    const add = (into: Map<string, number[]>, rows: readonly Row[]): void => {
      for (const row of rows) {
        const key = `${row.bench}\u0000${row.name}`;
        if (!meta.has(key) || into === now) meta.set(key, row);
        into.set(key, [...(into.get(key) ?? []), row.value]);
      }
    };
    for (const [i, file] of files.entries()) {
      const name = names[i] ?? file;
      for (let round = 0; round < rounds; round++) {
        console.error(`${name}: round ${round + 1} of ${rounds} …`);
        const order = round % 2 === 0 ? ["now", "then"] : ["then", "now"];
        for (const side of order) {
          if (side === "now") add(now, await rowsOf(root, name));
          else if (there.has(file)) add(then, await rowsOf(base, name));
        }
      }
    }
    let regressions = 0;
    const cells = [...meta].map(([key, row]) => {
      const a = now.get(key);
      const b = then.get(key);
      const va = a === undefined ? undefined : medianOf(a);
      const vb = b === undefined ? undefined : medianOf(b);
      const verdict = va !== undefined && vb !== undefined ? judge(va, vb, row.target) : undefined;
      if (verdict?.regression) regressions++;
      return [
        row.bench,
        row.name,
        va === undefined ? "—" : formatValue(va),
        vb === undefined ? "—" : formatValue(vb),
        row.unit,
        verdict === undefined ? "" : `${verdict.change >= 0 ? "+" : ""}${(verdict.change * 100).toFixed(0)} %`,
        row.target?.label ?? "",
        verdict?.regression ? "REGRESSION" : "",
      ];
    });
    const header = ["bench", "measure", "this tree", rev, "unit", "change", "target", ""];
    const widths = header.map((h, i) =>
      maxOf(
        cells.map((c) => (c[i] ?? "").length),
        h.length,
      ),
    );
    const line = (c: readonly string[]): string =>
      c
        .map((v, i) => (i === 2 || i === 3 || i === 5 ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd();
    console.log([line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n"));
    console.log(
      regressions === 0
        ? `\nno measure with a target is more than ${REGRESSION * 100} % worse than at ${rev} (medians of ${rounds} round(s), run in turn)`
        : `\n${regressions} measure(s) more than ${REGRESSION * 100} % worse than at ${rev}`,
    );
    return regressions > 0 ? 1 : 0;
  } finally {
    await output("git", ["worktree", "remove", "--force", base], root);
    await rm(base, { recursive: true, force: true });
  }
}

const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
