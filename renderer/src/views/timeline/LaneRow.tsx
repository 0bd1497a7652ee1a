import { memo, useMemo, type KeyboardEvent, type MouseEvent, type PointerEvent } from "react";
import { formatOffset } from "../../model/time.ts";
import type { Lane, Mark } from "../../model/timeline.ts";
import { giveUpOf } from "../../model/timelineApplies.ts";
import { drawnMarks, type LaneItems } from "../../model/timelineDrawn.ts";
import { laneLabels } from "../../model/timelineLabels.ts";
import { clampToPlot, connectorShape, drawnConnectors, giveUpShape, markShapes } from "../../model/timelineMarks.ts";
import type { TimeScale } from "../../model/timelineScale.ts";
import { FOLD_W, LABEL_W, ROW, SUB } from "./dimensions.ts";
import { Label } from "./Label.tsx";
import { measureLabel } from "./measure.ts";
import { RecipientRow } from "./RecipientRow.tsx";
import { ShapeView, Shapes } from "./Shapes.tsx";
import type { DragHandlers } from "./useTimelineGestures.ts";

export interface LaneRowProps {
  readonly lane: Lane;
  /** The lane's marks (with those of no lane, DNS changes, by time), bands and connectors. */
  readonly items: LaneItems;
  readonly top: number;
  readonly unfolded: boolean;
  readonly onFold: (lane: string, open: boolean) => void;
  readonly scale: TimeScale;
  readonly startMs: number;
  readonly playheadMs: number;
  readonly selected: boolean;
  readonly selectedMark: Pick<Mark, "id"> | undefined;
  readonly onLane: (lane: string, selected: boolean) => void;
  readonly onMark: (m: Mark) => void;
  readonly onHover: (h: { mark: Mark; x: number; y: number } | undefined) => void;
  readonly drag: DragHandlers;
  /** Whether the press that ends in a click moved (a brush or pan over a mark): then the click selects nothing. */
  readonly wasDragged: () => boolean;
}

