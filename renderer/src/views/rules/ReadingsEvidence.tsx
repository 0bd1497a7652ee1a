import type { ReadingEvidence } from "../../model/ruleEvidence.ts";
import "./rules.css";

const SHOWN = 40;

/** The gap readings in force in the run, each with the events citing the gap: where the reading made a difference. */
export function ReadingsEvidence({ readings }: { readonly readings: readonly ReadingEvidence[] }) {
  if (readings.length === 0) return null;
  return (
    <section aria-labelledby="readings-evidence-heading" className="readings-evidence">
      <h3 id="readings-evidence-heading">Readings in force in this run</h3>
      <ul>
        {readings.map((r) => (
          <li key={r.gap} data-gap={r.gap}>
            <code>{r.gap}</code> {r.reading}
            {r.events.length === 0 ? (
              <span className="muted"> — no event of this run cites it</span>
            ) : (
              <details className="rule-fired">
                <summary
                  aria-label={`${r.gap}: cited by ${r.events.length} event${r.events.length === 1 ? "" : "s"} of this run`}
                >
                  cited by {r.events.length} event{r.events.length === 1 ? "" : "s"}
                </summary>
                <ol aria-label={`Events citing ${r.gap}`}>
                  {r.events.slice(0, SHOWN).map((e) => (
                    <li key={e.seq} data-seq={e.seq} data-event={e.name}>
                      <span className="at">{e.at}</span> {e.text}
                    </li>
                  ))}
                </ol>
                {r.events.length > SHOWN && <p className="muted">and {r.events.length - SHOWN} more</p>}
              </details>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
