import type { Session, WebContents } from "electron";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { OpenedFile, RecentFile } from "./channels.ts";
import { electronEvent, SessionStandIn, WebContentsStandIn } from "./electronStandIn.ts";

// Electron's binary is absent here: main's modules are tested against a stand-in for the `electron` module.
const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
vi.mock("electron", () => ({
  ipcMain: {
    handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => unknown) => handlers.set(channel, fn),
  },
}));

const { channelNames, isAppCommand, methodName } = await import("./channels.ts");
const { channelValidators } = await import("./validators.ts");
const { handle } = await import("./ipc.ts");
const { APP_INDEX, contentType, resolveAppPath, serveAppRequest } = await import("./scheme.ts");
const {
  addRecent,
  filesFromArgv,
  kindOfPath,
  loadRecent,
  readOpenedFile,
  recentOf,
  saveRecent,
  MAX_FILE_BYTES,
  MAX_RECENT,
} = await import("./files.ts");
const { FileInbox, openDropped, openRecent, openWithDialog, saveWithDialog } = await import("./handlers.ts");
const { menuTemplate } = await import("./menu.ts");
const { MENU_COMMAND_ITEMS } = await import("./commandTable.ts");
const { restoreBounds } = await import("./windowState.ts");
const { readingsText } = await import("./readings.ts");
const { CONTENT_SECURITY_POLICY, grantsPermission, isOwnPage, lockDownContents, lockDownSession } =
  await import("./security.ts");

type Item = {
  label?: string;
  role?: string;
  type?: string;
  accelerator?: string;
  submenu?: Item[];
  click?: () => void;
  registerAccelerator?: boolean;
};

function find(items: readonly Item[], ...path: string[]): Item {
  let level: readonly Item[] = items;
  let found: Item | undefined;
  for (const label of path) {
    found = level.find((i) => i.label?.replace("&", "") === label);
    if (found === undefined) throw new Error(`no menu item ${path.join(" ▸ ")}`);
    level = found.submenu ?? [];
  }
  return found as Item;
}

describe("the channel map", () => {
  it("has a validator per channel and a preload method name per channel", () => {
    expect(Object.keys(channelValidators).sort()).toEqual([...channelNames].sort());
    expect(channelNames.map(methodName)).toEqual([
      "appInfo",
      "scenariosList",
      "fileSave",
      "fileSaveBytes",
      "fileOpen",
      "filesPending",
      "recentList",
      "recentOpen",
      "fileDropped",
      "scenarioSave",
      "scenarioSaveAs",
    ]);
    expect(channelValidators["file:dropped"].safeParse(["/home/a/s.yaml"]).success).toBe(true);
    expect(channelValidators["file:dropped"].safeParse(["/home/a/run.mstrace"]).success).toBe(true);
    expect(channelValidators["file:dropped"].safeParse(["/home/a/run.msbundle"]).success).toBe(true);
    expect(channelValidators["file:dropped"].safeParse(["/home/a/old.mailscope-trace.json"]).success).toBe(true);
    expect(channelValidators["file:dropped"].safeParse(["/home/a/.ssh/id_rsa"]).success).toBe(false);
    expect(channelValidators["file:open"].safeParse(["scenario"]).success).toBe(true);
    expect(channelValidators["file:open"].safeParse(["/etc/passwd"]).success).toBe(false);
    expect(channelValidators["file:save"].safeParse(["../x.json", "{}"]).success).toBe(false);
    // PNG images of the views are saved as bytes; a name, never a path, and bytes, not text.
    expect(channelValidators["file:save-bytes"].safeParse(["timeline.png", new Uint8Array([137, 80])]).success).toBe(
      true,
    );
    expect(channelValidators["file:save-bytes"].safeParse(["../x.png", new Uint8Array([1])]).success).toBe(false);
    expect(channelValidators["file:save-bytes"].safeParse(["x.png", "text"]).success).toBe(false);
  });

  it("the renderer recognises the menus' commands and nothing else", () => {
    expect(isAppCommand({ type: "toggle" })).toBe(true);
    expect(isAppCommand({ type: "speed", speed: "max" })).toBe(true);
    expect(isAppCommand({ type: "speed", speed: 7 })).toBe(false);
    expect(isAppCommand({ type: "open", file: { kind: "trace", name: "a", path: "/a", text: "{}" } })).toBe(true);
    expect(isAppCommand({ type: "open", file: { kind: "exe", name: "a", path: "/a", text: "" } })).toBe(false);
    expect(isAppCommand({ type: "export", what: "bundle" })).toBe(true);
    expect(isAppCommand({ type: "export", what: "zip" })).toBe(false);
    expect(isAppCommand({ type: "scenario", what: "save-as" })).toBe(true);
    expect(isAppCommand({ type: "scenario", what: "delete" })).toBe(false);
    expect(isAppCommand({ type: "eval" })).toBe(false);
    expect(isAppCommand(null)).toBe(false);
    expect(isAppCommand({ type: "recent", files: [{ kind: "scenario", name: "a.yaml", path: "/a.yaml" }] })).toBe(true);
    expect(isAppCommand({ type: "recent", files: [{ kind: "scenario", name: "a.yaml" }] })).toBe(false);
  });
});

