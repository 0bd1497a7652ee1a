/**
 * One explored run: a world (from a genome, or a scenario the shrinker made)
 * run to its end by the engine (`runLoadedScenario`, exactly as `mailscope
 * run` runs a file), then judged by every property and read for coverage.
 *
 * Nothing the engine does crashes the explorer: a world that cannot be built
 * and an exception out of the run are findings (`engine-crash`), with the
 * seed that made them; an event that threw is the run's failed `simulation`
 * check, a finding too.
 */
import { errorWithName } from "../errorMessage.ts";
import type { PlantedBug } from "../sender/plantedBugs.ts";
import { INVARIANTS, type Model } from "../sim/invariants.ts";
import { runLoadedScenario, type ScenarioRun } from "../sim/runScenario.ts";
import { scenarioSchema, type LoadedScenario, type ScenarioInput } from "../sim/scenario.ts";
import type { CheckResult } from "../trace/schema.ts";
import { coverageKeys, machinePaths } from "./coverage.ts";
import { RUN_PROPERTIES, checkRunProperties, type JudgedEvent, type PropertyInfo } from "./properties.ts";
import { checkUserProperty, type UserProperty } from "./userProperties.ts";

/** A run that could not be built or ended in an exception. */
export const ENGINE_CRASH: PropertyInfo = {
  id: "engine-crash",
  title: "the engine builds the world and runs it to its end without an exception",
  rules: [],
};
/** An event of the run threw (the run's own `simulation` check). */
export const SIMULATION: PropertyInfo = {
  id: "simulation",
  title: "no event of the run throws",
  rules: [],
};

/** Every built-in property, in the order they are reported. */
export const BUILT_IN_PROPERTIES: readonly PropertyInfo[] = [
  ENGINE_CRASH,
  SIMULATION,
  ...INVARIANTS.map(({ id, title, rules }) => ({ id, title, rules })),
  ...RUN_PROPERTIES,
];

/** What a run is judged with. */
export interface JudgeContext {
  readonly properties: readonly UserProperty[];
  /** The Mailscope version, for traces and bundles. */
  readonly mailscope: string;
  /** A bug planted by the test harness (app/sender/plantedBugs.ts). */
  readonly plantedBug?: PlantedBug;
}

/** One run, judged. */
export interface Judgement {
  /** Every property's result, passed or not (built-in first, then the user's). */
  readonly checks: readonly CheckResult[];
  /** The ids of the failed ones. */
  readonly failed: readonly string[];
  /** What it exercised (coverage.ts). */
  readonly keys: ReadonlySet<string>;
  /** Its delivery actors' paths through the machine. */
  readonly paths: ReadonlySet<string>;
  /** The engine's run, when there was one. */
  readonly run?: ScenarioRun;
}

function crashed(detail: string): Judgement {
  const check: CheckResult = { id: ENGINE_CRASH.id, passed: false, detail };
  return { checks: [check], failed: [check.id], keys: new Set(), paths: new Set() };
}

/**
 * Runs `scenario` and judges it. `source` is its text (for a bundle); a
 * generated world that does not even parse is a finding, not an error.
 */
export async function judgeScenario(
  scenario: ScenarioInput,
  context: JudgeContext,
  source = "",
  file = "explored.yaml",
): Promise<Judgement> {
  const parsed = scenarioSchema.safeParse(scenario);
  if (!parsed.success) {
    return crashed(
      `the world is not a valid scenario: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  }
  return judgeLoaded({ scenario: parsed.data, source, file, emls: new Map() }, context);
}

/** Runs a loaded scenario (a file `mailscope explore check` read, eml files and all) and judges it. */
export async function judgeLoaded(loaded: LoadedScenario, context: JudgeContext): Promise<Judgement> {
  let run: ScenarioRun;
  // The deliveries the run's invariants were checked over: the run properties read the same, built once.
  let model: Model | undefined;
  try {
    run = await runLoadedScenario(loaded, {
      mailscope: context.mailscope,
      ...(context.plantedBug !== undefined && { plantedBug: context.plantedBug }),
      onModel: (built) => (model = built),
    });
  } catch (error) {
    return crashed(`the run threw: ${errorWithName(error)}`);
  }
  const events = run.trace.events as readonly JudgedEvent[];
  const simulation = run.invariants.find((c) => c.id === SIMULATION.id);
  const checks: CheckResult[] = [
    { id: ENGINE_CRASH.id, passed: true, detail: "the run ended without an exception" },
    simulation ?? { id: SIMULATION.id, passed: true, detail: "no event threw" },
    ...run.invariants.filter((c) => c.id !== SIMULATION.id),
    ...checkRunProperties(
      events,
      { readings: run.world.readings, complete: run.complete, startMs: run.world.startMs },
      model,
    ),
    ...context.properties.map((p) => checkUserProperty(p, events)),
  ];
  const paths = machinePaths(run.trace.events);
  return {
    checks,
    failed: checks.filter((c) => !c.passed).map((c) => c.id),
    keys: coverageKeys(run.trace.events, paths),
    paths,
    run,
  };
}
