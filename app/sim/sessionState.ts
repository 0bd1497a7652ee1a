/**
 * What a simulation session (session.ts) holds while it lives, and what it knows of itself: one
 * {@link SessionState} object that the session's commands, its drive and its start share in place of the
 * closure they were written in (decision 0145). Where the run is ({@link progressOf}), what is posted when
 * ({@link flush}), and why a command cannot be obeyed now ({@link whyNot}) are read from it here.
 */
import { StopFinder, type Breakpoint, type PlaybackStop, type StepLevel } from "./breakpoints.ts";
import type { LoadedScenario } from "./scenario.ts";
import { refusal, type PlaybackSpeed, type SessionMessage, type SessionProgress } from "./sessionProtocol.ts";
import type { World, WorldOptions } from "./world.ts";

/** Posts a message to the app (in a worker: `postMessage`). */
export type SessionPost = (message: SessionMessage, transfer?: Transferable[]) => void;

/**
 * Where a session is. `ready` and `paused` take play, resume, step, runTo and
 * finish; `running` and `stepping` (a step as fast as possible to its event)
 * take pause, setSpeed, runTo, finish and cancel; `finished` takes a runTo to
 * an earlier time; a new `start` is taken before any run, and after one
 * finished or was cancelled. `setBreakpoints` is taken in any phase.
 */
export type SessionPhase =
  "empty" | "starting" | "ready" | "running" | "stepping" | "paused" | "checking" | "finished" | "cancelled";

/** Before any `play`, `resume` with a speed or `setSpeed`, `resume` plays in real time. */
export const DEFAULT_SPEED: PlaybackSpeed = 1;

/** A jump asked for while a run was running: it takes the run over. */
export interface Jump {
  readonly toMs: number;
}

/** What a running drive was asked to do from outside. */
export type Interrupt = "pause" | "finish" | "cancel" | Jump;

/**
 * What a drive does: play at the speed, run to a time as fast as possible, run to the end, or step to the next
 * event of a level (as fast as possible). A play and a step stop at breakpoints; a jump and a finish do not.
 */
export type DriveMode = "play" | "finish" | { readonly untilMs: number } | { readonly step: StepLevel };

/** The run of a started session. */
export interface Live {
  readonly world: World;
  readonly loaded: LoadedScenario;
  /** How the world was built: a jump back builds it again the same way. */
  readonly worldOptions: WorldOptions;
  readonly mailscope: string | undefined;
  speed: PlaybackSpeed;
  /** Whether the running drive plays at `speed` (a runTo or a finish runs at full speed). */
  playing: boolean;
  /** Trace events posted so far; the finder's `scanned` ones may be posted, the rest are held back. */
  sent: number;
  /** Where playback stops (breakpoints, step levels); it reads the recorder's events in order. */
  readonly finder: StopFinder;
  /** A stop the finder met while the scheduler ran: the drive stops there once the scheduler has paused. */
  found?: PlaybackStop;
  /** Wall time of the last `events` / `progress` message. */
  lastPostMs: number;
  playheadMs: number;
  /** Checked and reported `finished`: only a jump back runs it again (from a world built again). */
  concluded: boolean;
  /** Where the run ended, once concluded (its last event; `mailscope run`'s end). */
  endMs?: number;
}

/** A session's state: its settings, where it is, its run, and what it was asked meanwhile. */
export interface SessionState {
  /** Posts a message; a post that throws (a closed port) is ignored. */
  readonly send: (message: SessionMessage, transfer?: Transferable[]) => void;
  /** Least wall time between two `events` / `progress` messages while running, ms. */
  readonly frameMs: number;
  /** The wall clock that paces those messages, ms. Never read by the simulation. */
  readonly wallClock: () => number;
  /** How the world's scheduler yields to the host, if not the world's way. */
  readonly scheduler: WorldOptions["scheduler"] | undefined;
  phase: SessionPhase;
  live: Live | undefined;
  interrupt: Interrupt | undefined;
  /** The breakpoints, kept across runs: every run's finder stops at them. */
  breakpoints: readonly Breakpoint[];
  /** The start, drive, step or check in progress: cancel waits for it. */
  current: Promise<void> | undefined;
}

