/**
 * Scenario files the user opened, kept between launches in local storage
 * (the browser's, or the app:// origin's in Electron): the "Opened" group of
 * the library.
 */
import type { LibraryEntry } from "./model/library.ts";

export interface OpenedFile extends LibraryEntry {
  readonly text: string;
  /** Where it is on disk (Electron), for the editor's Save. */
  readonly path?: string;
}

const KEY = "mailscope.opened";
const MAX = 10;

export function loadOpened(storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage): OpenedFile[] {
  try {
    const raw: unknown = JSON.parse(storage?.getItem(KEY) ?? "[]");
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (f): f is OpenedFile =>
        typeof f === "object" && f !== null && typeof f.file === "string" && typeof f.text === "string",
    );
  } catch {
    return [];
  }
}

/** `opened` with `file` first (replacing one of the same name), at most ten, saved. */
export function rememberOpened(
  opened: readonly OpenedFile[],
  file: OpenedFile,
  storage: Pick<Storage, "setItem"> | undefined = globalThis.localStorage,
): OpenedFile[] {
  const next = [file, ...opened.filter((f) => f.file !== file.file)].slice(0, MAX);
  try {
    storage?.setItem(KEY, JSON.stringify(next));
  } catch {
    // Storage full or refused: the list lives on for this window.
  }
  return next;
}
