/**
 * Where the delivery machine's canvas shows its drawing: the zoom, the pan and the canvas's height for a
 * canvas `width` px wide. The drawing is fitted to the canvas, but never shrunk so far that its smallest
 * words (the transitions' row and trigger lines, statechart.css) read under 11 px: where the whole
 * drawing does not fit at that size, the canvas shows part of it — the active state in view — and can be
 * panned (or zoomed out with its controls). Pure: the view (StatechartCanvas) applies it.
 */

/** The smallest type of the drawing at zoom 1: the transitions' second and third lines (statechart.css). */
export const SMALLEST_TEXT_PX = 10.5;
/** The smallest a word of the drawing may be on screen at the default view. */
export const READABLE_TEXT_PX = 11;
/** The canvas's height bounds. */
export const CANVAS_MIN_HEIGHT = 420;
export const CANVAS_MAX_HEIGHT = 1040;
/** The margin kept around the drawing when it fits, as a fraction of the canvas. */
export const FIT_PADDING = 0.03;
/** The margin, in px, kept between a state brought into view and the canvas's edge. */
const MARGIN = 16;

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface CanvasView {
  readonly zoom: number;
  /** Where the drawing's origin is on the canvas, px. */
  readonly x: number;
  readonly y: number;
  /** The canvas's height (its border included: 1 px each side). */
  readonly height: number;
}

/**
 * The default view of a drawing `size` on a canvas `width` px wide: the whole drawing fitted, its
 * proportions giving the canvas's height within bounds — unless its smallest words would then read under
 * {@link READABLE_TEXT_PX}: then at the zoom where they read at that size, the canvas as tall as that
 * needs (within bounds), centred on `focus` (the active state) where the drawing is larger than the canvas.
 */
export function canvasView(
  size: { readonly width: number; readonly height: number },
  width: number,
  focus?: Box,
): CanvasView {
  const readable = READABLE_TEXT_PX / SMALLEST_TEXT_PX;
  if (width <= 0 || size.width <= 0 || size.height <= 0)
    return { zoom: readable, x: 0, y: 0, height: CANVAS_MIN_HEIGHT };
  const clampHeight = (h: number) => Math.round(Math.min(CANVAS_MAX_HEIGHT, Math.max(CANVAS_MIN_HEIGHT, h)));
  const fitHeight = clampHeight((width * size.height) / size.width);
  const inner = (h: number) => h - 2;
  const fit = Math.min(width / size.width, inner(fitHeight) / size.height) * (1 - FIT_PADDING * 2);
  if (fit >= readable)
    return {
      zoom: fit,
      x: (width - size.width * fit) / 2,
      y: (inner(fitHeight) - size.height * fit) / 2,
      height: fitHeight,
    };
  const zoom = readable;
  const height = clampHeight(size.height * zoom * (1 + FIT_PADDING * 2) + 2);
  return { zoom, ...place(size, zoom, width, inner(height), focus), height };
}

/** The pan along one axis: centred when the drawing fits, else on `at` (or its start), kept over the canvas. */
function along(drawn: number, room: number, at: number | undefined): number {
  if (drawn <= room) return (room - drawn) / 2;
  const wanted = at === undefined ? MARGIN : room / 2 - at;
  return Math.min(MARGIN, Math.max(room - drawn - MARGIN, wanted));
}

function place(
  size: { readonly width: number; readonly height: number },
  zoom: number,
  width: number,
  height: number,
  focus: Box | undefined,
): { readonly x: number; readonly y: number } {
  const centre = focus && { x: (focus.x + focus.width / 2) * zoom, y: (focus.y + focus.height / 2) * zoom };
  return {
    x: along(size.width * zoom, width, centre?.x),
    y: along(size.height * zoom, height, centre?.y),
  };
}

/**
 * The least pan of `view` that brings `box` (the active state) fully into a canvas `width` × `height`,
 * or undefined when it is in view already (the user's own pan and zoom are kept then).
 */
export function panToShow(
  view: { readonly x: number; readonly y: number; readonly zoom: number },
  box: Box,
  width: number,
  height: number,
): { readonly x: number; readonly y: number } | undefined {
  const shift = (start: number, size: number, room: number) => {
    const from = start - MARGIN;
    const to = start + size + MARGIN;
    if (from >= 0 && to <= room) return 0;
    if (to - from > room || from < 0) return -from;
    return room - to;
  };
  const dx = shift(view.x + box.x * view.zoom, box.width * view.zoom, width);
  const dy = shift(view.y + box.y * view.zoom, box.height * view.zoom, height);
  return dx === 0 && dy === 0 ? undefined : { x: view.x + dx, y: view.y + dy };
}
