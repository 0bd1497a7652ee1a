/**
 * Lessons: what a scenario file says to a learner besides the run
 * itself — its title, a one-line summary (the description's first sentence),
 * its place in the "Start here" path with what to watch for, and its
 * annotations: short notes about a time of the run or an event kind, shown
 * on the timeline and, played as a lesson, breakpoints of the playback
 * ({@link noteBreakpoints}).
 *
 * The scenario parser (scenario.ts) checks these fields; the readers here are
 * lenient, for lists and summaries of files that may not parse (a broken file
 * is still listed), and keep only what is well formed. {@link annotationPoints}
 * places each annotation on a run from its events, so a live run and an
 * opened trace place them alike.
 */
import { isTraceEventName } from "../trace/events.ts";
import type { Breakpoint } from "./breakpoints.ts";
import { formatOffset } from "../trace/offset.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { parseDurationMs, resolveTimeMs, type TimeOffset } from "./faultScope.ts";

/** A scenario's place in the "Start here" path, and what a learner should watch for in it. */
export interface ScenarioLesson {
  /** Its place in the path: lessons are taken in this order (then by name). */
  readonly order: number;
  /** What to watch for, one point a line. */
  readonly watchFor: readonly string[];
}

/** A note about a time of the run (`at`) or an event kind (`on`, its `nth` event: the first by default). */
export interface ScenarioAnnotation {
  readonly at?: TimeOffset;
  readonly on?: string;
  readonly nth?: number;
  readonly note: string;
  /** Played as a lesson, the run pauses here (default true). */
  readonly pause: boolean;
}

/** The longest summary the library shows before it cuts the sentence short. */
export const SUMMARY_MAX_CHARS = 180;

/** Words whose dot ends no sentence. */
const ABBREVIATIONS = new Set(["e.g", "i.e", "etc", "vs", "cf", "approx"]);

/** A first sentence shorter than this (`Row 1 of the states table (STATE-2).`) takes the next one with it. */
const SHORT_SENTENCE = 60;

