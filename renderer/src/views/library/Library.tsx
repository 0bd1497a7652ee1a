import { useMemo, useState } from "react";
import { groupLibrary, type LibraryEntry } from "../../model/library.ts";

export interface LibraryProps {
  readonly scenarios: readonly LibraryEntry[] | undefined;
  readonly opened: readonly LibraryEntry[];
  readonly selected: string | undefined;
  /** The last check result of each file run in this window: true passed, false failed. */
  readonly results: Readonly<Record<string, boolean>>;
  readonly onSelect: (entry: LibraryEntry) => void;
  /** The scenario editor: a new scenario, a copy of a teaching scenario, an opened file edited in place. */
  readonly onNew?: () => void;
  readonly onDuplicate?: (entry: LibraryEntry) => void;
  readonly onEdit?: (entry: LibraryEntry) => void;
}

/** The scenario library: grouped (opened files, teaching, state table, errors table, gaps, others), searchable. */
export function Library({ scenarios, opened, selected, results, onSelect, onNew, onDuplicate, onEdit }: LibraryProps) {
  const [query, setQuery] = useState("");
  const groups = useMemo(() => groupLibrary(scenarios ?? [], query, opened), [scenarios, query, opened]);
  return (
    <nav aria-label="Scenarios" className="scenario-list">
      <h2>Scenarios</h2>
      <input
        type="search"
        className="library-search"
        placeholder="Search scenarios"
        aria-label="Search scenarios"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {onNew && (
        <button className="new-scenario" onClick={onNew}>
          New scenario…
        </button>
      )}
      {scenarios === undefined ? (
        <p className="muted">Loading…</p>
      ) : scenarios.length === 0 && opened.length === 0 ? (
        <p className="muted" data-testid="no-scenarios">
          No scenarios yet. Scenario files (YAML) in the <code>scenarios/</code> folder appear here.
        </p>
      ) : groups.length === 0 ? (
        <p className="muted">No scenario matches “{query}”.</p>
      ) : (
        groups.map((g) => (
          <section key={g.id} aria-labelledby={`library-${g.id}`}>
            <h3 id={`library-${g.id}`}>{g.title}</h3>
            <ul>
              {g.entries.map((s) => {
                const result = results[s.file];
                return (
                  <li key={`${g.id}:${s.file}`} className="entry-row">
                    <button aria-current={s.file === selected} title={s.description} onClick={() => onSelect(s)}>
                      <span className="entry-name" id={`entry-${g.id}-${s.file}`}>
                        {s.name}
                      </span>
                      {result !== undefined && (
                        <span className={result ? "badge pass" : "badge fail"}>{result ? "passed" : "failed"}</span>
                      )}
                    </button>
                    {g.id === "teaching" && onDuplicate && (
                      <button
                        className="entry-action"
                        aria-describedby={`entry-${g.id}-${s.file}`}
                        title="Duplicate into the editor"
                        onClick={() => onDuplicate(s)}
                      >
                        Duplicate
                      </button>
                    )}
                    {/* A trace or a bug bundle is a recorded run: nothing in it to edit. */}
                    {g.id === "opened" && onEdit && s.kind !== "trace" && (
                      <button
                        className="entry-action"
                        aria-describedby={`entry-${g.id}-${s.file}`}
                        title="Edit in the editor"
                        onClick={() => onEdit(s)}
                      >
                        Edit
                      </button>
                    )}
                  </li>
                );
              })}
            </ul>
          </section>
        ))
      )}
    </nav>
  );
}
