import { app, BrowserWindow, dialog, session, type WebContents } from "electron";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { listScenarioFiles } from "../app/node/scenarioFiles.ts";
import { handle } from "./ipc.ts";

/** The Content-Security-Policy of every page: no eval, no remote code, no inline scripts. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'";

const appRoot = app.getAppPath();
const rendererIndex = join(appRoot, "dist", "renderer", "index.html");
const rendererUrl = pathToFileURL(rendererIndex).href;
const scenariosDir = app.isPackaged ? join(process.resourcesPath, "scenarios") : join(appRoot, "scenarios");

function isOwnPage(url: string): boolean {
  return url === rendererUrl || url.startsWith(`${rendererUrl}#`) || url.startsWith(`${rendererUrl}?`);
}

/** No navigation away from the app, no new windows, no webviews. */
function lockDown(contents: WebContents): void {
  contents.on("will-navigate", (event, url) => {
    if (!isOwnPage(url)) event.preventDefault();
  });
  contents.on("will-redirect", (event) => event.preventDefault());
  contents.on("will-attach-webview", (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: "deny" }));
}

function setupSecurity(): void {
  app.on("web-contents-created", (_event, contents) => lockDown(contents));
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, "Content-Security-Policy": [CONTENT_SECURITY_POLICY] },
    });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
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
  handle("file:save", isOwnPage, async (event, suggestedName, contents) => {
    const owner = BrowserWindow.fromWebContents(event.sender);
    const options = { defaultPath: suggestedName };
    const choice = owner ? await dialog.showSaveDialog(owner, options) : await dialog.showSaveDialog(options);
    if (choice.canceled || !choice.filePath) return { saved: false };
    await writeFile(choice.filePath, contents, "utf8");
    return { saved: true, path: choice.filePath };
  });
}

function createWindow(): BrowserWindow {
  const window = new BrowserWindow({
    title: "Mailscope",
    width: 1280,
    height: 820,
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
  window.once("ready-to-show", () => window.show());
  void window.loadFile(rendererIndex);
  return window;
}

void app.whenReady().then(() => {
  setupSecurity();
  setupIpc();
  createWindow();
  app.on("activate", () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on("window-all-closed", () => {
  if (process.platform !== "darwin") app.quit();
});