/** Answers a command that cannot be obeyed with an `error` message saying why. */
export function refuse(s: SessionState, command: string, why: string): void {
  s.send(refusal(command, why));
}

/** Marks `work` as the session's work in progress until it settles, and returns it. */
export function busy(s: SessionState, work: Promise<void>): Promise<void> {
  const done = work.finally(() => {
    if (s.current === done) s.current = undefined;
  });
  s.current = done;
  return done;
}

/** A run of a world just built, at its start, posting nothing yet. */
export function liveRun(
  s: SessionState,
  world: World,
  loaded: LoadedScenario,
  worldOptions: WorldOptions,
  mailscope: string | undefined,
  speed: PlaybackSpeed,
): Live {
  const finder = new StopFinder();
  finder.setBreakpoints(s.breakpoints);
  return {
    world,
    loaded,
    worldOptions,
    mailscope,
    speed,
    playing: false,
    sent: 0,
    lastPostMs: s.wallClock(),
    playheadMs: world.startMs,
    concluded: false,
    finder,
  };
}

/** Where the run is, as the app is told. */
export function progressOf(run: Live): SessionProgress {
  const { scheduler, recorder } = run.world;
  const nowMs = scheduler.now();
  const next = scheduler.nextEventAtMs();
  const held = recorder.length - run.sent;
  return {
    nowMs,
    playheadMs: Math.max(run.playheadMs, nowMs),
    events: run.sent,
    pendingEvents: scheduler.pendingEvents,
    ...(next !== undefined && { nextEventAtMs: next }),
    held,
    atEnd: !run.concluded && held === 0 && atEnd(run),
  };
}

/** No event is left before the horizon: the run is over, as `world.run()` would stop. */
export function atEnd(run: Live): boolean {
  const next = run.world.scheduler.nextEventAtMs();
  return next === undefined || next > run.world.horizonMs;
}

/**
 * Posts the trace events not yet posted that the finder has read (the rest are held back at a stop), with the
 * progress; or the progress alone when asked.
 */
export function flush(s: SessionState, run: Live, progressAlone: boolean): void {
  const upTo = run.finder.scanned;
  run.lastPostMs = s.wallClock();
  if (upTo > run.sent) {
    // Decoded from the recorder's store as they are posted (decision 0225).
    const batch = [...run.world.recorder.iterate(run.sent, upTo)];
    run.sent = upTo;
    s.send({ type: "events", events: batch, progress: progressOf(run) });
  } else if (progressAlone) {
    s.send({ type: "progress", progress: progressOf(run) });
  }
}

/** Why a command cannot be obeyed in this phase, in words for the person at the controls. */
export function whyNot(phase: SessionPhase): string {
  switch (phase) {
    case "empty":
      return "no scenario is loaded";
    case "starting":
      return "the run is still being built";
    case "running":
      return "the run is playing; pause it first";
    case "stepping":
      return "a step is in progress";
    case "checking":
      return "the run is being checked";
    case "finished":
      return "the run is over; restart it to run it again";
    case "cancelled":
      return "the run was stopped; start another";
    case "ready":
    case "paused":
      return "nothing is playing";
  }
}

/** Whether a drive stops at breakpoints (a play, a step) or runs where it is sent (a jump, a finish). */
export function stopsIn(mode: DriveMode): boolean {
  return mode === "play" || (typeof mode === "object" && "step" in mode);
}

/** The step level of a step's drive. */
export function levelOf(mode: DriveMode): StepLevel | undefined {
  return typeof mode === "object" && "step" in mode ? mode.step : undefined;
}

/** The scheduler's real-time factor for a speed ("max": as fast as it goes). */
export function factorOf(speed: PlaybackSpeed): number {
  return speed === "max" ? Infinity : speed;
}
