import type { DeliveryContext } from "../../model/deliveryContext.ts";

export interface ContextPanelProps {
  readonly context: DeliveryContext;
  /** Marks an item's event in the log. */
  readonly onEvent: (seq: number) => void;
}

/**
 * The delivery's context at the step the statechart shows: what the machine's guards read —
 * attempt, window end, give-up, next attempt, pending recipients, last answer, SMTP fallback — each value with a
 * link to its event in the log.
 */
export function ContextPanel({ context, onEvent }: ContextPanelProps) {
  if (context.items.length === 0) return null;
  return (
    <section className="sc-context" aria-labelledby="sc-context-heading" data-testid="statechart-context">
      <h4 id="sc-context-heading">Context at this step</h4>
      <dl>
        {context.items.map((item) => (
          <div key={item.label} className="sc-context-item">
            <dt>{item.label}</dt>
            <dd>
              {item.value}
              {item.seq !== undefined && (
                <>
                  {" "}
                  <button
                    className="link sc-context-event"
                    onClick={() => item.seq !== undefined && onEvent(item.seq)}
                    aria-label={`${item.label}: event #${item.seq} in the log`}
                  >
                    #{item.seq}
                  </button>
                </>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
