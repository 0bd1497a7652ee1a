/**
 * Virtual time as an offset from the start of a run, `+h:mm:ss` with hours
 * unbounded (`+120:00:00`) and `.mmm` when there are milliseconds: how the
 * app's views and `mailscope compare` write a time.
 */

/** `+h:mm:ss` (hours unbounded), with `.mmm` when there are milliseconds; as `mailscope run` prints it. */
export function offset(timeMs: number, startMs: number): string {
  const total = Math.round(timeMs - startMs);
  const abs = Math.abs(total);
  const s = Math.floor(abs / 1000);
  const frac = abs % 1000;
  return `${total < 0 ? "-" : "+"}${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}${frac > 0 ? `.${String(frac).padStart(3, "0")}` : ""}`;
}
