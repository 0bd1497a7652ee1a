/**
 * The delivery timeline as one standalone SVG document, for "Export SVG/PNG":
 * every delivery lane of the timeline (not only the lanes the
 * view has scrolled into its page), each with its sub-lanes folded or
 * unfolded as on screen, over the window shown, in the colours of the theme
 * the user sees. It draws what TimelineView draws — bands, the lane's line,
 * retry connectors, the give-up line, the playhead, the marks and their
 * labels laid out by timelineLabels.ts, the recipients' results and their
 * runs — as plain SVG with the colours written on the elements.
 *
 * Pure: a string from the timeline, the window's scale and a palette, tested
 * in Node (the statechart's image is drawn the same way, statechartSvg.ts).
 */
import { formatOffset } from "./time.ts";
import type { Lane, Timeline } from "./timeline.ts";
import { giveUpOf } from "./timelineApplies.ts";
import { drawnMarks, itemsByLane, laneItems, type LaneItems } from "./timelineDrawn.ts";
import type { TimeScale } from "./timelineScale.ts";
import { breakMarks, breakTitle, tickAnchor, ticks } from "./timelineTicks.ts";
import {
  estimateWidth,
  LANE_MID,
  LANE_ROW,
  laneLabels,
  resultRuns,
  SUB_ROW,
  type Measure,
  type PlacedLabel,
} from "./timelineLabels.ts";
import {
  axisBreakShape,
  clampToPlot,
  colourOf,
  connectorShape,
  drawnConnectors,
  giveUpShape,
  LABEL_HALO,
  labelBacking,
  LIGHT_TIMELINE_PALETTE,
  markShapes,
  resultShapes,
  shapeSvg,
  type TimelinePalette,
} from "./timelineMarks.ts";
import { pushAll } from "../../../app/protocol/lists.ts";

export { DARK_TIMELINE_PALETTE, LIGHT_TIMELINE_PALETTE, type TimelinePalette } from "./timelineMarks.ts";

export interface TimelineSvgOptions {
  /** The window shown and the plot's width. */
  readonly scale: TimeScale;
  readonly startMs: number;
  /** The lanes whose recipients' sub-lanes are shown. */
  readonly unfolded: ReadonlySet<string>;
  readonly playheadMs?: number | undefined;
  /** `Delivery timeline · +0:00:00 – +2:05:00`, drawn above. */
  readonly title?: string;
  readonly palette?: TimelinePalette;
  /** Widths of 11 px text (the page measures them; an estimate otherwise). */
  readonly measure?: Measure;
  /** The lanes' items, when the caller has them already (itemsByLane). */
  readonly items?: ReadonlyMap<string, LaneItems>;
}

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const PAD = 8;
const TITLE_H = 28;
const AXIS_H = 22;
/** The labels' column (TimelineView's LABEL_W) and the fold button in it. */
const LABEL_W = 230;
const FOLD_W = 22;

