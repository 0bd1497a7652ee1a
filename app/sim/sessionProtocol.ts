/**
 * The messages between the app and a simulation session in a Web Worker
 * (ARCHITECTURE.md "Where things run"). The UI posts {@link SessionCommand}s;
 * the worker answers with {@link SessionMessage}s. One worker runs one session
 * at a time; two runs side by side (two readings) use two workers.
 *
 * Life of a session:
 *
 *     start ──► "ready" (the scenario's summary) or "invalid" (file:line:column errors)
 *     play(speed) / resume(speed) ──► "events" batches + "progress" … ──► "paused" | "finished"
 *     pause ──► "paused"
 *     step ──► "events" (that event's trace events) + "stepped"
 *     runTo(timeMs), a later time ──► "events" … ──► "paused" (at that time) | "finished"
 *     runTo(timeMs), an earlier time ──► "rewound" + "events" … ──► "paused" (at that time) | "finished"
 *     setSpeed(speed) ──► takes effect at once, also mid-wait
 *     finish ──► runs what is left as fast as possible ──► "finished"
 *     cancel ──► "cancelled"; the session is gone
 *
 * Whichever command takes the run to its end (no event left, or the horizon:
 * where `mailscope run` stops), the session checks it and posts "finished"
 * after that command's own messages. `resume` plays at the speed it carries,
 * else at the speed last given (play, resume or setSpeed; real time before
 * any). After "finished" or "cancelled", a new "start" may follow.
 *
 * `runTo` runs as fast as possible whatever the speed, and is taken while
 * ready, paused or running (it then takes over the run: a jump during play)
 * and, to a time before the run's end, after "finished". To a time before
 * the virtual clock it seeks backwards: a run cannot go back, but it is
 * deterministic, so the session builds the world again, says "rewound" (the
 * run is at its start again; the app keeps the first `progress.events` events
 * it has, none, and drops the rest), and runs the new world to that time as a
 * `runTo` from "ready" does, posting its events again: it lands on exactly
 * the state a forward run to that time reaches (the same events, the same
 * last seq). A `pause` interrupts it as it interrupts any run.
 *
 * "finished" carries the invariants and expectations, checked exactly as
 * `mailscope run` checks them, and the trace hash. Any command that cannot be
 * obeyed in the current state is answered with an "error" that says why in
 * words for the person at the controls (no command names, no ISO timestamps:
 * times are offsets from the start, `+2:00:00`) and names the command it
 * refuses; the session stays as it was. Nothing here throws across the worker
 * boundary.
 *
 * Event batches: at most one "events" message per animation frame (~16 ms
 * of wall time) while playing, each holding the trace events recorded since
 * the last batch, in order, with their `seq`s contiguous across batches. The
 * UI appends them; the concatenation of every batch is the trace's `events`.
 */
import type { CheckResult, RecordedEvent, Trace } from "../trace/schema.ts";
import type { LintReceiverConfig } from "../receiver/lintChecks.ts";

/** Playback speed: virtual ms per wall ms (1 = real time, 60 = a minute a second), or "max" for as fast as possible. */
export type PlaybackSpeed = number | "max";

/** Starts a session: builds the world of a scenario, runs nothing yet. */
export interface StartCommand {
  readonly type: "start";
  /** The scenario's YAML. */
  readonly text: string;
  /** Its file name, for errors (`file:line:column`) and the trace. */
  readonly file?: string;
  readonly seed?: number | string;
  /** Readings applied after the scenario's, as `--set` gives them: `[["G16", "4h"]]`. */
  readonly readings?: readonly (readonly [string, string])[];
  /** The bytes of the scenario's `eml:` files, by the path the scenario names. */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
  /**
   * Why the shell could not read each `eml:` path that has no bytes (the desktop app's main reads them when it
   * opens the scenario): the run says it at the message's `eml` field in place of "not given".
   */
  readonly emlErrors?: Readonly<Record<string, string>>;
  /** Keep whole HTTP bodies in the trace (the inspector shows them). Default false. */
  readonly recordBodies?: boolean;
  /** The Mailscope version for the trace. */
  readonly mailscope?: string;
}

export type SessionCommand =
  | StartCommand
  | { readonly type: "play"; readonly speed: PlaybackSpeed }
  | { readonly type: "setSpeed"; readonly speed: PlaybackSpeed }
  | { readonly type: "pause" }
  /** Plays on from a pause; at `speed` when given (the app always gives the speed it shows), else the last one. */
  | { readonly type: "resume"; readonly speed?: PlaybackSpeed }
  | { readonly type: "step" }
  | { readonly type: "runTo"; readonly timeMs: number }
  | { readonly type: "finish" }
  | { readonly type: "cancel" };

