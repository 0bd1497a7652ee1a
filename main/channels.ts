/**
 * The one typed channel map between the renderer and the main process.
 * `handle()` in main (ipc.ts) and `invoke()` in the preload are both derived
 * from it, and main validates every payload against `channelValidators`
 * (validators.ts), which must cover every channel listed here.
 *
 * This file imports nothing, so the preload, main and the renderer (types only)
 * can all read it.
 */

/** What the renderer may learn about the running app. */
export interface AppInfo {
  readonly name: string;
  readonly version: string;
  readonly shell: "electron" | "browser";
  readonly electron?: string;
  readonly chrome?: string;
  readonly platform?: string;
}

/** One scenario file of the library, as the scenario list shows it. */
export interface ScenarioSummary {
  readonly file: string;
  readonly name: string;
  /** Its `title`, else its name. */
  readonly title: string;
  readonly description: string;
  /** The description's first sentence: the library's one line. */
  readonly summary: string;
  /** Its place in the "Start here" path and what to watch for, if it is a lesson. */
  readonly lesson?: { readonly order: number; readonly watchFor: readonly string[] };
}

/** The outcome of saving an exported trace through the main process's save dialog. */
export type SaveResult = { readonly saved: true; readonly path: string } | { readonly saved: false };

/** What a user can open: a scenario (YAML) or a trace (`.mstrace`; a bug bundle `.msbundle` opens as its trace). */
export type FileKind = "scenario" | "trace";

/** A file read for the renderer: from the open dialog, Open Recent, the command line or the OS. */
export interface OpenedFile {
  readonly kind: FileKind;
  /** The file's name, for the library and for errors (`name:line:column`). */
  readonly name: string;
  readonly path: string;
  readonly text: string;
  /**
   * A scenario's `eml:` files, read by main next to it when it opened it (as `mailscope run` resolves
   * them): their bytes, by the path as the scenario writes it. The run's `start` takes them.
   */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
  /** Why main could not read each of the scenario's `eml:` paths that has no bytes (`no such file (/abs/x.eml)`). */
  readonly emlErrors?: Readonly<Record<string, string>>;
}

/** The outcome of the open dialog. */
export type OpenResult = { readonly opened: true; readonly file: OpenedFile } | { readonly opened: false };

/**
 * A recently opened file: the one list that File ▸ Open Recent and the
 * library's "Opened" group both show, kept by main between launches.
 */
export interface RecentFile {
  readonly kind: FileKind;
  /** The file's name. */
  readonly name: string;
  readonly path: string;
  /** The scenario's own name, for the library (a trace: its file name). */
  readonly title?: string;
  readonly description?: string;
}

/** Every channel: its arguments and its answer. Data only, no functions. */
export interface Channels {
  "app:info": { args: []; result: AppInfo };
  "scenarios:list": { args: []; result: ScenarioSummary[] };
  "file:save": { args: [suggestedName: string, contents: string]; result: SaveResult };
  /** As file:save, for bytes (a PNG image of a view). */
  "file:save-bytes": { args: [suggestedName: string, contents: Uint8Array]; result: SaveResult };
  "file:open": { args: [kind: FileKind]; result: OpenResult };
  /** Files given on the command line or by the OS before the window could take them; each is given once. */
  "files:pending": { args: []; result: OpenedFile[] };
  "recent:list": { args: []; result: RecentFile[] };
  /** A file of the recent list, read again (and moved to the top); only paths on the list. */
  "recent:open": { args: [path: string]; result: OpenedFile };
  /**
   * A file dropped on the window, read by main so that it joins the recent list (and a scenario may be saved
   * again). The page never names the path: the preload takes it from the dropped File ({@link PreloadApi}).
   */
  "file:dropped": { args: [path: string]; result: OpenedFile };
  /** The scenario editor's Save: writes a scenario file this window opened or saved before (main keeps the list). */
  "scenario:save": { args: [path: string, contents: string]; result: SaveResult };
  /** The scenario editor's Save As: the save dialog for a scenario (YAML); the file written may be saved again. */
  "scenario:save-as": { args: [suggestedName: string, contents: string]; result: SaveResult };
}

/** A playback speed of the Run ▸ Speed menu (virtual ms per wall ms, or as fast as possible). */
export type MenuSpeed = 1 | 60 | 3600 | "max";

/**
 * What the menus ask of the window: main → renderer, on the one event
 * channel {@link APP_COMMAND}. The renderer checks the shape before acting.
 */
export type AppCommand =
  | { readonly type: "toggle" }
  | { readonly type: "step" }
  | { readonly type: "restart" }
  | { readonly type: "speed"; readonly speed: MenuSpeed }
  | { readonly type: "export"; readonly what: "trace" | "har" | "report" | "bundle" }
  /** File ▸ New Scenario (the editor's template), Save and Save As (the scenario in the editor). */
  | { readonly type: "scenario"; readonly what: "new" | "save" | "save-as" }
  | { readonly type: "open"; readonly file: OpenedFile }
  | { readonly type: "view"; readonly view: "run" | "rules" }
  /** The recent list changed (a file opened, the list cleared). */
  | { readonly type: "recent"; readonly files: readonly RecentFile[] }
  | { readonly type: "close" };

