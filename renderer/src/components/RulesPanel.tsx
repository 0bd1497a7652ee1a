import { useMemo, useState } from "react";
import { rules } from "../../../app/protocol/rules.ts";
import { filterRules } from "../rulesFilter.ts";

/** The rules catalogue of SPEC.md, searchable by ID, section or words. */
export function RulesPanel({ initialQuery = "" }: { readonly initialQuery?: string }) {
  const [query, setQuery] = useState(initialQuery);
  const shown = useMemo(() => filterRules(rules, query), [query]);
  return (
    <section aria-label="Rules" className="rules">
      <h2>Rules of the specification</h2>
      <p className="muted">
        Every normative rule of SPEC.md with its stable ID. Tests, traces and reports cite these IDs.
      </p>
      <input
        type="search"
        placeholder="Search by ID, section or words (e.g. RETRY, fallback)"
        aria-label="Search rules"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
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
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
