/**
 * Where the delivery timeline writes its words, so that no two overlap: the
 * labels of one lane's marks (attempt numbers, `SMTP fallback`, `bounced`,
 * `DSN`, `stored`, `DNS`, `give-up`) and the text of a recipient's sub-lane
 * (`deferred ×104 (mailbox_full)`). The view and the exported image
 * (timelineSvg.ts) draw from the same layout.
 *
 * A label that finds no free place is left out: its mark's hover text and
 * accessible name say it in full. Pure: widths come from a `measure`
 * function (the page measures with a canvas, Node estimates).
 */
import type { RecipientLane, RetryConnector } from "./timeline.ts";
import { formatDuration } from "./time.ts";
import type { DrawnMark } from "./timelineDrawn.ts";
import type { TimeScale } from "./timelineScale.ts";
import { arcCrosses, LANE_MID, markObstacle, type Box } from "./timelineMarks.ts";

export { LANE_MID, LANE_ROW, SUB_ROW, type Box } from "./timelineMarks.ts";

/** The width of a text in the marks' 11 px font. */
export type Measure = (text: string) => number;

/** An estimate of 11 px system-ui text (wide fonts included), for Node and as a fallback. */
export const estimateWidth: Measure = (text) => text.length * 6.6;

/** One label placed: where its text goes, in the plot's coordinates. */
export interface PlacedLabel {
  /** The mark's id, or `give-up` for the give-up line's label. */
  readonly id: string;
  readonly text: string;
  /** The anchor point of the text (its baseline). */
  readonly x: number;
  readonly y: number;
  readonly anchor: "start" | "middle" | "end";
  readonly box: Box;
  /** It crosses a retry connector's arc: written on a backing (timelineMarks' labelBacking) so that it reads. */
  readonly backing: boolean;
}

/** How far a text's box reaches above and below its baseline (11 px, with the font's ascent and descent). */
const ASCENT = 10.5;
const DESCENT = 3;
/** The baseline of a number written at a lane row's top (over a receiver's triangle, timelineMarks.ts). */
const TOP_BASELINE = 9;
/** Room kept between two labels. */
const GAP = 3;

function textBox(x: number, y: number, anchor: PlacedLabel["anchor"], width: number): Box {
  const x0 = anchor === "start" ? x : anchor === "end" ? x - width : x - width / 2;
  return { x0, x1: x0 + width, y0: y - ASCENT, y1: y + DESCENT };
}

const overlaps = (a: Box, b: Box, gap = 0) => a.x0 < b.x1 + gap && b.x0 < a.x1 + gap && a.y0 < b.y1 && b.y0 < a.y1;

/** The text drawn beside or under a mark. */
export function markLabelText(d: DrawnMark): string {
  const m = d.mark;
  switch (m.kind) {
    case "attempt":
      return d.count > 1 ? `${m.label}+` : m.label;
    case "bounce":
      return "bounced";
    case "dsn":
      return "DSN";
    case "dns":
      return "DNS";
    default:
      return m.label;
  }
}

/** The box a mark's own shape takes (labels keep off it): its shapes' box (timelineMarks.ts) where it is drawn. */
function shapeBox(d: DrawnMark): Box | undefined {
  const box = markObstacle(d.mark.kind);
  return box && { x0: box.x0 + d.x, x1: box.x1 + d.x, y0: box.y0, y1: box.y1 };
}

type Candidate = readonly [x: number, y: number, anchor: PlacedLabel["anchor"]];

/**
 * Where a mark's label may go, the preferred place first, in stages: a stage's places are tried (those
 * clear of the arcs first) only where none of the stage before is free. `underTaken`: a mark's shape (a DSN's
 * box) sits under an attempt's dot, where its number goes. `last`: the lane's last attempt, with marks after
 * it; `pastLast`: one of those marks.
 */
