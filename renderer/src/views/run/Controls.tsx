import { useState } from "react";
import type { PlaybackSpeed } from "../../../../app/sim/sessionProtocol.ts";
import type { Drive, PlaybackPhase } from "../../session/machine.ts";
import { phaseText, SPEEDS } from "../../model/playback.ts";
import { clockText, parseOffset } from "../../model/time.ts";

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
}

/** Play/Pause, Step, speed, jump to a time, seed and restart; the virtual clock. */
export function Controls(p: ControlsProps) {
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
          <button className="primary" onClick={p.onToggle} disabled={!canPlay} aria-keyshortcuts="Space">
            {p.phase === "playing" ? "Pause" : "Play"}
          </button>
          <button onClick={p.onStep} disabled={!canStep} aria-keyshortcuts="ArrowRight">
            Step
          </button>
          <div role="group" aria-label="Speed" className="segmented">
            {SPEEDS.map((s) => (
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
        </>
      ) : (
        <p className="muted">
          A recorded run: nothing runs, the trace is shown as it ended. Open the scenario to run it again.
        </p>
      )}
    </div>
  );
}
