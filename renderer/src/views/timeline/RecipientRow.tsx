import { memo, useMemo } from "react";
import { formatOffset } from "../../model/time.ts";
import type { Lane } from "../../model/timeline.ts";
import { resultRuns } from "../../model/timelineLabels.ts";
import { resultShapes } from "../../model/timelineMarks.ts";
import type { TimeScale } from "../../model/timelineScale.ts";
import { LABEL_W, SUB } from "./dimensions.ts";
import { HALO_STYLE } from "./Label.tsx";
import { measureLabel } from "./measure.ts";
import { Shapes } from "./Shapes.tsx";
import type { DragHandlers } from "./useTimelineGestures.ts";

const RECIPIENT_OUTCOME_TEXT: Readonly<Record<string, string>> = {
  accepted: "accepted",
  rejected: "rejected",
  smtp: "SMTP",
  bounced: "bounced",
};

interface RecipientRowProps {
  readonly recipient: Lane["recipientLanes"][number];
  readonly scale: TimeScale;
  readonly startMs: number;
  /** Where the lane's attempts are drawn: a faint tick on each sub-lane links a result to its attempt. */
  readonly attemptXs: readonly number[];
  readonly drag: DragHandlers;
}

/** One recipient's sub-lane: its result at each attempt that answered it, and how it ended. */
export const RecipientRow = memo(function RecipientRow({
  recipient: r,
  scale,
  startMs,
  attemptXs,
  drag,
}: RecipientRowProps) {
  const w = scale.width;
  const mid = SUB / 2;
  const outcome = r.outcome;
  const word = outcome ? (RECIPIENT_OUTCOME_TEXT[outcome.outcome] ?? outcome.outcome) : "pending";
  const results = r.results.filter((x) => x.timeMs >= scale.fromMs && x.timeMs <= scale.toMs);
  // Runs of the same answer, each with its words where they fit: `deferred ×104 (mailbox_full)` over a long run.
  const runs = useMemo(() => resultRuns(r, scale, measureLabel), [r, scale]);
  const summary = [
    ...r.results.map(
      (x) =>
        `attempt ${x.attempt} at ${formatOffset(x.timeMs, startMs)}: ${x.status}${x.problem ? ` (${x.problem})` : ""}${x.rule ? ` [${x.rule}]` : ""}`,
    ),
    outcome
      ? `${word} at ${formatOffset(outcome.timeMs, startMs)}${outcome.rule ? ` [${outcome.rule}]` : ""}`
      : "no outcome yet",
  ].join("; ");
  return (
    <div
      className="sub-lane"
      style={{ height: SUB }}
      data-recipient={r.recipient}
      data-outcome={outcome?.outcome ?? ""}
    >
      <span className="sub-label" style={{ width: LABEL_W - 8 }} title={summary}>
        <span className="sub-address">{r.recipient}</span>{" "}
        <span className={`sub-outcome ${outcome?.outcome ?? "pending"}`}>{word}</span>
      </span>
      <svg
        width={w + 8}
        height={SUB}
        className="sub-plot"
        {...drag}
        role="group"
        aria-label={`${r.recipient}: ${summary}`}
      >
        <g transform="translate(4,0)">
          <line x1={0} x2={w} y1={mid} y2={mid} className="sub-axis" />
          {attemptXs.map((x, i) => (
            <line key={i} x1={x} x2={x} y1={3} y2={SUB - 3} className="attempt-tick" />
          ))}
          {results.map((x) => {
            const px = scale.x(x.timeMs);
            const text = `${x.status}${x.problem ? ` (${x.problem})` : ""}`;
            return (
              <g
                key={x.seq}
                data-kind="recipient-result"
                data-attempt={x.attempt}
                data-status={x.status}
                data-time-ms={x.timeMs - startMs}
                data-x={px.toFixed(2)}
                transform={`translate(${px},0)`}
              >
                <title>{`${r.recipient}: attempt ${x.attempt} ${text}${x.rule ? ` [${x.rule}]` : ""}`}</title>
                <Shapes shapes={resultShapes(x.status)} />
              </g>
            );
          })}
          {runs.map(
            (run) =>
              run.label && (
                <g
                  key={run.firstAttempt}
                  data-kind="result-run"
                  data-status={run.status}
                  data-count={run.count}
                  transform={`translate(${run.label.x},${mid})`}
                >
                  {run.label.over && (
                    <rect
                      x={-3}
                      y={-7}
                      width={measureLabel(run.text) + 6}
                      height={14}
                      rx={3}
                      className="run-label-backing"
                    />
                  )}
                  <text y={4} className="mark-label" style={HALO_STYLE}>
                    {run.text}
                  </text>
                </g>
              ),
          )}
        </g>
      </svg>
    </div>
  );
});