/** One fault of the scenario, as the summary lists it. */
export interface FaultSummary {
  readonly id: string;
  readonly kind: string;
  /** The hosts or domains it hits, as the scenario scopes it. */
  readonly scope: string;
  readonly fromMs: number;
  readonly untilMs?: number;
  readonly probability?: number;
}

/** A receiver of a run: its origin and what of its configuration the receiver's checks read. */
export interface ReceiverOfRun {
  readonly origin: string;
  readonly config: LintReceiverConfig;
}

/** What a started session reports before anything runs. */
export interface SessionSummary {
  readonly name: string;
  readonly description: string;
  readonly file?: string;
  readonly seed: number | string;
  /** Gap ID → reading in force, as the trace writes it. */
  readonly readings: Readonly<Record<string, string>>;
  readonly startMs: number;
  /** Where the run stops at the latest. */
  readonly horizonMs: number;
  readonly domains: readonly {
    readonly name: string;
    readonly receiver: boolean;
    /**
     * Where its receiver listens and what of its configuration the receiver's checks read (served
     * domains, capabilities, G3 and G19): the exchange inspector lints a recorded request with it.
     */
    readonly receiverAt?: ReceiverOfRun;
  }[];
  readonly messages: readonly {
    readonly id: string;
    readonly messageId: string;
    readonly atMs: number;
    readonly from: string | null;
    readonly to: readonly string[];
    readonly senderDomain: string;
  }[];
  readonly faults: readonly FaultSummary[];
}

/** Where the run is. */
export interface SessionProgress {
  /** The virtual clock. */
  readonly nowMs: number;
  /** Where the playhead is drawn (between events while waiting wall time); never behind nowMs. */
  readonly playheadMs: number;
  /** Trace events recorded so far. */
  readonly events: number;
  /** Scheduler events still queued. */
  readonly pendingEvents: number;
  readonly nextEventAtMs?: number;
}

/** The checks of a finished run, as `mailscope run` reports them. */
export interface SessionResult {
  readonly passed: boolean;
  /** No event was left: the run ended before the horizon. */
  readonly complete: boolean;
  readonly endMs: number;
  readonly invariants: readonly CheckResult[];
  readonly expectations: readonly CheckResult[];
  /** A failure inside the simulation, if any. */
  readonly error?: string;
  /** `traceHash` of the whole trace: equal to `mailscope run`'s for the same scenario and seed. */
  readonly hash: string;
  /** `mailscope run <file> --seed N --set …`. */
  readonly reproduce: string;
  /** The trace document's head (everything but `events`, which the batches carried). */
  readonly trace: Omit<Trace, "events">;
}

export type SessionMessage =
  | { readonly type: "ready"; readonly summary: SessionSummary }
  | { readonly type: "invalid"; readonly errors: readonly string[] }
  | { readonly type: "events"; readonly events: readonly RecordedEvent[]; readonly progress: SessionProgress }
  | { readonly type: "progress"; readonly progress: SessionProgress }
  | { readonly type: "stepped"; readonly progress: SessionProgress; readonly label?: string }
  | { readonly type: "paused"; readonly progress: SessionProgress }
  | { readonly type: "finished"; readonly progress: SessionProgress; readonly result: SessionResult }
  /** A runTo went back: the run starts again; keep the first `progress.events` events, drop the rest. */
  | { readonly type: "rewound"; readonly progress: SessionProgress }
  | { readonly type: "cancelled" }
  | {
      readonly type: "error";
      /** Why, in words for the person at the controls: `Cannot step: the run is playing; pause it first.` */
      readonly message: string;
      /** The command refused, when the error answers one. */
      readonly command?: string;
    };

/** What a command does, in the words a refusal uses: "Cannot jump to a time: …". */
const DOING: Readonly<Record<SessionCommand["type"], string>> = {
  start: "start a run",
  play: "play",
  setSpeed: "change the speed",
  pause: "pause",
  resume: "play on",
  step: "step",
  runTo: "jump to a time",
  finish: "run to the end",
  cancel: "stop the run",
};

/**
 * The error that refuses `command`, saying why in words for the person at the
 * controls: `Cannot jump to a time: the run is being checked.` Every session
 * (app/sim/session.ts, the app's played-back trace) refuses with it.
 */
export function refusal(command: string, why: string): Extract<SessionMessage, { type: "error" }> {
  const doing = Object.hasOwn(DOING, command) ? DOING[command as SessionCommand["type"]] : undefined;
  return {
    type: "error",
    message: doing !== undefined ? `Cannot ${doing}: ${why}.` : `Unknown command ${JSON.stringify(command)}: ${why}.`,
    command,
  };
}