/** The standalone SVG document of the timeline over `scale`'s window, all its lanes, and its size. */
export function timelineSvg(
  timeline: Timeline,
  options: TimelineSvgOptions,
): { readonly svg: string; readonly width: number; readonly height: number } {
  const c = options.palette ?? LIGHT_TIMELINE_PALETTE;
  const measure = options.measure ?? estimateWidth;
  const { scale, startMs } = options;
  const items = options.items ?? itemsByLane(timeline);
  const head = options.title !== undefined ? TITLE_H : 0;
  const lanesH = timeline.lanes.reduce(
    (h, l) => h + LANE_ROW + (options.unfolded.has(l.id) ? l.recipientLanes.length * SUB_ROW : 0),
    0,
  );
  const width = Math.ceil(PAD * 2 + LABEL_W + scale.width + 8);
  const height = Math.ceil(PAD * 2 + head + AXIS_H + lanesH);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${esc(FONT)}" data-view="timeline" data-lanes="${timeline.lanes.length}">`,
    `<rect width="100%" height="100%" fill="${c.bg}" data-background=""/>`,
  ];
  if (options.title !== undefined)
    out.push(
      `<text x="${PAD}" y="${PAD + 14}" font-size="15" font-weight="600" fill="${c.fg}">${esc(options.title)}</text>`,
    );
  // The axis: its ticks over the plot.
  const plotLeft = PAD + LABEL_W + 4;
  out.push(`<g transform="translate(${plotLeft},${PAD + head})" data-axis="">`);
  const axis = ticks(scale, startMs);
  // A compressed axis' breaks: drawn, labelled with the time each hides where it fits.
  for (const b of breakMarks(scale, axis, measure))
    out.push(
      `<g data-break="" data-from-ms="${b.fromMs - startMs}" data-until-ms="${b.toMs - startMs}"><title>${esc(breakTitle(b, startMs))}</title>${shapeSvg(axisBreakShape(b.x1, b.x2), c)}${b.label === undefined ? "" : `<text x="${n((b.x1 + b.x2) / 2)}" y="12" font-size="11" text-anchor="middle" fill="${c.muted}">${esc(b.label)}</text>`}</g>`,
    );
  for (const t of axis)
    out.push(
      `<line x1="${n(t.x)}" x2="${n(t.x)}" y1="16" y2="22" stroke="${c.muted}"/>`,
      `<text x="${n(t.x)}" y="12" font-size="11" text-anchor="${tickAnchor(t.x, scale.width)}" fill="${c.fg}">${esc(t.label)}</text>`,
    );
  out.push("</g>");
  let y = PAD + head + AXIS_H;
  out.push(`<line x1="${PAD}" x2="${width - PAD}" y1="${y}" y2="${y}" stroke="${c.line}"/>`);
  for (const lane of timeline.lanes) {
    const subs = options.unfolded.has(lane.id) ? lane.recipientLanes : [];
    pushAll(out, laneMarkup(lane, laneItems(items, lane.id), subs, y, options, c, measure));
    y += LANE_ROW + subs.length * SUB_ROW;
  }
  out.push("</svg>");
  return { svg: out.join("\n"), width, height };
}

