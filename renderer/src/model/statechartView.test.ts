import { describe, expect, it } from "vitest";
import { deliveryGraph } from "./statechart.ts";
import { statechartLayout } from "./statechartLayout.ts";
import {
  CANVAS_MAX_HEIGHT,
  CANVAS_MIN_HEIGHT,
  canvasView,
  panToShow,
  READABLE_TEXT_PX,
  SMALLEST_TEXT_PX,
} from "./statechartView.ts";

describe("the delivery machine's default view — its words read at 11 px or more", async () => {
  const layout = await statechartLayout(deliveryGraph());
  const state = (id: string) => layout.states.find((s) => s.id === id)!;

  for (const width of [700, 1000, 1248, 1552, 1872])
    it(`a canvas ${width} px wide: the smallest words at ${READABLE_TEXT_PX} px or more, the drawing placed over the canvas`, () => {
      const view = canvasView(layout, width, state("retryScheduled"));
      expect(view.zoom * SMALLEST_TEXT_PX).toBeGreaterThanOrEqual(READABLE_TEXT_PX - 1e-9);
      expect(view.height).toBeGreaterThanOrEqual(CANVAS_MIN_HEIGHT);
      expect(view.height).toBeLessThanOrEqual(CANVAS_MAX_HEIGHT);
      // The drawing covers the canvas where it is larger, else sits inside it: no empty band at one side only.
      const drawnW = layout.width * view.zoom;
      if (drawnW > width) {
        expect(view.x).toBeLessThanOrEqual(16);
        expect(view.x + drawnW).toBeGreaterThanOrEqual(width - 16);
      } else {
        expect(view.x).toBeGreaterThanOrEqual(0);
        expect(view.x + drawnW).toBeLessThanOrEqual(width + 1e-9);
      }
      // The state it centres on is in view.
      const box = state("retryScheduled");
      expect(panToShow(view, box, width, view.height - 2)).toBeUndefined();
    });

  it("a canvas wide enough shows the whole drawing at its readable size", () => {
    const width = Math.ceil(layout.width * (READABLE_TEXT_PX / SMALLEST_TEXT_PX) * 1.07);
    const view = canvasView(layout, width);
    expect(view.x).toBeGreaterThanOrEqual(0);
    expect(view.y).toBeGreaterThanOrEqual(0);
    expect(view.x + layout.width * view.zoom).toBeLessThanOrEqual(width);
    expect(view.y + layout.height * view.zoom).toBeLessThanOrEqual(view.height - 2);
  });

  it("a state out of view is brought in with the least pan; one in view leaves the user's pan alone", () => {
    const view = { x: 0, y: 0, zoom: 1 };
    const box = { x: 1200, y: 100, width: 150, height: 40 };
    expect(panToShow(view, box, 1000, 600)).toEqual({ x: 1000 - 1366, y: 0 });
    expect(panToShow(view, { ...box, x: 100 }, 1000, 600)).toBeUndefined();
    expect(panToShow({ x: -500, y: 0, zoom: 1 }, { ...box, x: 100 }, 1000, 600)).toEqual({ x: -84, y: 0 });
  });
});
