/**
 * Where playback stops: the step levels and the breakpoints of the playback
 * bar, as pure predicates over recorded trace events (docs/decisions/0085).
 * The live session (session.ts) and the app's played-back trace
 * (renderer/src/session/replay.ts) both stop with a {@link StopFinder}, so a
 * run stops at the same event — the same last seq — whatever the speed, and
 * whether it plays, steps, runs live or is played back.
 *
 * - A **step** runs to the next event of its level: any event, the next
 *   attempt's verdict (`attempt.judged`), the next decision (a transition of
 *   a delivery machine, `machine.transition`).
 * - A **breakpoint** stops a play or a step at an event that meets its
 *   condition: an event of a kind, an event citing a rule (or a gap), a
 *   delivery entering a state, a fallback decision, a lesson's annotation on
 *   an event kind (its nth); or at a time of the run (a time, an annotation at
 *   a time), where the run stops as a jump to that time does.
 *
 * A jump, "run to the end" and the checks at the end read their events
 * without stopping: a jump goes where it is sent.
 */
import { messageOfActor } from "../trace/deliveryIds.ts";
import { formatOffset } from "../trace/offset.ts";
import { ordinal } from "./lesson.ts";
import { rulesCited } from "../trace/ruleEvidence.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import type { EventSequence } from "../trace/store.ts";

/** How far a step goes: the next event, the next attempt's verdict, the next decision of a delivery machine. */
export type StepLevel = "event" | "attempt" | "decision";

export const STEP_LEVELS: readonly StepLevel[] = ["event", "attempt", "decision"];

/** What makes a breakpoint stop the run. */
export type BreakCondition =
  /** An event of a kind (`smtp.handoff`). */
  | { readonly kind: "event"; readonly name: string }
  /** An event citing a rule (`STATE-3`) in `rule`/`rules`/`violates`, or a gap (`G16`) in `gap`/`gaps`; the checks aside. */
  | { readonly kind: "rule"; readonly rule: string }
  /**
   * A delivery entering a state: a `machine.transition` into it from outside it (or a `machine.started` in it).
   * The state is a path from the machine's root (`attemptingOverService.posting`) or one state's name
   * (`retryScheduled`, `posting`); `messageId` narrows it to the deliveries of one message.
   */
  | { readonly kind: "state"; readonly state: string; readonly messageId?: string }
  /** A fallback decision: a judgement of an attempt that weighed the fallback window (a transition out of judging citing G16). */
  | { readonly kind: "fallback" }
  /** A time of the run (ms since the epoch): the run stops there as a jump to that time stops. */
  | { readonly kind: "time"; readonly atMs: number }
  /**
   * A lesson's annotation (a note in the scenario): at a time (`atMs`, ms since the epoch) or on an event kind
   * (`on`; with `nth`, its nth event only, counted from 1).
   */
  | {
      readonly kind: "annotation";
      readonly note: string;
      readonly atMs?: number;
      readonly on?: string;
      readonly nth?: number;
    };

export interface Breakpoint {
  /** Unique in the list: the stop that it makes names it. */
  readonly id: string;
  readonly enabled: boolean;
  readonly condition: BreakCondition;
}

/** Why a play or a step stopped where it did. */
export type PlaybackStop =
  /** A step reached an event of its level. */
  | { readonly kind: "step"; readonly level: StepLevel; readonly seq: number }
  /** A breakpoint's event: the run shows every event up to it, and none after. */
  | { readonly kind: "breakpoint"; readonly id: string; readonly seq: number }
  /** A breakpoint at a time: the run is at that time, as a jump there leaves it. */
  | { readonly kind: "time"; readonly id: string; readonly atMs: number }
  /** A step found nothing of its level before the end: nothing is left to run; the next step or play ends the run. */
  | { readonly kind: "end"; readonly level: StepLevel };

/** Whether a step of `level` stops at `event`. */
export function stepStopsAt(level: StepLevel, event: RecordedEvent): boolean {
  switch (level) {
    case "event":
      return true;
    case "attempt":
      return event.name === "attempt.judged";
    case "decision":
      return event.name === "machine.transition";
  }
}

/** The verdicts of the checks cite the rules they check, exercised or not: no rule breakpoint stops at them. */
const VERDICTS: ReadonlySet<string> = new Set(["invariant.checked", "expectation.checked"]);

/** The transitions of judging that decide on the fallback cite the fallback window's gap. */
const JUDGING = "attemptingOverService.judging";

/**
 * Whether `state` (a path from the root, or one state's name) holds at the leaf state path `path`:
 * `retryScheduled` at `retryScheduled`, `attemptingOverService` and `posting` at `attemptingOverService.posting`.
 */
