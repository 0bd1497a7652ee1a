/**
 * The exploration's report, and the shard files it is merged from (docs/explore.md "Shards and merge").
 *
 * Lanes (search.ts) run anywhere; what each found is a {@link LaneResult}. A
 * shard writes its lanes' results with a header that says what was explored
 * (version, seed, runs, options, properties, the corpus resumed). The merge
 * checks that the headers agree and every shard is there once, then builds
 * the report from all lanes — the same function a single process uses — so
 * `--shard 1/4` … `4/4` and `explore merge` give the report one run gives,
 * byte for byte. The report holds no time, worker count or path: only what
 * was explored and found.
 */
import { rules as catalogue } from "../protocol/rules.ts";
import { pushAll } from "../protocol/lists.ts";
import type { Seed } from "../sim/random.ts";
import { machineGraph, transitionKeys } from "./coverage.ts";
import type { WorldSize } from "./generate.ts";
import { BUILT_IN_PROPERTIES } from "./judge.ts";
import type { ExploreOptions } from "./options.ts";
import { optionsRecord } from "./options.ts";
import { LISTED_RUNS, smaller, type CorpusEntry, type GalleryEntry, type LaneResult } from "./search.ts";
import type { UserProperty } from "./userProperties.ts";

/** The `format` of a shard file and of a report. */
export const SHARD_FORMAT = "mailscope-explore-shard";
export const REPORT_FORMAT = "mailscope-explore-report";
export const EXPLORE_FILE_VERSION = 1;

/** What was explored: the same in every shard of one exploration. */
export interface ExploreHeader {
  readonly mailscope: string;
  readonly seed: Seed;
  /** Runs asked for (`--runs`); null when the exploration ran for a time instead. */
  readonly runs: number | null;
  readonly options: Record<string, unknown>;
  /** The user's properties, as parsed. */
  readonly properties: readonly UserProperty[];
  /** The corpus resumed. */
  readonly corpus: readonly CorpusEntry[];
  /** The planted bug, in a test harness's exploration only. */
  readonly plantedBug?: string;
  /** The files the command line named (`--options`, `--properties`), for the reproduce commands. */
  readonly files: ExploreFiles;
}

/** The options and properties files of an exploration, as the command line named them. */
export interface ExploreFiles {
  readonly options?: string;
  readonly properties?: string;
}

/** A shard's result file. */
export interface ShardFile extends ExploreHeader {
  readonly format: typeof SHARD_FORMAT;
  readonly version: number;
  readonly shard: { readonly index: number; readonly count: number };
  readonly lanes: readonly LaneResult[];
}

/** The header of an exploration. */
export function exploreHeader(input: {
  mailscope: string;
  seed: Seed;
  runs: number | undefined;
  options: ExploreOptions;
  properties: readonly UserProperty[];
  corpus: readonly CorpusEntry[];
  plantedBug?: string | undefined;
  files?: ExploreFiles;
}): ExploreHeader {
  return {
    mailscope: input.mailscope,
    seed: input.seed,
    runs: input.runs ?? null,
    options: optionsRecord(input.options),
    properties: input.properties,
    corpus: input.corpus,
    ...(input.plantedBug !== undefined && { plantedBug: input.plantedBug }),
    files: input.files ?? {},
  };
}

/** A violated property in the report. */
export interface ReportedViolation {
  readonly property: string;
  readonly title: string;
  readonly rules: readonly string[];
  /** Runs that violated it. */
  readonly count: number;
  readonly first: { readonly index: number; readonly seed: string; readonly detail: string };
  /** The first violating runs, at most twenty. */
  readonly runs: readonly { readonly index: number; readonly seed: string }[];
  readonly shrunk: {
    readonly yaml: string;
    readonly size: WorldSize;
    readonly detail: string;
    readonly runs: number;
    /** The shrink budget ran out: it may shrink further with a larger `shrinkRuns`. */
    readonly exhausted: boolean;
  };
}

