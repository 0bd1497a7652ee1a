/**
 * Compare's form, as data: what is being compared (two readings of a gap or a draft's number, two seeds, or
 * the run against a fork of it at a time), the fields of each, and the request they make — the two sides to
 * run, or what is wrong with the fields (said where, as the form names them).
 */
import { forkSides, readingSides, seedSides, type CompareBase, type CompareSide, type ForkChoice } from "./compare.ts";
import { formatOffset, parseOffset } from "./time.ts";
import type { ReadingControl } from "./readings.ts";

export type CompareMode = "readings" | "seeds" | "fork";

/** The form's fields, as typed. */
export interface CompareForm {
  readonly mode: CompareMode;
  /** The reading or number compared, and its two values. */
  readonly controlKey: string;
  readonly valueA: string;
  readonly valueB: string;
  readonly seedA: string;
  readonly seedB: string;
  /** The fork's time, as an offset (`+0:30:00`, `30m`). */
  readonly forkAt: string;
  /** The change the fork makes (a {@link ForkChoice}'s value; the first when none is chosen). */
  readonly choiceValue: string;
  readonly probability: string;
}

export type CompareFormAction =
  | { readonly type: "mode"; readonly mode: CompareMode }
  /** Another reading or number: its value in the run is A's, another one B's. */
  | { readonly type: "control"; readonly control: ReadingControl | undefined; readonly key: string }
  | {
      readonly type: "field";
      readonly field: "valueA" | "valueB" | "seedA" | "seedB" | "forkAt" | "choiceValue" | "probability";
      readonly value: string;
    };

/** A fork that ran: its scenario text, to save, and its time (after the start). */
export interface ForkRun {
  readonly name: string;
  readonly text: string;
  readonly atMs: number;
}

/** What to run: the two sides, and the fork if side B is one. */
export interface CompareRequest {
  readonly sides: readonly [CompareSide, CompareSide];
  readonly fork?: ForkRun | undefined;
}

/** The value a control's B starts at: another of its options than the run's. */
function otherValue(control: ReadingControl | undefined): string {
  return control?.options.find((o) => o !== control.value) ?? control?.value ?? "";
}

/** The form as it opens over `base`: its first control, the run's seed and the next, forked at the playhead. */
export function initialCompareForm(base: CompareBase, controls: readonly ReadingControl[]): CompareForm {
  const control = controls[0];
  return {
    mode: "readings",
    controlKey: control?.key ?? "",
    valueA: control?.value ?? "",
    valueB: control?.options.find((o) => o !== control.value) ?? "",
    seedA: String(base.seed),
    seedB: typeof base.seed === "number" ? String(base.seed + 1) : `${base.seed}-b`,
    forkAt: formatOffset(base.startMs + base.playheadOffsetMs, base.startMs),
    choiceValue: "",
    probability: "0.5",
  };
}

export function compareFormReducer(form: CompareForm, action: CompareFormAction): CompareForm {
  switch (action.type) {
    case "mode":
      return { ...form, mode: action.mode };
    case "control":
      return {
        ...form,
        controlKey: action.key,
        valueA: action.control?.value ?? "",
        valueB: otherValue(action.control),
      };
    case "field":
      return { ...form, [action.field]: action.value };
  }
}

/** The control the form compares: the one chosen, else the first. */
export function controlOf(form: CompareForm, controls: readonly ReadingControl[]): ReadingControl | undefined {
  return controls.find((c) => c.key === form.controlKey) ?? controls[0];
}

/** The fork's time after the start, or undefined when the field is not a time. */
export function forkMsOf(form: CompareForm): number | undefined {
  return parseOffset(form.forkAt);
}

/** The fork's change: the one chosen, else the first the fork's time offers. */
export function choiceOf(form: CompareForm, choices: readonly ForkChoice[]): ForkChoice | undefined {
  return choices.find((c) => c.value === form.choiceValue) ?? choices[0];
}

export type CompareFormRequest =
  { readonly ok: true; readonly request: CompareRequest } | { readonly ok: false; readonly errors: readonly string[] };

const refused = (...errors: string[]): CompareFormRequest => ({ ok: false, errors });

/**
 * The request the form makes over `base`, or what is wrong with it. `choices` are the changes a fork at the
 * form's time can make ({@link forkChoices} of the base's text).
 */
export function requestOfForm(
  form: CompareForm,
  base: CompareBase,
  controls: readonly ReadingControl[],
  choices: readonly ForkChoice[],
): CompareFormRequest {
  if (form.mode === "readings") {
    const control = controlOf(form, controls);
    if (control === undefined) return refused("No reading to compare.");
    return { ok: true, request: { sides: readingSides(base, control, form.valueA, form.valueB) } };
  }
  if (form.mode === "seeds") {
    if (form.seedA.trim() === "" || form.seedB.trim() === "")
      return refused("Give both seeds (a number, or any text).");
    return { ok: true, request: { sides: seedSides(base, form.seedA, form.seedB) } };
  }
  const forkMs = forkMsOf(form);
  if (forkMs === undefined) return refused(`Fork at: "${form.forkAt}" is not a time (try +0:30:00 or 30m).`);
  const choice = choiceOf(form, choices);
  if (choice === undefined) return refused(`Nothing to change at ${form.forkAt}: no fault is active then.`);
  const p = Number(form.probability);
  if (choice.probability === true && !(form.probability.trim() !== "" && p >= 0 && p <= 1)) {
    return refused(`Probability: "${form.probability}" is not a number from 0 to 1.`);
  }
  const change = choice.change.kind === "set-probability" ? { ...choice.change, probability: p } : choice.change;
  const made = forkSides(base, forkMs, change);
  if (!made.ok) return refused(...made.errors);
  return { ok: true, request: { sides: made.sides, fork: { name: made.name, text: made.text, atMs: forkMs } } };
}
