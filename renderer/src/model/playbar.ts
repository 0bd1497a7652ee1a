/**
 * What the playback bar says and draws (docs/decisions/0085):
 * how far the next step goes, where and why the last play or step stopped
 * (the event it stopped at, by its seq), the breakpoints in words, and where
 * the run's events are along the scrubber. Pure functions of the trace's
 * events and the machine's context; the bar only draws them.
 */
import {
  conditionLike,
  conditionMatches,
  conditionTime,
  describeCondition,
  sameCondition,
  stepStopsAt,
  type BreakCondition,
  type Breakpoint,
  type PlaybackStop,
  type StepLevel,
} from "../../../app/sim/breakpoints.ts";
import { noteOfBreakpoint } from "../../../app/sim/lesson.ts";
import { maxOf } from "../../../app/protocol/lists.ts";
import { describeEvent } from "../../../app/trace/describe.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { formatOffset } from "../../../app/trace/offset.ts";

/** The step levels as the bar names them, and what the next step of each runs to. */
export const STEP_LEVEL_TEXT: Readonly<Record<StepLevel, { readonly label: string; readonly next: string }>> = {
  event: { label: "Event", next: "the next event" },
  attempt: { label: "Attempt", next: "the next attempt's verdict" },
  decision: { label: "Decision", next: "the next decision of a delivery machine" },
};

/** The level after `level` (the L key goes round them). */
export function nextLevel(level: StepLevel): StepLevel {
  return level === "event" ? "attempt" : level === "attempt" ? "decision" : "event";
}

/**
 * What Step does from here, said beside it: `Step runs to the next attempt's verdict.`; when nothing of the
 * run is left to run or show, that it ends the run.
 */
export function stepHint(level: StepLevel, atEnd: boolean): string {
  return atEnd
    ? "Nothing is left to run: Step ends the run and checks it."
    : `Step runs to ${STEP_LEVEL_TEXT[level].next}, or to a breakpoint before it.`;
}

/** The event of `seq` among the shown events (they are numbered from 0 in order; looked for otherwise). */
export function eventOfSeq(events: readonly RecordedEvent[], seq: number): RecordedEvent | undefined {
  const at = events[seq];
  return at?.seq === seq ? at : events.find((e) => e.seq === seq);
}

/** An event as the stop line cites it: `#12 machine.transition at +0:00:00.120 (judging → retryScheduled)`. */
function cite(event: RecordedEvent | undefined, seq: number, startMs: number): string {
  if (event === undefined) return `#${seq}`;
  const words = describeEvent(event, { flavour: "timeline", full: true });
  return `#${seq} ${event.name} at ${formatOffset(event.timeMs, startMs)}${words ? `: ${words}` : ""}`;
}

/**
 * Where and why the last play or step stopped, citing the event it stopped at:
 * `Stopped at breakpoint "m1 enters retryScheduled": #12 machine.transition at +0:00:00 …`; at a lesson's
 * note, its words: `Stopped at lesson note 2 (the clock at +2:00:00): The 2-hour fallback window ends now.`
 */
export function stopText(
  stop: PlaybackStop,
  events: readonly RecordedEvent[],
  startMs: number,
  breakpoints: readonly Breakpoint[],
  label: (messageId: string) => string = (m) => m,
): string {
  const named = (id: string) => breakpointName(id, breakpoints, startMs, label);
  // At a lesson's note, its words: the bar stays in view while the lesson panel may not.
  const id = stop.kind === "breakpoint" || stop.kind === "time" ? stop.id : undefined;
  const note = id === undefined ? undefined : noteOfBreakpoint(id);
  const condition = note === undefined ? undefined : breakpoints.find((b) => b.id === id)?.condition;
  if (note !== undefined && condition?.kind === "annotation") {
    const where =
      stop.kind === "breakpoint"
        ? `#${stop.seq} ${eventOfSeq(events, stop.seq)?.name ?? "event"} at ${formatOffset(eventOfSeq(events, stop.seq)?.timeMs ?? startMs, startMs)}`
        : `the clock at ${formatOffset(stop.kind === "time" ? stop.atMs : startMs, startMs)}`;
    return `Stopped at lesson note ${note + 1} (${where}): ${condition.note}`;
  }
  switch (stop.kind) {
    case "step":
      return `Stepped to ${STEP_LEVEL_TEXT[stop.level].next}: ${cite(eventOfSeq(events, stop.seq), stop.seq, startMs)}`;
    case "breakpoint":
      return `Stopped at ${named(stop.id)}: ${cite(eventOfSeq(events, stop.seq), stop.seq, startMs)}`;
    case "time":
      return `Stopped at ${named(stop.id)}: the clock is at ${formatOffset(stop.atMs, startMs)}`;
    case "end":
      return `No ${stop.level === "event" ? "event" : stop.level} is left before the end: the next Step or Play ends the run and checks it.`;
  }
}