/** The report of an exploration. */
export interface ExploreReport {
  readonly format: typeof REPORT_FORMAT;
  readonly version: number;
  readonly mailscope: string;
  readonly seed: Seed;
  readonly runsAsked: number | null;
  /** Runs made (the shrinking's runs not counted). */
  readonly runs: number;
  readonly options: Record<string, unknown>;
  readonly properties: readonly { readonly id: string; readonly title: string; readonly user: boolean }[];
  readonly plantedBug?: string;
  /** The files that make the same worlds and properties, for the reproduce commands. */
  readonly files: ExploreFiles;
  readonly coverage: {
    /** Distinct behaviours (coverage keys), the resumed corpus's included. */
    readonly keys: number;
    readonly transitions: {
      readonly covered: number;
      readonly total: number;
      /** Those not reached: id and label. */
      readonly missing: readonly string[];
    };
    readonly rules: {
      readonly covered: number;
      readonly total: number;
      readonly percent: number;
      readonly ids: readonly string[];
    };
    readonly gaps: readonly string[];
    /** Behaviours against runs, for the growth chart: about a hundred points. */
    readonly growth: readonly { readonly runs: number; readonly keys: number }[];
  };
  readonly corpus: {
    readonly resumed: number;
    /** Runs that added coverage, in order, with how many keys each added first. */
    readonly added: readonly { readonly index: number; readonly seed: string; readonly keys: number }[];
  };
  readonly gallery: readonly GalleryEntry[];
  readonly violations: readonly ReportedViolation[];
}

/** Every key covered and the run that covered it first (the resumed corpus's keys at run -1). */
function firstCoverage(
  header: ExploreHeader,
  lanes: readonly LaneResult[],
): Map<string, { index: number; seed: string }> {
  const first = new Map<string, { index: number; seed: string }>();
  for (const entry of header.corpus) for (const k of entry.keys) first.set(k, { index: -1, seed: entry.seed });
  for (const lane of lanes) {
    for (const add of lane.additions) {
      for (const k of add.keys) {
        const known = first.get(k);
        if (known === undefined || add.index < known.index) first.set(k, { index: add.index, seed: add.seed });
      }
    }
  }
  return first;
}

/** The growth curve: keys covered before each of about a hundred points of the run count (the resumed corpus's from the start). */
function growth(first: ReadonlyMap<string, { index: number }>, runs: number): { runs: number; keys: number }[] {
  const at = [...first.values()].map((f) => f.index).sort((a, b) => a - b);
  const points = new Set<number>([0, runs]);
  const step = Math.max(1, Math.ceil(runs / 100));
  for (let r = step; r < runs; r += step) points.add(r);
  let i = 0;
  return [...points]
    .sort((a, b) => a - b)
    .map((r) => {
      while (i < at.length && (at[i] as number) < r) i++;
      return { runs: r, keys: i };
    });
}

/**
 * The report of an exploration from all its lanes' results (whichever
 * processes ran them). Pure and order-independent: the lanes may come in any
 * order.
 */
