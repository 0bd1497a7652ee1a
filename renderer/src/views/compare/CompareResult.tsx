import { useMemo, useState } from "react";
import { COMPARE_FIELDS, FIELD_TEXT, fieldText, VERDICT_KIND_TEXT } from "../../../../app/sim/compare.ts";
import type { Breakpoint } from "../../../../app/sim/breakpoints.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import type { CompareSide, Comparison } from "../../model/compare.ts";
import type { Mark } from "../../model/timeline.ts";
import type { CompareClock, CompareEvent, CompareResult, ForkRun } from "../../session/compare.ts";
import { TimelineView, type TimelineWindow } from "../timeline/TimelineView.tsx";
import { CompareBar } from "./CompareBar.tsx";

const NO_LABELS: ReadonlyMap<string, string> = new Map();

export interface ResultProps {
  readonly sides: readonly [CompareSide, CompareSide];
  readonly result: CompareResult;
  readonly fork: ForkRun | undefined;
  readonly startMs: number;
  readonly clock: CompareClock;
  readonly send: (event: CompareEvent) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
  readonly breakpoints: readonly Breakpoint[];
  readonly onBreakpoints: (breakpoints: readonly Breakpoint[]) => void;
  readonly messages: readonly { readonly id: string; readonly messageId: string }[];
}

/**
 * Both runs compared: the verdicts and where they part, the outcomes of A against B with the fields that
 * differ, the bar's clock over both runs and their two timelines on one axis.
 */
export function Result({
  sides,
  result,
  fork,
  startMs,
  clock,
  send,
  onSave,
  breakpoints,
  onBreakpoints,
  messages,
}: ResultProps) {
  const { comparison, prefix, events, endMs } = result;
  const { cursorMs } = clock;
  // One scale and zoom for both timelines: they share one axis, so a zoom, pan or reset of one is of both.
  const [view, setView] = useState<TimelineWindow>({ kind: "linear", zoom: undefined });
  // Both runs shown up to the bar's clock (undefined: whole).
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
        <Verdicts comparison={comparison} />
        {prefix && (
          <p data-testid="prefix-check" className={prefix.identical ? "prefix same" : "prefix differs"}>
            Before the fork: {prefix.text}
          </p>
        )}
        {fork && (
          <button onClick={() => onSave(`${fork.name}.yaml`, fork.text, "application/yaml")}>Save the fork…</button>
        )}
      </section>
      <OutcomesOfBoth comparison={comparison} />
      <CompareBar
        runs={events}
        startMs={startMs}
        endMs={endMs}
        clock={clock}
        send={send}
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

/** Each recipient's verdict of both runs, the summary, and where the two runs part. */
function Verdicts({ comparison }: { readonly comparison: Comparison }) {
  const { table, parting } = comparison;
  return (
    <>
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
    </>
  );
}

/** The outcomes of A against B, a row of each run per recipient, the fields that differ highlighted. */
function OutcomesOfBoth({ comparison }: { readonly comparison: Comparison }) {
  return (
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
          {comparison.table.lines.flatMap((l) =>
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
        compressible={false}
      />
    </section>
  );
}
