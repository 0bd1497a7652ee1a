/**
 * A lesson in the run view: the scenario's annotations placed on
 * the run (app/sim/lesson.ts), which of them the playhead has reached, which
 * one the playback is paused at, and what each says of itself — its time, or
 * that its event has not come yet or never came in this run. Pure; the lesson
 * panel uses it.
 */
import {
  annotationPoints,
  noteOfBreakpoint,
  type AnnotationPoint,
  type ScenarioAnnotation,
} from "../../../app/sim/lesson.ts";
import type { PlaybackStop } from "../../../app/sim/breakpoints.ts";
import { summarizeScenario } from "../../../app/sim/scenarioSummary.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { formatOffset } from "./time.ts";

export type { AnnotationPoint } from "../../../app/sim/lesson.ts";

/** The annotations of a scenario's text (none for a text that has none, or does not parse). */
export function annotationsOfText(text: string | undefined): readonly ScenarioAnnotation[] {
  return text === undefined ? [] : (summarizeScenario("scenario.yaml", text).annotations ?? []);
}

/** The annotations placed on the run so far. */
export function notesOfRun(
  annotations: readonly ScenarioAnnotation[],
  events: readonly RecordedEvent[],
  startMs: number,
): AnnotationPoint[] {
  return annotations.length === 0 ? [] : annotationPoints(annotations, events, startMs);
}

/**
 * The notes the playhead has reached and that were not reached before (`seen`), in time order: those placed
 * at or before `playheadMs`. The lesson panel shows them as reached.
 */
export function dueNotes(
  points: readonly AnnotationPoint[],
  seen: ReadonlySet<number>,
  playheadMs: number,
): AnnotationPoint[] {
  return points
    .filter((p) => !seen.has(p.index) && p.timeMs !== undefined && p.timeMs <= playheadMs)
    .sort((a, b) => (a.timeMs ?? 0) - (b.timeMs ?? 0) || a.index - b.index);
}

/**
 * Where a note is, in words: `+2:03:00`; for one whose event has not happened, `at the first smtp.handoff:
 * not reached yet`, or, once the run is over, `at the first smtp.handoff: not in this run`.
 */
export function noteWhen(point: AnnotationPoint, startMs: number, finished: boolean): string {
  if (point.timeMs !== undefined) return formatOffset(point.timeMs, startMs);
  return `${point.about}: ${finished ? "not in this run" : "not reached yet"}`;
}

/** The note a stop of the playback is at (its index in the scenario's annotations): a note's breakpoint made it. */
export function pausedAtNote(stop: PlaybackStop | undefined): number | undefined {
  return stop?.kind === "breakpoint" || stop?.kind === "time" ? noteOfBreakpoint(stop.id) : undefined;
}
