import { useDeferredValue, useMemo, useState } from "react";
import type { PlaybackSpeed } from "../../../../app/sim/sessionProtocol.ts";
import type { Trace } from "../../../../app/trace/schema.ts";
import { checkRows } from "../../model/checks.ts";
import { createLogRowsCache } from "../../model/log.ts";
import { outcomeRows } from "../../model/outcomes.ts";
import type { PlaybackContext, PlaybackEvent, PlaybackPhase } from "../../session/machine.ts";
import { attemptMarkAt, buildTimeline, type Mark } from "../../model/timeline.ts";
import { LogView } from "../log/LogView.tsx";
import { InspectorView } from "../exchange/InspectorView.tsx";
import { SequenceView } from "../sequence/SequenceView.tsx";
import { StatechartView } from "../statechart/StatechartView.tsx";
import { TimelineView } from "../timeline/TimelineView.tsx";
import { Checks } from "./Checks.tsx";
import { Controls } from "./Controls.tsx";
import { ExportBar } from "./ExportBar.tsx";
import { Outcomes } from "./Outcomes.tsx";
import { Readings } from "./Readings.tsx";

export interface RunViewProps {
  readonly phase: PlaybackPhase;
  readonly context: PlaybackContext;
  readonly title: string;
  readonly description: string;
  readonly send: (event: PlaybackEvent) => void;
  readonly onReading: (setting: [string, string]) => void;
  readonly onRule: (rule: string) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
}

/** The log's rows of the run on screen, described once each as batches arrive. */
const logRowsOf = createLogRowsCache();

/** One run: controls and clock, the log, the outcomes, the checks, readings and export. */
export function RunView({ phase, context, title, description, send, onReading, onRule, onSave }: RunViewProps) {
  const [delivery, setDelivery] = useState<string | undefined>();
  const [evidence, setEvidence] = useState<ReadonlySet<number>>(new Set());
  const [readingsOpen, setReadingsOpen] = useState(false);
  const [mark, setMark] = useState<Mark | undefined>();
  const [exchanges, setExchanges] = useState<readonly string[]>([]);
  const [message, setMessage] = useState<string | undefined>();
  const [range, setRange] = useState<readonly [number, number] | undefined>();
  const startMs = context.summary?.startMs ?? context.events[0]?.timeMs ?? 0;
  // The log and the outcomes follow the events as fast as they can draw; while a batch is drawn,
  // the next ones are taken in (and the clock moves) rather than queued behind it.
  const events = useDeferredValue(context.events);
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
  const live = context.source?.kind === "scenario";
  const result = context.result;
  const allEvents = context.events;
  const trace: Trace | undefined = useMemo(
    () => (result ? { ...result.trace, events: [...allEvents] } : undefined),
    [result, allEvents],
  );
  // At the end the clock says where the run ended, as `mailscope run` does (not the horizon it was allowed).
  const playheadMs =
    phase === "finished" && context.result ? context.result.endMs : (context.progress?.playheadMs ?? startMs);
  return (
    <section aria-labelledby="run-title" className="run">
      <header className="run-head">
        <h2 id="run-title">{title}</h2>
        {!live && phase === "finished" && <span className="badge">opened trace</span>}
        {description && <p className="description">{description}</p>}
      </header>
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
            phase={phase}
            speed={context.speed}
            startMs={startMs}
            playheadMs={playheadMs}
            events={context.events.length}
            seed={context.summary?.seed}
            live={live}
            onToggle={() => send({ type: "TOGGLE" })}
            onStep={() => send({ type: "STEP" })}
            onSpeed={(speed: PlaybackSpeed) => send({ type: "SET_SPEED", speed })}
            onJump={(ms) => send({ type: "RUN_TO", timeMs: startMs + ms })}
            onRestart={(seed) => send({ type: "RESTART", ...(seed !== undefined && { seed }) })}
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
          <Outcomes rows={outcomes} selected={delivery} onSelect={setDelivery} />
          <TimelineView
            events={events}
            startMs={startMs}
            labels={labels}
            playheadMs={playheadMs}
            delivery={delivery}
            onDelivery={setDelivery}
            selectedMark={mark}
            onMark={(m) => {
              setMark(m);
              if (m) setExchanges(m.exchangeIds);
            }}
            onRange={setRange}
            onSave={onSave}
          />
          <SequenceView
            events={events}
            startMs={startMs}
            labels={labels}
            messageId={message ?? delivery?.split("→")[0]}
            onMessage={(m) => {
              setMessage(m);
              setRange(undefined);
            }}
            range={range}
            onRange={setRange}
            exchangeId={exchanges.at(-1)}
            onExchange={(x) => setExchanges([x])}
            onSave={onSave}
          />
          <InspectorView events={context.events} startMs={startMs} exchangeIds={exchanges} onRule={onRule} />
          <StatechartView
            events={events}
            startMs={startMs}
            playheadMs={playheadMs}
            delivery={delivery}
            onSelectDelivery={setDelivery}
            onEvents={(seqs) => {
              setEvidence(new Set(seqs));
              // A transition of the history selects the attempt it belongs to in the timeline and the inspector.
              const event = seqs.length === 1 ? events.find((e) => e.seq === seqs[0]) : undefined;
              const actor = event?.data?.["deliveryActor"];
              if (event === undefined || typeof actor !== "string") return;
              const attempt = attemptMarkAt(buildTimeline(events, startMs, labels), actor, event.timeMs);
              if (attempt === undefined) return;
              setMark(attempt);
              setExchanges(attempt.exchangeIds);
            }}
            onRule={onRule}
          />
          {context.result && <Checks rows={checks} onEvidence={(seqs) => setEvidence(new Set(seqs))} />}
          <LogView
            rows={rows}
            delivery={delivery}
            onClearDelivery={() => setDelivery(undefined)}
            onRule={onRule}
            highlight={evidence}
          />
          {trace && <ExportBar trace={trace} onSave={onSave} />}
        </>
      )}
    </section>
  );
}
