import { constantsOf, departures, departuresText } from "../../../../app/sim/constants.ts";
import { memo, useMemo, useState, type Dispatch } from "react";
import { useStable } from "../../hooks/useStable.ts";
import type { PlaybackSpeed, ReceiverOfRun } from "../../../../app/sim/sessionProtocol.ts";
import type { PlaybackContext, PlaybackEvent, PlaybackPhase } from "../../session/machine.ts";
import { receiversOfTrace } from "../../session/replay.ts";
import { timelineReader, type TimelineReader } from "../../model/timeline.ts";
import type { Selection, SelectionAction, SelectedMark } from "../../model/selection.ts";
import { ErrorList } from "../../components/ErrorList.tsx";
import { LogView } from "../log/LogView.tsx";
import { InspectorView } from "../exchange/InspectorView.tsx";
import { SequenceView } from "../sequence/SequenceView.tsx";
import { StatechartView } from "../statechart/StatechartView.tsx";
import { TimelineView } from "../timeline/TimelineView.tsx";
import { Checks } from "./Checks.tsx";
import { Controls } from "./Controls.tsx";
import { ExportBar, type RunExports } from "./ExportBar.tsx";
import { Outcomes } from "./Outcomes.tsx";
import { Readings } from "./Readings.tsx";
import { WhyPanel } from "./WhyPanel.tsx";
import { whyOf } from "../../model/why.ts";
import type { LessonPlace, LibraryEntry } from "../../model/library.ts";
import { LessonPanel } from "./LessonPanel.tsx";
import { useLessonNotes } from "./useLessonNotes.ts";
import { notesOfRun, type AnnotationPoint } from "../../model/lesson.ts";
import { messageOfActor } from "../../../../app/trace/deliveryIds.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { PermalinkBar } from "./Permalink.tsx";
import { COMMANDS, type CommandContext } from "../../commands/commands.ts";
import { useRunShown } from "./useRunShown.ts";
import { useRunSelection } from "./useRunSelection.ts";

export interface RunViewProps {
  readonly phase: PlaybackPhase;
  readonly context: PlaybackContext;
  readonly title: string;
  /** The scenario's name, shown beside its title when they differ. */
  readonly name?: string | undefined;
  readonly description: string;
  /** The scenario's place in the "Start here" path, and how to open another lesson. */
  readonly lesson?: (LessonPlace & { readonly onOpen: (entry: LibraryEntry) => void }) | undefined;
  readonly send: (event: PlaybackEvent) => void;
  /** What the buttons perform: the commands the menus and keys perform too. */
  readonly commands: CommandContext;
  readonly onReading: (setting: [string, string]) => void;
  readonly onRule: (rule: string) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
  /** The run's exports: "with message bodies", what the last export left out, the export itself. */
  readonly exports: RunExports;
  /** Opens the Compare view from this run, its playhead the fork time. */
  readonly onCompare?: (playheadMs: number) => void;
  /** Opens the Sweep view for this run's scenario. */
  readonly onSweep?: () => void;
  /** This run is a sweep's point: back to that sweep and its results. */
  readonly onBackToSweep?: () => void;
}

