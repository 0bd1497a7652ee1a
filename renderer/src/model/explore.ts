/**
 * The Explore view's data: an exploration's progress as its
 * workers report runs, then its report. Pure functions, tested in Node; the
 * view only draws them.
 *
 * While the exploration runs, each run's report (app/explore/search.ts
 * `RunReport`) adds its new keys to the coverage, its paths to the gallery
 * (the smallest world per path) and its shrunk violations to the list; when
 * every worker is done, the report built from all lanes (the same function
 * the command line uses) replaces the live figures, so the view and
 * `mailscope explore` say the same.
 */
import { generateWorld, scenarioYaml, type WorldSize } from "../../../app/explore/generate.ts";
import { parseGenome } from "../../../app/explore/genome.ts";
import type { ExploreOptions } from "../../../app/explore/options.ts";
import type { ExploreReport } from "../../../app/explore/report.ts";
import type { RunReport } from "../../../app/explore/search.ts";
import { readableRecordedText } from "../../../app/trace/offset.ts";

/** A violated property as the view lists it. */
export interface ExploreViolation {
  readonly property: string;
  /** Runs that violated it so far. */
  readonly count: number;
  /** The first violating run (the lowest index seen). */
  readonly index: number;
  readonly seed: string;
  /** What the shrunk world shows. */
  readonly detail: string;
  readonly size: WorldSize;
  readonly shrinkRuns: number;
  /** The shrunk scenario as YAML; empty until the lane that found it has shrunk it. */
  readonly yaml: string;
}

/** A gallery entry: the smallest world seen that takes a path through the delivery machine. */
export interface ExploreGalleryEntry {
  readonly path: string;
  readonly seed: string;
  readonly index: number;
  readonly size: WorldSize;
}

/** The view's state of one exploration. */
export interface ExploreState {
  readonly phase: "idle" | "running" | "stopping" | "done" | "failed";
  readonly runs: number;
  /** Runs asked for. */
  readonly total: number;
  readonly keys: ReadonlySet<string>;
  /** Behaviours (keys) against runs, one point per run at most, for the growth chart. */
  readonly growth: readonly { readonly runs: number; readonly keys: number }[];
  readonly gallery: ReadonlyMap<string, ExploreGalleryEntry>;
  readonly violations: ReadonlyMap<string, ExploreViolation>;
  /** Set when every worker is done. */
  readonly report?: ExploreReport;
  readonly error?: string;
}

/** A state before any run. */
export function startState(total: number): ExploreState {
  return {
    phase: "running",
    runs: 0,
    total,
    keys: new Set(),
    growth: [{ runs: 0, keys: 0 }],
    gallery: new Map(),
    violations: new Map(),
  };
}

/** The state with `reports` (runs that ended since the last update, in any order) added. */
export function addRuns(state: ExploreState, reports: readonly RunReport[]): ExploreState {
  if (reports.length === 0) return state;
  const keys = new Set(state.keys);
  const gallery = new Map(state.gallery);
  const violations = new Map(state.violations);
  const growth = [...state.growth];
  let runs = state.runs;
  for (const r of reports) {
    runs++;
    for (const k of r.newKeys) keys.add(k);
    growth.push({ runs, keys: keys.size });
    for (const path of r.paths) {
      const known = gallery.get(path);
      const entry = { path, seed: r.seed, index: r.index, size: r.size };
      if (
        known === undefined ||
        r.size.total < known.size.total ||
        (r.size.total === known.size.total && r.index < known.index)
      )
        gallery.set(path, entry);
    }
    for (const property of r.failed) {
      const known = violations.get(property);
      const shrunk = r.shrunk?.find((f) => f.property === property);
      if (shrunk !== undefined && (known === undefined || known.yaml === "" || shrunk.index < known.index)) {
        violations.set(property, {
          property,
          count: (known?.count ?? 0) + 1,
          index: shrunk.index,
          seed: shrunk.seed,
          detail: readableRecordedText(shrunk.shrunkDetail),
          size: shrunk.shrunkSize,
          shrinkRuns: shrunk.shrinkRuns,
          yaml: shrunk.shrunkYaml,
        });
      } else if (known !== undefined) {
        violations.set(property, { ...known, count: known.count + 1 });
      } else {
        violations.set(property, {
          property,
          count: 1,
          index: r.index,
          seed: r.seed,
          detail: "",
          size: r.size,
          shrinkRuns: 0,
          yaml: "",
        });
      }
    }
  }
  return { ...state, runs, keys, growth, gallery, violations };
}

