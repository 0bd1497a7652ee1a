/**
 * Virtual time as the CLI prints it: an offset from the start of the run,
 * `+h:mm:ss` with hours unbounded and `.mmm` when there are milliseconds
 * (`mailscope run`'s timeline), and the parsing of what a person types to
 * jump to a time.
 */

import { offset, parseOffset } from "../../../app/trace/offset.ts";

export { offset, offset as formatOffset, parseOffset };

/** A duration in words: `58 s`, `2 min`, `1 h 3 min`, `5 d`. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${+(abs / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) {
    const m = Math.floor(abs / 60_000);
    const s = Math.round((abs % 60_000) / 1000);
    return s ? `${m} min ${s} s` : `${m} min`;
  }
  if (abs < 86_400_000) {
    const h = Math.floor(abs / 3_600_000);
    const m = Math.round((abs % 3_600_000) / 60_000);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const d = Math.floor(abs / 86_400_000);
  const h = Math.round((abs % 86_400_000) / 3_600_000);
  return h ? `${d} d ${h} h` : `${d} d`;
}

/** The clock's reading: `+120:00:00` and, past a day, `day 5, 00:00:00` beside it. */
export function clockText(timeMs: number, startMs: number): { readonly offset: string; readonly days: string } {
  const elapsed = Math.max(0, Math.floor(timeMs - startMs));
  const day = Math.floor(elapsed / 86_400_000);
  const rest = Math.floor((elapsed % 86_400_000) / 1000);
  const hms = `${String(Math.floor(rest / 3600)).padStart(2, "0")}:${String(Math.floor((rest % 3600) / 60)).padStart(2, "0")}:${String(rest % 60).padStart(2, "0")}`;
  return { offset: offset(Math.floor(timeMs), startMs).replace(/\.\d{3}$/, ""), days: `day ${day + 1}, ${hms}` };
}
