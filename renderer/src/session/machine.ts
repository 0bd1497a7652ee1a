/**
 * The playback machine (XState 5): idle → loading → ready → playing ⇄ paused
 * → finished, plus failed. It owns one session at a time (a callback actor
 * over a {@link SessionPort}), sends it the user's commands and keeps what
 * its messages say: the summary, the trace events so far, the progress and,
 * at the end, the checks. An imported trace is shown as a finished run
 * without a session.
 *
 * What "playing" runs is in the context ({@link Drive}): play at the speed
 * the controls show (every play and resume carries it, so the speed shown is
 * the speed run, after a jump or a step too), a jump to a time as fast as
 * possible — to an earlier time as well, also from the end: the session runs
 * the run again from its start (`rewound`) — or the rest as fast as possible;
 * from the end, Play goes back to the start and plays the run again.
 *
 * A step goes to the next event of the level chosen (`level`: an event, an
 * attempt, a decision); a play or a step stops at the breakpoints
 * (`breakpoints`, sent to every session as they change), and the context
 * keeps where and why the last one stopped (`stop`) until the next command.
 *
 * Played as a lesson (`notePauses`), the scenario's notes are breakpoints
 * too (ids `note-N`, docs/decisions/0100), listed with the user's: the
 * session stops at a note's event or time exactly. Each breakpoint's hits
 * (`hits`) are the stops it made in the part of the run now shown: a restart
 * forgets them all, a jump back those after the time it goes to.
 */
import { assign, fromCallback, sendTo, setup } from "xstate";
import type {
  PlaybackSpeed,
  SessionCommand,
  SessionMessage,
  SessionProgress,
  SessionResult,
  SessionSummary,
  StartCommand,
} from "../../../app/sim/sessionProtocol.ts";
import type { Breakpoint, PlaybackStop, StepLevel } from "../../../app/sim/breakpoints.ts";
import type { RecordedEvent, Trace } from "../../../app/trace/schema.ts";
import { formatOffset } from "../../../app/trace/offset.ts";
import type { SessionPort } from "./port.ts";
import { resultFromTrace, summaryFromTrace } from "./replay.ts";
import { noteBreakpoints, noteOfBreakpoint } from "../../../app/sim/lesson.ts";
import { annotationsOfText } from "../model/lesson.ts";

/** Where the shown run came from. */
export type RunSource = { readonly kind: "scenario"; readonly start: StartCommand } | { readonly kind: "trace" };

/**
 * What a playing session runs: play at the speed shown, a jump to a time, the rest of the run, or (Play at the
 * end) a jump back to the start, then play.
 */
export type Drive =
  | { readonly kind: "play" }
  | { readonly kind: "jump"; readonly toMs: number }
  | { readonly kind: "finish" }
  | { readonly kind: "replay" };

export interface PlaybackContext {
  readonly source?: RunSource;
  readonly summary?: SessionSummary;
  readonly events: readonly RecordedEvent[];
  readonly progress?: SessionProgress;
  readonly result?: SessionResult;
  /** The scenario's errors, `file:line:column: field: message`. */
  readonly errors: readonly string[];
  /** The last refusal or failure, said to the user. */
  readonly notice?: string;
  readonly speed: PlaybackSpeed;
  /** What the session runs while playing; undefined when it is not. */
  readonly drive?: Drive;
  /** The scenario's description, for the summary of a played-back run. */
  readonly description?: string;
  /** How far a step goes. */
  readonly level: StepLevel;
  /** Where a play or a step stops; every session of this machine is told them. */
  readonly breakpoints: readonly Breakpoint[];
  /** Where and why the last play or step stopped (a breakpoint, the step's event, the end); until the next command. */
  readonly stop?: PlaybackStop;
  /**
   * Played as a lesson: the scenario's notes with `pause` are breakpoints (listed in `breakpoints`, ids
   * `note-N`), added as each run of it is ready.
   */
  readonly notePauses: boolean;
  /** The stops each breakpoint made in the part of the run now shown, in order (its hit count is how many). */
  readonly hits: readonly BreakpointHit[];
  /** Where this run ends, once it has been run to its end (kept after a jump back): the scrubber spans to it. */
  readonly knownEndMs?: number;
  /** Makes each run's session (the worker's, or a fake one in tests). */
  readonly create: SessionFactory;
}

/** A stop a breakpoint made: the event it stopped at (or its time) and the clock then. */
export interface BreakpointHit {
  readonly id: string;
  readonly seq?: number;
  readonly atMs: number;
}

