/**
 * The handlers of the IPC channels, apart from their registration, so that
 * tests call them with a stand-in for Electron's dialogs.
 */
import type { BrowserWindow, OpenDialogOptions, SaveDialogOptions } from "electron";
import { writeFile } from "node:fs/promises";
import { basename, isAbsolute } from "node:path";
import { SCENARIO_EXTENSIONS, TRACE_OPEN_EXTENSIONS } from "../app/trace/fileNames.ts";
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
  scenario: [{ name: "Mailscope scenario", extensions: [...SCENARIO_EXTENSIONS] }],
  trace: [
    // A trace, a bug bundle (opens as its trace), or a trace written as .json before they had their own extensions.
    { name: "Mailscope trace or bug bundle", extensions: [...TRACE_OPEN_EXTENSIONS] },
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

/**
 * A file dropped on the window, read and remembered: scenarios and traces only. Its path is the one
 * Electron gave the preload for the dropped File (webUtils.getPathForFile), never one the page names.
 */
export async function openDropped(path: string, remember: (file: OpenedFile) => void): Promise<OpenedFile> {
  const kind = kindOfPath(path);
  if (!isAbsolute(path) || kind === undefined)
    throw new Error(`${path}: not a scenario (.yaml, .yml) or a trace (.mstrace, .msbundle, .json)`);
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

/**
 * The files for the window (command line, a second launch, the OS, File ▸ Open from the menu): each
 * delivered once. Until the page asks for them (files:pending, which it does once it listens to the
 * menus' commands) they wait; after that each is sent as it comes. A page that loads again (or a new
 * window) asks again, and files that come meanwhile wait for it (a file arriving between the
 * page's asking and its load finishing was lost).
 */
export class FileInbox {
  private waiting: OpenedFile[] = [];
  private listening = false;
  private readonly send: (file: OpenedFile) => void;
  constructor(send: (file: OpenedFile) => void) {
    this.send = send;
  }
  /** A file for the window: sent when the page listens, else kept for it. */
  deliver(file: OpenedFile): void {
    if (this.listening) this.send(file);
    else this.waiting.push(file);
  }
  /** The page asks (files:pending): the files kept for it; from now on files are sent to it. */
  take(): OpenedFile[] {
    this.listening = true;
    return this.waiting.splice(0);
  }
  /** The page is gone or loading again: keep files until it asks. */
  pause(): void {
    this.listening = false;
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
