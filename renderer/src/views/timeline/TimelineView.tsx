import {
  memo,
  useCallback,
  useEffect,
  useEffectEvent,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
  type PointerEvent,
} from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import {
  buildTimeline,
  drawnMarks,
  giveUpOf,
  itemsByLane,
  laneItems,
  laneLayout,
  neighbourMark,
  OUTCOME_TEXT,
  offsetText,
  ticks,
  panWindow,
  TIP_GAP,
  tipPlace,
  timeScale,
  visibleLaneRangeOf,
  zoomWindow,
  type Lane,
  type LaneItems,
  type Mark,
  type ScaleKind,
  type Timeline,
  type TimeScale,
} from "../../model/timeline.ts";
import { LANE_ROW, laneLabels, resultRuns, SUB_ROW, type PlacedLabel } from "../../model/timelineLabels.ts";
import {
  clampToPlot,
  colourOf,
  connectorShape,
  CSS_TIMELINE_PALETTE,
  drawnConnectors,
  giveUpShape,
  LABEL_HALO,
  labelBacking,
  markShapes,
  resultShapes,
} from "../../model/timelineMarks.ts";
import { legendKinds, type LegendKinds } from "../../model/timelineLegend.ts";
import { ImageExportButtons } from "../ImageExportButtons.tsx";
import { IN_FLIGHT_STROKE, Overview } from "./Overview.tsx";
import { RetryChart } from "./RetryChart.tsx";
import { ShapeView, Shapes } from "./Shapes.tsx";
import { OUTCOME_COLOUR } from "./colours.ts";
import { measureLabel } from "./measure.ts";
import { timelineImage } from "./timelineImage.ts";
import "./timeline.css";

/** A lane's row (the labels' layout and the exported image use the same). */
const ROW = LANE_ROW;
/** A recipient's sub-lane under an unfolded lane. */
const SUB = SUB_ROW;
const LABEL_W = 230;
/** The fold button before a lane's label. */
const FOLD_W = 22;
const VIEWPORT_ROWS = 8;
/** Lanes with several recipients start unfolded when there are at most this many lanes. */
const UNFOLD_UP_TO = 8;
type Window = readonly [number, number];

/** A function that calls the latest `fn`: the same across renders, so that memoised rows keep it. */
function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const ref = useRef(fn);
  useLayoutEffect(() => {
    ref.current = fn;
  });
  return useCallback((...args: A) => ref.current(...args), []);
}

/**
 * The width of an element's content (inside its padding: what its children can fill), kept up to date. A
 * panel's padding counted in drew the lanes, axis and charts 2 × 0.75rem past the panel's edge, clipped.
 */
export function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const style = getComputedStyle(el);
      const padding = (parseFloat(style.paddingLeft) || 0) + (parseFloat(style.paddingRight) || 0);
      setWidth(Math.max(200, Math.floor(el.clientWidth - padding)));
    };
    update();
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}

export interface TimelineViewProps {
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly labels: ReadonlyMap<string, string>;
  readonly playheadMs: number;
  /** The selected delivery actor (shared with the outcomes table). */
  readonly delivery: string | undefined;
  readonly onDelivery: (delivery: string | undefined) => void;
  readonly selectedMark: Mark | undefined;
  readonly onMark: (mark: Mark | undefined) => void;
  /** Where the axis ends at the least: two timelines stacked in the Compare view share one axis. */
  readonly axisEndMs?: number;
  /** The heading's id (default `timeline-heading`): each of two stacked timelines needs its own. */
  readonly headingId?: string;
  /**
   * Words that tell two stacked timelines apart (`of run A`): added to the heading for assistive technology,
   * so that each region (and its retry chart) has a name of its own.
   */
  readonly which?: string;
  /** Show the sequence diagram of a time range (the visible window). */
  readonly onRange?: (range: Window) => void;
  /**
   * The scale and zoom, when the parent keeps them: the Compare view's two
   * stacked timelines share one, so that a zoom, pan or reset of either
   * applies to both. Without it the timeline keeps its own.
   */
  readonly view?: TimelineWindow;
  readonly onView?: (view: TimelineWindow) => void;
  /** The scenario's notes placed on the run (issue 24): numbered flags on the axis, as the lesson panel numbers them. */
  readonly notes?: readonly TimelineNote[];
}

