import type { CSSProperties } from "react";
import { colourOf, CSS_TIMELINE_PALETTE, type Shape } from "../../model/timelineMarks.ts";

/** Each shape's style in the page's theme variables, made once (the marks' shapes are shared, timelineMarks.ts). */
const styles = new WeakMap<Shape, CSSProperties>();

function styleOf(s: Shape): CSSProperties {
  let style = styles.get(s);
  if (!style) {
    const p = CSS_TIMELINE_PALETTE;
    style = {
      fill: s.fill === undefined ? "none" : colourOf(s.fill, p),
      ...(s.fillOpacity !== undefined && { fillOpacity: s.fillOpacity }),
      ...(s.stroke !== undefined && { stroke: colourOf(s.stroke, p) }),
      ...(s.strokeWidth !== undefined && { strokeWidth: s.strokeWidth }),
      ...(s.dash !== undefined && { strokeDasharray: s.dash }),
    };
    styles.set(s, style);
  }
  return style;
}

/** One shape of the timeline (a mark's, an arc, a backing) as an SVG element; its name is its class. */
export function ShapeView({ shape: s }: { readonly shape: Shape }) {
  const common = { className: s.name, style: styleOf(s) };
  switch (s.kind) {
    case "circle":
      return <circle cx={s.cx} cy={s.cy} r={s.r} {...common} />;
    case "rect":
      return <rect x={s.x} y={s.y} width={s.width} height={s.height} rx={s.rx} {...common} />;
    case "line":
      return <line x1={s.x1} x2={s.x2} y1={s.y1} y2={s.y2} {...common} />;
    case "path":
      return <path d={s.d} {...common} />;
  }
}

/** Some shapes, in order. */
export function Shapes({ shapes }: { readonly shapes: readonly Shape[] }) {
  return shapes.map((s, i) => <ShapeView key={i} shape={s} />);
}