export type PlaybackEvent =
  | {
      readonly type: "LOAD";
      readonly start: StartCommand;
      readonly description?: string;
      /** Played as a lesson: it pauses at its notes (they become breakpoints). */
      readonly notePauses?: boolean;
    }
  | { readonly type: "OPEN_TRACE"; readonly trace: Trace; readonly description?: string }
  | { readonly type: "PLAY" }
  | { readonly type: "PAUSE" }
  | { readonly type: "TOGGLE" }
  | { readonly type: "STEP" }
  | { readonly type: "RUN_TO"; readonly timeMs: number }
  | { readonly type: "FINISH" }
  | { readonly type: "SET_SPEED"; readonly speed: PlaybackSpeed }
  | { readonly type: "SET_LEVEL"; readonly level: StepLevel }
  | { readonly type: "SET_BREAKPOINTS"; readonly breakpoints: readonly Breakpoint[] }
  /** "Pause at each note": the scenario's notes listed as breakpoints (again, all enabled), or none of them. */
  | { readonly type: "SET_NOTE_PAUSES"; readonly on: boolean }
  | { readonly type: "RESTART"; readonly seed?: number | string; readonly readings?: StartCommand["readings"] }
  | { readonly type: "SESSION"; readonly message: SessionMessage }
  /** Shows nothing: the file shown is closed (a file that failed to open replaces it). */
  | { readonly type: "CLOSE" };

/** Makes the session of one run. */
export type SessionFactory = (start: StartCommand, description: string | undefined) => SessionPort;

const sessionActor = fromCallback<
  { type: "COMMAND"; command: SessionCommand },
  { start: StartCommand; description?: string; create: SessionFactory; breakpoints: readonly Breakpoint[] }
>(({ input, sendBack, receive }) => {
  const port = input.create(input.start, input.description);
  const stop = port.onMessage((message) => sendBack({ type: "SESSION", message }));
  receive((event) => port.send(event.command));
  port.send(input.start);
  if (input.breakpoints.length > 0) port.send({ type: "setBreakpoints", breakpoints: input.breakpoints });
  return () => {
    stop();
    port.dispose();
  };
});

/** The session command a user's event asks for (`RESUME`: play on from a pause, at the speed shown). */
export function commandFor(
  context: PlaybackContext,
  event: PlaybackEvent | { readonly type: "RESUME" },
): SessionCommand {
  switch (event.type) {
    case "PLAY":
    case "TOGGLE":
      // From ready; a toggle while playing pauses, from paused resumes (the machine's "pause" and "resume").
      return { type: "play", speed: context.speed };
    case "RESUME":
      return { type: "resume", speed: context.speed };
    case "PAUSE":
      return { type: "pause" };
    case "STEP":
      return { type: "step", level: context.level };
    case "RUN_TO":
      return { type: "runTo", timeMs: event.timeMs };
    case "FINISH":
      return { type: "finish" };
    case "SET_SPEED":
      return { type: "setSpeed", speed: event.speed };
    case "SET_BREAKPOINTS":
      return { type: "setBreakpoints", breakpoints: event.breakpoints };
    default:
      return { type: "resume" };
  }
}

const is =
  (type: SessionMessage["type"]) =>
  ({ event }: { event: PlaybackEvent }): boolean =>
    event.type === "SESSION" && event.message.type === type;

/** A new run (a load, a restart, an opened trace, nothing): no events, no stop, no hits, its end not known yet. */
const fresh = { events: [], errors: [], stop: undefined, knownEndMs: undefined, hits: [] } as const;

/** The user's breakpoints of a list: those that are not a scenario's notes. */
function ownBreakpoints(list: readonly Breakpoint[]): readonly Breakpoint[] {
  return list.filter((b) => noteOfBreakpoint(b.id) === undefined);
}

/**
 * The list with the scenario's notes as breakpoints, all enabled (after the user's, in the scenario's order),
 * or without them; the list itself when it has them already (a restart keeps how the user left them).
 */
function withNotes(context: PlaybackContext, on: boolean, again = false): readonly Breakpoint[] {
  const own = ownBreakpoints(context.breakpoints);
  if (!on) return own.length === context.breakpoints.length ? context.breakpoints : own;
  if (!again && own.length < context.breakpoints.length) return context.breakpoints;
  const text = context.source?.kind === "scenario" ? context.source.start.text : undefined;
  const startMs = context.summary?.startMs;
  if (startMs === undefined) return own;
  return [...own, ...noteBreakpoints(annotationsOfText(text), startMs)];
}

