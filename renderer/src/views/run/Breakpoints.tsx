import { useMemo, useState } from "react";
import { describeCondition, type BreakCondition, type Breakpoint } from "../../../../app/sim/breakpoints.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { addBreakpoint, breakableKinds, enableBreakpoint } from "../../model/playbar.ts";
import { deliveryGraph } from "../../model/statechart.ts";
import { parseOffset } from "../../model/time.ts";

type Kind = BreakCondition["kind"];

/** The kinds a person adds from the form (a lesson's notes come from its scenario). */
const KINDS: readonly { readonly kind: Exclude<Kind, "annotation">; readonly label: string }[] = [
  { kind: "fallback", label: "every fallback decision" },
  { kind: "state", label: "a delivery enters a state" },
  { kind: "event", label: "an event of a kind" },
  { kind: "rule", label: "an event citing a rule or gap" },
  { kind: "time", label: "the clock reaches a time" },
];

export interface BreakpointsProps {
  readonly breakpoints: readonly Breakpoint[];
  /** The breakpoint the run is stopped at, if any. */
  readonly current?: string | undefined;
  /** How many times each has stopped the run (in the part of it shown). */
  readonly hits: ReadonlyMap<string, number>;
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly messages: readonly { readonly id: string; readonly messageId: string }[];
  readonly label: (messageId: string) => string;
  readonly onChange: (breakpoints: readonly Breakpoint[]) => void;
}

/**
 * The breakpoints as a debugger lists them: each ticked or not, how many times it has stopped the run, removed,
 * all cleared; and a form to add one. A lesson's notes are listed among them (played as a lesson).
 */
export function Breakpoints(p: BreakpointsProps) {
  const [kind, setKind] = useState<Exclude<Kind, "annotation">>("fallback");
  const [state, setState] = useState("retryScheduled");
  const [message, setMessage] = useState("");
  const [eventKind, setEventKind] = useState("smtp.handoff");
  const [rule, setRule] = useState("");
  const [time, setTime] = useState("");
  const [error, setError] = useState<string | undefined>();
  const kinds = useMemo(() => breakableKinds(p.events), [p.events]);
  const states = useMemo(() => deliveryGraph().states.map((s) => s.id), []);

  const add = (e: React.FormEvent) => {
    e.preventDefault();
    let condition: BreakCondition;
    switch (kind) {
      case "fallback":
        condition = { kind };
        break;
      case "state":
        condition = { kind, state, ...(message !== "" && { messageId: message }) };
        break;
      case "event":
        condition = { kind, name: eventKind };
        break;
      case "rule": {
        const id = rule.trim().toUpperCase();
        if (!/^([A-Z]+-\d+|G\d+)$/.test(id)) return setError("Type a rule ID such as STATE-3, or a gap such as G16");
        condition = { kind, rule: id };
        break;
      }
      case "time": {
        const ms = parseOffset(time);
        if (ms === undefined) return setError("Type a time such as +2:00:00, 90m or 1d 4h");
        condition = { kind, atMs: p.startMs + ms };
        break;
      }
    }
    setError(undefined);
    p.onChange(addBreakpoint(p.breakpoints, condition));
  };

  return (
    <section className="breakpoints" aria-label="Breakpoints">
      {p.breakpoints.length === 0 ? (
        <p className="muted">No breakpoints: Play runs to the end, Step to its level's next stop.</p>
      ) : (
        <ul>
          {p.breakpoints.map((b) => {
            const text = describeCondition(b.condition, p.startMs, p.label);
            const hits = p.hits.get(b.id) ?? 0;
            return (
              <li key={b.id} data-breakpoint={b.id} aria-current={p.current === b.id ? "true" : undefined}>
                <label>
                  <input
                    type="checkbox"
                    checked={b.enabled}
                    onChange={(e) => p.onChange(enableBreakpoint(p.breakpoints, b.id, e.target.checked))}
                  />{" "}
                  {text}
                </label>
                {hits > 0 && (
                  <span className="muted hits" data-hits={hits}>
                    {hits === 1 ? "hit once" : `hit ${hits} times`}
                  </span>
                )}
                {p.current === b.id && <span className="badge">stopped here</span>}
                <button
                  aria-label={`Remove breakpoint: ${text}`}
                  onClick={() => p.onChange(p.breakpoints.filter((x) => x.id !== b.id))}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <form className="inline-form add-breakpoint" onSubmit={add} aria-label="Add a breakpoint">
        <label>
          Pause at{" "}
          <select value={kind} onChange={(e) => setKind(e.target.value as Exclude<Kind, "annotation">)}>
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        {kind === "state" && (
          <>
            <label>
              Message{" "}
              <select value={message} onChange={(e) => setMessage(e.target.value)}>
                <option value="">any</option>
                {p.messages.map((m) => (
                  <option key={m.messageId} value={m.messageId}>
                    {m.id}
                  </option>
                ))}
              </select>
            </label>
            <label>
              State{" "}
              <select value={state} onChange={(e) => setState(e.target.value)}>
                {states.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        {kind === "event" && (
          <label>
            Kind{" "}
            <select value={eventKind} onChange={(e) => setEventKind(e.target.value)}>
              {kinds.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
        )}
        {kind === "rule" && (
          <label>
            Rule <input value={rule} onChange={(e) => setRule(e.target.value)} placeholder="STATE-3" size={9} />
          </label>
        )}
        {kind === "time" && (
          <label>
            Time <input value={time} onChange={(e) => setTime(e.target.value)} placeholder="+2:00:00" size={9} />
          </label>
        )}
        <button type="submit">Add breakpoint</button>
        {p.breakpoints.length > 0 && (
          <button type="button" onClick={() => p.onChange([])}>
            Clear all
          </button>
        )}
        {error && (
          <span className="error" role="alert">
            {error}
          </span>
        )}
      </form>
    </section>
  );
}
