/**
 * The application menu, as data: File, Run, View, Help, with their
 * shortcuts. Items that act in the window (Run, Export, the scenario editor's
 * New, Save and Save As) send it an {@link AppCommand}; main does not know
 * what the window holds. Built from what the menu may do ({@link MenuActions}), so that
 * tests read it without Electron.
 *
 * Space and → are the window's own keys (it leaves them to a field being typed
 * in): the menu shows them without taking them. On Linux and Windows an
 * accelerator that is not registered does that; macOS has no such thing (every
 * accelerator is a shortcut, even in a text field), so there the key is written
 * in the item's label instead.
 */
import type { MenuItemConstructorOptions } from "electron";
import type { AppCommand, FileKind, MenuSpeed, RecentFile } from "./channels.ts";

export interface MenuActions {
  /** Sends a command to the window. */
  send(command: AppCommand): void;
  /** Shows the open dialog for a kind of file and opens what is chosen. */
  openDialog(kind: FileKind): void;
  openRecent(file: RecentFile): void;
  clearRecent(): void;
  showReadings(): void;
  showAbout(): void;
}

export const SPEED_ITEMS: readonly {
  readonly speed: MenuSpeed;
  readonly label: string;
  readonly accelerator: string;
}[] = [
  { speed: 1, label: "1× (real time)", accelerator: "CmdOrCtrl+1" },
  { speed: 60, label: "60× (a minute a second)", accelerator: "CmdOrCtrl+2" },
  { speed: 3600, label: "3600× (an hour a second)", accelerator: "CmdOrCtrl+3" },
  { speed: "max", label: "As fast as possible", accelerator: "CmdOrCtrl+4" },
];

/** The menu's template for a platform (`darwin` gets the app menu first). */
export function menuTemplate(
  actions: MenuActions,
  recent: readonly RecentFile[],
  platform: NodeJS.Platform,
): MenuItemConstructorOptions[] {
  const mac = platform === "darwin";
  const file: MenuItemConstructorOptions = {
    label: "&File",
    submenu: [
      {
        label: "New Scenario",
        accelerator: "CmdOrCtrl+N",
        click: () => actions.send({ type: "scenario", what: "new" }),
      },
      { label: "Open Scenario…", accelerator: "CmdOrCtrl+O", click: () => actions.openDialog("scenario") },
      { label: "Open Trace…", accelerator: "CmdOrCtrl+Shift+O", click: () => actions.openDialog("trace") },
      {
        label: "Open Recent",
        submenu:
          recent.length === 0
            ? [{ label: "No recent files", enabled: false }]
            : [
                ...recent.map((r): MenuItemConstructorOptions => ({
                  label: `${r.name}${r.kind === "trace" ? " (trace)" : ""}`,
                  toolTip: r.path,
                  click: () => actions.openRecent(r),
                })),
                { type: "separator" },
                { label: "Clear Recent", click: () => actions.clearRecent() },
              ],
      },
      { type: "separator" },
      // The scenario in the editor, with the editor's own keys (Ctrl+S, Ctrl+Shift+S).
      { label: "Save", accelerator: "CmdOrCtrl+S", click: () => actions.send({ type: "scenario", what: "save" }) },
      {
        label: "Save As…",
        accelerator: "CmdOrCtrl+Shift+S",
        click: () => actions.send({ type: "scenario", what: "save-as" }),
      },
      { type: "separator" },
      {
        label: "Export",
        submenu: [
          {
            label: "Trace (JSON)…",
            accelerator: "CmdOrCtrl+E",
            click: () => actions.send({ type: "export", what: "trace" }),
          },
          { label: "HTTP Archive (HAR)…", click: () => actions.send({ type: "export", what: "har" }) },
          { label: "Report (Markdown)…", click: () => actions.send({ type: "export", what: "report" }) },
          { label: "Bug Bundle…", click: () => actions.send({ type: "export", what: "bundle" }) },
        ],
      },
      { type: "separator" },
      { label: "Close", accelerator: "CmdOrCtrl+W", role: "close" },
      ...(mac ? [] : [{ role: "quit" } as MenuItemConstructorOptions]),
    ],
  };
  /** A key the window handles itself, shown in the menu (see above). */
  const windowKey = (label: string, accelerator: string, shown: string): MenuItemConstructorOptions =>
    mac ? { label: `${label} (${shown})` } : { label, accelerator, registerAccelerator: false };
  const run: MenuItemConstructorOptions = {
    label: "&Run",
    submenu: [
      { ...windowKey("Play/Pause", "Space", "Space"), click: () => actions.send({ type: "toggle" }) },
      { ...windowKey("Step", "Right", "→"), click: () => actions.send({ type: "step" }) },
      { label: "Restart", accelerator: "CmdOrCtrl+R", click: () => actions.send({ type: "restart" }) },
      {
        label: "Speed",
        submenu: SPEED_ITEMS.map((s): MenuItemConstructorOptions => ({
          label: s.label,
          accelerator: s.accelerator,
          click: () => actions.send({ type: "speed", speed: s.speed }),
        })),
      },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: "&View",
    submenu: [
      // The library and the run (L: the library), Ctrl+Shift+S being the editor's Save As.
      { label: "Scenario", accelerator: "CmdOrCtrl+Shift+L", click: () => actions.send({ type: "view", view: "run" }) },
      { label: "Rules", accelerator: "CmdOrCtrl+Shift+R", click: () => actions.send({ type: "view", view: "rules" }) },
      { type: "separator" },
      { role: "resetZoom" },
      { role: "zoomIn" },
      { role: "zoomOut" },
      { type: "separator" },
      { role: "togglefullscreen" },
      { role: "toggleDevTools" },
    ],
  };
  const help: MenuItemConstructorOptions = {
    label: "&Help",
    role: "help",
    submenu: [
      { label: "Rules", click: () => actions.send({ type: "view", view: "rules" }) },
      { label: "Spec Readings", click: () => actions.showReadings() },
      ...(mac
        ? []
        : [
            { type: "separator" } as MenuItemConstructorOptions,
            { label: "About Mailscope", click: () => actions.showAbout() },
          ]),
    ],
  };
  const appMenu: MenuItemConstructorOptions = {
    label: "Mailscope",
    submenu: [
      { label: "About Mailscope", click: () => actions.showAbout() },
      { type: "separator" },
      { role: "hide" },
      { role: "hideOthers" },
      { role: "unhide" },
      { type: "separator" },
      { role: "quit" },
    ],
  };
  const edit: MenuItemConstructorOptions = { role: "editMenu" };
  return mac ? [appMenu, file, edit, run, view, help] : [file, edit, run, view, help];
}