/** A breakpoint as a stop names it: a lesson's note by its number (the lesson panel shows its words), a breakpoint taken away since as such. */
function breakpointName(
  id: string,
  breakpoints: readonly Breakpoint[],
  startMs: number,
  label: (messageId: string) => string,
): string {
  const note = noteOfBreakpoint(id);
  if (note !== undefined) return `lesson note ${note + 1}`;
  const b = breakpoints.find((x) => x.id === id);
  return b === undefined
    ? "a breakpoint removed since"
    : `breakpoint "${describeCondition(b.condition, startMs, label)}"`;
}

/**
 * Where Compare's clock stopped at a breakpoint, saying which run hit it: `Run B stopped at breakpoint "every
 * smtp.handoff": #96 smtp.handoff at +2:03:00 …`; a time stops both: `Both runs stopped at breakpoint "at
 * +1:00:00": the clock is at +1:00:00`.
 */
export function compareStopText(
  hit: BreakOfRuns,
  startMs: number,
  breakpoints: readonly Breakpoint[],
  label: (messageId: string) => string = (m) => m,
): string {
  const named = breakpointName(hit.id, breakpoints, startMs, label);
  return hit.kind === "time"
    ? `Both runs stopped at ${named}: the clock is at ${formatOffset(hit.timeMs, startMs)}`
    : `Run ${hit.run === 0 ? "A" : "B"} stopped at ${named}: ${cite(hit.event, hit.event.seq, startMs)}`;
}

/** A breakpoint that stops at `condition`, added to `list` (a new id); `list` itself when one already does. */
export function addBreakpoint(list: readonly Breakpoint[], condition: BreakCondition): readonly Breakpoint[] {
  if (list.some((b) => sameCondition(b.condition, condition))) return list;
  const taken = new Set(list.map((b) => b.id));
  let n = list.length + 1;
  while (taken.has(`bp-${n}`)) n += 1;
  return [...list, { id: `bp-${n}`, enabled: true, condition }];
}

/** The B key: a breakpoint like the event the run stopped at (its delivery entering that state, else its kind), or none any more if there was one. */
export function toggleBreakpointLike(list: readonly Breakpoint[], event: RecordedEvent): readonly Breakpoint[] {
  const condition = conditionLike(event);
  const same = list.find((b) => sameCondition(b.condition, condition));
  return same === undefined ? addBreakpoint(list, condition) : list.filter((b) => b !== same);
}

/** The same list, `id` enabled or not. */
export function enableBreakpoint(list: readonly Breakpoint[], id: string, enabled: boolean): readonly Breakpoint[] {
  return list.map((b) => (b.id === id ? { ...b, enabled } : b));
}

/** Where the scrubber ends: the run's end once known, else the furthest point known of it so far. */
export function scrubberEnd(p: {
  readonly startMs: number;
  readonly endMs?: number | undefined;
  readonly knownMs: readonly (number | undefined)[];
}): number {
  if (p.endMs !== undefined) return Math.max(p.endMs, p.startMs + 1000);
  return maxOf(
    p.knownMs.filter((t): t is number => t !== undefined),
    p.startMs + 1000,
  );
}

/**
 * How many events fall in each of `bins` equal spans of [startMs, endMs] (the last one's end included; events
 * outside left out): where the scrubber draws the run's events.
 */
