import { useMachine } from "@xstate/react";
import { useEffect, useEffectEvent, useMemo, useReducer, useState, type Dispatch, type FormEvent } from "react";
import { fromPromise } from "xstate";
import type { Breakpoint } from "../../../../app/sim/breakpoints.ts";
import { forkChoices, type CompareBase, type CompareSide, type ForkChoice } from "../../model/compare.ts";
import {
  choiceOf,
  compareFormReducer,
  controlOf,
  forkMsOf,
  initialCompareForm,
  requestOfForm,
  type CompareForm,
  type CompareFormAction,
  type CompareMode,
} from "../../model/compareForm.ts";
import { constantControls, readingControls, type ReadingControl } from "../../model/readings.ts";
import { compareMachine } from "../../session/compare.ts";
import type { WorkerLike } from "../../session/port.ts";
import { runSide } from "../../session/runSide.ts";
import { Result } from "./CompareResult.tsx";
import { ErrorList } from "../../components/ErrorList.tsx";
import "./compare.css";

export interface CompareViewProps {
  readonly base: CompareBase;
  readonly mailscope: string;
  readonly createWorker: () => WorkerLike;
  readonly onBack: () => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
  /** Two sides to run at once (a sweep's boundary) rather than those the form makes. */
  readonly preset?: readonly [CompareSide, CompareSide];
  /** The run view's breakpoints: the playback bar's, one list for both runs. */
  readonly breakpoints?: readonly Breakpoint[];
  readonly onBreakpoints?: (breakpoints: readonly Breakpoint[]) => void;
  /** The scenario's messages (its ids), for a breakpoint on one of them. */
  readonly messages?: readonly { readonly id: string; readonly messageId: string }[];
}

const NO_BREAKPOINTS: readonly Breakpoint[] = [];
const NO_MESSAGES: readonly { readonly id: string; readonly messageId: string }[] = [];

/**
 * Compare: the run on screen under two readings of a gap, two seeds, or
 * against a fork of it at a time; each side runs in a worker of its own
 * (session/compare.ts, the Compare machine), then the verdicts, the outcomes
 * with the differences highlighted, and the two delivery timelines stacked on
 * one time axis, with one scale and zoom (a zoom, pan or reset of either is of
 * both).
 */
export function CompareView({
  base,
  mailscope,
  createWorker,
  onBack,
  onSave,
  preset,
  breakpoints = NO_BREAKPOINTS,
  onBreakpoints = () => {},
  messages = NO_MESSAGES,
}: CompareViewProps) {
  // The readings of the switchable gaps, then the draft's numbers.
  const controls = useMemo(
    () => [...readingControls(base.readings), ...constantControls(base.constants)],
    [base.readings, base.constants],
  );
  const [form, dispatch] = useReducer(compareFormReducer, undefined, () => initialCompareForm(base, controls));
  const forkMs = forkMsOf(form);
  const choices = useMemo(() => (forkMs === undefined ? [] : forkChoices(base.text, forkMs)), [base.text, forkMs]);
  // The two runs: a worker each, ended when the machine leaves its run (another run, Back, the view closed).
  const [machine] = useState(() =>
    compareMachine.provide({
      actors: {
        runSide: fromPromise(({ input, signal }) => runSide(createWorker, input.side, mailscope, signal)),
      },
    }),
  );
  const [snapshot, send] = useMachine(machine, { input: { startMs: base.startMs } });
  const { request, errors, result, clock, runNumber } = snapshot.context;

  // Whether the form has asked for a run: from then on, what is on screen is no longer the preset's.
  const [formRan, setFormRan] = useState(false);
  const start = (e: FormEvent) => {
    e.preventDefault();
    const made = requestOfForm(form, base, controls, choices);
    if (made.ok) setFormRan(true);
    send(made.ok ? { type: "RUN", request: made.request } : { type: "REFUSE", errors: made.errors });
  };

  // Given sides (a sweep's boundary) run as soon as the view shows.
  const runPreset = useEffectEvent(() => {
    if (preset !== undefined) send({ type: "RUN", request: { sides: preset } });
  });
  useEffect(() => runPreset(), []);

  const running = snapshot.matches("running") || snapshot.matches("comparing");
  const formView = (
    <CompareFormView
      form={form}
      dispatch={dispatch}
      controls={controls}
      choices={choices}
      running={running}
      onSubmit={start}
    />
  );
  return (
    <section aria-labelledby="compare-title" className="run compare">
      <header className="run-head">
        <h2 id="compare-title">Compare: {base.name}</h2>
        <button onClick={onBack}>{preset ? "Back to the sweep" : "Back to the run"}</button>
      </header>
      {preset === undefined ? (
        formView
      ) : (
        <>
          {/* What is on screen is the sweep's two points, not the form's fields: said so, the form folded away. */}
          {!formRan && (
            <p className="compare-preset" data-testid="compare-preset">
              The sweep's boundary: A {preset[0].title} · B {preset[1].title}.
            </p>
          )}
          <details className="compare-other">
            <summary>Compare something else</summary>
            {formView}
          </details>
        </>
      )}
      {running && request && (
        <p role="status" className="notice">
          Running A ({request.sides[0].title}) and B ({request.sides[1].title}), each in a worker of its own…
        </p>
      )}
      {snapshot.matches("failed") && (
        <section role="alert" aria-label="Cannot compare" className="panel errors">
          <ErrorList errors={errors} />
        </section>
      )}
      {snapshot.matches("done") && request && result && (
        <Result
          key={runNumber}
          sides={request.sides}
          result={result}
          fork={request.fork}
          startMs={base.startMs}
          clock={clock}
          send={send}
          onSave={onSave}
          breakpoints={breakpoints}
          onBreakpoints={onBreakpoints}
          messages={messages}
        />
      )}
    </section>
  );
}

