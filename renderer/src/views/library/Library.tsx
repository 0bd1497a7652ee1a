import { useMemo, useState } from "react";
import { groupLibrary, type LibraryEntry } from "../../model/library.ts";

export interface LibraryProps {
  readonly scenarios: readonly LibraryEntry[] | undefined;
  readonly opened: readonly LibraryEntry[];
  readonly selected: string | undefined;
  /** The last check result of each file run in this window: true passed, false failed. */
  readonly results: Readonly<Record<string, boolean>>;
  readonly onSelect: (entry: LibraryEntry) => void;
}

/** The scenario library: grouped (opened files, teaching, state table, errors table, gaps, others), searchable. */
export function Library({ scenarios, opened, selected, results, onSelect }: LibraryProps) {
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
                  <li key={`${g.id}:${s.file}`}>
                    <button aria-current={s.file === selected} title={s.description} onClick={() => onSelect(s)}>
                      <span className="entry-name">{s.name}</span>
                      {result !== undefined && (
                        <span className={result ? "badge pass" : "badge fail"}>{result ? "passed" : "failed"}</span>
                      )}
                    </button>
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
