/**
 * Images of the views (export the timeline, the sequence diagram
 * and the statechart as SVG and PNG), shared by the three.
 *
 * - {@link composeSvg}: the SVG a view shows, as one standalone document.
 *   A view may draw in several `<svg>` elements laid out by HTML (the
 *   sequence diagram's heads and rows): each is cloned where it sits on
 *   screen (or stacked), with the styles the page's CSS gives it written on
 *   its elements (fill, stroke, fonts…), so the file looks the same without
 *   the stylesheet, in the theme the page shows.
 * - {@link svgToPng}: a PNG of an SVG document, through an image and a
 *   canvas (a data: URL, which the CSP allows for images), at 2× for sharp
 *   text.
 *
 * The statechart's canvas is HTML and SVG (@xyflow/react); its image is drawn
 * from the same ELK layout instead (model/statechartSvg.ts). The timeline
 * draws only the lanes scrolled into view; its image is drawn from the model
 * too, every lane (model/timelineSvg.ts).
 */
import { maxOf, minOf } from "../../../app/protocol/lists.ts";

const SVG_NS = "http://www.w3.org/2000/svg";

/** The style properties written on each cloned element. */
const STYLE_PROPS = [
  "fill",
  "fill-opacity",
  "stroke",
  "stroke-width",
  "stroke-dasharray",
  "stroke-opacity",
  "stroke-linecap",
  "stroke-linejoin",
  "opacity",
  "font-family",
  "font-size",
  "font-weight",
  "font-style",
  "text-anchor",
  "dominant-baseline",
  "visibility",
  "marker-end",
  "marker-start",
] as const;

/** The SVG document of an image, its size in CSS pixels. */
export interface SvgImage {
  readonly svg: string;
  readonly width: number;
  readonly height: number;
}

export interface ComposeOptions {
  /** Which `<svg>` elements inside the container are drawn. Default every one not hidden. */
  readonly svgs?: string;
  /** Lay the svgs one under the other in document order (a scrolled diagram drawn whole), not where they are on screen. */
  readonly stack?: boolean;
  /** A title drawn above: `Delivery timeline — happy-path`. */
  readonly title?: string;
  /** `data-view` on the root, naming the view. */
  readonly view: string;
}

const TITLE_H = 28;
const PAD = 8;

/** The view's SVG elements as one standalone SVG document. */
export function composeSvg(container: Element, options: ComposeOptions): SvgImage {
  const drawn = (e: Element): boolean => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const svgs = [...container.querySelectorAll<SVGSVGElement>(options.svgs ?? "svg")].filter(drawn);
  let below = 0;
  const rects = svgs.map((e) => {
    const r = e.getBoundingClientRect();
    if (options.stack !== true) return r;
    const stacked = new DOMRect(r.left, below, r.width, r.height);
    below += r.height;
    return stacked;
  });
  if (rects.length === 0) throw new Error("there is nothing drawn in this view yet");
  const left = minOf(rects.map((r) => r.left));
  const top = minOf(rects.map((r) => r.top));
  const right = maxOf(rects.map((r) => r.right));
  const bottom = maxOf(rects.map((r) => r.bottom));
  const head = options.title !== undefined ? TITLE_H : 0;
  const width = Math.ceil(right - left + PAD * 2);
  const height = Math.ceil(bottom - top + PAD * 2 + head);
  const page = getComputedStyle(document.documentElement);
  const background = page.getPropertyValue("--bg").trim() || "#ffffff";
  const foreground = page.getPropertyValue("--fg").trim() || "#000000";

  const root = document.createElementNS(SVG_NS, "svg");
  root.setAttribute("xmlns", SVG_NS);
  root.setAttribute("width", String(width));
  root.setAttribute("height", String(height));
  root.setAttribute("viewBox", `0 0 ${width} ${height}`);
  root.setAttribute("data-view", options.view);
  root.setAttribute("font-family", getComputedStyle(container).fontFamily);
  const bg = document.createElementNS(SVG_NS, "rect");
  bg.setAttribute("width", "100%");
  bg.setAttribute("height", "100%");
  bg.setAttribute("fill", background);
  root.append(bg);
  if (options.title !== undefined) {
    const t = document.createElementNS(SVG_NS, "text");
    t.setAttribute("x", String(PAD));
    t.setAttribute("y", String(PAD + 14));
    t.setAttribute("font-size", "15");
    t.setAttribute("font-weight", "600");
    t.setAttribute("fill", foreground);
    t.textContent = options.title;
    root.append(t);
  }
  const at = (r: DOMRect) => ({ x: r.left - left + PAD, y: r.top - top + PAD + head });
  svgs.forEach((svg, i) => {
    const r = rects[i] as DOMRect;
    const clone = inlineStyles(svg);
    const { x, y } = at(r);
    clone.setAttribute("x", String(Math.round(x * 10) / 10));
    clone.setAttribute("y", String(Math.round(y * 10) / 10));
    clone.setAttribute("width", String(r.width));
    clone.setAttribute("height", String(r.height));
    clone.removeAttribute("class");
    clone.removeAttribute("style");
    root.append(clone);
  });
  return { svg: new XMLSerializer().serializeToString(root), width, height };
}

/** A deep clone of `svg` with each element's computed styles written as attributes; event handlers and ARIA left. */
function inlineStyles(svg: SVGSVGElement): SVGSVGElement {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  const originals = [svg, ...svg.querySelectorAll("*")];
  const copies = [clone, ...clone.querySelectorAll("*")];
  originals.forEach((original, i) => {
    const copy = copies[i];
    if (copy === undefined || !(original instanceof SVGElement)) return;
    const style = getComputedStyle(original);
    if (style.display === "none") {
      copy.remove();
      return;
    }
    for (const prop of STYLE_PROPS) {
      const value = style.getPropertyValue(prop);
      if (value !== "" && value !== "auto" && value !== "normal" && !(prop.startsWith("marker") && value === "none")) {
        copy.setAttribute(prop, value);
      }
    }
    copy.removeAttribute("tabindex");
    copy.removeAttribute("style");
  });
  return clone;
}

/** A PNG of an SVG document, `scale` times its size. */
export async function svgToPng(image: SvgImage, scale = 2): Promise<Uint8Array> {
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(image.svg)}`;
  const img = new Image();
  img.decoding = "sync";
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error("the image could not be drawn"));
    img.src = url;
  });
  const canvas = document.createElement("canvas");
  canvas.width = Math.ceil(image.width * scale);
  canvas.height = Math.ceil(image.height * scale);
  const ctx = canvas.getContext("2d");
  if (ctx === null) throw new Error("no 2D canvas here");
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0, image.width, image.height);
  const blob = await new Promise<Blob>((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the PNG could not be made"))), "image/png"),
  );
  return new Uint8Array(await blob.arrayBuffer());
}

/** A file name from a view and what it shows: `happy-path-timeline.svg`. */
export function imageName(parts: readonly string[], ext: "svg" | "png"): string {
  const base = parts
    .filter((p) => p !== "")
    .join("-")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  return `${base || "mailscope"}.${ext}`;
}
