/**
 * Scenario files on disk: reads a scenario, resolves the `.eml` paths of its
 * messages relative to the scenario's folder, and finds the scenario files of
 * folders (`mailscope check scenarios/`, app/node/findScenarioFiles.ts). Validation and everything else is
 * the core's (`app/sim/scenario.ts`).
 */
import { dirname, resolve } from "node:path";
import { loadScenario, parseScenarioText, type ScenarioLoad } from "../sim/scenario.ts";
import { readBounded, readBoundedRegular, readBoundedText, readErrorReason } from "./boundedRead.ts";
export { findScenarioFiles } from "./findScenarioFiles.ts";

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
  return loadScenario(text, {
    file,
    readFile: async (path) => {
      try {
        return new Uint8Array(await readBounded(emlFilePath(file, path), "messages"));
      } catch (error) {
        throw new Error(emlReadReason(error, emlFilePath(file, path)), { cause: error });
      }
    },
  });
}

/**
 * Where an `eml:` path of the scenario `file` is: resolved against the
 * scenario's folder. `../x.eml` is the folder above it, an absolute path is
 * itself; nothing is refused (scenarios may share messages kept elsewhere).
 */
export function emlFilePath(file: string, path: string): string {
  return resolve(dirname(resolve(file)), path);
}

/** Why an `eml:` file at `absolute` could not be read, as a scenario's error says it. */
function emlReadReason(error: unknown, absolute: string): string {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
    ? `no such file (${absolute})`
    : readErrorReason(error);
}

/** The `eml:` files of a scenario, read ahead of its run (see {@link readScenarioEmls}). */
export interface ScenarioEmls {
  /** The bytes of each path read, by the path as the scenario writes it. */
  readonly emls: Record<string, Uint8Array>;
  /** Why each path that could not be read was not: `no such file (/abs/mail/x.eml)`, `larger than …`. */
  readonly emlErrors: Record<string, string>;
}

/**
 * The `eml:` files the scenario `text` (read from `file`) names, read as
 * {@link loadScenarioFile} reads them — the same paths, resolved the same
 * way, at most 100 MiB each — except that only regular files are read (a
 * FIFO or a device is refused, not waited on): for the desktop app, which
 * reads them when it opens the scenario and hands them to the run. Never
 * throws: a file that cannot be read is in `emlErrors`, and the run says so at
 * the message's `eml` field. A scenario that does not validate names no
 * files (as `mailscope run` reads none of such a scenario's); its run shows
 * its errors.
 */
export async function readScenarioEmls(file: string, text: string): Promise<ScenarioEmls> {
  const emls: Record<string, Uint8Array> = {};
  const emlErrors: Record<string, string> = {};
  const parsed = parseScenarioText(text, file);
  if (!parsed.ok) return { emls, emlErrors };
  for (const m of parsed.scenario.messages) {
    if (m.eml === undefined || Object.hasOwn(emls, m.eml) || Object.hasOwn(emlErrors, m.eml)) continue;
    const absolute = emlFilePath(file, m.eml);
    try {
      // A copy the size of the file: the read's Buffer may be a view of a larger one, all of which IPC would copy.
      emls[m.eml] = new Uint8Array(await readBoundedRegular(absolute, "messages"));
    } catch (error) {
      emlErrors[m.eml] = emlReadReason(error, absolute);
    }
  }
  return { emls, emlErrors };
}