export function buildReport(header: ExploreHeader, laneResults: readonly LaneResult[]): ExploreReport {
  const lanes = [...laneResults].sort((a, b) => a.lane - b.lane);
  const runs = lanes.reduce((n, l) => n + l.runs, 0);
  const first = firstCoverage(header, lanes);
  const keys = [...first.keys()];
  const graph = machineGraph();
  const covered = new Set(keys);
  const transitions = transitionKeys();
  const missing = graph.transitions
    .filter((t) => !covered.has(`transition:${t.id}`))
    .map(
      (t) =>
        `${t.id} (${t.label}${typeof t.meta === "object" && t.meta !== null && "name" in t.meta ? `: ${String(t.meta["name"])}` : ""})`,
    );
  const ruleIds = catalogue.map((r) => r.id).filter((id) => covered.has(`rule:${id}`));

  // The corpus: the runs that were the first to cover some key.
  const firstBy = new Map<number, { seed: string; keys: number }>();
  for (const f of first.values()) {
    if (f.index < 0) continue;
    const known = firstBy.get(f.index);
    firstBy.set(f.index, { seed: f.seed, keys: (known?.keys ?? 0) + 1 });
  }

  // The gallery: per path, the smallest world of any lane.
  const gallery = new Map<string, GalleryEntry>();
  for (const lane of lanes) {
    for (const entry of lane.gallery) {
      const known = gallery.get(entry.path);
      if (known === undefined || smaller(entry, known)) gallery.set(entry.path, entry);
    }
  }

  // Violations: per property, the first violating run across lanes, with that lane's shrunk world.
  const titles = new Map<string, { title: string; rules: readonly string[] }>(
    BUILT_IN_PROPERTIES.map((p) => [p.id, { title: p.title, rules: p.rules }]),
  );
  for (const p of header.properties) titles.set(p.id, { title: p.description ?? p.id, rules: [] });
  const byProperty = new Map<string, ReportedViolation>();
  for (const lane of lanes) {
    for (const f of lane.findings) {
      const known = byProperty.get(f.property);
      const count = (known?.count ?? 0) + f.count;
      const listed = [...(known?.runs ?? []), ...f.runs].sort((a, b) => a.index - b.index).slice(0, LISTED_RUNS);
      if (known !== undefined && known.first.index < f.index) {
        byProperty.set(f.property, { ...known, count, runs: listed });
        continue;
      }
      byProperty.set(f.property, {
        property: f.property,
        title: titles.get(f.property)?.title ?? f.property,
        rules: titles.get(f.property)?.rules ?? [],
        count,
        first: { index: f.index, seed: f.seed, detail: f.detail },
        runs: listed,
        shrunk: {
          yaml: f.shrunkYaml,
          size: f.shrunkSize,
          detail: f.shrunkDetail,
          runs: f.shrinkRuns,
          exhausted: f.shrinkExhausted,
        },
      });
    }
  }
  const order = [...titles.keys()];
  const violations = [...byProperty.values()].sort(
    (a, b) => order.indexOf(a.property) - order.indexOf(b.property) || a.property.localeCompare(b.property),
  );

  return {
    format: REPORT_FORMAT,
    version: EXPLORE_FILE_VERSION,
    mailscope: header.mailscope,
    seed: header.seed,
    runsAsked: header.runs,
    runs,
    options: header.options,
    properties: [
      ...BUILT_IN_PROPERTIES.map((p) => ({ id: p.id, title: p.title, user: false })),
      ...header.properties.map((p) => ({ id: p.id, title: p.description ?? p.id, user: true })),
    ],
    ...(header.plantedBug !== undefined && { plantedBug: header.plantedBug }),
    files: header.files,
    coverage: {
      keys: keys.length,
      transitions: { covered: transitions.filter((t) => covered.has(t)).length, total: transitions.length, missing },
      rules: {
        covered: ruleIds.length,
        total: catalogue.length,
        percent: Math.round((100 * ruleIds.length) / catalogue.length),
        ids: ruleIds,
      },
      gaps: keys
        .filter((k) => k.startsWith("gap:"))
        .map((k) => k.slice(4))
        .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))),
      growth: growth(first, runs),
    },
    corpus: {
      resumed: header.corpus.length,
      added: [...firstBy].sort(([a], [b]) => a - b).map(([index, v]) => ({ index, seed: v.seed, keys: v.keys })),
    },
    gallery: [...gallery.values()].sort(
      (a, b) => a.size.total - b.size.total || a.index - b.index || (a.path < b.path ? -1 : 1),
    ),
    violations,
  };
}

