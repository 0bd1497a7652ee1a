import type { LessonPlace, LibraryEntry } from "../../model/library.ts";
import { titleOf } from "../../model/library.ts";
import { noteWhen, type AnnotationPoint } from "../../model/lesson.ts";
import "./lesson.css";

export interface LessonPanelProps {
  /** The scenario's place in the "Start here" path, if it is a lesson. */
  readonly place?: LessonPlace | undefined;
  /** Opens another lesson (the next, the previous). */
  readonly onOpen?: ((entry: LibraryEntry) => void) | undefined;
  /** The scenario's annotations, placed on the run so far. */
  readonly notes: readonly AnnotationPoint[];
  readonly startMs: number;
  readonly finished: boolean;
  /** The notes the playhead reached last, at once (usually one; none before the first). */
  readonly reached: readonly AnnotationPoint[];
  /** The note the run is paused at (played as a lesson, its notes are breakpoints), if it is. */
  readonly pausedAt: number | undefined;
  readonly pauseAtNotes: boolean;
  readonly onPauseAtNotes: (on: boolean) => void;
  /** Plays on from a note's pause. */
  readonly onContinue?: (() => void) | undefined;
  /** Marks a note's event in the log. */
  readonly onEvent?: ((seq: number) => void) | undefined;
}

/**
 * A lesson of the "Start here" path as the run view shows it: its number, what to watch for, the
 * scenario's notes with where each is in the run (the one reached last marked; the run pauses at them when
 * played as a lesson), and at the end the next lesson. A scenario that is no lesson but has notes shows
 * the notes alone.
 */
export function LessonPanel(p: LessonPanelProps) {
  const { place } = p;
  if (place === undefined && p.notes.length === 0) return null;
  const heading = place === undefined ? "Notes" : `Lesson ${place.number} of ${place.total}`;
  return (
    <section aria-labelledby="lesson-heading" className="panel lesson">
      <div className="panel-head">
        <h3 id="lesson-heading">{heading}</h3>
        {place !== undefined && <span className="muted">Start here</span>}
        {place?.previous && p.onOpen && (
          <button className="link lesson-previous" onClick={() => place.previous && p.onOpen?.(place.previous)}>
            ← Previous lesson: {titleOf(place.previous)}
          </button>
        )}
      </div>
      {p.reached.length > 0 && (
        <div className="lesson-reached" role="status" data-testid="lesson-reached">
          <ul>
            {p.reached.map((n) => (
              <li key={n.index}>
                <span className="lesson-reached-at">
                  {p.pausedAt === n.index ? "Paused at a note" : "Note"}, {noteWhen(n, p.startMs, p.finished)}:
                </span>{" "}
                <span>{n.note}</span>
              </li>
            ))}
          </ul>
          {p.pausedAt !== undefined && p.onContinue && (
            <button className="primary lesson-continue" onClick={p.onContinue}>
              Continue
            </button>
          )}
        </div>
      )}
      {place !== undefined && place.lesson.watchFor.length > 0 && (
        <>
          <h4 id="lesson-watch">What to watch for</h4>
          <ul aria-labelledby="lesson-watch" className="lesson-watch">
            {place.lesson.watchFor.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </>
      )}
      {p.notes.length > 0 && (
        <>
          <div className="lesson-notes-head">
            <h4 id="lesson-notes">Notes on this run</h4>
            <label>
              <input type="checkbox" checked={p.pauseAtNotes} onChange={(e) => p.onPauseAtNotes(e.target.checked)} />{" "}
              Pause at each note
            </label>
          </div>
          <ol aria-labelledby="lesson-notes" className="lesson-notes">
            {p.notes.map((n) => {
              const isReached = p.reached.some((r) => r.index === n.index);
              return (
                <li
                  key={n.index}
                  data-note={n.index}
                  data-time={n.timeMs === undefined ? undefined : n.timeMs - p.startMs}
                  aria-current={isReached ? "step" : undefined}
                  className={isReached ? "reached" : n.timeMs === undefined ? "pending" : undefined}
                >
                  <span className="lesson-note-at">{noteWhen(n, p.startMs, p.finished)}</span>{" "}
                  <span className="lesson-note-text">{n.note}</span>
                  {n.seq !== undefined && p.onEvent && (
                    <button
                      className="link lesson-note-event"
                      onClick={() => n.seq !== undefined && p.onEvent?.(n.seq)}
                    >
                      {n.on} in the log
                      <span className="visually-hidden"> (the note at {noteWhen(n, p.startMs, p.finished)})</span>
                    </button>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
      {place !== undefined && p.finished && (
        <p className="lesson-end" data-testid="lesson-end">
          {place.next ? (
            <>
              <span>End of lesson {place.number}. </span>
              {p.onOpen && (
                <button className="primary" onClick={() => place.next && p.onOpen?.(place.next)}>
                  Next lesson: {titleOf(place.next)} →
                </button>
              )}
            </>
          ) : (
            <span>
              That was the last lesson of Start here. The library has the rest: the state table, the errors table and
              the gaps; the Editor writes a scenario of your own.
            </span>
          )}
        </p>
      )}
    </section>
  );
}
