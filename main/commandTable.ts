/**
 * The app's commands as plain data, the one source of their ids, labels, menu accelerators and window keys:
 * main/menu.ts builds the menus' items from it, and the renderer's commands
 * (renderer/src/commands/commands.ts, what each command does) take their ids, labels and keys from it. No
 * Electron and no React here: main and the renderer both import it (eslint.config.js lets the renderer import
 * this file and main/channels.ts of main/, docs/decisions/0175).
 */
import type { AppCommand, MenuSpeed } from "./channels.ts";

/**
 * A key the window reads for a command. `key` is KeyboardEvent.key; with `noShift` the key held with Shift
 * is not it (Shift+L, Shift+B belong to nothing); Alt, Ctrl and Meta never ask for a command (they are the
 * shell's).
 */
export interface WindowKey {
  readonly key: string;
  readonly noShift?: true;
  /** The key as a person reads it (aria-keyshortcuts, the button's title). */
  readonly shown: string;
  /** The key does nothing else (Space scrolls the page, → a scroller). */
  readonly preventDefault?: true;
}

/** A command: its id (the {@link AppCommand}'s `type` when a menu sends it), its label and its window keys. */
export interface CommandSpec {
  readonly id: string;
  readonly label: string;
  readonly keys?: readonly WindowKey[];
}

const letter = (l: string): readonly WindowKey[] => [
  { key: l.toLowerCase(), noShift: true, shown: l },
  { key: l, noShift: true, shown: l },
];

/** Every command, by id. */
export const COMMAND_SPECS = {
  toggle: { id: "toggle", label: "Play/Pause", keys: [{ key: " ", shown: "Space", preventDefault: true }] },
  step: { id: "step", label: "Step", keys: [{ key: "ArrowRight", shown: "ArrowRight", preventDefault: true }] },
  level: { id: "level", label: "Step to the next event, attempt or decision", keys: letter("L") },
  breakpoint: { id: "breakpoint", label: "Break at events like this one", keys: letter("B") },
  restart: { id: "restart", label: "Restart" },
  speed: { id: "speed", label: "Speed" },
  view: { id: "view", label: "Show a view" },
  scenario: { id: "scenario", label: "New, Save or Save As a scenario" },
  open: { id: "open", label: "Open a file" },
  export: { id: "export", label: "Export the run" },
  close: { id: "close", label: "Close the window" },
} as const satisfies Record<string, CommandSpec>;

export type CommandId = keyof typeof COMMAND_SPECS;

/**
 * A menu item that sends the window a command: its label, its accelerator and the command (its `type` is
 * the id of the renderer's command that performs it). `windowKey`: the accelerator is the window's own key,
 * shown in the menu without being taken (main/menu.ts), written as `shown` in the label on macOS.
 */
export interface MenuCommandItem {
  readonly label: string;
  readonly accelerator?: string;
  readonly command: Exclude<AppCommand, { type: "open" } | { type: "recent" }>;
  readonly windowKey?: { readonly shown: string };
}

/** File ▸ New Scenario, Save, Save As…: the editor's own, with the editor's keys (Ctrl+S, Ctrl+Shift+S). */
export const SCENARIO_ITEMS = {
  new: { label: "New Scenario", accelerator: "CmdOrCtrl+N", command: { type: "scenario", what: "new" } },
  save: { label: "Save", accelerator: "CmdOrCtrl+S", command: { type: "scenario", what: "save" } },
  saveAs: { label: "Save As…", accelerator: "CmdOrCtrl+Shift+S", command: { type: "scenario", what: "save-as" } },
} as const satisfies Record<string, MenuCommandItem>;

/** File ▸ Export ▸ …: the run's exports. */
export const EXPORT_ITEMS: readonly MenuCommandItem[] = [
  { label: "Trace (JSON)…", accelerator: "CmdOrCtrl+E", command: { type: "export", what: "trace" } },
  { label: "HTTP Archive (HAR)…", command: { type: "export", what: "har" } },
  { label: "Report (Markdown)…", command: { type: "export", what: "report" } },
  { label: "Bug Bundle…", command: { type: "export", what: "bundle" } },
];

/** Run ▸ Play/Pause, Step (the window's keys, Space and →), Restart. */
export const RUN_ITEMS: readonly MenuCommandItem[] = [
  {
    label: COMMAND_SPECS.toggle.label,
    accelerator: "Space",
    command: { type: "toggle" },
    windowKey: { shown: "Space" },
  },
  { label: COMMAND_SPECS.step.label, accelerator: "Right", command: { type: "step" }, windowKey: { shown: "→" } },
  { label: COMMAND_SPECS.restart.label, accelerator: "CmdOrCtrl+R", command: { type: "restart" } },
];

/** Run ▸ Speed ▸ …. */
export const SPEED_ITEMS: readonly (MenuCommandItem & { readonly speed: MenuSpeed })[] = (
  [
    [1, "1× (real time)", "CmdOrCtrl+1"],
    [60, "60× (a minute a second)", "CmdOrCtrl+2"],
    [3600, "3600× (an hour a second)", "CmdOrCtrl+3"],
    ["max", "As fast as possible", "CmdOrCtrl+4"],
  ] as const
).map(([speed, label, accelerator]) => ({ speed, label, accelerator, command: { type: "speed", speed } }));

/** View ▸ Scenario (the library and the run; L: the library, Ctrl+Shift+S being the editor's Save As), Rules. */
export const VIEW_ITEMS = {
  run: { label: "Scenario", accelerator: "CmdOrCtrl+Shift+L", command: { type: "view", view: "run" } },
  rules: { label: "Rules", accelerator: "CmdOrCtrl+Shift+R", command: { type: "view", view: "rules" } },
} as const satisfies Record<string, MenuCommandItem>;

/** Every menu item that sends the window a command. */
export const MENU_COMMAND_ITEMS: readonly MenuCommandItem[] = [
  ...Object.values(SCENARIO_ITEMS),
  ...EXPORT_ITEMS,
  ...RUN_ITEMS,
  ...SPEED_ITEMS,
  ...Object.values(VIEW_ITEMS),
];
