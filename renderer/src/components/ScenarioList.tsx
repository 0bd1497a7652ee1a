import type { ScenarioSummary } from "../../../main/channels.ts";

export interface ScenarioListProps {
  readonly scenarios: readonly ScenarioSummary[] | undefined;
  readonly selected: string | undefined;
  readonly onSelect: (file: string) => void;
}

/** The scenario library: one entry per file, or a word on why there is none. */
export function ScenarioList({ scenarios, selected, onSelect }: ScenarioListProps) {
  return (
    <nav aria-label="Scenarios" className="scenario-list">
      <h2>Scenarios</h2>
      {scenarios === undefined ? (
        <p className="muted">Loading…</p>
      ) : scenarios.length === 0 ? (
        <p className="muted" data-testid="no-scenarios">
          No scenarios yet. Scenario files (YAML) in the <code>scenarios/</code> folder appear here.
        </p>
      ) : (
        <ul>
          {scenarios.map((s) => (
            <li key={s.file}>
              <button aria-current={s.file === selected} title={s.description} onClick={() => onSelect(s.file)}>
                {s.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
