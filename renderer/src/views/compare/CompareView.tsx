import { useEffect, useEffectEvent, useMemo, useRef, useState, type FormEvent } from "react";
import {
  checkPrefix,
  COMPARE_FIELDS,
  FIELD_TEXT,
  fieldText,
  VERDICT_KIND_TEXT,
  type PrefixCheck,
} from "../../../../app/sim/compare.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import type { Breakpoint } from "../../../../app/sim/breakpoints.ts";
import {
  comparisonOf,
  forkChoices,
  forkSides,
  readingSides,
  seedSides,
  type CompareBase,
  type CompareSide,
  type Comparison,
} from "../../model/compare.ts";
import { constantControls, readingControls } from "../../model/readings.ts";
import { formatOffset, parseOffset } from "../../model/time.ts";
import type { Mark } from "../../model/timeline.ts";
import type { WorkerLike } from "../../session/port.ts";
import { TimelineView, type TimelineWindow } from "../timeline/TimelineView.tsx";
import { runSide } from "./runSide.ts";
import { CompareBar } from "./CompareBar.tsx";
import "./compare.css";

type Mode = "readings" | "seeds" | "fork";

/** A fork that ran: its scenario text, to save. */
interface ForkRun {
  readonly name: string;
  readonly text: string;
  readonly atMs: number;
}

type Status =
  | { readonly phase: "idle" }
  | { readonly phase: "running"; readonly sides: readonly [CompareSide, CompareSide] }
  | { readonly phase: "failed"; readonly errors: readonly string[] }
  | {
      readonly phase: "done";
      readonly sides: readonly [CompareSide, CompareSide];
      readonly events: readonly [readonly RecordedEvent[], readonly RecordedEvent[]];
      readonly comparison: Comparison;
      readonly fork?: ForkRun;
      readonly prefix?: PrefixCheck;
    };

export interface CompareViewProps {
  readonly base: CompareBase;
  readonly mailscope: string;
  readonly createWorker: () => WorkerLike;
  readonly onBack: () => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
  /** Two sides to run at once (a sweep's boundary, issue 30) rather than those the form makes. */
  readonly preset?: readonly [CompareSide, CompareSide];
  /** The run view's breakpoints: the playback bar's, one list for both runs. */
  readonly breakpoints?: readonly Breakpoint[];
  readonly onBreakpoints?: (breakpoints: readonly Breakpoint[]) => void;
  /** The scenario's messages (its ids), for a breakpoint on one of them. */
  readonly messages?: readonly { readonly id: string; readonly messageId: string }[];
}

const NO_BREAKPOINTS: readonly Breakpoint[] = [];
const NO_MESSAGES: readonly { readonly id: string; readonly messageId: string }[] = [];

const NO_LABELS: ReadonlyMap<string, string> = new Map();

