/**
 * What is selected in the run view, shared by every panel (model/selection.ts: selecting in one selects it
 * in all), the ways of selecting each panel has, and the permalink followed: its event is selected once it is
 * in the run; another run (a scenario or trace opened) starts with nothing selected and follows the link again.
 */
import { useCallback, useMemo, useReducer, useState } from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { eventOfSeq, linkPlace, linkProblem } from "../../model/permalink.ts";
import { NO_SELECTION, selectionReducer, type SelectedMark } from "../../model/selection.ts";
import type { WhyLinks } from "../../model/why.ts";
import type { PlaybackContext } from "../../session/machine.ts";
import { useLinkRequest } from "./Permalink.tsx";
import { scrollClearOfBars } from "../scrollClear.ts";

/** Brings the panel of the heading `id` into view (a Why clause's link goes to its evidence). */
function reveal(id: string): void {
  requestAnimationFrame(() => {
    const target = document.getElementById(id);
    if (target !== null) scrollClearOfBars(target, { block: "start", behavior: "smooth" });
  });
}

/**
 * `heavyEvents` are the events the whole-run views draw (an attempt or an exchange is found among them);
 * `finished` whether the run shown is at its end (a link to an event it never had says so then).
 */
export function useRunSelection(
  context: Pick<PlaybackContext, "events" | "source">,
  heavyEvents: readonly RecordedEvent[],
  finished: boolean,
) {
  const [selection, select] = useReducer(selectionReducer, NO_SELECTION);
  const linkRequest = useLinkRequest();
  const [dismissed, setDismissed] = useState<unknown>();
  const linkedSeq = linkRequest?.kind === "seq" ? linkRequest.seq : undefined;
  const place = useMemo(
    () => (linkedSeq === undefined ? undefined : linkPlace(context.events, linkedSeq, finished)),
    [linkedSeq, context.events, finished],
  );
  const linkKey = linkRequest?.kind === "bad" ? linkRequest.message : linkedSeq;
  const problem = dismissed === linkKey ? undefined : linkProblem(linkRequest, place);
  const dismissLink = () => {
    setDismissed(linkKey);
    // The link is done with: a reload or the next run opened does not follow it again.
    window.history.replaceState(window.history.state, "", window.location.pathname + window.location.search);
  };
  const selectedEvent = selection.seq === undefined ? undefined : eventOfSeq(context.events, selection.seq);
  const setDelivery = useCallback((actor: string | undefined) => select({ type: "delivery", actor }), []);
  const clearDelivery = useCallback(() => select({ type: "delivery", actor: undefined }), []);
  const onMark = useCallback((m: SelectedMark | undefined) => select({ type: "mark", mark: m }), []);
  const setRange = useCallback((r: readonly [number, number] | undefined) => select({ type: "range", range: r }), []);
  // A transition of the history selects the attempt it belongs to in the timeline and the inspector.
  const onHistory = useCallback(
    (seqs: readonly number[]) => select({ type: "history", seqs, events: heavyEvents }),
    [heavyEvents],
  );
  // An event selected by a link or a log line: its line in the log, its attempt on the timeline, its exchange.
  const selectEvent = useCallback(
    (event: RecordedEvent) => select({ type: "event", event, events: heavyEvents }),
    [heavyEvents],
  );
  const onLogSelect = useCallback(
    (seq: number) => {
      const event = eventOfSeq(context.events, seq);
      if (event !== undefined) selectEvent(event);
    },
    [context.events, selectEvent],
  );
  const [followed, setFollowed] = useState<number | undefined>();
  const [runOf, setRunOf] = useState(context.source);
  if (runOf !== context.source) {
    setRunOf(context.source);
    select({ type: "run" });
    setFollowed(undefined);
  }
  if (place?.kind === "found" && followed !== place.event.seq) {
    setFollowed(place.event.seq);
    selectEvent(place.event);
  }
  // A Why clause's links: its attempt on the timeline, its events in the log, its step of the delivery machine.
  const onWhyAttempt = useCallback(
    (a: NonNullable<WhyLinks["attempt"]>) => {
      select({ type: "attempt", actor: a.actor, atMs: a.atMs, events: heavyEvents });
      reveal("timeline-heading");
    },
    [heavyEvents],
  );
  // Events to mark in the log (a Why clause's, a check's evidence, a note's event): marked, and the log brought into view.
  // Each such link followed is counted: the log takes the focus then (its "show them" when its filters hide some).
  const [logLinks, setLogLinks] = useState(0);
  const onLogEvidence = useCallback((seqs: readonly number[]) => {
    select({ type: "evidence", seqs });
    setLogLinks((n) => n + 1);
    reveal("log-heading");
  }, []);
  const onWhyStep = useCallback(
    (s: NonNullable<WhyLinks["transition"]>) => {
      select({ type: "step", actor: s.actor, seq: s.seq, events: heavyEvents });
      reveal("statechart-heading");
    },
    [heavyEvents],
  );
  return {
    selection,
    select,
    selectedEvent,
    problem,
    dismissLink,
    followed,
    setDelivery,
    clearDelivery,
    onMark,
    setRange,
    onHistory,
    onLogSelect,
    onWhyAttempt,
    onLogEvidence,
    logLinks,
    onWhyStep,
  };
}
