/**
 * Virtual time as the CLI prints it (app/trace/offset.ts): an offset from the
 * start of the run, `+h:mm:ss`, from a day on `+Nd h:mm:ss`, with `.mmm` when
 * there are milliseconds; durations in words; the parsing of what a person
 * types to jump to a time; the clock's reading.
 */

import { formatDuration, formatOffset, parseOffset } from "../../../app/trace/offset.ts";

export { formatDuration, formatOffset, parseOffset };

/** The clock's reading: `+5d 0:00:00`, and the day and time of day beside it (`day 6, 00:00:00`). */
export function clockText(timeMs: number, startMs: number): { readonly offset: string; readonly days: string } {
  const elapsed = Math.max(0, Math.floor(timeMs - startMs));
  const day = Math.floor(elapsed / 86_400_000);
  const rest = Math.floor((elapsed % 86_400_000) / 1000);
  const hms = `${String(Math.floor(rest / 3600)).padStart(2, "0")}:${String(Math.floor((rest % 3600) / 60)).padStart(2, "0")}:${String(rest % 60).padStart(2, "0")}`;
  return { offset: formatOffset(Math.floor(timeMs), startMs).replace(/\.\d{3}$/, ""), days: `day ${day + 1}, ${hms}` };
}
