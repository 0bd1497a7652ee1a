import { lessonPath, titleOf, type LibraryEntry } from "../../model/library.ts";
import "./library.css";

export interface WelcomeProps {
  /** The bundled scenarios (undefined while they load). */
  readonly scenarios: readonly LibraryEntry[] | undefined;
  readonly onOpen: (entry: LibraryEntry) => void;
}

/** The run view with nothing chosen: what Mailscope does, and the "Start here" lessons. */
export function Welcome({ scenarios, onOpen }: WelcomeProps) {
  const lessons = lessonPath(scenarios ?? []);
  const first = lessons[0];
  const last = lessons.at(-1);
  return (
    <section aria-label="Welcome" className="welcome">
      <h2>Choose a scenario</h2>
      <p>
        Mailscope runs real senders and receivers of the protocol against a simulated DNS and network, on a virtual
        clock, and shows every retry, SMTP fallback and DSN.
      </p>
      {first !== undefined && last !== undefined && (
        <section aria-labelledby="start-here-heading" className="panel start-here">
          <h3 id="start-here-heading">New here? Start here</h3>
          <p>
            {lessons.length === 1
              ? "One lesson"
              : `${lessons.length} lessons, in order, from “${titleOf(first)}” to “${titleOf(last)}”`}
            . Each says what to watch for, pauses at its notes as it plays, and leads to the next; they are first in the
            library too.
          </p>
          <ol className="start-here-list">
            {lessons.map((l) => (
              <li key={l.file}>
                <button className="link" onClick={() => onOpen(l)}>
                  {titleOf(l)}
                </button>
                {l.summary !== undefined && l.summary !== "" && <span className="muted"> — {l.summary}</span>}
              </li>
            ))}
          </ol>
          <p>
            <button className="primary" onClick={() => onOpen(first)}>
              Start the first lesson
            </button>
          </p>
        </section>
      )}
      <p className="muted">
        Or pick any scenario in the library, open a scenario file (YAML) or a trace, or drop one on the window. Space
        plays and pauses, → steps, L changes what a step goes to (an event, an attempt, a decision), B puts a breakpoint
        on events like the one the run stopped at.
      </p>
    </section>
  );
}
