/**
 * Coverage-guided search in lanes (docs/explore.md "How the search
 * goes").
 *
 * The runs of an exploration are numbered 0, 1, 2 … and dealt to `lanes`
 * independent lanes: run j belongs to lane j mod lanes. A lane is a fuzzer of
 * its own: its n-th run either starts a fresh world from a number its own
 * PRNG stream draws, or — with `mutateChance`, once it has a corpus — takes
 * an entry of its corpus (the runs that added to what the lane had seen, and
 * any corpus the exploration resumed) and redraws one or two parts of it
 * (genome.ts). Every decision comes from the lane's stream and the results
 * of the lane's own earlier runs, which are deterministic; so a lane runs the
 * same worlds whichever worker or machine runs it, and lanes can be split
 * over worker threads, processes and machines (`--shard`) and merged after
 * (report.ts) into the report one process would have written.
 *
 * The first time a lane sees a property fail, it shrinks that world
 * (shrink.ts) before going on; later violations of the same property are
 * counted.
 */
import { createRandom, type Seed } from "../sim/random.ts";
import { readableRecordedText } from "../trace/offset.ts";
import type { ScenarioInput } from "../sim/scenario.ts";
import type { PlantedBug } from "../sender/plantedBugs.ts";
import { formatGenome, parseGenome, PARTS, withPart, type Genome } from "./genome.ts";
import { generateWorld, scenarioYaml, worldSize, type WorldSize } from "./generate.ts";
import { judgeScenario, type JudgeContext } from "./judge.ts";
import type { ExploreOptions } from "./options.ts";
import { shrinkWorld } from "./shrink.ts";
import type { UserProperty } from "./userProperties.ts";

/** A corpus entry as the exploration resumes it: a run's seed and the keys it covered. */
export interface CorpusEntry {
  readonly seed: string;
  readonly keys: readonly string[];
}

/** Everything an exploration's lanes are run with. */
export interface ExploreConfig {
  /** The exploration's seed: each lane's stream is forked from it. */
  readonly seed: Seed;
  /** How many runs in all (over every lane); undefined: until stopped. */
  readonly runs?: number;
  readonly options: ExploreOptions;
  readonly properties: readonly UserProperty[];
  /** The corpus resumed (`--corpus DIR`), in a fixed order. */
  readonly corpus: readonly CorpusEntry[];
  /** The Mailscope version, for traces and bundles. */
  readonly mailscope: string;
  /** A bug planted by the test harness only (app/sender/plantedBugs.ts). */
  readonly plantedBug?: PlantedBug;
}

/** One run as its lane reports it (for progress lines and the app). */
export interface RunReport {
  readonly lane: number;
  readonly index: number;
  readonly seed: string;
  /** Keys this run added to its lane's coverage. */
  readonly newKeys: readonly string[];
  /** Paths through the machine it took, with its size: the gallery's candidates. */
  readonly paths: readonly string[];
  readonly size: WorldSize;
  /** The properties it violated. */
  readonly failed: readonly string[];
  /** Set when this run was the lane's first violation of a property and was shrunk. */
  readonly shrunk?: readonly Finding[];
}

/** A lane's smallest world for a path through the machine. */
export interface GalleryEntry {
  readonly path: string;
  readonly seed: string;
  readonly index: number;
  readonly size: WorldSize;
}

/** A violated property, as a lane found and shrank it. */
export interface Finding {
  readonly property: string;
  /** What the first violating run showed. */
  readonly detail: string;
  /** The first violating run. */
  readonly index: number;
  readonly seed: string;
  /** How many of the lane's runs violated it. */
  readonly count: number;
  /** The lane's first violating runs (at most {@link LISTED_RUNS}). */
  readonly runs: readonly { readonly index: number; readonly seed: string }[];
  /** The shrunk world, as YAML without comments. */
  readonly shrunkYaml: string;
  readonly shrunkSize: WorldSize;
  /** What the shrunk world shows. */
  readonly shrunkDetail: string;
  /** Runs the shrinking took. */
  readonly shrinkRuns: number;
  readonly shrinkExhausted: boolean;
}

