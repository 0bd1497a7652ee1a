/**
 * The window's commands as they arrive (commands/commands.ts): the menus' (Electron, through the platform
 * bridge), the files given on the command line, and the player's keys — Space plays and pauses, → steps, L
 * changes what a step goes to, B puts a breakpoint on events like the one the run stopped at (or takes it
 * away) — unless the focused control owns the key.
 */
import { useEffect, useEffectEvent } from "react";
import type { AppCommand, OpenedFile as ShellFile } from "../../../main/channels.ts";
import { commandOfKey, performMenuCommand, type CommandContext } from "../commands/commands.ts";
import { platform } from "../platform.ts";

/** Keys that belong to the focused control, not to the player. */
export function ownsKey(target: EventTarget | null, key: string): boolean {
  if (!(target instanceof HTMLElement)) return false;
  const tag = target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable) return true;
  return key === " " && (tag === "BUTTON" || tag === "SUMMARY" || tag === "A");
}

export function useAppCommands(
  commands: CommandContext,
  openFiles: (files: ShellFile[]) => void,
  setError: (message: string) => void,
): void {
  // The menus' commands (Electron), and the files given on the command line.
  const onCommand = useEffectEvent((command: AppCommand) => performMenuCommand(commands, command));
  const onPending = useEffectEvent(openFiles);
  useEffect(() => {
    platform.pendingFiles().then(onPending, (e: unknown) => setError(String(e)));
    return platform.onCommand(onCommand);
  }, [setError]);

  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (ownsKey(e.target, e.key)) return;
    const asked = commandOfKey(e);
    if (asked === undefined || asked.command.enabled?.(commands) === false) return;
    if (asked.binding.preventDefault) e.preventDefault();
    asked.command.perform(commands);
  });
  useEffect(() => {
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
