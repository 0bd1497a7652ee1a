import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { summarizeScenario, type ScenarioSummary } from "../sim/scenarioSummary.ts";
import { readBoundedText, readErrorReason } from "./boundedRead.ts";

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
  return Promise.all(
    names.map(async (file) => {
      try {
        return summarizeScenario(file, await readBoundedText(join(dir, file), "scenarios"));
      } catch (error) {
        const description = `cannot be read: ${readErrorReason(error)}`;
        return { file, name: file, title: file, description, summary: description };
      }
    }),
  );
}
