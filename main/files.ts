/**
 * Files the app opens — from the open dialog, File ▸ Open Recent, the command
 * line and the OS (file associations) — and the recent-files list kept
 * between launches in the user's data folder.
 */
import { renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FileTooLargeError, READ_LIMITS, readBoundedText } from "../app/node/boundedRead.ts";
import { readScenarioEmls } from "../app/node/scenarioLoader.ts";
import { summarizeScenario } from "../app/sim/scenarioSummary.ts";
import { kindOfFileName } from "../app/trace/fileNames.ts";
import { isRecentFile, type FileKind, type OpenedFile, type RecentFile } from "./channels.ts";

/**
 * Scenarios are YAML; traces are `.mstrace`, bug bundles `.msbundle` (opened as their trace), and any
 * `.json` opens as a trace too (app/trace/fileNames.ts).
 */
export function kindOfPath(path: string): FileKind | undefined {
  return kindOfFileName(path);
}

/**
 * The file a path from the OS names (the command line, a second launch's command line): a `file:` URI
 * decoded (a Linux desktop entry's `%U` hands `file:///home/a/My%20Run.mstrace`), a relative path resolved
 * against the working directory it was given in. Undefined for another URL or a URI that names no local file.
 */
export function pathFromOs(arg: string, workingDirectory: string): string | undefined {
  if (/^file:/i.test(arg)) {
    try {
      return fileURLToPath(arg);
    } catch {
      return undefined;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return undefined;
  return resolve(workingDirectory, arg);
}

/**
 * The files named on a command line (`mailscope a.yaml b.mstrace`), as absolute paths: flags and the
 * app's own path left out, file URIs decoded, relative paths taken from `workingDirectory` (the launch's).
 */
export function filesFromArgv(argv: readonly string[], workingDirectory: string): string[] {
  return argv
    .slice(1)
    .filter((a) => !a.startsWith("-") && a !== ".")
    .map((a) => pathFromOs(a, workingDirectory))
    .filter((p): p is string => p !== undefined && kindOfPath(p) !== undefined);
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

/**
 * Writes the recent list: at once, not after the quit that may follow, and whole (a new
 * file renamed over the old one), so that a crash leaves the old list or the new one, never half of one.
 */
export function saveRecent(path: string, recent: readonly RecentFile[]): void {
  writeWhole(path, `${JSON.stringify(recent, null, 2)}\n`);
}

/** Writes `text` to `path` synchronously, through a file beside it renamed over it. */
export function writeWhole(path: string, text: string): void {
  const next = `${path}.new`;
  writeFileSync(next, text, "utf8");
  renameSync(next, path);
}
