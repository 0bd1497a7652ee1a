/**
 * What a session does with each command (session.ts): which phases take it, what it checks of the command, and
 * which drive, start or interrupt it becomes.
 */
import { breakpointsProblem, STEP_LEVELS } from "./breakpoints.ts";
import { formatOffset } from "../trace/offset.ts";
import type { PlaybackSpeed, SessionCommand } from "./sessionProtocol.ts";
import { drive } from "./sessionDrive.ts";
import { start, startProblem } from "./sessionStart.ts";
import { busy, factorOf, refuse, whyNot, type SessionState } from "./sessionState.ts";

/** Obeys one command, or refuses it with why. */
export async function dispatch(s: SessionState, command: SessionCommand): Promise<void> {
  switch (command.type) {
    case "start": {
      if (s.phase !== "empty" && s.phase !== "finished" && s.phase !== "cancelled") {
        return refuse(s, "start", `a run is in progress (${s.phase}); stop it first`);
      }
      const problem = startProblem(command);
      if (problem !== undefined) return refuse(s, "start", problem);
      return busy(s, start(s, command));
    }
    case "play":
    case "setSpeed":
    case "resume":
      return playAt(s, command);
    case "runTo": {
      const { timeMs } = command;
      if (typeof timeMs !== "number" || Number.isNaN(timeMs)) {
        return refuse(s, "runTo", `a time is a number of ms since the epoch, not ${show(timeMs)}`);
      }
      return runTo(s, timeMs);
    }
    case "step": {
      const level = command.level ?? "event";
      if (!STEP_LEVELS.includes(level)) {
        return refuse(s, "step", `a step goes to the next ${STEP_LEVELS.join(", ")}, not ${show(level)}`);
      }
      if (s.live === undefined || !stopped(s)) return refuse(s, "step", whyNot(s.phase));
      return busy(s, drive(s, s.live, { step: level }));
    }
    case "setBreakpoints": {
      const problem = breakpointsProblem(command.breakpoints);
      if (problem !== undefined) return refuse(s, "setBreakpoints", problem);
      s.breakpoints = command.breakpoints;
      s.live?.finder.setBreakpoints(s.breakpoints);
      return;
    }
    case "pause":
    case "finish":
      return pauseOrFinish(s, command.type);
    case "cancel":
      if (s.phase === "empty" || s.phase === "cancelled") return refuse(s, "cancel", whyNot(s.phase));
      return cancel(s);
    default:
      return refuse(s, String((command as { type?: unknown }).type), "this session knows no such command");
  }
}

/** Whether the run is there and stands still (ready or paused). */
function stopped(s: SessionState): boolean {
  return s.phase === "ready" || s.phase === "paused";
}

/** Whether a drive is under way (running or stepping). */
function moving(s: SessionState): boolean {
  return s.phase === "running" || s.phase === "stepping";
}

/** `play` and `resume` play from a stop (at a speed if given); `setSpeed` changes the speed, playing or not. */
function playAt(
  s: SessionState,
  command: Extract<SessionCommand, { type: "play" | "setSpeed" | "resume" }>,
): Promise<void> | void {
  if ((command.type !== "resume" || command.speed !== undefined) && !isSpeed(command.speed)) {
    return refuse(
      s,
      command.type,
      `a speed is a number > 0 (virtual ms per wall ms) or "max", not ${show(command.speed)}`,
    );
  }
  const { live } = s;
  if (command.type === "setSpeed" && live !== undefined && (stopped(s) || moving(s))) {
    live.speed = command.speed;
    if (live.playing) live.world.scheduler.setRealtimeFactor(factorOf(command.speed));
    return;
  }
  if (command.type !== "setSpeed" && live !== undefined && stopped(s)) {
    if (command.speed !== undefined) live.speed = command.speed;
    return busy(s, drive(s, live, "play"));
  }
  return refuse(s, command.type, whyNot(s.phase));
}

/** A pause stops a drive under way; a finish does too and runs to the end, or runs a stopped run to its end. */
function pauseOrFinish(s: SessionState, type: "pause" | "finish"): Promise<void> | void {
  const { live } = s;
  if (live !== undefined && moving(s)) {
    if (s.interrupt !== "cancel") s.interrupt = type;
    live.world.scheduler.pause();
    return s.current;
  }
  if (type === "pause" || live === undefined || !stopped(s)) return refuse(s, type, whyNot(s.phase));
  return busy(s, drive(s, live, "finish"));
}

/** Where a runTo goes: ahead from ready or paused, anywhere while running, back from the end. */
function runTo(s: SessionState, timeMs: number): Promise<void> | void {
  const { live } = s;
  if (live === undefined) return refuse(s, "runTo", whyNot(s.phase));
  const nowMs = live.world.scheduler.now();
  switch (s.phase) {
    case "running":
    case "stepping":
      if (s.interrupt !== "cancel") s.interrupt = { toMs: timeMs };
      live.world.scheduler.pause();
      return s.current;
    case "ready":
    case "paused":
      return busy(s, drive(s, live, { untilMs: timeMs }, { toMs: timeMs }));
    case "finished": {
      const endMs = live.endMs ?? nowMs;
      if (timeMs < endMs) return busy(s, drive(s, live, { untilMs: timeMs }, { toMs: timeMs }));
      return refuse(
        s,
        "runTo",
        `the run is over at ${formatOffset(endMs, live.world.startMs)}: nothing happens after its end; jump to an earlier time`,
      );
    }
    default:
      return refuse(s, "runTo", whyNot(s.phase));
  }
}

/** Stops the run (whatever it was doing), waits for the work in progress, and posts `cancelled`. */
async function cancel(s: SessionState): Promise<void> {
  s.interrupt = "cancel";
  if (moving(s)) s.live?.world.scheduler.pause();
  while (s.current !== undefined) await s.current.catch(() => undefined);
  s.interrupt = undefined;
  s.live = undefined;
  s.phase = "cancelled";
  s.send({ type: "cancelled" });
}

function isSpeed(speed: unknown): speed is PlaybackSpeed {
  return speed === "max" || (typeof speed === "number" && speed > 0);
}

/** A value as a refusal quotes it. */
export function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
