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
 * the run again from its start (`rewound`) — or the rest as fast as possible.
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
import type { RecordedEvent, Trace } from "../../../app/trace/schema.ts";
import { offset as offsetOf } from "../../../app/trace/offset.ts";
import type { SessionPort } from "./port.ts";
import { resultFromTrace, summaryFromTrace } from "./replay.ts";

/** Where the shown run came from. */
export type RunSource = { readonly kind: "scenario"; readonly start: StartCommand } | { readonly kind: "trace" };

/** What a playing session runs: play at the speed shown, a jump to a time, or the rest of the run. */
export type Drive =
  { readonly kind: "play" } | { readonly kind: "jump"; readonly toMs: number } | { readonly kind: "finish" };

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
  /** Makes each run's session (the worker's, or a fake one in tests). */
  readonly create: SessionFactory;
}

export type PlaybackEvent =
  | { readonly type: "LOAD"; readonly start: StartCommand; readonly description?: string }
  | { readonly type: "OPEN_TRACE"; readonly trace: Trace; readonly description?: string }
  | { readonly type: "PLAY" }
  | { readonly type: "PAUSE" }
  | { readonly type: "TOGGLE" }
  | { readonly type: "STEP" }
  | { readonly type: "RUN_TO"; readonly timeMs: number }
  | { readonly type: "FINISH" }
  | { readonly type: "SET_SPEED"; readonly speed: PlaybackSpeed }
  | { readonly type: "RESTART"; readonly seed?: number | string; readonly readings?: StartCommand["readings"] }
  | { readonly type: "SESSION"; readonly message: SessionMessage }
  /** Shows nothing: the file shown is closed (a file that failed to open replaces it). */
  | { readonly type: "CLOSE" };

/** Makes the session of one run. */
export type SessionFactory = (start: StartCommand, description: string | undefined) => SessionPort;

const sessionActor = fromCallback<
  { type: "COMMAND"; command: SessionCommand },
  { start: StartCommand; description?: string; create: SessionFactory }
>(({ input, sendBack, receive }) => {
  const port = input.create(input.start, input.description);
  const stop = port.onMessage((message) => sendBack({ type: "SESSION", message }));
  receive((event) => port.send(event.command));
  port.send(input.start);
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
      return { type: "step" };
    case "RUN_TO":
      return { type: "runTo", timeMs: event.timeMs };
    case "FINISH":
      return { type: "finish" };
    case "SET_SPEED":
      return { type: "setSpeed", speed: event.speed };
    default:
      return { type: "resume" };
  }
}

const is =
  (type: SessionMessage["type"]) =>
  ({ event }: { event: PlaybackEvent }): boolean =>
    event.type === "SESSION" && event.message.type === type;

const fresh = { events: [], errors: [] } as const;

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
        case "rewound":
          // A jump back: the run starts again; its events come again up to the time asked for.
          return { events: context.events.slice(0, m.progress.events), progress: m.progress, result: undefined };
        case "progress":
        case "stepped":
        case "paused":
          return { progress: m.progress };
        case "finished":
          return { progress: m.progress, result: m.result };
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
    stopped: assign({ drive: undefined }),
    /** A new command from the user: the last refusal said is done with. */
    heard: assign({ notice: undefined }),
    /** A jump to the end or past it from the end: nothing to run, said so. */
    atEnd: assign(({ context }) => ({
      notice: `The run is over at ${offsetOf(context.result?.endMs ?? 0, context.summary?.startMs ?? 0)}: nothing happens after its end. Jump to an earlier time to see the run there.`,
    })),
  },
  guards: {
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
  context: ({ input }) => ({ ...fresh, speed: 60, create: input.create }),
  initial: "idle",
  on: {
    LOAD: {
      target: ".session",
      reenter: true,
      actions: assign(({ event }) => ({
        ...fresh,
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
      actions: assign(({ event }) => ({
        ...fresh,
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
    CLOSE: {
      target: ".idle",
      actions: assign({
        ...fresh,
        source: undefined,
        summary: undefined,
        progress: undefined,
        result: undefined,
        notice: undefined,
        drive: undefined,
      }),
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
      },
      initial: "loading",
      states: {
        loading: {
          on: {
            SESSION: [
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

/** The phase of playback a snapshot is in, as the UI names it. */
export type PlaybackPhase = "idle" | "loading" | "ready" | "playing" | "paused" | "finished" | "failed";

export function phaseOf(snapshot: { matches(state: never): boolean; value: unknown }): PlaybackPhase {
  const value = snapshot.value;
  if (typeof value === "string") return value === "session" ? "loading" : (value as PlaybackPhase);
  const inner = (value as { session?: string }).session;
  return (inner ?? "loading") as PlaybackPhase;
}
