/**
 * What the DNS zone's and the network's faults have in common: when they are
 * active (a time window relative to the start of the run), where (glob
 * patterns over names), how often (a probability drawn from the fault's own
 * PRNG stream), and latency distributions. Schemas are zod, so that scenario
 * files can describe faults and get an error with a path for each mistake.
 *
 * Times in scenario files are offsets from the start of the run: a number of
 * milliseconds, or a duration string such as `90s`, `1h30m`, `2d`; an
 * absolute ISO 8601 time with a zone (`2026-01-01T02:00:00Z`) is accepted too.
 */
import * as z from "zod";
import type { EmitData } from "../trace/events.ts";
import { sampleExponential, sampleNormal, sampleUniform } from "./random.ts";
import type { SeededRandom } from "./random.ts";
import { MAX_SPAN_S, MAX_SPAN_WHY } from "../protocol/resources.ts";

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Milliseconds of a duration string: one or more `<number><unit>` parts with
 * units `ms s m h d w` (`500ms`, `90s`, `1h30m`, `1.5h`, `2d`); a bare number is
 * milliseconds. `undefined` when the text is not one.
 */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let end = 0;
  let parts = 0;
  for (let match = part.exec(trimmed); match !== null; match = part.exec(trimmed)) {
    total += Number(match[1]) * (UNIT_MS[match[2] ?? ""] ?? Number.NaN);
    end = part.lastIndex;
    parts++;
  }
  if (parts === 0 || end !== trimmed.length || !Number.isFinite(total)) return undefined;
  return Math.round(total);
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * {@link parseDurationMs}'s grammar without the surrounding space, for JSON
 * Schema patterns. Numbers have at most 11 digits before the point: no bounded
 * field takes more (730 days are 63072000000 ms), so an editor flags the
 * absurd; the exact bounds are the parser's.
 */
export const DURATION_PATTERN_BODY = "(?:\\d{1,11}(?:\\.\\d+)?|(?:\\d{1,11}(?:\\.\\d+)?(?:ms|s|m|h|d|w))+)";
/** A duration string as {@link parseDurationMs} reads it, as a JSON Schema pattern (editors flag what the parser refuses). */
export const DURATION_PATTERN = `^\\s*${DURATION_PATTERN_BODY}\\s*$`;

/**
 * The latest virtual time a scenario names, after its start: every time
 * (`at`, `from`, `until`), the horizon, and the durations of expectations
 * (`within`, `after`): {@link MAX_SPAN_S}, 2 years ({@link MAX_SPAN_WHY}).
 */
export const MAX_VIRTUAL_MS = MAX_SPAN_S * 1000;
/** The longest latency or timeout of the network or DNS, ms: an hour ({@link MAX_LATENCY_WHY}). */
export const MAX_LATENCY_MS = 3_600_000;
/** Why {@link MAX_LATENCY_MS}. */
export const MAX_LATENCY_WHY =
  "a resource limit; the spec names no latency or timeout, and an hour is its longest retry delay (RETRY-2)";

/** The words after a bound in errors and schema descriptions: `730d (63072000000 ms): 2 years: …`. */
function boundWords(max: number, why: string): string {
  return `${formatBoundMs(max)} (${max} ms): ${why}`;
}

