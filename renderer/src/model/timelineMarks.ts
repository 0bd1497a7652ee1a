/**
 * How the delivery timeline's marks look, said once: each mark (an attempt's
 * dot, the SMTP hand-off's diamond, the bounce's cross, the DSN's box, a
 * receiver-side event's triangle, a DNS change's line), a retry connector's
 * arc, the give-up line, a recipient's result and a label's backing, as shape
 * descriptors — circle, rect, line or path, with their place, size and the
 * colour role they are painted in. The view (TimelineView) draws them as
 * React elements in the page's theme variables, the exported image
 * (timelineSvg.ts) writes them as SVG in a palette's colours, and the label
 * layout (timelineLabels.ts) keeps labels off their boxes: a change to how a
 * mark looks is made here only.
 *
 * Coordinates are a lane row's (y from the row's top, 56 px tall, marks on
 * its middle line), x relative to the mark's own x (connectors: absolute x).
 */
import { OUTCOME_COLOUR, type AttemptOutcome, type MarkKind, type RetryConnector } from "./timeline.ts";
import { connectorsInWindow } from "./timelineDrawn.ts";
import type { TimeScale } from "./timelineScale.ts";
import { maxOf, minOf } from "../../../app/protocol/lists.ts";

/** A lane row's height and the middle line the marks sit on (TimelineView's ROW). */
export const LANE_ROW = 56;
export const LANE_MID = LANE_ROW / 2;
/** A recipient's sub-lane (TimelineView's SUB). */
export const SUB_ROW = 24;

/** A box in the lane's plot coordinates (x from the plot's left, y from the lane's top). */
export interface Box {
  readonly x0: number;
  readonly x1: number;
  readonly y0: number;
  readonly y1: number;
}

/** The colours of the drawing: the page's theme variables (App.css, timeline.css). */
export interface TimelinePalette {
  readonly fg: string;
  readonly muted: string;
  readonly bg: string;
  readonly surface: string;
  /**
   * A lane's background, which a label's backing and halo take: on the page the lane's own (the panel's
   * surface, tinted when the lane is selected), in the exported image the image's background.
   */
  readonly lane: string;
  readonly line: string;
  readonly accent: string;
  readonly pass: string;
  readonly fail: string;
  /** The fallback window's and a fault's bands. */
  readonly bandWindow: string;
  readonly bandFault: string;
}

/** The light theme's colours. */
export const LIGHT_TIMELINE_PALETTE: TimelinePalette = {
  fg: "#1d2330",
  muted: "#586174",
  bg: "#f6f7f9",
  surface: "#ffffff",
  lane: "#f6f7f9",
  line: "#d9dde5",
  accent: "#2f5fd0",
  pass: "#1f7a3a",
  fail: "#b3261e",
  bandWindow: "rgba(31, 122, 58, 0.13)",
  bandFault: "rgba(179, 38, 30, 0.35)",
};

/** The dark theme's colours. */
export const DARK_TIMELINE_PALETTE: TimelinePalette = {
  fg: "#e3e6ec",
  muted: "#a3abbb",
  bg: "#15181e",
  surface: "#1d2129",
  lane: "#15181e",
  line: "#343a46",
  accent: "#8fb0ff",
  pass: "#7ed69a",
  fail: "#ff9b92",
  bandWindow: "rgba(126, 214, 154, 0.16)",
  bandFault: "rgba(255, 155, 146, 0.45)",
};

/** The page's theme variables: the view paints in them, so it follows the theme the user sees. */
export const CSS_TIMELINE_PALETTE: TimelinePalette = {
  fg: "var(--fg)",
  muted: "var(--muted)",
  bg: "var(--bg)",
  surface: "var(--surface)",
  lane: "var(--lane-bg)",
  line: "var(--line)",
  accent: "var(--accent)",
  pass: "var(--pass)",
  fail: "var(--fail)",
  bandWindow: "var(--band-window)",
  bandFault: "var(--band-fault)",
};

/** A colour by its role: a palette's (it follows the theme), a DNS change's, a Retry-After's, an outcome's. */
export type ColourRole = keyof TimelinePalette | "dns" | "retry-after" | AttemptOutcome;

const DNS_COLOUR = "#0e7490";
const RETRY_AFTER_COLOUR = "#8a5cf6";

/** The colour a role has in `palette` (the outcomes', the DNS change's and the Retry-After's are the same in both themes). */
export function colourOf(role: ColourRole, palette: TimelinePalette): string {
  if (role in palette) return palette[role as keyof TimelinePalette];
  if (role === "dns") return DNS_COLOUR;
  if (role === "retry-after") return RETRY_AFTER_COLOUR;
  return OUTCOME_COLOUR[role] ?? "gray";
}

