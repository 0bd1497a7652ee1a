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
import type { AppCommand, FileKind, RecentFile } from "./channels.ts";
import {
  EXPORT_ITEMS,
  RUN_ITEMS,
  SCENARIO_ITEMS,
  SPEED_ITEMS,
  VIEW_ITEMS,
  type MenuCommandItem,
} from "./commandTable.ts";

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

/** A menu item that sends the window its command. */
const sends = (actions: MenuActions, item: MenuCommandItem): MenuItemConstructorOptions => ({
  label: item.label,
  ...(item.accelerator !== undefined && { accelerator: item.accelerator }),
  click: () => actions.send(item.command),
});

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
      sends(actions, SCENARIO_ITEMS.new),
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
      sends(actions, SCENARIO_ITEMS.save),
      sends(actions, SCENARIO_ITEMS.saveAs),
      { type: "separator" },
      {
        label: "Export",
        submenu: EXPORT_ITEMS.map((item) => sends(actions, item)),
      },
      { type: "separator" },
      { label: "Close", accelerator: "CmdOrCtrl+W", role: "close" },
      ...(mac ? [] : [{ role: "quit" } as MenuItemConstructorOptions]),
    ],
  };
  /** An item whose key the window handles itself, shown in the menu (see above). */
  const runItem = (item: MenuCommandItem): MenuItemConstructorOptions => {
    const { windowKey } = item;
    if (windowKey === undefined) return sends(actions, item);
    const click = () => actions.send(item.command);
    return mac
      ? { label: `${item.label} (${windowKey.shown})`, click }
      : { label: item.label, accelerator: item.accelerator, registerAccelerator: false, click };
  };
  const run: MenuItemConstructorOptions = {
    label: "&Run",
    submenu: [...RUN_ITEMS.map(runItem), { label: "Speed", submenu: SPEED_ITEMS.map((item) => sends(actions, item)) }],
  };
  const view: MenuItemConstructorOptions = {
    label: "&View",
    submenu: [
      sends(actions, VIEW_ITEMS.run),
      sends(actions, VIEW_ITEMS.rules),
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
      { label: VIEW_ITEMS.rules.label, click: () => actions.send(VIEW_ITEMS.rules.command) },
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
