/**
 * Virtual time as the CLI prints it: an offset from the start of the run,
 * `+h:mm:ss` with hours unbounded and `.mmm` when there are milliseconds
 * (`mailscope run`'s timeline), and the parsing of what a person types to
 * jump to a time.
 */

import { offset } from "../../../app/trace/offset.ts";

export { offset };

/** The clock's reading: `+120:00:00` and, past a day, `day 5, 00:00:00` beside it. */
export function clockText(timeMs: number, startMs: number): { readonly offset: string; readonly days: string } {
  const elapsed = Math.max(0, Math.floor(timeMs - startMs));
  const day = Math.floor(elapsed / 86_400_000);
  const rest = Math.floor((elapsed % 86_400_000) / 1000);
  const hms = `${String(Math.floor(rest / 3600)).padStart(2, "0")}:${String(Math.floor((rest % 3600) / 60)).padStart(2, "0")}:${String(rest % 60).padStart(2, "0")}`;
  return { offset: offset(Math.floor(timeMs), startMs).replace(/\.\d{3}$/, ""), days: `day ${day + 1}, ${hms}` };
}

/**
 * A time typed to jump to, as an offset from the start: `+2:03:00`, `2:03`,
 * `90m`, `2h30m`, `1d 4h`, `45s`. Undefined when it reads as none of these.
 */
export function parseOffset(text: string): number | undefined {
  const t = text.trim().replace(/^\+/, "");
  if (t === "") return undefined;
  const clock = /^(\d+):([0-5]?\d)(?::([0-5]?\d)(?:\.(\d{1,3}))?)?$/.exec(t);
  if (clock) {
    const [, h, m, s, ms] = clock;
    return Number(h) * 3_600_000 + Number(m) * 60_000 + Number(s ?? 0) * 1000 + Number((ms ?? "0").padEnd(3, "0"));
  }
  const compact = t.replace(/\s+/g, "");
  if (!/^(?:\d+(?:\.\d+)?(?:ms|d|h|m|s))+$/.test(compact)) return undefined;
  const units: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, unit] of compact.matchAll(/(\d+(?:\.\d+)?)(ms|d|h|m|s)/g))
    total += Number(n) * (units[unit ?? "ms"] ?? 0);
  return Math.round(total);
}