/** What a lane leaves for the merge. */
export interface LaneResult {
  readonly lane: number;
  readonly runs: number;
  /** Runs that added keys to the lane's coverage, with those keys. */
  readonly additions: readonly { readonly index: number; readonly seed: string; readonly keys: readonly string[] }[];
  readonly gallery: readonly GalleryEntry[];
  readonly findings: readonly Finding[];
}

/** Violating runs listed per property. */
export const LISTED_RUNS = 20;

/** Whether gallery entry `a` is a better example than `b`: smaller, then found earlier. */
export function smaller(a: { size: WorldSize; index: number }, b: { size: WorldSize; index: number }): boolean {
  return a.size.total < b.size.total || (a.size.total === b.size.total && a.index < b.index);
}

/** One lane of the search. Call {@link next} until it returns undefined, then {@link result}. */
export class Lane {
  readonly lane: number;
  readonly #config: ExploreConfig;
  readonly #context: JudgeContext;
  readonly #random;
  readonly #parents: Genome[];
  readonly #seen: Set<string>;
  #position = 0;
  readonly #additions: { index: number; seed: string; keys: string[] }[] = [];
  readonly #gallery = new Map<string, GalleryEntry>();
  readonly #findings = new Map<string, Finding>();

  constructor(config: ExploreConfig, lane: number) {
    this.lane = lane;
    this.#config = config;
    this.#context = {
      properties: config.properties,
      mailscope: config.mailscope,
      ...(config.plantedBug !== undefined && { plantedBug: config.plantedBug }),
    };
    this.#random = createRandom(config.seed).fork(`lane/${lane}`);
    this.#parents = config.corpus.flatMap((e) => {
      const parsed = parseGenome(e.seed);
      return parsed.ok ? [parsed.genome] : [];
    });
    this.#seen = new Set(config.corpus.flatMap((e) => e.keys));
  }

  /** The index of the lane's next run, or undefined when the lane has done its share of `runs`. */
  nextIndex(): number | undefined {
    const index = this.lane + this.#config.options.lanes * this.#position;
    return this.#config.runs !== undefined && index >= this.#config.runs ? undefined : index;
  }

  /** The genome of the next run: fresh, or a mutation of a corpus entry. */
  #nextGenome(): Genome {
    const r = this.#random;
    if (this.#parents.length > 0 && r.chance(this.#config.options.mutateChance)) {
      let genome = this.#parents[r.int(0, this.#parents.length)] as Genome;
      const changes = r.chance(0.3) ? 2 : 1;
      for (let i = 0; i < changes; i++)
        genome = withPart(genome, PARTS[r.int(0, PARTS.length)] ?? "faults", r.uint32());
      return genome;
    }
    return { base: r.uint32(), overrides: {} };
  }

  /** Runs the lane's next run; undefined when the lane is done. */
  async next(): Promise<RunReport | undefined> {
    const index = this.nextIndex();
    if (index === undefined) return undefined;
    this.#position++;
    const genome = this.#nextGenome();
    const seed = formatGenome(genome);
    let scenario: ScenarioInput | undefined;
    let judgement;
    try {
      scenario = generateWorld(genome, this.#config.options).scenario;
      judgement = await judgeScenario(scenario, this.#context);
    } catch (error) {
      // The generator itself failed: a finding like any other, never a crashed explorer.
      judgement = {
        checks: [{ id: "engine-crash", passed: false, detail: `the world could not be made: ${String(error)}` }],
        failed: ["engine-crash"],
        keys: new Set<string>(),
        paths: new Set<string>(),
      };
    }
    const newKeys = [...judgement.keys].filter((k) => !this.#seen.has(k)).sort();
    for (const k of newKeys) this.#seen.add(k);
    if (newKeys.length > 0) {
      this.#additions.push({ index, seed, keys: newKeys });
      this.#parents.push(genome);
    }
    const size = scenario !== undefined ? worldSize(scenario) : worldSize({ name: "-", domains: {} });
    for (const path of judgement.paths) {
      const entry = { path, seed, index, size };
      const known = this.#gallery.get(path);
      if (known === undefined || smaller(entry, known)) this.#gallery.set(path, entry);
    }
    const shrunk: Finding[] = [];
    for (const id of judgement.failed) {
      const known = this.#findings.get(id);
      if (known !== undefined) {
        this.#findings.set(id, {
          ...known,
          count: known.count + 1,
          runs: known.runs.length < LISTED_RUNS ? [...known.runs, { index, seed }] : known.runs,
        });
        continue;
      }
      const detail = judgement.checks.find((c) => c.id === id)?.detail ?? "";
      const finding = await this.#shrink(id, detail, index, seed, scenario);
      this.#findings.set(id, finding);
      shrunk.push(finding);
    }
    return {
      lane: this.lane,
      index,
      seed,
      newKeys,
      paths: [...judgement.paths],
      size,
      failed: judgement.failed,
      ...(shrunk.length > 0 && { shrunk }),
    };
  }

  async #shrink(
    property: string,
    detail: string,
    index: number,
    seed: string,
    scenario: ScenarioInput | undefined,
  ): Promise<Finding> {
    const base = { property, detail, index, seed, count: 1, runs: [{ index, seed }] };
    if (scenario === undefined) {
      return {
        ...base,
        shrunkYaml: "",
        shrunkSize: worldSize({ name: "-", domains: {} }),
        shrunkDetail: detail,
        shrinkRuns: 0,
        shrinkExhausted: false,
      };
    }
    let shrunkDetail = detail;
    const shrunk = await shrinkWorld(
      scenario,
      async (candidate) => {
        const judged = await judgeScenario(candidate, this.#context);
        const check = judged.checks.find((c) => c.id === property && !c.passed);
        if (check !== undefined) shrunkDetail = check.detail ?? "";
        return check !== undefined;
      },
      this.#config.options.shrinkRuns,
    );
    // The detail of the world kept: judged once more only when the last candidate run was not it.
    const final = await judgeScenario(shrunk.scenario, this.#context);
    shrunkDetail = final.checks.find((c) => c.id === property)?.detail ?? shrunkDetail;
    // The description is for the person who opens the file: its times read as the app writes them (+5d 0:25:48),
    // the report keeps the recorded text (0075).
    const named = {
      ...shrunk.scenario,
      name: `explore-${property}`,
      description: `${property}: ${readableRecordedText(shrunkDetail)}`,
    };
    return {
      ...base,
      shrunkYaml: scenarioYaml(named),
      shrunkSize: worldSize(shrunk.scenario),
      shrunkDetail,
      shrinkRuns: shrunk.runs,
      shrinkExhausted: shrunk.exhausted,
    };
  }

  /** What the lane found, for the merge. */
  result(): LaneResult {
    return {
      lane: this.lane,
      runs: this.#position,
      additions: this.#additions,
      gallery: [...this.#gallery.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      findings: [...this.#findings.values()].sort((a, b) => a.index - b.index),
    };
  }
}

/** The lanes a shard runs: lane l belongs to shard (l mod count) + 1. */
export function shardLanes(lanes: number, shard: { readonly index: number; readonly count: number }): number[] {
  return Array.from({ length: lanes }, (_, l) => l).filter((l) => l % shard.count === shard.index - 1);
}

/**
 * Runs `lanes` in turn, one run of each at a time, in this thread, until
 * each is done or `shouldStop` says so. `onRun` hears every run.
 */
export async function runLanes(
  config: ExploreConfig,
  lanes: readonly number[],
  hooks: { readonly onRun?: (report: RunReport) => void; readonly shouldStop?: () => boolean } = {},
): Promise<LaneResult[]> {
  const active = lanes.map((l) => new Lane(config, l));
  let open = [...active];
  while (open.length > 0 && hooks.shouldStop?.() !== true) {
    const still: Lane[] = [];
    for (const lane of open) {
      if (hooks.shouldStop?.() === true) {
        still.push(lane);
        continue;
      }
      const report = await lane.next();
      if (report === undefined) continue;
      hooks.onRun?.(report);
      still.push(lane);
    }
    open = still;
  }
  return active.map((l) => l.result());
}
