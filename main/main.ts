import { app, BrowserWindow, dialog, Menu, protocol, screen, session, type WebContents } from "electron";
import { join } from "node:path";
import { listScenarioFiles } from "../app/node/scenarioFiles.ts";
import { APP_COMMAND, type AppCommand, type FileKind, type OpenedFile, type RecentFile } from "./channels.ts";
import { addRecent, filesFromArgv, loadRecent, readOpenedFile, recentOf, saveRecent } from "./files.ts";
import {
  FileInbox,
  openDropped,
  openRecent,
  openWithDialog,
  saveScenario,
  saveScenarioAs,
  saveWithDialog,
  WritableScenarios,
  type Dialogs,
} from "./handlers.ts";
import { handle } from "./ipc.ts";
import { menuTemplate } from "./menu.ts";
import { readingsText } from "./readings.ts";
import { CONTENT_SECURITY_POLICY, isOwnPage, lockDownContents, lockDownSession } from "./security.ts";
import { APP_INDEX, APP_SCHEME, APP_SCHEME_PRIVILEGES, serveAppRequest } from "./scheme.ts";
import { loadWindowState, restoreBounds, saveWindowState } from "./windowState.ts";
import { errorMessage } from "../app/errorMessage.ts";

const appRoot = app.getAppPath();
const rendererRoot = join(appRoot, "dist", "renderer");
const scenariosDir = app.isPackaged ? join(process.resourcesPath, "scenarios") : join(appRoot, "scenarios");
const statePath = () => join(app.getPath("userData"), "window-state.json");
const recentPath = () => join(app.getPath("userData"), "recent-files.json");

// Before ready: app:// is a standard, secure scheme, so the module worker and fetch work under it.
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);

function setupSecurity(): void {
  app.on("web-contents-created", (_event, contents) => lockDownContents(contents));
  protocol.handle(APP_SCHEME, (request) => serveAppRequest(request.url, rendererRoot, CONTENT_SECURITY_POLICY));
  lockDownSession(session.defaultSession);
}

const dialogs: Dialogs = {
  showOpenDialog: (window, options) =>
    window ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options),
  showSaveDialog: (window, options) =>
    window ? dialog.showSaveDialog(window, options) : dialog.showSaveDialog(options),
};

let mainWindow: BrowserWindow | undefined;
let windowOpening: Promise<BrowserWindow> | undefined;
let recent: RecentFile[] = [];
const inbox = new FileInbox((file) => send({ type: "open", file }));
const writable = new WritableScenarios();

/** The one recent list (File ▸ Open Recent and the library's "Opened"): saved, and shown in both. */
function setRecent(next: RecentFile[]): void {
  recent = next;
  try {
    saveRecent(recentPath(), recent);
  } catch {
    // The list stays in memory for this run; nothing else to do about a full or read-only disk.
  }
  buildMenu();
  send({ type: "recent", files: recent });
}

/** A file read or saved: at the top of the recent list; a scenario may be saved again by the editor. */
function remember(file: OpenedFile): void {
  if (file.kind === "scenario") writable.grant(file.path);
  setRecent(addRecent(recent, recentOf(file)));
  app.addRecentDocument(file.path);
}

function send(command: AppCommand): void {
  if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(APP_COMMAND, command);
}

/** A file for the window, remembered; with no window open (macOS keeps running without one), one opens for it. */
function deliver(file: OpenedFile): void {
  remember(file);
  inbox.deliver(file);
  void ensureWindow();
}

function showOpenError(what: string, error: unknown): void {
  dialog.showErrorBox("Mailscope", `${what} cannot be opened: ${errorMessage(error)}`);
}

