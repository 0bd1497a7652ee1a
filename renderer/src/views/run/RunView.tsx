import { constantsOf, departures, departuresText } from "../../../../app/sim/constants.ts";
import { useCallback, useDeferredValue, useMemo, useReducer, useState } from "react";
import { useStable } from "../../hooks/useStable.ts";
import { useThrottled } from "../../hooks/useThrottled.ts";
import type { PlaybackSpeed, ReceiverOfRun } from "../../../../app/sim/sessionProtocol.ts";
import type { Trace } from "../../../../app/trace/schema.ts";
import { checkRows } from "../../model/checks.ts";
import { createLogRowsCache } from "../../model/log.ts";
import { outcomeRows } from "../../model/outcomes.ts";
import type { PlaybackContext, PlaybackEvent, PlaybackPhase } from "../../session/machine.ts";
import { receiversOfTrace } from "../../session/replay.ts";
import { timelineReader } from "../../model/timeline.ts";
import { NO_SELECTION, selectionReducer, type SelectedMark } from "../../model/selection.ts";
import { LogView } from "../log/LogView.tsx";
import { InspectorView } from "../exchange/InspectorView.tsx";
import { SequenceView } from "../sequence/SequenceView.tsx";
import { StatechartView } from "../statechart/StatechartView.tsx";
import { TimelineView } from "../timeline/TimelineView.tsx";
import { Checks } from "./Checks.tsx";
import { Controls } from "./Controls.tsx";
import { hitCounts, scrubberEnd, seenOfRun, stopText, type SeenRun } from "../../model/playbar.ts";
import { ExportBar, type RunExports } from "./ExportBar.tsx";
import { Outcomes } from "./Outcomes.tsx";
import { Readings } from "./Readings.tsx";
import { WhyPanel } from "./WhyPanel.tsx";
import { whyOf, type WhyLinks } from "../../model/why.ts";
import type { LessonPlace, LibraryEntry } from "../../model/library.ts";
import { LessonPanel } from "./LessonPanel.tsx";
import { useLessonNotes } from "./useLessonNotes.ts";
import { notesOfRun } from "../../model/lesson.ts";
import { eventOfSeq, linkPlace, linkProblem } from "../../model/permalink.ts";
import { messageOfActor } from "../../../../app/trace/deliveryIds.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { PermalinkBar, useLinkRequest } from "./Permalink.tsx";
import { COMMANDS, type CommandContext } from "../../commands/commands.ts";

export interface RunViewProps {
  readonly phase: PlaybackPhase;
  readonly context: PlaybackContext;
  readonly title: string;
  /** The scenario's name, shown beside its title when they differ. */
  readonly name?: string | undefined;
  readonly description: string;
  /** The scenario's place in the "Start here" path, and how to open another lesson (issue 24). */
  readonly lesson?: (LessonPlace & { readonly onOpen: (entry: LibraryEntry) => void }) | undefined;
  readonly send: (event: PlaybackEvent) => void;
  /** What the buttons perform: the commands the menus and keys perform too. */
  readonly commands: CommandContext;
  readonly onReading: (setting: [string, string]) => void;
  readonly onRule: (rule: string) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
  /** The run's exports: "with message bodies", what the last export left out, the export itself. */
  readonly exports: RunExports;
  /** Opens the Compare view from this run, its playhead the fork time (issue 15). */
  readonly onCompare?: (playheadMs: number) => void;
  /** Opens the Sweep view for this run's scenario (issue 30). */
  readonly onSweep?: () => void;
  /** This run is a sweep's point: back to that sweep and its results. */
  readonly onBackToSweep?: () => void;
}

/** The log's rows of the run on screen, described once each as batches arrive. */
const logRowsOf = createLogRowsCache();

const NO_EVENTS: PlaybackContext["events"] = [];
const NO_HEAVY = { events: NO_EVENTS, playheadMs: 0 };
const NO_RECEIVERS: readonly ReceiverOfRun[] = [];

/** Wall ms between two drawings of the timeline, sequence, inspector and statechart while a run plays. */
export const HEAVY_VIEWS_EVERY_MS = 250;
/**
 * The same at speed max: a run there is over in a second or so, and drawing those views while it runs took
 * the CPU the simulation worker needed (issue 12 "Measure"); they draw its end right after the log.
 */
export const HEAVY_VIEWS_AT_MAX_EVERY_MS = 1000;

