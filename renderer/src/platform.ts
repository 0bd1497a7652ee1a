import { summarizeScenario } from "../../app/sim/scenarioSummary.ts";
import {
  isAppCommand,
  type AppCommand,
  type AppInfo,
  type FileKind,
  type OpenedFile,
  type PreloadApi,
  type ScenarioSummary,
} from "../../main/channels.ts";
import { filePicker, type FilePickerWindow } from "./filePicker.ts";
import { entriesOfRecent, loadOpened, rememberOpened, type OpenedEntry } from "./recent.ts";

declare global {
  interface Window {
    /** Present only inside the Electron shell (the preload's API). */
    readonly mailscope?: PreloadApi;
  }
}

/** What the UI needs from whichever shell it runs in: Electron or a plain browser. */
export interface Platform {
  info(): Promise<AppInfo>;
  listScenarios(): Promise<ScenarioSummary[]>;
  /** The text of a bundled scenario file. */
  readScenario(file: string): Promise<string>;
  /** Saves an export: a download in the browser, the save dialog in Electron. */
  saveFile(name: string, contents: string, type: string): Promise<void>;
  /** As saveFile, for bytes (a PNG image of a view). */
  saveBytes(name: string, contents: Uint8Array, type: string): Promise<void>;
  /**
   * Saves the editor's scenario: in Electron over its file (`path`) or, for Save As and new files, through
   * the save dialog; in the browser as a download named `name`. Undefined when the user cancelled.
   */
  saveScenario(
    file: { readonly name: string; readonly path?: string | undefined },
    contents: string,
    as: boolean,
  ): Promise<{ readonly name: string; readonly path?: string } | undefined>;
  /** The open dialog: main's (Electron) or the File System Access API's; undefined where the page's file input serves. */
  readonly openDialog?: (kind: FileKind) => Promise<OpenedFile | undefined>;
  /** Files given on the command line or by the OS before the window was there. */
  pendingFiles(): Promise<OpenedFile[]>;
  /** Listens to the menus' commands (Electron); returns a function that stops listening. */
  onCommand(listener: (command: AppCommand) => void): () => void;
  /**
   * Electron: a dropped file, read by main so that it joins the recent list; undefined for a file
   * with no path on disk (made by a page), which the page reads. Absent in the browser.
   */
  readonly openDropped?: (file: File) => Promise<OpenedFile | undefined>;
  /** The files the user opened (the library's "Opened"; Electron's File ▸ Open Recent is the same list). */
  readonly recent: RecentFiles;
}

/** The one list of files the user opened, kept between launches (see recent.ts). */
export interface RecentFiles {
  list(): Promise<OpenedEntry[]>;
  /**
   * Remembers a file the page opened. The browser keeps it and answers the
   * new list; Electron's main has remembered it already and tells {@link onChange}.
   */
  remember(entry: OpenedEntry): OpenedEntry[] | undefined;
  /** A listed file, read again. */
  open(entry: OpenedEntry): Promise<OpenedFile>;
  /** Listens to changes made outside the page (Electron's menus); returns a function that stops listening. */
  onChange(listener: (entries: OpenedEntry[]) => void): () => void;
}

// In the browser the scenario library is bundled at build time.
const bundledScenarios = import.meta.glob<string>("../../scenarios/*.{yaml,yml}", {
  query: "?raw",
  import: "default",
  eager: true,
});

function bundledText(file: string): string {
  const text = Object.entries(bundledScenarios).find(([path]) => path.endsWith(`/${file}`))?.[1];
  if (text === undefined) throw new Error(`no bundled scenario ${file}`);
  return text;
}

/** A download of `contents` as `name`. */
export function download(name: string, contents: string | Uint8Array<ArrayBuffer>, type: string): void {
  const url = URL.createObjectURL(new Blob([contents], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.style.display = "none";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The browser's list: in local storage, with the texts. */
function storedRecentFiles(): RecentFiles {
  let entries = loadOpened();
  return {
    list: async () => entries,
    remember: (entry) => (entries = rememberOpened(entries, entry)),
    open: async (entry) => {
      if (entry.text === undefined) throw new Error(`${entry.fileName} is no longer kept: open it again`);
      return { kind: entry.kind, name: entry.fileName, path: entry.file, text: entry.text };
    },
    onChange: () => () => undefined,
  };
}

const pickFile = filePicker(window as FilePickerWindow);

const browserPlatform: Platform = {
  info: async () => ({ name: "Mailscope", version: __MAILSCOPE_VERSION__, shell: "browser" }),
  listScenarios: async () =>
    Object.entries(bundledScenarios)
      .map(([path, text]) => summarizeScenario(path.slice(path.lastIndexOf("/") + 1), text))
      .sort((a, b) => a.file.localeCompare(b.file)),
  readScenario: async (file) => bundledText(file),
  saveFile: async (name, contents, type) => download(name, contents, type),
  saveBytes: async (name, contents, type) => download(name, new Uint8Array(contents), type),
  saveScenario: async ({ name }, contents) => {
    download(name, contents, "application/yaml");
    return { name };
  },
  pendingFiles: async () => [],
  onCommand: () => () => undefined,
  ...(pickFile && { openDialog: pickFile }),
  recent: storedRecentFiles(),
};

function electronPlatform(api: PreloadApi): Platform {
  return {
    info: () => api.appInfo(),
    listScenarios: () => api.scenariosList(),
    readScenario: async (file) => bundledText(file),
    saveFile: async (name, contents) => {
      await api.fileSave(name, contents);
    },
    saveBytes: async (name, contents) => {
      await api.fileSaveBytes(name, contents);
    },
    saveScenario: async ({ name, path }, contents, as) => {
      // Save writes over the file main gave this window; one it did not give (opened before a restart) asks where.
      const result =
        !as && path !== undefined
          ? await api.scenarioSave(path, contents).catch(() => api.scenarioSaveAs(name, contents))
          : await api.scenarioSaveAs(name, contents);
      if (!result.saved) return undefined;
      return {
        name: result.path.slice(Math.max(result.path.lastIndexOf("/"), result.path.lastIndexOf("\\")) + 1),
        path: result.path,
      };
    },
    openDialog: async (kind) => {
      const result = await api.fileOpen(kind);
      return result.opened ? result.file : undefined;
    },
    pendingFiles: () => api.filesPending(),
    // What main sends is checked before the window acts on it.
    onCommand: (listener) =>
      api.onAppCommand((command) => isAppCommand(command) && command.type !== "recent" && listener(command)),
    openDropped: (file) => api.openDropped(file),
    // Main keeps the list (also File ▸ Open Recent) and remembers each file it reads.
    recent: {
      list: async () => entriesOfRecent(await api.recentList()),
      remember: () => undefined,
      open: (entry) => api.recentOpen(entry.file),
      onChange: (listener) =>
        api.onAppCommand(
          (command) => isAppCommand(command) && command.type === "recent" && listener(entriesOfRecent(command.files)),
        ),
    },
  };
}

/** The platform of this window: Electron when the preload ran, else the browser. */
export const platform: Platform = window.mailscope ? electronPlatform(window.mailscope) : browserPlatform;
