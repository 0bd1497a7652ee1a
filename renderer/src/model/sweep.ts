/**
 * The Sweep view's data (note 0067): the fields of the scenario on screen a
 * sweep can vary — its numbers and durations as the scenario's schema (the
 * editor's) describes them, the gap readings and the draft's numbers — with a
 * range to start from; and, from the points as they finish, what the charts
 * draw: the share of each outcome by value (a band per outcome), the outcome
 * time, attempts and POSTs against the value, a box per point with seeds, the
 * boundaries, and the two sides Compare runs for a boundary. Everything is
 * read off the runs' outcomes (app/sim/sweep.ts), the same as `mailscope
 * sweep` prints.
 */
import { maxOf } from "../../../app/protocol/lists.ts";
import { parseDocument } from "yaml";
import { SPEC_CONSTANTS, specKnob } from "../../../app/protocol/specConstants.ts";
import { knobValueText } from "../../../app/sim/constants.ts";
import {
  checksText,
  countText,
  outcomeText,
  timeText,
  OUTCOME_ORDER,
  type Boundary,
  type PointResult,
  type RecipientSummary,
} from "../../../app/sim/sweep.ts";
import {
  pointScenarios,
  pointText,
  sweepFields,
  type AxisKind,
  type SweepAxis,
  type SweepField,
  type SweepPlan,
  type SweepValue,
} from "../../../app/sim/sweepPlan.ts";
import { parseDurationMs } from "../../../app/sim/faultScope.ts";
import { durationWords } from "../../../app/sim/constants.ts";
import type { CompareBase, CompareSide } from "./compare.ts";

/** A field the form offers, with the range it starts with. */
export interface SweepChoice extends SweepField {
  /** `faults.network[b-down].until (now 3h)`. */
  readonly label: string;
  /** Where the range starts, ends and steps, as the field writes values; a choice has none (all its readings). */
  readonly from: string;
  readonly to: string;
  readonly step: string;
}

/** The fields of `text` a sweep can vary, each with a range around its value; none when the text does not parse. */
export function sweepChoices(text: string): SweepChoice[] {
  let data: unknown;
  try {
    data = parseDocument(text).toJS();
  } catch {
    return [];
  }
  return sweepFields(data).map((f) => ({ ...f, ...startRange(f), label: labelOf(f) }));
}

function labelOf(f: SweepField): string {
  if (f.kind === "choice") return `${f.path} (${(f.options ?? []).join(" or ")})`;
  const knob = specKnob(f.path);
  if (knob !== undefined)
    return `${f.path}: ${knob.title} (SPEC.md ${knobValueText(knob, SPEC_CONSTANTS[knob.field])})`;
  return f.current !== undefined ? `${f.path} (now ${f.current})` : f.path;
}

/** A step of about a tenth of `span` that reads well: 1, 2 or 5 times a power of ten, or a whole duration. */
function niceStep(span: number, kind: AxisKind): number {
  if (kind === "duration" || kind === "time") {
    const steps = [
      1000, 5000, 15_000, 30_000, 60_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000,
      86_400_000,
    ];
    const step = steps.find((s) => span / s <= 12);
    if (step !== undefined) return step;
    // Longer spans (a pin cap of a year): a nice number of days.
    return niceStep(span / 86_400_000, "integer") * 86_400_000;
  }
  const raw = span / 10;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  const nice = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? power * 10;
  return kind === "integer" ? Math.max(1, Math.round(nice)) : nice;
}

/** The range a field starts with: around its value (a third to twice), or SPEC.md's for a knob, G16's 1h..4h. */
function startRange(f: SweepField): { from: string; to: string; step: string } {
  if (f.kind === "choice") return { from: "", to: "", step: "" };
  if (f.path === "G16.fallback-window") return { from: "1h", to: "4h", step: "30m" };
  if (f.path === "G3.tolerance-seconds") return { from: "0", to: "600", step: "60" };
  const knob = specKnob(f.path);
  const timeLike = f.kind === "duration" || f.kind === "time";
  let current: number | undefined;
  if (knob !== undefined) {
    const spec = SPEC_CONSTANTS[knob.field];
    current = knob.kind === "duration-s" ? spec * 1000 : spec;
  } else if (f.current !== undefined) {
    current = timeLike ? parseDurationMs(f.current) : Number(f.current);
  }
  if (current === undefined || !Number.isFinite(current) || current <= 0) {
    return timeLike ? { from: "0s", to: "6h", step: "30m" } : { from: "0", to: "10", step: "1" };
  }
  if (knob?.kind === "number") {
    const upper = knob.maxExclusive === true ? Math.min(current * 2, knob.max * 0.9) : current * 2;
    const step = niceStep(upper - current / 2, "number");
    return {
      from: String(Number((current / 2).toPrecision(3))),
      to: String(Number(upper.toPrecision(3))),
      step: String(step),
    };
  }
  const step = niceStep(current * 2 - current / 3, f.kind);
  const from = Math.max(step, Math.floor(current / 3 / step) * step);
  const to = Math.ceil((current * 2) / step) * step;
  const write = (n: number): string => (timeLike ? durationWords(n) : String(n));
  return { from: write(from), to: write(to), step: write(step) };
}

