/**
 * What a parameter sweep varies (note 0066, `mailscope sweep <scenario>
 * --vary <path>=<values>`, and the app's Sweep view): the paths a sweep can
 * address, the values it takes, and the scenario of each point.
 *
 * A path addresses
 *
 * - any number or duration of the scenario, as its fields are written:
 *   `faults.network[0].until`, `faults.network[b-down].until` (an item by its
 *   id), `messages[m1].at`, `domains.b.example.policy.unavailable.times`
 *   (a domain name's dots are read as the scenario's keys have them). The
 *   scenario's JSON Schema (the editor's, from the zod schema) says which
 *   fields hold a duration, a time, an integer or a number, and a field the
 *   schema has may be set where the scenario leaves it out;
 * - a gap reading as `--set` names it: `G16.fallback-window`,
 *   `G3.tolerance-seconds`, and a switchable gap's named readings (`G7`,
 *   `G16.jitter`) as a list;
 * - one of the draft's numbers by its knob (app/sim/constants.ts):
 *   `RETRY-2.cap`, `RETRY-6`.
 *
 * Values are a range with a step (`1h..6h/30m`, `60..5400/60`) or a list
 * (`1h,2h,4h`). Several axes make a grid of every combination, the last axis
 * varying fastest. A point's scenario is the text with its field values
 * written in (comments and layout kept) and its readings and knobs as `--set`
 * pairs, so that the point is a run like any other.
 */
import { isScalar, parseDocument, type Document } from "yaml";
import { SPEC_KNOBS, specKnob, type SpecKnob } from "../protocol/specConstants.ts";
import { durationWords, knobRangeText, parseKnobValue } from "./constants.ts";
import { formatBoundMs, parseDurationMs } from "./faultScope.ts";
import { ENUM_READINGS, scenarioJsonSchema, SWITCHABLE_GAPS } from "./scenario.ts";

/** The most points a sweep's grid has. */
export const MAX_SWEEP_POINTS = 10_000;
/** The most runs a sweep makes (points × seeds, before any refinement). */
export const MAX_SWEEP_RUNS = 100_000;

/**
 * What an axis's values are: a duration (ms), a time after the start (ms,
 * written as a duration), an integer, a number, or one of named choices.
 */
export type AxisKind = "duration" | "time" | "integer" | "number" | "choice";

/** What an axis changes. */
export type AxisTarget =
  /** A field of the scenario's text, by its path in the YAML document. */
  | { readonly kind: "field"; readonly path: readonly (string | number)[] }
  /** A gap reading, by `--set` pair: `["G16", "fallback-window=<value>"]`, `["G7", "<value>"]`. */
  | { readonly kind: "reading"; readonly gap: string; readonly param?: string }
  /** One of the draft's numbers: `["RETRY-2.cap", "<value>"]`. */
  | { readonly kind: "constant"; readonly knob: string };

/** One value of an axis. */
export interface SweepValue {
  /** As written: `2h30m`, `0.5`, `ignored`. */
  readonly text: string;
  /** Its number (ms for durations and times); undefined for a choice. */
  readonly number?: number;
}

/** One varied path. */
export interface SweepAxis {
  /** The path as the output names it: `faults.network[b-down].until`, `G16.fallback-window`, `RETRY-2.cap`. */
  readonly path: string;
  readonly target: AxisTarget;
  readonly kind: AxisKind;
  readonly values: readonly SweepValue[];
}

/** A point of the grid: one value of each axis. */
export interface SweepPoint {
  readonly index: number;
  /** The index of its value on each axis. */
  readonly coords: readonly number[];
  readonly values: readonly SweepValue[];
}

/** A sweep ready to run. */
export interface SweepPlan {
  readonly axes: readonly SweepAxis[];
  readonly points: readonly SweepPoint[];
  /** The seeds every point runs under; undefined: once, with the scenario's seed. */
  readonly seeds?: readonly (number | string)[];
}

/** A field the sweep can vary, as the app's picker and the errors list them. */
export interface SweepField {
  readonly path: string;
  readonly kind: AxisKind;
  /** Its value in the scenario, as written; undefined when the scenario leaves it out. */
  readonly current?: string;
  readonly description?: string;
  /** For a choice: the values it takes. */
  readonly options?: readonly string[];
}

