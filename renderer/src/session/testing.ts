/** For tests: a worker that runs the live session in this thread. */
import { createSimulationSession, type SimulationSessionOptions } from "../../../app/sim/session.ts";
import type { SessionCommand } from "../../../app/sim/sessionProtocol.ts";
import { handleWorkerRequest, type WorkerRequest } from "../../../app/sim/worker.ts";
import type { WorkerLike } from "./port.ts";

/**
 * A worker running the live session (app/sim/session.ts) in this thread, as app/sim/worker.ts does in its own;
 * `options` as the session takes them (a wall clock that lets every progress report through, say).
 */
export function liveWorker(options: SimulationSessionOptions = {}): WorkerLike {
  const listeners: ((event: { data: unknown }) => void)[] = [];
  const session = createSimulationSession((message) => {
    for (const l of listeners) l({ data: structuredClone(message) });
  }, options);
  return {
    postMessage(message) {
      void session.handle(message as SessionCommand);
    },
    addEventListener(type: string, listener: (event: never) => void) {
      if (type === "message") listeners.push(listener as (event: { data: unknown }) => void);
    },
    terminate() {
      void session.handle({ type: "cancel" });
    },
  } as WorkerLike;
}

/**
 * A worker that answers app/sim/worker.ts's one-shot requests (`run`) in this thread, as that worker does
 * (handleWorkerRequest); `log` gets what it was asked and its end (`post run`, `terminate`).
 */
export function oneShotWorker(log: string[] = []): () => WorkerLike {
  return () => {
    let onMessage: ((event: { data: unknown }) => void) | undefined;
    return {
      postMessage(message) {
        log.push(`post ${(message as WorkerRequest).type}`);
        void handleWorkerRequest(message as WorkerRequest).then((reply) => onMessage?.({ data: reply }));
      },
      addEventListener(type: "message" | "error", listener: (event: never) => void) {
        if (type === "message") onMessage = listener as (event: { data: unknown }) => void;
      },
      terminate() {
        log.push("terminate");
      },
    };
  };
}
