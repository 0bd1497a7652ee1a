import { app, BrowserWindow, dialog, Menu, protocol, screen, session } from "electron";
import { join } from "node:path";
import { listScenarioFiles } from "../app/node/scenarioFiles.ts";
import { APP_COMMAND, type AppCommand, type FileKind, type OpenedFile, type RecentFile } from "./channels.ts";
import { addRecent, filesFromArgv, loadRecent, readOpenedFile, recentOf, saveRecent } from "./files.ts";
import {
  openDropped,
  openRecent,
  openWithDialog,
  PendingFiles,
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
let windowLoaded = false;
let recent: RecentFile[] = [];
const pending = new PendingFiles();
const writable = new WritableScenarios();

/** The one recent list (File ▸ Open Recent and the library's "Opened"): saved, and shown in both. */
function setRecent(next: RecentFile[]): void {
  recent = next;
  void saveRecent(recentPath(), recent).catch(() => undefined);
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
  if (mainWindow && windowLoaded) mainWindow.webContents.send(APP_COMMAND, command);
}

/** A file for the window: sent now if it has loaded, else kept until it asks (files:pending). */
function deliver(file: OpenedFile): void {
  remember(file);
  if (mainWindow && windowLoaded) send({ type: "open", file });
  else pending.push(file);
}

async function openPath(path: string, kind?: FileKind): Promise<void> {
  try {
    deliver(await readOpenedFile(path, kind));
  } catch (error) {
    dialog.showErrorBox("Mailscope", `${path} cannot be opened: ${(error as Error).message}`);
  }
}

function buildMenu(): void {
  const template = menuTemplate(
    {
      send,
      openDialog: (kind) => {
        void openWithDialog(dialogs, mainWindow, kind, remember).then((result) => {
          if (result.opened) send({ type: "open", file: result.file });
        });
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
    saveWithDialog(dialogs, BrowserWindow.fromWebContents(event.sender) ?? undefined, suggestedName, contents),
  );
  handle("file:save-bytes", isOwnPage, (event, suggestedName, contents) =>
    saveWithDialog(dialogs, BrowserWindow.fromWebContents(event.sender) ?? undefined, suggestedName, contents),
  );
  handle("file:open", isOwnPage, (event, kind) =>
    openWithDialog(dialogs, BrowserWindow.fromWebContents(event.sender) ?? undefined, kind, remember),
  );
  handle("files:pending", isOwnPage, () => pending.take());
  handle("recent:list", isOwnPage, () => recent);
  handle("recent:open", isOwnPage, (_event, path) => openRecent(recent, path, remember));
  handle("file:dropped", isOwnPage, (_event, path) => openDropped(path, remember));
  handle("scenario:save", isOwnPage, (_event, path, contents) => saveScenario(path, contents, writable));
  handle("scenario:save-as", isOwnPage, (event, suggestedName, contents) =>
    saveScenarioAs(
      dialogs,
      BrowserWindow.fromWebContents(event.sender) ?? undefined,
      suggestedName,
      contents,
      writable,
      remember,
    ),
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
  if (saved.maximized) window.maximize();
  window.once("ready-to-show", () => window.show());
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
  window.webContents.on("did-finish-load", () => {
    windowLoaded = true;
  });
  window.on("close", () => {
    void saveWindowState(statePath(), { bounds: window.getNormalBounds(), maximized: window.isMaximized() }).catch(
      () => undefined,
    );
  });
  window.on("closed", () => {
    if (mainWindow === window) {
      mainWindow = undefined;
      windowLoaded = false;
    }
  });
  void window.loadURL(APP_INDEX);
  mainWindow = window;
  return window;
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on("second-instance", (_event, argv) => {
    for (const path of filesFromArgv(argv)) void openPath(path);
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore();
      mainWindow.focus();
    }
  });
  // macOS: files opened from the Finder or dropped on the Dock icon (file associations).
  app.on("open-file", (event, path) => {
    event.preventDefault();
    void openPath(path);
  });

  void app.whenReady().then(async () => {
    recent = await loadRecent(recentPath());
    setupSecurity();
    setupIpc();
    buildMenu();
    for (const path of filesFromArgv(process.argv)) await openPath(path);
    await createWindow();
    app.on("activate", () => {
      if (BrowserWindow.getAllWindows().length === 0) void createWindow();
    });
  });

  app.on("window-all-closed", () => {
    if (process.platform !== "darwin") app.quit();
  });
}
