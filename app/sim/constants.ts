/**
 * The draft's numbers as a run sets them: a scenario's
 * `constants: { RETRY-2.cap: 30m }`, `--set RETRY-2.cap=30m`,
 * `sweep --vary RETRY-2.cap=15m..2h/15m` and Compare all come here. Each
 * knob is named after its rule ID (app/protocol/specConstants.ts); a value is
 * a duration with a unit (`30m`, `5d`) or, for the factor and the jitter, a
 * number. What departs from SPEC.md is written into the trace — its
 * `constants` member and a `spec.constants` event at the start — so that
 * every view, report and check can say the run is not the draft's.
 */
import { SPEC_CONSTANTS, SPEC_KNOBS, specKnob, type SpecConstants, type SpecKnob } from "../protocol/specConstants.ts";
import { formatBoundMs, parseDurationMs } from "./faultScope.ts";

/** The outcome of applying one knob setting. */
export type ConstantResult =
  { readonly ok: true; readonly constants: SpecConstants } | { readonly ok: false; readonly message: string };

/** Every knob's name, for messages: `RETRY-1, RETRY-2.factor, …`. */
export function knobNames(): string {
  return SPEC_KNOBS.map((k) => k.name).join(", ");
}

/** A value in a knob's unit, as the knob is written: `30m`, `1h30m`, `2`, `0.25`. */
export function knobValueText(knob: SpecKnob, value: number): string {
  if (knob.kind === "number") return String(value);
  const ms = knob.kind === "duration-s" ? value * 1000 : value;
  return durationWords(ms);
}

/** `1h30m`, `5d`, `365d6h`, `1500ms`: a whole duration in the largest units that add up to it. */
export function durationWords(ms: number): string {
  if (ms === 0) return "0s";
  let rest = Math.round(ms);
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join("");
}

/** What the knob takes, in words: `a duration from 1s to 1d (SPEC.md: 1m)`. */
export function knobRangeText(knob: SpecKnob): string {
  const spec = knobValueText(knob, SPEC_CONSTANTS[knob.field]);
  if (knob.kind === "number") {
    return `a number from ${knob.min} to ${knob.max}${knob.maxExclusive === true ? " (not included)" : ""} (SPEC.md: ${spec})`;
  }
  const unit = knob.kind === "duration-s" ? 1000 : 1;
  return `a duration with a unit from ${formatBoundMs(knob.min * unit)} to ${formatBoundMs(knob.max * unit)}${knob.kind === "duration-s" ? ", whole seconds" : ""} (SPEC.md: ${spec})`;
}

/**
 * The value `raw` gives knob `knob`, in the knob's unit; a message saying what
 * it takes when it is not one. A duration needs its unit (`30m`): a bare
 * number would be ms in one place and seconds in another.
 */
export function parseKnobValue(
  knob: SpecKnob,
  raw: string | number,
): { readonly ok: true; readonly value: number } | { readonly ok: false; readonly message: string } {
  const text = String(raw).trim();
  const wrong = {
    ok: false as const,
    message: `${knob.name} (${knob.title}) is ${knobRangeText(knob)}, not "${text}"`,
  };
  let value: number;
  if (knob.kind === "number") {
    if (!/^\d+(?:\.\d+)?$/.test(text)) return wrong;
    value = Number(text);
  } else {
    if (/^\d+(?:\.\d+)?$/.test(text)) return wrong;
    const ms = parseDurationMs(text);
    if (ms === undefined) return wrong;
    if (knob.kind === "duration-s") {
      if (ms % 1000 !== 0) return wrong;
      value = ms / 1000;
    } else value = Math.round(ms);
  }
  const tooHigh = knob.maxExclusive === true ? value >= knob.max : value > knob.max;
  if (!Number.isFinite(value) || value < knob.min || tooHigh) return wrong;
  return { ok: true, value };
}

/** Applies `name = raw` to `base`; never throws. */
export function applyConstant(base: SpecConstants, name: string, raw: string | number): ConstantResult {
  const knob = specKnob(name);
  if (knob === undefined) {
    return {
      ok: false,
      message: `there is no knob ${name.trim()}; the draft's numbers a run can change are ${knobNames()}`,
    };
  }
  const parsed = parseKnobValue(knob, raw);
  if (!parsed.ok) return parsed;
  return { ok: true, constants: { ...base, [knob.field]: parsed.value } };
}

/** Checks across knobs once all are set: RETRY-5's bounds in order. Undefined when they agree. */
export function constantsProblem(constants: SpecConstants): { name: string; message: string } | undefined {
  if (constants.fallbackWindowMinS > constants.fallbackWindowMaxS) {
    return {
      name: "RETRY-5.min",
      message: `the shortest fallback window allowed (${durationWords(constants.fallbackWindowMinS * 1000)}) is longer than the longest (RETRY-5.max ${durationWords(constants.fallbackWindowMaxS * 1000)})`,
    };
  }
  return undefined;
}

/** One number of the run that is not SPEC.md's. */
export interface Departure {
  /** The knob: `RETRY-2.cap`. */
  readonly name: string;
  readonly title: string;
  readonly rules: readonly string[];
  /** The value in force and SPEC.md's, as knobs are written (`30m`, `1h`). */
  readonly value: string;
  readonly spec: string;
}

/** The knobs whose values depart from SPEC.md, in the order of SPEC.md. */
export function departures(constants: SpecConstants): Departure[] {
  return SPEC_KNOBS.filter((k) => constants[k.field] !== SPEC_CONSTANTS[k.field]).map((k) => ({
    name: k.name,
    title: k.title,
    rules: k.rules,
    value: knobValueText(k, constants[k.field]),
    spec: knobValueText(k, SPEC_CONSTANTS[k.field]),
  }));
}

/** The departures as the trace's `constants` member: `{ "RETRY-2.cap": "30m" }`; undefined when none. */
export function constantsNotation(constants: SpecConstants): Record<string, string> | undefined {
  const list = departures(constants);
  return list.length === 0 ? undefined : Object.fromEntries(list.map((d) => [d.name, d.value]));
}

/** `RETRY-2.cap 30m (SPEC.md: 1h); RETRY-6 3d (SPEC.md: 5d)`: the departures in one line. */
export function departuresText(list: readonly Departure[]): string {
  return list.map((d) => `${d.name} ${d.value} (SPEC.md: ${d.spec})`).join("; ");
}

/**
 * The constants a trace's `constants` member (or a `spec.constants` event's
 * `constants`) says were in force: SPEC.md's with those departures. A
 * member that does not read as a knob is left out (a trace from a later
 * version with a knob this one lacks).
 */
export function constantsOf(notation: Readonly<Record<string, unknown>> | undefined): SpecConstants {
  let constants = SPEC_CONSTANTS;
  for (const [name, value] of Object.entries(notation ?? {})) {
    if (typeof value !== "string" && typeof value !== "number") continue;
    const applied = applyConstant(constants, name, value);
    if (applied.ok) constants = applied.constants;
  }
  return constants;
}

/** The constants a run's events say were in force: its `spec.constants` event's, else SPEC.md's. */
export function constantsOfEvents(
  events: readonly { readonly name: string; readonly data?: Readonly<Record<string, unknown>> }[],
): SpecConstants {
  // The event comes first of all when there is one.
  for (const e of events.slice(0, 4)) {
    if (e.name !== "spec.constants") continue;
    const notation = e.data?.["constants"];
    return typeof notation === "object" && notation !== null
      ? constantsOf(notation as Record<string, unknown>)
      : SPEC_CONSTANTS;
  }
  return SPEC_CONSTANTS;
}
