/**
 * The readings panel: one control per switchable gap (app/sim/scenario.ts
 * SWITCHABLE_GAPS) — G16 has two, its jitter and its fallback window — with
 * the choices docs/gaps.md gives, the reading in force selected, and the
 * `--set` pair a change makes.
 */
import { gapById } from "../../../app/protocol/gaps.ts";
import { SPEC_CONSTANTS, SPEC_KNOBS } from "../../../app/protocol/specConstants.ts";
import { knobValueText } from "../../../app/sim/constants.ts";
import { ENUM_READINGS, SWITCHABLE_GAPS } from "../../../app/sim/scenario.ts";

/** One control of the panel. */
export interface ReadingControl {
  /** `G16`, or `G16 fallback-window` for one parameter of a gap. */
  readonly key: string;
  readonly gap: string;
  readonly param?: "jitter" | "fallback-window" | "tolerance-seconds";
  readonly label: string;
  /** The gap's title, from docs/gaps.md. */
  readonly title: string;
  readonly options: readonly string[];
  readonly value: string;
}

/** `jitter=on, fallback-window=2h` → { jitter: "on", "fallback-window": "2h" }. */
export function readingParams(reading: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (reading ?? "").split(",")) {
    const [k, v] = part.split("=").map((s) => s.trim());
    if (k && v) out[k] = v;
  }
  return out;
}

const withValue = (options: readonly string[], value: string): string[] =>
  options.includes(value) ? [...options] : [...options, value];

/** The panel's controls for the readings in force (`summary.readings`). */
export function readingControls(readings: Readonly<Record<string, string>>): ReadingControl[] {
  const controls: ReadingControl[] = [];
  for (const gap of SWITCHABLE_GAPS) {
    const title = (gapById(gap)?.title ?? gap).replace(/`/g, "");
    const current = readings[gap] ?? "";
    if (gap === "G16") {
      const p = readingParams(current);
      const jitter = p["jitter"] ?? "on";
      const window = p["fallback-window"] ?? "2h";
      controls.push(
        {
          key: "G16 fallback-window",
          gap,
          param: "fallback-window",
          label: "G16 fallback window",
          title,
          options: withValue(["1h", "2h", "3h", "4h"], window),
          value: window,
        },
        { key: "G16 jitter", gap, param: "jitter", label: "G16 jitter", title, options: ["on", "off"], value: jitter },
      );
    } else if (gap === "G3") {
      const value = readingParams(current)["tolerance-seconds"] ?? "300";
      controls.push({
        key: "G3",
        gap,
        param: "tolerance-seconds",
        label: "G3 tolerance (seconds)",
        title,
        options: withValue(["60", "300", "600"], value),
        value,
      });
    } else {
      controls.push({
        key: gap,
        gap,
        label: gap,
        title,
        options: withValue(ENUM_READINGS[gap] ?? [], current),
        value: current,
      });
    }
  }
  return controls;
}

/**
 * One control per number of the draft (Compare can change them):
 * the knob's value in force (`constants`, the run's departures; SPEC.md's
 * otherwise) and half and twice SPEC.md's value to choose from.
 */
export function constantControls(constants: Readonly<Record<string, string>> = {}): ReadingControl[] {
  return SPEC_KNOBS.map((knob) => {
    const spec = SPEC_CONSTANTS[knob.field];
    const value = constants[knob.name] ?? knobValueText(knob, spec);
    const half =
      knob.kind === "duration-s" ? Math.round(spec / 2) : knob.kind === "duration-ms" ? Math.round(spec / 2) : spec / 2;
    const twice = knob.maxExclusive === true ? Math.min(spec * 2, (spec + knob.max) / 2) : spec * 2;
    const options = [...new Set([half, spec, twice].map((n) => knobValueText(knob, n)))];
    return {
      key: knob.name,
      gap: knob.name,
      label: `${knob.name} ${knob.title}`,
      title: `${knob.title} [${knob.rules.join(", ")}], SPEC.md: ${knobValueText(knob, spec)}`,
      options: withValue(options, value),
      value,
    };
  });
}

/** The `--set` pair for one control set to `value`: `["G16", "fallback-window=4h"]`, `["G7", "ignored"]`. */
export function readingSetting(control: Pick<ReadingControl, "gap" | "param">, value: string): [string, string] {
  return [control.gap, control.param === undefined ? value : `${control.param}=${value}`];
}

/** Settings merged in order: a later one for the same gap and parameter replaces the earlier. */
export function mergeSettings(
  settings: readonly (readonly [string, string])[],
  next: readonly [string, string],
): [string, string][] {
  const keyOf = ([gap, v]: readonly [string, string]): string =>
    `${gap} ${v.includes("=") ? v.slice(0, v.indexOf("=")) : ""}`;
  return [
    ...settings.filter((s) => keyOf(s) !== keyOf(next)).map((s) => [s[0], s[1]] as [string, string]),
    [next[0], next[1]],
  ];
}
