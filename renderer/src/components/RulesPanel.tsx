import { useMemo, useState } from "react";
import { rules } from "../../../app/protocol/rules.ts";
import type { CoverageReport } from "../../../app/trace/ruleEvidence.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { firedRules, readingEvidence } from "../model/ruleEvidence.ts";
import { filterRules } from "../rulesFilter.ts";
import { LibraryCoverage } from "../views/rules/LibraryCoverage.tsx";
import { ReadingsEvidence } from "../views/rules/ReadingsEvidence.tsx";
import { RuleFired } from "../views/rules/RuleFired.tsx";

/** The library's coverage once computed: the scenarios do not change while the app runs. */
let libraryCoverage: CoverageReport | undefined;

export interface RulesPanelProps {
  readonly initialQuery?: string;
  /** The current run's (or trace's) events, to say which rules fired; none before a run. */
  readonly events?: readonly RecordedEvent[];
  readonly startMs?: number;
  /** The gap readings in force in that run. */
  readonly readings?: Readonly<Record<string, string>>;
}

/** The rules catalogue of SPEC.md, searchable by ID, section or words; with a run, which rules it exercised. */
export function RulesPanel({ initialQuery = "", events = [], startMs = 0, readings }: RulesPanelProps) {
  const [query, setQuery] = useState(initialQuery);
  const [firedOnly, setFiredOnly] = useState(false);
  const [coverage, setCoverage] = useState<CoverageReport | undefined>(libraryCoverage);
  const [uncoveredOnly, setUncoveredOnly] = useState(false);
  const fired = useMemo(() => firedRules(events, startMs), [events, startMs]);
  const run = events.length > 0;
  const inForce = useMemo(
    () => (run && readings ? readingEvidence(readings, events, startMs) : []),
    [run, readings, events, startMs],
  );
  const shown = useMemo(
    () =>
      filterRules(rules, query).filter(
        (r) =>
          (!firedOnly || fired.has(r.id)) &&
          (!uncoveredOnly || coverage === undefined || coverage.uncovered.includes(r.id)),
      ),
    [query, firedOnly, fired, uncoveredOnly, coverage],
  );
  return (
    <section aria-label="Rules" className="rules">
      <h2>Rules of the specification</h2>
      <p className="muted">
        Every normative rule of SPEC.md with its stable ID. Tests, traces and reports cite these IDs.
      </p>
      <ReadingsEvidence readings={inForce} />
      <LibraryCoverage
        coverage={coverage}
        onCoverage={(c) => {
          libraryCoverage = c;
          setCoverage(c);
        }}
        uncoveredOnly={uncoveredOnly}
        onUncoveredOnly={setUncoveredOnly}
      />
      <input
        type="search"
        placeholder="Search by ID, section or words (e.g. RETRY, fallback)"
        aria-label="Search rules"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {run && (
        <label className="fired-filter">
          <input type="checkbox" checked={firedOnly} onChange={(e) => setFiredOnly(e.target.checked)} /> Fired in this
          run ({fired.size})
        </label>
      )}
      <p className="muted" data-testid="rule-count">
        {shown.length} of {rules.length} rules
      </p>
      <table>
        <thead>
          <tr>
            <th>ID</th>
            <th>Strength</th>
            <th>Rule</th>
            <th>Section</th>
            {run && <th>In this run</th>}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.id}>
              <td>
                <code>{r.id}</code>
              </td>
              <td>{r.strength}</td>
              <td>{r.text}</td>
              <td className="muted">{r.section}</td>
              {run && (
                <td>
                  <RuleFired fired={fired.get(r.id)} />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
