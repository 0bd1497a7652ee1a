/**
 * Files the user opened: the library's "Opened" group. One list per shell,
 * kept between launches:
 *
 * - Electron: main's recent list (recent-files.json in the user's data
 *   folder), the same list File ▸ Open Recent shows; main remembers every
 *   file it reads and tells the window when the list changes.
 * - Browser: local storage, with each file's text (a page has no paths to
 *   read again).
 */
import type { FileKind, OpenedFile as ShellFile, RecentFile } from "../../main/channels.ts";
import { summarizeScenario } from "../../app/sim/scenarioSummary.ts";
import type { LibraryEntry } from "./model/library.ts";

/** A file of the "Opened" group. `file` is its key: the path in Electron, the file name in the browser. */
export interface OpenedEntry extends LibraryEntry {
  readonly kind: FileKind;
  /** The file's own name (the library shows a scenario's `name`). */
  readonly fileName: string;
  /** The text, kept in the browser only. */
  readonly text?: string;
}

const KEY = "mailscope.opened";
/** At most this many, as main's MAX_RECENT. */
export const MAX_OPENED = 10;
/** Traces larger than this are not kept in local storage (its quota is a few MB); scenarios always are. */
export const MAX_KEPT_TRACE_CHARS = 1_000_000;

/** The entry of a file read (its key: its path, which in the browser is its name). */
export function entryOf(file: ShellFile): OpenedEntry {
  if (file.kind === "trace")
    return {
      kind: "trace",
      file: file.path,
      fileName: file.name,
      name: file.name,
      description: "A recorded run (trace)",
      text: file.text,
    };
  const summary = summarizeScenario(file.name, file.text);
  return {
    kind: "scenario",
    file: file.path,
    fileName: file.name,
    name: summary.name,
    description: summary.description,
    title: summary.title,
    summary: summary.summary,
    ...(summary.lesson !== undefined && { lesson: summary.lesson }),
    text: file.text,
  };
}

/** Main's recent list as the library's entries (Electron). */
export function entriesOfRecent(files: readonly RecentFile[]): OpenedEntry[] {
  return files.map((r) => ({
    kind: r.kind,
    file: r.path,
    fileName: r.name,
    name: r.title ?? r.name,
    description: r.description ?? "",
  }));
}

function isEntry(value: unknown): value is Record<string, unknown> & { file: string; text: string } {
  if (typeof value !== "object" || value === null) return false;
  const f = value as Record<string, unknown>;
  return typeof f["file"] === "string" && typeof f["text"] === "string";
}

/** The list kept in `storage`; anything unreadable is left out. Entries of before traces were kept are scenarios. */
export function loadOpened(storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage): OpenedEntry[] {
  try {
    const raw: unknown = JSON.parse(storage?.getItem(KEY) ?? "[]");
    if (!Array.isArray(raw)) return [];
    return raw.filter(isEntry).map((f): OpenedEntry => {
      const fileName = typeof f["fileName"] === "string" ? f["fileName"] : f.file;
      // A scenario is read again from its text: its title, summary and lesson as the library shows them.
      if (f["kind"] !== "trace") return entryOf({ kind: "scenario", name: fileName, path: f.file, text: f.text });
      return {
        kind: "trace",
        file: f.file,
        fileName,
        name: typeof f["name"] === "string" ? f["name"] : f.file,
        description: typeof f["description"] === "string" ? f["description"] : "",
        text: f.text,
      };
    });
  } catch {
    return [];
  }
}

/**
 * `opened` with `entry` first (replacing one of the same key), at most
 * {@link MAX_OPENED}, saved. When storage is full the oldest are dropped
 * until the list fits; a trace too large to keep is listed for this window only.
 */
export function rememberOpened(
  opened: readonly OpenedEntry[],
  entry: OpenedEntry,
  storage: Pick<Storage, "setItem"> | undefined = globalThis.localStorage,
): OpenedEntry[] {
  const next = [entry, ...opened.filter((f) => f.file !== entry.file)].slice(0, MAX_OPENED);
  let kept = next.filter((f) => f.text !== undefined && !(f.kind === "trace" && f.text.length > MAX_KEPT_TRACE_CHARS));
  while (kept.length > 0) {
    try {
      storage?.setItem(KEY, JSON.stringify(kept));
      break;
    } catch {
      kept = kept.slice(0, -1); // Storage full: the oldest go first.
    }
  }
  return next;
}
