import type { Timeline } from "../../model/timeline.ts";
import {
  LIGHT_TIMELINE_PALETTE,
  timelineSvg,
  type TimelinePalette,
  type TimelineSvgOptions,
} from "../../model/timelineSvg.ts";
import type { SvgImage } from "../imageExport.ts";
import { measureLabel } from "./measure.ts";

/**
 * The timeline's image: every lane over the window shown, drawn
 * from the model (timelineSvg.ts) in the colours of the theme the page shows
 * now — light or dark, as the user sees it.
 */
export function timelineImage(
  panel: Element,
  timeline: Timeline,
  options: Omit<TimelineSvgOptions, "palette" | "measure">,
): SvgImage {
  if (timeline.lanes.length === 0) throw new Error("there is nothing drawn in this view yet");
  return timelineSvg(timeline, { ...options, palette: pagePalette(panel), measure: measureLabel });
}

/** The theme's colours where the timeline is drawn (its custom properties, inherited from the page). */
export function pagePalette(panel: Element): TimelinePalette {
  const css = getComputedStyle(panel);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const l = LIGHT_TIMELINE_PALETTE;
  return {
    fg: v("--fg", l.fg),
    muted: v("--muted", l.muted),
    bg: v("--bg", l.bg),
    surface: v("--surface", l.surface),
    // The image's lanes are drawn on its background (bg): labels' backings and halos take it.
    lane: v("--bg", l.bg),
    line: v("--line", l.line),
    accent: v("--accent", l.accent),
    pass: v("--pass", l.pass),
    fail: v("--fail", l.fail),
    bandWindow: v("--band-window", l.bandWindow),
    bandFault: v("--band-fault", l.bandFault),
  };
}
