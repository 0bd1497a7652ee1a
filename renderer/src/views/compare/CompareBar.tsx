import { useEffect, useEffectEvent, useId, useMemo, useState } from "react";
import type { Breakpoint } from "../../../../app/sim/breakpoints.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { SPEEDS } from "../../model/playback.ts";
import { hitCounts, STEP_LEVEL_TEXT } from "../../model/playbar.ts";
import { barLineText, type CompareClock, type CompareEvent } from "../../session/compare.ts";
import { clockText, formatOffset } from "../../model/time.ts";
import { Breakpoints } from "../run/Breakpoints.tsx";
import { Scrubber, Speeds, StepLevels } from "../run/Controls.tsx";

export interface CompareBarProps {
  /** Run A's events and run B's. */
  readonly runs: readonly [readonly RecordedEvent[], readonly RecordedEvent[]];
  readonly startMs: number;
  /** The shared axis' end: the later run's end. */
  readonly endMs: number;
  /** The clock over both runs (the Compare machine's), and where its moves go. */
  readonly clock: CompareClock;
  readonly send: (event: CompareEvent) => void;
  /** The breakpoints (the run view's list): one list for both runs. */
  readonly breakpoints: readonly Breakpoint[];
  readonly onBreakpoints: (breakpoints: readonly Breakpoint[]) => void;
  /** The scenario's messages, for a breakpoint on one of them, and their names. */
  readonly messages: readonly { readonly id: string; readonly messageId: string }[];
}

const PLAY_SPEEDS = SPEEDS.filter((s) => s.speed !== 1);

/**
 * Compare's playback bar: one clock over both runs (session/compare.ts keeps it). Play moves it at the speed
 * chosen; Step goes to the next event, attempt or decision of either run; the scrubber spans the later run's
 * end and draws both runs' events. Both timelines show their runs up to it; "Whole runs" shows them to their
 * ends again. The breakpoints are one list for both runs (the run view's): Play and Step stop both runs where
 * either meets one, and say which run did; each counts its hits before the clock (a move back forgets those
 * after it).
 */
export function CompareBar({
  runs,
  startMs,
  endMs,
  clock: bar,
  send,
  breakpoints,
  onBreakpoints,
  messages,
}: CompareBarProps) {
  const boxId = useId();
  const [showBreakpoints, setShowBreakpoints] = useState(false);
  const { cursorMs, playing, level, speed, hits, current, line } = bar;
  const labels = useMemo(() => new Map(messages.map((m) => [m.messageId, m.id])), [messages]);
  const label = (m: string) => labels.get(m) ?? m;
  const both = useMemo(() => [...runs[0], ...runs[1]].sort((a, b) => a.timeMs - b.timeMs), [runs]);
  const at = cursorMs ?? endMs;

  // Play: each frame moves the clock by the wall time since the last one, at the speed chosen.
  const frame = useEffectEvent((wallMs: number) => send({ type: "FRAME", wallMs, breakpoints }));
  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    let id = requestAnimationFrame(function next(now) {
      frame(now - last);
      last = now;
      id = requestAnimationFrame(next);
    });
    return () => cancelAnimationFrame(id);
  }, [playing]);

  const clock = clockText(at, startMs);
  return (
    <div className="controls compare-bar" role="toolbar" aria-label="Playback of both runs">
      <div className="clock">
        <output aria-label="Virtual time of both runs" data-testid="compare-clock">
          {cursorMs === undefined ? "whole runs" : clock.offset}
        </output>
        <span className="muted">{cursorMs === undefined ? `to ${formatOffset(endMs, startMs)}` : clock.days}</span>
      </div>
      <button className="primary" onClick={() => send({ type: "TOGGLE" })}>
        {playing ? "Pause" : "Play"}
      </button>
      <button onClick={() => send({ type: "STEP", breakpoints })} aria-describedby="compare-step-hint">
        Step
      </button>
      <StepLevels level={level} onLevel={(l) => send({ type: "SET_LEVEL", level: l })} />
      <Speeds speeds={PLAY_SPEEDS} speed={speed} onSpeed={(s) => send({ type: "SET_SPEED", speed: s })} />
      <button disabled={cursorMs === undefined} onClick={() => send({ type: "WHOLE" })}>
        Whole runs
      </button>
      <button aria-expanded={showBreakpoints} aria-controls={boxId} onClick={() => setShowBreakpoints((v) => !v)}>
        Breakpoints
        {breakpoints.length > 0 ? ` (${breakpoints.filter((b) => b.enabled).length}/${breakpoints.length})` : ""}
      </button>
      <Scrubber
        events={both}
        startMs={startMs}
        endMs={endMs}
        endKnown
        playheadMs={at}
        disabled={false}
        onSeek={(ms) => send({ type: "SEEK", toMs: startMs + ms })}
      />
      <p className="step-line">
        <span id="compare-step-hint" className="muted">
          Step runs both to {STEP_LEVEL_TEXT[level].next} of either run.
        </span>
        <output className="stop" data-testid="compare-stop" aria-live="polite">
          {line === undefined ? "" : barLineText(line, startMs, breakpoints, label)}
        </output>
      </p>
      {showBreakpoints && (
        <div id={boxId} className="breakpoints-box">
          <Breakpoints
            breakpoints={breakpoints}
            current={current?.id}
            hits={hitCounts(hits)}
            events={both}
            startMs={startMs}
            messages={messages}
            label={label}
            onChange={onBreakpoints}
          />
        </div>
      )}
    </div>
  );
}
