/**
 * main.ts itself, run against the stand-in for Electron (electronStandIn.ts,
 * typed from Electron's typings and behaving like it where main relies on it),
 * with the preload (preload.ts) as the page's side: what a user on a real
 * machine does — launch with files, launch again, open from the Finder, close
 * the window, drop a file — and what main must do in each case.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  APP_COMMAND,
  channelNames,
  preloadApiNames,
  type AppCommand,
  type OpenedFile,
  type PreloadApi,
} from "./channels.ts";
import { createElectron, electronEvent, type BrowserWindowStandIn, type ElectronStandIn } from "./electronStandIn.ts";
import { APP_INDEX, APP_SCHEME_PRIVILEGES } from "./scheme.ts";

/** Waits for what main does asynchronously (files read, a window made); the limit only ends a hang. */
const settle = <T>(check: () => T): Promise<T> => vi.waitFor(check, { timeout: 30_000, interval: 2 });

const SCENARIO = "name: alpha\ndescription: the first\n";

interface Launched {
  readonly electron: ElectronStandIn;
  readonly appRoot: string;
  readonly userData: string;
  /** A folder for the test's own files. */
  readonly files: string;
}

const restore: (() => void)[] = [];
afterEach(() => {
  for (const undo of restore.splice(0).reverse()) undo();
  vi.doUnmock("electron");
});

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `mailscope-main-${prefix}-`));
}

/**
 * Starts main.ts as Electron would run it (with `process.argv` and `process.platform` as given),
 * up to, not including, `ready`.
 */
async function launch(
  options: { argv?: string[]; platform?: NodeJS.Platform; lock?: boolean; userData?: string } = {},
): Promise<Launched> {
  const appRoot = tempDir("app");
  mkdirSync(join(appRoot, "dist", "renderer"), { recursive: true });
  writeFileSync(join(appRoot, "dist", "renderer", "index.html"), "<!doctype html><title>Mailscope</title>");
  mkdirSync(join(appRoot, "scenarios"));
  writeFileSync(join(appRoot, "scenarios", "teaching.yaml"), SCENARIO);
  const userData = options.userData ?? tempDir("user");
  const electron = createElectron({
    appPath: appRoot,
    userData,
    ...(options.lock !== undefined && { lock: options.lock }),
  });
  const argv = process.argv;
  process.argv = ["/usr/lib/electron/electron", ".", ...(options.argv ?? [])];
  restore.push(() => (process.argv = argv));
  if (options.platform !== undefined) {
    const platform = Object.getOwnPropertyDescriptor(process, "platform")!;
    Object.defineProperty(process, "platform", { ...platform, value: options.platform });
    restore.push(() => Object.defineProperty(process, "platform", platform));
  }
  vi.resetModules();
  vi.doMock("electron", () => electron.module);
  await import("./main.ts");
  return { electron, appRoot, userData, files: tempDir("files") };
}

/** `ready`, and main's start-up done: the window made (and, given files, them read). */
async function ready(launched: Launched): Promise<BrowserWindowStandIn> {
  launched.electron.app.ready();
  return settle(() => {
    const [window] = launched.electron.windows();
    expect(window).toBeDefined();
    return window!;
  });
}

/** The page's side: the preload run in the window, and the menus' commands it hears. */
async function page(electron: ElectronStandIn): Promise<{ api: PreloadApi; commands: AppCommand[] }> {
  await import("./preload.ts");
  const api = electron.exposed.get("mailscope") as PreloadApi;
  const commands: AppCommand[] = [];
  api.onAppCommand((c) => commands.push(c));
  return { api, commands };
}

