/**
 * Scenario files on disk: reads a scenario, resolves the `.eml` paths of its
 * messages relative to the scenario's folder, and finds the scenario files of
 * folders (`mailscope check scenarios/`). Validation and everything else is
 * the core's (`app/sim/scenario.ts`).
 */
import { readdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { loadScenario, type ScenarioLoad } from "../sim/scenario.ts";
import { readBounded, readBoundedText, readErrorReason } from "./boundedRead.ts";

/**
 * Loads `file`: its text, validated, and the .eml files it names. Never
 * throws: a file that cannot be read is one error at 1:1, and an .eml that
 * cannot be read is an error at the message's `eml` field.
 */
export async function loadScenarioFile(file: string): Promise<ScenarioLoad> {
  let text: string;
  try {
    text = await readBoundedText(file, "scenarios");
  } catch (error) {
    const reason = readErrorReason(error);
    return { ok: false, errors: [{ file, line: 1, column: 1, field: "(file)", message: `cannot be read: ${reason}` }] };
  }
  const base = dirname(resolve(file));
  return loadScenario(text, {
    file,
    readFile: async (path) => {
      try {
        return new Uint8Array(await readBounded(resolve(base, path), "messages"));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new Error(code === "ENOENT" ? `no such file (${resolve(base, path)})` : readErrorReason(error), {
          cause: error,
        });
      }
    },
  });
}

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
    out.push(...(await walk(path)));
  }
  return [...new Set(out)];
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(path)));
    else if (/\.ya?ml$/i.test(entry.name)) files.push(path);
  }
  return files;
}