export function eventDensity(events: readonly RecordedEvent[], startMs: number, endMs: number, bins: number): number[] {
  const counts = new Array<number>(bins).fill(0);
  const span = endMs - startMs;
  if (span <= 0 || bins <= 0) return counts;
  for (const e of events) {
    if (e.timeMs < startMs || e.timeMs > endMs) continue;
    const i = Math.min(bins - 1, Math.floor(((e.timeMs - startMs) / span) * bins));
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts;
}

/**
 * What the scrubber draws of a run: the events of the furthest it has been shown (item 3;
 * docs/decisions/0097). A jump back runs the run again from its start and shows its events up to the time
 * only (0038); the run is deterministic, so the events after it come again the same, and the scrubber keeps
 * drawing them — "where the events are" does not shrink because the clock went back. `run` tells runs apart
 * (the session's source: a restart or another scenario is a new one); a shorter array of the same run whose
 * last event is not the kept one's at that place is another run too, and starts again.
 */
export interface SeenRun {
  readonly run: unknown;
  readonly events: readonly RecordedEvent[];
}

/** The events seen of `run` after `events` came: see {@link SeenRun}. */
export function seenOfRun(seen: SeenRun | undefined, run: unknown, events: readonly RecordedEvent[]): SeenRun {
  if (seen === undefined || seen.run !== run || events.length >= seen.events.length) return { run, events };
  const i = events.length - 1;
  const now = events[i];
  const before = seen.events[i];
  if (now === undefined) return seen;
  return now.seq === before?.seq && now.name === before.name && now.timeMs === before.timeMs ? seen : { run, events };
}

/**
 * The first of `bins` equal spans of [startMs, endMs] that lies wholly after the clock: from there on the
 * scrubber's bars are what the run showed before a jump back and has not shown again yet (drawn dimmed).
 */
export function firstBinAhead(startMs: number, endMs: number, bins: number, playheadMs: number): number {
  const span = endMs - startMs;
  if (span <= 0) return bins;
  return Math.max(0, Math.min(bins, Math.floor(((playheadMs - startMs) / span) * bins) + 1));
}

/** The kinds of event a breakpoint can be put on: those of the run so far, then the usual ones, once each. */
export function breakableKinds(events: readonly RecordedEvent[]): string[] {
  const kinds = new Set<string>(USUAL_KINDS);
  for (const e of events) if (!CHECKS.has(e.name)) kinds.add(e.name);
  return [...kinds].sort();
}

const CHECKS: ReadonlySet<string> = new Set(["invariant.checked", "expectation.checked"]);

const USUAL_KINDS = [
  "attempt.started",
  "attempt.judged",
  "machine.transition",
  "recipient.result",
  "recipient.outcome",
  "smtp.handoff",
  "dsn.sent",
  "delivery.bounced",
  "http.failure",
] as const;

/**
 * Compare's Step: the first event of `level` in either run after `afterMs` — its time (the cursor goes there,
 * both runs shown up to it), the run it is in (0 for A, 1 for B) and the event.
 */
export function nextStopOfRuns(
  runs: readonly (readonly RecordedEvent[])[],
  level: StepLevel,
  afterMs: number,
): { readonly timeMs: number; readonly run: number; readonly event: RecordedEvent } | undefined {
  let best: { timeMs: number; run: number; event: RecordedEvent } | undefined;
  runs.forEach((events, run) => {
    const event = events.find((e) => e.timeMs > afterMs && !CHECKS.has(e.name) && stepStopsAt(level, e));
    if (event !== undefined && (best === undefined || event.timeMs < best.timeMs)) {
      best = { timeMs: event.timeMs, run, event };
    }
  });
  return best;
}

/** How many times each breakpoint has stopped the run (in the part of it now shown): its hit count. */
export function hitCounts(hits: readonly { readonly id: string }[]): ReadonlyMap<string, number> {
  const counts = new Map<string, number>();
  for (const h of hits) counts.set(h.id, (counts.get(h.id) ?? 0) + 1);
  return counts;
}

/** Where a breakpoint stops Compare's clock: the run whose event met it (0 for A, 1 for B), or a time of both. */
export type BreakOfRuns =
  | {
      readonly kind: "event";
      readonly id: string;
      readonly timeMs: number;
      readonly run: number;
      readonly event: RecordedEvent;
    }
  | { readonly kind: "time"; readonly id: string; readonly timeMs: number };

/**
 * Compare's breakpoints (one list for both runs): the first enabled breakpoint met after `afterMs` up to
 * `untilMs` (included) — an event of either run that meets its condition (the earliest; at one time, run A's
 * first), or a breakpoint at a time. Both runs are shown up to it. An annotation's `nth` counts the events of
 * its kind from the start of the run the event is in, as the live session's finder does.
 */
export function nextBreakOfRuns(
  runs: readonly (readonly RecordedEvent[])[],
  breakpoints: readonly Breakpoint[],
  afterMs: number,
  untilMs: number,
): BreakOfRuns | undefined {
  const on = breakpoints.filter((b) => b.enabled);
  if (on.length === 0 || untilMs <= afterMs) return undefined;
  let best: BreakOfRuns | undefined;
  for (const b of on) {
    const atMs = conditionTime(b.condition);
    if (atMs !== undefined && atMs > afterMs && atMs <= untilMs && (best === undefined || atMs < best.timeMs)) {
      best = { kind: "time", id: b.id, timeMs: atMs };
    }
  }
  const byEvent = on.filter((b) => conditionTime(b.condition) === undefined);
  if (byEvent.length === 0) return best;
  runs.forEach((events, run) => {
    const counts = new Map<string, number>();
    for (const event of events) {
      if (event.timeMs > untilMs || (best !== undefined && event.timeMs >= best.timeMs && best.kind === "event")) break;
      const nth = (counts.get(event.name) ?? 0) + 1;
      counts.set(event.name, nth);
      if (event.timeMs <= afterMs || CHECKS.has(event.name)) continue;
      if (best !== undefined && event.timeMs > best.timeMs) break;
      const hit = byEvent.find((b) => conditionMatches(b.condition, event, nth));
      if (hit !== undefined) {
        best = { kind: "event", id: hit.id, timeMs: event.timeMs, run, event };
        break;
      }
    }
  });
  return best;
}