/** A scenario's note where the timeline shows it. */
export interface TimelineNote {
  /** Its place in the scenario's notes, from 0 (the flag says index + 1). */
  readonly index: number;
  readonly note: string;
  /** Undefined while its event has not come: not drawn. */
  readonly timeMs?: number;
}

/** A timeline's scale and zoomed window (undefined: the whole run). */
export interface TimelineWindow {
  readonly kind: ScaleKind;
  readonly zoom: Window | undefined;
}

/** The delivery timeline: overview, axis, one lane per delivery actor, the retry chart of the selected one. */
export function TimelineView({
  events,
  startMs,
  labels,
  playheadMs,
  delivery,
  onDelivery,
  selectedMark,
  onMark,
  axisEndMs,
  headingId = "timeline-heading",
  which,
  onRange,
  view,
  onView,
  notes,
}: TimelineViewProps) {
  const timeline = useMemo(() => buildTimeline(events, startMs, labels), [events, startMs, labels]);
  const legend = useMemo(() => legendKinds(timeline), [timeline]);
  const [own, setOwn] = useState<TimelineWindow>({ kind: "linear", zoom: undefined });
  const { kind, zoom } = view ?? own;
  // The same functions across renders (the overview's bars are memoised on them).
  const setView = useStable((next: TimelineWindow) => (onView ? onView(next) : setOwn(next)));
  const setKind = useStable((k: ScaleKind) => setView({ kind: k, zoom }));
  const setZoom = useStable((w: Window | undefined) => setView({ kind, zoom: w }));
  const [boxRef, boxWidth] = useWidth(900);
  const plotWidth = Math.max(200, boxWidth - LABEL_W - 16);
  // Follows the playhead unless zoomed: the whole run so far, and the playhead at the right.
  const fullTo = Math.max(timeline.endMs, playheadMs, axisEndMs ?? startMs, startMs + 60_000);
  const full: Window = [startMs, fullTo + (fullTo - startMs) * 0.04];
  const [fromMs, toMs] = zoom ?? full;
  const scale = useMemo(
    () => timeScale(kind, fromMs, toMs, plotWidth, startMs),
    [kind, fromMs, toMs, plotWidth, startMs],
  );
  const lane = useMemo(
    () => (delivery === undefined ? undefined : timeline.lanes.find((l) => l.id === delivery)),
    [timeline, delivery],
  );
  // The lanes unfolded on screen (the lanes keep their folding), for the exported image.
  const unfoldedRef = useRef<ReadonlySet<string>>(new Set());

  return (
    <section aria-labelledby={headingId} className="panel timeline-panel" ref={boxRef}>
      <div className="timeline-head">
        <h3 id={headingId}>
          Delivery timeline{which !== undefined && <span className="visually-hidden"> {which}</span>}
        </h3>
        <div className="timeline-tools" role="group" aria-label="Timeline scale">
          <button aria-pressed={kind === "linear"} onClick={() => setKind("linear")}>
            Linear
          </button>
          <button aria-pressed={kind === "log"} onClick={() => setKind("log")}>
            Log
          </button>
          <button onClick={() => setZoom(undefined)} disabled={!zoom}>
            Reset zoom
          </button>
          <ImageExportButtons
            view="timeline"
            label="the delivery timeline"
            disabled={timeline.lanes.length === 0}
            image={(panel) =>
              timelineImage(panel, timeline, {
                scale,
                startMs,
                playheadMs,
                unfolded: unfoldedRef.current,
                title: `Delivery timeline · ${offsetText(fromMs, startMs).replace(/\.\d+$/, "")} – ${offsetText(toMs, startMs).replace(/\.\d+$/, "")}`,
              })
            }
          />
          <span className="muted timeline-window" data-testid="timeline-window">
            {offsetText(fromMs, startMs).replace(/\.\d+$/, "")} – {offsetText(toMs, startMs).replace(/\.\d+$/, "")}
            {zoom ? " (zoomed)" : ""}
          </span>
          {onRange && (
            <button onClick={() => onRange([fromMs, toMs])} disabled={timeline.lanes.length === 0}>
              Sequence of this window
            </button>
          )}
        </div>
      </div>
      {timeline.lanes.length === 0 ? (
        <p className="muted">No delivery yet.</p>
      ) : (
        <>
          <Overview
            timeline={timeline}
            width={boxWidth}
            left={LABEL_W}
            plotWidth={plotWidth}
            kind={kind}
            domain={full}
            window={[fromMs, toMs]}
            onZoom={setZoom}
          />
          <Legend kinds={legend} />
          <Lanes
            timeline={timeline}
            scale={scale}
            startMs={startMs}
            playheadMs={playheadMs}
            delivery={delivery}
            onDelivery={onDelivery}
            selectedMark={selectedMark}
            onMark={onMark}
            zoomed={zoom !== undefined}
            full={full}
            onZoom={setZoom}
            unfoldedRef={unfoldedRef}
            {...(notes !== undefined && { notes })}
          />
          {lane && (
            <RetryChart lane={lane} startMs={startMs} width={boxWidth} {...(which !== undefined && { which })} />
          )}
        </>
      )}
    </section>
  );
}