// ---------------------------------------------------------------------------
// The scenario's schema, as far as a sweep reads it

interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMaximum?: number;
  readonly const?: unknown;
}

let schemaRoot: SchemaNode | undefined;
/** The scenario's JSON Schema, made once when a sweep first needs it. */
function scenarioSchemaRoot(): SchemaNode {
  schemaRoot ??= scenarioJsonSchema() as SchemaNode;
  return schemaRoot;
}

function branches(node: SchemaNode): readonly SchemaNode[] {
  return node.anyOf ?? node.oneOf ?? [node];
}

/** The schema of `key` in an object `node`; `parent` (the object's value) picks a discriminated branch by its `kind`. */
function propertyOf(node: SchemaNode, key: string, parent: unknown): SchemaNode | undefined {
  const kind = isRecord(parent) ? parent["kind"] : undefined;
  const all = branches(node);
  const chosen = all.filter((b) => b.properties?.["kind"]?.const === kind);
  for (const b of chosen.length > 0 ? chosen : all) {
    const p = b.properties?.[key];
    if (p !== undefined) return p;
  }
  for (const b of all) if (typeof b.additionalProperties === "object") return b.additionalProperties;
  return undefined;
}

function itemsOf(node: SchemaNode): SchemaNode | undefined {
  return branches(node).find((b) => b.items !== undefined)?.items;
}

const DURATION_UNITS = "(?:ms|s|m|h|d|w)";

