/**
 * A stand-in for the `electron` module, for tests of main/ (Electron's binary
 * cannot be had on the machines this project is built on). It is typed from
 * Electron's own typings: each stand-in object implements the members main
 * uses as Electron declares them, and what each event hands its listeners is
 * checked against Electron's `on()` ({@link electronTakesTheseListeners}), so a
 * wrong signature fails to compile. It behaves like Electron where main's
 * correctness rests on it:
 *
 * - most modules only work once the app is ready (a BrowserWindow, the
 *   default session, protocol.handle, screen), and
 *   protocol.registerSchemesAsPrivileged only before;
 * - a second ipcMain.handle for one channel throws; an invoke's arguments and
 *   answer are structured-cloned, a handler's error reaches the page as
 *   "Error invoking remote method …"; an event's `senderFrame` may be null;
 * - `will-navigate` and `will-redirect` hand a details object first (the
 *   positional url is deprecated);
 * - maximize() shows a hidden window (blank before its first paint), a closed
 *   window's methods throw "Object has been destroyed", the last window closed
 *   emits `window-all-closed`, and a web contents created emits
 *   `web-contents-created`;
 * - webUtils.getPathForFile gives a path only for a File that is on disk (a
 *   drop), "" for one a page made.
 *
 * A test drives it as the OS and the user would: {@link AppStandIn.ready},
 * `app.emit("second-instance", …)`, `window.emit("ready-to-show")`, a dialog's
 * next answer, and the page through the preload's API ({@link ElectronStandIn.page}).
 */
import type * as Electron from "electron";

type Args = readonly unknown[];
type AnyListener = (...args: never[]) => unknown;

/** Node's EventEmitter as Electron's objects have it, with events typed by what Electron hands their listeners. */
class Emitter<Events extends Record<string, Args>> {
  private readonly listeners = new Map<string, { fn: AnyListener; once: boolean }[]>();

  on(event: string, listener: AnyListener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), { fn: listener, once: false }]);
    return this;
  }

  once(event: string, listener: AnyListener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), { fn: listener, once: true }]);
    return this;
  }

  removeListener(event: string, listener: AnyListener): this {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((l) => l.fn !== listener),
    );
    return this;
  }

  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0;
  }

  /** Fires `event` with what Electron hands its listeners; whether any listened. */
  emit<K extends keyof Events & string>(event: K, ...args: Events[K]): boolean {
    const listeners = this.listeners.get(event) ?? [];
    this.listeners.set(
      event,
      listeners.filter((l) => !l.once),
    );
    for (const l of listeners) (l.fn as (...a: Args) => unknown)(...args);
    return listeners.length > 0;
  }
}

/** An event whose default a listener may prevent (Electron's `Event`, with its details). */
export function electronEvent<P extends object = object>(details: P = {} as P): Electron.Event<P> {
  let prevented = false;
  return {
    ...details,
    preventDefault: () => void (prevented = true),
    get defaultPrevented() {
      return prevented;
    },
  } as Electron.Event<P>;
}

// ---- what each event hands its listeners ----

export interface AppEvents {
  [event: string]: Args;
  ready: [event: Electron.Event, launchInfo: Record<string, unknown> | Electron.NotificationResponse];
  "second-instance": [event: Electron.Event, argv: string[], workingDirectory: string, additionalData: unknown];
  "open-file": [event: Electron.Event, path: string];
  activate: [event: Electron.Event, hasVisibleWindows: boolean];
  "window-all-closed": [];
  "web-contents-created": [event: Electron.Event, webContents: Electron.WebContents];
  "before-quit": [event: Electron.Event];
}

export interface WindowEvents {
  [event: string]: Args;
  "ready-to-show": [];
  close: [event: Electron.Event];
  closed: [];
}

type NavigationArgs<P extends object> = [
  details: Electron.Event<P>,
  url: string,
  isInPlace: boolean,
  isMainFrame: boolean,
  frameProcessId: number,
  frameRoutingId: number,
];

export interface ContentsEvents {
  [event: string]: Args;
  "will-navigate": NavigationArgs<Electron.WebContentsWillNavigateEventParams>;
  "will-redirect": NavigationArgs<Electron.WebContentsWillRedirectEventParams>;
  "will-frame-navigate": [details: Electron.Event<Electron.WebContentsWillFrameNavigateEventParams>];
  "will-attach-webview": [
    event: Electron.Event,
    webPreferences: Electron.WebPreferences,
    params: Record<string, string>,
  ];
  "select-bluetooth-device": [
    event: Electron.Event,
    devices: Electron.BluetoothDevice[],
    callback: (deviceId: string) => void,
  ];
  "will-prevent-unload": [event: Electron.Event];
  "did-start-loading": [];
  "did-finish-load": [];
}

