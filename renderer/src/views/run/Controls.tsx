import { useId, useMemo, useState } from "react";
import { COMMANDS, shortcutOf } from "../../commands/commands.ts";
import type { PlaybackSpeed } from "../../../../app/sim/sessionProtocol.ts";
import { STEP_LEVELS, type Breakpoint, type StepLevel } from "../../../../app/sim/breakpoints.ts";
import { maxOf } from "../../../../app/protocol/lists.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import type { Drive, PlaybackPhase } from "../../session/machine.ts";
import { phaseText, SPEEDS } from "../../model/playback.ts";
import { eventDensity, firstBinAhead, STEP_LEVEL_TEXT, stepHint } from "../../model/playbar.ts";
import { clockText, formatOffset, parseOffset } from "../../model/time.ts";
import { Breakpoints, type BreakpointsProps } from "./Breakpoints.tsx";

export interface ControlsProps {
  readonly phase: PlaybackPhase;
  /** What a playing run runs: play at the speed, a jump, the rest as fast as possible. */
  readonly drive?: Drive | undefined;
  readonly speed: PlaybackSpeed;
  readonly startMs: number;
  readonly playheadMs: number;
  readonly events: number;
  readonly seed: number | string | undefined;
  readonly live: boolean;
  readonly onToggle: () => void;
  readonly onStep: () => void;
  readonly onSpeed: (speed: PlaybackSpeed) => void;
  readonly onJump: (offsetMs: number) => void;
  readonly onRestart: (seed: number | string | undefined) => void;
  /** How far a step goes, and whether nothing is left to run (the next step ends the run). */
  readonly level: StepLevel;
  readonly atEnd: boolean;
  readonly onLevel: (level: StepLevel) => void;
  /** Where and why the last play or step stopped, in words (citing the event's seq). */
  readonly stopText?: string | undefined;
  /** The scrubber: the run's events as far as it has been shown (kept after a jump back) and where its span ends. */
  readonly scrubEvents: readonly RecordedEvent[];
  readonly endMs: number;
  /** Whether `endMs` is the run's end (else as far as known so far). */
  readonly endKnown: boolean;
  readonly breakpoints: Omit<BreakpointsProps, "events" | "startMs"> & { readonly breakpoints: readonly Breakpoint[] };
}

/** Bars of the scrubber's picture of where the events are. */
const BINS = 160;

/**
 * The playback bar, kept in view: the virtual clock, Play/Pause, Step and its level, speed, jump to a time,
 * seed and restart; a scrubber over the run's span showing where its events are; where the last stop was and
 * why; the breakpoints.
 */
export function Controls(p: ControlsProps) {
  const hintId = useId();
  const [showBreakpoints, setShowBreakpoints] = useState(false);
  const [jump, setJump] = useState("");
  const [jumpError, setJumpError] = useState<string | undefined>();
  const [seed, setSeed] = useState(p.seed === undefined ? "" : String(p.seed));
  const clock = clockText(p.playheadMs, p.startMs);
  const canPlay = p.live && (p.phase === "ready" || p.phase === "paused" || p.phase === "playing");
  const canStep = p.live && (p.phase === "ready" || p.phase === "paused");
  // A jump goes anywhere: ahead, back (the run is run again from its start to that time), also from the end.
  const canJump = p.live && (canStep || p.phase === "playing" || p.phase === "finished");
  const submitJump = (e: React.FormEvent) => {
    e.preventDefault();
    const ms = parseOffset(jump);
    if (ms === undefined) return setJumpError("Type a time such as +2:00:00, 90m or 1d 4h");
    setJumpError(undefined);
    p.onJump(ms);
  };
  const enabled = p.breakpoints.breakpoints.filter((b) => b.enabled).length;
  return (
    <div className="controls" role="toolbar" aria-label="Playback">
      <div className="clock" aria-live="off">
        <output aria-label="Virtual time" data-testid="clock">
          {clock.offset}
        </output>
        <span className="muted">{clock.days}</span>
        <span className="phase" data-testid="phase">
          {phaseText(p)}
        </span>
      </div>
      {p.live ? (
        <>
          <button
            className="primary"
            onClick={p.onToggle}
            disabled={!canPlay}
            aria-keyshortcuts={shortcutOf(COMMANDS.toggle)}
          >
            {p.phase === "playing" ? "Pause" : "Play"}
          </button>
          <button
            onClick={p.onStep}
            disabled={!canStep}
            aria-keyshortcuts={shortcutOf(COMMANDS.step)}
            aria-describedby={hintId}
            className={p.atEnd ? "ends-run" : undefined}
          >
            {p.atEnd ? "Step · ends the run" : "Step"}
          </button>
          <StepLevels level={p.level} onLevel={p.onLevel} keys={shortcutOf(COMMANDS.level)} />
          <Speeds speeds={SPEEDS} speed={p.speed} onSpeed={p.onSpeed} />
          <form onSubmit={submitJump} className="inline-form">
            <label>
              Jump to{" "}
              <input
                value={jump}
                onChange={(e) => setJump(e.target.value)}
                placeholder="+2:00:00"
                size={9}
                aria-invalid={jumpError !== undefined}
              />
            </label>
            <button type="submit" disabled={!canJump}>
              Go
            </button>
            {jumpError && <span className="error">{jumpError}</span>}
          </form>
          <button
            aria-expanded={showBreakpoints}
            aria-controls={`${hintId}-breakpoints`}
            onClick={() => setShowBreakpoints((v) => !v)}
          >
            Breakpoints{p.breakpoints.breakpoints.length > 0 ? ` (${enabled}/${p.breakpoints.breakpoints.length})` : ""}
          </button>
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              const t = seed.trim();
              p.onRestart(t === "" ? undefined : /^\d+$/.test(t) ? Number(t) : t);
            }}
          >
            <label>
              Seed <input value={seed} onChange={(e) => setSeed(e.target.value)} size={6} />
            </label>
            <button type="submit" disabled={!p.live}>
              Restart
            </button>
          </form>
          <Scrubber
            events={p.scrubEvents}
            startMs={p.startMs}
            endMs={p.endMs}
            endKnown={p.endKnown}
            playheadMs={p.playheadMs}
            disabled={!canJump}
            onSeek={p.onJump}
          />
          <p className="step-line">
            <span id={hintId} className="muted">
              {stepHint(p.level, p.atEnd)}
            </span>{" "}
            <output className="stop" data-testid="stop" aria-live="polite">
              {p.stopText ?? ""}
            </output>
          </p>
          {showBreakpoints && (
            <div id={`${hintId}-breakpoints`} className="breakpoints-box">
              <Breakpoints {...p.breakpoints} events={p.scrubEvents} startMs={p.startMs} />
            </div>
          )}
        </>
      ) : (
        <p className="muted">
          A recorded run: nothing runs, the trace is shown as it ended. Open the scenario to run it again.
        </p>
      )}
    </div>
  );
}

