import { evidenceText } from "../../../../app/trace/explain.ts";
import { whyLinks, type Why, type WhyLinks } from "../../model/why.ts";

export interface WhyPanelProps {
  readonly why: Why;
  /** The message as the outcomes table names it (`m1`, `DSN dsn.…`). */
  readonly message: string;
  readonly onClose: () => void;
  readonly onRule: (rule: string) => void;
  /** Marks the clause's events in the log. */
  readonly onLog: (seqs: readonly number[]) => void;
  /** Selects the attempt's mark on the timeline. */
  readonly onAttempt: (attempt: NonNullable<WhyLinks["attempt"]>) => void;
  /** Shows the delivery machine right after the step. */
  readonly onStep: (step: NonNullable<WhyLinks["transition"]>) => void;
}

/**
 * Why a recipient got its outcome: the chain of decisive events of app/trace/explain.ts (the words of
 * `mailscope run --explain`), each with its rules and links to its evidence — the log rows of its events,
 * the attempt on the timeline, the delivery machine's step.
 */
export function WhyPanel({ why, message, onClose, onRule, onLog, onAttempt, onStep }: WhyPanelProps) {
  return (
    <section aria-labelledby="why-heading" className="panel why" data-testid="why-panel">
      <div className="panel-head">
        <h3 id="why-heading">
          Why? {why.recipient} of {message}
        </h3>
        <button className="chip" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="why-headline" data-testid="why-headline">
        <span className={`outcome ${why.outcome}`}>{why.headline}</span>
      </p>
      {!why.explained && (
        <p className="notice" role="note">
          The trace does not show all of it; what it does not show is said below, not guessed.
        </p>
      )}
      <ol className="why-chain">
        {why.clauses.map((c) => {
          const links = whyLinks(why, c);
          return (
            <li key={`${c.kind} ${c.atMs} ${c.text}`} data-kind={c.kind} data-at={c.at}>
              <span className="why-text">{c.text}</span>{" "}
              <span className="why-links">
                {c.rules.map((rule) => (
                  <button key={rule} className="rule" onClick={() => onRule(rule)} title={`Rule ${rule}`}>
                    {rule}
                  </button>
                ))}
                <span className="why-evidence muted">evidence:</span>
                {links.attempt && (
                  <button
                    className="chip"
                    aria-label={`Timeline: attempt ${links.attempt.attempt}`}
                    onClick={() => links.attempt && onAttempt(links.attempt)}
                  >
                    Timeline
                  </button>
                )}
                <button
                  className="chip"
                  aria-label={`Log: ${links.log.length} event${links.log.length === 1 ? "" : "s"}`}
                  onClick={() => onLog(links.log)}
                >
                  Log
                </button>
                {links.transition && (
                  <button
                    className="chip"
                    aria-label="Machine: the step of the delivery machine"
                    onClick={() => links.transition && onStep(links.transition)}
                  >
                    Machine
                  </button>
                )}
                <span className="why-seqs muted">{evidenceText(c)}</span>
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