export interface SessionEvents {
  [event: string]: Args;
  "select-hid-device": [
    event: Electron.Event,
    details: Electron.SelectHidDeviceDetails,
    callback: (deviceId?: string | null) => void,
  ];
  "select-serial-port": [
    event: Electron.Event,
    portList: Electron.SerialPort[],
    webContents: Electron.WebContents,
    callback: (portId: string) => void,
  ];
  "select-usb-device": [
    event: Electron.Event,
    details: Electron.SelectUsbDeviceDetails,
    callback: (deviceId?: string) => void,
  ];
}

/**
 * Compile-time only (never called): Electron's own `on()` takes a listener of each event's arguments as
 * listed above, so a list that hands a listener something Electron does not fails to compile.
 */
export function electronTakesTheseListeners(
  app: Electron.App,
  window: Electron.BrowserWindow,
  contents: Electron.WebContents,
  session: Electron.Session,
): void {
  const l =
    <A extends Args>() =>
    (...args: A) =>
      void args;
  app.on("ready", l<AppEvents["ready"]>());
  app.on("second-instance", l<AppEvents["second-instance"]>());
  app.on("open-file", l<AppEvents["open-file"]>());
  app.on("activate", l<AppEvents["activate"]>());
  app.on("window-all-closed", l<AppEvents["window-all-closed"]>());
  app.on("web-contents-created", l<AppEvents["web-contents-created"]>());
  app.on("before-quit", l<AppEvents["before-quit"]>());
  window.on("ready-to-show", l<WindowEvents["ready-to-show"]>());
  window.on("close", l<WindowEvents["close"]>());
  window.on("closed", l<WindowEvents["closed"]>());
  contents.on("will-navigate", l<ContentsEvents["will-navigate"]>());
  contents.on("will-redirect", l<ContentsEvents["will-redirect"]>());
  contents.on("will-frame-navigate", l<ContentsEvents["will-frame-navigate"]>());
  contents.on("will-attach-webview", l<ContentsEvents["will-attach-webview"]>());
  contents.on("select-bluetooth-device", l<ContentsEvents["select-bluetooth-device"]>());
  contents.on("will-prevent-unload", l<ContentsEvents["will-prevent-unload"]>());
  contents.on("did-start-loading", l<ContentsEvents["did-start-loading"]>());
  contents.on("did-finish-load", l<ContentsEvents["did-finish-load"]>());
  session.on("select-hid-device", l<SessionEvents["select-hid-device"]>());
  session.on("select-serial-port", l<SessionEvents["select-serial-port"]>());
  session.on("select-usb-device", l<SessionEvents["select-usb-device"]>());
}

/** Electron's error for an object used after it was destroyed (a closed window). */
const DESTROYED = "Object has been destroyed";

function notReady(what: string): Error {
  return new Error(`${what} cannot be used before the app is ready (stand-in for Electron's own refusal)`);
}

// ---- the objects ----

export interface StandInOptions {
  /** app.getAppPath(): where dist/renderer and dist-electron are. */
  readonly appPath: string;
  /** app.getPath("userData"). */
  readonly userData: string;
  /** What app.requestSingleInstanceLock() answers (false: another instance runs). */
  readonly lock?: boolean;
  readonly version?: string;
}

