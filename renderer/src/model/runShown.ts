/**
 * What the run view shows of the run at a moment, as data: the phase it says (never "Finished" beside
 * views that have not drawn the end), where its clock is, how far its scrubber spans, and how often the views
 * that draw the whole run follow a playing one.
 */
import type { PlaybackContext, PlaybackPhase } from "../session/machine.ts";

/** Wall ms between two drawings of the timeline, sequence, inspector and statechart while a run plays. */
export const HEAVY_VIEWS_EVERY_MS = 250;
/**
 * The same at speed max: a run there is over in a second or so, and drawing those views while it runs took
 * the CPU the simulation worker needed; they draw its end right after the log.
 */
export const HEAVY_VIEWS_AT_MAX_EVERY_MS = 1000;

/**
 * The phase said: until the views have drawn the last events (`drawnAll`), a finished run is still playing (a
 * live one) or loading (an opened trace), so that the phase never says "Finished" beside outcomes that are not.
 */
export function shownPhaseOf(phase: PlaybackPhase, drawnAll: boolean, live: boolean): PlaybackPhase {
  return phase === "finished" && !drawnAll ? (live ? "playing" : "loading") : phase;
}

/** How often the whole-run views draw a playing run: a jump, "run to the end" and speed max as at max. */
export function heavyViewsEveryMs(context: Pick<PlaybackContext, "speed" | "drive">): number {
  return context.speed === "max" || (context.drive !== undefined && context.drive.kind !== "play")
    ? HEAVY_VIEWS_AT_MAX_EVERY_MS
    : HEAVY_VIEWS_EVERY_MS;
}

/** The clock: at the end, where the run ended (as `mailscope run` says, not the horizon it was allowed). */
export function runPlayheadMs(
  finished: boolean,
  context: Pick<PlaybackContext, "result" | "progress">,
  startMs: number,
): number {
  return finished && context.result ? context.result.endMs : (context.progress?.playheadMs ?? startMs);
}

/** The run's end once it is known: kept after a jump back; an opened trace's, its result's. */
export function knownEndOf(context: Pick<PlaybackContext, "knownEndMs" | "source" | "result">): number | undefined {
  return context.knownEndMs ?? (context.source?.kind === "trace" ? context.result?.endMs : undefined);
}
