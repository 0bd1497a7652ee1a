import type { PlacedLabel } from "../../model/timelineLabels.ts";
import { colourOf, CSS_TIMELINE_PALETTE, LABEL_HALO, labelBacking } from "../../model/timelineMarks.ts";
import { ShapeView } from "./Shapes.tsx";

/** A label's halo (timelineMarks' LABEL_HALO) in the lane's background (timeline.css: --lane-bg). */
export const HALO_STYLE = {
  stroke: colourOf(LABEL_HALO.stroke, CSS_TIMELINE_PALETTE),
  strokeWidth: LABEL_HALO.strokeWidth,
  strokeLinejoin: "round",
  paintOrder: "stroke",
} as const;

/** A placed label (timelineLabels.ts), on its backing where it crosses an arc, in a group translated by dx. */
export function Label({ label, dx, testId }: { label: PlacedLabel | undefined; dx: number; testId?: string }) {
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
