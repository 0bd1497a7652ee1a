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