/**
 * The first sentence of a description — with the next one when it is shorter than {@link SHORT_SENTENCE}
 * characters (a heading such as `Row 1 of the states table (STATE-2).`) — cut at a word past
 * {@link SUMMARY_MAX_CHARS} with `…`. A sentence ends at `.`, `!` or `?` followed by a space or the end;
 * dots inside words (`a.example`) and after an abbreviation (`e.g.`) do not end it.
 */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  let sentence = flat;
  for (const end of flat.matchAll(/[.!?](?= |$)/g)) {
    const word = flat.slice(flat.lastIndexOf(" ", end.index) + 1, end.index).toLowerCase();
    if (ABBREVIATIONS.has(word.replace(/^\(/, "")) || end.index + 1 < SHORT_SENTENCE) continue;
    sentence = flat.slice(0, end.index + 1);
    break;
  }
  if (sentence.length <= SUMMARY_MAX_CHARS) return sentence;
  const cut = sentence.lastIndexOf(" ", SUMMARY_MAX_CHARS - 1);
  return `${sentence.slice(0, cut > 40 ? cut : SUMMARY_MAX_CHARS - 1).replace(/[,;:]$/, "")}…`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A well-formed `lesson` field, or undefined. */
export function readLesson(value: unknown): ScenarioLesson | undefined {
  if (!isRecord(value)) return undefined;
  const order = value["order"];
  if (typeof order !== "number" || !Number.isFinite(order)) return undefined;
  const watch = value["watchFor"];
  const watchFor = Array.isArray(watch) ? watch.filter((w): w is string => typeof w === "string" && w !== "") : [];
  return { order, watchFor };
}

/** The well-formed entries of an `annotations` field (the parser reports the others). */
export function readAnnotations(value: unknown): ScenarioAnnotation[] {
  if (!Array.isArray(value)) return [];
  const out: ScenarioAnnotation[] = [];
  for (const a of value) {
    if (!isRecord(a) || typeof a["note"] !== "string" || a["note"] === "") continue;
    const at = a["at"];
    const on = a["on"];
    const nth = a["nth"];
    const pause = a["pause"] !== false;
    if (typeof on === "string" && at === undefined && isTraceEventName(on)) {
      out.push({
        on,
        ...(typeof nth === "number" && Number.isInteger(nth) && nth >= 1 && { nth }),
        note: a["note"],
        pause,
      });
    } else if ((typeof at === "number" || typeof at === "string") && on === undefined) {
      out.push({ at, note: a["note"], pause });
    }
  }
  return out;
}

/** An annotation placed on a run. */
export interface AnnotationPoint {
  /** Its place in the scenario's `annotations` (from 0): its id. */
  readonly index: number;
  readonly note: string;
  readonly pause: boolean;
  /** Where it is: its time, or its event's; undefined while its event has not happened (or never did). */
  readonly timeMs?: number;
  /** The event it is on (an `on` annotation's). */
  readonly seq?: number;
  /** The event kind an `on` annotation waits for, and which of them. */
  readonly on?: string;
  readonly nth?: number;
  /** What it is about, in words: `at +2:03:00`, `at the first smtp.handoff`, `at the 8th attempt.judged`. */
  readonly about: string;
}

/** `first`, `2nd`, `3rd`, `11th`. */
export function ordinal(n: number): string {
  if (n === 1) return "first";
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** Where an `at` annotation is, ms since the epoch; undefined when it is not a time (the parser says so). */
function timeOf(at: TimeOffset, startMs: number): number | undefined {
  try {
    const ms = resolveTimeMs(typeof at === "string" && parseDurationMs(at) === undefined ? at.trim() : at, startMs);
    return Number.isFinite(ms) ? ms : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The annotations placed on the run of `events` (as far as it has run): an `at` annotation at its time, an
 * `on` annotation at its event (the `nth` of that kind, the first by default) once that event is among
 * `events`. In the scenario's order.
 */
export function annotationPoints(
  annotations: readonly ScenarioAnnotation[],
  events: readonly RecordedEvent[],
  startMs: number,
): AnnotationPoint[] {
  // The events each `on` annotation waits for: kind → nth → the annotations' indexes.
  const wanted = new Map<string, Map<number, number[]>>();
  annotations.forEach((a, i) => {
    if (a.on === undefined) return;
    const byNth = wanted.get(a.on) ?? new Map<number, number[]>();
    const nth = a.nth ?? 1;
    byNth.set(nth, [...(byNth.get(nth) ?? []), i]);
    wanted.set(a.on, byNth);
  });
  const found = new Map<number, RecordedEvent>();
  if (wanted.size > 0) {
    const seen = new Map<string, number>();
    let left = [...wanted.values()].reduce((n, m) => n + m.size, 0);
    for (const e of events) {
      const byNth = wanted.get(e.name);
      if (byNth === undefined) continue;
      const n = (seen.get(e.name) ?? 0) + 1;
      seen.set(e.name, n);
      const indexes = byNth.get(n);
      if (indexes === undefined) continue;
      for (const i of indexes) found.set(i, e);
      if (--left === 0) break;
    }
  }
  return annotations.map((a, index) => {
    const base = { index, note: a.note, pause: a.pause };
    if (a.on !== undefined) {
      const nth = a.nth ?? 1;
      const e = found.get(index);
      return {
        ...base,
        on: a.on,
        nth,
        about: `at the ${ordinal(nth)} ${a.on}`,
        ...(e !== undefined && { timeMs: e.timeMs, seq: e.seq }),
      };
    }
    const timeMs = a.at === undefined ? undefined : timeOf(a.at, startMs);
    return {
      ...base,
      ...(timeMs !== undefined && { timeMs }),
      about: timeMs === undefined ? `at ${String(a.at)}` : `at ${formatOffset(timeMs, startMs)}`,
    };
  });
}

/** The id of the breakpoint of the note at `index` in the scenario's `annotations` (from 0): `note-1`, `note-2`, …. */
export function noteBreakpointId(index: number): string {
  return `note-${index + 1}`;
}

/** The index of the note a breakpoint id names (`note-2` → 1); undefined for the user's own breakpoints. */
export function noteOfBreakpoint(id: string): number | undefined {
  const m = /^note-(\d+)$/.exec(id);
  return m === null ? undefined : Number(m[1]) - 1;
}

/**
 * The pause points of a lesson as breakpoints (docs/decisions/0100): each note with `pause`, at its time
 * (resolved from the run's start) or on the nth event of its kind (the first by default, as
 * {@link annotationPoints} places it), ids {@link noteBreakpointId}. The session stops at them as at any
 * breakpoint: at the note's event itself (the last event shown is the note's), or with the clock at its time.
 * A note whose time does not resolve gives none.
 */
export function noteBreakpoints(annotations: readonly ScenarioAnnotation[], startMs: number): Breakpoint[] {
  const out: Breakpoint[] = [];
  for (const p of annotationPoints(annotations, [], startMs)) {
    if (!p.pause) continue;
    const where =
      p.on !== undefined ? { on: p.on, nth: p.nth ?? 1 } : p.timeMs !== undefined ? { atMs: p.timeMs } : undefined;
    if (where === undefined) continue;
    out.push({
      id: noteBreakpointId(p.index),
      enabled: true,
      condition: { kind: "annotation", note: p.note, ...where },
    });
  }
  return out;
}