const NO_RECEIVERS: readonly ReceiverOfRun[] = [];

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
  // What the views show of the run at this moment (./useRunShown.ts).
  const shown = useRunShown(phase, context);
  const { startMs, events, live, finished, labels, outcomes, result, playheadMs, heavy, below } = shown;
  // What is selected, shared by every panel, and the permalink followed (./useRunSelection.ts).
  const selecting = useRunSelection(context, heavy.events, finished);
  const { selection, select } = selecting;
  const { delivery, evidence, exchanges, why: whyTarget, seq: selectedSeq } = selection;
  const [readingsOpen, setReadingsOpen] = useState(false);
  // The timeline's reader, kept by the run view: the timeline is read again only when its events change.
  const [timelines] = useState(timelineReader);
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
  // The scenario's notes: placed on the run, shown as the playhead reaches them, paused at in a lesson.
  const notes = useLessonNotes({ context, phase, startMs });
  // The notes on the timeline: placed on the timeline's own events, so they come with its draws, not each batch.
  const timelineNotes = useMemo(
    () => notesOfRun(notes.annotations, heavy.events, startMs),
    [notes.annotations, heavy.events, startMs],
  );
  const rule = useStable(onRule);
  const save = useStable(onSave);
  return (
    <section aria-labelledby="run-title" className="run">
      <RunHead
        title={title}
        name={name}
        description={description}
        openedTrace={!live && finished}
        // Compare and Sweep start from a live run, once it has started.
        {...(live && context.summary && phase !== "loading" && onCompare && { onCompare: () => onCompare(playheadMs) })}
        {...(live && context.summary && phase !== "loading" && onSweep && { onSweep })}
        {...(onBackToSweep && { onBackToSweep })}
      />
      <DepartsFromSpec constants={context.summary?.constants} />
      {context.notice && (
        <p role="status" className="notice">
          {context.notice}
        </p>
      )}
      {phase === "failed" ? (
        <ScenarioErrors errors={context.errors} />
      ) : (
        <>
          <RunControls
            key={String(context.summary?.seed ?? "")}
            phase={phase}
            context={context}
            shown={shown}
            send={send}
            commands={commands}
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
            onEvent={(seq) => selecting.onLogEvidence([seq])}
          />
          <PermalinkBar
            selected={selecting.selectedEvent}
            startMs={startMs}
            problem={selecting.problem}
            onDismiss={selecting.dismissLink}
          />
          <Outcomes
            rows={outcomes}
            selected={delivery}
            onSelect={selecting.setDelivery}
            why={whyTarget}
            onWhy={(target) => select({ type: "why", target })}
          />
          {why && (
            <WhyPanel
              why={why}
              message={whyRow === undefined ? why.messageId : whyRow.dsn ? `DSN ${whyRow.message}` : whyRow.message}
              onClose={() => select({ type: "why", target: undefined })}
              onRule={rule}
              onLog={selecting.onLogEvidence}
              onAttempt={selecting.onWhyAttempt}
              onStep={selecting.onWhyStep}
            />
          )}
          <WholeRunViews
            timelines={timelines}
            heavy={heavy}
            below={below}
            notes={timelineNotes}
            startMs={startMs}
            labels={labels}
            delivery={delivery}
            mark={selection.mark}
            message={selection.message}
            range={selection.range}
            exchanges={exchanges}
            step={selection.step}
            select={select}
            setDelivery={selecting.setDelivery}
            onMark={selecting.onMark}
            setRange={selecting.setRange}
            onHistory={selecting.onHistory}
            receivers={receivers}
            save={save}
            rule={rule}
          />
          {result && <Checks rows={shown.checks} onEvidence={selecting.onLogEvidence} />}
          <LogView
            rows={shown.rows}
            selected={selectedSeq}
            linked={selecting.followed}
            onSelect={selecting.onLogSelect}
            delivery={delivery}
            onClearDelivery={selecting.clearDelivery}
            onRule={rule}
            highlight={evidence}
            highlightLinks={selecting.logLinks}
          />
          {shown.trace && <ExportBar trace={shown.trace} {...exports} />}
        </>
      )}
    </section>
  );
}

/** The run's title (and the scenario's name beside it when they differ), its description and where it leads. */
function RunHead(p: {
  readonly title: string;
  readonly name: string | undefined;
  readonly description: string;
  readonly openedTrace: boolean;
  readonly onCompare?: () => void;
  readonly onSweep?: () => void;
  readonly onBackToSweep?: () => void;
}) {
  const { title, name } = p;
  return (
    <header className="run-head">
      <h2 id="run-title" data-scenario={name ?? title}>
        {title}
        {name !== undefined && name !== title && <span className="run-name"> {name}</span>}
      </h2>
      {p.openedTrace && <span className="badge">opened trace</span>}
      {p.onCompare && <button onClick={p.onCompare}>Compare…</button>}
      {p.onSweep && <button onClick={p.onSweep}>Sweep…</button>}
      {p.onBackToSweep && <button onClick={p.onBackToSweep}>Back to the sweep</button>}
      {p.description && <p className="description">{p.description}</p>}
    </header>
  );
}

/**
 * The run's playback bar: the playback machine's phase, drive, speed, level, stop and breakpoints, with the
 * clock and scrubber as shown; its buttons perform the commands the menus and keys perform.
 */
