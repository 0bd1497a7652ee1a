/**
 * What is selected in the run view, shared by all its panels: selecting in one view selects it in all
 * (docs/decisions/0140-app-state.md). A log line, a timeline mark, an exchange of the sequence diagram, a
 * transition of the statechart's history or a link of the Why panel each select an event (its `seq`), the
 * delivery it belongs to, the attempt of that delivery it happened in and the exchanges the inspector shows.
 *
 * The store is {@link selectionReducer}: pure functions of the selection, an action and the run's events. An
 * attempt is found through the run's index ({@link attemptAt}), reading one delivery's events, not by building
 * the whole timeline.
 */
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { actorEvents, exchangeEvents, runIndexOf, wireEvents } from "./runIndex.ts";
import type { Mark } from "./timeline.ts";
import type { WhyTarget } from "./why.ts";

/** A selected mark of the timeline: an attempt, or another mark picked on it (a hand-off, a DNS change …). */
export type SelectedMark = Pick<Mark, "id" | "lane" | "seq" | "exchangeIds"> & { readonly attempt?: number };

export interface Selection {
  /** The delivery actor selected (`m1@a.example→b.example`): its lane, its outcome rows, its statechart. */
  readonly delivery: string | undefined;
  /** The mark selected on the timeline (an attempt when another view selected it). */
  readonly mark: SelectedMark | undefined;
  /** The exchanges the inspector shows (`x3`). */
  readonly exchanges: readonly string[];
  /** The event selected: its line in the log, its permalink. */
  readonly seq: number | undefined;
  /** The log lines highlighted as evidence (a check's, a Why clause's, a statechart transition's). */
  readonly evidence: ReadonlySet<number>;
  /** The message whose sequence diagram shows, when picked there (else the selected delivery's). */
  readonly message: string | undefined;
  /** The time range the sequence diagram shows (a brush on the timeline or the diagram). */
  readonly range: readonly [number, number] | undefined;
  /** The recipient result the Why panel explains. */
  readonly why: WhyTarget | undefined;
  /** The statechart step a Why link asked for; `nonce` makes asking twice for the same step move again. */
  readonly step: { readonly seq: number; readonly nonce: number } | undefined;
}

export const NO_SELECTION: Selection = {
  delivery: undefined,
  mark: undefined,
  exchanges: [],
  seq: undefined,
  evidence: new Set(),
  message: undefined,
  range: undefined,
  why: undefined,
  step: undefined,
};

export type SelectionAction =
  /** A delivery picked (its lane, its outcome row, its statechart), or none. */
  | { readonly type: "delivery"; readonly actor: string | undefined }
  /** A mark picked on the timeline: its event and its exchanges too. */
  | { readonly type: "mark"; readonly mark: SelectedMark | undefined }
  /** An event picked (a log line, a link followed): its exchange, its delivery's attempt. */
  | { readonly type: "event"; readonly event: RecordedEvent; readonly events: readonly RecordedEvent[] }
  /** Events shown as evidence; one transition of a statechart's history also selects its attempt. */
  | { readonly type: "history"; readonly seqs: readonly number[]; readonly events: readonly RecordedEvent[] }
  /** Log lines shown as evidence, nothing else selected. */
  | { readonly type: "evidence"; readonly seqs: readonly number[] }
  /** A Why clause's attempt: its delivery and its attempt's mark. */
  | {
      readonly type: "attempt";
      readonly actor: string;
      readonly atMs: number;
      readonly events: readonly RecordedEvent[];
    }
  /** A Why clause's step of the delivery machine: the delivery, the statechart's step, its attempt. */
  | { readonly type: "step"; readonly actor: string; readonly seq: number; readonly events: readonly RecordedEvent[] }
  /** An exchange picked in the sequence diagram: the inspector shows it, its first event is selected. */
  | { readonly type: "exchange"; readonly exchangeId: string; readonly events: readonly RecordedEvent[] }
  /** A message picked in the sequence diagram (the range goes: it was another message's). */
  | { readonly type: "message"; readonly messageId: string | undefined }
  | { readonly type: "range"; readonly range: readonly [number, number] | undefined }
  | { readonly type: "why"; readonly target: WhyTarget | undefined }
  /** Another run opened: the event selected was the last run's. */
  | { readonly type: "run" };

