/**
 * The Compare machine (XState 5), beside the playback and workspace machines: Compare's two runs and the
 * clock over them. `idle` (the form, nothing run) → `running` (each side in a worker of its own, the two at
 * once: each side's progress in `runs`) → `comparing` (the verdicts, the difference table and, for a fork,
 * the check that both runs are alike before it) → `done`, or `failed` with what went wrong (the form's
 * errors, a side's, both sides'). RUN from any state runs anew: the runs under way are stopped (their
 * workers end); STOP stops them and goes back to the form.
 *
 * When done, the context keeps Compare's playback bar: one clock over both runs (docs/decisions/0100).
 * Play moves it by the wall time of each frame at the speed chosen, Step goes to the next event, attempt or
 * decision of either run; both stop where either run meets a breakpoint. The breakpoints are the run view's
 * list (the playback machine's), one list for both runs, handed in with each move; a breakpoint's hits are
 * the stops it made before the clock (a move back forgets those after it).
 */
import { and, assign, fromPromise, setup } from "xstate";
import { errorMessage } from "../../../app/errorMessage.ts";
import { checkPrefix, type PrefixCheck } from "../../../app/sim/compare.ts";
import type { Breakpoint, StepLevel } from "../../../app/sim/breakpoints.ts";
import type { PlaybackSpeed } from "../../../app/sim/sessionProtocol.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { comparisonOf, type CompareSide, type Comparison } from "../model/compare.ts";
import type { CompareRequest, ForkRun } from "../model/compareForm.ts";
import { compareStopText, nextBreakOfRuns, nextStopOfRuns, type BreakOfRuns } from "../model/playbar.ts";
import { formatOffset } from "../model/time.ts";

export type { CompareRequest, ForkRun };
import type { SideOutcome } from "./runSide.ts";

/** One side's progress. */
export type SideRun =
  | { readonly state: "running" }
  | { readonly state: "done"; readonly events: readonly RecordedEvent[] }
  | { readonly state: "failed"; readonly errors: readonly string[] };

/** Both runs, finished and compared. */
export interface CompareResult {
  readonly events: readonly [readonly RecordedEvent[], readonly RecordedEvent[]];
  readonly comparison: Comparison;
  readonly prefix?: PrefixCheck | undefined;
  /** The later run's end: the shared axis' end. */
  readonly endMs: number;
}

/** What the bar's line says of the last move: a breakpoint's stop, a step's stop, or no stop left. */
export type BarLine =
  | { readonly kind: "hit"; readonly hit: BreakOfRuns }
  | {
      readonly kind: "step";
      readonly stop: { readonly timeMs: number; readonly run: number; readonly event: RecordedEvent };
    }
  | { readonly kind: "none-left"; readonly level: StepLevel; readonly fromMs: number };

/** The bar's line: which run stopped where, and why. */
export function barLineText(
  line: BarLine,
  startMs: number,
  breakpoints: readonly Breakpoint[],
  label: (messageId: string) => string,
): string {
  if (line.kind === "hit") return compareStopText(line.hit, startMs, breakpoints, label);
  if (line.kind === "none-left") {
    return `No ${line.level} is left in either run after ${formatOffset(line.fromMs, startMs)}: both are shown to their ends.`;
  }
  const { stop } = line;
  return `Run ${stop.run === 0 ? "A" : "B"}: #${stop.event.seq} ${stop.event.name} at ${formatOffset(stop.timeMs, startMs)}`;
}

/** Compare's clock over both runs. */
export interface CompareClock {
  /** Where both runs are shown up to; undefined: whole. */
  readonly cursorMs: number | undefined;
  readonly playing: boolean;
  readonly level: StepLevel;
  readonly speed: PlaybackSpeed;
  /** The stops breakpoints made before the clock, and the one it is at. */
  readonly hits: readonly BreakOfRuns[];
  readonly current: BreakOfRuns | undefined;
  readonly line: BarLine | undefined;
}

