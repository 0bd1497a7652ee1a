/**
 * The handlers of the IPC channels, apart from their registration, so that
 * tests call them with a stand-in for Electron's dialogs.
 */
import type { BrowserWindow, OpenDialogOptions, SaveDialogOptions } from "electron";
import { writeFile } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { basename } from "node:path";
import type { OpenedFile, OpenResult, RecentFile, SaveResult, FileKind } from "./channels.ts";
import { kindOfPath, readOpenedFile } from "./files.ts";

/** The part of Electron's dialog module the handlers use. */
export interface Dialogs {
  showOpenDialog(
    window: BrowserWindow | undefined,
    options: OpenDialogOptions,
  ): Promise<{ canceled: boolean; filePaths: string[] }>;
  showSaveDialog(
    window: BrowserWindow | undefined,
    options: SaveDialogOptions,
  ): Promise<{ canceled: boolean; filePath?: string }>;
}

export const OPEN_FILTERS: Readonly<Record<FileKind, OpenDialogOptions["filters"]>> = {
  scenario: [{ name: "Mailscope scenario", extensions: ["yaml", "yml"] }],
  trace: [
    { name: "Mailscope trace", extensions: ["mailscope-trace.json", "json"] },
    { name: "All files", extensions: ["*"] },
  ],
};

/** The open dialog for a kind of file; the chosen file read, and remembered. */
export async function openWithDialog(
  dialogs: Dialogs,
  window: BrowserWindow | undefined,
  kind: FileKind,
  remember: (file: OpenedFile) => void,
): Promise<OpenResult> {
  const choice = await dialogs.showOpenDialog(window, {
    title: kind === "scenario" ? "Open Scenario" : "Open Trace",
    properties: ["openFile"],
    filters: OPEN_FILTERS[kind],
  });
  const path = choice.filePaths[0];
  if (choice.canceled || path === undefined) return { opened: false };
  const file = await readOpenedFile(path, kind);
  remember(file);
  return { opened: true, file };
}

/** A file of the recent list read again, and remembered (it moves to the top); no other path. */
export async function openRecent(
  recent: readonly RecentFile[],
  path: string,
  remember: (file: OpenedFile) => void,
): Promise<OpenedFile> {
  const entry = recent.find((r) => r.path === path);
  if (entry === undefined) throw new Error(`${path} is not on the recent list`);
  const file = await readOpenedFile(path, entry.kind);
  remember(file);
  return file;
}

/** A file dropped on the window (its path from the preload), read and remembered: scenarios and traces only. */
export async function openDropped(path: string, remember: (file: OpenedFile) => void): Promise<OpenedFile> {
  const kind = kindOfPath(path);
  if (!isAbsolute(path) || kind === undefined) throw new Error(`${path}: not a scenario (.yaml) or a trace (.json)`);
  const file = await readOpenedFile(path, kind);
  remember(file);
  return file;
}

/** The save dialog for an export, and the file written. */
export async function saveWithDialog(
  dialogs: Dialogs,
  window: BrowserWindow | undefined,
  suggestedName: string,
  contents: string | Uint8Array,
): Promise<SaveResult> {
  const choice = await dialogs.showSaveDialog(window, { defaultPath: suggestedName });
  if (choice.canceled || !choice.filePath) return { saved: false };
  await (typeof contents === "string"
    ? writeFile(choice.filePath, contents, "utf8")
    : writeFile(choice.filePath, contents));
  return { saved: true, path: choice.filePath };
}

/** Files that arrived (command line, the OS) before the window asked; each handed out once. */
export class PendingFiles {
  private files: OpenedFile[] = [];
  push(file: OpenedFile): void {
    this.files.push(file);
  }
  take(): OpenedFile[] {
    const taken = this.files;
    this.files = [];
    return taken;
  }
}

/**
 * The scenario files the renderer may write with Save: only those this
 * window was given (open dialog, Open Recent, the command line, the OS) or
 * saved through the Save As dialog. A path the renderer makes up is refused.
 */
export class WritableScenarios {
  private readonly paths = new Set<string>();
  grant(path: string): void {
    this.paths.add(path);
  }
  has(path: string): boolean {
    return this.paths.has(path);
  }
}

/** The save dialog for a scenario from the editor; the file written, and granted for later saves. */
export async function saveScenarioAs(
  dialogs: Dialogs,
  window: BrowserWindow | undefined,
  suggestedName: string,
  contents: string,
  writable: WritableScenarios,
  remember: (file: OpenedFile) => void,
): Promise<SaveResult> {
  const choice = await dialogs.showSaveDialog(window, {
    title: "Save Scenario",
    defaultPath: suggestedName,
    filters: OPEN_FILTERS.scenario,
  });
  if (choice.canceled || !choice.filePath) return { saved: false };
  await writeFile(choice.filePath, contents, "utf8");
  writable.grant(choice.filePath);
  remember({ kind: "scenario", name: basename(choice.filePath), path: choice.filePath, text: contents });
  return { saved: true, path: choice.filePath };
}

/** Save: `contents` written over a scenario file this window opened or saved; any other path is refused. */
export async function saveScenario(path: string, contents: string, writable: WritableScenarios): Promise<SaveResult> {
  if (!writable.has(path)) throw new Error(`${basename(path)} was not opened or saved in this window: use Save As`);
  await writeFile(path, contents, "utf8");
  return { saved: true, path };
}
