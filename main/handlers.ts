/**
 * The handlers of the IPC channels, apart from their registration, so that
 * tests call them with a stand-in for Electron's dialogs.
 */
import type { BrowserWindow, OpenDialogOptions, SaveDialogOptions } from "electron";
import { writeFile } from "node:fs/promises";
import { basename } from "node:path";
import type { OpenedFile, OpenResult, RecentFile, SaveResult, FileKind } from "./channels.ts";
import { readOpenedFile } from "./files.ts";

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
  remember: (file: RecentFile) => void,
): Promise<OpenResult> {
  const choice = await dialogs.showOpenDialog(window, {
    title: kind === "scenario" ? "Open Scenario" : "Open Trace",
    properties: ["openFile"],
    filters: OPEN_FILTERS[kind],
  });
  const path = choice.filePaths[0];
  if (choice.canceled || path === undefined) return { opened: false };
  const file = await readOpenedFile(path, kind);
  remember({ kind, name: file.name, path });
  return { opened: true, file };
}

/** The save dialog for an export, and the file written. */
export async function saveWithDialog(
  dialogs: Dialogs,
  window: BrowserWindow | undefined,
  suggestedName: string,
  contents: string,
): Promise<SaveResult> {
  const choice = await dialogs.showSaveDialog(window, { defaultPath: suggestedName });
  if (choice.canceled || !choice.filePath) return { saved: false };
  await writeFile(choice.filePath, contents, "utf8");
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
  remember: (file: RecentFile) => void,
): Promise<SaveResult> {
  const choice = await dialogs.showSaveDialog(window, {
    title: "Save Scenario",
    defaultPath: suggestedName,
    filters: OPEN_FILTERS.scenario,
  });
  if (choice.canceled || !choice.filePath) return { saved: false };
  await writeFile(choice.filePath, contents, "utf8");
  writable.grant(choice.filePath);
  remember({ kind: "scenario", name: basename(choice.filePath), path: choice.filePath });
  return { saved: true, path: choice.filePath };
}

/** Save: `contents` written over a scenario file this window opened or saved; any other path is refused. */
export async function saveScenario(path: string, contents: string, writable: WritableScenarios): Promise<SaveResult> {
  if (!writable.has(path)) throw new Error(`${basename(path)} was not opened or saved in this window: use Save As`);
  await writeFile(path, contents, "utf8");
  return { saved: true, path };
}
