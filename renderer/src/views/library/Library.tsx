import { useMemo, useState } from "react";
import "./library.css";
import { groupLibrary, lessonPath, titleOf, type LibraryEntry } from "../../model/library.ts";

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

/**
 * The scenario library: grouped (opened files, the "Start here" lessons in order, teaching, state table, errors
 * table, gaps, others), searchable; each scenario by its title, its file's name and its one-line summary.
 */
export function Library({ scenarios, opened, selected, results, onSelect, onNew, onDuplicate, onEdit }: LibraryProps) {
  const [query, setQuery] = useState("");
  const groups = useMemo(() => groupLibrary(scenarios ?? [], query, opened), [scenarios, query, opened]);
  // A lesson's number is its place in the whole path, also while a search shows a few of them.
  const path = useMemo(() => lessonPath(scenarios ?? []), [scenarios]);
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
          <section key={g.id} aria-labelledby={`library-${g.id}`} className={`library-group ${g.id}`}>
            <h3 id={`library-${g.id}`}>{g.title}</h3>
            {g.id === "start" && (
              <p className="library-intro">Lessons in order: each says what to watch for and leads to the next.</p>
            )}
            <ul>
              {g.entries.map((s) => {
                const result = results[s.file];
                const id = `entry-${g.id}-${s.file}`;
                const title = titleOf(s);
                const summary = s.summary ?? s.description;
                return (
                  <li key={`${g.id}:${s.file}`} className="entry-row">
                    <div className="entry-main">
                      {/* Named by its title and its file's name (what a search or a test looks for); the summary describes it. */}
                      <button
                        aria-current={s.file === selected}
                        title={s.description}
                        {...(summary !== "" && { "aria-describedby": `${id}-summary` })}
                        onClick={() => onSelect(s)}
                      >
                        <span className="entry-head">
                          <span className="entry-name" id={id}>
                            {g.id === "start" && <span className="entry-number">{path.indexOf(s) + 1}. </span>}
                            {title}
                          </span>
                          {result !== undefined && (
                            <span className={result ? "badge pass" : "badge fail"}>{result ? "passed" : "failed"}</span>
                          )}
                        </span>
                        {title !== s.name && <span className="entry-file">{s.name}</span>}
                      </button>
                      {summary !== "" && (
                        // Shown, not only a tooltip; a click on it chooses the scenario too (the button is the keyboard's way).
                        <p className="entry-summary" id={`${id}-summary`} onClick={() => onSelect(s)}>
                          {summary}
                        </p>
                      )}
                    </div>
                    {(g.id === "teaching" || g.id === "start") && onDuplicate && (
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