/** A duration in the words of scenario errors: `365d`, `1h`, `90s`, else ms. */
export function formatBoundMs(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A number of ms at most `max`: the error names the bound in words and in ms, and what it follows from
 * (`why`: the spec's number, or a resource limit), as the JSON Schema's description does.
 */
export function boundedMs(max: number, what: string, why: string): z.ZodNumber {
  return z
    .number()
    .min(0)
    .max(max, { error: (issue) => `is ${String(issue.input)} ms; ${what} is at most ${boundWords(max, why)}` })
    .meta({ description: `Ms; at most ${boundWords(max, why)}.` });
}

/** A time after the start or a duration as a string, at most `max` ms: the error says why, as {@link boundedMs}'s. */
export function durationStringAtMost(max: number, what: string, why: string): (issue: { input: unknown }) => string {
  return (issue) => `is ${String(issue.input)}; ${what} is at most ${formatBoundMs(max)}: ${why}`;
}

/** Whether a duration string is at most `max` ms (strings that are not durations pass: another check names them). */
export function durationAtMost(text: string, max: number): boolean {
  const ms = parseDurationMs(text);
  return ms === undefined || ms <= max;
}

/** A point in virtual time: ms after the start, a duration string after the start, or an absolute ISO time. */
export type TimeOffset = number | string;

/** Zod schema of a {@link TimeOffset}. */
export const timeOffsetSchema = z
  .union([
    boundedMs(MAX_VIRTUAL_MS, "a time after the start", MAX_SPAN_WHY),
    z
      .string()
      .refine((text) => parseDurationMs(text) !== undefined || ISO_WITH_ZONE.test(text), {
        message: 'a time is ms after the start, a duration such as "90s", "1h30m", "2d", or an ISO time with a zone',
      })
      .refine((text) => durationAtMost(text, MAX_VIRTUAL_MS), {
        error: durationStringAtMost(MAX_VIRTUAL_MS, "a time after the start", MAX_SPAN_WHY),
      })
      .meta({ pattern: `${DURATION_PATTERN}|${ISO_WITH_ZONE.source}` }),
  ])
  .meta({
    description: `Ms after the start of the run, a duration after the start ("1h30m"), or an ISO time; at most ${formatBoundMs(MAX_VIRTUAL_MS)} after the start: ${MAX_SPAN_WHY}.`,
  });

/** The virtual time (ms since the epoch) a {@link TimeOffset} names in a run that started at `startMs`. */
export function resolveTimeMs(offset: TimeOffset, startMs: number): number {
  if (typeof offset === "number") return startMs + offset;
  const duration = parseDurationMs(offset);
  if (duration !== undefined) return startMs + duration;
  if (ISO_WITH_ZONE.test(offset)) return Date.parse(offset);
  throw new RangeError(`"${offset}" is not a time offset`);
}

/** Zod schema of a probability in [0, 1]. */
export const probabilitySchema = z.number().min(0).max(1).meta({
  description: "Chance in [0, 1] that the fault applies to a matching request, drawn from its own seeded stream.",
});

/** The scope fields every fault has; spread into each fault's object schema. */
export const faultScopeShape = {
  /** A stable name: the PRNG stream is forked by it (else by position), and the trace cites it. */
  id: z.string().min(1).optional(),
  from: timeOffsetSchema.optional(),
  until: timeOffsetSchema.optional(),
  probability: probabilitySchema.optional(),
};

/** A fault's time window in virtual ms since the epoch: active when `fromMs <= t < untilMs`. */
export interface TimeWindow {
  readonly fromMs: number;
  readonly untilMs: number;
}

/** Resolves `from`/`until` against the start of the run; open ends are unbounded. */
export function resolveWindow(
  scope: { readonly from?: TimeOffset; readonly until?: TimeOffset },
  startMs: number,
): TimeWindow {
  return {
    fromMs: scope.from === undefined ? Number.NEGATIVE_INFINITY : resolveTimeMs(scope.from, startMs),
    untilMs: scope.until === undefined ? Number.POSITIVE_INFINITY : resolveTimeMs(scope.until, startMs),
  };
}

/** Whether `timeMs` falls in the window. */
export function inWindow(window: TimeWindow, timeMs: number): boolean {
  return timeMs >= window.fromMs && timeMs < window.untilMs;
}

/**
 * The data of a `fault.window` trace event: the fault's `id` (the label the
 * trace's `fault` fields cite: its own id, else `<position>:<kind>`), its
 * `layer` and `kind`, its `scope` (the members of `scopeKeys` it gives), its
 * window in virtual ms (`fromMs`: the start of the run when it has no `from`;
 * `untilMs`: null when it never ends), its `probability` (1 when it gives
 * none), and its other `settings` (status, Retry-After, latency, …).
 */
export function faultWindowData(
  layer: "network" | "dns",
  id: string,
  spec: { readonly kind: string } & Readonly<Record<string, unknown>>,
  window: TimeWindow,
  startMs: number,
  scopeKeys: readonly string[],
): EmitData<"fault.window"> {
  const scope: Record<string, unknown> = {};
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    if (value === undefined || WINDOW_KEYS.has(key)) continue;
    if (scopeKeys.includes(key)) scope[key] = value;
    else settings[key] = value;
  }
  return {
    id,
    layer,
    kind: spec.kind,
    scope,
    fromMs: Number.isFinite(window.fromMs) ? window.fromMs : startMs,
    untilMs: Number.isFinite(window.untilMs) ? window.untilMs : null,
    probability: typeof spec["probability"] === "number" ? spec["probability"] : 1,
    settings,
  };
}

const WINDOW_KEYS = new Set(["id", "kind", "from", "until", "probability"]);

/**
 * Whether `value` matches a glob where `*` stands for any run of characters
 * (`*.example.org`, `/v1/*`). Case-insensitive, for host names; paths in this
 * protocol are lowercase anyway.
 */
export function matchGlob(pattern: string, value: string): boolean {
  let regex = globs.get(pattern);
  if (regex === undefined) {
    const source = pattern
      .split("*")
      .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    regex = new RegExp(`^${source}$`, "i");
    if (globs.size >= 1024) globs.clear();
    globs.set(pattern, regex);
  }
  return regex.test(value);
}

/** Compiled globs by pattern: a fault is matched against every request, so each pattern is compiled once. */
const globs = new Map<string, RegExp>();

/** A domain or host name as compared everywhere here: lowercase, no trailing dot. */
export function normalizeName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

// ---------------------------------------------------------------------------
// Latency

const ms = boundedMs(MAX_LATENCY_MS, "a latency", MAX_LATENCY_WHY);

/** Zod schema of a latency: a fixed number of ms, or a distribution. */
export const latencySchema = z
  .union([
    ms,
    z.strictObject({ distribution: z.literal("fixed"), ms }),
    z.strictObject({ distribution: z.literal("uniform"), minMs: ms, maxMs: ms }),
    z.strictObject({ distribution: z.literal("normal"), meanMs: ms, stddevMs: ms, minMs: ms.optional() }),
    z.strictObject({ distribution: z.literal("exponential"), meanMs: ms }),
  ])
  .meta({
    description:
      "Virtual ms (at most an hour): fixed, or sampled from uniform, normal or exponential with the seeded PRNG.",
  });

/** A latency as {@link latencySchema} reads it. */
export type LatencySpec = z.output<typeof latencySchema>;

/**
 * One latency in whole virtual ms, sampled from `random` (no draw for a fixed
 * latency). Negative samples of a normal distribution are clamped to `minMs`
 * (default 0).
 */
export function sampleLatencyMs(spec: LatencySpec, random: SeededRandom): number {
  if (typeof spec === "number") return Math.round(spec);
  switch (spec.distribution) {
    case "fixed":
      return Math.round(spec.ms);
    case "uniform":
      return Math.round(sampleUniform(random, Math.min(spec.minMs, spec.maxMs), Math.max(spec.minMs, spec.maxMs)));
    case "normal":
      return Math.max(Math.round(spec.minMs ?? 0), Math.round(sampleNormal(random, spec.meanMs, spec.stddevMs)));
    case "exponential":
      return Math.round(sampleExponential(random, spec.meanMs));
  }
}