function laneMarkup(
  lane: Lane,
  items: LaneItems,
  subs: Lane["recipientLanes"],
  top: number,
  options: TimelineSvgOptions,
  c: TimelinePalette,
  measure: Measure,
): string[] {
  const { scale, startMs } = options;
  const w = scale.width;
  const mid = LANE_MID;
  const out: string[] = [
    `<g data-lane="${esc(lane.id)}" data-kind-of-lane="${lane.kind}" transform="translate(0,${top})">`,
  ];
  // The lane's label, cut to its column as on screen.
  const labelX = PAD + FOLD_W + 6 + (lane.kind === "dsn" ? 19 : 0);
  const label = `${lane.kind === "dsn" ? "↳ " : ""}${lane.label}`;
  out.push(
    `<text x="${labelX}" y="${mid + 4.5}" font-size="13" fill="${c.fg}" data-label="">${esc(fit(label, LABEL_W - FOLD_W - 16 - (labelX - PAD - FOLD_W), 13, measure))}</text>`,
  );
  out.push(`<g transform="translate(${PAD + LABEL_W + 4},0)">`);
  for (const b of items.bands) {
    const x1 = clampToPlot(scale.x(b.fromMs), w);
    const x2 = clampToPlot(scale.x(b.untilMs ?? scale.toMs), w);
    if (x2 <= 0 || x1 >= w) continue;
    const fault = b.kind === "fault";
    out.push(
      `<rect data-band="${b.kind}" x="${n(x1)}" width="${n(Math.max(1, x2 - x1))}" y="${fault ? LANE_ROW - 5 : 3}" height="${fault ? 4 : LANE_ROW - 9}" fill="${fault ? c.bandFault : c.bandWindow}"><title>${esc(`${b.label}: ${formatOffset(b.fromMs, startMs)} – ${b.untilMs === undefined ? "never ends" : formatOffset(b.untilMs, startMs)}`)}</title></rect>`,
    );
  }
  out.push(`<line x1="0" x2="${n(w)}" y1="${mid}" y2="${mid}" stroke="${c.line}"/>`);
  const arcs = drawnConnectors(items.connectors, scale);
  const giveUp = giveUpOf(lane);
  const giveUpShown = giveUp !== undefined && giveUp >= scale.fromMs && giveUp <= scale.toMs;
  const drawn = drawnMarks(items.marks, scale, new Set([lane.id]));
  const labels = new Map(
    laneLabels(drawn, w, {
      giveUpX: giveUpShown && !items.bounced ? scale.x(giveUp) : undefined,
      measure,
      arcs,
    }).map((l) => [l.id, l]),
  );
  for (const k of arcs)
    out.push(
      `<g data-kind="retry-wait" data-retry="${k.connector.retry}">${shapeSvg(connectorShape(k.x1, k.x2, k.connector.decidedBy), c)}</g>`,
    );
  const playhead = options.playheadMs;
  if (playhead !== undefined && playhead >= scale.fromMs && playhead <= scale.toMs) {
    const px = n(scale.x(playhead));
    out.push(
      `<line x1="${px}" x2="${px}" y1="0" y2="${LANE_ROW}" stroke="${c.accent}" stroke-width="2" data-playhead=""/>`,
    );
  }
  // The arcs' waits, the give-up line and the marks over the playhead: their words read over it, on their halo.
  for (const k of arcs) out.push(labelMarkup(labels.get(`arc:${k.connector.retry}`), c));
  if (giveUpShown)
    out.push(
      `<g data-kind="give-up">${shapeSvg(giveUpShape(scale.x(giveUp)), c)}${labelMarkup(labels.get("give-up"), c)}</g>`,
    );
  for (const { mark: m, x, count, room } of drawn) {
    const attrs = `data-mark-id="${esc(m.id)}" data-kind="${m.kind}" data-time-ms="${m.timeMs - startMs}"${m.attempt !== undefined ? ` data-attempt="${m.attempt}"` : ""}${m.outcome !== undefined ? ` data-outcome="${m.outcome}"` : ""}${count > 1 ? ` data-count="${count}"` : ""}`;
    const title = `<title>${esc(count > 1 ? `${m.summary} (and ${count - 1} more here)` : m.summary)}</title>`;
    const shapes = markShapes(m.kind, m.outcome, { room })
      .map((s) => shapeSvg(s, c))
      .join("");
    out.push(
      `<g ${attrs}>${title}<g transform="translate(${n(x)},0)">${shapes}</g>${labelMarkup(labels.get(m.id), c)}</g>`,
    );
  }
  out.push("</g>");
  const attemptXs = drawn.filter((d) => d.mark.kind === "attempt").map((d) => d.x);
  subs.forEach((r, i) => pushAll(out, subLaneMarkup(r, LANE_ROW + i * SUB_ROW, attemptXs, options, c, measure)));
  const bottom = LANE_ROW + subs.length * SUB_ROW;
  out.push(`<line x1="${PAD}" x2="${PAD + LABEL_W + w + 8}" y1="${bottom}" y2="${bottom}" stroke="${c.line}"/>`);
  out.push("</g>");
  return out;
}

const RECIPIENT_OUTCOME_TEXT: Readonly<Record<string, string>> = {
  accepted: "accepted",
  rejected: "rejected",
  smtp: "SMTP",
  bounced: "bounced",
};

