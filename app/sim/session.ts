/**
 * A live, controllable simulation run: the logic behind the app's simulation
 * worker (app/sim/worker.ts), speaking the messages of app/sim/sessionProtocol.ts.
 * It needs no Worker: give it a `post` function and hand it commands, in Node
 * as in a browser.
 *
 * The session builds the world as `mailscope run` does (loadScenario, then
 * createWorld), drives the world's scheduler with its own controls
 * (`runRealtime` at a speed, `step`, `pause`) instead of `world.run()`, and
 * ends exactly where `world.run()` ends: when no event is left, or at the
 * horizon. It then checks the run with `checkScenarioRun`, the function
 * `mailscope run` uses, so the trace — and its hash — is the same as the one
 * `runScenarioText` gives for the same scenario and seed, however the run was
 * paused, stepped, run to a time and resumed on the way: the scheduler orders
 * events by (virtual time, sequence) only, and a pause falls between events.
 * For the same reason a jump to an earlier time builds the world again and
 * runs it to that time: it lands where a run from the start to that time does.
 * A step or a breakpoint stops at one trace event (a {@link StopFinder} reads
 * each event the world traces); the events the same event of the simulation
 * traced after it are held back, not undone, and shown by the next command.
 *
 * Wall time is read here for one thing: to send at most one message per
 * frame (~16 ms) while running. It never reaches the simulation.
 */
import type { SessionCommand } from "./sessionProtocol.ts";
import { dispatch, show } from "./sessionCommands.ts";
import { refuse, type SessionPhase, type SessionPost, type SessionState } from "./sessionState.ts";
import type { WorldOptions } from "./world.ts";
import { errorMessage } from "../errorMessage.ts";

export type { SessionPhase, SessionPost } from "./sessionState.ts";

/** What {@link createSimulationSession} may be told. */
export interface SimulationSessionOptions {
  /** Least wall time between two `events` / `progress` messages while running, ms. Default 16 (one animation frame). */
  readonly frameMs?: number;
  /** The wall clock that paces those messages, ms. Default `performance.now()`. Never read by the simulation. */
  readonly wallClock?: () => number;
  /** How the world's scheduler yields to the host (see world.ts). Default the world's. */
  readonly scheduler?: WorldOptions["scheduler"];
}

/** A session: one run at a time. */
export interface SimulationSession {
  /**
   * Obeys one command; never throws (a command that cannot be obeyed is
   * answered with an `error` message). Resolves when the command has been
   * carried out: `play`, `resume`, `runTo` and `finish` when the run stops
   * (paused, at its time, finished), `pause` once `paused` is posted. A worker
   * does not wait for it: `pause` must reach a running session.
   */
  handle(command: SessionCommand): Promise<void>;
  readonly phase: SessionPhase;
}

const DEFAULT_FRAME_MS = 16;

/**
 * A live session that posts its messages through `post`. Its state is one {@link SessionState}; the commands
 * (sessionCommands.ts), the drive (sessionDrive.ts) and the start (sessionStart.ts) work on it.
 */
export function createSimulationSession(post: SessionPost, options: SimulationSessionOptions = {}): SimulationSession {
  const s: SessionState = {
    send: (message, transfer) => {
      try {
        post(message, transfer);
      } catch {
        // A closed port or a throwing test double: nothing to tell it then.
      }
    },
    frameMs: options.frameMs ?? DEFAULT_FRAME_MS,
    wallClock: options.wallClock ?? (() => performance.now()),
    scheduler: options.scheduler,
    phase: "empty",
    live: undefined,
    interrupt: undefined,
    breakpoints: [],
    current: undefined,
  };
  return {
    get phase() {
      return s.phase;
    },
    async handle(command) {
      try {
        if (typeof command !== "object" || command === null) {
          return s.send({ type: "error", message: `A command is an object with a type, not ${show(command)}.` });
        }
        await dispatch(s, command);
      } catch (error) {
        // A bug, not a command's fault: say so, and leave the session where it can be started again.
        if (s.phase === "starting") s.phase = "empty";
        refuse(
          s,
          String((command as { type?: unknown } | null)?.type ?? "command"),
          `it failed: ${errorMessage(error)}`,
        );
      }
    },
  };
}