/** What a leaf of the schema holds, when it is a number, a duration or a time. */
function leafKind(node: SchemaNode): { kind: AxisKind; min?: number; max?: number } | undefined {
  let duration = false;
  let time = false;
  let numeric: SchemaNode | undefined;
  for (const b of branches(node)) {
    if (b.type === "string" && typeof b.pattern === "string" && b.pattern.includes(DURATION_UNITS)) {
      duration = true;
      if (b.pattern.includes("T\\d{2}")) time = true;
    } else if (b.type === "number" || b.type === "integer") numeric ??= b;
  }
  if (duration)
    return { kind: time ? "time" : "duration", ...(numeric?.maximum !== undefined && { max: numeric.maximum }) };
  if (numeric === undefined) return undefined;
  return {
    kind: numeric.type === "integer" ? "integer" : "number",
    ...(numeric.minimum !== undefined && { min: numeric.minimum }),
    ...(numeric.maximum !== undefined && { max: numeric.maximum }),
    ...(numeric.exclusiveMaximum !== undefined && { max: numeric.exclusiveMaximum }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// Paths

type Token =
  | { readonly kind: "key"; readonly name: string }
  | { readonly kind: "index"; readonly n: number }
  | { readonly kind: "id"; readonly id: string };

/** `faults.network[b-down].until` → key faults, key network, id b-down, key until; undefined when it does not read. */
function tokens(path: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === "[") {
      const end = path.indexOf("]", i);
      if (end < 0) return undefined;
      const inner = path.slice(i + 1, end).trim();
      const quoted = /^(["'])(.*)\1$/.exec(inner);
      if (quoted) out.push({ kind: "key", name: quoted[2] ?? "" });
      else if (/^\d+$/.test(inner)) out.push({ kind: "index", n: Number(inner) });
      else if (inner !== "") out.push({ kind: "id", id: inner });
      else return undefined;
      i = end + 1;
      if (path[i] === ".") i++;
      continue;
    }
    let end = i;
    while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
    const name = path.slice(i, end);
    if (name === "") return undefined;
    out.push({ kind: "key", name });
    i = path[end] === "." ? end + 1 : end;
  }
  return out.length > 0 ? out : undefined;
}

/** A key as a path writes it: bare when it reads back as itself, else quoted (`["b.example"]` is not needed: dots are matched). */
function keyText(key: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
}

/** `[b-down]` for an item with an id, else `[0]`. */
function itemText(item: unknown, index: number): string {
  const id = isRecord(item) ? item["id"] : undefined;
  return typeof id === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id) && !/^\d+$/.test(id)
    ? `[${id}]`
    : `[${index}]`;
}

function join(display: string, key: string): string {
  const k = keyText(key);
  return display === "" ? k : k.startsWith("[") ? `${display}${k}` : `${display}.${k}`;
}

/** A field of the scenario the path names. */
interface FieldAt {
  readonly path: readonly (string | number)[];
  readonly display: string;
  readonly kind: AxisKind;
  readonly min?: number;
  readonly max?: number;
  readonly current?: unknown;
}

/** Follows `path` through the scenario's data and schema; a message saying where it stops when it does not lead to a number or a duration. */
function fieldAt(data: unknown, path: string): { ok: true; field: FieldAt } | { ok: false; message: string } {
  const list = tokens(path);
  if (list === undefined)
    return { ok: false, message: `"${path}" is not a path (fields by dots, items by [index] or [id])` };
  let value: unknown = data;
  let schema: SchemaNode | undefined = scenarioSchemaRoot();
  const docPath: (string | number)[] = [];
  let display = "";
  let i = 0;
  while (i < list.length) {
    const t = list[i] as Token;
    if (schema === undefined) return { ok: false, message: `the scenario has no field ${display}` };
    if (Array.isArray(value)) {
      let index: number;
      if (t.kind === "index") index = t.n;
      else {
        const id = t.kind === "id" ? t.id : t.name;
        index = value.findIndex((item) => isRecord(item) && item["id"] === id);
      }
      if (index < 0 || index >= value.length) {
        const items = value.map((item, k) => itemText(item, k));
        return {
          ok: false,
          message: `${display} has no item ${t.kind === "index" ? `[${t.n}]` : `[${t.kind === "id" ? t.id : t.name}]`}; it has ${items.length === 0 ? "none" : items.join(", ")}`,
        };
      }
      display += itemText(value[index], index);
      docPath.push(index);
      value = value[index];
      schema = itemsOf(schema);
      i++;
      continue;
    }
    if (t.kind !== "key") return { ok: false, message: `${display || "the scenario"} is not a list` };
    if (value !== undefined && !isRecord(value)) return { ok: false, message: `${display} is a value, not a mapping` };
    // The longest run of names that is one key (a domain name's dots).
    let j = list.length;
    let key: string | undefined;
    for (; j > i; j--) {
      const run = list.slice(i, j);
      if (!run.every((r) => r.kind === "key")) continue;
      const name = run.map((r) => (r as { name: string }).name).join(".");
      if (isRecord(value) && Object.hasOwn(value, name)) {
        key = name;
        break;
      }
    }
    if (key === undefined) {
      // Not in the scenario: a field the schema has may still be set, when it is the last name.
      key = t.name;
      j = i + 1;
      const declared = branches(schema).some((b) => b.properties?.[key as string] !== undefined);
      if (!declared || j < list.length) {
        const known = isRecord(value) ? Object.keys(value).map((k) => join(display, k)) : [];
        return {
          ok: false,
          message: `${join(display, key)} is not in the scenario${known.length > 0 ? `; ${display || "it"} has ${known.join(", ")}` : ""}`,
        };
      }
    }
    const parent = value;
    value = isRecord(value) ? value[key] : undefined;
    schema = propertyOf(schema, key, parent);
    display = join(display, key);
    docPath.push(key);
    i = j;
  }
  const leaf = schema === undefined ? undefined : leafKind(schema);
  if (leaf === undefined || isRecord(value) || Array.isArray(value)) {
    return { ok: false, message: `${display} is not a number or a duration` };
  }
  return { ok: true, field: { path: docPath, display, ...leaf, ...(value !== undefined && { current: value }) } };
}

const NOT_SWEPT: ReadonlySet<string> = new Set(["expectations", "readings", "constants", "lesson", "annotations"]);

/** The numbers and durations written in the scenario (not its expectations), with their paths. */
export function scenarioFields(data: unknown): SweepField[] {
  const out: SweepField[] = [];
  const walk = (value: unknown, schema: SchemaNode | undefined, display: string): void => {
    if (schema === undefined) return;
    if (Array.isArray(value)) {
      const items = itemsOf(schema);
      value.forEach((item, k) => walk(item, items, `${display}${itemText(item, k)}`));
      return;
    }
    if (isRecord(value)) {
      for (const [key, child] of Object.entries(value)) {
        // Not the world's: what the run is checked against, the readings and numbers listed on their own, and a
        // lesson's words and the place of its notes (note 0080), which change nothing the protocol does.
        if (display === "" && NOT_SWEPT.has(key)) continue;
        walk(child, propertyOf(schema, key, value), join(display, key));
      }
      return;
    }
    const leaf = leafKind(schema);
    if (leaf === undefined || value === null || value === undefined) return;
    out.push({
      path: display,
      kind: leaf.kind,
      current: String(value),
      ...(schema.description !== undefined && { description: schema.description }),
    });
  };
  walk(data, scenarioSchemaRoot(), "");
  return out;
}

/** The gap readings and the draft's numbers a sweep can vary, whatever the scenario. */
export function settingFields(): SweepField[] {
  const out: SweepField[] = [];
  for (const gap of SWITCHABLE_GAPS) {
    if (gap === "G16") {
      out.push(
        { path: "G16.fallback-window", kind: "duration", description: "G16: the fallback window (RETRY-4, RETRY-5)" },
        { path: "G16.jitter", kind: "choice", options: ["on", "off"], description: "G16: jitter on or off (RETRY-3)" },
      );
    } else if (gap === "G3") {
      out.push({ path: "G3.tolerance-seconds", kind: "integer", description: "G3: signature timestamp tolerance, s" });
    } else {
      const options = ENUM_READINGS[gap] ?? [];
      out.push({ path: gap, kind: "choice", options, description: `${gap}: ${options.join(" or ")}` });
    }
  }
  for (const knob of SPEC_KNOBS) {
    out.push({
      path: knob.name,
      kind: knob.kind === "number" ? "number" : "duration",
      description: `${knob.title} [${knob.rules.join(", ")}]: ${knobRangeText(knob)}`,
    });
  }
  return out;
}

/** Every path a sweep of this scenario can vary: its fields, then the readings and the draft's numbers. */
export function sweepFields(data: unknown): SweepField[] {
  return [...scenarioFields(data), ...settingFields()];
}

/** The valid paths in one line, for an error: `messages[m1].at, faults.network[b-down].until; readings: …; the draft's numbers: …`. */
export function validPathsText(data: unknown): string {
  const fields = scenarioFields(data).map((f) => f.path);
  const settings = settingFields();
  const readings = settings.filter((s) => /^G\d/.test(s.path)).map((s) => s.path);
  const knobs = settings.filter((s) => !/^G\d/.test(s.path)).map((s) => s.path);
  return `the scenario's numbers and durations: ${fields.length > 0 ? fields.join(", ") : "none"}; gap readings: ${readings.join(", ")}; the draft's numbers: ${knobs.join(", ")}`;
}

// ---------------------------------------------------------------------------
// Values

/** A located problem with a `--vary` (or the form's field and range). */
export interface VaryError {
  readonly path: string;
  readonly message: string;
}

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

interface ValueRules {
  readonly kind: AxisKind;
  /** Durations may be given as bare ms (a scenario's fields); else a duration needs its unit. */
  readonly bareMs: boolean;
  readonly min?: number;
  readonly max?: number;
  readonly options?: readonly string[];
  /** A further check of one value (a knob's bounds). */
  readonly check?: (value: SweepValue) => string | undefined;
}

const KIND_WORDS: Readonly<Record<AxisKind, string>> = {
  duration: "a duration such as 90s, 30m or 2h",
  time: "a time after the start such as 30m or 2h30m",
  integer: "a whole number",
  number: "a number",
  choice: "one of its readings",
};

function parseOne(text: string, rules: ValueRules): Parsed<SweepValue> {
  const t = text.trim();
  const wrong = (why = KIND_WORDS[rules.kind]): Parsed<SweepValue> => ({
    ok: false,
    message: `"${t}" is not ${why}`,
  });
  let value: SweepValue;
  switch (rules.kind) {
    case "choice":
      if (!(rules.options ?? []).includes(t)) return wrong(`one of ${(rules.options ?? []).join(", ")}`);
      value = { text: t };
      break;
    case "integer":
      if (!/^-?\d+$/.test(t)) return wrong();
      value = { text: t, number: Number(t) };
      break;
    case "number":
      if (!/^-?\d+(?:\.\d+)?$/.test(t)) return wrong();
      value = { text: String(Number(t)), number: Number(t) };
      break;
    default: {
      const bare = /^\d+(?:\.\d+)?$/.test(t);
      if (bare && !rules.bareMs) return wrong(`${KIND_WORDS[rules.kind]} (with its unit)`);
      const ms = parseDurationMs(t);
      if (ms === undefined) return wrong();
      value = { text: bare ? t : durationWords(ms), number: ms };
    }
  }
  const n = value.number;
  if (n !== undefined && rules.min !== undefined && n < rules.min) {
    return { ok: false, message: `${value.text} is below the least value, ${boundText(rules.min, rules.kind)}` };
  }
  if (n !== undefined && rules.max !== undefined && n > rules.max) {
    return { ok: false, message: `${value.text} is above the greatest value, ${boundText(rules.max, rules.kind)}` };
  }
  const problem = rules.check?.(value);
  return problem === undefined ? { ok: true, value } : { ok: false, message: problem };
}

function boundText(n: number, kind: AxisKind): string {
  return kind === "duration" || kind === "time" ? formatBoundMs(n) : String(n);
}

/** Decimal places of a number as written, to keep a range's steps exact (`0.1` steps give 0.3, not 0.30000000000000004). */
function decimals(text: string): number {
  const dot = text.indexOf(".");
  return dot < 0 || /[a-z]/i.test(text) ? 0 : text.length - dot - 1;
}

/**
 * The values of `text`: a list (`1h,2h,4h`), or a range `from..to/step`
 * (the step may be left out for whole numbers: 1). A range holds `from`, then
 * every step up to `to` (`to` itself when a step lands on it).
 */
function parseValues(text: string, rules: ValueRules): Parsed<SweepValue[]> {
  const t = text.trim();
  if (t === "") return { ok: false, message: "no values: give a list (1h,2h,4h) or a range with a step (1h..6h/30m)" };
  const range = /^(.+?)\.\.(.+?)(?:\/(.+))?$/.exec(t);
  if (range === null) {
    const values: SweepValue[] = [];
    for (const part of t.split(",")) {
      if (part.trim() === "") return { ok: false, message: `an empty value in the list "${t}"` };
      const v = parseOne(part, rules);
      if (!v.ok) return v;
      values.push(v.value);
    }
    if (values.length > MAX_SWEEP_POINTS) {
      return { ok: false, message: `${values.length} values; a sweep has at most ${MAX_SWEEP_POINTS} points` };
    }
    return { ok: true, value: values };
  }
  if (rules.kind === "choice") return { ok: false, message: `a reading is chosen from a list, not a range ("${t}")` };
  const [, fromText = "", toText = "", stepText] = range;
  const from = parseOne(fromText, rules);
  if (!from.ok) return from;
  const to = parseOne(toText, rules);
  if (!to.ok) return to;
  let step: number;
  let stepDecimals = 0;
  if (stepText === undefined) {
    if (rules.kind !== "integer") {
      return { ok: false, message: `the range "${t}" needs a step: ${fromText}..${toText}/<step>` };
    }
    step = 1;
  } else {
    const s = parseOne(stepText, { ...rules, check: undefined, min: undefined, max: undefined });
    if (!s.ok) return { ok: false, message: `the step of "${t}": ${s.message}` };
    step = s.value.number ?? 0;
    stepDecimals = decimals(stepText.trim());
  }
  const a = from.value.number ?? 0;
  const b = to.value.number ?? 0;
  if (!(step > 0)) return { ok: false, message: `the step of "${t}" must be more than 0` };
  if (b < a)
    return { ok: false, message: `the range "${t}" is inverted: ${toText.trim()} comes before ${fromText.trim()}` };
  const count = Math.floor((b - a) / step + 1e-9) + 1;
  if (count > MAX_SWEEP_POINTS) {
    return { ok: false, message: `"${t}" has ${count} values; a sweep has at most ${MAX_SWEEP_POINTS} points` };
  }
  const places = Math.max(decimals(fromText.trim()), stepDecimals);
  const values: SweepValue[] = [];
  for (let k = 0; k < count; k++) {
    const n = Number((a + k * step).toFixed(places));
    const v = valueOf(n, rules);
    const checked = parseOne(v.text, rules);
    if (!checked.ok) return checked;
    values.push(checked.value);
  }
  return { ok: true, value: values };
}

/** A number as an axis of `rules`' kind writes it: a duration for durations and times. */
function valueOf(n: number, rules: Pick<ValueRules, "kind">): SweepValue {
  if (rules.kind === "duration" || rules.kind === "time") {
    return { text: Number.isInteger(n) ? durationWords(n) : String(n), number: n };
  }
  return { text: String(n), number: n };
}

/** The value of `n` on `axis` (a refinement's midpoint), written as the axis writes its values. */
export function axisValue(axis: SweepAxis, n: number): SweepValue {
  return valueOf(axis.kind === "integer" ? Math.round(n) : n, axis);
}

// ---------------------------------------------------------------------------
// Axes

/** `G16.fallback-window=1h..4h/1h` → its path and values. */
export function parseVaryArgument(text: string): { path: string; values: string } | undefined {
  const eq = text.indexOf("=");
  if (eq <= 0) return undefined;
  return { path: text.slice(0, eq).trim(), values: text.slice(eq + 1) };
}

/** The axis, or what is wrong: its path (`where: "path"`: the error lists the valid ones) or its values. */
export type AxisResult =
  | { readonly ok: true; readonly value: SweepAxis }
  | { readonly ok: false; readonly where: "path" | "values"; readonly message: string };

/** The axis `path` = `values` over the scenario `data`, or where it goes wrong. */
export function resolveAxis(data: unknown, path: string, values: string): AxisResult {
  const name = path.replace(/^(?:readings|constants)\./, "");
  const rulesFor = (rules: ValueRules, target: AxisTarget, display: string): AxisResult => {
    const parsed = parseValues(values, rules);
    return parsed.ok
      ? { ok: true, value: { path: display, target, kind: rules.kind, values: parsed.value } }
      : { ok: false, where: "values", message: parsed.message };
  };
  const gap = /^(G\d+)(?:\.([a-z-]+))?$/i.exec(name);
  if (gap !== null) {
    const id = (gap[1] ?? "").toUpperCase();
    const param = gap[2]?.toLowerCase();
    const field = settingFields().find(
      (f) => f.path.toLowerCase() === `${id}${param ? `.${param}` : ""}`.toLowerCase(),
    );
    if (field === undefined || !(SWITCHABLE_GAPS as readonly string[]).includes(id)) {
      return {
        ok: false,
        where: "path",
        message: `${name} is not a reading a sweep can vary; the readings are ${settingFields()
          .filter((f) => /^G\d/.test(f.path))
          .map((f) => f.path)
          .join(", ")}`,
      };
    }
    const target: AxisTarget = { kind: "reading", gap: id, ...(param !== undefined && { param }) };
    const rules: ValueRules =
      field.kind === "choice"
        ? { kind: "choice", bareMs: false, options: field.options ?? [] }
        : field.kind === "integer"
          ? { kind: "integer", bareMs: false, min: 0 }
          : { kind: "duration", bareMs: false, min: 0 };
    return rulesFor(rules, target, field.path);
  }
  const knob = specKnob(name);
  if (knob !== undefined) {
    return rulesFor(knobRules(knob), { kind: "constant", knob: knob.name }, knob.name);
  }
  const at = fieldAt(data, path);
  if (!at.ok) return { ok: false, where: "path", message: at.message };
  const f = at.field;
  return rulesFor(
    {
      kind: f.kind,
      bareMs: true,
      ...(f.min !== undefined && { min: f.min }),
      ...(f.max !== undefined && { max: f.max }),
    },
    { kind: "field", path: f.path },
    f.display,
  );
}

function knobRules(knob: SpecKnob): ValueRules {
  return {
    kind: knob.kind === "number" ? "number" : "duration",
    bareMs: false,
    check: (v) => {
      const parsed = parseKnobValue(knob, v.text);
      return parsed.ok ? undefined : parsed.message;
    },
  };
}

/** `1..20` or `3,7,9` → the seeds (numbers, or strings that are not); undefined with a message when it does not read. */
export function parseSeeds(text: string): Parsed<(number | string)[]> {
  const t = text.trim();
  const range = /^(\d+)\.\.(\d+)$/.exec(t);
  if (range !== null) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    if (b < a) return { ok: false, message: `--seeds ${t}: the range is inverted` };
    if (b - a + 1 > MAX_SWEEP_RUNS) return { ok: false, message: `--seeds ${t}: at most ${MAX_SWEEP_RUNS} seeds` };
    return { ok: true, value: Array.from({ length: b - a + 1 }, (_, k) => a + k) };
  }
  const list = t.split(",").map((s) => s.trim());
  if (t === "" || list.some((s) => s === "")) {
    return { ok: false, message: `--seeds takes a range (1..20) or a list (3,7,9), not "${t}"` };
  }
  return { ok: true, value: list.map((s) => (/^\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : s)) };
}

/** `--refine 1m` → a duration resolution; `--refine 0.05` → a number; undefined with a message when neither. */
export function parseResolution(
  text: string,
): { ok: true; value: { resolution: number; kind: "duration" | "number" } } | { ok: false; message: string } {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t) && Number(t) > 0) return { ok: true, value: { resolution: Number(t), kind: "number" } };
  const ms = /[a-z]/i.test(t) ? parseDurationMs(t) : undefined;
  if (ms !== undefined && ms > 0) return { ok: true, value: { resolution: ms, kind: "duration" } };
  return {
    ok: false,
    message: `--refine takes a resolution more than 0: a duration (1m, 30s) for durations and times, a number (1, 0.05) for numbers; not "${t}"`,
  };
}