function subLaneMarkup(
  r: Lane["recipientLanes"][number],
  top: number,
  attemptXs: readonly number[],
  options: TimelineSvgOptions,
  c: TimelinePalette,
  measure: Measure,
): string[] {
  const { scale, startMs } = options;
  const w = scale.width;
  const mid = SUB_ROW / 2;
  const outcome = r.outcome?.outcome;
  const word = outcome ? (RECIPIENT_OUTCOME_TEXT[outcome] ?? outcome) : "pending";
  const wordColour =
    outcome === "accepted" ? c.pass : outcome === "rejected" || outcome === "bounced" ? c.fail : c.muted;
  const out: string[] = [
    `<g data-recipient="${esc(r.recipient)}" data-outcome="${outcome ?? ""}" transform="translate(0,${top})">`,
    `<line x1="${PAD}" x2="${PAD + LABEL_W + w + 8}" y1="0" y2="0" stroke="${c.line}" stroke-dasharray="1 2"/>`,
    `<text x="${PAD + 30}" y="${mid + 4}" font-size="12.8" fill="${c.fg}" data-label="">${esc(fit(r.recipient, LABEL_W - 50 - measure(word), 12.8, measure))} <tspan font-size="12" font-weight="600" fill="${wordColour}">${esc(word)}</tspan></text>`,
    `<g transform="translate(${PAD + LABEL_W + 4},0)">`,
    `<line x1="0" x2="${n(w)}" y1="${mid}" y2="${mid}" stroke="${c.line}" stroke-dasharray="2 3"/>`,
  ];
  for (const x of attemptXs)
    out.push(`<line x1="${n(x)}" x2="${n(x)}" y1="3" y2="${SUB_ROW - 3}" stroke="${c.line}"/>`);
  for (const x of r.results) {
    if (x.timeMs < scale.fromMs || x.timeMs > scale.toMs) continue;
    const px = scale.x(x.timeMs);
    out.push(
      `<g data-kind="recipient-result" data-attempt="${x.attempt}" data-status="${esc(x.status)}" data-time-ms="${x.timeMs - startMs}" transform="translate(${n(px)},0)">${resultShapes(
        x.status,
      )
        .map((s) => shapeSvg(s, c))
        .join("")}</g>`,
    );
  }
  for (const run of resultRuns(r, scale, measure)) {
    if (!run.label) continue;
    const backing = run.label.over
      ? `<rect x="-3" y="-7" width="${n(measure(run.text) + 6)}" height="14" rx="3" fill="${c.lane}" fill-opacity="0.9" stroke="${c.line}"/>`
      : "";
    out.push(
      `<g data-kind="result-run" data-status="${esc(run.status)}" data-count="${run.count}" transform="translate(${n(run.label.x)},${mid})">${backing}<text y="4" font-size="11" fill="${c.fg}" ${HALO(c)}>${esc(run.text)}</text></g>`,
    );
  }
  out.push("</g>", "</g>");
  return out;
}

function labelMarkup(label: PlacedLabel | undefined, c: TimelinePalette): string {
  if (!label) return "";
  return `${label.backing ? shapeSvg(labelBacking(label.box), c) : ""}<text x="${n(label.x)}" y="${n(label.y)}" text-anchor="${label.anchor}" font-size="11" fill="${c.fg}" ${HALO(c)} data-label-for="${esc(label.id)}">${esc(label.text)}</text>`;
}

/** A label's halo (timelineMarks' LABEL_HALO) as SVG attributes. */
const HALO = (c: TimelinePalette) =>
  `stroke="${colourOf(LABEL_HALO.stroke, c)}" stroke-width="${LABEL_HALO.strokeWidth}" stroke-linejoin="round" paint-order="stroke"`;

/** `text` cut with an ellipsis to `width` px at `size` px (measure gives 11 px widths). */
function fit(text: string, width: number, size: number, measure: Measure): string {
  const at = (t: string) => (measure(t) * size) / 11;
  if (at(text) <= width) return text;
  let cut = text;
  while (cut.length > 1 && at(`${cut}…`) > width) cut = cut.slice(0, -1);
  return `${cut}…`;
}

function n(v: number): string {
  return String(Math.round(v * 10) / 10);
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
