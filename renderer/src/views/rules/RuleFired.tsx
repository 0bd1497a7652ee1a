import type { FiredRule } from "../../model/ruleEvidence.ts";
import "./rules.css";

/** How many events show at first; the rest are counted. */
const SHOWN = 40;

/** A rule's cell in the Rules view: how often the run cited it, and the events that did. */
export function RuleFired({ fired }: { readonly fired: FiredRule | undefined }) {
  if (fired === undefined) return <span className="muted">–</span>;
  return (
    <details className="rule-fired">
      <summary aria-label={`${fired.id}: cited by ${fired.count} event${fired.count === 1 ? "" : "s"} of this run`}>
        {fired.count}×
      </summary>
      <ol aria-label={`Events citing ${fired.id}`}>
        {fired.events.slice(0, SHOWN).map((e) => (
          <li key={e.seq} data-seq={e.seq} data-event={e.name}>
            <span className="at">{e.at}</span> {e.text}
          </li>
        ))}
      </ol>
      {fired.events.length > SHOWN && <p className="muted">and {fired.events.length - SHOWN} more</p>}
    </details>
  );
}