describe("ipc handle", () => {
  beforeEach(() => handlers.clear());
  const event = (url: string) => ({ senderFrame: { url } });
  const trusted = (url: string) => url.startsWith("app://mailscope/");

  it("validates arguments before the handler runs, and refuses other frames", async () => {
    const seen: unknown[] = [];
    handle("file:open", trusted, (_e, kind) => {
      seen.push(kind);
      return { opened: false };
    });
    const fn = handlers.get("file:open")!;
    await expect(fn(event(APP_INDEX), "trace")).resolves.toEqual({ opened: false });
    await expect(fn(event(APP_INDEX), "binary")).rejects.toThrow(/invalid arguments/);
    await expect(fn(event("https://evil.example/"), "trace")).rejects.toThrow(/untrusted frame/);
    expect(seen).toEqual(["trace"]);
  });
});

describe("the app:// scheme", () => {
  const root = "/opt/mailscope/dist/renderer";
  it("maps app://mailscope/ paths onto dist/renderer and nothing outside it", () => {
    expect(resolveAppPath("app://mailscope/", root)).toBe(`${root}/index.html`);
    expect(resolveAppPath("app://mailscope/index.html", root)).toBe(`${root}/index.html`);
    expect(resolveAppPath("app://mailscope/assets/worker-x.js?x=1", root)).toBe(`${root}/assets/worker-x.js`);
    expect(resolveAppPath("app://mailscope/../../etc/passwd", root)).toBe(`${root}/etc/passwd`);
    // The URL parser resolves `..` and `%2e%2e` within the URL: what is left stays under the root.
    expect(resolveAppPath("app://mailscope/%2e%2e/%2e%2e/etc/passwd", root)).toBe(`${root}/etc/passwd`);
    expect(resolveAppPath("app://mailscope/a/..%2f..%2f..%2fetc/passwd", root)).toBeUndefined();
    expect(resolveAppPath("app://mailscope/a%00.js", root)).toBeUndefined();
    expect(resolveAppPath("app://other/index.html", root)).toBeUndefined();
    expect(resolveAppPath("file:///etc/passwd", root)).toBeUndefined();
    expect(contentType("a/worker.js")).toBe("text/javascript; charset=utf-8");
    expect(contentType("index.html")).toBe("text/html; charset=utf-8");
  });

  it("serves the files with their type and the page's policy, 404 otherwise", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-scheme-"));
    await writeFile(join(dir, "index.html"), "<!doctype html><title>Mailscope</title>");
    const ok = await serveAppRequest("app://mailscope/", dir, "default-src 'self'");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(ok.headers.get("content-security-policy")).toBe("default-src 'self'");
    expect(await ok.text()).toContain("<title>Mailscope</title>");
    expect((await serveAppRequest("app://mailscope/missing.js", dir, "")).status).toBe(404);
    expect((await serveAppRequest("app://elsewhere/index.html", dir, "")).status).toBe(404);
  });
});

