import { useEffect, useMemo, useRef, useState } from "react";
import { annotationsOfText, dueNotes, notesOfRun, pausedAtNote, type AnnotationPoint } from "../../model/lesson.ts";
import type { ScenarioAnnotation } from "../../../../app/sim/lesson.ts";
import type { PlaybackContext, PlaybackPhase } from "../../session/machine.ts";

const NONE: readonly AnnotationPoint[] = [];

export interface LessonNotes {
  /** The scenario's annotations (to place on other events: the timeline's, drawn a moment later). */
  readonly annotations: readonly ScenarioAnnotation[];
  /** The scenario's notes, placed on the run so far. */
  readonly points: readonly AnnotationPoint[];
  /** The notes the playhead reached last, at once (a live run's; one, unless it passed several in one go). */
  readonly reached: readonly AnnotationPoint[];
  /** The note the run is paused at (its index in the scenario's annotations), if it is. */
  readonly pausedAt: number | undefined;
}

/**
 * The scenario's notes in a run: read from the run's scenario text (a live run's, an opened
 * trace's), placed on its events, and — while a live run plays — each shown as the playhead reaches it. Played
 * as a lesson, the notes are breakpoints of the playback (the machine's `notePauses`, docs/decisions/0100):
 * the session stops at a note's event or time exactly, and `pausedAt` says which note it stopped at.
 */
export function useLessonNotes(p: {
  readonly context: PlaybackContext;
  readonly phase: PlaybackPhase;
  readonly startMs: number;
}): LessonNotes {
  const { context, phase, startMs } = p;
  const text = context.source?.kind === "scenario" ? context.source.start.text : context.result?.trace.scenario.source;
  const annotations = useMemo(() => annotationsOfText(text), [text]);
  const points = useMemo(
    () => notesOfRun(annotations, context.events, startMs),
    [annotations, context.events, startMs],
  );
  const [reached, setReached] = useState<readonly AnnotationPoint[]>(NONE);
  const seen = useRef(new Set<number>());
  const count = useRef(0);
  const live = context.source?.kind === "scenario";
  const playheadMs = context.progress?.playheadMs;
  const events = context.events.length;
  useEffect(() => {
    // A run started again (a restart, a new reading, a jump back): every note is ahead again.
    if (events < count.current || (events === 0 && seen.current.size > 0)) {
      seen.current = new Set();
      setReached(NONE);
    }
    count.current = events;
    if (!live || points.length === 0 || playheadMs === undefined) return;
    const due = dueNotes(points, seen.current, playheadMs);
    if (due.length === 0) return;
    for (const d of due) seen.current.add(d.index);
    setReached(due);
  }, [points, playheadMs, live, events]);
  return {
    annotations,
    points,
    reached,
    pausedAt: phase === "paused" ? pausedAtNote(context.stop) : undefined,
  };
}
