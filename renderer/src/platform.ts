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
  /**
   * Saves the editor's scenario: in Electron over its file (`path`) or, for Save As and new files, through
   * the save dialog; in the browser as a download named `name`. Undefined when the user cancelled.
   */
  saveScenario(
    file: { readonly name: string; readonly path?: string | undefined },
    contents: string,
    as: boolean,
  ): Promise<{ readonly name: string; readonly path?: string } | undefined>;
  /** The shell's open dialog (Electron); undefined where the page's file input serves. */
  readonly openDialog?: (kind: FileKind) => Promise<OpenedFile | undefined>;
  /** Files given on the command line or by the OS before the window was there. */
  pendingFiles(): Promise<OpenedFile[]>;
  /** Listens to the menus' commands (Electron); returns a function that stops listening. */
  onCommand(listener: (command: AppCommand) => void): () => void;
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
export function download(name: string, contents: string, type: string): void {
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

const browserPlatform: Platform = {
  info: async () => ({ name: "Mailscope", version: __MAILSCOPE_VERSION__, shell: "browser" }),
  listScenarios: async () =>
    Object.entries(bundledScenarios)
      .map(([path, text]) => summarizeScenario(path.slice(path.lastIndexOf("/") + 1), text))
      .sort((a, b) => a.file.localeCompare(b.file)),
  readScenario: async (file) => bundledText(file),
  saveFile: async (name, contents, type) => download(name, contents, type),
  saveScenario: async ({ name }, contents) => {
    download(name, contents, "application/yaml");
    return { name };
  },
  pendingFiles: async () => [],
  onCommand: () => () => undefined,
};

function electronPlatform(api: PreloadApi): Platform {
  return {
    info: () => api.appInfo(),
    listScenarios: () => api.scenariosList(),
    readScenario: async (file) => bundledText(file),
    saveFile: async (name, contents) => {
      await api.fileSave(name, contents);
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
    onCommand: (listener) => api.onAppCommand((command) => isAppCommand(command) && listener(command)),
  };
}

/** The platform of this window: Electron when the preload ran, else the browser. */
export const platform: Platform = window.mailscope ? electronPlatform(window.mailscope) : browserPlatform;