/**
 * Compare: the run on screen under two readings of a gap, two seeds, or
 * against a fork of it at a time; each side runs in a worker of its own,
 * then the verdicts, the outcomes with the differences highlighted, and the
 * two delivery timelines stacked on one time axis, with one scale and zoom
 * (a zoom, pan or reset of either is of both).
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
  // The readings of the switchable gaps, then the draft's numbers (issue 30).
  const controls = useMemo(
    () => [...readingControls(base.readings), ...constantControls(base.constants)],
    [base.readings, base.constants],
  );
  const [mode, setMode] = useState<Mode>("readings");
  const [controlKey, setControlKey] = useState(controls[0]?.key ?? "");
  const control = controls.find((c) => c.key === controlKey) ?? controls[0];
  const [valueA, setValueA] = useState(control?.value ?? "");
  const [valueB, setValueB] = useState(control?.options.find((o) => o !== control.value) ?? "");
  const [seedA, setSeedA] = useState(String(base.seed));
  const [seedB, setSeedB] = useState(typeof base.seed === "number" ? String(base.seed + 1) : `${base.seed}-b`);
  const [forkAt, setForkAt] = useState(formatOffset(base.startMs + base.playheadOffsetMs, base.startMs));
  const forkMs = parseOffset(forkAt);
  const choices = useMemo(() => (forkMs === undefined ? [] : forkChoices(base.text, forkMs)), [base.text, forkMs]);
  const [choiceValue, setChoiceValue] = useState("");
  const choice = choices.find((c) => c.value === choiceValue) ?? choices[0];
  const [probability, setProbability] = useState("0.5");
  const [status, setStatus] = useState<Status>({ phase: "idle" });
  const abort = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => abort.current?.abort(), []);

  const chooseControl = (key: string) => {
    const next = controls.find((c) => c.key === key);
    setControlKey(key);
    setValueA(next?.value ?? "");
    setValueB(next?.options.find((o) => o !== next.value) ?? next?.value ?? "");
  };

  const start = async (e: FormEvent) => {
    e.preventDefault();
    let sides: [CompareSide, CompareSide];
    let fork: ForkRun | undefined;
    if (mode === "readings") {
      if (control === undefined) return setStatus({ phase: "failed", errors: ["No reading to compare."] });
      sides = readingSides(base, control, valueA, valueB);
    } else if (mode === "seeds") {
      if (seedA.trim() === "" || seedB.trim() === "") {
        return setStatus({ phase: "failed", errors: ["Give both seeds (a number, or any text)."] });
      }
      sides = seedSides(base, seedA, seedB);
    } else {
      if (forkMs === undefined) {
        return setStatus({ phase: "failed", errors: [`Fork at: "${forkAt}" is not a time (try +0:30:00 or 30m).`] });
      }
      if (choice === undefined) {
        return setStatus({ phase: "failed", errors: [`Nothing to change at ${forkAt}: no fault is active then.`] });
      }
      const p = Number(probability);
      if (choice.probability === true && !(probability.trim() !== "" && p >= 0 && p <= 1)) {
        return setStatus({ phase: "failed", errors: [`Probability: "${probability}" is not a number from 0 to 1.`] });
      }
      const change = choice.change.kind === "set-probability" ? { ...choice.change, probability: p } : choice.change;
      const made = forkSides(base, forkMs, change);
      if (!made.ok) return setStatus({ phase: "failed", errors: made.errors });
      sides = made.sides;
      fork = { name: made.name, text: made.text, atMs: forkMs };
    }
    await runSides(sides, fork);
  };

  /** Runs the two sides, each in a worker of its own, and compares them. */
  const runSides = async (sides: readonly [CompareSide, CompareSide], fork?: ForkRun) => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setStatus({ phase: "running", sides });
    const [a, b] = await Promise.all(sides.map((s) => runSide(createWorker, s, mailscope, controller.signal)));
    if (controller.signal.aborted || a === undefined || b === undefined) return;
    if (!a.ok || !b.ok) {
      const errors = [...(a.ok ? [] : a.errors.map((x) => `A: ${x}`)), ...(b.ok ? [] : b.errors.map((x) => `B: ${x}`))];
      return setStatus({ phase: "failed", errors });
    }
    const events = [a.trace.events, b.trace.events] as const;
    const prefix =
      fork !== undefined ? await checkPrefix(events[0], events[1], base.startMs + fork.atMs, base.startMs) : undefined;
    if (controller.signal.aborted) return;
    setStatus({
      phase: "done",
      sides,
      events,
      comparison: comparisonOf(events[0], events[1], base.startMs),
      ...(fork !== undefined && { fork }),
      ...(prefix !== undefined && { prefix }),
    });
  };

  // Given sides (a sweep's boundary) run as soon as the view shows.
  const runPreset = useEffectEvent(() => {
    if (preset !== undefined) void runSides(preset);
  });
  useEffect(() => runPreset(), []);

  return (
    <section aria-labelledby="compare-title" className="run compare">
      <header className="run-head">
        <h2 id="compare-title">Compare: {base.name}</h2>
        <button onClick={onBack}>{preset ? "Back to the sweep" : "Back to the run"}</button>
      </header>
      <form className="panel compare-form" aria-label="What to compare" onSubmit={(e) => void start(e)}>
        <div className="segmented" role="group" aria-label="Compare what">
          {(
            [
              ["readings", "Two readings"],
              ["seeds", "Two seeds"],
              ["fork", "Fork at a time"],
            ] as const
          ).map(([m, text]) => (
            <button key={m} type="button" aria-pressed={mode === m} onClick={() => setMode(m)}>
              {text}
            </button>
          ))}
        </div>
        {mode === "readings" && control && (
          <div className="compare-fields">
            <label>
              Gap
              <select value={control.key} onChange={(e) => chooseControl(e.target.value)}>
                {controls.map((c) => (
                  <option key={c.key} value={c.key}>
                    {c.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Reading A
              <select value={valueA} onChange={(e) => setValueA(e.target.value)}>
                {control.options.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            </label>
            <label>
              Reading B
              <select value={valueB} onChange={(e) => setValueB(e.target.value)}>
                {control.options.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            </label>
            <span className="muted">{control.title}</span>
          </div>
        )}
        {mode === "seeds" && (
          <div className="compare-fields">
            <label>
              Seed A
              <input value={seedA} onChange={(e) => setSeedA(e.target.value)} size={10} />
            </label>
            <label>
              Seed B
              <input value={seedB} onChange={(e) => setSeedB(e.target.value)} size={10} />
            </label>
          </div>
        )}
        {mode === "fork" && (
          <div className="compare-fields">
            <label>
              Fork at
              <input
                value={forkAt}
                onChange={(e) => setForkAt(e.target.value)}
                size={10}
                aria-invalid={forkMs === undefined}
              />
            </label>
            <label>
              Change
              <select value={choice?.value ?? ""} onChange={(e) => setChoiceValue(e.target.value)}>
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
                <input value={probability} onChange={(e) => setProbability(e.target.value)} size={5} />
              </label>
            )}
          </div>
        )}
        <button type="submit" className="primary" disabled={status.phase === "running"}>
          {mode === "fork" ? "Run the fork beside the original" : "Run both"}
        </button>
      </form>
      {status.phase === "running" && (
        <p role="status" className="notice">
          Running A ({status.sides[0].title}) and B ({status.sides[1].title}), each in a worker of its own…
        </p>
      )}
      {status.phase === "failed" && (
        <section role="alert" aria-label="Cannot compare" className="panel errors">
          <ul>
            {status.errors.map((e) => (
              <li key={e}>
                <code>{e}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
      {status.phase === "done" && (
        <Result
          status={status}
          startMs={base.startMs}
          onSave={onSave}
          breakpoints={breakpoints}
          onBreakpoints={onBreakpoints}
          messages={messages}
        />
      )}
    </section>
  );
}

function Result({
  status,
  startMs,
  onSave,
  breakpoints,
  onBreakpoints,
  messages,
}: {
  readonly status: Extract<Status, { phase: "done" }>;
  readonly startMs: number;
  readonly onSave: CompareViewProps["onSave"];
  readonly breakpoints: readonly Breakpoint[];
  readonly onBreakpoints: (breakpoints: readonly Breakpoint[]) => void;
  readonly messages: readonly { readonly id: string; readonly messageId: string }[];
}) {
  const { sides, comparison, prefix, fork, events } = status;
  const { table, parting } = comparison;
  // One scale and zoom for both timelines: they share one axis, so a zoom, pan or reset of one is of both.
  const [view, setView] = useState<TimelineWindow>({ kind: "linear", zoom: undefined });
  // Compare's playback bar: both runs shown up to one clock (undefined: whole).
  const [cursorMs, setCursorMs] = useState<number | undefined>();
  const shown = useMemo(
    () =>
      cursorMs === undefined
        ? events
        : ([events[0].filter((e) => e.timeMs <= cursorMs), events[1].filter((e) => e.timeMs <= cursorMs)] as const),
    [events, cursorMs],
  );
  return (
    <>
      <section aria-labelledby="verdicts-heading" className="panel">
        <div className="panel-head">
          <h3 id="verdicts-heading">Verdicts</h3>
          <span className="muted">
            A: {sides[0].title} · B: {sides[1].title}
          </span>
        </div>
        <ul className="verdicts">
          {table.lines.map((l) => (
            <li
              key={`${l.message} ${l.recipient}`}
              data-testid="verdict"
              data-differs={l.differs.length > 0}
              data-kind={l.kind}
            >
              <strong>
                {l.message} {l.recipient}:
              </strong>{" "}
              {l.kind !== "same" && <span className="verdict-kind">{VERDICT_KIND_TEXT[l.kind]}:</span>} {l.verdict}
            </li>
          ))}
        </ul>
        <p data-testid="compare-summary">{table.summary}</p>
        <div data-testid="parting" className={parting.parts ? "parting parts" : "parting"}>
          {parting.parts ? (
            <>
              <p>
                Where they part: at {parting.at}, after {parting.alike} decision{parting.alike === 1 ? "" : "s"} alike.
              </p>
              <dl>
                <dt>A</dt>
                <dd>{parting.a?.text ?? "decides nothing more"}</dd>
                <dt>B</dt>
                <dd>{parting.b?.text ?? "decides nothing more"}</dd>
              </dl>
            </>
          ) : (
            <p>{parting.text}</p>
          )}
        </div>
        {prefix && (
          <p data-testid="prefix-check" className={prefix.identical ? "prefix same" : "prefix differs"}>
            Before the fork: {prefix.text}
          </p>
        )}
        {fork && (
          <button onClick={() => onSave(`${fork.name}.yaml`, fork.text, "application/yaml")}>Save the fork…</button>
        )}
      </section>
      <section aria-labelledby="compare-outcomes-heading" className="panel">
        <h3 id="compare-outcomes-heading">Outcomes, A against B</h3>
        <p className="muted">Highlighted: the fields that differ between the two runs.</p>
        <table className="outcomes compare-table">
          <thead>
            <tr>
              <th scope="col">Message</th>
              <th scope="col">Recipient</th>
              <th scope="col">Run</th>
              {COMPARE_FIELDS.map((f) => (
                <th scope="col" key={f}>
                  {FIELD_TEXT[f][0]?.toUpperCase()}
                  {FIELD_TEXT[f].slice(1)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.lines.flatMap((l) =>
              (["a", "b"] as const).map((side, i) => (
                <tr
                  key={`${l.message} ${l.recipient} ${side}`}
                  data-run={side.toUpperCase()}
                  data-recipient={l.recipient}
                >
                  {i === 0 && (
                    <>
                      <td rowSpan={2}>{l.message}</td>
                      <td rowSpan={2}>{l.recipient}</td>
                    </>
                  )}
                  <th scope="row">{side.toUpperCase()}</th>
                  {COMPARE_FIELDS.map((f) => {
                    const differs = l.differs.includes(f);
                    return (
                      <td key={f} className={differs ? "differs" : undefined} data-field={f} data-differs={differs}>
                        {fieldText(l[side], f)}
                        {differs && <span className="visually-hidden"> (differs)</span>}
                      </td>
                    );
                  })}
                </tr>
              )),
            )}
          </tbody>
        </table>
      </section>
      <CompareBar
        runs={events}
        startMs={startMs}
        endMs={Math.max(events[0].at(-1)?.timeMs ?? startMs, events[1].at(-1)?.timeMs ?? startMs)}
        cursorMs={cursorMs}
        onCursor={setCursorMs}
        breakpoints={breakpoints}
        onBreakpoints={onBreakpoints}
        messages={messages}
      />
      {sides.map((side, i) => (
        <SideTimeline
          key={side.label}
          side={side}
          events={shown[i] ?? []}
          startMs={startMs}
          playheadMs={
            cursorMs !== undefined ? cursorMs : fork ? startMs + fork.atMs : (events[i]?.at(-1)?.timeMs ?? startMs)
          }
          axisEndMs={comparison.axisEndMs}
          view={view}
          onView={setView}
        />
      ))}
    </>
  );
}

function SideTimeline({
  side,
  events,
  startMs,
  playheadMs,
  axisEndMs,
  view,
  onView,
}: {
  readonly side: CompareSide;
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly playheadMs: number;
  readonly axisEndMs: number;
  readonly view: TimelineWindow;
  readonly onView: (view: TimelineWindow) => void;
}) {
  const [mark, setMark] = useState<Mark | undefined>();
  const [delivery, setDelivery] = useState<string | undefined>();
  return (
    <section aria-label={`Run ${side.label}: ${side.title}`} className="compare-side" data-run={side.label}>
      <h3 className="compare-side-title">
        Run {side.label}: {side.title}
      </h3>
      <TimelineView
        events={events}
        startMs={startMs}
        labels={NO_LABELS}
        playheadMs={playheadMs}
        axisEndMs={axisEndMs}
        headingId={`timeline-heading-${side.label.toLowerCase()}`}
        which={`of run ${side.label}`}
        delivery={delivery}
        onDelivery={setDelivery}
        selectedMark={mark}
        onMark={setMark}
        view={view}
        onView={onView}
      />
    </section>
  );
}
