/**
 * The Compare view's data (README, "Compare and fork"): what each of the
 * two runs is (two readings of a gap, two seeds, or the run and a fork of
 * it), the changes a fork can make at its time, and — from the two traces —
 * the difference table, the verdicts and the shared time axis. The table and
 * verdicts are app/sim/compare.ts's, the same as `mailscope compare` prints.
 */
import { compareRuns, type CompareTable, type Parting } from "../../../app/sim/compare.ts";
import { changeText, forkableFaults, forkScenario, type ForkChange } from "../../../app/sim/fork.ts";
import { formatScenarioError, parseScenarioText } from "../../../app/sim/scenario.ts";
import { DEFAULT_START_MS } from "../../../app/sim/scheduler.ts";
import { formatOffset } from "../../../app/trace/offset.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { mergeSettings, readingSetting, type ReadingControl } from "./readings.ts";

/** The run on screen, which the comparison starts from. */
export interface CompareBase {
  readonly name: string;
  readonly text: string;
  readonly file: string;
  readonly seed: number | string;
  /**
   * The bytes of the scenario's `eml:` files, as the run's `start` had them: each side's run gets them too.
   * (The app reads no eml: file itself, so today a run with an eml: message never starts, and Compare of
   * one is not offered; a side without them fails as the live run does, at the message's `eml` field.)
   */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
  /** The readings set in the run view (`--set` pairs), over the scenario's own. */
  readonly settings: readonly (readonly [string, string])[];
  /** The readings in force (the summary's), for the reading controls. */
  readonly readings: Readonly<Record<string, string>>;
  /** The draft's numbers that depart from SPEC.md in the run (the summary's), for their controls. */
  readonly constants?: Readonly<Record<string, string>>;
  readonly startMs: number;
  /** The playhead of the run view, as an offset from the start: where a fork starts by default. */
  readonly playheadOffsetMs: number;
}

/** One of the two runs, as the worker is asked for it. */
export interface CompareSide {
  readonly label: "A" | "B";
  /** `G16 fallback window 1h`, `seed 2`, `original`, `fork at +0:30:00: ended fault b-down`. */
  readonly title: string;
  readonly text: string;
  readonly file: string;
  readonly seed: number | string;
  readonly readings: readonly (readonly [string, string])[];
  /** The bytes of the scenario's `eml:` files (the base's: a fork keeps its messages). */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
}

/** The base's eml: bytes, as a side's member. */
function emlsOf(base: CompareBase): Pick<CompareSide, "emls"> {
  return base.emls !== undefined ? { emls: base.emls } : {};
}

/** Two readings of one control: the run view's settings with that control set to `a`, then to `b`. */
export function readingSides(
  base: CompareBase,
  control: Pick<ReadingControl, "gap" | "param" | "label">,
  a: string,
  b: string,
): [CompareSide, CompareSide] {
  const side = (label: "A" | "B", value: string): CompareSide => ({
    label,
    title: `${control.label} ${value}`,
    text: base.text,
    file: base.file,
    seed: base.seed,
    readings: mergeSettings(base.settings, readingSetting(control, value)),
    ...emlsOf(base),
  });
  return [side("A", a), side("B", b)];
}

/** `42` is the number 42; anything else a string seed (as `--seed` reads it). */
export function seedOf(text: string): number | string {
  const t = text.trim();
  return /^\d+$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : t;
}

/** Two seeds of the run view's scenario and readings. */
export function seedSides(base: CompareBase, a: string, b: string): [CompareSide, CompareSide] {
  const side = (label: "A" | "B", seed: string): CompareSide => ({
    label,
    title: `seed ${String(seedOf(seed))}`,
    text: base.text,
    file: base.file,
    seed: seedOf(seed),
    readings: base.settings,
    ...emlsOf(base),
  });
  return [side("A", a), side("B", b)];
}

/** A change a fork can make, as the form offers it. */
export interface ForkChoice {
  /** A stable value for the form's select. */
  readonly value: string;
  readonly label: string;
  readonly change: ForkChange;
  /** Whether the change asks for a probability. */
  readonly probability?: boolean;
}