describe("files", () => {
  it("traces and bundles have extensions of their own; old .json traces and bundles open too", () => {
    expect(kindOfPath("a/b.yaml")).toBe("scenario");
    expect(kindOfPath("a/b.YML")).toBe("scenario");
    expect(kindOfPath("run.mstrace")).toBe("trace");
    // A bundle opens as its trace (the renderer tells it by its format member).
    expect(kindOfPath("run.msbundle")).toBe("trace");
    expect(kindOfPath("run.mailscope-trace.json")).toBe("trace");
    expect(kindOfPath("C:\\runs\\old.mailscope-bundle.json")).toBe("trace");
    expect(kindOfPath("notes.txt")).toBeUndefined();
    expect(kindOfPath("run.mstrace.txt")).toBeUndefined();
    expect(kindOfPath("yaml")).toBeUndefined();
  });

  it("files from a command line are absolute, relative ones taken from its working directory, file URIs decoded", () => {
    const cwd = "/home/ann/runs";
    expect(
      filesFromArgv(
        ["/usr/bin/electron", ".", "--inspect", "s.yml", "../t.mailscope-trace.json", "/abs/r.mstrace", "x.txt"],
        cwd,
      ),
    ).toEqual(["/home/ann/runs/s.yml", "/home/ann/t.mailscope-trace.json", "/abs/r.mstrace"]);
    // A GNOME desktop entry's %U hands URIs: spaces and non-ASCII letters are percent-encoded.
    const uri = pathToFileURL("/home/ann/My Runs/día 1.msbundle").href;
    expect(uri).toBe("file:///home/ann/My%20Runs/d%C3%ADa%201.msbundle");
    expect(filesFromArgv(["/opt/Mailscope/mailscope", uri], cwd)).toEqual(["/home/ann/My Runs/día 1.msbundle"]);
    // Another host's file, another scheme, a flag: nothing opened.
    expect(
      filesFromArgv(["mailscope", "file://server/share/a.yaml", "https://example.org/a.yaml", "--x=a.yaml"], cwd),
    ).toEqual([]);
  });

  it("an endless file (/dev/zero) is refused at its kind's limit, not read to the end", async () => {
    await expect(readOpenedFile("/dev/zero", "scenario")).rejects.toThrow(
      "zero is larger than the app opens (33554432 bytes, the limit for scenarios)",
    );
    expect(MAX_FILE_BYTES).toBe(256 * 1024 * 1024);
  });

  it("keeps recent files, newest first, once each, at most ten, between launches", async () => {
    let recent: { kind: "scenario" | "trace"; name: string; path: string }[] = [];
    for (let i = 0; i < 12; i++)
      recent = addRecent(recent, { kind: "scenario", name: `s${i}.yaml`, path: `/s${i}.yaml` });
    recent = addRecent(recent, { kind: "scenario", name: "s5.yaml", path: "/s5.yaml" });
    expect(recent).toHaveLength(MAX_RECENT);
    expect(recent[0]?.path).toBe("/s5.yaml");
    expect(recent.filter((r) => r.path === "/s5.yaml")).toHaveLength(1);
    const dir = await mkdtemp(join(tmpdir(), "mailscope-recent-"));
    saveRecent(join(dir, "recent.json"), recent);
    expect(await loadRecent(join(dir, "recent.json"))).toEqual(recent);
    await writeFile(join(dir, "bad.json"), "{nope");
    expect(await loadRecent(join(dir, "bad.json"))).toEqual([]);
    expect(await loadRecent(join(dir, "missing.json"))).toEqual([]);
  });
});