const MODES: readonly (readonly [CompareMode, string])[] = [
  ["readings", "Two readings"],
  ["seeds", "Two seeds"],
  ["fork", "Fork at a time"],
];

/** What to compare: two readings of a gap (or a draft's number), two seeds, or a fork at a time. */
function CompareFormView({
  form,
  dispatch,
  controls,
  choices,
  running,
  onSubmit,
}: {
  readonly form: CompareForm;
  readonly dispatch: Dispatch<CompareFormAction>;
  readonly controls: readonly ReadingControl[];
  readonly choices: readonly ForkChoice[];
  readonly running: boolean;
  readonly onSubmit: (e: FormEvent) => void;
}) {
  const { mode } = form;
  const control = controlOf(form, controls);
  const choice = choiceOf(form, choices);
  const field = (name: Extract<CompareFormAction, { type: "field" }>["field"]) => ({
    value: form[name],
    onChange: (e: { target: { value: string } }) => dispatch({ type: "field", field: name, value: e.target.value }),
  });
  return (
    <form className="panel compare-form" aria-label="What to compare" onSubmit={onSubmit}>
      <div className="segmented" role="group" aria-label="Compare what">
        {MODES.map(([m, text]) => (
          <button key={m} type="button" aria-pressed={mode === m} onClick={() => dispatch({ type: "mode", mode: m })}>
            {text}
          </button>
        ))}
      </div>
      {mode === "readings" && control && (
        <div className="compare-fields">
          <label>
            Gap
            <select
              value={control.key}
              onChange={(e) =>
                dispatch({
                  type: "control",
                  key: e.target.value,
                  control: controls.find((c) => c.key === e.target.value),
                })
              }
            >
              {controls.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          {(["valueA", "valueB"] as const).map((name) => (
            <label key={name}>
              Reading {name === "valueA" ? "A" : "B"}
              <select {...field(name)}>
                {control.options.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            </label>
          ))}
          <span className="muted">{control.title}</span>
        </div>
      )}
      {mode === "seeds" && (
        <div className="compare-fields">
          <label>
            Seed A
            <input {...field("seedA")} size={10} />
          </label>
          <label>
            Seed B
            <input {...field("seedB")} size={10} />
          </label>
        </div>
      )}
      {mode === "fork" && (
        <div className="compare-fields">
          <label>
            Fork at
            <input {...field("forkAt")} size={10} aria-invalid={forkMsOf(form) === undefined} />
          </label>
          <label>
            Change
            <select {...field("choiceValue")} value={choice?.value ?? ""}>
              {choices.length === 0 && <option value="">nothing to change then</option>}
              {choices.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          {choice?.probability === true && (
            <label>
              Probability
              <input {...field("probability")} size={5} />
            </label>
          )}
        </div>
      )}
      <button type="submit" className="primary" disabled={running}>
        {mode === "fork" ? "Run the fork beside the original" : "Run both"}
      </button>
    </form>
  );
}
