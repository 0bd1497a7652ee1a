/**
 * Virtual time as the CLI prints it: an offset from the start of the run,
 * `+h:mm:ss` with hours unbounded and `.mmm` when there are milliseconds
 * (`mailscope run`'s timeline), and the parsing of what a person types to
 * jump to a time.
 */

import { offset, parseOffset } from "../../../app/trace/offset.ts";

export { offset, parseOffset };

/** The clock's reading: `+120:00:00` and, past a day, `day 5, 00:00:00` beside it. */
export function clockText(timeMs: number, startMs: number): { readonly offset: string; readonly days: string } {
  const elapsed = Math.max(0, Math.floor(timeMs - startMs));
  const day = Math.floor(elapsed / 86_400_000);
  const rest = Math.floor((elapsed % 86_400_000) / 1000);
  const hms = `${String(Math.floor(rest / 3600)).padStart(2, "0")}:${String(Math.floor((rest % 3600) / 60)).padStart(2, "0")}:${String(rest % 60).padStart(2, "0")}`;
  return { offset: offset(Math.floor(timeMs), startMs).replace(/\.\d{3}$/, ""), days: `day ${day + 1}, ${hms}` };
}
