/**
 * Virtual time as an offset from the start of a run, and durations in words:
 * how `mailscope run`, the other commands and every view of the app write a
 * time (one form everywhere), and the parsing of what a person types to jump
 * to one.
 */

/** `h:mm:ss` of the seconds in `s` (hours as many as there are), with `.mmm` when `frac` ms. */
function hms(hours: number, s: number, frac: number): string {
  return `${hours}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}${frac > 0 ? `.${String(frac).padStart(3, "0")}` : ""}`;
}

/**
 * `+h:mm:ss`, from a day on `+Nd h:mm:ss` (`+5d 0:00:00`), with `.mmm` when
 * there are milliseconds: as `mailscope run` prints a time.
 */
export function formatOffset(timeMs: number, startMs: number): string {
  const total = Math.round(timeMs - startMs);
  const abs = Math.abs(total);
  const s = Math.floor(abs / 1000);
  const days = Math.floor(s / 86_400);
  return `${total < 0 ? "-" : "+"}${days > 0 ? `${days}d ` : ""}${hms(Math.floor((s % 86_400) / 3600), s, abs % 1000)}`;
}

/**
 * `+h:mm:ss` with hours unbounded (`+120:00:00`): the form of the times in
 * the check results a trace records (its invariants' and expectations'
 * details). Kept as it was so that a run's trace stays byte for byte the same;
 * everything a person reads is written with {@link formatOffset}.
 */
export function recordedOffset(timeMs: number, startMs: number): string {
  const total = Math.round(timeMs - startMs);
  const abs = Math.abs(total);
  const s = Math.floor(abs / 1000);
  return `${total < 0 ? "-" : "+"}${hms(Math.floor(s / 3600), s, abs % 1000)}`;
}

/**
 * A recorded check's detail as a person reads it: each time it writes with
 * {@link recordedOffset} past a day (`+120:00:00`) in the form of every other
 * time on screen (`+5d 0:00:00`). The same instant, only written as
 * {@link formatOffset} writes it; the trace keeps its own text.
 */
export function readableRecordedText(text: string): string {
  return text.replace(
    /(?<![\w:.])([+-])(\d{2,}:[0-5]\d:[0-5]\d(?:\.\d{3})?)(?![\d:])/g,
    (whole, sign: string, time: string) => {
      const ms = parseOffset(time);
      if (ms === undefined || ms < 86_400_000) return whole;
      return formatOffset(sign === "-" ? -ms : ms, 0);
    },
  );
}

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

/**
 * A time typed to jump to, as an offset from the start: what
 * {@link formatOffset} writes (`+2:03:00`, `+5d 0:00:00`), `2:03`, `90m`,
 * `2h30m`, `1d 4h`, `45s`. Undefined when it reads as none of these.
 */
export function parseOffset(text: string): number | undefined {
  const t = text.trim().replace(/^\+/, "");
  if (t === "") return undefined;
  const clock = /^(?:(\d+)d\s*)?(\d+):([0-5]?\d)(?::([0-5]?\d)(?:\.(\d{1,3}))?)?$/.exec(t);
  if (clock) {
    const [, d, h, m, s, ms] = clock;
    return (
      Number(d ?? 0) * 86_400_000 +
      Number(h) * 3_600_000 +
      Number(m) * 60_000 +
      Number(s ?? 0) * 1000 +
      Number((ms ?? "0").padEnd(3, "0"))
    );
  }
  const compact = t.replace(/\s+/g, "");
  if (!/^(?:\d+(?:\.\d+)?(?:ms|d|h|m|s))+$/.test(compact)) return undefined;
  const units: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, unit] of compact.matchAll(/(\d+(?:\.\d+)?)(ms|d|h|m|s)/g))
    total += Number(n) * (units[unit ?? "ms"] ?? 0);
  return Math.round(total);
}
