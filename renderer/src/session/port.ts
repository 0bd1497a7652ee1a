/**
 * The app's end of a simulation session: commands in, messages out
 * (app/sim/sessionProtocol.ts), over a module Web Worker running
 * app/sim/worker.ts. One port is one session; restarting makes a new one.
 *
 * Where the worker answers only the one-shot `run` request (it refuses
 * `start` with the message that says so), the port asks it for the whole
 * trace and plays that back with a {@link TracePlayer}: the UI sees the same
 * messages either way.
 */
import {
  refusal,
  type SessionCommand,
  type SessionMessage,
  type StartCommand,
} from "../../../app/sim/sessionProtocol.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { coalesceMessages, nextFrame, type FrameScheduler } from "./coalesce.ts";
import { realTicker, resultFromTrace, summaryFromTrace, TracePlayer, type Ticker } from "./replay.ts";

/** The one-shot request of app/sim/worker.ts (its WorkerRequest; not imported, as that module is typed for a worker scope). */
interface OneShotRequest {
  readonly type: "run";
  readonly text: string;
  readonly file?: string;
  readonly seed?: number | string;
  readonly readings?: readonly (readonly [string, string])[];
  readonly mailscope?: string;
  readonly wantTrace: true;
}

/** Its answer (WorkerReply). */
type OneShotReply =
  | {
      readonly type: "result";
      readonly hash: string;
      readonly passed: boolean;
      readonly complete: boolean;
      readonly trace?: Trace;
    }
  | { readonly type: "invalid"; readonly errors: readonly string[] }
  | { readonly type: "error"; readonly message: string };

/** A session as the playback machine drives it. */
export interface SessionPort {
  send(command: SessionCommand): void;
  /** Listens to the session's messages; returns a function that stops listening. */
  onMessage(listener: (message: SessionMessage) => void): () => void;
  /** Ends the session and its worker. */
  dispose(): void;
}

/** What the port needs of a Worker (a fake one in tests). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "error", listener: (event: { message?: string }) => void): void;
  terminate(): void;
}

/** The worker's refusal of a `start`: it answers only the one-shot request. */
function isOneShotRefusal(data: unknown): boolean {
  const d = data as { type?: unknown; message?: unknown } | null;
  return d?.type === "error" && typeof d.message === "string" && d.message.includes('{ type: "run"');
}

/** A port over the worker `make` creates; `description` is the scenario's, for a played-back summary. */
export function workerSessionPort(
  make: () => WorkerLike,
  options: {
    readonly description?: string;
    readonly ticker?: Ticker;
    /** When the live session's batches that came meanwhile are handed on as one (default: the next frame). */
    readonly frames?: FrameScheduler;
  } = {},
): SessionPort {
  const worker = make();
  const listeners = new Set<(message: SessionMessage) => void>();
  const emit = (message: SessionMessage): void => {
    for (const l of listeners) l(message);
  };
  const live = coalesceMessages(emit, options.frames ?? nextFrame);
  let start: StartCommand | undefined;
  let mode: "session" | "asking" | "replay" = "session";
  let player: TracePlayer | undefined;
  /** The breakpoints last sent before the trace came: the player gets them (a restart sends them at once). */
  let breakpoints: SessionCommand | undefined;
  let disposed = false;

  worker.addEventListener("message", (event) => {
    if (disposed) return;
    const data = event.data;
    if (mode === "session" && start !== undefined && isOneShotRefusal(data)) {
      mode = "asking";
      const request: OneShotRequest = {
        type: "run",
        text: start.text,
        wantTrace: true,
        ...(start.file !== undefined && { file: start.file }),
        ...(start.seed !== undefined && { seed: start.seed }),
        ...(start.readings !== undefined && { readings: start.readings }),
        ...(start.mailscope !== undefined && { mailscope: start.mailscope }),
      };
      worker.postMessage(request);
      return;
    }
    if (mode === "asking") {
      // The worker refused the commands sent after the start too (the breakpoints): the player takes those.
      if (isOneShotRefusal(data)) return;
      const reply = data as OneShotReply;
      if (reply.type === "invalid") return emit({ type: "invalid", errors: reply.errors });
      if (reply.type === "error") return emit({ type: "error", message: reply.message });
      if (reply.trace === undefined) return emit({ type: "error", message: "the worker sent no trace" });
      mode = "replay";
      const trace = reply.trace;
      const result = resultFromTrace(trace, reply);
      player = new TracePlayer(trace, result, emit, options.ticker ?? realTicker);
      if (breakpoints !== undefined) player.handle(breakpoints);
      return emit({ type: "ready", summary: summaryFromTrace(trace, options.description) });
    }
    live.take(data as SessionMessage);
  });
  worker.addEventListener("error", (event) => {
    if (!disposed)
      live.take({ type: "error", message: `the simulation worker failed: ${event.message ?? "unknown error"}` });
  });

  return {
    send(command) {
      if (disposed) return;
      if (command.type === "start") start = command;
      if (mode === "replay" && player !== undefined) return player.handle(command);
      if (command.type === "setBreakpoints") breakpoints = command;
      if (mode === "asking" && command.type === "setBreakpoints") return;
      if (mode === "asking") return emit(refusal(command.type, "the run is still loading"));
      worker.postMessage(command);
    },
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      live.dispose();
      if (player !== undefined) player.handle({ type: "cancel" });
      worker.terminate();
      listeners.clear();
    },
  };
}

/** The real worker: app/sim/worker.ts as a module worker (Vite bundles it). */
export function createSimulationWorker(): WorkerLike {
  return new Worker(new URL("../../../app/sim/worker.ts", import.meta.url), {
    type: "module",
    name: "mailscope-simulation",
  }) as unknown as WorkerLike;
}
