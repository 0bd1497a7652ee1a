import type { Measure } from "../../model/timelineLabels.ts";
import { estimateWidth } from "../../model/timelineLabels.ts";

/** Widths of the marks' 11 px labels, measured once per text with a canvas in the page's font. */
const widths = new Map<string, number>();
let context: CanvasRenderingContext2D | null | undefined;

export const measureLabel: Measure = (text) => {
  const known = widths.get(text);
  if (known !== undefined) return known;
  if (context === undefined) {
    context = document.createElement("canvas").getContext("2d");
    if (context) context.font = `11px ${getComputedStyle(document.documentElement).fontFamily}`;
  }
  const width = context ? context.measureText(text).width : estimateWidth(text);
  widths.set(text, width);
  return width;
};