function RunControls({
  phase,
  context,
  shown,
  send,
  commands,
}: {
  readonly phase: PlaybackPhase;
  readonly context: PlaybackContext;
  readonly shown: ReturnType<typeof useRunShown>;
  readonly send: (event: PlaybackEvent) => void;
  readonly commands: CommandContext;
}) {
  const { startMs, labels } = shown;
  const { stop } = context;
  return (
    <Controls
      phase={shown.shownPhase}
      drive={context.drive}
      speed={context.speed}
      startMs={startMs}
      playheadMs={shown.playheadMs}
      events={shown.events.length}
      seed={context.summary?.seed}
      live={shown.live}
      onToggle={() => COMMANDS.toggle.perform(commands)}
      onStep={() => COMMANDS.step.perform(commands)}
      onSpeed={(speed: PlaybackSpeed) => COMMANDS.speed.perform(commands, speed)}
      onJump={(ms) => send({ type: "RUN_TO", timeMs: startMs + ms })}
      onRestart={(seed) => COMMANDS.restart.perform(commands, seed)}
      level={context.level}
      atEnd={context.progress?.atEnd === true && phase === "paused"}
      onLevel={(level) => send({ type: "SET_LEVEL", level })}
      stopText={shown.stopLine}
      scrubEvents={shown.scrubEvents}
      endMs={shown.endMs}
      endKnown={shown.knownEnd !== undefined}
      breakpoints={{
        breakpoints: context.breakpoints,
        current: stop?.kind === "breakpoint" || stop?.kind === "time" ? stop.id : undefined,
        hits: shown.hits,
        messages: context.summary?.messages ?? [],
        label: (m) => labels.get(m) ?? m,
        onChange: (breakpoints) => send({ type: "SET_BREAKPOINTS", breakpoints }),
      }}
    />
  );
}

/** A scenario that could not run: its errors (file:line:column), each as the parser says it. */
function ScenarioErrors({ errors }: { readonly errors: readonly string[] }) {
  return (
    <section role="alert" aria-labelledby="errors-heading" className="panel errors">
      <h3 id="errors-heading">This scenario has errors</h3>
      <ErrorList errors={errors} />
    </section>
  );
}

interface WholeRunViewsProps {
  readonly timelines: TimelineReader;
  /** The events and clock the timeline draws, and those the views below it draw right after. */
  readonly heavy: { readonly events: readonly RecordedEvent[]; readonly playheadMs: number };
  readonly below: { readonly events: readonly RecordedEvent[]; readonly playheadMs: number };
  readonly notes: readonly AnnotationPoint[];
  readonly startMs: number;
  readonly labels: ReadonlyMap<string, string>;
  readonly delivery: Selection["delivery"];
  readonly mark: Selection["mark"];
  readonly message: Selection["message"];
  readonly range: Selection["range"];
  readonly exchanges: Selection["exchanges"];
  readonly step: Selection["step"];
  readonly select: Dispatch<SelectionAction>;
  readonly setDelivery: (actor: string | undefined) => void;
  readonly onMark: (mark: SelectedMark | undefined) => void;
  readonly setRange: (range: readonly [number, number] | undefined) => void;
  readonly onHistory: (seqs: readonly number[]) => void;
  readonly receivers: readonly ReceiverOfRun[];
  readonly save: (name: string, contents: string, type: string) => void;
  readonly rule: (rule: string) => void;
}

/**
 * The views that draw the whole run: timeline, sequence diagram, inspector, statechart. Drawn again only when
 * what they draw changes (not at every batch of a playing run, nor every tick).
 */
const WholeRunViews = memo(function WholeRunViews(p: WholeRunViewsProps) {
  const { heavy, below, startMs, labels, delivery, exchanges, select } = p;
  return (
    <>
      <TimelineView
        reader={p.timelines}
        events={heavy.events}
        notes={p.notes}
        startMs={startMs}
        labels={labels}
        playheadMs={heavy.playheadMs}
        delivery={delivery}
        onDelivery={p.setDelivery}
        selectedMark={p.mark}
        onMark={p.onMark}
        onRange={p.setRange}
      />
      <SequenceView
        events={below.events}
        startMs={startMs}
        labels={labels}
        messageId={p.message ?? (delivery === undefined ? undefined : messageOfActor(delivery))}
        onMessage={(m) => select({ type: "message", messageId: m })}
        range={p.range}
        onRange={p.setRange}
        exchangeId={exchanges.at(-1)}
        onExchange={(x) => select({ type: "exchange", exchangeId: x, events: below.events })}
        onSave={p.save}
      />
      <InspectorView
        events={below.events}
        startMs={startMs}
        exchangeIds={exchanges}
        receivers={p.receivers}
        onRule={p.rule}
      />
      <StatechartView
        events={below.events}
        startMs={startMs}
        playheadMs={below.playheadMs}
        delivery={delivery}
        onSelectDelivery={p.setDelivery}
        onEvents={p.onHistory}
        onRule={p.rule}
        step={p.step}
      />
    </>
  );
});

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