/** The `--vary` values of a range: `1h..6h/30m`; a choice's every reading. */
export function rangeValues(
  choice: Pick<SweepChoice, "kind" | "options">,
  from: string,
  to: string,
  step: string,
): string {
  if (choice.kind === "choice") return (choice.options ?? []).join(",");
  return `${from.trim()}..${to.trim()}/${step.trim()}`;
}

// ---------------------------------------------------------------------------
// The charts

/** A unit to draw durations in: hours, minutes or seconds, as the values' size asks. */
export interface TimeUnit {
  readonly name: "h" | "min" | "s";
  readonly ms: number;
}

/** Hours from 2 hours on, minutes from 2 minutes, else seconds. */
export function unitFor(maxMs: number): TimeUnit {
  if (maxMs >= 7_200_000) return { name: "h", ms: 3_600_000 };
  if (maxMs >= 120_000) return { name: "min", ms: 60_000 };
  return { name: "s", ms: 1000 };
}

const round = (n: number): number => Number(n.toPrecision(6));

/** A recipient the charts can show. */
export interface RecipientChoice {
  readonly key: string;
  /** `m1 bob@b.example`. */
  readonly label: string;
}

/** One point of the charts, for one recipient. */
export interface SweepRow {
  /** The point's index in the plan (what a click opens). */
  readonly point: number;
  /** On a grid, the index of its value of the second field (its series); 0 on one axis. */
  readonly series: number;
  /** Where it is on the x axis: the value in the axis's unit, or its place among named readings. */
  readonly x: number;
  /** The value as written: `2h30m`. */
  readonly label: string;
  /** The share of each outcome (0 … 1) of its runs, by outcome. */
  readonly shares: Readonly<Record<string, number>>;
  /** The most frequent outcome; `error` when no run happened. */
  readonly mode: string;
  /** Outcome time in the chart's time unit, over the runs that reached an outcome. */
  readonly time?: { readonly min: number; readonly median: number; readonly p90: number; readonly max: number };
  readonly attempts?: { readonly min: number; readonly median: number; readonly max: number };
  readonly posts?: { readonly min: number; readonly median: number; readonly max: number };
  /** The runs and how they went: `ok`, `2 of 10 runs broke retry-schedule`, the point's error. */
  readonly checks: string;
  /** The table's cells, as `mailscope sweep` prints them: `smtp (fallback)`, `+2:03:00`, `8`. */
  readonly text: { readonly outcome: string; readonly time: string; readonly attempts: string; readonly posts: string };
  readonly runs: number;
}

/** What the charts draw for one recipient. */
export interface SweepChart {
  readonly axis: {
    readonly path: string;
    readonly kind: AxisKind;
    readonly unit?: TimeUnit;
    readonly ticks?: readonly string[];
  };
  /** The outcome time's unit (from the latest time). */
  readonly timeUnit: TimeUnit;
  /** The outcomes that occur, in {@link OUTCOME_ORDER}: one band each. */
  readonly outcomes: readonly string[];
  readonly rows: readonly SweepRow[];
  readonly recipients: readonly RecipientChoice[];
  readonly recipient?: string;
  /** More than one run per point: the box chart shows. */
  readonly seeds: boolean;
  /** A grid of two fields: the second one's values, one series (line, small chart) each. */
  readonly series?: { readonly path: string; readonly labels: readonly string[] };
}

/** The most values the second field of a grid may take in the app, so that one line or small chart each stays readable. */
export const MAX_SERIES = 8;

/** Why `plan` cannot be drawn (more than two fields, or a second one of more than {@link MAX_SERIES} values). */
export function chartProblem(plan: Pick<SweepPlan, "axes">): string | undefined {
  if (plan.axes.length > 2) return `the app draws one or two fields, not ${plan.axes.length}; the CLI sweeps more`;
  const second = plan.axes[1];
  if (second !== undefined && second.values.length > MAX_SERIES) {
    return `${second.path} takes ${second.values.length} values; the second field of a grid takes at most ${MAX_SERIES} in the app (one line or small chart each)`;
  }
  return undefined;
}

