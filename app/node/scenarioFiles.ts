import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { summarizeScenario, type ScenarioSummary } from "../sim/scenarioSummary.ts";

/**
 * The scenario files (`*.yaml`, `*.yml`) of a folder with their name and
 * description; see {@link summarizeScenario}.
 */
export async function listScenarioFiles(dir: string): Promise<ScenarioSummary[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch {
    return [];
  }
  return Promise.all(names.map(async (file) => summarizeScenario(file, await readFile(join(dir, file), "utf8"))));
}
