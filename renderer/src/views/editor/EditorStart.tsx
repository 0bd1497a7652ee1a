import { groupOf, type LibraryEntry } from "../../model/library.ts";

export interface EditorStartProps {
  readonly scenarios: readonly LibraryEntry[] | undefined;
  readonly onNew: () => void;
  readonly onDuplicate: (entry: LibraryEntry) => void;
}

/** The editor with nothing open: a new scenario from the template, or a copy of a teaching scenario. */
export function EditorStart({ scenarios, onNew, onDuplicate }: EditorStartProps) {
  const teaching = (scenarios ?? []).filter((s) => groupOf(s.file) === "teaching");
  return (
    <section aria-label="New scenario" className="editor-start">
      <h2>Write a scenario</h2>
      <p>
        Start from the template (one message from a.example to b.example) or from a copy of a teaching scenario. The
        editor completes keys and values from the scenario schema and marks what the parser refuses as you type; Run
        plays the text as it is.
      </p>
      <p>
        <button className="primary" onClick={onNew}>
          New scenario
        </button>
      </p>
      <h3>Teaching scenarios</h3>
      <ul>
        {teaching.map((s) => (
          <li key={s.file}>
            <button onClick={() => onDuplicate(s)} aria-label={`Duplicate ${s.name} into the editor`}>
              Duplicate
            </button>
            <span>
              <strong>{s.name}</strong> <span className="muted">{s.description.slice(0, 140)}</span>
              {s.description.length > 140 ? "…" : ""}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