interface Paint {
  /** No fill when undefined. */
  readonly fill?: ColourRole;
  readonly fillOpacity?: number;
  readonly stroke?: ColourRole;
  readonly strokeWidth?: number;
  readonly dash?: string;
  /** What the shape is (the view's class name, the image's `data-shape`): `handoff-shape`, `connector retry-after`. */
  readonly name?: string;
}

export type Shape =
  | (Paint & { readonly kind: "circle"; readonly cx: number; readonly cy: number; readonly r: number })
  | (Paint & {
      readonly kind: "rect";
      readonly x: number;
      readonly y: number;
      readonly width: number;
      readonly height: number;
      readonly rx?: number;
    })
  | (Paint & {
      readonly kind: "line";
      readonly x1: number;
      readonly y1: number;
      readonly x2: number;
      readonly y2: number;
    })
  | (Paint & { readonly kind: "path"; readonly d: string; readonly box: Box });

/** A path of straight segments (each sub-path from its first point), with its box. */
function polyPath(
  subpaths: readonly (readonly (readonly [number, number])[])[],
  closed: boolean,
): { d: string; box: Box } {
  const points = subpaths.flat();
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return {
    d: subpaths.map((s) => `M${s.map(([x, y]) => `${x},${y}`).join(" L")}${closed ? " Z" : ""}`).join(" "),
    box: { x0: minOf(xs), x1: maxOf(xs), y0: minOf(ys), y1: maxOf(ys) },
  };
}

const M = LANE_MID;

/** The marks' shapes other than an attempt's, made once. */
const MARK_SHAPES: Readonly<Record<Exclude<MarkKind, "attempt">, readonly Shape[]>> = {
  // ◆ on the line.
  handoff: [
    {
      kind: "path",
      ...polyPath(
        [
          [
            [0, M - 8],
            [8, M],
            [0, M + 8],
            [-8, M],
          ],
        ],
        true,
      ),
      fill: "fg",
      name: "handoff-shape",
    },
  ],
  // ✕ on the line.
  bounce: [
    {
      kind: "path",
      ...polyPath(
        [
          [
            [-6, M - 6],
            [6, M + 6],
          ],
          [
            [6, M - 6],
            [-6, M + 6],
          ],
        ],
        false,
      ),
      stroke: "fail",
      strokeWidth: 3,
      name: "bounce-shape",
    },
  ],
  // An envelope under the line.
  dsn: [
    { kind: "rect", x: -7, y: M + 13, width: 14, height: 9, rx: 2, fill: "surface", stroke: "fail", name: "dsn-shape" },
  ],
  // A ring around the dot of the attempt whose answer ruled SMTP fallback out.
  "ruled-out": [{ kind: "circle", cx: 0, cy: M, r: 8.5, stroke: "fail", strokeWidth: 1.5, name: "ruled-out-shape" }],
  // A dashed line across the row.
  dns: [{ kind: "line", x1: 0, x2: 0, y1: 2, y2: LANE_ROW - 2, stroke: "dns", dash: "2 2", name: "dns-line" }],
  // ▼ over the line.
  receiver: [
    {
      kind: "path",
      ...polyPath(
        [
          [
            [-5, M - 16],
            [5, M - 16],
            [0, M - 8],
          ],
        ],
        true,
      ),
      fill: "pass",
      name: "receiver-shape",
    },
  ],
};

const ATTEMPT_SHAPES = new Map<string, readonly Shape[]>();

/**
 * An attempt dot's radius with `room` px to the nearest attempt on its lane: 5.5 where there is room, smaller
 * where attempts crowd (a 5-day run's hourly retries), so that each dot stays apart from the next.
 */
export function attemptRadius(room: number): number {
  return room >= 13 ? 5.5 : room >= 9.5 ? 4 : room >= 7.5 ? 3 : 2.5;
}

/** An attempt's dot: coloured by how it ended, larger when selected, smaller when attempts crowd. */
function attemptShapes(outcome: AttemptOutcome | undefined, selected: boolean, room: number): readonly Shape[] {
  const r = selected ? 7 : attemptRadius(room);
  const key = `${outcome ?? ""}|${r}`;
  let shapes = ATTEMPT_SHAPES.get(key);
  if (!shapes) {
    shapes = [{ kind: "circle", cx: 0, cy: M, r, fill: outcome ?? "muted", name: "attempt-shape" }];
    ATTEMPT_SHAPES.set(key, shapes);
  }
  return shapes;
}

