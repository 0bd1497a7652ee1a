/**
 * Finding the scenario files of folders (`mailscope check scenarios/`), apart
 * from app/node/scenarioLoader.ts so that `check`'s command line can find them
 * (and see whether one is large, app/cli/runCommand.ts) without loading the
 * engine.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { pushAll } from "../protocol/lists.ts";

/**
 * The scenario files (`*.yaml`, `*.yml`) named by `paths`: a file as it is, a
 * folder searched recursively (folders starting with `.` skipped), sorted.
 * A path that does not exist is returned as it is, so that loading it reports
 * the error.
 */
export async function findScenarioFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch {
      out.push(path);
      continue;
    }
    if (!isDirectory) {
      out.push(path);
      continue;
    }
    pushAll(out, await walk(path));
  }
  return [...new Set(out)];
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) pushAll(files, await walk(path));
    else if (/\.ya?ml$/i.test(entry.name)) files.push(path);
  }
  return files;
}
