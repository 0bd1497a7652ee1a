/**
 * The draft's own numbers as one object ("the draft's own numbers
 * as knobs"): the retry schedule, the fallback window's allowed bounds, the
 * give-up, the capabilities cache lifetimes and the pin cap, each with the
 * rule IDs of SPEC.md that give it. The sender reads every one of them from
 * the {@link SpecConstants} it is built with ({@link SPEC_CONSTANTS} unless a
 * scenario, `--set`, `sweep --vary` or Compare changes one), so that a run
 * can ask "what if the draft said a 30-minute cap?"; the trace says so
 * (app/sim/constants.ts, the `spec.constants` event).
 *
 * Each changeable number is a {@link SpecKnob}, named after its rule ID
 * (`RETRY-2.cap`, `RETRY-6`, `CAP-13`). Where one rule gives two numbers
 * (RETRY-2's factor and cap, RETRY-5's two bounds) the knob adds a part name.
 * The fallback window itself is G16's reading (`G16.fallback-window`), not a
 * knob: RETRY-4 only says what it SHOULD be.
 */

/** The numbers of SPEC.md a run follows. */
export interface SpecConstants {
  /** RETRY-1: the first retry, this long after the first attempt. */
  readonly firstRetryMs: number;
  /** RETRY-2: each delay is the previous one times this ("doubles"). */
  readonly backoffFactor: number;
  /** RETRY-2: … capped at this. */
  readonly retryCapMs: number;
  /** RETRY-3: each delay is randomized by ± this fraction (0.2 is ±20 %). */
  readonly jitterFraction: number;
  /** RETRY-5: in production the fallback window is at least … */
  readonly fallbackWindowMinS: number;
  /** … and at most this. */
  readonly fallbackWindowMaxS: number;
  /** RETRY-6, STATE-7: give up (and bounce) this long after the first attempt. */
  readonly giveUpMs: number;
  /** GET-6, LIM-9: the capabilities' freshness without a usable `max-age`. */
  readonly capabilitiesDefaultMaxAgeS: number;
  /** GET-7, LIM-10: a capabilities document older than this is never used. */
  readonly capabilitiesMaxAgeS: number;
  /** CAP-13, LIM-11: a `discovery_pin_max_age` above this is read as this. */
  readonly pinMaxAgeS: number;
}

/** SPEC.md's values ("Retry schedule", "Capabilities", "Limits"). */
export const SPEC_CONSTANTS: SpecConstants = Object.freeze({
  firstRetryMs: 60_000,
  backoffFactor: 2,
  retryCapMs: 3_600_000,
  jitterFraction: 0.2,
  fallbackWindowMinS: 3_600,
  fallbackWindowMaxS: 14_400,
  giveUpMs: 5 * 86_400_000,
  capabilitiesDefaultMaxAgeS: 3_600,
  capabilitiesMaxAgeS: 86_400,
  pinMaxAgeS: 31_557_600,
});

/** How a knob's value is written: a duration (`30m`, whole seconds for the `…S` fields) or a plain number. */
export type SpecKnobKind = "duration-ms" | "duration-s" | "number";

/** One of the draft's numbers as a run can change it. */
export interface SpecKnob {
  /** `RETRY-2.cap`: the rule ID, and a part name where the rule gives two numbers. */
  readonly name: string;
  readonly field: keyof SpecConstants;
  readonly kind: SpecKnobKind;
  /** The rules that give the number (the first is the knob's name). */
  readonly rules: readonly string[];
  /** What it is, in a few words: `backoff cap`. */
  readonly title: string;
  /** The smallest value allowed, in the field's unit. */
  readonly min: number;
  /** The largest value allowed (exclusive when {@link maxExclusive}), in the field's unit. */
  readonly max: number;
  readonly maxExclusive?: boolean;
}

const DAY_MS = 86_400_000;
const YEAR_S = 365 * 86_400;

/** Every knob, in the order of SPEC.md. */
export const SPEC_KNOBS: readonly SpecKnob[] = [
  {
    name: "RETRY-1",
    field: "firstRetryMs",
    kind: "duration-ms",
    rules: ["RETRY-1"],
    title: "first retry",
    min: 1000,
    max: DAY_MS,
  },
  {
    name: "RETRY-2.factor",
    field: "backoffFactor",
    kind: "number",
    rules: ["RETRY-2"],
    title: "backoff factor",
    min: 1,
    max: 10,
  },
  {
    name: "RETRY-2.cap",
    field: "retryCapMs",
    kind: "duration-ms",
    rules: ["RETRY-2"],
    title: "backoff cap",
    min: 1000,
    max: 30 * DAY_MS,
  },
  {
    name: "RETRY-3",
    field: "jitterFraction",
    kind: "number",
    rules: ["RETRY-3"],
    title: "jitter (± fraction)",
    min: 0,
    max: 1,
    maxExclusive: true,
  },
  {
    name: "RETRY-5.min",
    field: "fallbackWindowMinS",
    kind: "duration-s",
    rules: ["RETRY-5"],
    title: "shortest fallback window allowed",
    min: 0,
    max: 30 * 86_400,
  },
  {
    name: "RETRY-5.max",
    field: "fallbackWindowMaxS",
    kind: "duration-s",
    rules: ["RETRY-5"],
    title: "longest fallback window allowed",
    min: 0,
    max: 30 * 86_400,
  },
  {
    name: "RETRY-6",
    field: "giveUpMs",
    kind: "duration-ms",
    rules: ["RETRY-6", "STATE-7"],
    title: "give-up",
    min: 60_000,
    max: 60 * DAY_MS,
  },
  {
    name: "GET-6",
    field: "capabilitiesDefaultMaxAgeS",
    kind: "duration-s",
    rules: ["GET-6", "LIM-9"],
    title: "capabilities lifetime without max-age",
    min: 0,
    max: YEAR_S,
  },
  {
    name: "GET-7",
    field: "capabilitiesMaxAgeS",
    kind: "duration-s",
    rules: ["GET-7", "LIM-10"],
    title: "oldest capabilities document used",
    min: 0,
    max: YEAR_S,
  },
  {
    name: "CAP-13",
    field: "pinMaxAgeS",
    kind: "duration-s",
    rules: ["CAP-13", "LIM-11"],
    title: "discovery pin cap",
    min: 0,
    max: 10 * YEAR_S,
  },
];

const byName: ReadonlyMap<string, SpecKnob> = new Map(SPEC_KNOBS.map((k) => [k.name.toUpperCase(), k]));

/** The knob named `name` (case does not matter: `retry-2.cap`), or undefined. */
export function specKnob(name: string): SpecKnob | undefined {
  return byName.get(name.trim().toUpperCase());
}

/** Whether `name` looks like a knob's (a rule ID, perhaps with a part), known or not: `RETRY-9`, `GET-6`. */
export function looksLikeKnob(name: string): boolean {
  return /^[A-Za-z]+-\d+(?:\.[A-Za-z-]+)?$/.test(name.trim()) && !/^G\d+/i.test(name.trim());
}
