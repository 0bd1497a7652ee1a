/**
 * What the user can ask of the app, each once: an id, a label, the keys that ask for it and what it does
 * (as Excalidraw's `actions/`). The ids, labels and keys are main/commandTable.ts's, which the menus are
 * built from too; here is what each command does. The desktop app's menus (their commands arrive through
 * the platform bridge, {@link performMenuCommand}), the window's keys ({@link commandOfKey}) and the buttons
 * perform the same command; docs/decisions/0140-app-state.md, 0175.
 */
import type { AppCommand, MenuSpeed, OpenedFile } from "../../../main/channels.ts";
import { COMMAND_SPECS, type WindowKey } from "../../../main/commandTable.ts";
import type { PlaybackSpeed } from "../../../app/sim/sessionProtocol.ts";
import { eventOfSeq, nextLevel, toggleBreakpointLike } from "../model/playbar.ts";
import type { PlaybackContext, PlaybackEvent } from "../session/machine.ts";
import type { View } from "../session/workspace.ts";

type ExportWhat = Extract<AppCommand, { type: "export" }>["what"];
type ScenarioWhat = Extract<AppCommand, { type: "scenario" }>["what"];

/** What a command acts on: the player, and the window around it. */
export interface CommandContext {
  readonly playback: Pick<PlaybackContext, "source" | "stop" | "events" | "breakpoints" | "level" | "result">;
  readonly send: (event: PlaybackEvent) => void;
  readonly showView: (view: View) => void;
  /** File ▸ New Scenario, Save and Save As: the editor's own New, Save and Save as. */
  readonly scenario: (what: ScenarioWhat) => void;
  readonly open: (file: OpenedFile) => void;
  /** Exports the finished run (its events as shown). */
  readonly exportRun: (what: ExportWhat) => void;
  /** Says why a command did nothing. */
  readonly refuse: (message: string) => void;
  readonly close: () => void;
}

/** A key that asks for a command (main/commandTable.ts, where each command's keys are). */
export type KeyBinding = WindowKey;

export interface Command<A = void> {
  readonly id: string;
  readonly label: string;
  readonly keys?: readonly KeyBinding[];
  /** Whether it can be performed now; a key that asks for it otherwise does nothing. */
  readonly enabled?: (ctx: CommandContext) => boolean;
  readonly perform: (ctx: CommandContext, arg: A) => void;
}

/** The event the run stopped at (a step or a breakpoint), else its last event. */
function stoppedAt(playback: CommandContext["playback"]) {
  const { stop, events } = playback;
  const seq = stop?.kind === "step" || stop?.kind === "breakpoint" ? stop.seq : events.at(-1)?.seq;
  return seq === undefined ? undefined : eventOfSeq(events, seq);
}

/** Every command, by id. */
export const COMMANDS = {
  toggle: {
    ...COMMAND_SPECS.toggle,
    perform: (ctx) => ctx.send({ type: "TOGGLE" }),
  } satisfies Command,
  step: {
    ...COMMAND_SPECS.step,
    perform: (ctx) => ctx.send({ type: "STEP" }),
  } satisfies Command,
  level: {
    ...COMMAND_SPECS.level,
    perform: (ctx) => ctx.send({ type: "SET_LEVEL", level: nextLevel(ctx.playback.level) }),
  } satisfies Command,
  breakpoint: {
    ...COMMAND_SPECS.breakpoint,
    // A live run's: an opened trace is not played, so it stops nowhere.
    enabled: (ctx) => ctx.playback.source?.kind === "scenario",
    perform: (ctx) => {
      const event = stoppedAt(ctx.playback);
      if (event === undefined) return;
      ctx.send({ type: "SET_BREAKPOINTS", breakpoints: toggleBreakpointLike(ctx.playback.breakpoints, event) });
    },
  } satisfies Command,
  restart: {
    ...COMMAND_SPECS.restart,
    // The Restart button's seed field gives a seed; the menu's Restart keeps the run's.
    perform: (ctx, seed) => ctx.send({ type: "RESTART", ...(seed !== undefined && { seed }) }),
  } satisfies Command<number | string | undefined>,
  speed: {
    ...COMMAND_SPECS.speed,
    perform: (ctx, speed) => ctx.send({ type: "SET_SPEED", speed }),
  } satisfies Command<PlaybackSpeed | MenuSpeed>,
  view: {
    ...COMMAND_SPECS.view,
    perform: (ctx, view) => ctx.showView(view),
  } satisfies Command<View>,
  scenario: {
    ...COMMAND_SPECS.scenario,
    perform: (ctx, what) => ctx.scenario(what),
  } satisfies Command<ScenarioWhat>,
  open: {
    ...COMMAND_SPECS.open,
    perform: (ctx, file) => ctx.open(file),
  } satisfies Command<OpenedFile>,
  export: {
    ...COMMAND_SPECS.export,
    perform: (ctx, what) => {
      if (!ctx.playback.result) return ctx.refuse("Nothing to export yet: run a scenario to its end first.");
      ctx.exportRun(what);
    },
  } satisfies Command<ExportWhat>,
  close: {
    ...COMMAND_SPECS.close,
    perform: (ctx) => ctx.close(),
  } satisfies Command,
} as const satisfies { readonly [K in keyof typeof COMMAND_SPECS]: Command<never> };

export type CommandId = keyof typeof COMMANDS;

/** Performs what a menu asked for: the command of the same id, with the menu's argument. */
export function performMenuCommand(ctx: CommandContext, command: AppCommand): void {
  switch (command.type) {
    case "recent":
      // Not a command: the recent list's news (platform.recent.onChange listens to it).
      return;
    case "toggle":
    case "step":
    case "close":
      return COMMANDS[command.type].perform(ctx);
    case "restart":
      return COMMANDS.restart.perform(ctx, undefined);
    case "speed":
      return COMMANDS.speed.perform(ctx, command.speed);
    case "view":
      return COMMANDS.view.perform(ctx, command.view);
    case "scenario":
      return COMMANDS.scenario.perform(ctx, command.what);
    case "open":
      return COMMANDS.open.perform(ctx, command.file);
    case "export":
      return COMMANDS.export.perform(ctx, command.what);
  }
}

/** The parts of a KeyboardEvent a key's command is read from. */
export interface KeyPress {
  readonly key: string;
  readonly shiftKey: boolean;
  readonly altKey: boolean;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
}

/** The command a key asks for, and its binding; undefined for a key no command has (or held with Alt, Ctrl, Meta). */
export function commandOfKey(e: KeyPress): { readonly command: Command; readonly binding: KeyBinding } | undefined {
  if (e.altKey || e.ctrlKey || e.metaKey) return undefined;
  for (const command of Object.values(COMMANDS) as readonly Command<never>[]) {
    const binding = command.keys?.find((k) => k.key === e.key && !(k.noShift && e.shiftKey));
    if (binding) return { command: command as unknown as Command, binding };
  }
  return undefined;
}

/** The keys of a command as aria-keyshortcuts says them (`Space`, `L`). */
export function shortcutOf(command: Command<never>): string | undefined {
  const shown = [...new Set(command.keys?.map((k) => k.shown))];
  return shown.length > 0 ? shown.join(" ") : undefined;
}