/** A lane's "SMTP ruled out" ring around an attempt's dot, in the legend's 20-px box. */
const RULED_OUT_LEGEND = [
  ...markShapes("attempt", "temporary").map((s) => (s.kind === "circle" ? { ...s, cx: 10, cy: 10 } : s)),
  ...markShapes("ruled-out").map((s) => (s.kind === "circle" ? { ...s, cx: 10, cy: 10 } : s)),
];

/** The legend of what the run draws (issue 24): the outcomes among its attempts, the bands, lines and marks it has. */
const Legend = memo(function Legend({ kinds }: { readonly kinds: LegendKinds }) {
  return (
    <ul className="timeline-legend" aria-label="Legend">
      {kinds.outcomes.map((o) => (
        <li key={o}>
          <svg width="12" height="12" aria-hidden="true">
            <circle cx="6" cy="6" r="5" fill={OUTCOME_COLOUR[o]} />
          </svg>
          {OUTCOME_TEXT[o]}
        </li>
      ))}
      {kinds.window && (
        <li>
          <span className="swatch band-window" aria-hidden="true" /> fallback window
        </li>
      )}
      {kinds.ruledOut && (
        <li>
          <svg width="20" height="20" aria-hidden="true">
            <Shapes shapes={RULED_OUT_LEGEND} />
          </svg>
          SMTP ruled out
        </li>
      )}
      {kinds.fault && (
        <li>
          <span className="swatch band-fault" aria-hidden="true" /> fault
        </li>
      )}
      {kinds.handoff && (
        <li>
          <span className="diamond" aria-hidden="true">
            ◆
          </span>{" "}
          SMTP hand-off
        </li>
      )}
      <li>
        <svg width="16" height="10" aria-hidden="true">
          <path
            className="in-flight"
            d="M0,8 H6 V2 H16"
            fill="none"
            style={{ stroke: IN_FLIGHT_STROKE }}
            strokeWidth="1.5"
          />
        </svg>
        deliveries in flight (overview)
      </li>
    </ul>
  );
});

interface LanesProps {
  readonly timeline: Timeline;
  readonly scale: TimeScale;
  readonly startMs: number;
  readonly playheadMs: number;
  readonly delivery: string | undefined;
  readonly onDelivery: (delivery: string | undefined) => void;
  readonly selectedMark: Mark | undefined;
  readonly onMark: (mark: Mark | undefined) => void;
  /** The user zoomed or panned: a drag pans (Shift+drag still brushes). */
  readonly zoomed: boolean;
  /** The whole run: how far a pan can go. */
  readonly full: Window;
  readonly onZoom: (window: Window | undefined) => void;
  /** Where the lanes tell which of them are unfolded (for the exported image). */
  readonly unfoldedRef: { current: ReadonlySet<string> };
  readonly notes?: readonly TimelineNote[];
}

/**
 * A brush is drawn once over all the lanes (not in each lane, which would redraw every lane at each
 * move): `left` and `top` place the plot's x = 0 and the lanes' top in the lanes' box.
 */
type Drag =
  | {
      mode: "brush";
      from: number;
      to: number;
      left: number;
      top: number;
      height: number;
      x0: number;
      /** It went further than a click's wobble: a brush (or pan), not a press on a mark. */
      moved: boolean;
    }
  | { mode: "pan"; x0: number; scale: TimeScale; moved: boolean };

/** How far a press moves before it is a drag (a click on a mark that wobbles still selects it). */
const DRAG_SLOP = 3;

