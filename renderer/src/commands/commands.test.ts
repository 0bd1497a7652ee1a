/**
 * The commands' table: what the menus, the keys and the buttons ask for, each once.
 */
import { describe, expect, it, vi } from "vitest";
import type { AppCommand } from "../../../main/channels.ts";
import { COMMAND_SPECS, MENU_COMMAND_ITEMS, RUN_ITEMS } from "../../../main/commandTable.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import {
  COMMANDS,
  commandOfKey,
  performMenuCommand,
  shortcutOf,
  type Command,
  type CommandContext,
} from "./commands.ts";

const ALL = Object.values(COMMANDS) as readonly Command<never>[];

function context(playback: Partial<CommandContext["playback"]> = {}) {
  return {
    playback: { events: [], breakpoints: [], level: "event", ...playback },
    send: vi.fn(),
    showView: vi.fn(),
    scenario: vi.fn(),
    open: vi.fn(),
    exportRun: vi.fn(),
    refuse: vi.fn(),
    close: vi.fn(),
  } satisfies CommandContext;
}

const press = (
  key: string,
  mods: Partial<{ shiftKey: boolean; altKey: boolean; ctrlKey: boolean; metaKey: boolean }> = {},
) => ({
  key,
  shiftKey: false,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  ...mods,
});

describe("the commands' table", () => {
  it("has one command per id, each with a label", () => {
    for (const [id, command] of Object.entries(COMMANDS)) {
      expect(command.id).toBe(id);
      expect(command.label.trim(), id).not.toBe("");
    }
  });

  it("gives no key to two commands", () => {
    const owners = new Map<string, string>();
    for (const command of ALL) {
      for (const k of command.keys ?? []) {
        expect(owners.get(k.key), `${k.key}: ${command.id}`).toBeUndefined();
        owners.set(k.key, command.id);
      }
    }
    expect(owners.size).toBeGreaterThan(0);
  });

  it("reads each command's keys back from a key press, and no command from one held with Alt, Ctrl or Meta", () => {
    for (const command of ALL) {
      for (const k of command.keys ?? []) expect(commandOfKey(press(k.key))?.command.id).toBe(command.id);
    }
    expect(commandOfKey(press(" ", { ctrlKey: true }))).toBeUndefined();
    expect(commandOfKey(press("l", { metaKey: true }))).toBeUndefined();
    expect(commandOfKey(press("b", { altKey: true }))).toBeUndefined();
    // Shift+L, Shift+B are nothing; Shift+Space still plays (as before the table).
    expect(commandOfKey(press("L", { shiftKey: true }))).toBeUndefined();
    expect(commandOfKey(press("B", { shiftKey: true }))).toBeUndefined();
    expect(commandOfKey(press(" ", { shiftKey: true }))?.command.id).toBe("toggle");
    expect(commandOfKey(press("x"))).toBeUndefined();
  });

  it("says each command's keys as aria-keyshortcuts does", () => {
    expect(shortcutOf(COMMANDS.toggle)).toBe("Space");
    expect(shortcutOf(COMMANDS.level)).toBe("L");
    expect(shortcutOf(COMMANDS.restart)).toBeUndefined();
  });
});

describe("a command performed", () => {
  it("plays, steps, changes the step's level (event → attempt)", () => {
    const ctx = context();
    COMMANDS.toggle.perform(ctx);
    COMMANDS.step.perform(ctx);
    COMMANDS.level.perform(ctx);
    expect(ctx.send.mock.calls.map(([e]) => e)).toEqual([
      { type: "TOGGLE" },
      { type: "STEP" },
      { type: "SET_LEVEL", level: "attempt" },
    ]);
  });

  it("B breaks at events like the one the run stopped at, in a live run only", () => {
    const event: RecordedEvent = { seq: 0, timeMs: 0, name: "attempt.started", domain: "a.example", data: {} };
    const live = context({ source: { kind: "scenario", start: { type: "start", text: "" } }, events: [event] });
    expect(COMMANDS.breakpoint.enabled(live)).toBe(true);
    COMMANDS.breakpoint.perform(live);
    expect(live.send).toHaveBeenCalledWith(expect.objectContaining({ type: "SET_BREAKPOINTS" }));
    expect(COMMANDS.breakpoint.enabled(context({ source: { kind: "trace" } }))).toBe(false);
  });

  it("File ▸ Export before the run ended says why it exported nothing", () => {
    const ctx = context();
    performMenuCommand(ctx, { type: "export", what: "trace" });
    expect(ctx.exportRun).not.toHaveBeenCalled();
    expect(ctx.refuse).toHaveBeenCalledWith(expect.stringMatching(/^Nothing to export yet/));
  });

  it("routes each menu command to the command of its type", () => {
    const commands: AppCommand[] = [
      { type: "toggle" },
      { type: "step" },
      { type: "restart" },
      { type: "speed", speed: 3600 },
      { type: "view", view: "rules" },
      { type: "scenario", what: "save-as" },
      { type: "open", file: { kind: "trace", name: "t.mstrace", path: "/t.mstrace", text: "{}" } },
      { type: "close" },
      { type: "recent", files: [] },
    ];
    const ctx = context();
    for (const c of commands) performMenuCommand(ctx, c);
    expect(ctx.send.mock.calls.map(([e]) => e)).toEqual([
      { type: "TOGGLE" },
      { type: "STEP" },
      { type: "RESTART" },
      { type: "SET_SPEED", speed: 3600 },
    ]);
    expect(ctx.showView).toHaveBeenCalledWith("rules");
    expect(ctx.scenario).toHaveBeenCalledWith("save-as");
    expect(ctx.open).toHaveBeenCalledWith(expect.objectContaining({ name: "t.mstrace" }));
    expect(ctx.close).toHaveBeenCalledOnce();
  });
});

describe("the menus and the window's commands agree (main/commandTable.ts, which the menus are built from)", () => {
  it("each command is the table's: the same ids, labels and keys", () => {
    expect(Object.keys(COMMANDS).sort()).toEqual(Object.keys(COMMAND_SPECS).sort());
    for (const [id, spec] of Object.entries(COMMAND_SPECS)) {
      const command = COMMANDS[id as keyof typeof COMMANDS] as Command<never>;
      expect({ id: command.id, label: command.label, keys: command.keys }).toEqual({
        id: spec.id,
        label: spec.label,
        keys: "keys" in spec ? spec.keys : undefined,
      });
    }
  });

  it("each menu item's command reaches the window's command of its id, which does something", () => {
    for (const item of MENU_COMMAND_ITEMS) {
      expect(COMMANDS[item.command.type].id, item.label).toBe(item.command.type);
      const ctx = context();
      performMenuCommand(ctx, item.command);
      const called = [ctx.send, ctx.showView, ctx.scenario, ctx.exportRun, ctx.refuse, ctx.close].filter(
        (f) => f.mock.calls.length > 0,
      );
      expect(called, item.label).toHaveLength(1);
    }
  });

  it("the Run menu's Play/Pause and Step show the window's own keys (Space, →), which the window reads", () => {
    const shownKeys: Record<string, string> = { Space: " ", "→": "ArrowRight" };
    for (const item of RUN_ITEMS.filter((i) => i.windowKey !== undefined)) {
      const key = shownKeys[item.windowKey?.shown ?? ""];
      expect(key, item.label).toBeDefined();
      expect(commandOfKey(press(key ?? ""))?.command.id, item.label).toBe(item.command.type);
    }
  });
});
