import type { OutcomeRow } from "../../model/outcomes.ts";

export interface OutcomesProps {
  readonly rows: readonly OutcomeRow[];
  readonly selected: string | undefined;
  readonly onSelect: (delivery: string | undefined) => void;
}

/** Per recipient: message, recipient, outcome, when, attempts, POSTs, rule. A row selects its delivery. */
export function Outcomes({ rows, selected, onSelect }: OutcomesProps) {
  return (
    <section aria-labelledby="outcomes-heading" className="panel">
      <h3 id="outcomes-heading">Outcomes</h3>
      {rows.length === 0 ? (
        <p className="muted">No message submitted yet.</p>
      ) : (
        <table className="outcomes">
          <thead>
            <tr>
              <th scope="col">Message</th>
              <th scope="col">Recipient</th>
              <th scope="col">Outcome</th>
              <th scope="col">When</th>
              <th scope="col">Attempts</th>
              <th scope="col">POSTs</th>
              <th scope="col">Rule</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const isSelected = selected === r.delivery;
              return (
                <tr
                  key={`${r.messageId} ${r.recipient}`}
                  aria-selected={isSelected}
                  className={isSelected ? "selected" : ""}
                >
                  <td>
                    <button
                      className="link"
                      aria-pressed={isSelected}
                      onClick={() => onSelect(isSelected ? undefined : r.delivery)}
                      title={r.dsn ? "A delivery status notification" : r.messageId}
                    >
                      {r.dsn ? `DSN ${r.message}` : r.message}
                    </button>
                  </td>
                  <td>{r.recipient}</td>
                  <td>
                    <span className={`outcome ${r.outcome}`}>{r.outcomeText}</span>
                  </td>
                  <td className="num">{r.when}</td>
                  <td className="num">{r.attempts}</td>
                  <td className="num">{r.posts}</td>
                  <td>{r.rule ?? ""}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