export interface CompareContext {
  readonly startMs: number;
  readonly request: CompareRequest | undefined;
  /** Counts the runs asked for: a new one draws its result afresh (its zoom, its selection). */
  readonly runNumber: number;
  readonly runs: readonly [SideRun, SideRun] | undefined;
  readonly errors: readonly string[];
  readonly result: CompareResult | undefined;
  readonly clock: CompareClock;
}

export type CompareEvent =
  | { readonly type: "RUN"; readonly request: CompareRequest }
  /** The form cannot make a request: its errors, said as a failed comparison. */
  | { readonly type: "REFUSE"; readonly errors: readonly string[] }
  | { readonly type: "STOP" }
  | { readonly type: "TOGGLE" }
  /** A frame of Play: `wallMs` of wall time went by since the last. */
  | { readonly type: "FRAME"; readonly wallMs: number; readonly breakpoints: readonly Breakpoint[] }
  | { readonly type: "STEP"; readonly breakpoints: readonly Breakpoint[] }
  | { readonly type: "SEEK"; readonly toMs: number }
  | { readonly type: "WHOLE" }
  | { readonly type: "SET_LEVEL"; readonly level: StepLevel }
  | { readonly type: "SET_SPEED"; readonly speed: PlaybackSpeed };

export interface CompareInput {
  readonly startMs: number;
}

/** The bar as a new result shows it: both runs whole, stepping by attempts, at 3600×. */
export const FRESH_CLOCK: CompareClock = {
  cursorMs: undefined,
  playing: false,
  level: "attempt",
  speed: 3600,
  hits: [],
  current: undefined,
  line: undefined,
};

/** The clock moved to `cursorMs`: the hits after it are not in the runs shown, the stop at another time is over. */
function moved(clock: CompareClock, cursorMs: number | undefined, endMs: number): CompareClock {
  const at = cursorMs ?? endMs;
  return {
    ...clock,
    cursorMs,
    hits: clock.hits.some((h) => h.timeMs > at) ? clock.hits.filter((h) => h.timeMs <= at) : clock.hits,
    current: clock.current !== undefined && clock.current.timeMs !== at ? undefined : clock.current,
  };
}

/** The clock stops at a breakpoint's hit: both runs shown up to it, which run met it said. */
function stoppedAt(clock: CompareClock, hit: BreakOfRuns, endMs: number): CompareClock {
  const to = moved(clock, hit.timeMs, endMs);
  return { ...to, playing: false, hits: [...to.hits, hit], current: hit, line: { kind: "hit", hit } };
}

/** Play's frame: the clock goes on by `wallMs` at the speed chosen, up to the end or a breakpoint. */
export function frameOf(
  clock: CompareClock,
  result: CompareResult,
  wallMs: number,
  breakpoints: readonly Breakpoint[],
): CompareClock {
  if (!clock.playing) return clock;
  const { endMs } = result;
  const at = clock.cursorMs ?? endMs;
  const next = clock.speed === "max" ? endMs : Math.min(endMs, at + wallMs * clock.speed);
  const hit = nextBreakOfRuns(result.events, breakpoints, at, next);
  if (hit !== undefined) return stoppedAt(clock, hit, endMs);
  return { ...moved(clock, next, endMs), playing: next < endMs };
}

/** Step: the next event of the level chosen in either run, or the first breakpoint before it. */
export function stepOf(
  clock: CompareClock,
  result: CompareResult,
  startMs: number,
  breakpoints: readonly Breakpoint[],
): CompareClock {
  const { endMs } = result;
  const from = clock.cursorMs ?? startMs - 1;
  const paused = { ...clock, playing: false };
  const stop = nextStopOfRuns(result.events, clock.level, from);
  const hit = nextBreakOfRuns(result.events, breakpoints, from, stop?.timeMs ?? endMs);
  if (hit !== undefined) return stoppedAt(paused, hit, endMs);
  if (stop === undefined) {
    return { ...moved(paused, endMs, endMs), line: { kind: "none-left", level: clock.level, fromMs: from } };
  }
  return { ...moved(paused, stop.timeMs, endMs), line: { kind: "step", stop } };
}