describe("one recent list (File ▸ Open Recent and the library's Opened), kept between launches", () => {
  it("a file read is listed with its scenario's name and description; a trace by its file name", () => {
    expect(
      recentOf({ kind: "scenario", name: "a.yaml", path: "/x/a.yaml", text: "name: alpha\ndescription: first\n" }),
    ).toEqual({ kind: "scenario", name: "a.yaml", path: "/x/a.yaml", title: "alpha", description: "first" });
    expect(recentOf({ kind: "trace", name: "t.json", path: "/x/t.json", text: "{}" })).toMatchObject({
      kind: "trace",
      title: "t.json",
    });
  });

  it("a listed file opens again and moves to the top; a path not on the list is refused", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-recent-open-"));
    const a = join(dir, "a.yaml");
    const b = join(dir, "b.mailscope-trace.json");
    await writeFile(a, "name: alpha\n");
    await writeFile(b, "{}");
    let recent: RecentFile[] = [];
    const remember = (f: OpenedFile) => void (recent = addRecent(recent, recentOf(f)));
    await openDropped(a, remember);
    await openDropped(b, remember);
    expect(recent.map((r) => r.path)).toEqual([b, a]);
    // Saved and read back, as at the next launch; the menu lists the same files.
    saveRecent(join(dir, "recent.json"), recent);
    recent = await loadRecent(join(dir, "recent.json"));
    const menu = menuTemplate(
      {
        send: () => undefined,
        openDialog: () => undefined,
        openRecent: () => undefined,
        clearRecent: () => undefined,
        showReadings: () => undefined,
        showAbout: () => undefined,
      },
      recent,
      "linux",
    ) as Item[];
    expect(find(menu, "File", "Open Recent").submenu?.map((i) => i.label)).toEqual([
      "b.mailscope-trace.json (trace)",
      "a.yaml",
      undefined,
      "Clear Recent",
    ]);
    expect(await openRecent(recent, a, remember)).toEqual({
      kind: "scenario",
      name: "a.yaml",
      path: a,
      text: "name: alpha\n",
    });
    expect(recent.map((r) => r.path)).toEqual([a, b]);
    await expect(openRecent(recent, "/etc/passwd", remember)).rejects.toThrow(/not on the recent list/);
    await expect(openDropped("relative.yaml", remember)).rejects.toThrow(/not a scenario/);
    await expect(openDropped("/etc/passwd", remember)).rejects.toThrow(/not a scenario/);
  });
});

describe("dialogs", () => {
  it("open: reads the chosen file and remembers it; a cancel opens nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-open-"));
    const path = join(dir, "mine.yaml");
    await writeFile(path, "name: mine\n");
    const remembered: unknown[] = [];
    const options: unknown[] = [];
    const dialogs = {
      showOpenDialog: async (_w: unknown, o: unknown) => {
        options.push(o);
        return { canceled: false, filePaths: [path] };
      },
      showSaveDialog: async () => ({ canceled: true }),
    };
    const result = await openWithDialog(dialogs, undefined, "scenario", (f) => remembered.push(f));
    expect(result).toEqual({ opened: true, file: { kind: "scenario", name: "mine.yaml", path, text: "name: mine\n" } });
    expect(remembered).toEqual([{ kind: "scenario", name: "mine.yaml", path, text: "name: mine\n" }]);
    expect(options[0]).toMatchObject({ properties: ["openFile"], filters: [{ extensions: ["yaml", "yml"] }] });
    const cancel = { ...dialogs, showOpenDialog: async () => ({ canceled: true, filePaths: [] }) };
    expect(await openWithDialog(cancel, undefined, "trace", () => undefined)).toEqual({ opened: false });
  });

  it("save: writes the export where the user chose; a cancel writes nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-save-"));
    const target = join(dir, "run.har");
    const dialogs = {
      showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
      showSaveDialog: async (_w: unknown, o: { defaultPath?: string }) => {
        expect(o.defaultPath).toBe("run.har");
        return { canceled: false, filePath: target };
      },
    };
    expect(await saveWithDialog(dialogs, undefined, "run.har", "{}")).toEqual({ saved: true, path: target });
    expect(await readFile(target, "utf8")).toBe("{}");
    const cancel = { ...dialogs, showSaveDialog: async () => ({ canceled: true }) };
    expect(await saveWithDialog(cancel, undefined, "run.har", "{}")).toEqual({ saved: false });
  });

  it("files wait until the page asks for them, once; then they are sent; a page loading again asks again", () => {
    const sent: string[] = [];
    const inbox = new FileInbox((f) => sent.push(f.path));
    const file = (path: string): OpenedFile => ({ kind: "scenario", name: path, path, text: "" });
    inbox.deliver(file("/a.yaml"));
    expect(sent).toEqual([]);
    expect(inbox.take().map((f) => f.path)).toEqual(["/a.yaml"]);
    // Asked (and listening), the page has not finished loading: a file now is sent, not kept for a question never asked again.
    inbox.deliver(file("/b.yaml"));
    expect(sent).toEqual(["/b.yaml"]);
    expect(inbox.take()).toEqual([]);
    inbox.pause();
    inbox.deliver(file("/c.yaml"));
    expect(sent).toEqual(["/b.yaml"]);
    expect(inbox.take().map((f) => f.path)).toEqual(["/c.yaml"]);
  });
});

