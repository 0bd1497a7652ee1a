import { useId } from "react";
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ReferenceLine,
  Scatter,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import {
  DECIDER_TEXT,
  durationText,
  offsetText,
  retryChart,
  type Lane,
  type RetryChartRow,
} from "../../model/timeline.ts";

export interface RetryChartProps {
  readonly lane: Lane;
  readonly startMs: number;
  readonly width: number;
  /** Words that tell two stacked timelines' charts apart (`of run A`), for assistive technology. */
  readonly which?: string;
}

const minText = (m: number | undefined) => (m === undefined ? "" : durationText(m * 60_000));

/**
 * For the selected delivery: attempt number against the delay before it —
 * the schedule's base delay, the jittered delay with its ±20 % band, the
 * Retry-After lower bound where one applied, which one decided; the fallback
 * window's end, the 1 h cap and the give-up marked. The table under it says
 * the same in words.
 */
export function RetryChart({ lane, startMs, width, which }: RetryChartProps) {
  const chart = retryChart(lane);
  // Its own id: two timelines (Compare) each show a chart.
  const headingId = useId();
  if (chart.rows.length === 0)
    return (
      <section aria-labelledby={headingId} className="retry-chart">
        <h4 id={headingId}>
          Retry delays of {lane.label}
          {which !== undefined && <span className="visually-hidden"> ({which})</span>}
        </h4>
        <p className="muted">No retry: the first attempt settled it.</p>
      </section>
    );
  const firstAttempt = chart.rows[0]?.attempt ?? 1;
  const lastAttempt = chart.rows[chart.rows.length - 1]?.attempt ?? 1;
  const yTicks = chart.delayTicks;
  const data = chart.rows.map((r) => ({ ...r, band: r.band ? [r.band[0], r.band[1]] : undefined }));
  const ruledOut = chart.fallbackRuledOut;
  const jitter = chart.cappedJitter;
  return (
    <section aria-labelledby={headingId} className="retry-chart" data-lane={lane.id}>
      <h4 id={headingId}>
        Retry delays of {lane.label}
        {which !== undefined && <span className="visually-hidden"> ({which})</span>}
      </h4>
      <figure aria-label="Delay before each attempt, in minutes">
        <ComposedChart width={width} height={240} data={data} margin={{ top: 16, right: 24, bottom: 8, left: 8 }}>
          <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
          <XAxis
            dataKey="attempt"
            type="number"
            domain={["dataMin", "dataMax"]}
            allowDecimals={false}
            label={{ value: "attempt", position: "insideBottomRight", offset: -4 }}
          />
          <YAxis
            label={{ value: "delay (min)", angle: -90, position: "insideLeft" }}
            allowDecimals={false}
            domain={[0, yTicks[yTicks.length - 1] ?? 1]}
            ticks={[...yTicks]}
            interval={0}
            width={56}
          />
          <Area
            dataKey="band"
            name="jitter band ±20 %"
            stroke="none"
            fill="#e08a00"
            fillOpacity={0.18}
            isAnimationActive={false}
          />
          <Line
            dataKey="base"
            name="base delay"
            stroke="#586174"
            strokeDasharray="5 3"
            dot={false}
            isAnimationActive={false}
          />
          <Line dataKey="jittered" name="jittered delay" stroke="#e08a00" dot={false} isAnimationActive={false} />
          <Scatter dataKey="lowerBound" name="Retry-After lower bound" fill="#8a5cf6" shape="diamond" />
          <Line
            dataKey="actual"
            name="waited"
            stroke="#2f5fd0"
            strokeWidth={2}
            dot={{ r: 2.5 }}
            isAnimationActive={false}
          />
          {chart.capMinutes !== undefined && (
            <ReferenceLine
              y={chart.capMinutes}
              stroke="var(--fail)"
              strokeDasharray="3 3"
              label={{
                value: jitter ? "1 h cap (before jitter)" : "1 h cap",
                position: "insideBottomLeft",
                fill: "var(--fail)",
              }}
            />
          )}
          {chart.fallbackWindowEndAttempt !== undefined && (
            <ReferenceLine
              x={chart.fallbackWindowEndAttempt}
              stroke="var(--pass)"
              label={{
                value: "fallback window ends",
                position: chart.fallbackWindowEndAttempt > lastAttempt * 0.6 ? "insideTopRight" : "insideTopLeft",
                fill: "var(--pass)",
              }}
            />
          )}
          {ruledOut !== undefined && ruledOut.attempt >= firstAttempt && (
            <ReferenceLine
              x={ruledOut.attempt}
              stroke="var(--fail)"
              strokeDasharray="2 2"
              label={{ value: "SMTP ruled out", position: "insideTopLeft", fill: "var(--fail)" }}
            />
          )}
          {chart.giveUpAfterAttempt !== undefined && (
            <ReferenceLine
              x={chart.giveUpAfterAttempt}
              stroke="var(--fg)"
              label={{ value: "give-up", position: "insideTopRight", fill: "var(--fg)" }}
            />
          )}
          <Tooltip
            isAnimationActive={false}
            content={({ active, payload }) => {
              const r = payload?.[0]?.payload as RetryChartRow | undefined;
              if (!active || !r) return null;
              return (
                <div className="chart-tip">
                  <strong>attempt {r.attempt}</strong>
                  <br />
                  base {minText(r.base)}, jittered {minText(r.jittered)}
                  {r.lowerBound !== undefined && `, Retry-After ${minText(r.lowerBound)}`}
                  <br />
                  waited {minText(r.actual)}: {DECIDER_TEXT[r.decidedBy] ?? r.decidedBy}
                </div>
              );
            }}
          />
          <Legend formatter={(value) => <span className="chart-legend-text">{value}</span>} />
        </ComposedChart>
      </figure>
      <p className="retry-notes">
        {ruledOut !== undefined && (
          <span data-testid="retry-ruled-out" data-seq={ruledOut.seq}>
            {ruledOut.text} ({offsetText(ruledOut.timeMs, startMs)}): the fallback window's end decides nothing for this
            delivery.{" "}
          </span>
        )}
        {chart.capMinutes !== undefined && (
          <span data-testid="retry-cap">
            {jitter
              ? `The delay is capped at 1 h (RETRY-2) before the ±20 % jitter (RETRY-3, G16): the capped waits here ran from ${minText(jitter.minMinutes)} to ${minText(jitter.maxMinutes)}. `
              : "Delays are capped at 1 h (RETRY-2). "}
          </span>
        )}
        {chart.fallbackWindowEndAttempt !== undefined && (
          <span data-testid="retry-window-end">
            Attempt {chart.fallbackWindowEndAttempt} is the first at or after the fallback window's end
            {lane.fallbackWindowEndMs !== undefined ? ` (${offsetText(lane.fallbackWindowEndMs, startMs)})` : ""}.{" "}
          </span>
        )}
        {chart.giveUpAfterAttempt !== undefined && (
          <span data-testid="retry-give-up">
            The give-up
            {lane.giveUpAtMs !== undefined ? ` at ${offsetText(lane.giveUpAtMs, startMs)}` : ""} came before the retry
            after attempt {chart.giveUpAfterAttempt}.
          </span>
        )}
      </p>
      <div className="retry-table-wrap" tabIndex={0} aria-label="Retry delays, as a table">
        <table className="retry-table">
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">Base</th>
              <th scope="col">Jittered</th>
              <th scope="col">Lower bound</th>
              <th scope="col">Waited</th>
              <th scope="col">Decided by</th>
              <th scope="col">At</th>
            </tr>
          </thead>
          <tbody>
            {chart.rows.map((r) => (
              <tr key={r.attempt} data-attempt={r.attempt} data-decided-by={r.decidedBy}>
                <td className="num">{r.happened ? r.attempt : `(${r.attempt})`}</td>
                <td className="num">{minText(r.base)}</td>
                <td className="num">{minText(r.jittered)}</td>
                <td className="num">{minText(r.lowerBound)}</td>
                <td className="num">{minText(r.actual)}</td>
                <td>{DECIDER_TEXT[r.decidedBy] ?? r.decidedBy}</td>
                <td className="num">{r.happened ? offsetText(r.atMs, startMs) : "never: gave up"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
