/**
 * The delivery machine as one standalone SVG document, drawn from the same
 * ELK layout the canvas shows (statechartLayout.ts): each state's box (a
 * compound state holding its children, a final state with a double border,
 * the initial markers as dots), each transition along its routed line with
 * its label (name, row and fire count, trigger), the active state and the
 * transition just taken in the accent colour, the transitions never taken
 * faded — what the @xyflow/react canvas draws in HTML and SVG, as plain SVG
 * with its styles written on the elements, for "Export SVG/PNG".
 *
 * Pure: a string from the layout and the run's state, tested in Node.
 */
import type { LaidEdge, StatechartLayout } from "./statechartLayout.ts";
import { pushAll } from "../../../app/protocol/lists.ts";

/** The colours of the drawing (the page's theme variables). */
export interface StatechartPalette {
  readonly fg: string;
  readonly muted: string;
  readonly bg: string;
  readonly surface: string;
  readonly accent: string;
  readonly accentFg: string;
  readonly accentSoft: string;
}

/** The light theme's colours (App.css :root). */
export const LIGHT_PALETTE: StatechartPalette = {
  fg: "#1d2330",
  muted: "#586174",
  bg: "#f6f7f9",
  surface: "#ffffff",
  accent: "#2f5fd0",
  accentFg: "#ffffff",
  accentSoft: "#e7edfb",
};

export interface StatechartSvgOptions {
  /** The active leaf and its ancestors (activeStates). */
  readonly active: readonly string[];
  /** Fire counts by transition id. */
  readonly counts: ReadonlyMap<string, number>;
  /** The transition just taken. */
  readonly last?: string | undefined;
  /** A title drawn above the machine: `Delivery machine — m1 → bob@b.example`. */
  readonly title?: string;
  readonly palette?: StatechartPalette;
}

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const PAD = 16;
const TITLE_H = 28;

/** The standalone SVG document and its size. */
export function statechartSvg(
  layout: StatechartLayout,
  options: StatechartSvgOptions,
): { readonly svg: string; readonly width: number; readonly height: number } {
  const c = options.palette ?? LIGHT_PALETTE;
  const top = options.title !== undefined ? TITLE_H : 0;
  const width = Math.ceil(layout.width + PAD * 2);
  const height = Math.ceil(layout.height + PAD * 2 + top);
  const leaf = options.active.at(-1);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${esc(FONT)}" data-view="statechart">`,
    `<rect width="100%" height="100%" fill="${c.bg}"/>`,
    `<defs><marker id="sc-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${c.muted}"/></marker>` +
      `<marker id="sc-arrow-last" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${c.accent}"/></marker></defs>`,
  );
  if (options.title !== undefined) {
    out.push(
      `<text x="${PAD}" y="${PAD + 6}" font-size="15" font-weight="600" fill="${c.fg}">${esc(options.title)}</text>`,
    );
  }
  out.push(`<g transform="translate(${PAD},${PAD + top})">`);
  // States, outermost first (a compound state's box behind its children).
  const depth = (id: string) => id.split(".").length;
  const states = [...layout.states].sort(
    (a, b) => Number(b.compound) - Number(a.compound) || depth(a.id) - depth(b.id),
  );
  for (const s of states) {
    const isLeaf = s.id === leaf;
    const isAncestor = !isLeaf && options.active.includes(s.id);
    if (s.marker) {
      const r = Math.min(s.width, s.height) / 2;
      out.push(
        `<circle cx="${n(s.x + s.width / 2)}" cy="${n(s.y + s.height / 2)}" r="${n(r)}" fill="${c.fg}" data-marker="initial"/>`,
      );
      continue;
    }
    const stroke = isLeaf || isAncestor ? c.accent : c.muted;
    const fill = isLeaf ? c.accent : s.compound ? "none" : c.surface;
    const attrs = `data-state-id="${esc(s.id)}"${isLeaf ? ' data-active="true"' : ""}`;
    if (isLeaf) {
      out.push(
        `<rect x="${n(s.x - 4)}" y="${n(s.y - 4)}" width="${n(s.width + 8)}" height="${n(s.height + 8)}" rx="12" fill="${c.accentSoft}"/>`,
      );
    }
    out.push(
      `<rect ${attrs} x="${n(s.x)}" y="${n(s.y)}" width="${n(s.width)}" height="${n(s.height)}" rx="8" fill="${fill}" stroke="${stroke}" stroke-width="${s.compound ? 1.5 : 1.5}"${s.compound ? ' stroke-dasharray="0"' : ""}/>`,
    );
    if (s.final) {
      out.push(
        `<rect x="${n(s.x + 3)}" y="${n(s.y + 3)}" width="${n(s.width - 6)}" height="${n(s.height - 6)}" rx="6" fill="none" stroke="${stroke}" stroke-width="1"/>`,
      );
    }
    const textFill = isLeaf ? c.accentFg : isAncestor ? c.accent : c.fg;
    if (s.compound) {
      out.push(
        `<text x="${n(s.x + 12)}" y="${n(s.y + 21)}" font-size="13" font-weight="600" fill="${textFill}">${esc(s.label)}${s.final ? " (final)" : ""}</text>`,
      );
    } else {
      out.push(
        `<text x="${n(s.x + s.width / 2)}" y="${n(s.y + s.height / 2 + 4.5)}" text-anchor="middle" font-size="13" font-weight="${isLeaf ? 600 : 500}" fill="${textFill}">${esc(s.label)}</text>`,
      );
    }
  }
  // Edges over the states, the last one on top.
  const edges = [...layout.edges].sort((a, b) => Number(a.id === options.last) - Number(b.id === options.last));
  for (const e of edges) pushAll(out, edgeMarkup(e, options.counts.get(e.id) ?? 0, e.id === options.last, c));
  out.push("</g></svg>");
  return { svg: out.join("\n"), width, height };
}

