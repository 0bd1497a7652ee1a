/**
 * For the model's tests: a bundled scenario run to its end, as the app runs it,
 * read through Vite's glob import (the renderer's code never reads files).
 */
import { runScenarioText, type RunScenarioOptions } from "../../../app/sim/runScenario.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import type { CompareBase } from "./compare.ts";

const scenarioTexts = import.meta.glob<string>("../../../scenarios/*.yaml", {
  query: "?raw",
  import: "default",
  eager: true,
});

/** The text of `scenarios/<name>.yaml`. */
export function scenarioText(name: string): string {
  const text = scenarioTexts[`../../../scenarios/${name}.yaml`];
  if (text === undefined) throw new Error(`no scenarios/${name}.yaml`);
  return text;
}

/** The trace of `scenarios/<name>.yaml` run with `options` (a seed, readings, recordBodies). */
export async function scenarioTrace(name: string, options: RunScenarioOptions = {}): Promise<Trace> {
  return textTrace(scenarioText(name), `scenarios/${name}.yaml`, options);
}

/** The trace of a scenario's text (a fork of a bundled one, say) run to its end. */
export async function textTrace(text: string, file: string, options: RunScenarioOptions = {}): Promise<Trace> {
  const outcome = await runScenarioText(text, { ...options, file });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
  return outcome.run.trace;
}

/** The run of `scenarios/<name>.yaml` (seed 16, at the default start) as Compare starts from it; `over` changes it. */
export function compareBaseOf(name: string, over: Partial<CompareBase> = {}): CompareBase {
  return {
    name,
    text: scenarioText(name),
    file: `scenarios/${name}.yaml`,
    seed: 16,
    settings: [],
    readings: {},
    startMs: Date.UTC(2026, 0, 1),
    playheadOffsetMs: 0,
    ...over,
  };
}