/** The state once every worker is done: the report's figures replace the live ones. */
export function withReport(state: ExploreState, report: ExploreReport): ExploreState {
  return {
    ...state,
    phase: "done",
    runs: report.runs,
    growth: report.coverage.growth,
    gallery: new Map(report.gallery.map((g) => [g.path, g])),
    violations: new Map(
      report.violations.map((v) => [
        v.property,
        {
          property: v.property,
          count: v.count,
          index: v.first.index,
          seed: v.first.seed,
          detail: readableRecordedText(v.shrunk.detail),
          size: v.shrunk.size,
          shrinkRuns: v.shrunk.runs,
          yaml: v.shrunk.yaml,
        },
      ]),
    ),
    report,
  };
}

/** At most `max` points of the growth curve, evenly spread, the last one kept (Recharts draws only what it is given). */
export function growthPoints(
  growth: readonly { runs: number; keys: number }[],
  max = 200,
): { runs: number; keys: number }[] {
  if (growth.length <= max) return [...growth];
  const step = (growth.length - 1) / (max - 1);
  const out: { runs: number; keys: number }[] = [];
  for (let i = 0; i < max; i++) out.push(growth[Math.round(i * step)] as { runs: number; keys: number });
  return out;
}

/** The gallery, smallest first. */
export function galleryList(state: ExploreState): ExploreGalleryEntry[] {
  return [...state.gallery.values()].sort(
    (a, b) => a.size.total - b.size.total || a.index - b.index || (a.path < b.path ? -1 : 1),
  );
}

/** The violations, the earliest found first. */
export function violationList(state: ExploreState): ExploreViolation[] {
  return [...state.violations.values()].sort((a, b) => a.index - b.index || a.property.localeCompare(b.property));
}

/** A gallery entry's world as a scenario file: its name and YAML, with a comment saying where it comes from. */
export function galleryScenario(
  entry: ExploreGalleryEntry,
  options: ExploreOptions,
  exploreSeed: string,
): { name: string; text: string } | undefined {
  const parsed = parseGenome(entry.seed);
  if (!parsed.ok) return undefined;
  const world = generateWorld(parsed.genome, options);
  return {
    name: `${String(world.scenario.name)}.yaml`,
    text: scenarioYaml(world.scenario, [
      `The smallest world mailscope explore (seed ${exploreSeed}) found that takes this path through the delivery machine:`,
      `  ${entry.path}`,
      `Run ${entry.index}, seed ${entry.seed}: mailscope explore --run ${entry.seed}`,
    ]),
  };
}

/** A violation's shrunk world as a scenario file, with a comment saying what it violates. */
export function violationScenario(v: ExploreViolation): { name: string; text: string } {
  return {
    name: `explore-${v.property}.yaml`,
    text: `# mailscope explore: this scenario violates ${v.property}.\n# What it shows: ${v.detail}\n# Found by run ${v.index} (seed ${v.seed}), shrunk in ${v.shrinkRuns} runs.\n${v.yaml}`,
  };
}

/** `12 of 100 runs`, the rate, behaviours, paths, violations: the progress line, built from the state alone. */
export function progressText(state: ExploreState, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (state.runs / elapsedMs) * 1000 : 0;
  const violated = state.violations.size;
  return `${state.runs} of ${state.total} runs · ${rate.toFixed(1)} runs/s · ${state.keys.size > 0 || state.report === undefined ? state.keys.size : state.report.coverage.keys} behaviours · ${state.gallery.size} paths · ${violated === 0 ? "no violation" : `${violated} ${violated === 1 ? "property" : "properties"} violated`}`;
}