/**
 * The changes a fork of `text` at `atMs` (after the start) can make: end or
 * re-weigh each fault active then, start an outage of a receiver's host, or
 * submit again each message of the scenario.
 */
export function forkChoices(text: string, atMs: number): ForkChoice[] {
  const parsed = parseScenarioText(text);
  if (!parsed.ok) return [];
  const { scenario } = parsed;
  const t = (scenario.start !== undefined ? Date.parse(scenario.start) : DEFAULT_START_MS) + atMs;
  const choices: ForkChoice[] = [];
  for (const f of forkableFaults(scenario)) {
    if (!(f.fromMs <= t && t < f.untilMs)) continue;
    choices.push({
      value: `end ${f.label}`,
      label: `End fault ${f.label} (${f.kind}) now`,
      change: { kind: "end-fault", fault: f.label },
    });
    choices.push({
      value: `probability ${f.label}`,
      label: `Change the probability of fault ${f.label} (now ${f.probability})`,
      change: { kind: "set-probability", fault: f.label, probability: f.probability === 1 ? 0.5 : 1 },
      probability: true,
    });
  }
  for (const [domain, d] of Object.entries(scenario.domains)) {
    if (d.receiver === "none") continue;
    const endpoint = d.endpoint;
    const host = typeof endpoint === "string" ? endpoint.split(":")[0] : (endpoint?.host ?? `mx.${domain}`);
    choices.push({
      value: `start ${host}`,
      label: `Start an outage of ${host} (connection refused) now`,
      change: { kind: "start-fault", faultKind: "connection-refused", host: host ?? `mx.${domain}` },
    });
  }
  scenario.messages.forEach((m, i) => {
    if (typeof m.from !== "string") return;
    const to = Array.isArray(m.to) ? m.to.map(String) : [String(m.to)];
    choices.push({
      value: `submit ${i}`,
      label: `Submit a message from ${m.from} to ${to.join(", ")} now`,
      change: { kind: "submit", from: m.from, to },
    });
  });
  return choices;
}

/** The fork's two sides (the run as it is, and its fork), or the fork's errors. */
export type ForkSides =
  | {
      readonly ok: true;
      readonly sides: [CompareSide, CompareSide];
      readonly text: string;
      readonly name: string;
      readonly summary: string;
    }
  | { readonly ok: false; readonly errors: readonly string[] };

/** The run view's run against its fork at `atMs` with `change`. */
export function forkSides(base: CompareBase, atMs: number, change: ForkChange): ForkSides {
  const fork = forkScenario(base.text, atMs, change, base.file);
  if (!fork.ok) return { ok: false, errors: fork.errors.map(formatScenarioError) };
  const at = formatOffset(base.startMs + atMs, base.startMs);
  return {
    ok: true,
    text: fork.text,
    name: fork.name,
    summary: fork.summary,
    sides: [
      {
        label: "A",
        title: "original",
        text: base.text,
        file: base.file,
        seed: base.seed,
        readings: base.settings,
        ...emlsOf(base),
      },
      {
        label: "B",
        title: `fork at ${at}: ${changeText(change)}`,
        text: fork.text,
        file: `${fork.name}.yaml`,
        seed: base.seed,
        readings: base.settings,
        ...emlsOf(base),
      },
    ],
  };
}

/** The comparison of two finished runs, as the view draws it. */
export interface Comparison {
  readonly table: CompareTable;
  /** Where the two runs first part: the first decision one made otherwise, with both. */
  readonly parting: Parting;
  /** Where the shared time axis ends: the later of the two runs' last events. */
  readonly axisEndMs: number;
}

/** The difference table and the shared axis of runs A and B (the whole traces' events). */
export function comparisonOf(a: readonly RecordedEvent[], b: readonly RecordedEvent[], startMs: number): Comparison {
  return {
    ...compareRuns(a, b, startMs),
    axisEndMs: Math.max(a.at(-1)?.timeMs ?? startMs, b.at(-1)?.timeMs ?? startMs),
  };
}
