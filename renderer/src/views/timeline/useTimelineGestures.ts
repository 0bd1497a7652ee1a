/**
 * The lanes' pointer gestures: a drag brushes a range to zoom to (or, once
 * zoomed, pans; Shift+drag brushes again), Shift+wheel pans, a double-click
 * shows the whole run. A press on a mark stays a click until it moves more
 * than {@link DRAG_SLOP} px: only then does the lane take the pointer, and the
 * click that ends the press selects nothing.
 */
import {
  useCallback,
  useEffect,
  useEffectEvent,
  useMemo,
  useRef,
  useState,
  type PointerEvent,
  type RefObject,
} from "react";
import { panWindow } from "../../model/timelineNavigation.ts";
import type { TimeScale } from "../../model/timelineScale.ts";
import { useStable } from "../../hooks/useStable.ts";

type Window = readonly [number, number];

/** How far a press moves before it is a drag (a click on a mark that wobbles still selects it). */
export const DRAG_SLOP = 3;

/**
 * A press under way. A brush is drawn once over all the lanes (not in each lane, which would redraw every
 * lane at each move): `left` and `top` place the plot's x = 0 and the lanes' top in the lanes' box.
 */
export type Drag =
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

/** The handlers every lane's plot (and sub-lane's) takes: the same across renders. */
export interface DragHandlers {
  readonly onPointerDown: (e: PointerEvent<SVGSVGElement>) => void;
  readonly onPointerMove: (e: PointerEvent<SVGSVGElement>) => void;
  readonly onPointerUp: () => void;
  readonly onDoubleClick: () => void;
}

export interface TimelineGestureOptions {
  readonly scale: TimeScale;
  /** The user zoomed or panned: a drag pans (Shift+drag still brushes). */
  readonly zoomed: boolean;
  /** The whole run: how far a pan can go. */
  readonly full: Window;
  readonly onZoom: (window: Window | undefined) => void;
  /** The lanes' scrolling box: it takes Shift+wheel, and places the brush. */
  readonly scroller: RefObject<HTMLDivElement | null>;
  /** A drag began: the hover text goes. */
  readonly onDragStart: () => void;
  /** The row height, for a brush over lanes whose box is not laid out. */
  readonly rowHeight: number;
}

export interface TimelineGestures {
  /** The press under way, if any. */
  readonly drag: Drag | undefined;
  readonly handlers: DragHandlers;
  /** Whether the last press moved (a brush or pan over a mark): then the click that ends it selects nothing. */
  readonly wasDragged: () => boolean;
  /** Show a window: none when it shows the whole run (the view follows the playhead again). */
  readonly show: (w: Window | undefined) => void;
}

export function useTimelineGestures({
  scale,
  zoomed,
  full,
  onZoom,
  scroller,
  onDragStart,
  rowHeight,
}: TimelineGestureOptions): TimelineGestures {
  const [drag, setDrag] = useState<Drag | undefined>();
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
  }, [scroller]);

  const plotX = (e: PointerEvent) => {
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
        height: lanesBox?.height ?? rowHeight,
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
      onDragStart();
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
  const handlers = useMemo(
    () => ({ onPointerDown, onPointerMove, onPointerUp, onDoubleClick }),
    [onPointerDown, onPointerMove, onPointerUp, onDoubleClick],
  );
  return { drag, handlers, wasDragged, show };
}
