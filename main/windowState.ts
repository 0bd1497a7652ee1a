/**
 * The window's size and position, kept between launches in the user's data
 * folder; a saved position off every screen (a display since unplugged) is
 * dropped and the window is centred.
 */
import { readFile } from "node:fs/promises";
import { writeWhole } from "./files.ts";

export interface Bounds {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface WindowState {
  readonly bounds: Bounds;
  readonly maximized: boolean;
}

export const DEFAULT_SIZE = { width: 1280, height: 820 } as const;
const MIN = { width: 640, height: 480 } as const;

function isBounds(b: unknown): b is Bounds {
  const r = b as Record<string, unknown> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    ["x", "y", "width", "height"].every((k) => typeof r[k] === "number" && Number.isFinite(r[k]))
  );
}

/**
 * What to open the window with, given what was saved and the screens' work
 * areas: the saved bounds if their top-left corner lies on a screen (sizes
 * clamped to at least 640 × 480), else the default size, centred.
 */
export function restoreBounds(
  saved: unknown,
  workAreas: readonly Bounds[],
): { x?: number; y?: number; width: number; height: number; maximized: boolean } {
  const state = saved as Partial<WindowState> | null;
  const maximized = typeof state === "object" && state !== null && state.maximized === true;
  if (typeof state !== "object" || state === null || !isBounds(state.bounds)) return { ...DEFAULT_SIZE, maximized };
  const b = state.bounds;
  const visible = workAreas.some(
    (a) => b.x >= a.x - 16 && b.y >= a.y - 16 && b.x < a.x + a.width - 64 && b.y < a.y + a.height - 64,
  );
  const size = { width: Math.max(MIN.width, Math.round(b.width)), height: Math.max(MIN.height, Math.round(b.height)) };
  return visible ? { x: Math.round(b.x), y: Math.round(b.y), ...size, maximized } : { ...size, maximized };
}

export async function loadWindowState(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** Writes the window's state at once (the window is closing, the app may be quitting). */
export function saveWindowState(path: string, state: WindowState): void {
  writeWhole(path, `${JSON.stringify(state)}\n`);
}