/** The one channel from main to the renderer. */
export const APP_COMMAND = "app:command";

export type ChannelName = keyof Channels;

/** Runtime list of the channel names; `satisfies` keeps it in step with {@link Channels}. */
export const channelNames = [
  "app:info",
  "scenarios:list",
  "file:save",
  "file:save-bytes",
  "file:open",
  "files:pending",
  "recent:list",
  "recent:open",
  "file:dropped",
  "scenario:save",
  "scenario:save-as",
] as const satisfies readonly ChannelName[];

type AssertAllListed<T extends readonly ChannelName[]> = Exclude<ChannelName, T[number]> extends never ? true : never;
export const allChannelsListed: AssertAllListed<typeof channelNames> = true;

/** `app:info` → `appInfo`: the method name the preload API gives a channel. */
export type MethodName<C extends string> = C extends `${infer A}:${infer B}`
  ? `${A}${Capitalize<MethodName<B>>}`
  : C extends `${infer A}-${infer B}`
    ? `${A}${Capitalize<MethodName<B>>}`
    : C;

export function methodName<C extends ChannelName>(channel: C): MethodName<C> {
  return channel.replace(/[:-](\w)/g, (_m, c: string) => c.toUpperCase()) as MethodName<C>;
}

/** The channels the preload exposes as methods taking the channel's arguments: all but `file:dropped`. */
export type ExposedChannel = Exclude<ChannelName, "file:dropped">;

/** Runtime list of {@link ExposedChannel}. */
export const exposedChannels = channelNames.filter((c): c is ExposedChannel => c !== "file:dropped");

/** The names on `window.mailscope`, sorted: all the page gets (the tests compare the real API with it). */
export const preloadApiNames: readonly string[] = [
  ...exposedChannels.map(methodName),
  "onAppCommand",
  "openDropped",
].sort();

/**
 * The API the preload exposes on `window.mailscope`: one method per exposed channel, the menus' commands,
 * and the drop. No method takes a path of the page's making for a file to read.
 */
export type PreloadApi = {
  readonly [C in ExposedChannel as MethodName<C>]: (...args: Channels[C]["args"]) => Promise<Channels[C]["result"]>;
} & {
  /** Listens to the menus' commands; returns a function that stops listening. */
  readonly onAppCommand: (listener: (command: AppCommand) => void) => () => void;
  /**
   * A file dropped on the window, read by main (`file:dropped`): its path is the one Electron knows for
   * the File (webUtils.getPathForFile), which only a real drop or file input has; undefined when it has none.
   */
  readonly openDropped: (file: File) => Promise<OpenedFile | undefined>;
};

/** Whether `value` is a {@link RecentFile}. */
export function isRecentFile(value: unknown): value is RecentFile {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    (r["kind"] === "scenario" || r["kind"] === "trace") &&
    typeof r["name"] === "string" &&
    typeof r["path"] === "string" &&
    (r["title"] === undefined || typeof r["title"] === "string") &&
    (r["description"] === undefined || typeof r["description"] === "string")
  );
}

/** Whether `value` is an {@link AppCommand} (the renderer checks what main sends). */
export function isAppCommand(value: unknown): value is AppCommand {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  switch (c["type"]) {
    case "toggle":
    case "step":
    case "restart":
    case "close":
      return true;
    case "speed":
      return c["speed"] === 1 || c["speed"] === 60 || c["speed"] === 3600 || c["speed"] === "max";
    case "export":
      return c["what"] === "trace" || c["what"] === "har" || c["what"] === "report" || c["what"] === "bundle";
    case "scenario":
      return c["what"] === "new" || c["what"] === "save" || c["what"] === "save-as";
    case "view":
      return c["view"] === "run" || c["view"] === "rules";
    case "recent":
      return Array.isArray(c["files"]) && c["files"].every(isRecentFile);
    case "open": {
      const f = c["file"] as Record<string, unknown> | null;
      return (
        typeof f === "object" &&
        f !== null &&
        (f["kind"] === "scenario" || f["kind"] === "trace") &&
        typeof f["name"] === "string" &&
        typeof f["path"] === "string" &&
        typeof f["text"] === "string" &&
        (f["emls"] === undefined || isRecordOf(f["emls"], (b) => b instanceof Uint8Array)) &&
        (f["emlErrors"] === undefined || isRecordOf(f["emlErrors"], (m) => typeof m === "string"))
      );
    }
    default:
      return false;
  }
}

/** Whether `value` is a plain object whose every own value passes `check`. */
function isRecordOf(value: unknown, check: (v: unknown) => boolean): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every(check);
}
