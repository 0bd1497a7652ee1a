/**
 * Fork at a time: the scenario a run would have been had one
 * thing changed from a point in virtual time on — a fault ended then, one
 * started then, a fault's probability changed then, or a message submitted
 * then. The fork is a new scenario text, run from the start like any other:
 * since the change only concerns the time from the fork point on, the two
 * runs agree before it, which app/sim/compare.ts `checkPrefix` verifies by
 * hashing both traces' prefixes.
 *
 * The text is the original's YAML edited in place (comments and layout
 * kept): the changed fault's `until` set to the fork time, a new fault or
 * message appended with `from`/`at` the fork time. The fork's expectations
 * are left out (they describe the original run), and its name and
 * description say what was forked and where, so that it can be saved as a
 * scenario file of its own.
 */
import { isMap, isSeq, parseDocument, type YAMLMap } from "yaml";
import { formatOffset } from "../trace/offset.ts";
import { resolveTimeMs } from "./faultScope.ts";
import { parseScenarioText, type Scenario, type ScenarioError } from "./scenario.ts";
import { DEFAULT_START_MS } from "./scheduler.ts";

/** What a fork changes at its time. */
export type ForkChange =
  /** The fault (its id, or the `0:connection-refused` label of one without) ends at the fork time. */
  | { readonly kind: "end-fault"; readonly fault: string }
  /** A network fault of `faultKind` on `host` starts at the fork time, for `forMs` (default: to the end). */
  | { readonly kind: "start-fault"; readonly faultKind: string; readonly host: string; readonly forMs?: number }
  /** The fault goes on from the fork time with another probability. */
  | { readonly kind: "set-probability"; readonly fault: string; readonly probability: number }
  /** A message from `from` to `to` is submitted at the fork time. */
  | { readonly kind: "submit"; readonly from: string; readonly to: readonly string[] };

/** A fault of the scenario as a fork can name it. */
export interface ForkableFault {
  /** Its id, or `<index>:<kind>` as the trace labels one without. */
  readonly label: string;
  readonly layer: "network" | "dns";
  readonly index: number;
  readonly kind: string;
  readonly fromMs: number;
  readonly untilMs: number;
  readonly probability: number;
}

/** The faults of a parsed scenario, with their windows in virtual ms. */
export function forkableFaults(scenario: Scenario): ForkableFault[] {
  const startMs = scenario.start !== undefined ? Date.parse(scenario.start) : DEFAULT_START_MS;
  const out: ForkableFault[] = [];
  for (const layer of ["network", "dns"] as const) {
    scenario.faults[layer].forEach((f, index) => {
      out.push({
        label: f.id ?? `${index}:${f.kind}`,
        layer,
        index,
        kind: f.kind,
        fromMs: f.from === undefined ? Number.NEGATIVE_INFINITY : resolveTimeMs(f.from, startMs),
        untilMs: f.until === undefined ? Number.POSITIVE_INFINITY : resolveTimeMs(f.until, startMs),
        probability: typeof f.probability === "number" ? f.probability : 1,
      });
    });
  }
  return out;
}

/** `30m`, `2h30m`, `1d2h3m4s`; a time with milliseconds stays a number of ms. */
export function durationText(ms: number): string {
  if (ms % 1000 !== 0) return String(ms);
  let s = ms / 1000;
  if (s === 0) return "0s";
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  return parts.join("");
}

/** The outcome of {@link forkScenario}. */
export type ForkResult =
  | { readonly ok: true; readonly text: string; readonly name: string; readonly summary: string }
  | { readonly ok: false; readonly errors: readonly ScenarioError[] };

/** What a change says in words: `ended fault b-down`. */
export function changeText(change: ForkChange): string {
  switch (change.kind) {
    case "end-fault":
      return `ended fault ${change.fault}`;
    case "start-fault":
      return `started a ${change.faultKind} fault on ${change.host}${change.forMs !== undefined ? ` for ${durationText(change.forMs)}` : ""}`;
    case "set-probability":
      return `set fault ${change.fault}'s probability to ${change.probability}`;
    case "submit":
      return `submitted a message from ${change.from} to ${change.to.join(", ")}`;
  }
}

/**
 * The fork of scenario `text` at `atMs` after its start with `change`. Bad
 * input (a scenario with errors, an unknown or inactive fault, a probability
 * out of range) comes back as errors naming file, line, column and field;
 * never throws.
 */