function Lanes({
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
  const [drag, setDrag] = useState<Drag | undefined>();
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
  const axis = ticks(scale, startMs);
  // Each lane's marks, bands and connectors, once per timeline: a lane draws from its own.
  const items = useMemo(() => itemsByLane(timeline), [timeline]);

  /** A new window: none when it shows the whole run (the view follows the playhead again). */
  const show = (w: Window | undefined) =>
    onZoom(w === undefined || (w[0] <= full[0] && w[1] >= full[1]) ? undefined : w);
  // Shift+wheel pans: a native listener, since React's wheel listeners cannot prevent the default.
  const wheelPan = useEffectEvent((d: number) => show(panWindow(scale, -d, full[0], full[1])));
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      if (!e.shiftKey) return;
      const d = e.deltaX || e.deltaY;
      if (!d) return;
      e.preventDefault();
      wheelPan(d);
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => el.removeEventListener("wheel", onWheel);
  }, []);

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

  const plotX = (e: PointerEvent | MouseEvent) => {
    const rect = (e.currentTarget as Element).getBoundingClientRect();
    // The plot is drawn 4 px in from the svg's left edge.
    return Math.min(scale.width, Math.max(0, e.clientX - rect.left - 4));
  };
  const capture = (e: PointerEvent<SVGSVGElement>) => {
    try {
      e.currentTarget.setPointerCapture(e.pointerId);
    } catch {
      // a synthetic pointer (no capture): the drag still works while over the lane
    }
  };
  /** The last press moved: the click that ends it selects no mark. */
  const dragged = useRef(false);
  // A drag brushes (or, zoomed, pans) wherever it starts — on a mark too, where a dense lane has them under
  // every pixel. A press on a mark stays a click until it moves: the lane takes the pointer only then.
  const onPointerDown = useStable((e: PointerEvent<SVGSVGElement>) => {
    if (e.button !== 0) return;
    dragged.current = false;
    if (!(e.target as Element).closest("[data-mark-id]")) capture(e);
    if (zoomed && !e.shiftKey) setDrag({ mode: "pan", x0: e.clientX, scale, moved: false });
    else {
      const x = plotX(e);
      const plot = e.currentTarget.getBoundingClientRect();
      const wrap = scroller.current?.parentElement?.getBoundingClientRect();
      const lanesBox = scroller.current?.getBoundingClientRect();
      setDrag({
        mode: "brush",
        from: x,
        to: x,
        left: plot.left - (wrap?.left ?? 0) + 4,
        top: (lanesBox?.top ?? 0) - (wrap?.top ?? 0),
        height: lanesBox?.height ?? ROW,
        x0: e.clientX,
        moved: false,
      });
    }
  });
  const onPointerMove = useStable((e: PointerEvent<SVGSVGElement>) => {
    if (!drag) return;
    const moved = drag.moved || Math.abs(e.clientX - drag.x0) > DRAG_SLOP;
    if (moved && !drag.moved) {
      capture(e);
      dragged.current = true;
      setHover(undefined);
    }
    if (drag.mode === "brush") setDrag({ ...drag, to: plotX(e), moved });
    else {
      if (!drag.moved && moved) setDrag({ ...drag, moved });
      if (moved) show(panWindow(drag.scale, e.clientX - drag.x0, full[0], full[1]));
    }
  });
  const onPointerUp = useStable(() => {
    if (drag?.mode === "brush" && drag.moved && Math.abs(drag.to - drag.from) > 6) {
      const a = scale.timeAt(Math.min(drag.from, drag.to));
      const b = scale.timeAt(Math.max(drag.from, drag.to));
      onZoom([a, b]);
    }
    setDrag(undefined);
  });
  const onDoubleClick = useStable(() => onZoom(undefined));
  const wasDragged = useCallback(() => dragged.current, []);
  // One set of handlers for every lane, the same across renders: a lane is drawn again only when it changes.
  const dragHandlers = useMemo(
    () => ({ onPointerDown, onPointerMove, onPointerUp, onDoubleClick }),
    [onPointerDown, onPointerMove, onPointerUp, onDoubleClick],
  );

  return (
    <div className="lanes-wrap">
      {/* The scenario's notes in view: a numbered flag each, its words on hover (the lesson panel lists them for
          every reader, so the drawing stays aria-hidden like the axis). */}
      {notes.some((n) => n.timeMs !== undefined) && (
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
                  <title>{`Note ${n.index + 1}, ${offsetText(n.timeMs, startMs)}: ${n.note}`}</title>
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
      )}
      <svg className="axis" width={LABEL_W + scale.width + 8} height={22} aria-hidden="true">
        <g transform={`translate(${LABEL_W},0)`}>
          {axis.map((t) => (
            <g key={t.timeMs} transform={`translate(${t.x},0)`}>
              <line y1={16} y2={22} stroke="currentColor" />
              <text y={12} textAnchor={t.x < 30 ? "start" : "middle"} className="tick">
                {t.label}
              </text>
            </g>
          ))}
        </g>
      </svg>
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
              drag={dragHandlers}
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

interface DragHandlers {
  readonly onPointerDown: (e: PointerEvent<SVGSVGElement>) => void;
  readonly onPointerMove: (e: PointerEvent<SVGSVGElement>) => void;
  readonly onPointerUp: () => void;
  readonly onDoubleClick: () => void;
}

interface LaneRowProps {
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
  readonly selectedMark: Mark | undefined;
  readonly onLane: (lane: string, selected: boolean) => void;
  readonly onMark: (m: Mark) => void;
  readonly onHover: (h: { mark: Mark; x: number; y: number } | undefined) => void;
  readonly drag: DragHandlers;
  /** Whether the press that ends in a click moved (a brush or pan over a mark): then the click selects nothing. */
  readonly wasDragged: () => boolean;
}

/** A label's halo (timelineMarks' LABEL_HALO) in the lane's background (timeline.css: --lane-bg). */
const HALO_STYLE = {
  stroke: colourOf(LABEL_HALO.stroke, CSS_TIMELINE_PALETTE),
  strokeWidth: LABEL_HALO.strokeWidth,
  strokeLinejoin: "round",
  paintOrder: "stroke",
} as const;

/** A placed label (timelineLabels.ts), on its backing where it crosses an arc, in a group translated by dx. */
function Label({ label, dx, testId }: { label: PlacedLabel | undefined; dx: number; testId?: string }) {
  if (!label) return null;
  return (
    <>
      {label.backing && (
        <ShapeView shape={labelBacking({ ...label.box, x0: label.box.x0 - dx, x1: label.box.x1 - dx })} />
      )}
      <text
        x={label.x - dx}
        y={label.y}
        textAnchor={label.anchor}
        className="mark-label"
        style={HALO_STYLE}
        data-testid={testId}
        data-label-for={label.id}
      >
        {label.text}
      </text>
    </>
  );
}

const RECIPIENT_OUTCOME_TEXT: Readonly<Record<string, string>> = {
  accepted: "accepted",
  rejected: "rejected",
  smtp: "SMTP",
  bounced: "bounced",
};

/** One lane: drawn again only when its own props change (a pan or zoom, its selection, its folding). */
const LaneRow = memo(function LaneRow({
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
                  <title>{`${b.label}: ${offsetText(b.fromMs, startMs)} – ${b.untilMs === undefined ? "never ends" : offsetText(b.untilMs, startMs)}`}</title>
                </rect>
              );
            })}
            <line x1={0} x2={w} y1={mid} y2={mid} className="lane-axis" />
            {arcs.map((a) => (
              <ShapeView key={a.connector.retry} shape={connectorShape(a.x1, a.x2, a.connector.decidedBy)} />
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
            {/* The give-up line and the marks over the playhead: their labels read over it, on their halo. */}
            {giveUpShown && (
              <g data-kind="give-up" data-time-ms={giveUp - startMs}>
                <ShapeView shape={giveUpShape(scale.x(giveUp))} />
                <Label label={labels.get("give-up")} dx={0} />
              </g>
            )}
            {drawn.map(({ mark: m, x, count }) => {
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
                  <Shapes shapes={markShapes(m.kind, m.outcome, { selected: isSel })} />
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

interface RecipientRowProps {
  readonly recipient: Lane["recipientLanes"][number];
  readonly scale: TimeScale;
  readonly startMs: number;
  /** Where the lane's attempts are drawn: a faint tick on each sub-lane links a result to its attempt. */
  readonly attemptXs: readonly number[];
  readonly drag: DragHandlers;
}

/** One recipient's sub-lane: its result at each attempt that answered it, and how it ended. */
const RecipientRow = memo(function RecipientRow({ recipient: r, scale, startMs, attemptXs, drag }: RecipientRowProps) {
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
        `attempt ${x.attempt} at ${offsetText(x.timeMs, startMs)}: ${x.status}${x.problem ? ` (${x.problem})` : ""}${x.rule ? ` [${x.rule}]` : ""}`,
    ),
    outcome
      ? `${word} at ${offsetText(outcome.timeMs, startMs)}${outcome.rule ? ` [${outcome.rule}]` : ""}`
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