function buildMenu(): void {
  const template = menuTemplate(
    {
      send,
      openDialog: (kind) => {
        openWithDialog(dialogs, mainWindow, kind, deliver).catch((error: unknown) =>
          showOpenError(kind === "scenario" ? "The scenario" : "The trace", error),
        );
      },
      openRecent: (file) => void openPath(file.path, file.kind),
      clearRecent: () => {
        setRecent([]);
        app.clearRecentDocuments();
      },
      showReadings: () => {
        void dialog.showMessageBox({
          type: "info",
          title: "Spec readings",
          message: "Where the spec leaves a choice open, a run reads it one way. Switch them in the Readings panel.",
          detail: readingsText(),
        });
      },
      showAbout: () => {
        void dialog.showMessageBox({
          type: "info",
          title: "About Mailscope",
          message: `Mailscope ${app.getVersion()}`,
          detail: `A simulator and visualizer of the Inter-Domain Mail Delivery Service.\nElectron ${process.versions.electron}, Chrome ${process.versions.chrome}.`,
        });
      },
    },
    recent,
    process.platform,
  );
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

const windowOf = (sender: WebContents): BrowserWindow | undefined => BrowserWindow.fromWebContents(sender) ?? undefined;

function setupIpc(): void {
  handle("app:info", isOwnPage, () => ({
    name: "Mailscope",
    version: app.getVersion(),
    shell: "electron",
    electron: process.versions.electron,
    chrome: process.versions.chrome,
    platform: process.platform,
  }));
  handle("scenarios:list", isOwnPage, () => listScenarioFiles(scenariosDir));
  handle("file:save", isOwnPage, (event, suggestedName, contents) =>
    saveWithDialog(dialogs, windowOf(event.sender), suggestedName, contents),
  );
  handle("file:save-bytes", isOwnPage, (event, suggestedName, contents) =>
    saveWithDialog(dialogs, windowOf(event.sender), suggestedName, contents),
  );
  handle("file:open", isOwnPage, (event, kind) => openWithDialog(dialogs, windowOf(event.sender), kind, remember));
  handle("files:pending", isOwnPage, () => inbox.take());
  handle("recent:list", isOwnPage, () => recent);
  handle("recent:open", isOwnPage, (_event, path) => openRecent(recent, path, remember));
  handle("file:dropped", isOwnPage, (_event, path) => openDropped(path, remember));
  handle("scenario:save", isOwnPage, (_event, path, contents) => saveScenario(path, contents, writable));
  handle("scenario:save-as", isOwnPage, (event, suggestedName, contents) =>
    saveScenarioAs(dialogs, windowOf(event.sender), suggestedName, contents, writable, remember),
  );
}

async function createWindow(): Promise<BrowserWindow> {
  const saved = restoreBounds(
    await loadWindowState(statePath()),
    screen.getAllDisplays().map((d) => d.workArea),
  );
  const window = new BrowserWindow({
    title: "Mailscope",
    ...(saved.x !== undefined && { x: saved.x, y: saved.y }),
    width: saved.width,
    height: saved.height,
    minWidth: 640,
    minHeight: 480,
    show: false,
    webPreferences: {
      preload: join(appRoot, "dist-electron", "preload.cjs"),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    },
  });
  mainWindow = window;
  // Shown once drawn, and maximized then: maximize() shows the window, blank if before its first paint.
  window.once("ready-to-show", () => {
    if (saved.maximized) window.maximize();
    window.show();
  });
  // The scenario editor holds unsaved changes (the page's beforeunload): ask before the window closes.
  window.webContents.on("will-prevent-unload", (event) => {
    const choice = dialog.showMessageBoxSync(window, {
      type: "question",
      buttons: ["Close Without Saving", "Cancel"],
      defaultId: 1,
      cancelId: 1,
      message: "The scenario in the editor has unsaved changes.",
      detail: "Close the window and lose them?",
    });
    if (choice === 0) event.preventDefault();
  });
  // A page loading (again) asks for its files once it listens (files:pending); until then they wait.
  window.webContents.on("did-start-loading", () => inbox.pause());
  window.on("close", () => {
    try {
      saveWindowState(statePath(), { bounds: window.getNormalBounds(), maximized: window.isMaximized() });
    } catch {
      // The next launch opens at the default size.
    }
  });
  window.on("closed", () => {
    if (mainWindow === window) {
      mainWindow = undefined;
      inbox.pause();
    }
  });
  void window.loadURL(APP_INDEX);
  return window;
}

/** The window, opened when there is none (once, however many files ask for it at the same time). */
function ensureWindow(): Promise<BrowserWindow> {
  if (mainWindow) return Promise.resolve(mainWindow);
  windowOpening ??= createWindow().finally(() => (windowOpening = undefined));
  return windowOpening;
}

/**
 * Ready: the recent list read before any file can change it (a macOS open-file may come before ready,
 * and must not write a list of one over the saved one), then the app:// scheme, IPC and the menu.
 * Set below, once this instance is the one that runs.
 */
let ready: Promise<void>;

/** A file the OS or the user named: read once the app is ready, and delivered; why not, in a dialog. */
async function openPath(path: string, kind?: FileKind): Promise<void> {
  await ready;
  try {
    deliver(await readOpenedFile(path, kind));
  } catch (error) {
    showOpenError(path, error);
  }
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  ready = app.whenReady().then(async () => {
    recent = await loadRecent(recentPath());
    setupSecurity();
    setupIpc();
    buildMenu();
  });
  // Another launch (a double-click, `mailscope x.yaml`): its files, relative to where it was started.
  app.on("second-instance", (_event, argv, workingDirectory) => {
    for (const path of filesFromArgv(argv, workingDirectory)) void openPath(path);
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore();
      mainWindow.focus();
    }
  });
  // macOS: files opened from the Finder or dropped on the Dock icon (file associations), maybe before ready.
  app.on("open-file", (event, path) => {
    event.preventDefault();
    void openPath(path);
  });

  void ready.then(async () => {
    for (const path of filesFromArgv(process.argv, process.cwd())) await openPath(path);
    await ensureWindow();
    app.on("activate", () => {
      if (BrowserWindow.getAllWindows().length === 0) void ensureWindow();
    });
  });

  app.on("window-all-closed", () => {
    if (process.platform !== "darwin") app.quit();
  });
}
