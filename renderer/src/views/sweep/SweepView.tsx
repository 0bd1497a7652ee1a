import { maxOf } from "../../../../app/protocol/lists.ts";
import { startTransition, useCallback, useEffect, useId, useMemo, useRef, useState, type FormEvent } from "react";
import { Area, AreaChart, Bar, CartesianGrid, ComposedChart, Legend, Line, Tooltip, XAxis, YAxis } from "recharts";
import type { MouseHandlerDataParam } from "recharts/types/synchronisation/types";
import { runSweep, type Boundary, type PointResult } from "../../../../app/sim/sweep.ts";
import { parseResolution, planSweep, type SweepPlan } from "../../../../app/sim/sweepPlan.ts";
import type { CompareBase, CompareSide } from "../../model/compare.ts";
import {
  boundariesHeading,
  boundariesOf,
  boundarySides,
  chartProblem,
  pointRun,
  pointsTable,
  rangeValues,
  seriesData,
  seriesRows,
  sweepChart,
  sweepChoices,
  type PointRunStart,
  type SweepChart,
  type SweepChoice,
  type SeriesDatum,
  type SweepRow,
} from "../../model/sweep.ts";
import { OUTCOME_COLOUR } from "../../model/timeline.ts";
import { poolSize, workerRunPool } from "../../session/runPool.ts";
import type { WorkerLike } from "../../session/port.ts";
import { useWidth } from "../../hooks/useWidth.ts";
import "./sweep.css";
import { Table } from "../../components/Table.tsx";

/** The colour of each outcome's band: the timeline's, and for what only a sweep has (SMTP, bounces, errors). */
const BAND_COLOUR: Readonly<Record<string, string>> = {
  accepted: OUTCOME_COLOUR["accepted"] ?? "#1f8a45",
  rejected: OUTCOME_COLOUR["rejected"] ?? "#c0362c",
  smtp: "#e08a00",
  bounced: OUTCOME_COLOUR["permanent"] ?? "#7a1010",
  pending: "#6b7280",
  error: "#8a5cf6",
};

/** One colour per series of a grid (the second field's values), readable on both themes. */
const SERIES_COLOUR = ["#2f5fd0", "#e08a00", "#1f8a45", "#c0362c", "#8a5cf6", "#0f8b8d", "#b5487a", "#6b7280"];
const seriesColour = (i: number): string => SERIES_COLOUR[i % SERIES_COLOUR.length] ?? "#586174";

/** Charts follow a running sweep this often at most (the page's thread only draws; the runs are in workers). */
const DRAW_EVERY_MS = 250;

type Status =
  | { readonly phase: "idle" }
  | { readonly phase: "failed"; readonly errors: readonly string[] }
  | {
      readonly phase: "running" | "done" | "stopped";
      readonly plan: SweepPlan;
      readonly points: readonly (PointResult | undefined)[];
      readonly done: number;
      readonly planned: number;
      readonly workers: number;
      readonly boundaries: readonly Boundary[];
    };

export interface SweepViewProps {
  /** The scenario on screen (its text, file, seed and the readings set in the run view). */
  readonly base: CompareBase;
  readonly mailscope: string;
  readonly createWorker: () => WorkerLike;
  readonly onBack: () => void;
  /** Opens a point's run in the run view. */
  readonly onOpenRun: (start: PointRunStart) => void;
  /** Opens Compare of a boundary's two sides. */
  readonly onCompare: (sides: readonly [CompareSide, CompareSide]) => void;
}

/**
 * Sweep (note 0067): pick a field of the scenario (its numbers and durations,
 * a gap reading, one of the draft's numbers) and a range; every value is a
 * full run in a pool of simulation workers, and the charts draw the points as
 * they finish — the share of each outcome by value, the outcome's time,
 * attempts and POSTs against it, a box per point under several seeds — with
 * the boundaries where an outcome changes. A point opens its run in the run
 * view; a boundary opens Compare of its two sides.
 */