export interface ScrubberProps {
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly endMs: number;
  readonly endKnown: boolean;
  readonly playheadMs: number;
  readonly disabled: boolean;
  /** A seek, as an offset from the start (ms): a jump there. */
  readonly onSeek: (offsetMs: number) => void;
}

/**
 * A slider over the run's span, its events drawn under it as bars (one per span of time, as tall as the log
 * of its count): dragged or moved with the arrow keys, it jumps there when let go.
 */
export function Scrubber(p: ScrubberProps) {
  const [dragging, setDragging] = useState<number | undefined>();
  const bins = useMemo(() => eventDensity(p.events, p.startMs, p.endMs, BINS), [p.events, p.startMs, p.endMs]);
  const top = maxOf(
    bins.map((n) => Math.log2(n + 1)),
    1,
  );
  const span = p.endMs - p.startMs;
  // Bars past the clock: events the run showed before a jump back, to come again (dimmed).
  const ahead = firstBinAhead(p.startMs, p.endMs, BINS, p.playheadMs);
  const at = dragging ?? Math.min(span, Math.max(0, p.playheadMs - p.startMs));
  const seconds = Math.max(1, Math.round(span / 1000));
  const commit = () => {
    if (dragging === undefined) return;
    setDragging(undefined);
    p.onSeek(dragging);
  };
  return (
    <div className="scrubber">
      <span className="muted edge">+0:00:00</span>
      <div className="track">
        <svg viewBox={`0 0 ${BINS} 10`} preserveAspectRatio="none" aria-hidden="true" data-testid="scrubber-events">
          {bins.map((n, i) =>
            n === 0 ? null : (
              <rect
                key={i}
                x={i}
                width={1}
                y={10 - (10 * Math.log2(n + 1)) / top}
                height={(10 * Math.log2(n + 1)) / top}
                data-events={n}
                data-ahead={i >= ahead}
                className={i >= ahead ? "ahead" : undefined}
              />
            ),
          )}
        </svg>
        <input
          type="range"
          aria-label="Seek"
          min={0}
          max={seconds}
          step={1}
          value={Math.round(at / 1000)}
          aria-valuetext={formatOffset(p.startMs + at, p.startMs).replace(/\.\d{3}$/, "")}
          disabled={p.disabled}
          onChange={(e) => setDragging(Number(e.target.value) * 1000)}
          onPointerUp={commit}
          onKeyUp={commit}
          onBlur={commit}
        />
      </div>
      <span className="muted edge" data-testid="scrubber-end">
        {formatOffset(p.endMs, p.startMs).replace(/\.\d{3}$/, "")} {p.endKnown ? "end" : "so far"}
      </span>
    </div>
  );
}

/** The step levels as a segmented group: what Step runs to. */
export function StepLevels(p: {
  readonly level: StepLevel;
  readonly onLevel: (level: StepLevel) => void;
  readonly keys?: string;
}) {
  return (
    <div role="group" aria-label="Step to the next" className="segmented" title="Step to the next …">
      {STEP_LEVELS.map((level) => (
        <button
          key={level}
          aria-pressed={p.level === level}
          aria-keyshortcuts={p.keys}
          onClick={() => p.onLevel(level)}
        >
          {STEP_LEVEL_TEXT[level].label}
        </button>
      ))}
    </div>
  );
}

/** The speeds offered, as a segmented group. */
export function Speeds(p: {
  readonly speeds: typeof SPEEDS;
  readonly speed: PlaybackSpeed;
  readonly onSpeed: (speed: PlaybackSpeed) => void;
}) {
  return (
    <div role="group" aria-label="Speed" className="segmented">
      {p.speeds.map((s) => (
        <button
          key={String(s.speed)}
          aria-pressed={p.speed === s.speed}
          title={s.name}
          aria-label={`Speed ${s.label}`}
          onClick={() => p.onSpeed(s.speed)}
        >
          {s.label}
        </button>
      ))}
    </div>
  );
}
