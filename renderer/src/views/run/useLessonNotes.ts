import { useEffect, useMemo, useRef, useState } from "react";
import { annotationsOfText, dueNotes, notesOfRun, type AnnotationPoint } from "../../model/lesson.ts";
import type { ScenarioAnnotation } from "../../../../app/sim/lesson.ts";
import type { PlaybackContext, PlaybackEvent, PlaybackPhase } from "../../session/machine.ts";

const NONE: readonly AnnotationPoint[] = [];

export interface LessonNotes {
  /** The scenario's annotations (to place on other events: the timeline's, drawn a moment later). */
  readonly annotations: readonly ScenarioAnnotation[];
  /** The scenario's notes, placed on the run so far. */
  readonly points: readonly AnnotationPoint[];
  /** The notes the playhead reached last, at once (a live run's; one, unless it passed several in one go). */
  readonly reached: readonly AnnotationPoint[];
  /** Whether the run was paused at the last of `reached`. */
  readonly paused: boolean;
  readonly pauseAtNotes: boolean;
  readonly setPauseAtNotes: (on: boolean) => void;
  /** A jump to a time starts: the notes it passes are shown, not paused at. */
  readonly jumped: () => void;
}

/**
 * The scenario's notes in a run (issue 24): read from the run's scenario text (a live run's, an opened
 * trace's), placed on its events, and — while a live run plays — each shown as the playhead reaches it,
 * the run paused there when it is played as a lesson ("Pause at each note", ticked for a lesson opened from
 * the lesson path, unticked for one picked in the library). Each note
 * pauses the run once; notes at the same moment pause one after the other; a jump passes them. The pause
 * is the app's PAUSE sent when the batch that reached the note arrives: the run stops a frame or so of
 * virtual time past it (3 minutes at 3600×), or not at all when it ended first (the notes passed are all
 * shown then). The playback's own breakpoints can take `pausesBetween` (app/sim/lesson.ts) to stop on them.
 */
export function useLessonNotes(p: {
  readonly context: PlaybackContext;
  readonly phase: PlaybackPhase;
  /** Played as a lesson: "Pause at each note" starts ticked (again whenever the run's scenario changes). */
  readonly asLesson: boolean;
  readonly startMs: number;
  readonly send: (event: PlaybackEvent) => void;
}): LessonNotes {
  const { context, phase, startMs, send } = p;
  const text = context.source?.kind === "scenario" ? context.source.start.text : context.result?.trace.scenario.source;
  const annotations = useMemo(() => annotationsOfText(text), [text]);
  const points = useMemo(
    () => notesOfRun(annotations, context.events, startMs),
    [annotations, context.events, startMs],
  );
  const [pauseAtNotes, setPauseAtNotes] = useState(p.asLesson);
  // Another scenario, or the same one opened otherwise: the box as that run starts (React's state-from-props way).
  const [basis, setBasis] = useState({ asLesson: p.asLesson, text });
  if (basis.asLesson !== p.asLesson || basis.text !== text) {
    setBasis({ asLesson: p.asLesson, text });
    setPauseAtNotes(p.asLesson);
  }
  const [reached, setReached] = useState<
    { readonly points: readonly AnnotationPoint[]; readonly paused: boolean } | undefined
  >();
  const seen = useRef(new Set<number>());
  const jumping = useRef(false);
  const count = useRef(0);
  const live = context.source?.kind === "scenario";
  const playheadMs = context.progress?.playheadMs;
  const events = context.events.length;
  useEffect(() => {
    // A run started again (a restart, a new reading, a jump back): every note is ahead again.
    if (events < count.current || (events === 0 && seen.current.size > 0)) {
      seen.current = new Set();
      setReached(undefined);
    }
    count.current = events;
    if (phase !== "playing") jumping.current = false;
    if (!live || points.length === 0 || playheadMs === undefined) return;
    const due = dueNotes(points, seen.current, playheadMs);
    if (due.length === 0) return;
    const stop = pauseAtNotes && phase === "playing" && !jumping.current ? due.find((d) => d.pause) : undefined;
    // Up to the note paused at; the later ones are shown (and paused at) when the run plays on.
    const shown = stop === undefined ? due : due.slice(0, due.indexOf(stop) + 1);
    for (const d of shown) seen.current.add(d.index);
    if (stop !== undefined) send({ type: "PAUSE" });
    setReached({ points: shown, paused: stop !== undefined });
  }, [points, playheadMs, phase, pauseAtNotes, live, events, send]);
  return {
    annotations,
    points,
    reached: reached?.points ?? NONE,
    paused: reached?.paused === true,
    pauseAtNotes,
    setPauseAtNotes,
    jumped: () => {
      jumping.current = true;
    },
  };
}