/** Play or Pause; Play at the end starts again from the start. */
export function toggleOf(clock: CompareClock, result: CompareResult, startMs: number): CompareClock {
  const atEnd = (clock.cursorMs ?? result.endMs) >= result.endMs;
  const from = !clock.playing && atEnd ? moved(clock, startMs, result.endMs) : clock;
  return { ...from, playing: !clock.playing, line: undefined };
}

/** The later run's end. */
function endOf(events: CompareResult["events"], startMs: number): number {
  return Math.max(events[0].at(-1)?.timeMs ?? startMs, events[1].at(-1)?.timeMs ?? startMs);
}

/** Compares two finished runs: the verdicts and table, and for a fork the check of the runs before it. */
export async function compareRuns(
  events: CompareResult["events"],
  startMs: number,
  fork: ForkRun | undefined,
): Promise<CompareResult> {
  const prefix = fork !== undefined ? await checkPrefix(events[0], events[1], startMs + fork.atMs, startMs) : undefined;
  return { events, comparison: comparisonOf(events[0], events[1], startMs), prefix, endMs: endOf(events, startMs) };
}

/** A side's outcome as its progress. */
function sideRun(outcome: SideOutcome): SideRun {
  return outcome.ok ? { state: "done", events: outcome.trace.events } : { state: "failed", errors: outcome.errors };
}

/** The errors of both sides, each said with its side. */
function errorsOf(runs: readonly [SideRun, SideRun]): string[] {
  return runs.flatMap((r, i) => (r.state === "failed" ? r.errors.map((e) => `${i === 0 ? "A" : "B"}: ${e}`) : []));
}

/** The runs with side `i`'s progress replaced. */
function withSide(runs: CompareContext["runs"], i: 0 | 1, run: SideRun): readonly [SideRun, SideRun] {
  const [a, b] = runs ?? [{ state: "running" }, { state: "running" }];
  return i === 0 ? [run, b] : [a, run];
}

/** The sides being run (the running state has a request). */
function sidesOf(context: CompareContext): readonly [CompareSide, CompareSide] {
  if (context.request === undefined) throw new Error("Compare runs only what it was asked.");
  return context.request.sides;
}

const settled = (r: SideRun | undefined) => r !== undefined && r.state !== "running";

/** The result (done state only): the clock's moves need it. */
function resultOf(context: CompareContext): CompareResult {
  if (context.result === undefined) throw new Error("Compare's clock moves only over a result.");
  return context.result;
}