function edgeMarkup(e: LaidEdge, count: number, last: boolean, c: StatechartPalette): string[] {
  const [first, ...rest] = e.points;
  if (first === undefined) return [];
  const dimmed = e.transition !== undefined && count === 0;
  const colour = last ? c.accent : c.muted;
  const opacity = dimmed ? ' opacity="0.45"' : "";
  const d = `M ${n(first.x)} ${n(first.y)} ${rest.map((p) => `L ${n(p.x)} ${n(p.y)}`).join(" ")}`;
  const out = [
    `<path d="${d}" fill="none" stroke="${colour}" stroke-width="${last ? 2.5 : 1.25}" marker-end="url(#${last ? "sc-arrow-last" : "sc-arrow"})"${opacity} data-transition-id="${esc(e.id)}" data-count="${count}"${last ? ' data-last="true"' : ""}/>`,
  ];
  if (e.label === undefined) return out;
  const { x, y } = e.label;
  const [name = "", row = "", trigger = ""] = e.lines;
  const rowText = `${row}${count > 0 ? `${row !== "" ? " · " : ""}fired ×${count}` : ""}`;
  out.push(
    `<g${opacity} data-transition="${esc(e.transition?.meta?.name ?? "")}">`,
    `<rect x="${n(x - 2)}" y="${n(y - 1)}" width="${n(e.label.width + 4)}" height="${n(e.label.height + 2)}" rx="3" fill="${c.surface}" fill-opacity="0.85"/>`,
    `<text x="${n(x)}" y="${n(y + 11)}" font-size="12" font-weight="600" fill="${last ? c.accent : c.fg}">${esc(name)}</text>`,
    `<text x="${n(x)}" y="${n(y + 25)}" font-size="11" fill="${count > 0 ? c.accent : c.fg}">${esc(rowText)}</text>`,
    `<text x="${n(x)}" y="${n(y + 39)}" font-size="11" fill="${c.muted}">${esc(trigger)}</text>`,
    "</g>",
  );
  return out;
}

function n(v: number): string {
  return String(Math.round(v * 10) / 10);
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
