/**
 * Permalinks to a place in a run: `#seq=1572` names one event of the trace; opened with
 * that hash, the run view selects it (its log line, its attempt on the timeline, its exchange). Pure: what
 * a hash says, and where its event is in the events at hand — found, not reached yet (a live run that has
 * not got there), or not in this trace at all.
 */
import type { RecordedEvent } from "../../../app/trace/schema.ts";

/** What a location's hash asks for: an event, a hash that is not a permalink's (an error), or nothing. */
export type LinkRequest =
  { readonly kind: "seq"; readonly seq: number } | { readonly kind: "bad"; readonly message: string } | undefined;

/** The hash of the permalink to event `seq`. */
export function permalinkHash(seq: number): string {
  return `#seq=${seq}`;
}

/** What `hash` (`#seq=1572`, from `location.hash`) asks for; any other hash asks for nothing. */
export function parsePermalink(hash: string): LinkRequest {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const raw = params.get("seq");
  if (raw === null) return undefined;
  const text = raw.trim();
  if (!/^\d{1,15}$/.test(text))
    return {
      kind: "bad",
      message: `This link's #seq=${raw} names no event: a seq is a whole number, such as #seq=1572.`,
    };
  return { kind: "seq", seq: Number(text) };
}

/** Where a linked event is in the events at hand. */
export type LinkPlace =
  | { readonly kind: "found"; readonly event: RecordedEvent }
  /** A run still going that has not got there: it may yet. */
  | { readonly kind: "waiting"; readonly last: number | undefined }
  /** Not in this trace: it has the seqs `first`…`last` (none when empty). */
  | { readonly kind: "missing"; readonly first: number | undefined; readonly last: number | undefined };

/** The event of `seq` in `events` (sorted by seq; a trace's seqs are its positions, so usually found at once). */
export function eventOfSeq(events: readonly RecordedEvent[], seq: number): RecordedEvent | undefined {
  const at = events[seq];
  if (at?.seq === seq) return at;
  let lo = 0;
  let hi = events.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = (events[mid] as RecordedEvent).seq;
    if (s === seq) return events[mid];
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Where event `seq` is in `events`; `complete` says the events are the whole run (a finished run, an opened trace). */
export function linkPlace(events: readonly RecordedEvent[], seq: number, complete: boolean): LinkPlace {
  const event = eventOfSeq(events, seq);
  if (event !== undefined) return { kind: "found", event };
  const first = events[0]?.seq;
  const last = events.at(-1)?.seq;
  if (!complete && (last === undefined || seq > last)) return { kind: "waiting", last };
  return { kind: "missing", first, last };
}

/** What the run view says of a link it cannot follow (undefined: it can, or there is none). */
export function linkProblem(request: LinkRequest, place: LinkPlace | undefined): string | undefined {
  if (request === undefined) return undefined;
  if (request.kind === "bad") return request.message;
  if (place === undefined || place.kind === "found") return undefined;
  if (place.kind === "waiting")
    return `The link points at event #${request.seq}; this run has not got there yet${
      place.last === undefined ? "" : ` (its last event so far is #${place.last})`
    }. Play on: it is selected when it comes.`;
  return place.first === undefined
    ? `The link points at event #${request.seq}, but this run has no events.`
    : `The link points at event #${request.seq}, but this trace has events #${place.first}–#${place.last} only: is it a link to another trace?`;
}