describe("the menu", () => {
  const sent: unknown[] = [];
  const calls: string[] = [];
  const actions = {
    send: (c: unknown) => sent.push(c),
    openDialog: (k: string) => calls.push(`open ${k}`),
    openRecent: (f: { path: string }) => calls.push(`recent ${f.path}`),
    clearRecent: () => calls.push("clear"),
    showReadings: () => calls.push("readings"),
    showAbout: () => calls.push("about"),
  };
  const recent = [{ kind: "trace" as const, name: "run.mailscope-trace.json", path: "/t/run.mailscope-trace.json" }];

  it("has File, Run, View and Help with their shortcuts", () => {
    const menu = menuTemplate(actions, recent, "linux") as Item[];
    expect(menu.map((m) => m.label ?? m.role)).toEqual(["&File", "editMenu", "&Run", "&View", "&Help"]);
    expect(find(menu, "File").submenu?.map((i) => i.label ?? i.role ?? i.type)).toEqual([
      "New Scenario",
      "Open Scenario…",
      "Open Trace…",
      "Open Recent",
      "separator",
      "Save",
      "Save As…",
      "separator",
      "Export",
      "separator",
      "Close",
      "quit",
    ]);
    expect(find(menu, "File", "New Scenario").accelerator).toBe("CmdOrCtrl+N");
    expect(find(menu, "File", "Save").accelerator).toBe("CmdOrCtrl+S");
    // The editor's own keys: Save As is Ctrl+Shift+S there, so the menu's is too (View ▸ Scenario moved off it).
    expect(find(menu, "File", "Save As…").accelerator).toBe("CmdOrCtrl+Shift+S");
    expect(find(menu, "View", "Scenario").accelerator).toBe("CmdOrCtrl+Shift+L");
    expect(find(menu, "File", "Open Scenario…").accelerator).toBe("CmdOrCtrl+O");
    expect(find(menu, "File", "Close").accelerator).toBe("CmdOrCtrl+W");
    expect(find(menu, "Run", "Play/Pause")).toMatchObject({ accelerator: "Space", registerAccelerator: false });
    expect(find(menu, "Run", "Step")).toMatchObject({ accelerator: "Right", registerAccelerator: false });
    expect(find(menuTemplate(actions, recent, "win32") as Item[], "Run", "Step")).toMatchObject({
      accelerator: "Right",
      registerAccelerator: false,
    });
    expect(find(menu, "Run", "Restart").accelerator).toBe("CmdOrCtrl+R");
    expect(find(menu, "Run", "Speed").submenu?.map((s) => s.label)).toEqual([
      "1× (real time)",
      "60× (a minute a second)",
      "3600× (an hour a second)",
      "As fast as possible",
    ]);
    expect(find(menu, "File", "Export").submenu?.map((s) => s.label)).toEqual([
      "Trace (JSON)…",
      "HTTP Archive (HAR)…",
      "Report (Markdown)…",
      "Bug Bundle…",
    ]);
    expect(
      find(menu, "Help")
        .submenu?.map((s) => s.label)
        .filter(Boolean),
    ).toEqual(["Rules", "Spec Readings", "About Mailscope"]);
  });

  it("its items that send the window a command are the command table's, with its labels and accelerators", () => {
    const got: unknown[] = [];
    const quiet = { openDialog: () => {}, openRecent: () => {}, clearRecent: () => {}, showReadings: () => {} };
    const own = { ...quiet, showAbout: () => {}, send: (c: unknown) => got.push(c) };
    const menu = menuTemplate(own, recent, "linux") as Item[];
    const sending: { label?: string; accelerator?: string; command: unknown }[] = [];
    const walk = (items: readonly Item[]) => {
      for (const item of items) {
        if (item.submenu) walk(item.submenu);
        if (!item.click) continue;
        item.click();
        if (got.length > 0) sending.push({ label: item.label, accelerator: item.accelerator, command: got.pop() });
      }
    };
    walk(menu);
    // Help ▸ Rules is View ▸ Rules again, without its accelerator.
    const viaMenu = sending.filter((s) => !(s.label === "Rules" && s.accelerator === undefined));
    expect(viaMenu).toEqual(
      MENU_COMMAND_ITEMS.map((i) => ({ label: i.label, accelerator: i.accelerator, command: i.command })),
    );
  });

  it("its items send the window's commands, open dialogs and recent files", () => {
    const menu = menuTemplate(actions, recent, "linux") as Item[];
    find(menu, "Run", "Play/Pause").click?.();
    find(menu, "Run", "Step").click?.();
    find(menu, "Run", "Restart").click?.();
    find(menu, "Run", "Speed", "As fast as possible").click?.();
    find(menu, "File", "Export", "HTTP Archive (HAR)…").click?.();
    find(menu, "File", "Export", "Bug Bundle…").click?.();
    find(menu, "Help", "Rules").click?.();
    find(menu, "File", "New Scenario").click?.();
    find(menu, "File", "Save").click?.();
    find(menu, "File", "Save As…").click?.();
    expect(sent.every(isAppCommand)).toBe(true);
    expect(sent).toEqual([
      { type: "toggle" },
      { type: "step" },
      { type: "restart" },
      { type: "speed", speed: "max" },
      { type: "export", what: "har" },
      { type: "export", what: "bundle" },
      { type: "view", view: "rules" },
      { type: "scenario", what: "new" },
      { type: "scenario", what: "save" },
      { type: "scenario", what: "save-as" },
    ]);
    find(menu, "File", "Open Trace…").click?.();
    find(menu, "File", "Open Recent", "run.mailscope-trace.json (trace)").click?.();
    find(menu, "Help", "Spec Readings").click?.();
    expect(calls).toEqual(["open trace", "recent /t/run.mailscope-trace.json", "readings"]);
    expect(find(menuTemplate(actions, [], "linux") as Item[], "File", "Open Recent").submenu?.[0]?.label).toBe(
      "No recent files",
    );
    expect((menuTemplate(actions, [], "darwin") as Item[])[0]?.label).toBe("Mailscope");
  });

  it("no two items share a shortcut (one key, one action)", () => {
    for (const platform of ["linux", "darwin"] as const) {
      const accelerators: string[] = [];
      const walk = (items: readonly Item[]): void =>
        items.forEach((i) => {
          if (i.accelerator !== undefined) accelerators.push(i.accelerator);
          walk(i.submenu ?? []);
        });
      walk(menuTemplate(actions, recent, platform) as Item[]);
      expect(accelerators.length).toBeGreaterThan(10);
      expect(new Set(accelerators).size, accelerators.join(" ")).toBe(accelerators.length);
    }
  });

  it("on macOS Space and → are no menu shortcuts (they would be taken from text fields there): the label shows them", () => {
    const menu = menuTemplate(actions, recent, "darwin") as Item[];
    const play = find(menu, "Run", "Play/Pause (Space)");
    const step = find(menu, "Run", "Step (→)");
    expect(play.accelerator).toBeUndefined();
    expect(step.accelerator).toBeUndefined();
    sent.length = 0;
    play.click?.();
    step.click?.();
    expect(sent).toEqual([{ type: "toggle" }, { type: "step" }]);
    // Every other shortcut keeps a modifier, so none of them takes a key from a field being typed in.
    const bare: string[] = [];
    const walk = (items: readonly Item[]): void =>
      items.forEach((i) => {
        if (i.accelerator !== undefined && !/CmdOrCtrl|Cmd|Ctrl|Alt|Option|Super/.test(i.accelerator))
          bare.push(i.accelerator);
        walk(i.submenu ?? []);
      });
    walk(menu);
    expect(bare).toEqual([]);
  });

  it("Help ▸ Spec Readings lists the switchable gaps with their defaults", () => {
    expect(readingsText()).toMatch(/^G3 \(.+\): default tolerance-seconds=\d+/);
    expect(readingsText()).toContain("G16 (");
    expect(readingsText()).toContain("fallback-window=2h");
  });
});

