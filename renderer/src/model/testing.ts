/**
 * For the model's tests: a bundled scenario run to its end, as the app runs it,
 * read through Vite's glob import (the renderer's code never reads files).
 */
import { runScenarioText, type RunScenarioOptions } from "../../../app/sim/runScenario.ts";
import type { Trace } from "../../../app/trace/schema.ts";

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
