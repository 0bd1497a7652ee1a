/**
 * Files the app opens — from the open dialog, File ▸ Open Recent, the command
 * line and the OS (file associations) — and the recent-files list kept
 * between launches in the user's data folder.
 */
import { readFile, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { FileTooLargeError, READ_LIMITS, readBoundedText } from "../app/node/boundedRead.ts";
import { readScenarioEmls } from "../app/node/scenarioLoader.ts";
import { summarizeScenario } from "../app/sim/scenarioSummary.ts";
import { isRecentFile, type FileKind, type OpenedFile, type RecentFile } from "./channels.ts";

/** Scenarios are YAML; traces are `.mailscope-trace.json` (any `.json`, when opened as a trace). */
export function kindOfPath(path: string): FileKind | undefined {
  if (/\.ya?ml$/i.test(path)) return "scenario";
  if (/\.json$/i.test(path)) return "trace";
  return undefined;
}

/** The files named on a command line (`mailscope-app a.yaml b.mailscope-trace.json`): flags and the app's own path left out. */
export function filesFromArgv(argv: readonly string[]): string[] {
  return argv.slice(1).filter((a) => !a.startsWith("-") && a !== "." && kindOfPath(a) !== undefined);
}

/** The largest file the app reads (a 100k-event trace is ~60 MB): the limit for traces (app/node/boundedRead.ts). */
export const MAX_FILE_BYTES = READ_LIMITS.traces;

/**
 * Reads a file for the renderer, at most its kind's limit (a trace 256 MiB, a scenario 32 MiB); never past it.
 * A scenario comes with its `eml:` files, read as `mailscope run` reads them (decision 0029): each at most
 * 100 MiB, regular files only; one that cannot be read leaves the scenario opened, and its run says why.
 */
export async function readOpenedFile(path: string, kind?: FileKind): Promise<OpenedFile> {
  const opened = kind ?? kindOfPath(path) ?? "scenario";
  let text: string;
  try {
    text = await readBoundedText(path, opened === "trace" ? "traces" : "scenarios");
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new Error(
        `${basename(path)} is larger than the app opens (${error.limit} bytes, the limit for ${error.kind})`,
        { cause: error },
      );
    throw error;
  }
  const file = { kind: opened, name: basename(path), path, text };
  if (opened === "trace") return file;
  const { emls, emlErrors } = await readScenarioEmls(path, text);
  return {
    ...file,
    ...(Object.keys(emls).length > 0 && { emls }),
    ...(Object.keys(emlErrors).length > 0 && { emlErrors }),
  };
}

/** At most this many recent files. */
export const MAX_RECENT = 10;

/** `recent` with `file` first, once, at most {@link MAX_RECENT}. */
export function addRecent(recent: readonly RecentFile[], file: RecentFile): RecentFile[] {
  return [file, ...recent.filter((r) => r.path !== file.path)].slice(0, MAX_RECENT);
}

/** A file read, as the recent list keeps it: a scenario with its own name and description. */
export function recentOf(file: OpenedFile): RecentFile {
  if (file.kind === "trace")
    return { kind: "trace", name: file.name, path: file.path, title: file.name, description: "A recorded run (trace)" };
  const summary = summarizeScenario(file.name, file.text);
  return { kind: "scenario", name: file.name, path: file.path, title: summary.name, description: summary.description };
}

/** The recent files saved at `path`; none when it is missing or unreadable. */
export async function loadRecent(path: string): Promise<RecentFile[]> {
  try {
    const data: unknown = JSON.parse(await readFile(path, "utf8"));
    return Array.isArray(data) ? data.filter(isRecentFile).slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

export async function saveRecent(path: string, recent: readonly RecentFile[]): Promise<void> {
  await writeFile(path, `${JSON.stringify(recent, null, 2)}\n`, "utf8");
}
