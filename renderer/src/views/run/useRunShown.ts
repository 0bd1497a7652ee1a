/**
 * What the run view shows of the run at this moment (a view's own hook, docs/decisions/0140): the events the
 * log and the outcomes follow as fast as they can draw, those the whole-run views (timeline, sequence,
 * inspector, statechart) draw a few times a second, the phase said, the clock and the scrubber's span, the
 * rows of the log, the outcomes, the checks, the trace to export, the stop line and the breakpoints' hits.
 */
import { useDeferredValue, useMemo, useState } from "react";
import type { Trace } from "../../../../app/trace/schema.ts";
import { useThrottled } from "../../hooks/useThrottled.ts";
import { checkRows } from "../../model/checks.ts";
import { createLogRowsCache } from "../../model/log.ts";
import { outcomeRows } from "../../model/outcomes.ts";
import { hitCounts, scrubberEnd, seenOfRun, stopText, type SeenRun } from "../../model/playbar.ts";
import { heavyViewsEveryMs, knownEndOf, runPlayheadMs, shownPhaseOf } from "../../model/runShown.ts";
import type { PlaybackContext, PlaybackPhase } from "../../session/machine.ts";

/** The log's rows of the run on screen, described once each as batches arrive. */
const logRowsOf = createLogRowsCache();

const NO_EVENTS: PlaybackContext["events"] = [];
const NO_HEAVY = { events: NO_EVENTS, playheadMs: 0 };

export function useRunShown(phase: PlaybackPhase, context: PlaybackContext) {
  const startMs = context.summary?.startMs ?? context.events[0]?.timeMs ?? 0;
  // The log and the outcomes follow the events as fast as they can draw; while a batch is drawn,
  // the next ones are taken in (and the clock moves) rather than queued behind it. Mounted with a whole
  // run (an opened trace), they start empty and take it right after the timeline's first draw.
  const events = useDeferredValue(context.events, NO_EVENTS);
  // The whole-run views take a later batch after the log (below), but a whole run at mount at once: the
  // timeline is the first picture of an opened trace (it must be drawn in under a second).
  const wholeRunEvents = useDeferredValue(context.events);
  // What is on screen is one moment of the run: until the views have drawn the last events, the phase
  // says where they are (never "Finished" beside outcomes that are not), and the checks wait.
  const live = context.source?.kind === "scenario";
  const shownPhase = shownPhaseOf(phase, events === context.events, live);
  const finished = shownPhase === "finished";
  const rows = useMemo(() => logRowsOf(events, startMs), [events, startMs]);
  const labels = useMemo(
    () => new Map((context.summary?.messages ?? []).map((m) => [m.messageId, m.id])),
    [context.summary],
  );
  const outcomes = useMemo(() => outcomeRows(events, startMs, labels), [events, startMs, labels]);
  const checks = useMemo(
    () => (context.result ? checkRows(context.result.invariants, context.result.expectations) : []),
    [context.result],
  );
  const result = finished ? context.result : undefined;
  const allEvents = context.events;
  const trace: Trace | undefined = useMemo(
    () => (result ? { ...result.trace, events: [...allEvents] } : undefined),
    [result, allEvents],
  );
  const playheadMs = runPlayheadMs(finished, context, startMs);
  // The views that draw the whole run (timeline, sequence, inspector, statechart) follow a playing run
  // a few times a second; paused, stepped or finished, they draw the same events as the log right after it.
  const heavy = useThrottled(
    useMemo(() => ({ events: wholeRunEvents, playheadMs }), [wholeRunEvents, playheadMs]),
    shownPhase === "playing",
    heavyViewsEveryMs(context),
  );
  // Mounted with a whole run, the sequence diagram, inspector and statechart come right after the
  // timeline's first draw; later their events change with the timeline's, in the same transition.
  const below = useDeferredValue(heavy, NO_HEAVY);
  // The scrubber spans the run to its end once it is known (kept after a jump back), else as far as known.
  const knownEnd = knownEndOf(context);
  const endMs = scrubberEnd({
    startMs,
    endMs: knownEnd,
    knownMs: [playheadMs, context.progress?.nextEventAtMs, context.events.at(-1)?.timeMs],
  });
  // The scrubber draws where the run's events are as far as it has been shown: a jump back keeps them (0097).
  const [seenBefore, setSeen] = useState<SeenRun | undefined>();
  const seen = seenOfRun(seenBefore, context.source, heavy.events);
  if (seen.run !== seenBefore?.run || seen.events !== seenBefore?.events) setSeen(seen);
  const stopLine = useMemo(
    () =>
      context.stop === undefined
        ? undefined
        : stopText(context.stop, context.events, startMs, context.breakpoints, (m) => labels.get(m) ?? m),
    [context.stop, context.events, startMs, context.breakpoints, labels],
  );
  const hits = useMemo(() => hitCounts(context.hits), [context.hits]);
  return {
    startMs,
    events,
    live,
    shownPhase,
    finished,
    rows,
    labels,
    outcomes,
    checks,
    result,
    trace,
    playheadMs,
    heavy,
    below,
    knownEnd,
    endMs,
    scrubEvents: seen.events,
    stopLine,
    hits,
  };
}