export function SweepView({ base, mailscope, createWorker, onBack, onOpenRun, onCompare }: SweepViewProps) {
  const fieldId = useId();
  const seriesId = useId();
  const choices = useMemo(() => sweepChoices(base.text), [base.text]);
  const [x, setX] = useState<Range>(() =>
    rangeOf(
      choices,
      choices.find((c) => c.kind !== "choice" && c.current !== undefined && c.path !== "seed")?.path ??
        choices[0]?.path ??
        "",
    ),
  );
  const [second, setSecond] = useState<Range>(() => rangeOf(choices, ""));
  const choice = choices.find((c) => c.path === x.path) ?? choices[0];
  const secondChoice = choices.find((c) => c.path === second.path);
  const [seeds, setSeeds] = useState("1");
  const [refine, setRefine] = useState("");
  const [status, setStatus] = useState<Status>({ phase: "idle" });
  const [recipient, setRecipient] = useState<string | undefined>();
  const [openSeed, setOpenSeed] = useState<number | string | undefined>();
  const abort = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => abort.current?.abort(), []);

  const start = async (e: FormEvent) => {
    e.preventDefault();
    if (choice === undefined) return;
    const n = Number(seeds.trim() || "1");
    if (!Number.isInteger(n) || n < 1 || n > 1000) {
      return setStatus({ phase: "failed", errors: [`Seeds: "${seeds}" is not a whole number from 1 to 1000.`] });
    }
    const resolution = refine.trim() === "" ? undefined : parseResolution(refine);
    if (resolution !== undefined && !resolution.ok) return setStatus({ phase: "failed", errors: [resolution.message] });
    const seedList = n > 1 ? Array.from({ length: n }, (_, k) => k + 1) : undefined;
    const varies = [{ path: choice.path, values: rangeValues(choice, x.from, x.to, x.step) }];
    if (secondChoice !== undefined) {
      varies.push({
        path: secondChoice.path,
        values: rangeValues(secondChoice, second.from, second.to, second.step),
      });
    }
    const planned = planSweep(base.text, varies, seedList);
    if (!planned.ok)
      return setStatus({ phase: "failed", errors: planned.errors.map((e) => `${e.path}: ${e.message}`) });
    const { plan } = planned;
    const problem = chartProblem(plan);
    if (problem !== undefined) return setStatus({ phase: "failed", errors: [problem] });
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    const pool = workerRunPool(createWorker, poolSize());
    controller.signal.addEventListener("abort", () => pool.close(), { once: true });
    const points: (PointResult | undefined)[] = Array.from({ length: plan.points.length }, () => undefined);
    let done = 0;
    let total = plan.points.length * (seedList?.length ?? 1);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const running = (): Status => ({
      phase: "running",
      plan,
      points: [...points],
      done,
      planned: total,
      workers: pool.size,
      boundaries: [],
    });
    const draw = () => {
      timer = undefined;
      // A transition: React draws the charts in slices, between which the page answers the user.
      if (!controller.signal.aborted) startTransition(() => setStatus(running()));
    };
    setRecipient(undefined);
    setOpenSeed(seedList?.[0]);
    setStatus(running());
    try {
      const result = await runSweep(plan, {
        text: base.text,
        file: base.file,
        pool,
        settings: base.settings,
        mailscope,
        signal: controller.signal,
        ...(resolution?.ok === true && { refine: resolution.value }),
        onPoint: (p) => {
          points[p.point.index] = p;
        },
        onRun: (d, t) => {
          done = d;
          total = t;
          timer ??= setTimeout(draw, DRAW_EVERY_MS);
        },
      });
      if (timer !== undefined) clearTimeout(timer);
      setStatus({
        phase: controller.signal.aborted ? "stopped" : "done",
        plan,
        points: result.points,
        done: result.runs,
        planned: result.runs,
        workers: pool.size,
        boundaries: result.boundaries,
      });
    } finally {
      pool.close();
    }
  };

  const stop = () => abort.current?.abort();
  const knobs = [choice, secondChoice].filter((c): c is SweepChoice => c !== undefined && /^[A-Z]+-\d/.test(c.path));

  return (
    <section aria-labelledby="sweep-title" className="run sweep">
      <header className="run-head">
        <h2 id="sweep-title">Sweep: {base.name}</h2>
        <button onClick={onBack}>Back to the run</button>
      </header>
      <form className="panel sweep-form" aria-label="What to sweep" onSubmit={(e) => void start(e)}>
        <span className="sweep-field">
          <label htmlFor={fieldId}>Field</label>
          <FieldSelect
            id={fieldId}
            choices={choices}
            value={choice?.path ?? ""}
            onChange={(p) => setX(rangeOf(choices, p))}
          />
        </span>
        <RangeInputs choice={choice} range={x} onChange={setX} prefix="" />
        <span className="sweep-field sweep-series">
          <label htmlFor={seriesId}>Series by</label>
          <FieldSelect
            id={seriesId}
            choices={choices.filter((c) => c.path !== choice?.path)}
            value={second.path}
            onChange={(p) => setSecond(rangeOf(choices, p))}
            none="(none: one field)"
          />
        </span>
        {secondChoice !== undefined && (
          <RangeInputs choice={secondChoice} range={second} onChange={setSecond} prefix="Series " />
        )}
        <label>
          Seeds
          <input value={seeds} onChange={(e) => setSeeds(e.target.value)} size={4} inputMode="numeric" />
        </label>
        {choice?.kind !== "choice" && (
          <label>
            Refine boundaries to
            <input value={refine} onChange={(e) => setRefine(e.target.value)} size={6} placeholder="e.g. 1m" />
          </label>
        )}
        {/* Keyed apart: React must not turn the submit button it was clicked as into Stop (a click on Stop then submitted). */}
        {status.phase === "running" ? (
          <button key="stop" type="button" onClick={stop}>
            Stop
          </button>
        ) : (
          <button key="run" type="submit" className="primary" disabled={choice === undefined}>
            Run the sweep
          </button>
        )}
        {choice?.description !== undefined && <p className="muted sweep-help">{choice.description}</p>}
        {secondChoice?.description !== undefined && <p className="muted sweep-help">{secondChoice.description}</p>}
        {knobs.map((k) => (
          <p className="departs" role="note" key={k.path}>
            Every point changes the draft&apos;s {k.path}: its runs depart from SPEC.md, and say so.
          </p>
        ))}
      </form>
      {status.phase === "failed" && (
        <section role="alert" aria-label="Cannot sweep" className="panel errors">
          <ul>
            {status.errors.map((x) => (
              <li key={x}>
                <code>{x}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
      {status.phase !== "idle" && status.phase !== "failed" && (
        <Results
          status={status}
          base={base}
          recipient={recipient}
          onRecipient={setRecipient}
          openSeed={openSeed}
          onOpenSeed={setOpenSeed}
          onOpenRun={onOpenRun}
          onCompare={onCompare}
        />
      )}
    </section>
  );
}

/** A field and its range as the form holds them. */
interface Range {
  readonly path: string;
  readonly from: string;
  readonly to: string;
  readonly step: string;
}

/** `path` with the range it starts with ("" for none). */
function rangeOf(choices: readonly SweepChoice[], path: string): Range {
  const c = choices.find((x) => x.path === path);
  return { path: c?.path ?? "", from: c?.from ?? "", to: c?.to ?? "", step: c?.step ?? "" };
}

/** The fields a sweep can vary, grouped: the scenario's, the gap readings, the draft's numbers. */
function FieldSelect({
  id,
  choices,
  value,
  onChange,
  none,
}: {
  readonly id: string;
  readonly choices: readonly SweepChoice[];
  readonly value: string;
  readonly onChange: (path: string) => void;
  readonly none?: string;
}) {
  const group = (label: string, test: (path: string) => boolean) => (
    <optgroup label={label}>
      {choices
        .filter((c) => test(c.path))
        .map((c) => (
          <option key={c.path} value={c.path}>
            {c.label}
          </option>
        ))}
    </optgroup>
  );
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      {none !== undefined && <option value="">{none}</option>}
      {group("The scenario's numbers and durations", (p) => !/^(G\d|[A-Z]+-\d)/.test(p))}
      {group("Gap readings", (p) => /^G\d/.test(p))}
      {group("The draft's numbers", (p) => /^[A-Z]+-\d/.test(p))}
    </select>
  );
}

/** A field's range (from, to, step), or the readings a choice sweeps. */
function RangeInputs({
  choice,
  range,
  onChange,
  prefix,
}: {
  readonly choice: SweepChoice | undefined;
  readonly range: Range;
  readonly onChange: (range: Range) => void;
  /** Before each label: "" for the x axis, "Series " for a grid's second field. */
  readonly prefix: string;
}) {
  if (choice?.kind === "choice") {
    return <span className="muted">every reading: {(choice.options ?? []).join(", ")}</span>;
  }
  const input = (name: "from" | "to" | "step", label: string, size: number) => (
    <label>
      {prefix === "" ? label : `${prefix}${label.toLowerCase()}`}
      <input value={range[name]} onChange={(e) => onChange({ ...range, [name]: e.target.value })} size={size} />
    </label>
  );
  return (
    <>
      {input("from", "From", 8)}
      {input("to", "To", 8)}
      {input("step", "Step", 6)}
    </>
  );
}

interface ResultsProps {
  readonly status: Extract<Status, { plan: SweepPlan }>;
  readonly base: CompareBase;
  readonly recipient: string | undefined;
  readonly onRecipient: (key: string) => void;
  readonly openSeed: number | string | undefined;
  readonly onOpenSeed: (seed: number | string) => void;
  readonly onOpenRun: SweepViewProps["onOpenRun"];
  readonly onCompare: SweepViewProps["onCompare"];
}

function Results({ status, base, recipient, onRecipient, openSeed, onOpenSeed, onOpenRun, onCompare }: ResultsProps) {
  const { plan, points } = status;
  const chart = useMemo(() => sweepChart(plan, points, recipient), [plan, points, recipient]);
  const boundaries = boundariesOf(status.boundaries, chart.recipients.length > 1 ? chart.recipient : undefined);
  const [boxRef, width] = useWidth(800);
  const open = (index: number | undefined) => {
    const p = index === undefined ? undefined : points[index];
    if (p !== undefined) onOpenRun(pointRun(base, plan, p.point.values, openSeed));
  };
  // The charts keep the `open` of the frame they were drawn in: it must open with the seed chosen since.
  const latestOpen = useRef(open);
  useEffect(() => {
    latestOpen.current = open;
  });
  const openPoint = useCallback((index: number) => latestOpen.current(index), []);
  // What the charts draw: each redraws (in its turn) when this changes.
  const drawn = useMemo(() => ({ chart, width }), [chart, width]);
  const finished = points.filter((p) => p !== undefined).length;
  const grid = chart.series !== undefined;
  const multiples = chart.series?.labels.length ?? 1;
  return (
    <>
      <p role="status" className="notice" data-testid="sweep-progress">
        {status.phase === "running"
          ? `Running: ${status.done} of ${status.planned} runs (${finished} of ${plan.points.length} points) in ${status.workers} workers…`
          : status.phase === "stopped"
            ? `Stopped: ${finished} of ${plan.points.length} points ran.`
            : `Done: ${status.done} runs, ${plan.points.length} points, ${status.boundaries.length} boundar${status.boundaries.length === 1 ? "y" : "ies"}.`}
      </p>
      <div className="panel sweep-charts" ref={boxRef}>
        <div className="panel-head">
          <h3>
            By {chart.axis.path}
            {chart.series && ` and ${chart.series.path}`}
          </h3>
          {chart.recipients.length > 1 && (
            <label>
              Recipient{" "}
              <select
                aria-label="Recipient"
                value={chart.recipient ?? ""}
                onChange={(e) => onRecipient(e.target.value)}
              >
                {chart.recipients.map((r) => (
                  <option key={r.key} value={r.key}>
                    {r.label}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
        <p className="muted">
          {grid
            ? `Click a point of a small chart (one per ${chart.series?.path ?? ""}), a dot of a line or a row of the table to open its run.`
            : "Click a point to open its run."}
        </p>
        <SmallMultiples
          chart={chart}
          width={width}
          testId="outcome-bands"
          legend={<OutcomeLegend chart={chart} />}
          slot={0}
          height={grid ? 150 : 200}
        >
          {(rows, w, title) => <OutcomeBands chart={chart} rows={rows} width={w} title={title} onOpen={openPoint} />}
        </SmallMultiples>
        <InTurn slot={multiples} drawn={drawn} height={220}>
          {() => <TimeChart chart={chart} width={width} onOpen={openPoint} />}
        </InTurn>
        <InTurn slot={multiples + 1} drawn={drawn} height={200}>
          {() => <CountChart chart={chart} width={width} onOpen={openPoint} />}
        </InTurn>
        {chart.seeds && (
          <SmallMultiples chart={chart} width={width} testId="box-chart" slot={multiples + 2} height={grid ? 170 : 200}>
            {(rows, w, title) => <BoxChart chart={chart} rows={rows} width={w} title={title} onOpen={openPoint} />}
          </SmallMultiples>
        )}
      </div>
      {status.boundaries.length > 0 && (
        <section className="panel" aria-labelledby="boundaries-heading">
          <h3 id="boundaries-heading">
            {boundariesHeading(
              status.boundaries.length,
              boundaries.length,
              chart.recipients.length > 1 ? chart.recipient : undefined,
            )}
          </h3>
          <ul className="boundaries">
            {boundaries.map((b) => {
              const held = heldText(plan, points, b);
              return (
                <li key={`${b.fromPoint} ${b.toPoint} ${b.message} ${b.recipient}`} data-testid="boundary">
                  <span>{b.text}</span>
                  {b.refined !== undefined && <span className="muted"> — {b.refined.text}</span>}{" "}
                  <button onClick={() => onCompare(boundarySides(base, plan, points, b, openSeed))}>
                    Compare {b.refined?.from.text ?? b.from.text} and {b.refined?.to.text ?? b.to.text}
                    {held}
                  </button>
                </li>
              );
            })}
          </ul>
        </section>
      )}
      <PointsTable
        chart={chart}
        boundaries={boundaries}
        seeds={plan.seeds}
        openSeed={openSeed}
        onOpenSeed={onOpenSeed}
        onOpen={open}
      />
    </>
  );
}

/** On a grid, what a boundary's button holds fixed: ` at G16.fallback-window 2h` (its two sides differ on the other field). */
function heldText(plan: SweepPlan, points: readonly (PointResult | undefined)[], b: Boundary): string {
  if (plan.axes.length < 2) return "";
  const values = points[b.fromPoint]?.point.values ?? [];
  return plan.axes
    .map((a, k) => (k === b.axis ? undefined : ` at ${a.path} ${values[k]?.text ?? "?"}`))
    .filter((x) => x !== undefined)
    .join("");
}

/**
 * A chart drawn in its turn: when what it draws changes (`drawn`), it is
 * drawn `slot` frames later, so that a redraw of the Sweep view draws one
 * chart per frame rather than every chart in one task of the page (Recharts
 * draws a chart in one go). Until its first turn it holds its place.
 */
function InTurn({
  slot,
  drawn,
  height,
  children,
}: {
  readonly slot: number;
  readonly drawn: unknown;
  readonly height: number;
  readonly children: () => React.ReactNode;
}) {
  const [shown, setShown] = useState<React.ReactNode>(undefined);
  const draw = useRef(children);
  useEffect(() => {
    draw.current = children;
  });
  useEffect(() => {
    let left = slot;
    let frame = requestAnimationFrame(function turn() {
      if (left-- > 0) frame = requestAnimationFrame(turn);
      // The same element until the next turn: React leaves the chart alone when the view redraws meanwhile.
      else setShown(draw.current());
    });
    return () => cancelAnimationFrame(frame);
  }, [drawn, slot]);
  return shown ?? <div style={{ height }} aria-hidden="true" />;
}

/** One chart, or on a grid one small chart per value of the second field (in as many columns as fit), each in its turn. */
function SmallMultiples({
  chart,
  width,
  testId,
  legend,
  slot,
  height,
  children,
}: {
  readonly chart: SweepChart;
  readonly width: number;
  readonly testId: string;
  readonly legend?: React.ReactNode;
  /** The first chart's turn (the others follow, a frame each), and the height it holds until then. */
  readonly slot: number;
  readonly height: number;
  readonly children: (rows: readonly SweepRow[], width: number, title?: string) => React.ReactNode;
}) {
  const series = chart.series;
  const drawn = useMemo(() => ({ chart, width }), [chart, width]);
  if (series === undefined)
    return (
      <div data-testid={testId}>
        <InTurn slot={slot} drawn={drawn} height={height}>
          {() => children(chart.rows, width)}
        </InTurn>
      </div>
    );
  const columns = Math.max(1, Math.min(series.labels.length, Math.floor(width / 300)));
  const w = Math.floor((width - (columns - 1) * 12) / columns);
  return (
    <div data-testid={testId}>
      {legend}
      <div className="small-multiples" style={{ gridTemplateColumns: `repeat(${columns}, ${w}px)` }}>
        {series.labels.map((label, i) => (
          <div key={label}>
            <InTurn slot={slot + i} drawn={drawn} height={height}>
              {() => children(seriesRows(chart, i), w, `${series.path} = ${label}`)}
            </InTurn>
          </div>
        ))}
      </div>
    </div>
  );
}

/** The outcomes' colours once above a grid's small charts (each small chart has no legend of its own). */
function OutcomeLegend({ chart }: { readonly chart: SweepChart }) {
  return (
    <ul className="sweep-legend" aria-label="Outcomes">
      {chart.outcomes.map((o) => (
        <li key={o}>
          <span className="swatch" style={{ background: BAND_COLOUR[o] ?? "#586174" }} aria-hidden="true" /> {o}
        </li>
      ))}
    </ul>
  );
}

interface ChartProps {
  readonly chart: SweepChart;
  readonly width: number;
  /** Opens the run of the point at this index of the plan. */
  readonly onOpen: (point: number) => void;
}

interface SmallChartProps extends ChartProps {
  /** The points this chart draws (one series of a grid, or all). */
  readonly rows: readonly SweepRow[];
  /** A small chart's title: `G16.fallback-window = 2h`. */
  readonly title?: string | undefined;
}

/** A click on a chart of `rows`: the run of the point under the pointer. */
const clickOf =
  (rows: readonly { point?: number }[], onOpen: (point: number) => void) =>
  (state: MouseHandlerDataParam): void => {
    const point = rows[Number(state.activeTooltipIndex)]?.point;
    if (point !== undefined) onOpen(point);
  };

/** The x axis of every chart: the value in its unit, or the named readings. */
function xAxis(chart: SweepChart, small = false) {
  const { axis } = chart;
  const ticks = axis.ticks;
  return (
    <XAxis
      dataKey="x"
      type="number"
      domain={ticks ? [-0.5, ticks.length - 0.5] : ["dataMin", "dataMax"]}
      {...(ticks && { ticks: ticks.map((_, i) => i), tickFormatter: (i: number) => ticks[i] ?? "" })}
      allowDecimals={axis.kind !== "integer" && !ticks}
      label={{
        value: `${axis.path}${axis.unit ? ` (${axis.unit.name})` : ""}`,
        ...(small && { fontSize: 12 }),
        position: "insideBottom",
        offset: -4,
      }}
      height={44}
    />
  );
}

const MARGIN = { top: 8, right: 24, bottom: 8, left: 8 };

/** A tooltip's heading: the value as written (`2h30m`), not its place on the axis. */
const pointLabel = (_: unknown, payload: readonly { payload?: { label?: string } }[]) =>
  String(payload[0]?.payload?.label ?? "");

const percent = (v: number) => `${Math.round(v * 100)}%`;

/** Outcome by value: the share of each outcome at each value, a band per outcome (one small chart per series on a grid). */
function OutcomeBands({ chart, rows, width, title, onOpen }: SmallChartProps) {
  // Every outcome at every point (0 where it did not happen), so that a band narrows rather than breaks off.
  // Straight lines from point to point, a dot at each: between two points nothing was run, so a band changes
  // along the whole gap (a step drawn halfway between them claimed a boundary where none was measured).
  const none = Object.fromEntries(chart.outcomes.map((o) => [o, 0]));
  const data = rows.map((r) => ({ x: r.x, label: r.label, point: r.point, ...none, ...r.shares }));
  return (
    <figure
      aria-label={`Outcome by ${chart.axis.path}${title ? ` at ${title}` : ""}: the share of each outcome`}
      data-testid="outcome-band"
      data-series={title}
    >
      <figcaption>{title ?? "Outcome by value"}</figcaption>
      <AreaChart width={width} height={title ? 150 : 200} data={data} onClick={clickOf(data, onOpen)} margin={MARGIN}>
        <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
        {xAxis(chart, title !== undefined)}
        <YAxis domain={[0, 1]} tickFormatter={percent} width={48} />
        <Tooltip formatter={(v) => percent(Number(v))} labelFormatter={pointLabel} />
        {title === undefined && <Legend verticalAlign="top" height={28} />}
        {chart.outcomes.map((o) => (
          <Area
            key={o}
            dataKey={o}
            name={o}
            stackId="outcomes"
            type="linear"
            stroke={BAND_COLOUR[o] ?? "#586174"}
            fill={BAND_COLOUR[o] ?? "#586174"}
            fillOpacity={0.55}
            dot={{ r: 2, fill: BAND_COLOUR[o] ?? "#586174", fillOpacity: 1 }}
            isAnimationActive={false}
          />
        ))}
      </AreaChart>
    </figure>
  );
}

/** Recharts' props of one dot of a line (its place, its colour, its datum). */
interface DotProps {
  readonly cx?: number;
  readonly cy?: number;
  readonly stroke?: string;
  readonly index?: number;
  readonly payload?: unknown;
}

/**
 * A dot that opens its point's run: clicked, or focused (Tab) and Enter or
 * Space — a button named by the point and its value (`Time at 2h,
 * G16.fallback-window 1h: +1:03:00`). Its click does not reach the chart's.
 */
function PointDot(props: DotProps & { readonly name: string | undefined; readonly onOpen: () => void }) {
  const { cx, cy, stroke, name, onOpen } = props;
  const ref = useRef<SVGGElement>(null);
  useEffect(() => {
    const dot = ref.current;
    if (dot !== null && name !== undefined && shouldTakeFocus(name)) dot.focus();
  }, [name]);
  if (name === undefined || cx === undefined || cy === undefined || !Number.isFinite(cx) || !Number.isFinite(cy))
    return <g />;
  return (
    <g
      ref={ref}
      role="button"
      tabIndex={0}
      aria-label={name}
      className="sweep-dot"
      onFocus={(e) => {
        focusedDot = { name, element: e.currentTarget };
      }}
      onClick={(e) => {
        e.stopPropagation();
        onOpen();
      }}
      onKeyDown={(e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        e.stopPropagation();
        onOpen();
      }}
    >
      <title>{name}</title>
      <circle cx={cx} cy={cy} r={8} fill="transparent" />
      <circle cx={cx} cy={cy} r={3} fill="var(--bg, #fff)" stroke={stroke} strokeWidth={2} />
    </g>
  );
}

/**
 * The dot that had the keyboard's focus last. Recharts lays a line's dots out
 * anew when a chart is redrawn (a resize, the charts drawn again after Back):
 * the focused dot leaves the page and the focus falls to the page's body. The
 * dot drawn in its place, with the same name, takes the focus back — only then
 * (a dot the user left by clicking elsewhere is still on the page: it stays
 * unfocused).
 */
let focusedDot: { readonly name: string; readonly element: Element } | undefined;

function shouldTakeFocus(name: string): boolean {
  if (focusedDot === undefined || focusedDot.name !== name || focusedDot.element.isConnected) return false;
  const active = document.activeElement;
  return active === null || active === document.body;
}

/** The words a dot of point `row` is named by: `Time at 2h, G16.fallback-window 1h: +1:03:00`. */
function dotName(chart: SweepChart, row: SweepRow | undefined, what: string, value: string): string | undefined {
  if (row === undefined) return undefined;
  const series = chart.series ? `, ${chart.series.path} ${chart.series.labels[row.series] ?? ""}` : "";
  return `${what} at ${row.label}${series}: ${value}`;
}

/** A line's dots for the rows of a chart (one field), each opening its point. */
function rowDots(chart: SweepChart, onOpen: (point: number) => void, what: string, value: (r: SweepRow) => string) {
  const RowDot = (props: DotProps) => {
    const row = chart.rows[props.index ?? -1];
    return (
      <PointDot
        key={`${what} ${props.index}`}
        cx={props.cx}
        cy={props.cy}
        stroke={props.stroke}
        name={dotName(chart, row, what, row ? value(row) : "")}
        onOpen={() => row && onOpen(row.point)}
      />
    );
  };
  return RowDot;
}

/** A line per value of a grid's second field, named by it; each dot opens its own point (its x, its series). */
function seriesLines(chart: SweepChart, onOpen: (point: number) => void, what: string, value: (r: SweepRow) => string) {
  const byPoint = new Map(chart.rows.map((r) => [r.point, r]));
  return (chart.series?.labels ?? []).map((label, i) => (
    <Line
      key={label}
      dataKey={`s${i}`}
      name={`${chart.series?.path ?? ""} ${label}`}
      stroke={seriesColour(i)}
      strokeWidth={2}
      dot={(props: DotProps) => {
        const point = (props.payload as SeriesDatum | undefined)?.points[i];
        const row = point === undefined ? undefined : byPoint.get(point);
        return (
          <PointDot
            key={`s${i} ${props.index}`}
            cx={props.cx}
            cy={props.cy}
            stroke={props.stroke}
            name={dotName(chart, row, what, row ? value(row) : "")}
            onOpen={() => row && onOpen(row.point)}
          />
        );
      }}
      activeDot={false}
      connectNulls
      isAnimationActive={false}
    />
  ));
}

/** A grid's chart: one line per value of the second field, of one number of each point; a dot opens its point. */
function SeriesChart(p: {
  readonly chart: SweepChart;
  readonly width: number;
  readonly height: number;
  readonly value: Parameters<typeof seriesData>[1];
  /** A dot's name: what it shows (`Time`) and its value as the table writes it. */
  readonly what: string;
  readonly valueText: (r: SweepRow) => string;
  readonly onOpen: (point: number) => void;
  readonly wholeNumbers?: boolean;
  readonly label: string;
  readonly caption: string;
  readonly testId: string;
}) {
  return (
    <figure aria-label={p.label} data-testid={p.testId}>
      <figcaption>{p.caption}</figcaption>
      <ComposedChart width={p.width} height={p.height} data={seriesData(p.chart, p.value)} margin={MARGIN}>
        <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
        {xAxis(p.chart)}
        <YAxis allowDecimals={p.wholeNumbers !== true} width={48} />
        <Tooltip labelFormatter={pointLabel} />
        <Legend verticalAlign="top" height={28} />
        {seriesLines(p.chart, p.onOpen, p.what, p.valueText)}
      </ComposedChart>
    </figure>
  );
}

/** The outcome's time against the value: the median (with min–max and p90 under seeds); a line per series on a grid. */
function TimeChart({ chart, width, onOpen }: ChartProps) {
  const unit = chart.timeUnit.name;
  const label = `Time of the outcome against ${chart.axis.path}, in ${unit}`;
  if (chart.series !== undefined) {
    return (
      <SeriesChart
        chart={chart}
        width={width}
        height={220}
        value={(r) => r.time?.median}
        what="Time"
        valueText={(r) => r.text.time}
        onOpen={onOpen}
        label={`${label}, a line per ${chart.series.path}`}
        caption={`Time of the outcome (${chart.seeds ? "median, " : ""}${unit} after the start), a line per ${chart.series.path}`}
        testId="time-chart"
      />
    );
  }
  const data = chart.rows.map((r) => ({
    x: r.x,
    label: r.label,
    point: r.point,
    median: r.time?.median,
    p90: r.time?.p90,
    range: r.time ? [r.time.min, r.time.max] : undefined,
  }));
  return (
    <figure aria-label={label} data-testid="time-chart">
      <figcaption>Time of the outcome ({unit} after the start)</figcaption>
      <ComposedChart width={width} height={200} data={data} onClick={clickOf(data, onOpen)} margin={MARGIN}>
        <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
        {xAxis(chart)}
        <YAxis width={48} />
        <Tooltip labelFormatter={pointLabel} />
        <Legend verticalAlign="top" height={28} />
        {chart.seeds && (
          <Area
            dataKey="range"
            name="min – max"
            stroke="none"
            fill="#2f5fd0"
            fillOpacity={0.15}
            isAnimationActive={false}
          />
        )}
        {chart.seeds && (
          <Line dataKey="p90" name="p90" stroke="#8a5cf6" strokeDasharray="4 3" dot={false} isAnimationActive={false} />
        )}
        <Line
          dataKey="median"
          name={chart.seeds ? "median" : "time"}
          stroke="#2f5fd0"
          strokeWidth={2}
          dot={rowDots(chart, onOpen, "Time", (r) => r.text.time)}
          activeDot={false}
          isAnimationActive={false}
        />
      </ComposedChart>
    </figure>
  );
}

/** Attempts and POSTs against the value (medians; attempts' min–max under seeds); attempts per series on a grid. */
function CountChart({ chart, width, onOpen }: ChartProps) {
  if (chart.series !== undefined) {
    return (
      <SeriesChart
        chart={chart}
        width={width}
        height={200}
        value={(r) => r.attempts?.median}
        what="Attempts"
        valueText={(r) => r.text.attempts}
        onOpen={onOpen}
        wholeNumbers
        label={`Attempts against ${chart.axis.path}, a line per ${chart.series.path}`}
        caption={`Attempts${chart.seeds ? " (median)" : ""}, a line per ${chart.series.path} (POSTs in the table)`}
        testId="attempts-chart"
      />
    );
  }
  const data = chart.rows.map((r) => ({
    x: r.x,
    label: r.label,
    point: r.point,
    attempts: r.attempts?.median,
    posts: r.posts?.median,
    range: r.attempts ? [r.attempts.min, r.attempts.max] : undefined,
  }));
  return (
    <figure aria-label={`Attempts and POSTs against ${chart.axis.path}`} data-testid="attempts-chart">
      <figcaption>Attempts and POSTs</figcaption>
      <ComposedChart width={width} height={180} data={data} onClick={clickOf(data, onOpen)} margin={MARGIN}>
        <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
        {xAxis(chart)}
        <YAxis allowDecimals={false} width={48} />
        <Tooltip labelFormatter={pointLabel} />
        <Legend verticalAlign="top" height={28} />
        {chart.seeds && (
          <Area
            dataKey="range"
            name="attempts min – max"
            stroke="none"
            fill="#e08a00"
            fillOpacity={0.15}
            isAnimationActive={false}
          />
        )}
        <Line
          dataKey="attempts"
          name="attempts"
          stroke="#e08a00"
          strokeWidth={2}
          dot={rowDots(chart, onOpen, "Attempts", (r) => r.text.attempts)}
          activeDot={false}
          isAnimationActive={false}
        />
        <Line dataKey="posts" name="POSTs" stroke="#1f8a45" dot={{ r: 2 }} isAnimationActive={false} />
      </ComposedChart>
    </figure>
  );
}

/** Under seeds: the outcome times of each point as a box (median to p90) on a whisker (min to max). */
function BoxChart({ chart, rows, width, title, onOpen }: SmallChartProps) {
  const data = rows.map((r) => ({
    label: r.label,
    point: r.point,
    time: r.time,
    whisker: r.time ? [r.time.min, r.time.max] : undefined,
  }));
  const unit = chart.timeUnit.name;
  const top = maxOf(
    chart.rows.map((r) => r.time?.max ?? 0),
    0,
  );
  return (
    <figure
      aria-label={`Distribution of the outcome times at each value${title ? ` at ${title}` : ""}, in ${unit}`}
      data-testid="box-plot"
      data-series={title}
    >
      <figcaption>
        {title ?? `Outcome times per value: box median to p90, whiskers min to max (${unit} after the start)`}
      </figcaption>
      <ComposedChart
        width={width}
        height={title ? 170 : 200}
        data={data}
        onClick={clickOf(data, onOpen)}
        margin={MARGIN}
      >
        <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
        <XAxis
          dataKey="label"
          height={44}
          label={{ value: title ? "" : chart.axis.path, position: "insideBottom", offset: -4 }}
        />
        <YAxis width={48} domain={[0, top > 0 ? Math.ceil(top) : 1]} />
        <Tooltip
          formatter={(_, __, item) => {
            const t = (item.payload as { time?: SweepRow["time"] }).time;
            return t ? `min ${t.min} · median ${t.median} · p90 ${t.p90} · max ${t.max} ${unit}` : "no outcome";
          }}
        />
        <Bar dataKey="whisker" name="outcome time" shape={BoxShape} isAnimationActive={false} minPointSize={0} />
      </ComposedChart>
    </figure>
  );
}

/**
 * One point's box: the bar Recharts places spans min to max (the whisker);
 * the box and the median are placed on it by their values.
 */
function BoxShape(props: unknown) {
  const { x, y, width, height, payload } = props as {
    x: number;
    y: number;
    width: number;
    height: number;
    payload: { label: string; time?: SweepRow["time"] };
  };
  const t = payload.time;
  if (t === undefined || !Number.isFinite(y)) return <g />;
  const yOf = (v: number) => (t.max === t.min ? y : y + (height * (t.max - v)) / (t.max - t.min));
  const mid = x + width / 2;
  const half = Math.min(10, width / 2);
  const boxTop = yOf(t.p90);
  const boxBottom = yOf(t.median);
  return (
    <g
      className="box"
      data-value={payload.label}
      data-min={t.min}
      data-median={t.median}
      data-p90={t.p90}
      data-max={t.max}
    >
      <line x1={mid} x2={mid} y1={y} y2={y + height} stroke="#586174" strokeWidth={1.5} />
      <line x1={mid - half / 2} x2={mid + half / 2} y1={y} y2={y} stroke="#586174" strokeWidth={1.5} />
      <line
        x1={mid - half / 2}
        x2={mid + half / 2}
        y1={y + height}
        y2={y + height}
        stroke="#586174"
        strokeWidth={1.5}
      />
      <rect
        x={mid - half}
        y={boxTop}
        width={half * 2}
        height={Math.max(1, boxBottom - boxTop)}
        fill="#2f5fd0"
        fillOpacity={0.45}
        stroke="#2f5fd0"
      />
      <line x1={mid - half} x2={mid + half} y1={boxBottom} y2={boxBottom} stroke="#1c3f94" strokeWidth={2.5} />
    </g>
  );
}

function PointsTable({
  chart,
  boundaries,
  seeds,
  openSeed,
  onOpenSeed,
  onOpen,
}: {
  readonly chart: SweepChart;
  readonly boundaries: readonly Boundary[];
  readonly seeds: readonly (number | string)[] | undefined;
  readonly openSeed: number | string | undefined;
  readonly onOpenSeed: (seed: number | string) => void;
  readonly onOpen: (point: number) => void;
}) {
  const table = pointsTable(chart, boundaries);
  return (
    <section className="panel" aria-labelledby="points-heading">
      <div className="panel-head">
        <h3 id="points-heading">Points</h3>
        {seeds !== undefined && (
          <label>
            Open runs with seed{" "}
            <select
              aria-label="Open runs with seed"
              value={String(openSeed ?? seeds[0])}
              onChange={(e) => onOpenSeed(seeds.find((s) => String(s) === e.target.value) ?? e.target.value)}
            >
              {seeds.map((s) => (
                <option key={String(s)}>{String(s)}</option>
              ))}
            </select>
          </label>
        )}
      </div>
      <Table
        className="sweep-table"
        columns={[
          chart.axis.path,
          chart.series?.path,
          "outcome",
          "at",
          "attempts",
          "POSTs",
          "checks",
          { hidden: "run" },
        ]}
      >
        {table.lines.map((line) => {
          if (line.kind === "boundary") {
            const b = line.boundary;
            return (
              <tr key={`${b.fromPoint} ${b.toPoint} ${b.message} ${b.recipient}`} className="boundary-row">
                <td colSpan={chart.series ? 8 : 7}>↳ {b.text}</td>
              </tr>
            );
          }
          const r = line.row;
          return (
            <tr key={r.point} data-testid="sweep-point" data-outcome={r.mode}>
              <td>{r.label}</td>
              {chart.series && <td>{chart.series.labels[r.series]}</td>}
              <td>{r.text.outcome}</td>
              <td>{r.text.time}</td>
              <td>{r.text.attempts}</td>
              <td>{r.text.posts}</td>
              <td>{r.checks}</td>
              <td>
                <button
                  onClick={() => onOpen(r.point)}
                  aria-label={`Open run at ${r.label}${chart.series ? `, ${chart.series.path} ${chart.series.labels[r.series] ?? ""}` : ""}`}
                >
                  Open run
                </button>
              </td>
            </tr>
          );
        })}
      </Table>
      {table.apart.length > 0 && (
        <>
          <p className="muted" id="apart-heading">
            Boundaries along {chart.series?.path ?? "another field"} (each joins rows of two blocks above):
          </p>
          <ul className="boundaries" aria-labelledby="apart-heading" data-testid="boundaries-apart">
            {table.apart.map((b) => (
              <li key={`${b.fromPoint} ${b.toPoint} ${b.message} ${b.recipient}`}>↳ {b.text}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