export function forkScenario(text: string, atMs: number, change: ForkChange, file = "scenario.yaml"): ForkResult {
  const parsed = parseScenarioText(text, file);
  if (!parsed.ok) return parsed;
  const { scenario, locate } = parsed;
  const fail = (path: readonly (string | number)[], message: string): ForkResult => ({
    ok: false,
    errors: [locate(path, message)],
  });
  const at = (message: string): ForkResult => ({
    ok: false,
    errors: [{ file, line: 1, column: 1, field: "(fork)", message }],
  });
  if (!Number.isFinite(atMs) || atMs < 0) return at(`the fork time must be at or after the start (got ${atMs} ms)`);
  const startMs = scenario.start !== undefined ? Date.parse(scenario.start) : DEFAULT_START_MS;
  const forkMs = startMs + atMs;
  const when = formatOffset(forkMs, startMs);
  const forkAt = durationText(atMs);

  const doc = parseDocument(text);
  const faultsOf = (layer: "network" | "dns") => {
    const node = doc.getIn(["faults", layer]);
    return isSeq(node) ? node : undefined;
  };
  const find = (label: string): ForkableFault | undefined => forkableFaults(scenario).find((f) => f.label === label);
  const known = (): string =>
    forkableFaults(scenario)
      .map((f) => f.label)
      .join(", ") || "none";

  switch (change.kind) {
    case "end-fault":
    case "set-probability": {
      const fault = find(change.fault);
      if (fault === undefined) return at(`no fault ${change.fault} in the scenario (its faults: ${known()})`);
      const path = ["faults", fault.layer, fault.index];
      if (!(fault.fromMs <= forkMs && forkMs < fault.untilMs)) {
        const window = `${Number.isFinite(fault.fromMs) ? formatOffset(fault.fromMs, startMs) : "the start"} to ${Number.isFinite(fault.untilMs) ? formatOffset(fault.untilMs, startMs) : "the end"}`;
        return fail(path, `fault ${fault.label} is not active at ${when} (it is from ${window})`);
      }
      const node = faultsOf(fault.layer)?.get(fault.index, true);
      if (!isMap(node)) return fail(path, "the fault is not a mapping");
      if (change.kind === "set-probability") {
        if (!(change.probability >= 0 && change.probability <= 1)) {
          return at(`a probability is from 0 to 1 (got ${change.probability})`);
        }
        const copy = (node as YAMLMap).toJSON() as Record<string, unknown>;
        const id = uniqueId(`${fault.label.replace(/[^A-Za-z0-9_-]/g, "-")}-from-${forkAt}`, scenario);
        (faultsOf(fault.layer) as NonNullable<ReturnType<typeof faultsOf>>).add(
          doc.createNode({ ...copy, id, from: forkAt, probability: change.probability }),
        );
      }
      (node as YAMLMap).set("until", forkAt);
      break;
    }
    case "start-fault": {
      const fault: Record<string, unknown> = {
        id: uniqueId(`fork-${change.faultKind}`, scenario),
        kind: change.faultKind,
        host: change.host,
        from: forkAt,
        ...(change.forMs !== undefined && { until: durationText(atMs + change.forMs) }),
      };
      appendTo(doc, ["faults", "network"], fault);
      break;
    }
    case "submit": {
      const ids = new Set(scenario.messages.map((m, i) => m.id ?? `m${i + 1}`));
      let n = scenario.messages.length + 1;
      while (ids.has(`m${n}`)) n++;
      appendTo(doc, ["messages"], { id: `m${n}`, at: forkAt, from: change.from, to: [...change.to] });
      break;
    }
  }
  const name = `${scenario.name}-fork-${forkAt}`;
  const summary = `Forked from ${scenario.name} at ${when}: ${changeText(change)}.`;
  doc.set("name", name);
  doc.set("description", `${summary} The original's expectations are left out. ${scenario.description}`.trim());
  if (doc.has("expectations")) doc.delete("expectations");
  const out = doc.toString({ lineWidth: 100, flowCollectionPadding: false });
  // The fork must be a scenario too: an added fault of an unknown kind, a bad address, … are errors at their place.
  const check = parseScenarioText(out, file);
  if (!check.ok) return check;
  return { ok: true, text: out, name, summary };
}

function appendTo(
  doc: ReturnType<typeof parseDocument>,
  path: readonly string[],
  value: Record<string, unknown>,
): void {
  const node = doc.getIn(path);
  if (isSeq(node)) node.add(doc.createNode(value));
  else doc.setIn(path, doc.createNode([value]));
}

function uniqueId(base: string, scenario: Scenario): string {
  const taken = new Set(forkableFaults(scenario).map((f) => f.label));
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  return id;
}
