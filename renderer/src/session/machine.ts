/**
 * The playback machine (XState 5): idle → loading → ready → playing ⇄ paused
 * → finished, plus failed. It owns one session at a time (a callback actor
 * over a {@link SessionPort}), sends it the user's commands and keeps what
 * its messages say: the summary, the trace events so far, the progress and,
 * at the end, the checks. An imported trace is shown as a finished run
 * without a session.
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
import type { SessionPort } from "./port.ts";
import { resultFromTrace, summaryFromTrace } from "./replay.ts";

/** Where the shown run came from. */
export type RunSource = { readonly kind: "scenario"; readonly start: StartCommand } | { readonly kind: "trace" };

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
  | { readonly type: "SESSION"; readonly message: SessionMessage };

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

/** The session command a user's event asks for. */
export function commandFor(context: PlaybackContext, event: PlaybackEvent): SessionCommand {
  switch (event.type) {
    case "PLAY":
    case "TOGGLE":
      // From ready; a toggle while playing pauses, from paused resumes (the machine's "pause" and "resume").
      return { type: "play", speed: context.speed };
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
    resume: sendTo("session", { type: "COMMAND" as const, command: { type: "resume" } as SessionCommand }),
    setSpeed: assign(({ event }) => (event.type === "SET_SPEED" ? { speed: event.speed } : {})),
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
      })),
    },
    SET_SPEED: { actions: "setSpeed" },
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
            PLAY: { target: "playing", actions: "forward" },
            TOGGLE: { target: "playing", actions: "forward" },
            STEP: { target: "paused", actions: "forward" },
            FINISH: { target: "playing", actions: "forward" },
            RUN_TO: { target: "playing", actions: "forward" },
          },
        },
        playing: {
          on: {
            PAUSE: { target: "paused", actions: "pause" },
            TOGGLE: { target: "paused", actions: "pause" },
            FINISH: { actions: "forward" },
            SESSION: [
              { guard: is("finished"), target: "finished", actions: "keep" },
              { guard: is("paused"), target: "paused", actions: "keep" },
              { actions: "keep" },
            ],
          },
        },
        paused: {
          on: {
            PLAY: { target: "playing", actions: "resume" },
            TOGGLE: { target: "playing", actions: "resume" },
            STEP: { actions: "forward" },
            FINISH: { target: "playing", actions: "forward" },
            RUN_TO: { target: "playing", actions: "forward" },
            SESSION: [{ guard: is("finished"), target: "finished", actions: "keep" }, { actions: "keep" }],
          },
        },
        finished: {},
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