/** The outcome of {@link planSweep}. */
export type SweepPlanResult =
  { readonly ok: true; readonly plan: SweepPlan } | { readonly ok: false; readonly errors: readonly VaryError[] };

/**
 * The grid of `varies` (`[path, values]` pairs) over the scenario `text`,
 * with `seeds` (undefined: once each). Every problem is reported, each at its
 * path: an unknown path (with the valid ones), a value of the wrong kind, an
 * empty or inverted range, a grid or a number of runs over the limit.
 */
export function planSweep(
  text: string,
  varies: readonly { readonly path: string; readonly values: string }[],
  seeds?: readonly (number | string)[],
): SweepPlanResult {
  let data: unknown;
  try {
    data = parseDocument(text).toJS();
  } catch (error) {
    return { ok: false, errors: [{ path: "(scenario)", message: String(error) }] };
  }
  const errors: VaryError[] = [];
  const axes: SweepAxis[] = [];
  if (varies.length === 0) errors.push({ path: "--vary", message: "nothing to vary: give --vary <path>=<values>" });
  for (const v of varies) {
    const axis = resolveAxis(data, v.path, v.values);
    if (!axis.ok) {
      const message = axis.where === "path" ? `${axis.message}. Valid paths: ${validPathsText(data)}` : axis.message;
      errors.push({ path: v.path, message });
      continue;
    }
    if (axes.some((a) => a.path === axis.value.path)) {
      errors.push({ path: v.path, message: `${axis.value.path} is varied twice` });
      continue;
    }
    axes.push(axis.value);
  }
  if (errors.length > 0) return { ok: false, errors };
  const size = axes.reduce((n, a) => n * a.values.length, 1);
  if (size > MAX_SWEEP_POINTS) {
    return {
      ok: false,
      errors: [
        {
          path: "--vary",
          message: `the grid has ${axes.map((a) => a.values.length).join(" × ")} = ${size} points; a sweep has at most ${MAX_SWEEP_POINTS}`,
        },
      ],
    };
  }
  const runs = size * (seeds?.length ?? 1);
  if (runs > MAX_SWEEP_RUNS) {
    return {
      ok: false,
      errors: [
        {
          path: "--seeds",
          message: `${size} points × ${seeds?.length ?? 1} seeds = ${runs} runs; a sweep makes at most ${MAX_SWEEP_RUNS}`,
        },
      ],
    };
  }
  const points: SweepPoint[] = [];
  for (let index = 0; index < size; index++) {
    const coords: number[] = [];
    let rest = index;
    for (let a = axes.length - 1; a >= 0; a--) {
      const n = (axes[a] as SweepAxis).values.length;
      coords.unshift(rest % n);
      rest = Math.floor(rest / n);
    }
    points.push({ index, coords, values: coords.map((c, a) => (axes[a] as SweepAxis).values[c] as SweepValue) });
  }
  return { ok: true, plan: { axes, points, ...(seeds !== undefined && { seeds }) } };
}