/** One x value's row for a chart with a line per series: `s0`, `s1`… hold each series' value (undefined while it runs). */
export interface SeriesDatum {
  readonly x: number;
  readonly label: string;
  /** The point (its index in the plan) each series has at this x: what a click on that series' dot opens. */
  readonly points: Readonly<Record<number, number>>;
  readonly [series: `s${number}`]: number | undefined;
}

/** The rows of `chart` merged by x, each series' value by `pick` as `s<series>`, in x order. */
export function seriesData(chart: SweepChart, pick: (row: SweepRow) => number | undefined): SeriesDatum[] {
  const byX = new Map<number, Record<string, unknown> & { points: Record<number, number> }>();
  for (const r of chart.rows) {
    const datum = byX.get(r.x) ?? { x: r.x, label: r.label, points: {} };
    datum[`s${r.series}`] = pick(r);
    datum.points[r.series] = r.point;
    byX.set(r.x, datum);
  }
  return ([...byX.values()] as unknown as SeriesDatum[]).sort((a, b) => a.x - b.x);
}

/** The rows of one series (a small chart of a grid), in x order. */
export function seriesRows(chart: SweepChart, series: number): SweepRow[] {
  return chart.rows.filter((r) => r.series === series);
}

const keyOf = (r: Pick<RecipientSummary, "message" | "recipient">): string => `${r.message} ${r.recipient}`;

/**
 * The charts of the points finished so far (`points[i]` undefined while
 * point i runs), for `recipient` (default the first). The first field is the
 * x axis; on a grid the second field's values are the series (rows in series
 * order, then by x).
 */
export function sweepChart(
  plan: SweepPlan,
  points: readonly (PointResult | undefined)[],
  recipient?: string,
): SweepChart {
  const axis = plan.axes[0] as SweepAxis;
  const second = plan.axes[1];
  const done = points.filter((p): p is PointResult => p !== undefined);
  const recipients: RecipientChoice[] = [];
  for (const p of done) {
    for (const r of p.recipients) {
      if (!recipients.some((c) => c.key === keyOf(r))) recipients.push({ key: keyOf(r), label: keyOf(r) });
    }
  }
  const chosen = recipients.find((r) => r.key === recipient)?.key ?? recipients[0]?.key;
  const timeLike = axis.kind === "duration" || axis.kind === "time";
  const axisUnit = timeLike
    ? unitFor(
        maxOf(
          axis.values.map((v) => v.number ?? 0),
          0,
        ),
      )
    : undefined;
  const xOf = (v: SweepValue, i: number): number =>
    axis.kind === "choice" ? i : axisUnit !== undefined ? round((v.number ?? 0) / axisUnit.ms) : (v.number ?? i);
  const summaries = done.map((p) => ({ p, r: p.recipients.find((r) => keyOf(r) === chosen) }));
  const timeUnit = unitFor(
    maxOf(
      summaries.map(({ r }) => r?.time?.max ?? 0),
      0,
    ),
  );
  const seen = new Set<string>();
  const rows = summaries.map(({ p, r }): SweepRow => {
    const total = r === undefined ? p.runs.length : Object.values(r.counts).reduce((a, b) => a + b, 0);
    const counts: Record<string, number> = r?.counts ?? { error: p.runs.length };
    const shares = Object.fromEntries(Object.entries(counts).map(([o, n]) => [o, total > 0 ? n / total : 0]));
    for (const o of Object.keys(shares)) seen.add(o);
    const value = p.point.values[0] as SweepValue;
    const t = (ms: number): number => round(ms / timeUnit.ms);
    return {
      point: p.point.index,
      series: p.point.coords[1] ?? 0,
      x: xOf(value, p.point.coords[0] ?? 0),
      label: value.text,
      shares,
      mode: r?.mode ?? "error",
      ...(r?.time !== undefined && {
        time: { min: t(r.time.min), median: t(r.time.median), p90: t(r.time.p90), max: t(r.time.max) },
      }),
      ...(r?.attempts !== undefined && {
        attempts: { min: r.attempts.min, median: r.attempts.median, max: r.attempts.max },
      }),
      ...(r?.posts !== undefined && { posts: { min: r.posts.min, median: r.posts.median, max: r.posts.max } }),
      checks: checksText(p),
      text: {
        outcome: r === undefined ? "—" : outcomeText(r),
        time: timeText(r?.time),
        attempts: countText(r?.attempts),
        posts: countText(r?.posts),
      },
      runs: p.runs.length,
    };
  });
  rows.sort((a, b) => a.series - b.series || a.x - b.x);
  const rank = (o: string): number => (OUTCOME_ORDER.includes(o) ? OUTCOME_ORDER.indexOf(o) : OUTCOME_ORDER.length);
  return {
    axis: {
      path: axis.path,
      kind: axis.kind,
      ...(axisUnit !== undefined && { unit: axisUnit }),
      ...(axis.kind === "choice" && { ticks: axis.values.map((v) => v.text) }),
    },
    timeUnit,
    outcomes: [...seen].sort((a, b) => rank(a) - rank(b)),
    rows,
    recipients,
    ...(chosen !== undefined && { recipient: chosen }),
    seeds: (plan.seeds?.length ?? 1) > 1,
    ...(second !== undefined && { series: { path: second.path, labels: second.values.map((v) => v.text) } }),
  };
}

