import { checkSummary, type CheckRow } from "../../model/checks.ts";

export interface ChecksProps {
  readonly rows: readonly CheckRow[];
  readonly onEvidence: (seqs: readonly number[]) => void;
}

/** The invariants and expectations of the finished run, green or red. */
export function Checks({ rows, onEvidence }: ChecksProps) {
  const summary = checkSummary(rows);
  return (
    <section aria-labelledby="checks-heading" className="panel">
      <h3 id="checks-heading">Checks</h3>
      <p className={summary.passed ? "summary pass" : "summary fail"} data-testid="checks-summary">
        {summary.text}
      </p>
      <ul className="checks">
        {rows.map((c) => (
          <li key={`${c.kind} ${c.id}`} className={c.passed ? "pass" : "fail"}>
            <span className="mark">{c.mark}</span> <strong>{c.id}</strong>
            <span className="muted"> ({c.kind})</span>: {c.detail}
            {c.evidence.length > 0 && (
              <button className="link" onClick={() => onEvidence(c.evidence)}>
                evidence ({c.evidence.length})
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