/**
 * The shapes of a mark drawn at x = 0 of a lane row (the same array for the same mark kind, outcome, selection
 * and size); `room`: an attempt's px to the nearest attempt on its lane (DrawnMark's).
 */
export function markShapes(
  kind: MarkKind,
  outcome?: AttemptOutcome,
  options: { readonly selected?: boolean; readonly room?: number | undefined } = {},
): readonly Shape[] {
  return kind === "attempt"
    ? attemptShapes(outcome, options.selected === true, options.room ?? Infinity)
    : MARK_SHAPES[kind];
}

/** The box of some shapes. */
export function shapesBox(shapes: readonly Shape[]): Box | undefined {
  let box: Box | undefined;
  for (const s of shapes) {
    const b: Box =
      s.kind === "circle"
        ? { x0: s.cx - s.r, x1: s.cx + s.r, y0: s.cy - s.r, y1: s.cy + s.r }
        : s.kind === "rect"
          ? { x0: s.x, x1: s.x + s.width, y0: s.y, y1: s.y + s.height }
          : s.kind === "line"
            ? { x0: Math.min(s.x1, s.x2), x1: Math.max(s.x1, s.x2), y0: Math.min(s.y1, s.y2), y1: Math.max(s.y1, s.y2) }
            : s.box;
    box = box
      ? {
          x0: Math.min(box.x0, b.x0),
          x1: Math.max(box.x1, b.x1),
          y0: Math.min(box.y0, b.y0),
          y1: Math.max(box.y1, b.y1),
        }
      : b;
  }
  return box;
}

/**
 * The box, at x = 0, that other marks' labels keep off; none for an
 * attempt's dot (on the middle line, under no label), the ring around it
 * where SMTP was ruled out (it hugs the dot) and a DNS change's line (it
 * crosses the whole row).
 */
export function markObstacle(kind: MarkKind): Box | undefined {
  return kind === "attempt" || kind === "dns" || kind === "ruled-out" ? undefined : shapesBox(MARK_SHAPES[kind]);
}

// ---------------------------------------------------------------- connectors

/** A retry connector as drawn: its arc's ends in the plot's pixels. */
export interface DrawnConnector {
  readonly connector: RetryConnector;
  readonly x1: number;
  readonly x2: number;
}

/** Where the arcs leave and reach the marks (above the dots), and how high their control point is. */
const ARC_FOOT = M - 8;
const ARC_CONTROL = M - 20;

/** `x` kept within a plot `width` wide and its 4 px margins, [-4, width + 4]: bands and arcs that run past it. */
export const clampToPlot = (x: number, width: number): number => Math.min(width + 4, Math.max(-4, x));

/**
 * The connectors drawn over `scale`'s window: each arc's ends kept within
 * the plot [-4, width + 4], those under 3 px left out.
 */
export function drawnConnectors(connectors: readonly RetryConnector[], scale: TimeScale): DrawnConnector[] {
  const out: DrawnConnector[] = [];
  for (const c of connectorsInWindow(connectors, scale.fromMs, scale.toMs)) {
    const x1 = clampToPlot(scale.x(c.fromMs), scale.width);
    const x2 = clampToPlot(scale.x(c.toMs), scale.width);
    if (x2 - x1 >= 3) out.push({ connector: c, x1, x2 });
  }
  return out;
}

/** A connector's arc from the attempt at x1 to the retry at x2: dashed when a Retry-After decided the wait. */
export function connectorShape(x1: number, x2: number, decidedBy: string): Shape {
  const after = decidedBy === "retry-after";
  return {
    kind: "path",
    d: `M${r1(x1)},${ARC_FOOT} Q${r1((x1 + x2) / 2)},${ARC_CONTROL} ${r1(x2)},${ARC_FOOT}`,
    box: { x0: x1, x1: x2, y0: (ARC_FOOT + ARC_CONTROL) / 2, y1: ARC_FOOT },
    stroke: after ? "retry-after" : "muted",
    ...(after && { dash: "3 2" }),
    name: `connector ${decidedBy}`,
  };
}

/**
 * Whether the arc from x1 to x2 (stroke included) crosses `box`. The arc is
 * a quadratic curve whose x moves evenly with its parameter t, and whose
 * height over its feet is 24·t·(1 − t) (the peak, 6 px, halfway).
 */