/** A line of the Points table: a point's row, or a boundary between the row above it and the row below. */
export type PointsTableLine =
  { readonly kind: "point"; readonly row: SweepRow } | { readonly kind: "boundary"; readonly boundary: Boundary };

/**
 * The Points table of `chart` (rows by series, then by x) with each boundary
 * placed between its two points' rows — only where they are neighbours (a
 * boundary along the x field, within a series). A boundary along a grid's
 * second field joins two rows of different series' blocks, so it is listed
 * `apart` (under the table, and in the Boundaries list) rather than put
 * between two rows that are not its sides.
 */
export function pointsTable(
  chart: Pick<SweepChart, "rows">,
  boundaries: readonly Boundary[],
): { readonly lines: readonly PointsTableLine[]; readonly apart: readonly Boundary[] } {
  const lines: PointsTableLine[] = [];
  const placed = new Set<Boundary>();
  chart.rows.forEach((row, i) => {
    lines.push({ kind: "point", row });
    const next = chart.rows[i + 1]?.point;
    for (const b of boundaries) {
      // Either way round: a list of values written high to low draws its rows low to high.
      const sides = [b.fromPoint, b.toPoint];
      if (next === undefined || !sides.includes(row.point) || !sides.includes(next)) continue;
      lines.push({ kind: "boundary", boundary: b });
      placed.add(b);
    }
  });
  return { lines, apart: boundaries.filter((b) => !placed.has(b)) };
}

/** The boundaries of `recipient` (all of them when undefined), as the list under the charts shows them. */
export function boundariesOf(boundaries: readonly Boundary[], recipient?: string): Boundary[] {
  return boundaries.filter((b) => recipient === undefined || `${b.message} ${b.recipient}` === recipient);
}

/**
 * The heading of the boundaries' list: whose they are when the list shows one recipient's, and how many of the
 * sweep's it shows (the progress line counts every recipient's) — never a bare "Boundaries" over an empty list.
 */
export function boundariesHeading(all: number, shown: number, recipient?: string): string {
  if (recipient === undefined || shown === all) return all === 1 ? "Boundary" : `Boundaries (${all})`;
  if (shown === 0) return `No boundary for ${recipient}: the sweep's ${all} are other recipients' (pick one above)`;
  return `Boundaries of ${recipient}: ${shown} of the sweep's ${all} (pick another recipient above for the rest)`;
}

// ---------------------------------------------------------------------------
// Opening a point, comparing a boundary's two sides

/** What the run view is given to run one point: the point's scenario, its settings and the seed. */
export interface PointRunStart {
  readonly text: string;
  readonly file: string;
  readonly name: string;
  readonly settings: readonly (readonly [string, string])[];
  readonly seed?: number | string;
}

/** The run of point `index` under `seed` (the base's settings, then the point's). */
export function pointRun(
  base: Pick<CompareBase, "text" | "file" | "name" | "settings">,
  plan: SweepPlan,
  values: readonly SweepValue[],
  seed?: number | string,
): PointRunStart {
  const scenario = pointScenarios(base.text)(plan.axes, values);
  return {
    text: scenario.text,
    file: base.file,
    name: `${base.name} at ${pointText(plan.axes, values)}`,
    settings: [...base.settings, ...scenario.settings],
    ...(seed !== undefined && { seed }),
  };
}

/** Compare's two sides for a boundary: the values on each side (refined, when it was), under `seed`. */
export function boundarySides(
  base: Pick<CompareBase, "text" | "file" | "name" | "settings" | "seed">,
  plan: SweepPlan,
  points: readonly (PointResult | undefined)[],
  b: Boundary,
  seed?: number | string,
): [CompareSide, CompareSide] {
  const from = b.refined?.fromValues ?? points[b.fromPoint]?.point.values ?? [];
  const to = b.refined?.toValues ?? points[b.toPoint]?.point.values ?? [];
  const side = (label: "A" | "B", values: readonly SweepValue[]): CompareSide => {
    const run = pointRun(base, plan, values, seed);
    return {
      label,
      title: pointText(plan.axes, values),
      text: run.text,
      file: run.file,
      seed: seed ?? base.seed,
      readings: run.settings,
    };
  };
  return [side("A", from), side("B", to)];
}