/** One lane: drawn again only when its own props change (a pan or zoom, its selection, its folding). */
export const LaneRow = memo(function LaneRow({
  lane,
  items,
  top,
  unfolded,
  onFold,
  scale,
  startMs,
  playheadMs,
  selected,
  selectedMark,
  onLane,
  onMark,
  onHover,
  drag,
  wasDragged,
}: LaneRowProps) {
  const w = scale.width;
  const mid = ROW / 2;
  const own = useMemo(() => new Set([lane.id]), [lane.id]);
  const drawn = useMemo(() => drawnMarks(items.marks, scale, own), [items.marks, scale, own]);
  const bands = items.bands;
  const arcs = useMemo(() => drawnConnectors(items.connectors, scale), [items.connectors, scale]);
  const giveUp = giveUpOf(lane);
  const giveUpShown = giveUp !== undefined && giveUp >= scale.fromMs && giveUp <= scale.toMs;
  // Every label where it overlaps no other (nor another mark's shape); those left out are in the marks' names.
  const labels = useMemo(
    () =>
      new Map(
        laneLabels(drawn, w, {
          giveUpX: giveUpShown && !items.bounced ? scale.x(giveUp) : undefined,
          measure: measureLabel,
          arcs,
        }).map((l) => [l.id, l]),
      ),
    [drawn, w, giveUpShown, items.bounced, scale, giveUp, arcs],
  );
  const attemptXs = useMemo(() => drawn.filter((d) => d.mark.kind === "attempt").map((d) => d.x), [drawn]);
  const subs = unfolded ? lane.recipientLanes : [];
  return (
    <div
      className={`lane${selected ? " selected" : ""}${lane.kind === "dsn" ? " dsn" : ""}`}
      style={{ top, height: ROW + subs.length * SUB }}
      data-lane={lane.id}
    >
      <div className="lane-row" style={{ height: ROW }}>
        <button
          className="fold"
          aria-expanded={unfolded}
          aria-label={`Recipients of ${lane.label}`}
          title={unfolded ? "Fold the recipients" : "Unfold the recipients"}
          onClick={() => onFold(lane.id, !unfolded)}
          disabled={lane.recipientLanes.length === 0}
        >
          <span aria-hidden="true">{unfolded ? "▾" : "▸"}</span>
        </button>
        <button
          className="lane-label"
          style={{ width: LABEL_W - 8 - FOLD_W }}
          aria-pressed={selected}
          onClick={() => onLane(lane.id, selected)}
          title={lane.recipients.join(", ")}
        >
          {lane.kind === "dsn" && <span aria-hidden="true">↳ </span>}
          {lane.label}
        </button>
        <svg
          width={w + 8}
          height={ROW}
          className="lane-plot"
          {...drag}
          aria-label={`${lane.label}: ${lane.recipients.join(", ")}`}
          role="group"
        >
          <g transform="translate(4,0)">
            {bands.map((b) => {
              const x1 = clampToPlot(scale.x(b.fromMs), w);
              const x2 = clampToPlot(scale.x(b.untilMs ?? scale.toMs), w);
              if (x2 <= 0 || x1 >= w) return null;
              return (
                <rect
                  key={`${b.kind}${b.label}${b.fromMs}`}
                  className={`band ${b.kind}`}
                  data-band={b.kind}
                  data-from-ms={b.fromMs - startMs}
                  data-until-ms={b.untilMs === undefined ? "" : b.untilMs - startMs}
                  data-x1={x1.toFixed(1)}
                  data-x2={x2.toFixed(1)}
                  x={x1}
                  width={Math.max(1, x2 - x1)}
                  y={b.kind === "fault" ? ROW - 5 : 3}
                  height={b.kind === "fault" ? 4 : ROW - 9}
                >
                  <title>{`${b.label}: ${formatOffset(b.fromMs, startMs)} – ${b.untilMs === undefined ? "never ends" : formatOffset(b.untilMs, startMs)}`}</title>
                </rect>
              );
            })}
            <line x1={0} x2={w} y1={mid} y2={mid} className="lane-axis" />
            {arcs.map((a) => (
              <g
                key={a.connector.retry}
                data-kind="retry-wait"
                data-retry={a.connector.retry}
                data-from-ms={a.connector.fromMs - startMs}
                data-until-ms={a.connector.toMs - startMs}
                data-seq={a.connector.seq}
              >
                <ShapeView shape={connectorShape(a.x1, a.x2, a.connector.decidedBy)} />
              </g>
            ))}
            {playheadMs >= scale.fromMs && playheadMs <= scale.toMs && (
              <line
                x1={scale.x(playheadMs)}
                x2={scale.x(playheadMs)}
                y1={0}
                y2={ROW}
                className="playhead"
                data-testid="playhead"
                data-x={scale.x(playheadMs).toFixed(1)}
              />
            )}
            {/* The arcs' waits, the give-up line and the marks over the playhead: their words read over it, on their halo. */}
            {arcs.map((a) => (
              <g key={a.connector.retry} data-kind="retry-wait-label" data-retry={a.connector.retry}>
                <Label label={labels.get(`arc:${a.connector.retry}`)} dx={0} />
              </g>
            ))}
            {giveUpShown && (
              <g data-kind="give-up" data-time-ms={giveUp - startMs}>
                <ShapeView shape={giveUpShape(scale.x(giveUp))} />
                <Label label={labels.get("give-up")} dx={0} />
              </g>
            )}
            {drawn.map(({ mark: m, x, count, room }) => {
              const isSel = selectedMark?.id === m.id;
              const label = labels.get(m.id);
              const common = {
                "data-mark-id": m.id,
                "data-kind": m.kind,
                "data-time-ms": m.timeMs - startMs,
                "data-x": x.toFixed(2),
                "data-seq": m.seq,
                "data-count": count,
                tabIndex: isSel || (!selectedMark && m === drawn[0]?.mark) ? 0 : -1,
                role: "button",
                "aria-label": count > 1 ? `${m.summary} (and ${count - 1} more here)` : m.summary,
                "aria-pressed": isSel,
                className: `mark ${m.kind}${isSel ? " selected" : ""}`,
                onClick: (e: MouseEvent) => {
                  e.stopPropagation();
                  if (!wasDragged()) onMark(m);
                },
                onKeyDown: (e: KeyboardEvent) => {
                  if (e.key === "Enter" || e.key === " ") {
                    e.preventDefault();
                    e.stopPropagation();
                    onMark(m);
                  }
                },
                onPointerEnter: (e: PointerEvent) => {
                  const box = (e.currentTarget as Element).closest(".lanes-wrap")?.getBoundingClientRect();
                  onHover({ mark: m, x: e.clientX - (box?.left ?? 0), y: e.clientY - (box?.top ?? 0) });
                },
                onPointerLeave: () => onHover(undefined),
              };
              return (
                <g
                  key={m.id}
                  {...common}
                  data-attempt={m.attempt}
                  data-outcome={m.kind === "handoff" ? "smtp" : m.kind === "bounce" ? "bounced" : m.outcome}
                  transform={`translate(${x},0)`}
                >
                  <Shapes shapes={markShapes(m.kind, m.outcome, { selected: isSel, room })} />
                  <Label label={label} dx={x} testId={m.kind === "attempt" ? "attempt-number" : undefined} />
                </g>
              );
            })}
          </g>
        </svg>
      </div>
      {subs.map((r) => (
        <RecipientRow
          key={r.recipient}
          recipient={r}
          scale={scale}
          startMs={startMs}
          attemptXs={attemptXs}
          drag={drag}
        />
      ))}
    </div>
  );
});
