import { memo, useDeferredValue, useMemo, useState, type PointerEvent } from "react";
import { Bar, ComposedChart, Tooltip, XAxis, YAxis } from "recharts";
import { formatOffset } from "../../model/time.ts";
import { ATTEMPT_OUTCOMES, OUTCOME_TEXT, type Timeline } from "../../model/timeline.ts";
import { buckets, IN_FLIGHT_COLOUR, inFlightPath, overviewWindow } from "../../model/timelineOverview.ts";
import type { TimeScale } from "../../model/timelineScale.ts";
import { OUTCOME_COLOUR } from "./colours.ts";

const BUCKETS = 120;
const OVERVIEW_HEIGHT = 56;
/** The chart's margin over the bars. */
const TOP = 4;
/** The in-flight line's colour in the theme the page shows (legend too): timeline.ts' IN_FLIGHT_COLOUR. */
export const IN_FLIGHT_STROKE = `light-dark(${IN_FLIGHT_COLOUR.light}, ${IN_FLIGHT_COLOUR.dark})`;

export interface OverviewProps {
  readonly timeline: Timeline;
  readonly width: number;
  /** Where the lanes' plot starts and how wide it is, so that the bars line up with the lanes. */
  readonly left: number;
  readonly plotWidth: number;
  /** The scale of the lanes' whole window (from the start): the bars' time axis, the same as the lanes'. */
  readonly scale: TimeScale;
  readonly window: readonly [number, number];
  readonly onZoom: (window: readonly [number, number] | undefined) => void;
}

/**
 * The whole run as counts per time bucket (attempts by outcome, hand-offs,
 * DSNs, deliveries in flight): a few hundred bars however big the trace, with
 * the visible window marked. Dragging across it zooms the lanes to the range brushed; clicking a bar
 * zooms them to its bucket.
 */
export function Overview({ timeline, width, left, plotWidth, scale, window: [fromMs, toMs], onZoom }: OverviewProps) {
  // The visible window over the bars: a box of its own, so that zooming and panning redraw no bar.
  const zoomed = fromMs > scale.fromMs || toMs < scale.toMs;
  const x1 = Math.max(0, Math.min(plotWidth, scale.x(fromMs)));
  const x2 = Math.max(0, Math.min(plotWidth, scale.x(toMs)));
  // Mounted with a whole run, the chart comes right after the lanes' first draw: Recharts lays a chart out
  // in several passes, and the lanes are what an opened trace shows first (drawn in < 1 s).
  const chartTimeline = useDeferredValue<Timeline | null>(timeline, null);
  // A brush over the bars, in px from the plot's left edge (it starts 4 px into the lanes' plot, as the bars).
  const [brush, setBrush] = useState<{ readonly x0: number; readonly x1: number } | undefined>();
  const plotX = (e: PointerEvent<HTMLDivElement>) =>
    e.clientX - e.currentTarget.getBoundingClientRect().left - left - 4;
  return (
    <div
      className="overview-wrap"
      data-testid="overview"
      onPointerDown={(e) => {
        const x = plotX(e);
        if (e.button !== 0 || x < 0 || x > plotWidth) return;
        try {
          e.currentTarget.setPointerCapture(e.pointerId);
        } catch {
          // a synthetic pointer (no capture): the brush still works while over the overview
        }
        setBrush({ x0: x, x1: x });
      }}
      onPointerMove={(e) => {
        if (brush) setBrush({ ...brush, x1: plotX(e) });
      }}
      onPointerUp={() => {
        if (!brush) return;
        setBrush(undefined);
        const w = overviewWindow(scale, brush.x0, brush.x1, BUCKETS);
        if (w) onZoom(w);
      }}
      onPointerCancel={() => setBrush(undefined)}
    >
      {chartTimeline ? (
        <OverviewChart timeline={chartTimeline} width={width} left={left} plotWidth={plotWidth} scale={scale} />
      ) : (
        <div className="overview" style={{ height: OVERVIEW_HEIGHT }} aria-hidden="true" />
      )}
      {brush && Math.abs(brush.x1 - brush.x0) >= 1 && (
        <div
          className="brush"
          aria-hidden="true"
          style={{
            left: left + 4 + Math.max(0, Math.min(brush.x0, brush.x1)),
            width: Math.abs(Math.min(plotWidth, Math.max(0, brush.x1)) - Math.min(plotWidth, Math.max(0, brush.x0))),
            top: 0,
            height: OVERVIEW_HEIGHT,
          }}
        />
      )}
      {zoomed && (
        <div
          className="overview-window"
          data-testid="overview-window"
          aria-hidden="true"
          style={{ left: left + 4 + x1, width: Math.max(2, x2 - x1) }}
        />
      )}
    </div>
  );
}