export function arcCrosses(x1: number, x2: number, box: Box): boolean {
  const a = Math.max(x1, box.x0);
  const b = Math.min(x2, box.x1);
  if (a > b || x2 <= x1) return false;
  const ta = (a - x1) / (x2 - x1);
  const tb = (b - x1) / (x2 - x1);
  const lift = (t: number) => 2 * (ARC_FOOT - ARC_CONTROL) * t * (1 - t);
  const high = ta <= 0.5 && tb >= 0.5 ? lift(0.5) : Math.max(lift(ta), lift(tb));
  const low = Math.min(lift(ta), lift(tb));
  // y grows downwards: the arc spans [foot − high, foot − low], a pixel wider for its stroke.
  return ARC_FOOT - high - 1 < box.y1 && box.y0 < ARC_FOOT - low + 1;
}

// ---------------------------------------------------------------- the axis

/**
 * A break of a compressed axis (timelineScale.ts), drawn at the foot of the axis' 22-px row between x1 and
 * x2: two short slashes at its middle, the sign of an axis cut short.
 */
export function axisBreakShape(x1: number, x2: number): Shape {
  const m = (x1 + x2) / 2;
  return {
    kind: "path",
    d: `M${r1(m - 3)},21 L${r1(m - 1)},14 M${r1(m + 1)},21 L${r1(m + 3)},14`,
    box: { x0: m - 3, x1: m + 3, y0: 14, y1: 21 },
    stroke: "muted",
    strokeWidth: 1.2,
    name: "axis-break",
  };
}

// ---------------------------------------------------------------- the rest of a lane

/** The give-up line at x, across the row. */
export function giveUpShape(x: number): Shape {
  return {
    kind: "line",
    x1: x,
    x2: x,
    y1: 2,
    y2: LANE_ROW - 2,
    stroke: "fg",
    strokeWidth: 2,
    dash: "4 2",
    name: "give-up",
  };
}

/** A recipient's result at an attempt, at x = 0 on its sub-lane's middle line: a square in the result's colour. */
export function resultShapes(status: string): readonly Shape[] {
  return [
    {
      kind: "rect",
      x: -4,
      y: SUB_ROW / 2 - 4,
      width: 8,
      height: 8,
      rx: 1,
      fill: (status in OUTCOME_COLOUR ? status : "muted") as ColourRole,
    },
  ];
}

/**
 * The backing a label is written on where it crosses a connector's arc: the lane's own background (tinted
 * when the lane is selected), so the words read and the backing does not stand out.
 */
export function labelBacking(box: Box): Shape {
  return {
    kind: "rect",
    x: box.x0 - 2,
    y: box.y0 + 1,
    width: box.x1 - box.x0 + 4,
    height: box.y1 - box.y0 - 1,
    rx: 2,
    fill: "lane",
    fillOpacity: 0.9,
    name: "label-backing",
  };
}

/**
 * A label's halo: its text's outline painted first (`paint-order: stroke`) in the lane's background, so
 * that the playhead, the give-up line or an arc crossing the words does not cut them.
 */
export const LABEL_HALO = { stroke: "lane", strokeWidth: 3 } as const satisfies Paint;

// ---------------------------------------------------------------- as SVG text

const r1 = (v: number) => Math.round(v * 10) / 10;

/** A shape as an SVG element in `palette`'s colours (the exported image). */
export function shapeSvg(s: Shape, palette: TimelinePalette): string {
  const paint = [
    `fill="${s.fill === undefined ? "none" : colourOf(s.fill, palette)}"`,
    s.fillOpacity !== undefined ? `fill-opacity="${s.fillOpacity}"` : "",
    s.stroke !== undefined ? `stroke="${colourOf(s.stroke, palette)}"` : "",
    s.strokeWidth !== undefined ? `stroke-width="${s.strokeWidth}"` : "",
    s.dash !== undefined ? `stroke-dasharray="${s.dash}"` : "",
    s.name !== undefined ? `data-shape="${s.name}"` : "",
  ]
    .filter((a) => a !== "")
    .join(" ");
  switch (s.kind) {
    case "circle":
      return `<circle cx="${r1(s.cx)}" cy="${r1(s.cy)}" r="${s.r}" ${paint}/>`;
    case "rect":
      return `<rect x="${r1(s.x)}" y="${r1(s.y)}" width="${r1(s.width)}" height="${r1(s.height)}"${s.rx !== undefined ? ` rx="${s.rx}"` : ""} ${paint}/>`;
    case "line":
      return `<line x1="${r1(s.x1)}" x2="${r1(s.x2)}" y1="${r1(s.y1)}" y2="${r1(s.y2)}" ${paint}/>`;
    case "path":
      return `<path d="${s.d}" ${paint}/>`;
  }
}