export class AppStandIn
  extends Emitter<AppEvents>
  implements
    Pick<
      Electron.App,
      | "whenReady"
      | "isReady"
      | "getAppPath"
      | "getPath"
      | "getVersion"
      | "requestSingleInstanceLock"
      | "quit"
      | "addRecentDocument"
      | "clearRecentDocuments"
    >
{
  readonly isPackaged = false;
  /** What the app did: quit() called, the OS's recent documents. */
  quitCalled = false;
  readonly recentDocuments: string[] = [];
  private readied = false;
  private readonly readyPromise: Promise<void>;
  private resolveReady: () => void = () => undefined;
  private readonly options: StandInOptions;

  constructor(options: StandInOptions) {
    super();
    this.options = options;
    this.readyPromise = new Promise((resolve) => (this.resolveReady = resolve));
  }

  /** The OS says the app is ready: `ready`, then whenReady() resolves (its awaiters run after this returns). */
  ready(): void {
    this.readied = true;
    this.emit("ready", electronEvent(), {});
    this.resolveReady();
  }

  whenReady(): Promise<void> {
    return this.readyPromise;
  }
  isReady(): boolean {
    return this.readied;
  }
  getAppPath(): string {
    return this.options.appPath;
  }
  getPath(name: Parameters<Electron.App["getPath"]>[0]): string {
    if (name !== "userData") throw new Error(`stand-in: app.getPath(${name}) is not used by main`);
    return this.options.userData;
  }
  getVersion(): string {
    return this.options.version ?? "0.1.0";
  }
  requestSingleInstanceLock(_additionalData?: Record<string, unknown>): boolean {
    return this.options.lock ?? true;
  }
  quit(): void {
    this.quitCalled = true;
  }
  addRecentDocument(path: string): void {
    this.recentDocuments.push(path);
  }
  clearRecentDocuments(): void {
    this.recentDocuments.length = 0;
  }
}

/** One message main sent the page (webContents.send). */
export interface Sent {
  readonly channel: string;
  readonly args: readonly unknown[];
}

export class WebContentsStandIn
  extends Emitter<ContentsEvents>
  implements Pick<Electron.WebContents, "send" | "getURL" | "setWindowOpenHandler" | "isDestroyed">
{
  /** What main sent the page, in order. */
  readonly sent: Sent[] = [];
  url = "";
  destroyed = false;
  windowOpenHandler: ((details: Electron.HandlerDetails) => Electron.WindowOpenHandlerResponse) | undefined;
  /** The page's listeners (the preload's ipcRenderer.on), by channel. */
  readonly pageListeners = new Map<string, ((event: unknown, ...args: unknown[]) => void)[]>();

  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error(DESTROYED);
    const cloned = structuredClone(args);
    this.sent.push({ channel, args: cloned });
    for (const listener of this.pageListeners.get(channel) ?? []) listener({ sender: this }, ...cloned);
  }
  getURL(): string {
    return this.url;
  }
  setWindowOpenHandler(handler: (details: Electron.HandlerDetails) => Electron.WindowOpenHandlerResponse): void {
    this.windowOpenHandler = handler;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  /** The messages main sent on `channel`, their first argument each. */
  sentOn(channel: string): unknown[] {
    return this.sent.filter((s) => s.channel === channel).map((s) => s.args[0]);
  }
}

