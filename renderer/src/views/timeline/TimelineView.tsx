import { memo, useMemo, useRef, useState } from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { formatOffset } from "../../model/time.ts";
import { OUTCOME_TEXT, timelineReader, type Mark, type TimelineReader } from "../../model/timeline.ts";
import { markShapes } from "../../model/timelineMarks.ts";
import { busyTimes, COMPRESS_BY_DEFAULT_OVER_MS, timelineScale, type ScaleKind } from "../../model/timelineScale.ts";
import { legendKinds, type LegendKinds } from "../../model/timelineLegend.ts";
import { ImageExportButtons } from "../ImageExportButtons.tsx";
import { OUTCOME_COLOUR } from "./colours.ts";
import { LABEL_W, type Window } from "./dimensions.ts";
import { useStable } from "../../hooks/useStable.ts";
import { useWidth } from "../../hooks/useWidth.ts";
import { Lanes } from "./Lanes.tsx";
import { LaneFilters } from "./LaneFilters.tsx";
import { filterTimeline, laneFacets, type LaneFilter } from "../../model/laneFilter.ts";
import { IN_FLIGHT_STROKE, Overview } from "./Overview.tsx";
import { RetryChart } from "./RetryChart.tsx";
import { Shapes } from "./Shapes.tsx";
import { timelineImage } from "./timelineImage.ts";
import "./timeline.css";

export interface TimelineViewProps {
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly labels: ReadonlyMap<string, string>;
  readonly playheadMs: number;
  /** The selected delivery actor (shared with the outcomes table). */
  readonly delivery: string | undefined;
  readonly onDelivery: (delivery: string | undefined) => void;
  readonly selectedMark: Pick<Mark, "id"> | undefined;
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
  /**
   * What reads the events into the timeline, when the parent keeps it (the run view asks it for an attempt
   * of the same timeline); without it the timeline keeps its own.
   */
  readonly reader?: TimelineReader;
  /** The scenario's notes placed on the run: numbered flags on the axis, as the lesson panel numbers them. */
  readonly notes?: readonly TimelineNote[];
  /**
   * Whether the axis may compress idle spans (default true). Compare's two stacked timelines share one axis,
   * which two runs' own compressions would not give: they draw linear or log only.
   */
  readonly compressible?: boolean;
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
  /**
   * Whether the linear scale compresses the idle spans; undefined: as the run's length
   * has it (on for a run longer than a day).
   */
  readonly compress?: boolean;
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
  reader: given,
  notes,
  compressible = true,
}: TimelineViewProps) {
  // Each timeline reads its own run (Compare draws two): a live run's next batch is the only thing read.
  const [own] = useState(timelineReader);
  const reader = given ?? own;
  const timeline = useMemo(() => reader.read(events, startMs, labels), [reader, events, startMs, labels]);
  const legend = useMemo(() => legendKinds(timeline), [timeline]);
  // The lanes a person filtered or searched for: the lanes drawn; the overview keeps the whole run.
  const [laneFilter, setLaneFilter] = useState<LaneFilter>({});
  const laneChoices = useMemo(() => laneFacets(timeline), [timeline]);
  const filtered = useMemo(() => filterTimeline(timeline, laneFilter), [timeline, laneFilter]);
  const [ownView, setOwnView] = useState<TimelineWindow>({ kind: "linear", zoom: undefined });
  const { kind, zoom, compress: chosen } = view ?? ownView;
  // The same functions across renders (the overview's bars are memoised on them).
  const setView = useStable((next: TimelineWindow) => (onView ? onView(next) : setOwnView(next)));
  const keep = chosen === undefined ? {} : { compress: chosen };
  const setKind = useStable((k: ScaleKind) => setView({ kind: k, zoom, ...keep }));
  const setZoom = useStable((w: Window | undefined) => setView({ kind, zoom: w, ...keep }));
  const [boxRef, boxWidth] = useWidth(900);
  const plotWidth = Math.max(200, boxWidth - LABEL_W - 16);
  // Follows the playhead unless zoomed: the whole run so far, and the playhead at the right.
  const fullTo = Math.max(timeline.endMs, playheadMs, axisEndMs ?? startMs, startMs + 60_000);
  const fullEnd = fullTo + (fullTo - startMs) * 0.04;
  const full: Window = [startMs, fullEnd];
  const [fromMs, toMs] = zoom ?? full;
  // Idle spans compressed: by default for a run longer than a day, linear scale only.
  const compress = compressible && (chosen ?? timeline.endMs - startMs > COMPRESS_BY_DEFAULT_OVER_MS);
  const busy = useMemo(() => (compress ? busyTimes(timeline) : []), [compress, timeline]);
  const scale = useMemo(
    () => timelineScale(kind, compress, busy, fromMs, toMs, plotWidth, startMs),
    [kind, compress, busy, fromMs, toMs, plotWidth, startMs],
  );
  // The whole run's scale: the overview's bars and its window.
  const wholeScale = useMemo(
    () => timelineScale(kind, compress, busy, startMs, fullEnd, plotWidth, startMs),
    [kind, compress, busy, fullEnd, plotWidth, startMs],
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
          {compressible && (
            <button
              aria-pressed={compress && kind === "linear"}
              disabled={kind !== "linear"}
              title={
                kind === "linear"
                  ? "Draw the idle spans shorter than they last, each break labelled with the time it hides"
                  : "Idle spans are compressed on the linear scale"
              }
              onClick={() => setView({ kind, zoom, compress: !compress })}
            >
              Compress idle time
            </button>
          )}
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
                title: `Delivery timeline · ${formatOffset(fromMs, startMs).replace(/\.\d+$/, "")} – ${formatOffset(toMs, startMs).replace(/\.\d+$/, "")}`,
              })
            }
          />
          <span className="muted timeline-window" data-testid="timeline-window">
            {formatOffset(fromMs, startMs).replace(/\.\d+$/, "")} – {formatOffset(toMs, startMs).replace(/\.\d+$/, "")}
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
            scale={wholeScale}
            window={[fromMs, toMs]}
            onZoom={setZoom}
          />
          <Legend kinds={legend} />
          <LaneFilters
            filter={laneFilter}
            onFilter={setLaneFilter}
            outcomes={laneChoices.outcomes}
            domains={laneChoices.domains}
            shown={filtered.lanes.length}
            total={timeline.lanes.length}
          />
          {filtered.lanes.length === 0 && <p className="muted">No lane passes these filters.</p>}
          <Lanes
            timeline={filtered}
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

/** The legend of what the run draws: the outcomes among its attempts, the bands, lines and marks it has. */
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