/** One run: controls and clock, the log, the outcomes, the checks, readings and export. */
export function RunView({
  phase,
  context,
  title,
  name,
  description,
  lesson,
  send,
  commands,
  onReading,
  onRule,
  onSave,
  exports,
  onCompare,
  onSweep,
  onBackToSweep,
}: RunViewProps) {
  // What is selected, shared by every panel: selecting in one selects it in all (model/selection.ts).
  const [selection, select] = useReducer(selectionReducer, NO_SELECTION);
  const { delivery, evidence, mark, exchanges, message, range, why: whyTarget, step, seq: selectedSeq } = selection;
  const [readingsOpen, setReadingsOpen] = useState(false);
  // The timeline's reader, kept by the run view: the timeline is read again only when its events change.
  const [timelines] = useState(timelineReader);
  const linkRequest = useLinkRequest();
  const [dismissed, setDismissed] = useState<unknown>();
  const startMs = context.summary?.startMs ?? context.events[0]?.timeMs ?? 0;
  // The log and the outcomes follow the events as fast as they can draw; while a batch is drawn,
  // the next ones are taken in (and the clock moves) rather than queued behind it. Mounted with a whole
  // run (an opened trace), they start empty and take it right after the timeline's first draw.
  const events = useDeferredValue(context.events, NO_EVENTS);
  // The whole-run views take a later batch after the log (below), but a whole run at mount at once: the
  // timeline is the first picture of an opened trace (issue 13: drawn in < 1 s).
  const wholeRunEvents = useDeferredValue(context.events);
  // What is on screen is one moment of the run: until the views have drawn the last events, the phase
  // says where they are (never "Finished" beside outcomes that are not), and the checks wait.
  const drawnAll = events === context.events;
  const live = context.source?.kind === "scenario";
  const shownPhase: PlaybackPhase = phase === "finished" && !drawnAll ? (live ? "playing" : "loading") : phase;
  const finished = shownPhase === "finished";
  const rows = useMemo(() => logRowsOf(events, startMs), [events, startMs]);
  const linkedSeq = linkRequest?.kind === "seq" ? linkRequest.seq : undefined;
  const place = useMemo(
    () => (linkedSeq === undefined ? undefined : linkPlace(context.events, linkedSeq, finished)),
    [linkedSeq, context.events, finished],
  );
  const problem =
    dismissed === (linkRequest?.kind === "bad" ? linkRequest.message : linkedSeq)
      ? undefined
      : linkProblem(linkRequest, place);
  const selectedEvent = selectedSeq === undefined ? undefined : eventOfSeq(context.events, selectedSeq);
  const labels = useMemo(
    () => new Map((context.summary?.messages ?? []).map((m) => [m.messageId, m.id])),
    [context.summary],
  );
  const outcomes = useMemo(() => outcomeRows(events, startMs, labels), [events, startMs, labels]);
  // The Why panel reads the same events as the outcomes table beside it.
  const why = useMemo(
    () => (whyTarget === undefined ? undefined : whyOf(events, startMs, whyTarget)),
    [events, startMs, whyTarget],
  );
  const whyRow = outcomes.find((r) => r.messageId === whyTarget?.messageId && r.recipient === whyTarget.recipient);
  // The run's receivers, for the inspector's checks: a live run's summary has them; an opened trace's are
  // read from its scenario's text, once an exchange is inspected (not while the trace opens).
  const inspecting = exchanges.length > 0;
  const receivers = useMemo(() => {
    if (!inspecting) return NO_RECEIVERS;
    const live = (context.summary?.domains ?? []).flatMap((d) => (d.receiverAt !== undefined ? [d.receiverAt] : []));
    if (live.length > 0 || context.source?.kind !== "trace" || context.result === undefined) return live;
    return [...receiversOfTrace(context.result.trace).values()];
  }, [inspecting, context.summary, context.source, context.result]);
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
  // At the end the clock says where the run ended, as `mailscope run` does (not the horizon it was allowed).
  const playheadMs = finished && result ? result.endMs : (context.progress?.playheadMs ?? startMs);
  // The views that draw the whole run (timeline, sequence, inspector, statechart) follow a playing run
  // a few times a second; paused, stepped or finished, they draw the same events as the log right after it.
  const heavy = useThrottled(
    useMemo(() => ({ events: wholeRunEvents, playheadMs }), [wholeRunEvents, playheadMs]),
    shownPhase === "playing",
    // A jump and "run to the end" go as fast as possible too.
    context.speed === "max" || (context.drive !== undefined && context.drive.kind !== "play")
      ? HEAVY_VIEWS_AT_MAX_EVERY_MS
      : HEAVY_VIEWS_EVERY_MS,
  );
  // Mounted with a whole run, the sequence diagram, inspector and statechart come right after the
  // timeline's first draw; later their events change with the timeline's, in the same transition.
  const below = useDeferredValue(heavy, NO_HEAVY);
  // The scrubber spans the run to its end once it is known (kept after a jump back), else as far as known.
  const knownEnd = context.knownEndMs ?? (context.source?.kind === "trace" ? context.result?.endMs : undefined);
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
  // The scenario's notes (issue 24): placed on the run, shown as the playhead reaches them, paused at in a lesson.
  const notes = useLessonNotes({ context, phase, startMs });
  // The notes on the timeline: placed on the timeline's own events, so they come with its draws, not each batch.
  const timelineNotes = useMemo(
    () => notesOfRun(notes.annotations, heavy.events, startMs),
    [notes.annotations, heavy.events, startMs],
  );
  const rule = useStable(onRule);
  const save = useStable(onSave);
  const setDelivery = useCallback((actor: string | undefined) => select({ type: "delivery", actor }), []);
  const clearDelivery = useCallback(() => select({ type: "delivery", actor: undefined }), []);
  const onMark = useCallback((m: SelectedMark | undefined) => select({ type: "mark", mark: m }), []);
  const setRange = useCallback((r: readonly [number, number] | undefined) => select({ type: "range", range: r }), []);
  // A transition of the history selects the attempt it belongs to in the timeline and the inspector.
  const onHistory = useCallback(
    (seqs: readonly number[]) => select({ type: "history", seqs, events: heavy.events }),
    [heavy.events],
  );
  // An event selected by a link or a log line: its line in the log, its attempt on the timeline, its exchange.
  const selectEvent = useCallback(
    (event: RecordedEvent) => select({ type: "event", event, events: heavy.events }),
    [heavy.events],
  );
  const onLogSelect = useCallback(
    (seq: number) => {
      const event = eventOfSeq(context.events, seq);
      if (event !== undefined) selectEvent(event);
    },
    [context.events, selectEvent],
  );
  // A link followed (at load, or a hash changed): its event is selected once it is in the run; another run
  // (a scenario or trace opened) starts with nothing selected, and follows the link again.
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
      select({ type: "attempt", actor: a.actor, atMs: a.atMs, events: heavy.events });
      reveal("timeline-heading");
    },
    [heavy.events],
  );
  const onWhyLog = useCallback((seqs: readonly number[]) => {
    select({ type: "evidence", seqs });
    reveal("log-heading");
  }, []);
  const onWhyStep = useCallback(
    (s: NonNullable<WhyLinks["transition"]>) => {
      select({ type: "step", actor: s.actor, seq: s.seq, events: heavy.events });
      reveal("statechart-heading");
    },
    [heavy.events],
  );
  // Drawn again only when what they draw changes (not at every batch of a playing run, nor every tick).
  const wholeRunViews = useMemo(
    () => (
      <>
        <TimelineView
          reader={timelines}
          events={heavy.events}
          notes={timelineNotes}
          startMs={startMs}
          labels={labels}
          playheadMs={heavy.playheadMs}
          delivery={delivery}
          onDelivery={setDelivery}
          selectedMark={mark}
          onMark={onMark}
          onRange={setRange}
        />
        <SequenceView
          events={below.events}
          startMs={startMs}
          labels={labels}
          messageId={message ?? (delivery === undefined ? undefined : messageOfActor(delivery))}
          onMessage={(m) => select({ type: "message", messageId: m })}
          range={range}
          onRange={setRange}
          exchangeId={exchanges.at(-1)}
          onExchange={(x) => select({ type: "exchange", exchangeId: x, events: below.events })}
          onSave={save}
        />
        <InspectorView
          events={below.events}
          startMs={startMs}
          exchangeIds={exchanges}
          receivers={receivers}
          onRule={rule}
        />
        <StatechartView
          events={below.events}
          startMs={startMs}
          playheadMs={below.playheadMs}
          delivery={delivery}
          onSelectDelivery={setDelivery}
          onEvents={onHistory}
          onRule={rule}
          step={step}
        />
      </>
    ),
    [
      timelines,
      heavy,
      below,
      startMs,
      labels,
      delivery,
      setDelivery,
      mark,
      onMark,
      message,
      range,
      setRange,
      exchanges,
      receivers,
      save,
      rule,
      onHistory,
      step,
      timelineNotes,
    ],
  );
  return (
    <section aria-labelledby="run-title" className="run">
      <header className="run-head">
        <h2 id="run-title" data-scenario={name ?? title}>
          {title}
          {name !== undefined && name !== title && <span className="run-name"> {name}</span>}
        </h2>
        {!live && finished && <span className="badge">opened trace</span>}
        {live && onCompare && context.summary && phase !== "loading" && (
          <button onClick={() => onCompare(playheadMs)}>Compare…</button>
        )}
        {live && onSweep && context.summary && phase !== "loading" && <button onClick={onSweep}>Sweep…</button>}
        {onBackToSweep && <button onClick={onBackToSweep}>Back to the sweep</button>}
        {description && <p className="description">{description}</p>}
      </header>
      <DepartsFromSpec constants={context.summary?.constants} />
      {context.notice && (
        <p role="status" className="notice">
          {context.notice}
        </p>
      )}
      {phase === "failed" ? (
        <section role="alert" aria-labelledby="errors-heading" className="panel errors">
          <h3 id="errors-heading">This scenario has errors</h3>
          <ul>
            {context.errors.map((e) => (
              <li key={e}>
                <code>{e}</code>
              </li>
            ))}
          </ul>
        </section>
      ) : (
        <>
          <Controls
            key={String(context.summary?.seed ?? "")}
            phase={shownPhase}
            drive={context.drive}
            speed={context.speed}
            startMs={startMs}
            playheadMs={playheadMs}
            events={events.length}
            seed={context.summary?.seed}
            live={live}
            onToggle={() => COMMANDS.toggle.perform(commands)}
            onStep={() => COMMANDS.step.perform(commands)}
            onSpeed={(speed: PlaybackSpeed) => COMMANDS.speed.perform(commands, speed)}
            onJump={(ms) => send({ type: "RUN_TO", timeMs: startMs + ms })}
            onRestart={(seed) => COMMANDS.restart.perform(commands, seed)}
            level={context.level}
            atEnd={context.progress?.atEnd === true && phase === "paused"}
            onLevel={(level) => send({ type: "SET_LEVEL", level })}
            stopText={stopLine}
            scrubEvents={seen.events}
            endMs={endMs}
            endKnown={knownEnd !== undefined}
            breakpoints={{
              breakpoints: context.breakpoints,
              current:
                context.stop?.kind === "breakpoint" || context.stop?.kind === "time" ? context.stop.id : undefined,
              hits,
              messages: context.summary?.messages ?? [],
              label: (m) => labels.get(m) ?? m,
              onChange: (breakpoints) => send({ type: "SET_BREAKPOINTS", breakpoints }),
            }}
          />
          {live && context.summary && (
            <Readings
              readings={context.summary.readings}
              disabled={phase === "loading"}
              onChange={onReading}
              open={readingsOpen}
              onToggle={setReadingsOpen}
            />
          )}
          <LessonPanel
            place={lesson}
            onOpen={lesson?.onOpen}
            notes={notes.points}
            startMs={startMs}
            finished={finished}
            reached={notes.reached}
            pausedAt={notes.pausedAt}
            pauseAtNotes={context.notePauses}
            onPauseAtNotes={(on) => send({ type: "SET_NOTE_PAUSES", on })}
            onContinue={() => send({ type: "PLAY" })}
            onEvent={(seq) => onWhyLog([seq])}
          />
          <PermalinkBar
            selected={selectedEvent}
            startMs={startMs}
            problem={problem}
            onDismiss={() => {
              setDismissed(linkRequest?.kind === "bad" ? linkRequest.message : linkedSeq);
              // The link is done with: a reload or the next run opened does not follow it again.
              window.history.replaceState(window.history.state, "", window.location.pathname + window.location.search);
            }}
          />
          <Outcomes
            rows={outcomes}
            selected={delivery}
            onSelect={setDelivery}
            why={whyTarget}
            onWhy={(target) => select({ type: "why", target })}
          />
          {why && (
            <WhyPanel
              why={why}
              message={whyRow === undefined ? why.messageId : whyRow.dsn ? `DSN ${whyRow.message}` : whyRow.message}
              onClose={() => select({ type: "why", target: undefined })}
              onRule={rule}
              onLog={onWhyLog}
              onAttempt={onWhyAttempt}
              onStep={onWhyStep}
            />
          )}
          {wholeRunViews}
          {result && <Checks rows={checks} onEvidence={(seqs) => select({ type: "evidence", seqs })} />}
          <LogView
            rows={rows}
            selected={selectedSeq}
            linked={followed}
            onSelect={onLogSelect}
            delivery={delivery}
            onClearDelivery={clearDelivery}
            onRule={rule}
            highlight={evidence}
          />
          {trace && <ExportBar trace={trace} {...exports} />}
        </>
      )}
    </section>
  );
}

/**
 * A run under numbers other than SPEC.md's says so above everything (issue
 * 30), from its trace's `constants`: `RETRY-2.cap 30m (SPEC.md: 1h)`.
 */
function DepartsFromSpec({ constants }: { readonly constants: Readonly<Record<string, string>> | undefined }) {
  if (constants === undefined || Object.keys(constants).length === 0) return null;
  return (
    <p role="note" className="departs" data-testid="departs-from-spec">
      This run departs from SPEC.md: {departuresText(departures(constantsOf(constants)))}. The draft&apos;s numbers were
      changed for it; its checks follow them.
    </p>
  );
}

/** Brings the panel of the heading `id` into view (a Why clause's link goes to its evidence). */
function reveal(id: string): void {
  requestAnimationFrame(() => document.getElementById(id)?.scrollIntoView({ block: "start", behavior: "smooth" }));
}