function write(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const opened = (commands: readonly AppCommand[]): string[] =>
  commands.flatMap((c) => (c.type === "open" ? [c.file.path] : []));

describe("main.ts against Electron's API", () => {
  it("registers app:// as privileged before ready and serves it after; opens one sandboxed window, shown once drawn", async () => {
    const launched = await launch();
    const { electron, appRoot } = launched;
    // Before ready: the scheme is privileged (Electron refuses that after ready), nothing else is touched.
    expect(electron.privileged).toEqual([APP_SCHEME_PRIVILEGES]);
    expect(electron.protocols.size).toBe(0);
    expect(electron.windows()).toEqual([]);
    const window = await ready(launched);
    expect(window.options).toMatchObject({
      show: false,
      minWidth: 640,
      webPreferences: {
        preload: join(appRoot, "dist-electron", "preload.cjs"),
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        webSecurity: true,
        webviewTag: false,
      },
    });
    expect(window.webContents.getURL()).toBe(APP_INDEX);
    const serve = electron.protocols.get("app")!;
    const index = await serve(new Request("app://mailscope/"));
    expect(index.status).toBe(200);
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await index.text()).toContain("<title>Mailscope</title>");
    expect((await serve(new Request("app://mailscope/%2e%2e/%2e%2e/package.json"))).status).toBe(404);
    // Every channel has its one handler (a second would have thrown, as Electron's does).
    expect([...electron.handlers.keys()].sort()).toEqual([...channelNames].sort());
    expect(() =>
      (electron.module["ipcMain"] as { handle: (c: string, f: () => void) => void }).handle(
        "app:info",
        () => undefined,
      ),
    ).toThrow("Attempted to register a second handler for 'app:info'");
    // Hidden until its first paint, then shown.
    expect(window.isVisible()).toBe(false);
    window.emit("ready-to-show");
    expect(window.isVisible()).toBe(true);
    expect(window.shownBlank).toBe(false);
    // The window's web contents were locked down as they were made: a navigation away (details object) is stopped.
    const away = electronEvent({ url: "https://evil.example/", isSameDocument: false, isMainFrame: true, frame: null });
    window.webContents.emit("will-navigate", away, "https://evil.example/", false, true, 1, 1);
    expect(away.defaultPrevented).toBe(true);
    const { api } = await page(electron);
    expect(await api.scenariosList()).toEqual([
      { file: "teaching.yaml", name: "alpha", title: "alpha", description: "the first", summary: "the first" },
    ]);
  });

  it("the preload exposes no method that reads a path the page names; a frame gone (senderFrame null) or another page is refused", async () => {
    const launched = await launch();
    const window = await ready(launched);
    const { api } = await page(launched.electron);
    expect(Object.keys(api).sort()).toEqual(preloadApiNames);
    // The drop takes a File; nothing takes a path of the page's making to read (file:dropped is not exposed).
    expect(Object.keys(api)).not.toContain("fileDropped");
    expect(Object.keys(api)).not.toContain("pathForFile");
    expect(preloadApiNames).toHaveLength(12);
    expect(await api.appInfo()).toMatchObject({ name: "Mailscope", shell: "electron", version: "0.1.0" });
    await expect(launched.electron.invoke(window.webContents, "app:info", [], null)).rejects.toThrow(
      "Error invoking remote method 'app:info': Error: ipc: app:info refused from untrusted frame",
    );
    await expect(launched.electron.invoke(window.webContents, "app:info", [], "https://evil.example/")).rejects.toThrow(
      /untrusted frame https:\/\/evil\.example\//,
    );
  });

  it("files on the command line, a path relative to where it was started and a desktop entry's file URI, wait for the page and join the recent list", async () => {
    const dir = tempDir("argv");
    const scenario = write(dir, "a.yaml", SCENARIO);
    const trace = write(dir, "My Run 1.mstrace", "{}");
    // The scenario named relative to the working directory (`../../tmp/…`), the trace as GNOME hands it (%U).
    const launched = await launch({
      argv: [relative(process.cwd(), scenario), pathToFileURL(trace).href, "--enable-logging"],
    });
    await ready(launched);
    const { api, commands } = await page(launched.electron);
    // main reads the files one after the other, and the window opens with the first: wait until both are read
    // (each is remembered as it is read), then the page asks once. (Asking in between is a real order too — the
    // second file then comes as a command, as a second launch's does below — but a test that asked as soon as the
    // window existed and wanted both in one answer failed on a loaded machine: the trace was not read yet.)
    await settle(() => expect(launched.electron.app.recentDocuments).toHaveLength(2));
    const files = await api.filesPending();
    expect(files.map((f) => [f.kind, f.path])).toEqual([
      ["scenario", scenario],
      ["trace", trace],
    ]);
    expect(opened(commands)).toEqual([]);
    // The recent list is on disk already (written at once, not left for a quit to cut off).
    const recent = JSON.parse(readFileSync(join(launched.userData, "recent-files.json"), "utf8")) as { path: string }[];
    expect(recent.map((r) => r.path)).toEqual([trace, scenario]);
    expect(launched.electron.app.recentDocuments).toEqual([scenario, trace]);
    // Each file is given once.
    expect(await api.filesPending()).toEqual([]);
  });

  it("a second launch's relative path is taken from its working directory, and its file reaches the page that asked before its load finished", async () => {
    const launched = await launch();
    const window = await ready(launched);
    const { api, commands } = await page(launched.electron);
    // The page asked (it listens from then on); its load has not finished (no did-finish-load).
    expect(await api.filesPending()).toEqual([]);
    const there = tempDir("second");
    const file = write(there, "s.yaml", SCENARIO);
    window.minimize();
    launched.electron.app.emit("second-instance", electronEvent(), ["/opt/Mailscope/mailscope", "s.yaml"], there, {});
    await settle(() => expect(opened(commands)).toEqual([file]));
    expect(launched.electron.dialogs.errors).toEqual([]);
    expect(window.isMinimized()).toBe(false);
    expect(window.focused).toBe(true);
    expect(window.webContents.sentOn(APP_COMMAND).filter((c) => (c as AppCommand).type === "recent")).toHaveLength(1);
  });

  it("a page loading again gets the files that came meanwhile when it asks again", async () => {
    const launched = await launch();
    const window = await ready(launched);
    const { api, commands } = await page(launched.electron);
    await api.filesPending();
    await window.loadURL(APP_INDEX);
    const file = write(launched.files, "t.mstrace", "{}");
    launched.electron.app.emit("second-instance", electronEvent(), ["mailscope", file], "/", {});
    await settle(() => expect(launched.electron.app.recentDocuments).toEqual([file]));
    expect(opened(commands)).toEqual([]);
    expect((await api.filesPending()).map((f: OpenedFile) => f.path)).toEqual([file]);
  });

  it("macOS: a file opened before ready leaves the saved recent list in place, below it", async () => {
    const userData = tempDir("user");
    const files = tempDir("mac");
    const old = [write(files, "a.yaml", SCENARIO), write(files, "b.yaml", SCENARIO)];
    writeFileSync(
      join(userData, "recent-files.json"),
      JSON.stringify(old.map((path) => ({ kind: "scenario", name: path.slice(-6), path }))),
    );
    const launched = await launch({ platform: "darwin", userData });
    const fromFinder = write(files, "c.mstrace", "{}");
    const event = electronEvent();
    launched.electron.app.emit("open-file", event, fromFinder);
    expect(event.defaultPrevented).toBe(true);
    // A moment passes before ready (time enough to read a small file): the saved list is left alone meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(JSON.parse(readFileSync(join(userData, "recent-files.json"), "utf8"))).toHaveLength(2);
    await ready(launched);
    await settle(() => {
      const recent = JSON.parse(readFileSync(join(userData, "recent-files.json"), "utf8")) as { path: string }[];
      expect(recent.map((r) => r.path)).toEqual([fromFinder, ...old]);
    });
    const { api } = await page(launched.electron);
    expect((await api.filesPending()).map((f) => f.path)).toEqual([fromFinder]);
  });

  it("macOS: with the window closed the app stays; a file from the Finder, or File ▸ Open…, opens a window and shows", async () => {
    const launched = await launch({ platform: "darwin" });
    const { electron } = launched;
    const first = await ready(launched);
    first.close();
    expect(electron.app.quitCalled).toBe(false);
    expect(electron.windows()).toEqual([]);
    const fromFinder = write(launched.files, "run.msbundle", "{}");
    electron.app.emit("open-file", electronEvent(), fromFinder);
    const second = await settle(() => {
      const [window] = electron.windows();
      expect(window).toBeDefined();
      return window!;
    });
    expect(second).not.toBe(first);
    const { api } = await page(electron);
    expect((await api.filesPending()).map((f) => f.path)).toEqual([fromFinder]);

    second.close();
    const chosen = write(launched.files, "chosen.yaml", SCENARIO);
    electron.dialogs.openAnswers.push({ canceled: false, filePaths: [chosen] });
    const file = electron.applicationMenu()!.template.find((m) => m.label === "&File")!;
    const openScenario = (file.submenu as { label?: string; click?: () => void }[]).find(
      (i) => i.label === "Open Scenario…",
    )!;
    openScenario.click!();
    const third = await settle(() => {
      const [window] = electron.windows();
      expect(window).toBeDefined();
      return window!;
    });
    expect(third).not.toBe(second);
    expect((await api.filesPending()).map((f) => f.path)).toEqual([chosen]);
    // On other systems the app quits with its last window.
    const linux = await launch({ platform: "linux" });
    (await ready(linux)).close();
    expect(linux.electron.app.quitCalled).toBe(true);
  });

  it("an Open from the menu that fails says why; so does a file from the command line that cannot be read", async () => {
    const launched = await launch({ argv: ["/no/such/dir/gone.yaml"] });
    await ready(launched);
    await settle(() => expect(launched.electron.dialogs.errors).toHaveLength(1));
    expect(launched.electron.dialogs.errors[0]?.content).toMatch(
      /^\/no\/such\/dir\/gone\.yaml cannot be opened: .*ENOENT/,
    );
    launched.electron.dialogs.openAnswers.push({
      canceled: false,
      filePaths: [join(launched.files, "missing.mstrace")],
    });
    const file = launched.electron.applicationMenu()!.template.find((m) => m.label === "&File")!;
    (file.submenu as { label?: string; click?: () => void }[]).find((i) => i.label === "Open Trace…")!.click!();
    await settle(() => expect(launched.electron.dialogs.errors).toHaveLength(2));
    expect(launched.electron.dialogs.errors[1]).toMatchObject({
      title: "Mailscope",
      content: expect.stringMatching(/^The trace cannot be opened: .*missing\.mstrace/),
    });
  });

  it("a drop is read only for a File Electron knows the path of, and only that scenario may be saved over", async () => {
    const launched = await launch();
    await ready(launched);
    const { api } = await page(launched.electron);
    const path = write(launched.files, "dropped.yaml", SCENARIO);
    const dropped = await api.openDropped(launched.electron.droppedFile(path, "dropped.yaml"));
    expect(dropped).toMatchObject({ kind: "scenario", path, text: SCENARIO });
    expect(await api.scenarioSave(path, "name: beta\n")).toEqual({ saved: true, path });
    expect(readFileSync(path, "utf8")).toBe("name: beta\n");
    // A File the page made has no path: nothing is read, nothing granted.
    const elsewhere = write(launched.files, "other.yaml", SCENARIO);
    expect(await api.openDropped(new File([SCENARIO], elsewhere))).toBeUndefined();
    await expect(api.scenarioSave(elsewhere, "name: evil\n")).rejects.toThrow(/was not opened or saved in this window/);
    expect(readFileSync(elsewhere, "utf8")).toBe(SCENARIO);
  });

  it("a window saved maximized is maximized once drawn (not shown blank); its state is on disk as it closes", async () => {
    const userData = tempDir("user");
    writeFileSync(
      join(userData, "window-state.json"),
      JSON.stringify({ bounds: { x: 40, y: 30, width: 1000, height: 700 }, maximized: true }),
    );
    const launched = await launch({ userData });
    const window = await ready(launched);
    expect(window.options).toMatchObject({ x: 40, y: 30, width: 1000, height: 700 });
    expect(window.isVisible()).toBe(false);
    window.emit("ready-to-show");
    expect(window.isMaximized()).toBe(true);
    expect(window.isVisible()).toBe(true);
    expect(window.shownBlank).toBe(false);
    window.close();
    // Read at once: written before close() returned, nothing left pending for the quit.
    expect(JSON.parse(readFileSync(join(userData, "window-state.json"), "utf8"))).toEqual({
      bounds: { x: 40, y: 30, width: 1000, height: 700 },
      maximized: true,
    });
  });

  it("a second instance hands over and quits: no window, no IPC", async () => {
    const launched = await launch({ lock: false });
    expect(launched.electron.app.quitCalled).toBe(true);
    launched.electron.app.ready();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(launched.electron.windows()).toEqual([]);
    expect(launched.electron.handlers.size).toBe(0);
    expect(launched.electron.app.listenerCount("second-instance")).toBe(0);
  });
});
