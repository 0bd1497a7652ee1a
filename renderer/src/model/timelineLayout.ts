/**
 * Where the lanes' rows sit (a lane, plus its recipients' sub-lanes when it is
 * unfolded), which of them the scrolled viewport shows, and where a hover
 * text goes beside the pointer.
 */
import type { Lane } from "./timeline.ts";

/** The lanes to draw: those in the scrolled viewport, and `overscan` more on each side. */
export function visibleLaneRange(
  laneCount: number,
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  overscan = 2,
): { readonly first: number; readonly last: number } {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(laneCount - 1, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

/** Where each lane row sits when some lanes show their recipients' sub-lanes. */
export interface LaneLayout {
  /** The top of each lane, by index, and after the last one the total height. */
  readonly tops: readonly number[];
  readonly height: number;
}

/** The rows' tops: a lane is `rowHeight` tall, plus `subHeight` per recipient when it is unfolded. */
export function laneLayout(
  lanes: readonly Lane[],
  unfolded: ReadonlySet<string>,
  rowHeight: number,
  subHeight: number,
): LaneLayout {
  const tops: number[] = [];
  let y = 0;
  for (const lane of lanes) {
    tops.push(y);
    y += rowHeight + (unfolded.has(lane.id) ? lane.recipientLanes.length * subHeight : 0);
  }
  tops.push(y);
  return { tops, height: y };
}

/** The lanes (with their sub-lanes) in the scrolled viewport of a layout, and `overscan` more each side. */
export function visibleLaneRangeOf(
  layout: LaneLayout,
  scrollTop: number,
  viewportHeight: number,
  overscan = 2,
): { readonly first: number; readonly last: number } {
  const count = layout.tops.length - 1;
  // The last lane whose top is at or above y.
  const at = (y: number) => {
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((layout.tops[mid] ?? 0) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  if (count <= 0) return { first: 0, last: -1 };
  return {
    first: Math.max(0, at(scrollTop) - overscan),
    last: Math.min(count - 1, at(scrollTop + viewportHeight) + overscan),
  };
}

/** How far a hover text sits from the pointer. */
export const TIP_GAP = 12;

/**
 * Where a hover text `width` wide goes beside the pointer at `x`: to its right, or to its left where it
 * would run past `right` (the box's right edge), kept inside the box's left edge.
 */
export function tipPlace(
  x: number,
  width: number,
  right: number,
): { readonly left: number; readonly side: "right" | "left" } {
  if (x + TIP_GAP + width <= right) return { left: x + TIP_GAP, side: "right" };
  return { left: Math.max(0, x - TIP_GAP - width), side: "left" };
}