describe("window bounds", () => {
  const screenArea = { x: 0, y: 0, width: 1920, height: 1080 };
  it("are restored when on a screen, dropped (centred) when not", () => {
    expect(
      restoreBounds({ bounds: { x: 100, y: 50, width: 1000, height: 700 }, maximized: false }, [screenArea]),
    ).toEqual({
      x: 100,
      y: 50,
      width: 1000,
      height: 700,
      maximized: false,
    });
    expect(restoreBounds({ bounds: { x: 4000, y: 50, width: 1000, height: 700 } }, [screenArea])).toEqual({
      width: 1000,
      height: 700,
      maximized: false,
    });
    expect(
      restoreBounds({ bounds: { x: 0, y: 0, width: 10, height: 10 }, maximized: true }, [screenArea]),
    ).toMatchObject({
      width: 640,
      height: 480,
      maximized: true,
    });
    expect(restoreBounds("garbage", [screenArea])).toEqual({ width: 1280, height: 820, maximized: false });
  });
});

describe("the window may do nothing beyond drawing the app", () => {
  const own = "app://mailscope/index.html";

  /** Electron's web contents and session (typed stand-ins, electronStandIn.ts), locked down as main does. */
  function contents(): WebContentsStandIn {
    const stand = new WebContentsStandIn();
    stand.url = own;
    lockDownContents(stand as unknown as WebContents);
    return stand;
  }
  const open = (c: WebContentsStandIn, url: string) =>
    c.windowOpenHandler?.({
      url,
      frameName: "",
      features: "",
      disposition: "new-window",
      referrer: { url: own, policy: "default" },
    });

  function session(): SessionStandIn {
    const stand = new SessionStandIn();
    lockDownSession(stand as unknown as Session);
    return stand;
  }

  /** `will-navigate` as Electron 45 fires it: a details object first, the deprecated positional url after. */
  const willNavigate = (c: WebContentsStandIn, url: string) => {
    const details = electronEvent({ url, isSameDocument: false, isMainFrame: true, frame: null });
    c.emit("will-navigate", details, url, false, true, 1, 1);
    return details.defaultPrevented;
  };

  it("will-navigate: stays on the app's pages (read from Electron 45's details object)", () => {
    const c = contents();
    expect(willNavigate(c, "https://evil.example/")).toBe(true);
    expect(willNavigate(c, own)).toBe(false);
    expect(willNavigate(c, "file:///etc/passwd")).toBe(true);
  });

  it("will-frame-navigate: no frame goes elsewhere either", () => {
    const c = contents();
    for (const [url, isMainFrame] of [
      ["https://evil.example/", false],
      ["https://evil.example/", true],
      ["data:text/html,<script>1</script>", false],
      ["app://mailscope.evil.example/", false],
    ] as const) {
      const event = electronEvent({ url, isMainFrame, isSameDocument: false, frame: null });
      c.emit("will-frame-navigate", event);
      expect(event.defaultPrevented, url).toBe(true);
    }
    const home = electronEvent({ url: own, isMainFrame: false, isSameDocument: false, frame: null });
    c.emit("will-frame-navigate", home);
    expect(home.defaultPrevented).toBe(false);
  });

  it("no redirects, no webviews, no new windows, no Bluetooth device", () => {
    const c = contents();
    const redirect = electronEvent({ url: own, isSameDocument: false, isMainFrame: true, frame: null });
    c.emit("will-redirect", redirect, own, false, true, 1, 1);
    expect(redirect.defaultPrevented).toBe(true);
    const webview = electronEvent();
    c.emit("will-attach-webview", webview, {}, { src: own });
    expect(webview.defaultPrevented).toBe(true);
    expect(open(c, "https://evil.example/")).toEqual({ action: "deny" });
    expect(open(c, own)).toEqual({ action: "deny" });
    const chosen: unknown[] = [];
    const bluetooth = electronEvent();
    c.emit("select-bluetooth-device", bluetooth, [{ deviceId: "d1", deviceName: "pen" }], (id) => chosen.push(id));
    expect(bluetooth.defaultPrevented).toBe(true);
    expect(chosen).toEqual([""]);
  });

  it("permission requests and checks are denied, bar writing text to the clipboard from the app", async () => {
    const s = session();
    type Permission = Parameters<NonNullable<SessionStandIn["permissionRequest"]>>[1];
    const asked = (permission: Permission, requestingUrl: string) => {
      const page = new WebContentsStandIn();
      page.url = requestingUrl;
      return new Promise<boolean>((resolve) =>
        s.permissionRequest?.(page as unknown as WebContents, permission, resolve, {
          isMainFrame: true,
          requestingUrl,
        }),
      );
    };
    for (const permission of [
      "media",
      "geolocation",
      "notifications",
      "openExternal",
      "fileSystem",
      "hid",
      "usb",
    ] as const)
      expect(await asked(permission, own), permission).toBe(false);
    expect(await asked("clipboard-sanitized-write", own)).toBe(true);
    expect(await asked("clipboard-sanitized-write", "https://evil.example/")).toBe(false);
    expect(await asked("clipboard-read", own)).toBe(false);
    const check = (permission: Permission, origin: string) =>
      s.permissionCheck?.(null, permission, origin, {
        isMainFrame: true,
        embeddingOrigin: origin,
        requestingUrl: origin,
      });
    expect(check("media", "app://mailscope")).toBe(false);
    expect(check("serial", "app://mailscope")).toBe(false);
    expect(check("clipboard-sanitized-write", "app://mailscope")).toBe(true);
    expect(check("clipboard-sanitized-write", "https://evil.example")).toBe(false);
    expect(grantsPermission("clipboard-sanitized-write", "app://mailscope.evil.example")).toBe(false);
  });

  it("device permissions are denied and device choosers choose nothing (HID, serial, USB)", () => {
    const s = session();
    const hidDevice = { collections: [], deviceId: "h1", name: "key", productId: 1, vendorId: 1 };
    const port = { portId: "p1", portName: "ttyS0" };
    const usbDevice = {
      configurations: [],
      deviceClass: 0,
      deviceId: "u1",
      deviceProtocol: 0,
      deviceSubclass: 0,
      deviceVersionMajor: 1,
      deviceVersionMinor: 0,
      deviceVersionSubminor: 0,
      productId: 1,
      usbVersionMajor: 2,
      usbVersionMinor: 0,
      usbVersionSubminor: 0,
      vendorId: 1,
    };
    expect(s.devicePermission?.({ deviceType: "hid", origin: "app://mailscope", device: hidDevice })).toBe(false);
    expect(s.devicePermission?.({ deviceType: "usb", origin: "app://mailscope", device: usbDevice })).toBe(false);
    expect(s.devicePermission?.({ deviceType: "serial", origin: "app://mailscope", device: port })).toBe(false);
    const answers: unknown[][] = [];
    const hid = electronEvent();
    s.emit("select-hid-device", hid, { deviceList: [hidDevice], frame: null }, (...a) => answers.push(["hid", ...a]));
    const serial = electronEvent();
    s.emit("select-serial-port", serial, [port], new WebContentsStandIn() as unknown as WebContents, (...a) =>
      answers.push(["serial", ...a]),
    );
    const usb = electronEvent();
    s.emit("select-usb-device", usb, { deviceList: [usbDevice], frame: null }, (...a) => answers.push(["usb", ...a]));
    expect([hid.defaultPrevented, serial.defaultPrevented, usb.defaultPrevented]).toEqual([true, true, true]);
    // Electron: no argument (HID, USB) or "" (serial) cancels the request.
    expect(answers).toEqual([["hid"], ["serial", ""], ["usb"]]);
  });

  it("own pages are app://mailscope/ only; the page's policy allows no remote or inline code", () => {
    expect(isOwnPage(own)).toBe(true);
    expect(isOwnPage("app://mailscope.evil.example/")).toBe(false);
    expect(isOwnPage("app://mailscope")).toBe(false);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:|\*/);
  });
});