export class BrowserWindowStandIn
  extends Emitter<WindowEvents>
  implements
    Pick<
      Electron.BrowserWindow,
      | "show"
      | "maximize"
      | "isMaximized"
      | "isMinimized"
      | "restore"
      | "focus"
      | "getNormalBounds"
      | "isDestroyed"
      | "loadURL"
      | "close"
      | "isVisible"
    >
{
  static app: AppStandIn | undefined;
  static readonly all: BrowserWindowStandIn[] = [];
  readonly webContents = new WebContentsStandIn();
  readonly options: Electron.BrowserWindowConstructorOptions;
  /** Whether the window became visible before its first paint (`ready-to-show`): a blank window shown. */
  shownBlank = false;
  focused = false;
  private visible = false;
  private painted = false;
  private maximized = false;
  private minimized = false;
  private destroyed = false;

  constructor(options: Electron.BrowserWindowConstructorOptions = {}) {
    super();
    const app = BrowserWindowStandIn.app;
    if (!app?.isReady()) throw new Error("Cannot create BrowserWindow before app is ready");
    this.options = options;
    this.visible = options.show ?? true;
    BrowserWindowStandIn.all.push(this);
    app.emit("web-contents-created", electronEvent(), this.webContents as unknown as Electron.WebContents);
    this.once("ready-to-show", () => void (this.painted = true));
  }

  static getAllWindows(): BrowserWindowStandIn[] {
    return [...BrowserWindowStandIn.all];
  }
  static fromWebContents(webContents: Electron.WebContents): BrowserWindowStandIn | null {
    return BrowserWindowStandIn.all.find((w) => (w.webContents as unknown) === webContents) ?? null;
  }

  private alive(): void {
    if (this.destroyed) throw new Error(DESTROYED);
  }
  private becomeVisible(): void {
    if (!this.visible && !this.painted) this.shownBlank = true;
    this.visible = true;
  }
  show(): void {
    this.alive();
    this.becomeVisible();
    this.focused = true;
  }
  /** Electron: "This will also show (but not focus) the window if it isn't being displayed already." */
  maximize(): void {
    this.alive();
    this.becomeVisible();
    this.maximized = true;
  }
  isVisible(): boolean {
    this.alive();
    return this.visible;
  }
  isMaximized(): boolean {
    this.alive();
    return this.maximized;
  }
  isMinimized(): boolean {
    this.alive();
    return this.minimized;
  }
  /** The user minimizes the window. */
  minimize(): void {
    this.alive();
    this.minimized = true;
  }
  restore(): void {
    this.alive();
    this.minimized = false;
  }
  focus(): void {
    this.alive();
    this.focused = true;
  }
  getNormalBounds(): Electron.Rectangle {
    this.alive();
    const { x = 10, y = 10, width = 800, height = 600 } = this.options;
    return { x, y, width, height };
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  /** Loading the page starts (did-start-loading); the test plays the page (the preload, its asking). */
  loadURL(url: string, _options?: Electron.LoadURLOptions): Promise<void> {
    this.alive();
    this.webContents.url = url;
    this.webContents.emit("did-start-loading");
    return Promise.resolve();
  }
  /** The user closes the window: `close`, then (not prevented) `closed`, and `window-all-closed` after the last. */
  close(): void {
    this.alive();
    const event = electronEvent();
    this.emit("close", event);
    if (event.defaultPrevented) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    BrowserWindowStandIn.all.splice(BrowserWindowStandIn.all.indexOf(this), 1);
    this.emit("closed");
    if (BrowserWindowStandIn.all.length === 0) BrowserWindowStandIn.app?.emit("window-all-closed");
  }
}

export class SessionStandIn
  extends Emitter<SessionEvents>
  implements
    Pick<Electron.Session, "setPermissionRequestHandler" | "setPermissionCheckHandler" | "setDevicePermissionHandler">
{
  permissionRequest: Parameters<Electron.Session["setPermissionRequestHandler"]>[0] = null;
  permissionCheck: Parameters<Electron.Session["setPermissionCheckHandler"]>[0] = null;
  devicePermission: Parameters<Electron.Session["setDevicePermissionHandler"]>[0] = null;

  setPermissionRequestHandler(handler: Parameters<Electron.Session["setPermissionRequestHandler"]>[0]): void {
    this.permissionRequest = handler;
  }
  setPermissionCheckHandler(handler: Parameters<Electron.Session["setPermissionCheckHandler"]>[0]): void {
    this.permissionCheck = handler;
  }
  setDevicePermissionHandler(handler: Parameters<Electron.Session["setDevicePermissionHandler"]>[0]): void {
    this.devicePermission = handler;
  }
}

/** The menu a template builds: its template, to be read and clicked. */
export class MenuStandIn {
  readonly template: readonly Electron.MenuItemConstructorOptions[];
  constructor(template: readonly Electron.MenuItemConstructorOptions[]) {
    this.template = template;
  }
}

/** A handler's answer the page gets, or its error as Electron words it. */
type InvokeHandler = (event: Electron.IpcMainInvokeEvent, ...args: never[]) => unknown;

/** What the dialogs answer next, and what they were asked and shown. */
export interface DialogScript {
  readonly openAnswers: Electron.OpenDialogReturnValue[];
  readonly saveAnswers: Electron.SaveDialogReturnValue[];
  readonly asked: (Electron.OpenDialogOptions | Electron.SaveDialogOptions)[];
  readonly errors: { readonly title: string; readonly content: string }[];
  readonly messages: Electron.MessageBoxOptions[];
}

/** A full Electron Display for a work area (main reads the work areas). */
export function display(workArea: Electron.Rectangle): Electron.Display {
  const size = { width: workArea.width, height: workArea.height };
  return {
    accelerometerSupport: "unknown",
    bounds: workArea,
    colorDepth: 24,
    colorSpace: "srgb",
    depthPerComponent: 8,
    detected: true,
    displayFrequency: 60,
    id: 1,
    internal: true,
    label: "stand-in",
    maximumCursorSize: { width: 64, height: 64 },
    monochrome: false,
    nativeOrigin: { x: workArea.x, y: workArea.y },
    rotation: 0,
    scaleFactor: 1,
    size,
    touchSupport: "unknown",
    workArea,
    workAreaSize: size,
  };
}

/** The whole module, and the handles a test drives it by. */
export interface ElectronStandIn {
  /** What `import … from "electron"` gives main and the preload. */
  readonly module: Record<string, unknown>;
  readonly app: AppStandIn;
  readonly session: SessionStandIn;
  readonly dialogs: DialogScript;
  /** The privileged schemes registered, and the protocol handlers by scheme. */
  readonly privileged: Electron.CustomScheme[];
  readonly protocols: Map<string, (request: Request) => Response | Promise<Response>>;
  /** IPC handlers by channel. */
  readonly handlers: Map<string, InvokeHandler>;
  /** The application menu last set. */
  applicationMenu(): MenuStandIn | null;
  windows(): BrowserWindowStandIn[];
  /** What the preload exposed (contextBridge.exposeInMainWorld), by key. */
  readonly exposed: Map<string, unknown>;
  /** The web contents the preload runs in (its ipcRenderer's). */
  page: WebContentsStandIn | undefined;
  /**
   * An invoke from a frame of `contents` at its URL (the page's ipcRenderer.invoke); `senderFrame: null`
   * (the frame gone) when `frameUrl` is null.
   */
  invoke(
    contents: WebContentsStandIn,
    channel: string,
    args: readonly unknown[],
    frameUrl?: string | null,
  ): Promise<unknown>;
  /** A File as a drop gives it: on disk at `path` (webUtils.getPathForFile knows it). */
  droppedFile(path: string, name: string): File;
}

export function createElectron(options: StandInOptions): ElectronStandIn {
  const app = new AppStandIn(options);
  BrowserWindowStandIn.app = app;
  BrowserWindowStandIn.all.length = 0;
  const session = new SessionStandIn();
  const dialogs: DialogScript = { openAnswers: [], saveAnswers: [], asked: [], errors: [], messages: [] };
  const privileged: Electron.CustomScheme[] = [];
  const protocols = new Map<string, (request: Request) => Response | Promise<Response>>();
  const handlers = new Map<string, InvokeHandler>();
  const exposed = new Map<string, unknown>();
  const filePaths = new WeakMap<File, string>();
  let applicationMenu: MenuStandIn | null = null;

  const protocol = {
    registerSchemesAsPrivileged(customSchemes: Electron.CustomScheme[]): void {
      if (app.isReady()) throw new Error("protocol.registerSchemesAsPrivileged should be called before app is ready");
      for (const scheme of customSchemes) privileged.push(scheme);
    },
    handle(scheme: string, handler: (request: Request) => Response | Promise<Response>): void {
      if (!app.isReady()) throw notReady("protocol.handle");
      if (protocols.has(scheme)) throw new Error(`Failed to register protocol: ${scheme}`);
      protocols.set(scheme, handler);
    },
  } satisfies Pick<Electron.Protocol, "registerSchemesAsPrivileged" | "handle">;

  const ipcMain = {
    handle(channel: string, listener: InvokeHandler): void {
      if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
      handlers.set(channel, listener);
    },
  } satisfies Pick<Electron.IpcMain, "handle">;

  async function invoke(
    contents: WebContentsStandIn,
    channel: string,
    args: readonly unknown[],
    frameUrl: string | null = contents.url,
  ): Promise<unknown> {
    const handler = handlers.get(channel);
    if (handler === undefined)
      throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
    const event = {
      ...electronEvent(),
      processId: 1,
      frameId: 1,
      sender: contents,
      senderFrame: frameUrl === null ? null : { url: frameUrl },
    } as unknown as Electron.IpcMainInvokeEvent;
    try {
      return structuredClone(
        await (handler as (e: unknown, ...a: unknown[]) => unknown)(event, ...structuredClone(args)),
      );
    } catch (error) {
      throw new Error(`Error invoking remote method '${channel}': ${String(error)}`, { cause: error });
    }
  }

  const dialog = {
    showOpenDialog(
      a: Electron.BaseWindow | Electron.OpenDialogOptions,
      b?: Electron.OpenDialogOptions,
    ): Promise<Electron.OpenDialogReturnValue> {
      dialogs.asked.push(b ?? (a as Electron.OpenDialogOptions));
      return Promise.resolve(dialogs.openAnswers.shift() ?? { canceled: true, filePaths: [] });
    },
    showSaveDialog(
      a: Electron.BaseWindow | Electron.SaveDialogOptions,
      b?: Electron.SaveDialogOptions,
    ): Promise<Electron.SaveDialogReturnValue> {
      dialogs.asked.push(b ?? (a as Electron.SaveDialogOptions));
      return Promise.resolve(dialogs.saveAnswers.shift() ?? { canceled: true, filePath: "" });
    },
    // Electron: "This API can be called safely before the ready event the app module emits".
    showErrorBox(title: string, content: string): void {
      dialogs.errors.push({ title, content });
    },
    showMessageBox(
      a: Electron.BaseWindow | Electron.MessageBoxOptions,
      b?: Electron.MessageBoxOptions,
    ): Promise<Electron.MessageBoxReturnValue> {
      dialogs.messages.push(b ?? (a as Electron.MessageBoxOptions));
      return Promise.resolve({ response: 0, checkboxChecked: false });
    },
    showMessageBoxSync(
      a: Electron.BaseWindow | Electron.MessageBoxSyncOptions,
      b?: Electron.MessageBoxSyncOptions,
    ): number {
      dialogs.messages.push(b ?? (a as Electron.MessageBoxSyncOptions));
      return 1;
    },
  } satisfies Pick<
    Electron.Dialog,
    "showOpenDialog" | "showSaveDialog" | "showErrorBox" | "showMessageBox" | "showMessageBoxSync"
  >;

  const Menu = {
    buildFromTemplate(template: (Electron.MenuItemConstructorOptions | Electron.MenuItem)[]): MenuStandIn {
      return new MenuStandIn(template as Electron.MenuItemConstructorOptions[]);
    },
    setApplicationMenu(menu: Electron.Menu | null): void {
      applicationMenu = menu as unknown as MenuStandIn | null;
    },
  } satisfies {
    [K in "buildFromTemplate" | "setApplicationMenu"]: (...args: Parameters<(typeof Electron.Menu)[K]>) => unknown;
  };

  const screen = {
    getAllDisplays(): Electron.Display[] {
      if (!app.isReady()) throw notReady("screen");
      return [display({ x: 0, y: 0, width: 1920, height: 1080 })];
    },
  } satisfies Pick<Electron.Screen, "getAllDisplays">;

  const sessionModule = {
    get defaultSession(): SessionStandIn {
      if (!app.isReady()) throw new Error("Session can only be received when app is ready");
      return session;
    },
  };

  const standIn: ElectronStandIn = {
    module: {},
    app,
    session,
    dialogs,
    privileged,
    protocols,
    handlers,
    applicationMenu: () => applicationMenu,
    windows: () => BrowserWindowStandIn.getAllWindows(),
    exposed,
    page: undefined,
    invoke,
    droppedFile(path, name) {
      const file = new File([], name);
      filePaths.set(file, path);
      return file;
    },
  };

  // The preload's side: the page of `standIn.page` (by default the first window's).
  const pageContents = (): WebContentsStandIn => {
    const contents = standIn.page ?? BrowserWindowStandIn.all[0]?.webContents;
    if (contents === undefined) throw new Error("stand-in: no page for the preload");
    return contents;
  };
  const ipcRenderer = {
    invoke(channel: string, ...args: unknown[]): Promise<unknown> {
      return invoke(pageContents(), channel, args);
    },
    on(channel: string, listener: (event: Electron.IpcRendererEvent, ...args: never[]) => void): void {
      const listeners = pageContents().pageListeners;
      listeners.set(channel, [
        ...(listeners.get(channel) ?? []),
        listener as (event: unknown, ...args: unknown[]) => void,
      ]);
    },
    removeListener(channel: string, listener: (...args: never[]) => void): void {
      const listeners = pageContents().pageListeners;
      listeners.set(
        channel,
        (listeners.get(channel) ?? []).filter((l) => l !== listener),
      );
    },
  } satisfies { [K in "invoke" | "on" | "removeListener"]: (...args: Parameters<Electron.IpcRenderer[K]>) => unknown };
  const contextBridge = {
    exposeInMainWorld(apiKey: string, api: unknown): void {
      exposed.set(apiKey, api);
    },
  } satisfies Pick<Electron.ContextBridge, "exposeInMainWorld">;
  const webUtils = {
    getPathForFile: (file: File): string => filePaths.get(file) ?? "",
  } satisfies Pick<Electron.WebUtils, "getPathForFile">;

  Object.assign(standIn.module, {
    app,
    BrowserWindow: BrowserWindowStandIn,
    dialog,
    Menu,
    protocol,
    screen,
    session: sessionModule,
    ipcMain,
    ipcRenderer,
    contextBridge,
    webUtils,
  });
  return standIn;
}
