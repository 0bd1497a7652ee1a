import { describe, expect, it } from "vitest";
import type { MarkKind } from "./timeline.ts";
import {
  arcCrosses,
  colourOf,
  connectorShape,
  DARK_TIMELINE_PALETTE,
  drawnConnectors,
  LANE_MID,
  LIGHT_TIMELINE_PALETTE,
  markObstacle,
  markShapes,
  shapesBox,
  shapeSvg,
} from "./timelineMarks.ts";
import { timeScale } from "./timelineScale.ts";

describe("the marks' shapes, said once for the view and the image", () => {
  it("each mark kind has its shapes; the boxes labels keep off are those shapes' boxes", () => {
    expect(markShapes("handoff")[0]).toMatchObject({
      kind: "path",
      d: `M0,${LANE_MID - 8} L8,${LANE_MID} L0,${LANE_MID + 8} L-8,${LANE_MID} Z`,
      fill: "fg",
    });
    expect(markObstacle("handoff")).toEqual({ x0: -8, x1: 8, y0: LANE_MID - 8, y1: LANE_MID + 8 });
    expect(markObstacle("bounce")).toEqual({ x0: -6, x1: 6, y0: LANE_MID - 6, y1: LANE_MID + 6 });
    expect(markObstacle("dsn")).toEqual({ x0: -7, x1: 7, y0: LANE_MID + 13, y1: LANE_MID + 22 });
    expect(markObstacle("receiver")).toEqual({ x0: -5, x1: 5, y0: LANE_MID - 16, y1: LANE_MID - 8 });
    // An attempt's dot and a DNS change's line keep no label off.
    expect(markObstacle("attempt")).toBeUndefined();
    expect(markObstacle("dns")).toBeUndefined();
    for (const kind of ["handoff", "bounce", "dsn", "receiver"] as MarkKind[])
      expect(markObstacle(kind)).toEqual(shapesBox(markShapes(kind)));
  });

  it("an attempt's dot is in its outcome's colour, larger when selected, the same object each time", () => {
    const dot = markShapes("attempt", "deferred");
    expect(dot).toBe(markShapes("attempt", "deferred"));
    expect(dot[0]).toMatchObject({ kind: "circle", r: 5.5, fill: "deferred" });
    expect(markShapes("attempt", "deferred", { selected: true })[0]).toMatchObject({ r: 7 });
    expect(colourOf("deferred", DARK_TIMELINE_PALETTE)).toBe("#2f7fd0");
  });

  it("colour roles follow the palette: the hand-off's diamond is the theme's foreground", () => {
    const [diamond] = markShapes("handoff");
    expect(shapeSvg(diamond!, LIGHT_TIMELINE_PALETTE)).toContain(`fill="${LIGHT_TIMELINE_PALETTE.fg}"`);
    expect(shapeSvg(diamond!, DARK_TIMELINE_PALETTE)).toContain(`fill="${DARK_TIMELINE_PALETTE.fg}"`);
    expect(shapeSvg(connectorShape(0, 100, "retry-after"), LIGHT_TIMELINE_PALETTE)).toContain('stroke-dasharray="3 2"');
  });

  it("a connector's arc: kept within the plot, left out under 3 px, and what it crosses", () => {
    const scale = timeScale("linear", 1000, 2000, 100, 0);
    const c = (fromMs: number, toMs: number) => ({
      lane: "l",
      retry: 1,
      fromMs,
      toMs,
      decidedBy: "base-delay",
      happened: true,
      seq: 0,
    });
    expect(
      drawnConnectors([c(500, 1500), c(1500, 1510), c(1900, 3000), c(3000, 4000)], scale).map((a) => [a.x1, a.x2]),
    ).toEqual([
      [-4, 50],
      [90, 104],
    ]);
    // The arc rises 6 px over its feet (8 px above the middle line) halfway.
    const box = (x0: number, x1: number, y0: number, y1: number) => ({ x0, x1, y0, y1 });
    expect(arcCrosses(0, 100, box(45, 55, LANE_MID - 30, LANE_MID - 16))).toBe(false);
    expect(arcCrosses(0, 100, box(45, 55, LANE_MID - 30, LANE_MID - 13))).toBe(true);
    // Near its feet it is low: a label above the peak's height there misses it.
    expect(arcCrosses(0, 100, box(0, 5, LANE_MID - 20, LANE_MID - 11))).toBe(false);
    expect(arcCrosses(0, 100, box(0, 5, LANE_MID - 20, LANE_MID - 8))).toBe(true);
    expect(arcCrosses(0, 100, box(101, 120, LANE_MID - 20, LANE_MID))).toBe(false);
  });
});