export function inState(path: string, state: string): boolean {
  if (state.includes(".")) return path === state || path.startsWith(`${state}.`);
  return path.split(".").includes(state);
}

function strings(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
}

/**
 * Whether `event` meets `condition`; `nth` is how many events of the event's
 * kind the run has had up to it, itself included (for an annotation's `nth`).
 * A time never matches an event (see {@link conditionTime}).
 */
export function conditionMatches(condition: BreakCondition, event: RecordedEvent, nth: number): boolean {
  const d = event.data ?? {};
  switch (condition.kind) {
    case "event":
      return event.name === condition.name;
    case "rule":
      if (VERDICTS.has(event.name)) return false;
      return (
        rulesCited(d).includes(condition.rule) ||
        strings(d["gap"]).includes(condition.rule) ||
        strings(d["gaps"]).includes(condition.rule)
      );
    case "state": {
      const actor = d["deliveryActor"];
      if (typeof actor !== "string") return false;
      if (condition.messageId !== undefined && messageOfActor(actor) !== condition.messageId) return false;
      if (event.name === "machine.started")
        return typeof d["state"] === "string" && inState(d["state"], condition.state);
      if (event.name !== "machine.transition") return false;
      const from = typeof d["from"] === "string" ? d["from"] : "";
      const to = typeof d["to"] === "string" ? d["to"] : "";
      return inState(to, condition.state) && (!inState(from, condition.state) || from === to);
    }
    case "fallback":
      return event.name === "machine.transition" && d["from"] === JUDGING && strings(d["gaps"]).includes("G16");
    case "time":
      return false;
    case "annotation":
      return (
        condition.on !== undefined &&
        condition.atMs === undefined &&
        event.name === condition.on &&
        (condition.nth === undefined || nth === condition.nth)
      );
  }
}

/** The time a condition stops the run at, for a time or an annotation at a time. */
export function conditionTime(condition: BreakCondition): number | undefined {
  if (condition.kind === "time") return condition.atMs;
  if (condition.kind === "annotation") return condition.atMs;
  return undefined;
}

/**
 * What a breakpoint is, in the words of the list: `m1 enters retryScheduled`,
 * `every smtp.handoff`, `every fallback decision`, `at +2:00:00`. `label`
 * names a message by the scenario's id (`m1@a.example` → `m1`).
 */
export function describeCondition(
  condition: BreakCondition,
  startMs: number,
  label: (messageId: string) => string = (m) => m,
): string {
  switch (condition.kind) {
    case "event":
      return `every ${condition.name}`;
    case "rule":
      return `every event citing ${condition.rule}`;
    case "state":
      return `${condition.messageId !== undefined ? label(condition.messageId) : "a delivery"} enters ${condition.state}`;
    case "fallback":
      return "every fallback decision";
    case "time":
      return `at ${formatOffset(condition.atMs, startMs)}`;
    case "annotation": {
      const where =
        condition.atMs !== undefined
          ? `at ${formatOffset(condition.atMs, startMs)}`
          : condition.nth !== undefined
            ? `at the ${ordinal(condition.nth)} ${condition.on ?? "?"}`
            : `at every ${condition.on ?? "?"}`;
      return `lesson note ${where}: ${condition.note}`;
    }
  }
}

/** Whether two conditions are the same (a toggle removes the breakpoint it would add). */
export function sameCondition(a: BreakCondition, b: BreakCondition): boolean {
  return canonical(a) === canonical(b);
}

function canonical(c: BreakCondition): string {
  const entries = Object.entries(c).filter(([, v]) => v !== undefined);
  entries.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return JSON.stringify(entries);
}

/**
 * A breakpoint's condition for events like `event` (the playbar's "B" key):
 * its delivery entering the state a transition went to (or started in),
 * else its kind.
 */
export function conditionLike(event: RecordedEvent): BreakCondition {
  const d = event.data ?? {};
  const actor = d["deliveryActor"];
  const state =
    event.name === "machine.transition" ? d["to"] : event.name === "machine.started" ? d["state"] : undefined;
  if (typeof actor === "string" && typeof state === "string") {
    return { kind: "state", state, messageId: messageOfActor(actor) };
  }
  return { kind: "event", name: event.name };
}

/** What is wrong with a list of breakpoints that came over a message port, if anything (for the refusal). */
export function breakpointsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return "breakpoints are a list";
  const ids = new Set<string>();
  for (const [i, b] of value.entries()) {
    const at = `breakpoint ${i + 1}`;
    if (typeof b !== "object" || b === null) return `${at} is not an object`;
    const { id, enabled, condition } = b as Record<string, unknown>;
    if (typeof id !== "string" || id === "") return `${at} has no id`;
    if (ids.has(id)) return `${at}: the id ${JSON.stringify(id)} is taken by another`;
    ids.add(id);
    if (typeof enabled !== "boolean") return `${at}: enabled is true or false`;
    const problem = conditionProblem(condition);
    if (problem !== undefined) return `${at}: ${problem}`;
  }
  return undefined;
}

function conditionProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "its condition is not an object";
  const c = value as Record<string, unknown>;
  const text = (key: string) => typeof c[key] === "string" && c[key] !== "";
  const optional = (key: string, ok: (v: unknown) => boolean) => c[key] === undefined || ok(c[key]);
  const time = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  switch (c["kind"]) {
    case "event":
      return text("name") ? undefined : "an event breakpoint names the event's kind";
    case "rule":
      return text("rule") ? undefined : "a rule breakpoint names a rule or a gap";
    case "state":
      return text("state") && optional("messageId", (v) => typeof v === "string")
        ? undefined
        : "a state breakpoint names a state (and may name a message)";
    case "fallback":
      return undefined;
    case "time":
      return time(c["atMs"]) ? undefined : "a time breakpoint has a time (atMs)";
    case "annotation":
      return typeof c["note"] === "string" &&
        ((time(c["atMs"]) && c["on"] === undefined && c["nth"] === undefined) ||
          (c["atMs"] === undefined && text("on"))) &&
        optional("nth", (v) => Number.isInteger(v) && (v as number) >= 1)
        ? undefined
        : "an annotation has a note and a time (atMs) or an event kind (on, and its nth from 1)";
    default:
      return `no breakpoint is of kind ${JSON.stringify(c["kind"])}`;
  }
}

/**
 * A run's events by their place: an array of them, or a recorder, which decodes each from its store as it is
 * read (decision 0225: a live session need not hold every event as an object).
 */
export type EventsByIndex = Pick<EventSequence, "length" | "at">;

/**
 * Reads a run's events in order and says where playback stops. It keeps how
 * far it has read (`scanned`: the events before it are the ones a session may
 * show) and how many events of each kind it has read (for an annotation's
 * nth); a jump back reads the run again from a new finder.
 */
export class StopFinder {
  #breakpoints: readonly Breakpoint[] = [];
  #events: readonly Breakpoint[] = [];
  #times: readonly Breakpoint[] = [];
  readonly #counts = new Map<string, number>();
  #scanned = 0;

  /** How many events have been read: the events before this index may be shown. */
  get scanned(): number {
    return this.#scanned;
  }

  get breakpoints(): readonly Breakpoint[] {
    return this.#breakpoints;
  }

  setBreakpoints(breakpoints: readonly Breakpoint[]): void {
    this.#breakpoints = breakpoints;
    const on = breakpoints.filter((b) => b.enabled);
    this.#times = on.filter((b) => conditionTime(b.condition) !== undefined);
    this.#events = on.filter((b) => conditionTime(b.condition) === undefined);
  }

  /**
   * Reads `events` from where it stopped up to `end` (exclusive; default all) and returns the first stop: an
   * enabled breakpoint's event, else an event of the step's `level`; reading stops just past it. Undefined when
   * there is none (everything up to `end` read).
   */
  next(events: EventsByIndex, level?: StepLevel, end = events.length): PlaybackStop | undefined {
    while (this.#scanned < end) {
      const event = events.at(this.#scanned);
      this.#scanned += 1;
      if (event === undefined) continue;
      const nth = (this.#counts.get(event.name) ?? 0) + 1;
      this.#counts.set(event.name, nth);
      const hit = this.#events.find((b) => conditionMatches(b.condition, event, nth));
      if (hit !== undefined) return { kind: "breakpoint", id: hit.id, seq: event.seq };
      if (level !== undefined && stepStopsAt(level, event)) return { kind: "step", level, seq: event.seq };
    }
    return undefined;
  }

  /** Reads `events` up to `end` without stopping (a jump, "run to the end", the checks). */
  skip(events: EventsByIndex, end = events.length): void {
    while (this.#scanned < end) {
      const event = events.at(this.#scanned);
      this.#scanned += 1;
      if (event !== undefined) this.#counts.set(event.name, (this.#counts.get(event.name) ?? 0) + 1);
    }
  }

  /** The first enabled breakpoint at a time after `afterMs` (the earliest; the first listed of equal ones). */
  nextTime(afterMs: number): { readonly id: string; readonly atMs: number } | undefined {
    let best: { id: string; atMs: number } | undefined;
    for (const b of this.#times) {
      const atMs = conditionTime(b.condition);
      if (atMs !== undefined && atMs > afterMs && (best === undefined || atMs < best.atMs)) best = { id: b.id, atMs };
    }
    return best;
  }
}