/**
 * The attempt of `actor` that a moment belongs to: the last attempt it started at or before `timeMs`, as its
 * mark on the timeline (`attemptMarkAt` of the whole timeline gives the same), read from the actor's own
 * events through the run's index.
 */
export function attemptAt(
  events: readonly RecordedEvent[],
  actor: string,
  timeMs: number,
): (SelectedMark & { readonly attempt: number }) | undefined {
  const index = runIndexOf(events);
  let found: (SelectedMark & { readonly attempt: number }) | undefined;
  let count = 0;
  // The requests the actor made since its last judged attempt: the next attempt's exchanges.
  let exchanges: string[] = [];
  const judged = actorEvents(index, actor).filter(
    (e) => e.name === "attempt.judged" && e.data?.["deliveryActor"] === actor,
  );
  const requests = wireEvents(index, actor).filter((e) => e.name === "http.request");
  let r = 0;
  for (const e of judged) {
    while (r < requests.length && (requests[r] as RecordedEvent).seq < e.seq) {
      const x = (requests[r] as RecordedEvent).data?.["exchangeId"];
      if (typeof x === "string" && x !== "") exchanges.push(x);
      r++;
    }
    count++;
    const d = e.data ?? {};
    const n = typeof d["attempt"] === "number" ? d["attempt"] : count;
    const started = typeof d["startedAtMs"] === "number" ? d["startedAtMs"] : e.timeMs;
    if (started <= timeMs)
      found = { id: `a:${actor}:${n}`, lane: actor, seq: e.seq, attempt: n, exchangeIds: exchanges };
    exchanges = [];
  }
  return found;
}

/** The selection with `seqs` as evidence and, for one transition, its attempt selected (not its event). */
function history(s: Selection, seqs: readonly number[], events: readonly RecordedEvent[]): Selection {
  const next = { ...s, evidence: new Set(seqs) };
  const event = seqs.length === 1 ? events.find((e) => e.seq === seqs[0]) : undefined;
  const actor = event?.data?.["deliveryActor"];
  if (event === undefined || typeof actor !== "string") return next;
  const attempt = attemptAt(events, actor, event.timeMs);
  return attempt === undefined ? next : { ...next, mark: attempt, exchanges: attempt.exchangeIds };
}

/** What selecting does: one pure function for every view's way of selecting. */
export function selectionReducer(s: Selection, a: SelectionAction): Selection {
  switch (a.type) {
    case "delivery":
      return { ...s, delivery: a.actor };
    case "mark":
      return a.mark === undefined
        ? { ...s, mark: undefined }
        : { ...s, mark: a.mark, exchanges: a.mark.exchangeIds, seq: a.mark.seq };
    case "event": {
      const exchangeId = a.event.data?.["exchangeId"];
      const own = typeof exchangeId === "string" ? { exchanges: [exchangeId] } : {};
      const next: Selection = { ...s, seq: a.event.seq, ...own };
      const actor = a.event.data?.["deliveryActor"];
      if (typeof actor !== "string") return next;
      const attempt = attemptAt(a.events, actor, a.event.timeMs);
      if (attempt === undefined) return next;
      return { ...next, mark: attempt, exchanges: typeof exchangeId === "string" ? [exchangeId] : attempt.exchangeIds };
    }
    case "history":
      return history(s, a.seqs, a.events);
    case "evidence":
      return { ...s, evidence: new Set(a.seqs) };
    case "attempt": {
      const attempt = attemptAt(a.events, a.actor, a.atMs);
      const next = { ...s, delivery: a.actor };
      return attempt === undefined ? next : { ...next, mark: attempt, exchanges: attempt.exchangeIds };
    }
    case "step":
      return history(
        { ...s, delivery: a.actor, step: { seq: a.seq, nonce: (s.step?.nonce ?? 0) + 1 } },
        [a.seq],
        a.events,
      );
    case "exchange": {
      const first = exchangeEvents(runIndexOf(a.events), a.exchangeId)[0];
      return { ...s, exchanges: [a.exchangeId], ...(first !== undefined && { seq: first.seq }) };
    }
    case "message":
      return { ...s, message: a.messageId, range: undefined };
    case "range":
      return { ...s, range: a.range };
    case "why":
      return { ...s, why: a.target };
    case "run":
      return { ...s, seq: undefined };
  }
}