function candidates(d: DrawnMark, width: number, underTaken = false, last = false, pastLast = false): Candidate[][] {
  const x = d.x;
  // Beside the mark: to its right, or to its left near the plot's right edge; the other side next. A mark after the
  // lane's last attempt (`pastLast`): to its right wherever that fits in the plot, clear of the last attempt's number.
  const beside = (gap: number, y: number): Candidate[] => {
    const right: Candidate = [x + gap, y, "start"];
    const left: Candidate = [x - gap, y, "end"];
    return x > width - 90 && !pastLast ? [left, right] : [right, left];
  };
  switch (d.mark.kind) {
    case "attempt": {
      // Centred under the dot (kept inside the plot near its edges), else starting or ending at its middle or up
      // to 4 px on (still under the dot, 5.5 px wide each side, when a neighbour's number is close); a pixel
      // lower when the dot is under a hand-off's diamond (an attempt that ended in the hand-off), clear of the
      // diamond's tip. Places outside the plot are not free.
      const at = (y: number): Candidate[] => [
        ...(x < 8 ? [[x - 4, y, "start"] as const] : x > width - 8 ? [[x + 4, y, "end"] as const] : []),
        [x, y, "middle"],
        ...[0, 2, 4].flatMap((k): Candidate[] => [
          [x + k, y, "start"],
          [x - k, y, "end"],
        ]),
      ];
      // The lane's last attempt, a few pixels before the bounce and its DSN's box at the lane's end (`last`): where
      // no place under its dot is free, its number may end up to 8 px before it, to its left, rather than take the
      // place over the dot from the bounce's word (no number is written after it: it still reads as the last).
      const left = (y: number) => [6, 8].map((k): Candidate => [x - k, y, "end"]);
      // When a mark's shape takes the place under the dot (m1's first attempt of teach-mixed-recipient-results,
      // over the DSN to alice's box), over the dot, or at the row's top when a receiver's triangle is over it.
      return [
        [...at(LANE_MID + 18), ...at(LANE_MID + 19)],
        last ? [...left(LANE_MID + 18), ...left(LANE_MID + 19)] : [],
        underTaken ? [...at(LANE_MID - 9), ...at(TOP_BASELINE)] : [],
      ];
    }
    case "handoff":
    case "bounce":
      return [beside(10, LANE_MID - 12)];
    case "dsn":
      return [beside(10, LANE_MID + 21)];
    case "ruled-out":
      return [beside(11, LANE_MID - 12)];
    case "receiver":
      return [beside(7, LANE_MID - 9)];
    case "dns":
      return [
        [
          [x + 3, 10, "start"],
          [x - 3, 10, "end"],
        ],
      ];
  }
}

/** A wait as an arc says it: to the second under a minute, else to the minute (`45 s`, `52 min`, `1 h 2 min`). */
export function waitText(ms: number): string {
  return formatDuration(ms < 60_000 ? Math.round(ms / 1000) * 1000 : Math.round(ms / 60_000) * 60_000);
}

/**
 * What a retry connector's arc says of the wait it spans, from its timer.set: the wait
 * and what set it, the longest first — `Retry-After 2 min` (or `retry_after 2 min`, a recipient's) where a
 * lower bound decided it, `+52 min (1 h cap)` where the schedule's delay had reached its cap (RETRY-2), else
 * `+4 min`; then the wait alone, for a narrower arc.
 */
export function connectorTexts(c: RetryConnector): string[] {
  const wait = `+${waitText(c.toMs - c.fromMs)}`;
  if (c.decidedBy === "retry-after" && c.lowerBoundDelayMs !== undefined)
    return [
      `${c.lowerBoundFrom === "retry_after" ? "retry_after" : "Retry-After"} ${waitText(c.lowerBoundDelayMs)}`,
      wait,
    ];
  if (c.capMs !== undefined && c.decidedBy !== "attempt-end") return [`${wait} (${waitText(c.capMs)} cap)`, wait];
  return [wait];
}

/** Marks whose label is placed first: the few events of a lane before its many attempt numbers. */
const PRIORITY: Readonly<Record<string, number>> = {
  bounce: 0,
  handoff: 1,
  "ruled-out": 2,
  dsn: 3,
  receiver: 4,
  dns: 5,
  attempt: 6,
};

/**
 * The labels of one lane's drawn marks (and of its give-up line at `giveUpX`,
 * when it has one of its own), placed so that no two overlap each other nor
 * another mark's shape, inside the plot [-4, width + 4]. Those that find no
 * place are not in the result. A label goes where it crosses none of the
 * retry connectors' `arcs` when one of its places allows it, else where it
 * crosses some, on a backing (`backing`).
 */