/** The hit a stop is, if a breakpoint made it: at its event's time (the events are numbered from 0 in order). */
function hitOf(
  stop: PlaybackStop | undefined,
  events: readonly RecordedEvent[],
  progress: SessionProgress,
): BreakpointHit | undefined {
  if (stop?.kind === "breakpoint") {
    const event = events[stop.seq];
    return { id: stop.id, seq: stop.seq, atMs: event?.seq === stop.seq ? event.timeMs : progress.playheadMs };
  }
  if (stop?.kind === "time") return { id: stop.id, atMs: stop.atMs };
  return undefined;
}

export const playbackMachine = setup({
  types: {
    context: {} as PlaybackContext,
    events: {} as PlaybackEvent,
    input: {} as { readonly create: SessionFactory },
  },
  actors: { session: sessionActor },
  actions: {
    keep: assign(({ context, event }) => {
      if (event.type !== "SESSION") return {};
      const m = event.message;
      switch (m.type) {
        case "ready":
          return { summary: m.summary };
        case "invalid":
          return { errors: m.errors };
        case "events":
          return { events: context.events.concat(m.events), progress: m.progress };
        case "rewound": {
          // A jump back: the run starts again; its events come again up to the time asked for, and the
          // breakpoints' hits before that time stay (a jump stops at none, so none comes again).
          const toMs = context.drive?.kind === "jump" ? context.drive.toMs : -Infinity;
          return {
            events: context.events.slice(0, m.progress.events),
            progress: m.progress,
            result: undefined,
            hits: context.hits.filter((h) => h.atMs <= toMs),
          };
        }
        case "progress":
          return { progress: m.progress };
        case "stepped":
        case "paused": {
          const hit = hitOf(m.stop, context.events, m.progress);
          return { progress: m.progress, stop: m.stop, ...(hit !== undefined && { hits: [...context.hits, hit] }) };
        }
        case "finished":
          return { progress: m.progress, result: m.result, knownEndMs: m.result.endMs };
        case "error":
          return { notice: m.message };
        default:
          return {};
      }
    }),
    forward: sendTo("session", ({ context, event }) => ({
      type: "COMMAND" as const,
      command: commandFor(context, event),
    })),
    pause: sendTo("session", { type: "COMMAND" as const, command: { type: "pause" } as SessionCommand }),
    resume: sendTo("session", ({ context }) => ({
      type: "COMMAND" as const,
      command: commandFor(context, { type: "RESUME" }),
    })),
    /** Play at the end: back to the start (before its first event), then play (see `playOn`). */
    replay: sendTo("session", ({ context }) => ({
      type: "COMMAND" as const,
      command: { type: "runTo", timeMs: beginningOf(context) } as SessionCommand,
    })),
    playOn: assign({ drive: { kind: "play" } as Drive }),
    setLevel: assign(({ event }) => (event.type === "SET_LEVEL" ? { level: event.level } : {})),
    setBreakpoints: assign(({ context, event }) => {
      if (event.type !== "SET_BREAKPOINTS") return {};
      // A breakpoint taken away takes its hits with it (a new one may get its id).
      const ids = new Set(event.breakpoints.map((b) => b.id));
      return {
        breakpoints: event.breakpoints,
        hits: context.hits.filter((h) => ids.has(h.id)),
        notePauses: event.breakpoints.some((b) => noteOfBreakpoint(b.id) !== undefined),
      };
    }),
    setNotePauses: assign(({ context, event }) => {
      if (event.type !== "SET_NOTE_PAUSES") return {};
      const breakpoints = withNotes(context, event.on, true);
      const ids = new Set(breakpoints.map((b) => b.id));
      return { notePauses: event.on, breakpoints, hits: context.hits.filter((h) => ids.has(h.id)) };
    }),
    /** A run of a lesson is ready: its notes join the breakpoints (unless the list has them from a run before). */
    notesIn: assign(({ context }) => (context.notePauses ? { breakpoints: withNotes(context, true) } : {})),
    tellBreakpoints: sendTo("session", ({ context }) => ({
      type: "COMMAND" as const,
      command: { type: "setBreakpoints", breakpoints: context.breakpoints } as SessionCommand,
    })),
    setSpeed: assign(({ event }) => (event.type === "SET_SPEED" ? { speed: event.speed } : {})),
    /** What the session runs from now: set by the command that starts it, cleared when it stops. */
    drive: assign(({ event }): { drive: Drive } => ({
      drive:
        event.type === "RUN_TO"
          ? { kind: "jump", toMs: event.timeMs }
          : event.type === "FINISH"
            ? { kind: "finish" }
            : { kind: "play" },
    })),
    replaying: assign({ drive: { kind: "replay" } as Drive }),
    stopped: assign({ drive: undefined }),
    /** A new command from the user: the last refusal said and the last stop are done with. */
    heard: assign({ notice: undefined, stop: undefined }),
    /** A jump to the end or past it from the end: nothing to run, said so. */
    atEnd: assign(({ context }) => ({
      notice: `The run is over at ${formatOffset(context.result?.endMs ?? 0, context.summary?.startMs ?? 0)}: nothing happens after its end. Jump to an earlier time to see the run there.`,
    })),
  },
  guards: {
    /** Back at the start for a Play at the end: play on. */
    backToPlay: ({ context, event }) =>
      context.drive?.kind === "replay" && event.type === "SESSION" && event.message.type === "paused",
    /** A jump from the end to a time before it (the session runs the run again to it). */
    beforeEnd: ({ context, event }) =>
      event.type === "RUN_TO" && context.result !== undefined && event.timeMs < context.result.endMs,
    /** A refusal of the command that was to start the run (a session out of step with the machine). */
    runRefused: ({ event }) =>
      event.type === "SESSION" &&
      event.message.type === "error" &&
      ["play", "resume", "runTo", "finish"].includes(event.message.command ?? ""),
  },
}).createMachine({
  id: "playback",
  context: ({ input }) => ({
    ...fresh,
    speed: 60,
    level: "event",
    breakpoints: [],
    notePauses: false,
    create: input.create,
  }),
  initial: "idle",
  on: {
    LOAD: {
      target: ".session",
      reenter: true,
      actions: assign(({ context, event }) => ({
        ...fresh,
        // Another scenario: the notes of the one before are no breakpoints of it; its own come when it is ready.
        breakpoints: ownBreakpoints(context.breakpoints),
        notePauses: event.notePauses === true,
        source: { kind: "scenario" as const, start: event.start },
        description: event.description,
        summary: undefined,
        progress: undefined,
        result: undefined,
        notice: undefined,
        drive: undefined,
      })),
    },
    OPEN_TRACE: {
      target: ".finished",
      actions: assign(({ context, event }) => ({
        ...fresh,
        breakpoints: ownBreakpoints(context.breakpoints),
        notePauses: false,
        source: { kind: "trace" as const },
        summary: summaryFromTrace(event.trace, event.description),
        events: event.trace.events,
        progress: {
          nowMs: event.trace.events.at(-1)?.timeMs ?? event.trace.startedAtMs,
          playheadMs: event.trace.events.at(-1)?.timeMs ?? event.trace.startedAtMs,
          events: event.trace.events.length,
          pendingEvents: 0,
        },
        result: resultFromTrace(event.trace, {
          hash: "",
          passed: [...(event.trace.invariants ?? []), ...(event.trace.expectations ?? [])].every((c) => c.passed),
          complete: true,
        }),
        notice: undefined,
        drive: undefined,
      })),
    },
    SET_SPEED: { actions: "setSpeed" },
    SET_LEVEL: { actions: "setLevel" },
    SET_BREAKPOINTS: { actions: "setBreakpoints" },
    SET_NOTE_PAUSES: { actions: "setNotePauses" },
    CLOSE: {
      target: ".idle",
      actions: assign(({ context }) => ({
        ...fresh,
        breakpoints: ownBreakpoints(context.breakpoints),
        notePauses: false,
        source: undefined,
        summary: undefined,
        progress: undefined,
        result: undefined,
        notice: undefined,
        drive: undefined,
      })),
    },
  },
  states: {
    idle: {},
    failed: {},
    finished: {},
    session: {
      invoke: {
        id: "session",
        src: "session",
        input: ({ context }) => ({
          start: context.source?.kind === "scenario" ? context.source.start : { type: "start" as const, text: "" },
          ...(context.description !== undefined && { description: context.description }),
          create: context.create,
          breakpoints: context.breakpoints,
        }),
      },
      on: {
        SESSION: { actions: "keep" },
        RESTART: {
          target: "session",
          reenter: true,
          guard: ({ context }) => context.source?.kind === "scenario",
          actions: assign(({ context, event }) => {
            if (context.source?.kind !== "scenario") return {};
            const { seed: _seed, readings: _readings, ...rest } = context.source.start;
            const start: StartCommand = {
              ...rest,
              ...((event.seed ?? context.source.start.seed) !== undefined && {
                seed: event.seed ?? context.source.start.seed,
              }),
              ...((event.readings ?? context.source.start.readings) !== undefined && {
                readings: event.readings ?? context.source.start.readings,
              }),
            };
            return {
              ...fresh,
              source: { kind: "scenario" as const, start },
              summary: undefined,
              progress: undefined,
              result: undefined,
              notice: undefined,
              drive: undefined,
            };
          }),
        },
        SET_SPEED: {
          actions: ["setSpeed", "forward"],
        },
        SET_BREAKPOINTS: {
          actions: ["setBreakpoints", "forward"],
        },
        SET_NOTE_PAUSES: {
          actions: ["setNotePauses", "tellBreakpoints"],
        },
      },
      initial: "loading",
      states: {
        loading: {
          on: {
            SESSION: [
              {
                guard: ({ context, event }) => context.notePauses && is("ready")({ event }),
                target: "ready",
                actions: ["keep", "notesIn", "tellBreakpoints"],
              },
              { guard: is("ready"), target: "ready", actions: "keep" },
              { guard: is("invalid"), target: "#playback.failed", actions: "keep" },
              { guard: is("error"), target: "#playback.failed", actions: "keep" },
              { actions: "keep" },
            ],
          },
        },
        ready: {
          on: {
            PLAY: { target: "playing", actions: ["heard", "drive", "forward"] },
            TOGGLE: { target: "playing", actions: ["heard", "drive", "forward"] },
            STEP: { target: "paused", actions: ["heard", "forward"] },
            FINISH: { target: "playing", actions: ["heard", "drive", "forward"] },
            RUN_TO: { target: "playing", actions: ["heard", "drive", "forward"] },
          },
        },
        playing: {
          on: {
            PAUSE: { target: "paused", actions: ["heard", "stopped", "pause"] },
            TOGGLE: { target: "paused", actions: ["heard", "stopped", "pause"] },
            FINISH: { actions: ["heard", "drive", "forward"] },
            // A jump while playing takes the run over (to a later or an earlier time).
            RUN_TO: { actions: ["heard", "drive", "forward"] },
            SESSION: [
              { guard: is("finished"), target: "finished", actions: ["keep", "stopped"] },
              { guard: "backToPlay", actions: ["keep", "playOn", "resume"] },
              { guard: is("paused"), target: "paused", actions: ["keep", "stopped"] },
              { guard: "runRefused", target: "paused", actions: ["keep", "stopped"] },
              { actions: "keep" },
            ],
          },
        },
        paused: {
          on: {
            PLAY: { target: "playing", actions: ["heard", "drive", "resume"] },
            TOGGLE: { target: "playing", actions: ["heard", "drive", "resume"] },
            STEP: { actions: ["heard", "forward"] },
            FINISH: { target: "playing", actions: ["heard", "drive", "forward"] },
            RUN_TO: { target: "playing", actions: ["heard", "drive", "forward"] },
            SESSION: [{ guard: is("finished"), target: "finished", actions: "keep" }, { actions: "keep" }],
          },
        },
        finished: {
          on: {
            // Play at the end plays the run again: back to its start (run again there), then play.
            PLAY: { target: "playing", actions: ["heard", "replaying", "replay"] },
            TOGGLE: { target: "playing", actions: ["heard", "replaying", "replay"] },
            // Back from the end: the session runs the run again from its start to that time.
            RUN_TO: [
              { guard: "beforeEnd", target: "playing", actions: ["heard", "drive", "forward"] },
              { actions: "atEnd" },
            ],
          },
        },
      },
    },
  },
});

/** Before the run's first event: where Play at the end goes back to (a jump there runs nothing). */
export function beginningOf(context: Pick<PlaybackContext, "summary">): number {
  return (context.summary?.startMs ?? 0) - 1;
}

/** The phase of playback a snapshot is in, as the UI names it. */
export type PlaybackPhase = "idle" | "loading" | "ready" | "playing" | "paused" | "finished" | "failed";

export function phaseOf(snapshot: { matches(state: never): boolean; value: unknown }): PlaybackPhase {
  const value = snapshot.value;
  if (typeof value === "string") return value === "session" ? "loading" : (value as PlaybackPhase);
  const inner = (value as { session?: string }).session;
  return (inner ?? "loading") as PlaybackPhase;
}