// ---------------------------------------------------------------------------
// A point's scenario

/** What one point runs: the scenario's text with its fields set, and its readings and knobs as `--set` pairs. */
export interface PointScenario {
  readonly text: string;
  readonly settings: readonly (readonly [string, string])[];
}

/**
 * Makes each point's scenario from one parse of the base text. A field the
 * text has is replaced where it is written, byte for byte around it; a field
 * it leaves out is added to its mapping (the document then written out again,
 * flow collections kept as they were).
 */
export function pointScenarios(
  text: string,
): (axes: readonly SweepAxis[], values: readonly SweepValue[]) => PointScenario {
  const doc: Document = parseDocument(text);
  /** Where each present field's value is written: [start, end) in `text`. */
  const ranges = new Map<string, readonly [number, number]>();
  const rangeOf = (path: readonly (string | number)[]): readonly [number, number] | undefined => {
    const key = JSON.stringify(path);
    if (!ranges.has(key)) {
      const node = doc.getIn(path, true);
      const range = isScalar(node) ? node.range : undefined;
      if (range !== undefined && range !== null) ranges.set(key, [range[0], range[1]]);
    }
    return ranges.get(key);
  };
  return (axes, values) => {
    const settings: [string, string][] = [];
    const edits: { path: readonly (string | number)[]; value: string | number }[] = [];
    axes.forEach((axis, a) => {
      const value = values[a] as SweepValue;
      const target = axis.target;
      if (target.kind === "field") {
        const written =
          axis.kind === "duration" || axis.kind === "time"
            ? /^\d+(?:\.\d+)?$/.test(value.text)
              ? (value.number ?? 0)
              : value.text
            : (value.number ?? value.text);
        edits.push({ path: target.path, value: written });
      } else if (target.kind === "reading") {
        settings.push([target.gap, target.param !== undefined ? `${target.param}=${value.text}` : value.text]);
      } else {
        settings.push([target.knob, value.text]);
      }
    });
    if (edits.length === 0) return { text, settings };
    const spliced = edits.map((e) => ({ ...e, range: rangeOf(e.path) }));
    if (spliced.every((e) => e.range !== undefined)) {
      let out = text;
      for (const e of [...spliced].sort((x, y) => (y.range?.[0] ?? 0) - (x.range?.[0] ?? 0))) {
        const [from, to] = e.range as readonly [number, number];
        out = `${out.slice(0, from)}${String(e.value)}${out.slice(to)}`;
      }
      return { text: out, settings };
    }
    const copy = doc.clone();
    for (const e of edits) copy.setIn(e.path, e.value);
    return { text: copy.toString({ lineWidth: 0, flowCollectionPadding: false }), settings };
  };
}

/** `faults.network[b-down].until=2h30m, G16.fallback-window=2h`: a point's values in words. */
export function pointText(axes: readonly SweepAxis[], values: readonly SweepValue[]): string {
  return axes.map((a, i) => `${a.path}=${values[i]?.text ?? "?"}`).join(", ");
}