export function laneLabels(
  drawn: readonly DrawnMark[],
  width: number,
  options: {
    readonly giveUpX?: number | undefined;
    readonly measure?: Measure;
    /** The connectors' arcs drawn on the lane (drawnConnectors): labels keep off them; each says its wait. */
    readonly arcs?: readonly { readonly x1: number; readonly x2: number; readonly connector?: RetryConnector }[];
  } = {},
): PlacedLabel[] {
  const measure = options.measure ?? estimateWidth;
  const placed: PlacedLabel[] = [];
  // Boxes taken, by 32 px column: a label is checked against its columns' boxes only (a lane can have
  // hundreds of marks in view, and the labels are laid out again at each pan or zoom).
  const taken = new Map<number, { box: Box; gap: number }[]>();
  const columns = (box: Box) => {
    const out: number[] = [];
    for (let c = Math.floor((box.x0 - GAP) / 32); c <= Math.floor((box.x1 + GAP) / 32); c++) out.push(c);
    return out;
  };
  const take = (box: Box, gap: number) => {
    for (const c of columns(box)) {
      const list = taken.get(c);
      if (list) list.push({ box, gap });
      else taken.set(c, [{ box, gap }]);
    }
  };
  for (const d of drawn) {
    const box = shapeBox(d);
    if (box) take(box, 0);
  }
  const free = (box: Box) =>
    box.x0 >= -4.5 &&
    box.x1 <= width + 4.5 &&
    !columns(box).some((c) => taken.get(c)?.some((t) => overlaps(t.box, box, t.gap)));
  // The arcs, by the same columns.
  const arcs = new Map<number, { x1: number; x2: number }[]>();
  for (const a of options.arcs ?? [])
    for (const c of columns({ x0: a.x1, x1: a.x2, y0: 0, y1: 0 })) {
      const list = arcs.get(c);
      if (list) list.push(a);
      else arcs.set(c, [a]);
    }
  const crossesArc = (box: Box) => columns(box).some((c) => arcs.get(c)?.some((a) => arcCrosses(a.x1, a.x2, box)));
  const find = (text: string, options: readonly Candidate[]) => {
    const w = measure(text);
    const boxes = options.map(([x, y, anchor]) => ({ x, y, anchor, box: textBox(x, y, anchor, w) }));
    const clear = boxes.find((b) => free(b.box) && !crossesArc(b.box));
    const found = clear ?? boxes.find((b) => free(b.box));
    return found && { text, ...found, backing: clear === undefined };
  };
  const place = (id: string, texts: readonly string[], stages: readonly (readonly Candidate[])[]) => {
    // The first of the texts that finds a place (a merged attempt's `1+`, else `1`), in the first stage that has one.
    for (const text of texts) {
      const found = stages.reduce<ReturnType<typeof find>>((f, options) => f ?? find(text, options), undefined);
      if (!found) continue;
      placed.push({ id, ...found });
      take(found.box, GAP);
      return;
    }
  };
  // Whether a mark's shape sits where an attempt's number goes under its dot.
  const shapes = drawn.flatMap((d) => shapeBox(d) ?? []);
  const under = new Set(
    drawn.filter((d) => {
      if (d.mark.kind !== "attempt") return false;
      const box = textBox(d.x, LANE_MID + 18, "middle", measure(d.mark.label));
      return shapes.some((s) => overlaps(s, box));
    }),
  );
  if (options.giveUpX !== undefined) {
    const g = options.giveUpX;
    place(
      "give-up",
      ["give-up"],
      [
        [
          [g - 4, 11, "end"],
          [g + 4, 11, "start"],
        ],
      ],
    );
  }
  // The attempt numbers in time order, but the last one drawn second, right after the first: the numbers at both
  // ends of what is shown say how many attempts lie between (rate-limited-then-down's 127, beside the DSN's word and
  // the bounce's at the lane's end, was left out for 126 when it came last).
  const attempts = drawn.filter((d) => d.mark.kind === "attempt");
  const lastAttempt = attempts.at(-1);
  const rank = (d: DrawnMark) => (d === attempts[0] ? 0 : d === lastAttempt ? 1 : 2);
  // The marks after the last attempt (the lane's end: bounced, DSN) write their words to their right where they fit,
  // away from the last attempt's number; and that number may then end a few pixels before its dot (`candidates`).
  const afterLast = (d: DrawnMark) => lastAttempt !== undefined && d.mark.timeMs > lastAttempt.mark.timeMs;
  const endWords = drawn.some(afterLast);
  const order = drawn
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) => (PRIORITY[a.d.mark.kind] ?? 9) - (PRIORITY[b.d.mark.kind] ?? 9) || rank(a.d) - rank(b.d) || a.i - b.i,
    );
  // The last attempt's number once placed (it is placed before the other attempts': `rank`).
  let lastNumber: PlacedLabel | undefined;
  for (const { d } of order) {
    const text = markLabelText(d);
    // A merged attempt's `1+` is written `1` where only that fits (its hover text says how many are there).
    const texts = d.mark.kind === "attempt" && text !== d.mark.label ? [text, d.mark.label] : [text];
    // Numbers read in order to the last: none is written right of where the last attempt's number starts (at the
    // lane's end a number pushed off its dot's place by the DSN's box would sit under or over the last dots).
    const last = d.mark.kind === "attempt" && d !== lastAttempt ? lastNumber : undefined;
    const places = candidates(d, width, under.has(d), d === lastAttempt && endWords, afterLast(d));
    const textWidth = measure(text);
    place(
      d.mark.id,
      texts,
      last === undefined
        ? places
        : places.map((stage) =>
            stage.filter(([x, , anchor]) => textBox(x, 0, anchor, textWidth).x1 + GAP <= last.box.x0),
          ),
    );
    if (d === lastAttempt) lastNumber = placed.find((p) => p.id === d.mark.id);
  }
  // Last, each arc's wait over its top, centred, where it fits inside the arc's span and meets no other label.
  for (const a of options.arcs ?? []) {
    if (a.connector === undefined) continue;
    const mid = (a.x1 + a.x2) / 2;
    const texts = connectorTexts(a.connector).filter((t) => measure(t) + 6 <= a.x2 - a.x1);
    if (texts.length > 0) place(`arc:${a.connector.retry}`, texts, [[[mid, ARC_BASELINE, "middle"]]]);
  }
  return placed;
}