/** The report as its file holds it: JSON, two-space indented, a newline at the end. */
export function reportText(report: ExploreReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** A shard's file. */
export function shardFile(
  header: ExploreHeader,
  shard: { index: number; count: number },
  lanes: readonly LaneResult[],
): ShardFile {
  return { format: SHARD_FORMAT, version: EXPLORE_FILE_VERSION, ...header, shard, lanes };
}

/** The outcome of {@link mergeShards}. */
export type MergeResult =
  | { readonly ok: true; readonly header: ExploreHeader; readonly lanes: readonly LaneResult[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/** What two headers differ in, in words (`seed: 1 here, 2 in shard-2.json`). */
function differences(a: Record<string, unknown>, b: Record<string, unknown>, prefix = ""): string[] {
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
    const x = a[key];
    const y = b[key];
    if (JSON.stringify(x) === JSON.stringify(y)) continue;
    if (
      typeof x === "object" &&
      x !== null &&
      typeof y === "object" &&
      y !== null &&
      !Array.isArray(x) &&
      !Array.isArray(y)
    ) {
      pushAll(out, differences(x as Record<string, unknown>, y as Record<string, unknown>, `${prefix}${key}.`));
    } else {
      const show = (v: unknown): string => {
        const text = JSON.stringify(v) ?? "absent";
        return text.length > 60 ? `${text.slice(0, 57)}…` : text;
      };
      out.push(`${prefix}${key}: ${show(x)} vs ${show(y)}`);
    }
  }
  return out;
}

/**
 * Checks that `files` (name → parsed JSON) are the shards of one exploration
 * — same format and version, Mailscope version, seed, runs, options,
 * properties, corpus and shard count, each shard once — and gathers their
 * lanes. A mismatch is refused, saying what differs.
 */
export function mergeShards(files: readonly { readonly name: string; readonly value: unknown }[]): MergeResult {
  const problems: string[] = [];
  const shards: { name: string; file: ShardFile }[] = [];
  for (const { name, value } of files) {
    const v = value as Partial<ShardFile> | null;
    if (typeof v !== "object" || v === null || v.format !== SHARD_FORMAT) {
      problems.push(`${name}: not a shard file of mailscope explore (its format is not "${SHARD_FORMAT}")`);
      continue;
    }
    if (v.version !== EXPLORE_FILE_VERSION) {
      problems.push(
        `${name}: shard file version ${String(v.version)}; this Mailscope reads version ${EXPLORE_FILE_VERSION}`,
      );
      continue;
    }
    if (!Array.isArray(v.lanes) || typeof v.shard !== "object" || v.shard === null) {
      problems.push(`${name}: the shard file has no lanes or no shard`);
      continue;
    }
    shards.push({ name, file: v as ShardFile });
  }
  if (shards.length === 0) return { ok: false, problems: problems.length > 0 ? problems : ["no shard files given"] };
  const [reference] = shards as [{ name: string; file: ShardFile }];
  const headerOf = (f: ShardFile): Record<string, unknown> => {
    const { format: _f, version: _v, shard, lanes: _l, ...rest } = f;
    return { ...rest, shards: shard.count };
  };
  for (const { name, file } of shards.slice(1)) {
    const diff = differences(headerOf(reference.file), headerOf(file));
    if (diff.length > 0)
      problems.push(`${name} is not a shard of the exploration of ${reference.name}: ${diff.join("; ")}`);
  }
  const count = reference.file.shard.count;
  const seen = new Map<number, string>();
  for (const { name, file } of shards) {
    const other = seen.get(file.shard.index);
    if (other !== undefined) problems.push(`${name} and ${other} are both shard ${file.shard.index}/${count}`);
    seen.set(file.shard.index, name);
  }
  const absent = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (absent.length > 0)
    problems.push(`shard${absent.length > 1 ? "s" : ""} ${absent.map((i) => `${i}/${count}`).join(", ")} missing`);
  if (problems.length > 0) return { ok: false, problems };
  const { format: _f, version: _v, shard: _s, lanes: _l, ...header } = reference.file;
  return { ok: true, header, lanes: shards.flatMap((s) => s.file.lanes) };
}

/** The runs that were the first to cover some key, as corpus entries with those keys (for `--corpus`). */
export function corpusAdditions(header: ExploreHeader, lanes: readonly LaneResult[]): CorpusEntry[] {
  const first = firstCoverage(header, lanes);
  const byRun = new Map<number, { seed: string; keys: string[] }>();
  for (const [key, f] of first) {
    if (f.index < 0) continue;
    const entry = byRun.get(f.index) ?? { seed: f.seed, keys: [] };
    entry.keys.push(key);
    byRun.set(f.index, entry);
  }
  return [...byRun].sort(([a], [b]) => a - b).map(([, e]) => ({ seed: e.seed, keys: e.keys.sort() }));
}

/** A size in words: `2 domains, 1 message, 3 recipients, 1 fault`. */
export function sizeWords(size: WorldSize): string {
  const n = (count: number, one: string): string => `${count} ${one}${count === 1 ? "" : "s"}`;
  return `${n(size.domains, "domain")}, ${n(size.messages, "message")}, ${n(size.recipients, "recipient")}, ${n(size.faults, "fault")}`;
}