type OverviewChartProps = Omit<OverviewProps, "window" | "onZoom">;

const OverviewChart = memo(function OverviewChart({ timeline, width, left, plotWidth, scale }: OverviewChartProps) {
  const counts = useMemo(() => buckets(timeline, BUCKETS, scale), [timeline, scale]);
  const rows = useMemo(
    () =>
      counts.map((b, i) => ({
        i,
        fromMs: b.fromMs,
        toMs: b.toMs,
        ...b.attempts,
        handoffs: b.handoffs,
        dsns: b.dsns + b.bounces,
        inFlight: b.inFlight,
      })),
    [counts],
  );
  const startMs = timeline.startMs;
  const total = useMemo(() => timeline.marks.filter((m) => m.kind === "attempt").length, [timeline]);
  const peak = useMemo(() => rows.reduce((n, r) => Math.max(n, r.inFlight), 0), [rows]);
  // Deliveries in flight: a step per bucket over the lanes' plot, from its left edge to its right edge exactly
  // (drawn here rather than as a chart line, whose steps start and end in the middle of the first and last bars).
  const flight = useMemo(() => inFlightPath(counts, plotWidth, OVERVIEW_HEIGHT - TOP), [counts, plotWidth]);
  return (
    <figure
      className="overview"
      aria-label={`Overview: ${total} attempts over the whole run, counts per time bucket; at most ${peak} deliveries in flight`}
      data-peak-in-flight={peak}
    >
      <ComposedChart
        width={width}
        height={OVERVIEW_HEIGHT}
        data={rows}
        margin={{ top: TOP, right: Math.max(0, width - left - 4 - plotWidth), bottom: 0, left: left + 4 }}
        barCategoryGap={0}
      >
        <XAxis dataKey="i" hide />
        <YAxis yAxisId="count" hide allowDecimals={false} />
        {ATTEMPT_OUTCOMES.map((o) => (
          <Bar
            key={o}
            dataKey={o}
            stackId="a"
            yAxisId="count"
            fill={OUTCOME_COLOUR[o]}
            name={OUTCOME_TEXT[o]}
            isAnimationActive={false}
          />
        ))}
        <Bar
          dataKey="handoffs"
          stackId="a"
          yAxisId="count"
          fill="#1d2330"
          className="overview-handoffs"
          name="SMTP hand-offs"
          isAnimationActive={false}
        />
        <Bar
          dataKey="dsns"
          stackId="a"
          yAxisId="count"
          fill="#b3261e"
          name="DSNs and bounces"
          isAnimationActive={false}
        />
        <Tooltip
          isAnimationActive={false}
          itemStyle={{ color: "var(--fg)" }}
          contentStyle={{ background: "var(--surface)", borderColor: "var(--line)" }}
          labelFormatter={(_, payload) => {
            const row = payload?.[0]?.payload as { fromMs: number; toMs: number; inFlight: number } | undefined;
            return row
              ? `${formatOffset(row.fromMs, startMs).replace(/\.\d+$/, "")} – ${formatOffset(row.toMs, startMs).replace(/\.\d+$/, "")} · ${row.inFlight} in flight`
              : "";
          }}
        />
      </ComposedChart>
      <svg
        className="in-flight-layer"
        width={plotWidth}
        height={OVERVIEW_HEIGHT - TOP}
        style={{ left: left + 4, top: TOP }}
        aria-hidden="true"
      >
        <path className="in-flight" d={flight} fill="none" style={{ stroke: IN_FLIGHT_STROKE }} strokeWidth={1.5} />
      </svg>
    </figure>
  );
});