export const compareMachine = setup({
  types: {
    context: {} as CompareContext,
    events: {} as CompareEvent,
    input: {} as CompareInput,
  },
  actors: {
    /** Runs one side (a worker of its own); the view provides it, tests a fake. Aborted when the state is left. */
    runSide: fromPromise<SideOutcome, { readonly side: CompareSide }>(() =>
      Promise.reject(new Error("Compare's runSide actor is provided by its view.")),
    ),
    compare: fromPromise<
      CompareResult,
      { readonly events: CompareResult["events"]; readonly startMs: number; readonly fork: ForkRun | undefined }
    >(({ input }) => compareRuns(input.events, input.startMs, input.fork)),
  },
  guards: {
    bothSettled: ({ context }) => settled(context.runs?.[0]) && settled(context.runs?.[1]),
    anyFailed: ({ context }) => context.runs?.some((r) => r.state === "failed") === true,
  },
  actions: {
    request: assign(({ context, event }) =>
      event.type === "RUN"
        ? {
            request: event.request,
            runNumber: context.runNumber + 1,
            runs: [{ state: "running" }, { state: "running" }] as const,
            errors: [],
            result: undefined,
            clock: FRESH_CLOCK,
          }
        : {},
    ),
  },
}).createMachine({
  id: "compare",
  context: ({ input }) => ({
    startMs: input.startMs,
    request: undefined,
    runNumber: 0,
    runs: undefined,
    errors: [],
    result: undefined,
    clock: FRESH_CLOCK,
  }),
  initial: "idle",
  on: {
    RUN: { target: ".running", reenter: true, actions: "request" },
    REFUSE: {
      target: ".failed",
      actions: assign(({ event }) => ({ errors: event.errors, runs: undefined, result: undefined })),
    },
    STOP: { target: ".idle", actions: assign({ runs: undefined, result: undefined }) },
  },
  states: {
    /** The form, nothing run (or the runs stopped). */
    idle: {},
    /** Both sides run, each in a worker of its own; the comparison waits for both. */
    running: {
      invoke: [
        {
          id: "runA",
          src: "runSide",
          input: ({ context }) => ({ side: sidesOf(context)[0] }),
          onDone: {
            actions: assign(({ context, event }) => ({ runs: withSide(context.runs, 0, sideRun(event.output)) })),
          },
          onError: {
            actions: assign(({ context, event }) => ({
              runs: withSide(context.runs, 0, { state: "failed", errors: [errorMessage(event.error)] }),
            })),
          },
        },
        {
          id: "runB",
          src: "runSide",
          input: ({ context }) => ({ side: sidesOf(context)[1] }),
          onDone: {
            actions: assign(({ context, event }) => ({ runs: withSide(context.runs, 1, sideRun(event.output)) })),
          },
          onError: {
            actions: assign(({ context, event }) => ({
              runs: withSide(context.runs, 1, { state: "failed", errors: [errorMessage(event.error)] }),
            })),
          },
        },
      ],
      always: [
        {
          guard: and(["bothSettled", "anyFailed"]),
          target: "failed",
          actions: assign(({ context }) => ({ errors: errorsOf(context.runs!) })),
        },
        { guard: "bothSettled", target: "comparing" },
      ],
    },
    /** Both ran: the verdicts, the table, and a fork's check of the runs before it. */
    comparing: {
      invoke: {
        src: "compare",
        input: ({ context }) => {
          const [a, b] = context.runs!;
          return {
            events: [a.state === "done" ? a.events : [], b.state === "done" ? b.events : []] as const,
            startMs: context.startMs,
            fork: context.request?.fork,
          };
        },
        onDone: { target: "done", actions: assign(({ event }) => ({ result: event.output })) },
        onError: { target: "failed", actions: assign(({ event }) => ({ errors: [errorMessage(event.error)] })) },
      },
    },
    /** The result shown; the bar's clock moves over it. */
    done: {
      on: {
        TOGGLE: {
          actions: assign(({ context }) => ({
            clock: toggleOf(context.clock, resultOf(context), context.startMs),
          })),
        },
        FRAME: {
          actions: assign(({ context, event }) => ({
            clock: frameOf(context.clock, resultOf(context), event.wallMs, event.breakpoints),
          })),
        },
        STEP: {
          actions: assign(({ context, event }) => ({
            clock: stepOf(context.clock, resultOf(context), context.startMs, event.breakpoints),
          })),
        },
        SEEK: {
          actions: assign(({ context, event }) => ({
            clock: { ...moved(context.clock, event.toMs, resultOf(context).endMs), playing: false, line: undefined },
          })),
        },
        WHOLE: {
          actions: assign(({ context }) => ({
            clock: { ...moved(context.clock, undefined, resultOf(context).endMs), playing: false, line: undefined },
          })),
        },
        SET_LEVEL: { actions: assign(({ context, event }) => ({ clock: { ...context.clock, level: event.level } })) },
        SET_SPEED: { actions: assign(({ context, event }) => ({ clock: { ...context.clock, speed: event.speed } })) },
      },
    },
    /** Cannot compare: the form's errors, or the sides' (each said with its side). */
    failed: {},
  },
});

export type CompareState = "idle" | "running" | "comparing" | "done" | "failed";
