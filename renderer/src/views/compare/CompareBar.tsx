import { useEffect, useEffectEvent, useId, useMemo, useState } from "react";
import type { Breakpoint, StepLevel } from "../../../../app/sim/breakpoints.ts";
import type { PlaybackSpeed } from "../../../../app/sim/sessionProtocol.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { SPEEDS } from "../../model/playback.ts";
import {
  compareStopText,
  hitCounts,
  nextBreakOfRuns,
  nextStopOfRuns,
  STEP_LEVEL_TEXT,
  type BreakOfRuns,
} from "../../model/playbar.ts";
import { clockText, formatOffset } from "../../model/time.ts";
import { Breakpoints } from "../run/Breakpoints.tsx";
import { Scrubber, Speeds, StepLevels } from "../run/Controls.tsx";

export interface CompareBarProps {
  /** Run A's events and run B's. */
  readonly runs: readonly [readonly RecordedEvent[], readonly RecordedEvent[]];
  readonly startMs: number;
  /** The shared axis' end: the later run's end. */
  readonly endMs: number;
  /** Where both runs are shown up to; undefined: whole. */
  readonly cursorMs: number | undefined;
  readonly onCursor: (cursorMs: number | undefined) => void;
  /** The breakpoints (the run view's list): one list for both runs. */
  readonly breakpoints: readonly Breakpoint[];
  readonly onBreakpoints: (breakpoints: readonly Breakpoint[]) => void;
  /** The scenario's messages, for a breakpoint on one of them, and their names. */
  readonly messages: readonly { readonly id: string; readonly messageId: string }[];
}

const PLAY_SPEEDS = SPEEDS.filter((s) => s.speed !== 1);

/**
 * Compare's playback bar: one clock over both runs. Play moves it at the speed chosen; Step goes to the next
 * event, attempt or decision of either run; the scrubber spans the later run's end and draws both runs'
 * events. Both timelines show their runs up to it; "Whole runs" shows them to their ends again. The
 * breakpoints are one list for both runs (the run view's): Play and Step stop both runs where either meets
 * one, and say which run did; each counts its hits before the clock (a move back forgets those after it).
 */
export function CompareBar({
  runs,
  startMs,
  endMs,
  cursorMs,
  onCursor,
  breakpoints,
  onBreakpoints,
  messages,
}: CompareBarProps) {
  const boxId = useId();
  const [level, setLevel] = useState<StepLevel>("attempt");
  const [speed, setSpeed] = useState<PlaybackSpeed>(3600);
  const [playing, setPlaying] = useState(false);
  const [said, setSaid] = useState<string | undefined>();
  const [showBreakpoints, setShowBreakpoints] = useState(false);
  /** The stops breakpoints made, and the one the clock is at. */
  const [hits, setHits] = useState<readonly BreakOfRuns[]>([]);
  const [current, setCurrent] = useState<BreakOfRuns | undefined>();
  const labels = useMemo(() => new Map(messages.map((m) => [m.messageId, m.id])), [messages]);
  const label = (m: string) => labels.get(m) ?? m;
  const both = useMemo(() => [...runs[0], ...runs[1]].sort((a, b) => a.timeMs - b.timeMs), [runs]);
  const at = cursorMs ?? endMs;
  const atEnd = at >= endMs;
  // The clock moved back (a seek, Play from the end): the hits after it are not in the runs shown.
  if (hits.some((h) => h.timeMs > at)) setHits(hits.filter((h) => h.timeMs <= at));
  if (current !== undefined && current.timeMs !== at) setCurrent(undefined);

  /** The clock stops at a breakpoint's hit: both runs shown up to it, which run met it said. */
  const stopAt = (hit: BreakOfRuns) => {
    setPlaying(false);
    setHits((h) => [...h, hit]);
    setCurrent(hit);
    setSaid(compareStopText(hit, startMs, breakpoints, label));
    onCursor(hit.timeMs);
  };
  const hitWhilePlaying = useEffectEvent(stopAt);

  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    let id = requestAnimationFrame(function frame(now) {
      const next = speed === "max" ? endMs : Math.min(endMs, at + (now - last) * speed);
      last = now;
      const hit = nextBreakOfRuns(runs, breakpoints, at, next);
      if (hit !== undefined) return hitWhilePlaying(hit);
      onCursor(next);
      if (next >= endMs) setPlaying(false);
      else id = requestAnimationFrame(frame);
    });
    return () => cancelAnimationFrame(id);
    // The loop reads the cursor it started from; each frame's move comes back as `at`, restarting it.
  }, [playing, speed, at, endMs, onCursor, runs, breakpoints]);

  const step = () => {
    setPlaying(false);
    const from = cursorMs ?? startMs - 1;
    const stop = nextStopOfRuns(runs, level, from);
    const hit = nextBreakOfRuns(runs, breakpoints, from, stop?.timeMs ?? endMs);
    if (hit !== undefined) return stopAt(hit);
    if (stop === undefined) {
      setSaid(`No ${level} is left in either run after ${formatOffset(from, startMs)}: both are shown to their ends.`);
      return onCursor(endMs);
    }
    setSaid(
      `Run ${stop.run === 0 ? "A" : "B"}: #${stop.event.seq} ${stop.event.name} at ${formatOffset(stop.timeMs, startMs)}`,
    );
    onCursor(stop.timeMs);
  };

  const clock = clockText(at, startMs);
  return (
    <div className="controls compare-bar" role="toolbar" aria-label="Playback of both runs">
      <div className="clock">
        <output aria-label="Virtual time of both runs" data-testid="compare-clock">
          {cursorMs === undefined ? "whole runs" : clock.offset}
        </output>
        <span className="muted">{cursorMs === undefined ? `to ${formatOffset(endMs, startMs)}` : clock.days}</span>
      </div>
      <button
        className="primary"
        onClick={() => {
          setSaid(undefined);
          if (!playing && atEnd) onCursor(startMs);
          setPlaying((p) => !p);
        }}
      >
        {playing ? "Pause" : "Play"}
      </button>
      <button onClick={step} aria-describedby="compare-step-hint">
        Step
      </button>
      <StepLevels level={level} onLevel={setLevel} />
      <Speeds speeds={PLAY_SPEEDS} speed={speed} onSpeed={setSpeed} />
      <button
        disabled={cursorMs === undefined}
        onClick={() => {
          setPlaying(false);
          setSaid(undefined);
          onCursor(undefined);
        }}
      >
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
        onSeek={(ms) => {
          setPlaying(false);
          setSaid(undefined);
          onCursor(startMs + ms);
        }}
      />
      <p className="step-line">
        <span id="compare-step-hint" className="muted">
          Step runs both to {STEP_LEVEL_TEXT[level].next} of either run.
        </span>
        <output className="stop" data-testid="compare-stop" aria-live="polite">
          {said ?? ""}
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
