import { useCallback, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { formatOffset } from "../../model/time.ts";
import type { Mark, Timeline } from "../../model/timeline.ts";
import { itemsByLane, laneItems } from "../../model/timelineDrawn.ts";
import { laneLayout, TIP_GAP, tipPlace, visibleLaneRangeOf } from "../../model/timelineLayout.ts";
import { neighbourMark, panWindow, zoomWindow } from "../../model/timelineNavigation.ts";
import type { TimeScale } from "../../model/timelineScale.ts";
import { axisBreakShape } from "../../model/timelineMarks.ts";
import { breakMarks, breakTitle, tickAnchor, ticks } from "../../model/timelineTicks.ts";
import { LABEL_W, ROW, SUB, UNFOLD_UP_TO, VIEWPORT_ROWS, type Window } from "./dimensions.ts";
import { useStable } from "../../hooks/useStable.ts";
import { LaneRow } from "./LaneRow.tsx";
import { measureLabel } from "./measure.ts";
import { ShapeView } from "./Shapes.tsx";
import type { TimelineNote } from "./TimelineView.tsx";
import { useTimelineGestures } from "./useTimelineGestures.ts";

export interface LanesProps {
  readonly timeline: Timeline;
  readonly scale: TimeScale;
  readonly startMs: number;
  readonly playheadMs: number;
  readonly delivery: string | undefined;
  readonly onDelivery: (delivery: string | undefined) => void;
  readonly selectedMark: Pick<Mark, "id"> | undefined;
  readonly onMark: (mark: Mark | undefined) => void;
  /** The user zoomed or panned: a drag pans (Shift+drag still brushes). */
  readonly zoomed: boolean;
  /** The whole run: how far a pan can go. */
  readonly full: Window;
  readonly onZoom: (window: Window | undefined) => void;
  /** Where the lanes tell which of them are unfolded (for the exported image). */
  readonly unfoldedRef: { current: ReadonlySet<string> };
  /** The scenario's notes placed on the run: a numbered flag each over the axis. */
  readonly notes?: readonly TimelineNote[];
}

/** The time axis and the lanes, scrolled and virtualised: the marks, the keyboard, the gestures. */
export function Lanes({
  timeline,
  scale,
  startMs,
  playheadMs,
  delivery,
  onDelivery,
  selectedMark,
  onMark,
  zoomed,
  full,
  onZoom,
  unfoldedRef,
  notes = [],
}: LanesProps) {
  const [scrollTop, setScrollTop] = useState(0);
  const [hover, setHover] = useState<{ mark: Mark; x: number; y: number } | undefined>();
  /** Lanes the user folded (false) or unfolded (true); the others as the default has them. */
  const [folds, setFolds] = useState<ReadonlyMap<string, boolean>>(new Map());
  const scroller = useRef<HTMLDivElement>(null);
  const lanes = timeline.lanes;
  const openByDefault = lanes.length <= UNFOLD_UP_TO;
  const unfolded = useMemo(
    () =>
      new Set(lanes.filter((l) => folds.get(l.id) ?? (openByDefault && l.recipientLanes.length > 1)).map((l) => l.id)),
    [lanes, folds, openByDefault],
  );
  useLayoutEffect(() => {
    unfoldedRef.current = unfolded;
  }, [unfolded, unfoldedRef]);
  const layout = useMemo(() => laneLayout(lanes, unfolded, ROW, SUB), [lanes, unfolded]);
  const viewport = Math.min(layout.height, VIEWPORT_ROWS * ROW);
  const { first, last } = visibleLaneRangeOf(layout, scrollTop, viewport);
  const shown = lanes.slice(first, last + 1);
  // Each lane's marks, bands and connectors, once per timeline: a lane draws from its own.
  const items = useMemo(() => itemsByLane(timeline), [timeline]);

  const { drag, handlers, wasDragged, show } = useTimelineGestures({
    scale,
    zoomed,
    full,
    onZoom,
    scroller,
    onDragStart: () => setHover(undefined),
    rowHeight: ROW,
  });

  const select = useStable((m: Mark) => {
    onMark(m);
    if (m.lane) onDelivery(m.lane);
  });
  const fold = useCallback((id: string, open: boolean) => setFolds((f) => new Map(f).set(id, open)), []);
  const pickLane = useStable((id: string, selected: boolean) => onDelivery(selected ? undefined : id));

  // Keep the selected mark in view and focused when the keyboard moved it.
  const focusMark = (m: Mark) => {
    select(m);
    const li = lanes.findIndex((l) => l.id === m.lane);
    const el = scroller.current;
    const top = layout.tops[li] ?? 0;
    if (el && li >= 0 && (top < el.scrollTop || top + ROW > el.scrollTop + viewport)) el.scrollTop = top;
    requestAnimationFrame(() =>
      scroller.current?.querySelector<SVGGElement>(`[data-mark-id="${CSS.escape(m.id)}"]`)?.focus(),
    );
  };

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    // Shift+←/→ pan by a tenth of the view, + and − zoom around its middle, 0 shows the whole run.
    if (e.shiftKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      e.preventDefault();
      e.stopPropagation();
      show(panWindow(scale, (e.key === "ArrowLeft" ? 1 : -1) * scale.width * 0.1, full[0], full[1]));
      return;
    }
    if (e.key === "+" || e.key === "=" || e.key === "-" || e.key === "0") {
      e.preventDefault();
      e.stopPropagation();
      show(e.key === "0" ? undefined : zoomWindow(scale, e.key === "-" ? 2 : 0.5, scale.width / 2, full[0], full[1]));
      return;
    }
    const dir =
      e.key === "ArrowRight"
        ? "next"
        : e.key === "ArrowLeft"
          ? "previous"
          : e.key === "ArrowDown"
            ? "down"
            : e.key === "ArrowUp"
              ? "up"
              : undefined;
    if (!dir) {
      if (e.key === "Escape") onMark(undefined);
      return;
    }
    e.preventDefault();
    e.stopPropagation();
    const next = neighbourMark(timeline.marks, selectedMark?.id, dir, lanes);
    if (next) focusMark(next);
  };

  return (
    <div className="lanes-wrap">
      {notes.some((n) => n.timeMs !== undefined) && <AxisNotes notes={notes} scale={scale} startMs={startMs} />}
      <TimeAxis scale={scale} startMs={startMs} />
      <div
        className={`lanes${zoomed ? " pannable" : ""}${drag?.mode === "pan" ? " panning" : ""}`}
        ref={scroller}
        style={{ height: viewport }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        onKeyDown={onKey}
        role="group"
        aria-label="Delivery lanes: arrow keys move between marks, Enter selects, Shift+arrows pan, + and − zoom, 0 resets"
      >
        <div style={{ height: layout.height, position: "relative" }}>
          {shown.map((lane, i) => (
            <LaneRow
              key={lane.id}
              lane={lane}
              items={laneItems(items, lane.id)}
              top={layout.tops[first + i] ?? 0}
              unfolded={unfolded.has(lane.id)}
              onFold={fold}
              scale={scale}
              startMs={startMs}
              playheadMs={playheadMs}
              selected={delivery === lane.id}
              selectedMark={selectedMark}
              onLane={pickLane}
              onMark={select}
              onHover={setHover}
              drag={handlers}
              wasDragged={wasDragged}
            />
          ))}
        </div>
      </div>
      {drag?.mode === "brush" && drag.moved && (
        <div
          className="brush"
          aria-hidden="true"
          style={{
            left: drag.left + Math.min(drag.from, drag.to),
            width: Math.abs(drag.to - drag.from),
            top: drag.top,
            height: drag.height,
          }}
        />
      )}
      {hover && !drag?.moved && (
        <MarkTip text={hover.mark.summary} x={hover.x} y={hover.y} right={LABEL_W + scale.width + 8} />
      )}
      <p className="muted hint">
        Drag across a lane (or the overview) to zoom; once zoomed, drag (or Shift+wheel, Shift+←/→) to pan and
        Shift+drag to zoom again; double-click or 0 resets. Click a mark for its exchange; arrow keys move between
        marks; ▸ unfolds a lane's recipients.
      </p>
    </div>
  );
}

/**
 * A mark's hover text beside the pointer (`x`, `y` in the lanes' box), flipped to the pointer's left where
 * it would run past the lanes' right edge `right` (marks near the end of the run).
 */
function MarkTip({ text, x, y, right }: { text: string; x: number; y: number; right: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState<number | undefined>();
  useLayoutEffect(() => setWidth(ref.current?.offsetWidth), [text]);
  const place = tipPlace(x, width ?? 0, right);
  return (
    <div
      ref={ref}
      role="tooltip"
      className="mark-tip"
      data-side={place.side}
      style={{ left: place.left, top: y + TIP_GAP, visibility: width === undefined ? "hidden" : undefined }}
    >
      {text}
    </div>
  );
}

/** The scenario's notes in view: a numbered flag each over the axis, its words on hover. */
function AxisNotes({
  notes,
  scale,
  startMs,
}: {
  readonly notes: readonly TimelineNote[];
  readonly scale: TimeScale;
  readonly startMs: number;
}) {
  // The lesson panel lists the notes for every reader, so the drawing stays aria-hidden like the axis.
  return (
    <svg
      className="axis-notes"
      width={LABEL_W + scale.width + 8}
      height={16}
      aria-hidden="true"
      data-testid="timeline-notes"
    >
      <g transform={`translate(${LABEL_W},0)`}>
        {notes.map((n) =>
          n.timeMs === undefined || n.timeMs < scale.fromMs || n.timeMs > scale.toMs ? null : (
            <g
              key={n.index}
              className="axis-note"
              data-note={n.index}
              data-x={scale.x(n.timeMs).toFixed(1)}
              transform={`translate(${scale.x(n.timeMs)},0)`}
            >
              <title>{`Note ${n.index + 1}, ${formatOffset(n.timeMs, startMs)}: ${n.note}`}</title>
              <line y1={12} y2={16} />
              <circle cy={6.5} r={6} />
              <text y={10} textAnchor="middle">
                {n.index + 1}
              </text>
            </g>
          ),
        )}
      </g>
    </svg>
  );
}

/** The time axis: its ticks, and a compressed axis' breaks labelled with the time each hides where it fits. */
function TimeAxis({ scale, startMs }: { readonly scale: TimeScale; readonly startMs: number }) {
  const axis = useMemo(() => ticks(scale, startMs), [scale, startMs]);
  // A compressed axis' breaks: drawn, and labelled with the time each hides where it fits.
  const cuts = useMemo(() => breakMarks(scale, axis, measureLabel), [scale, axis]);
  return (
    <svg className="axis" width={LABEL_W + scale.width + 8} height={22} aria-hidden="true">
      <g transform={`translate(${LABEL_W},0)`}>
        {cuts.map((b) => (
          <g
            key={b.fromMs}
            className="axis-break"
            data-from-ms={b.fromMs - startMs}
            data-until-ms={b.toMs - startMs}
            data-x1={b.x1.toFixed(1)}
            data-x2={b.x2.toFixed(1)}
            data-hidden={b.hidden}
          >
            <title>{breakTitle(b, startMs)}</title>
            <ShapeView shape={axisBreakShape(b.x1, b.x2)} />
            {b.label !== undefined && (
              <text x={(b.x1 + b.x2) / 2} y={12} textAnchor="middle" className="break-label">
                {b.label}
              </text>
            )}
          </g>
        ))}
        {axis.map((t) => (
          <g
            key={t.timeMs}
            transform={`translate(${t.x},0)`}
            className="axis-tick"
            data-time-ms={t.timeMs - startMs}
            data-x={t.x.toFixed(1)}
          >
            <line y1={16} y2={22} stroke="currentColor" />
            <text y={12} textAnchor={tickAnchor(t.x, scale.width)} className="tick">
              {t.label}
            </text>
          </g>
        ))}
      </g>
    </svg>
  );
}
