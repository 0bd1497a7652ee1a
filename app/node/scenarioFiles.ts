import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";

/** One scenario file of a folder, as lists show it. */
export interface ScenarioFileSummary {
  readonly file: string;
  readonly name: string;
  readonly description: string;
}

/**
 * The scenario files (`*.yaml`, `*.yml`) of a folder with their name and
 * description. A file that does not parse is listed with its error as the
 * description rather than hidden, so the user sees that it is there and broken.
 */
export async function listScenarioFiles(dir: string): Promise<ScenarioFileSummary[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch {
    return [];
  }
  return Promise.all(
    names.map(async (file) => {
      try {
        const doc: unknown = parse(await readFile(join(dir, file), "utf8"));
        const record = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>) : {};
        return {
          file,
          name: typeof record["name"] === "string" ? record["name"] : file,
          description: typeof record["description"] === "string" ? record["description"] : "",
        };
      } catch (error) {
        return { file, name: file, description: `cannot be read: ${(error as Error).message}` };
      }
    }),
  );
}