/** The baseline of an arc's words: over its peak (timelineMarks' arcs peak 14 px from the row's top). */
const ARC_BASELINE = 10;

// ---------------------------------------------------------------- a recipient's sub-lane

/** Consecutive results of one recipient with the same answer, drawn as one run. */
export interface ResultRun {
  readonly status: string;
  readonly problem: string | undefined;
  readonly count: number;
  readonly firstAttempt: number;
  readonly lastAttempt: number;
  /** Where its first and last results are drawn. */
  readonly fromX: number;
  readonly toX: number;
  /** `deferred`, `deferred ×104 (mailbox_full)`, `rejected (recipient_not_found)`. */
  readonly text: string;
  /**
   * Where its text goes: after its last result when there is room before the
   * next run, else over the run itself on a backing (a long run of deferrals
   * drawn as a bar), else nowhere (`undefined`: the sub-lane's hover text has it).
   */
  readonly label: { readonly x: number; readonly over: boolean } | undefined;
}

/** The words of a run of results. */
export function runText(status: string, problem: string | undefined, count: number): string {
  return `${status}${count > 1 ? ` ×${count}` : ""}${problem ? ` (${problem})` : ""}`;
}

/**
 * A recipient's results in the window, grouped into runs of the same answer,
 * each with its text placed where it fits. A recipient deferred at every
 * attempt is one run, `deferred ×N (problem)`, written over its bar.
 */
export function resultRuns(recipient: RecipientLane, scale: TimeScale, measure: Measure = estimateWidth): ResultRun[] {
  const width = scale.width;
  const shown = recipient.results.filter((r) => r.timeMs >= scale.fromMs && r.timeMs <= scale.toMs);
  type Builder = { status: string; problem: string | undefined; count: number; first: number; last: number };
  const groups: (Builder & { fromX: number; toX: number })[] = [];
  for (const r of shown) {
    const x = scale.x(r.timeMs);
    const g = groups.at(-1);
    if (g && g.status === r.status && g.problem === r.problem) {
      g.count += 1;
      g.last = r.attempt;
      g.toX = x;
    } else
      groups.push({
        status: r.status,
        problem: r.problem,
        count: 1,
        first: r.attempt,
        last: r.attempt,
        fromX: x,
        toX: x,
      });
  }
  return groups.map((g, i): ResultRun => {
    const text = runText(g.status, g.problem, g.count);
    const w = measure(text);
    const next = groups[i + 1];
    const room = (next ? next.fromX - 4 : width + 4) - (g.toX + 7);
    const span = g.toX - g.fromX;
    const label =
      room >= w + GAP ? { x: g.toX + 7, over: false } : span >= w + 16 ? { x: g.fromX + 8, over: true } : undefined;
    return {
      status: g.status,
      problem: g.problem,
      count: g.count,
      firstAttempt: g.first,
      lastAttempt: g.last,
      fromX: g.fromX,
      toX: g.toX,
      text,
      label,
    };
  });
}
