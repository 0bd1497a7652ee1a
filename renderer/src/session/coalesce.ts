/**
 * The session's messages as the page takes them in: `events` and `progress`
 * messages that arrive before the page's next frame become one message, so
 * the run view draws once per frame whatever the worker's cadence and however
 * long a drawing took (without it, while the views drew one batch,
 * the worker's next ones queued up and each was drawn in turn, taking the
 * CPU the worker needed). Every other message (stepped, paused, finished, …)
 * first hands over what is held, then itself, at once: nothing is reordered,
 * and a run's end is never held back.
 */
import type { SessionMessage, SessionProgress } from "../../../app/sim/sessionProtocol.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";

/** Calls `fn` once, soon (the next frame); returns a function that cancels it. */
export type FrameScheduler = (fn: () => void) => () => void;

/**
 * The next animation frame; or 100 ms, whichever comes first (a hidden page
 * gets no frames, and its clock should still move now and then). Without
 * animation frames (Node), 16 ms.
 */
export const nextFrame: FrameScheduler = (fn) => {
  if (typeof requestAnimationFrame === "undefined") {
    const id = setTimeout(fn, 16);
    return () => clearTimeout(id);
  }
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    fn();
  };
  const frame = requestAnimationFrame(once);
  const timer = setTimeout(once, 100);
  return () => {
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
  };
};

/** Takes the session's messages; hands them to `emit`, `events` and `progress` merged until `schedule` fires. */
export function coalesceMessages(
  emit: (message: SessionMessage) => void,
  schedule: FrameScheduler,
): { take(message: SessionMessage): void; flush(): void; dispose(): void } {
  let events: RecordedEvent[] = [];
  let progress: SessionProgress | undefined;
  let cancel: (() => void) | undefined;

  const flush = (): void => {
    cancel?.();
    cancel = undefined;
    if (progress === undefined) return;
    const held = { events, progress };
    events = [];
    progress = undefined;
    emit(held.events.length > 0 ? { type: "events", ...held } : { type: "progress", progress: held.progress });
  };

  return {
    take(message) {
      if (message.type === "events" || message.type === "progress") {
        if (message.type === "events") {
          for (const e of message.events) events.push(e);
        }
        progress = message.progress;
        if (cancel === undefined) {
          const scheduled = schedule(flush);
          // A scheduler that called flush at once left nothing to cancel.
          if (progress !== undefined) cancel = scheduled;
        }
        return;
      }
      flush();
      emit(message);
    },
    flush,
    dispose() {
      cancel?.();
      cancel = undefined;
      events = [];
      progress = undefined;
    },
  };
}
