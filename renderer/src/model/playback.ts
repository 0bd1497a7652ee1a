/**
 * What the playback controls say about the run: the phase, the events so far
 * and the speed the run goes at (`Playing · 412 events · 60×`). The speed
 * shown is the speed run: a jump and "run to the end" go as fast as possible
 * whatever speed is chosen for play, and say so (`Jumping to +24:00:00 · … · max`).
 */
import type { PlaybackSpeed } from "../../../app/sim/sessionProtocol.ts";
import { offset } from "../../../app/trace/offset.ts";
import type { Drive, PlaybackPhase } from "../session/machine.ts";

/** The speeds offered, as the controls name them. */
export const SPEEDS: readonly { readonly speed: PlaybackSpeed; readonly label: string; readonly name: string }[] = [
  { speed: 1, label: "1×", name: "Real time" },
  { speed: 60, label: "60×", name: "A minute a second" },
  { speed: 3600, label: "3600×", name: "An hour a second" },
  { speed: "max", label: "max", name: "As fast as possible" },
];

const PHASE: Readonly<Record<PlaybackPhase, string>> = {
  idle: "Idle",
  loading: "Loading…",
  ready: "Ready",
  playing: "Playing",
  paused: "Paused",
  finished: "Finished",
  failed: "Failed",
};

export function speedLabel(speed: PlaybackSpeed): string {
  return SPEEDS.find((s) => s.speed === speed)?.label ?? `${String(speed)}×`;
}

/**
 * `Playing · 412 events · 60×`; `Jumping to +24:00:00 · 9 events · max` while a jump runs; the speed
 * only for a run that plays (not for an opened trace).
 */
export function phaseText(p: {
  readonly phase: PlaybackPhase;
  readonly drive?: Drive | undefined;
  readonly speed: PlaybackSpeed;
  readonly events: number;
  readonly startMs: number;
  readonly live: boolean;
}): string {
  const running = p.phase === "playing" ? p.drive : undefined;
  const what =
    running?.kind === "jump"
      ? `Jumping to ${offset(running.toMs, p.startMs).replace(/\.\d{3}$/, "")}`
      : running?.kind === "finish"
        ? "Running to the end"
        : PHASE[p.phase];
  const speed = running !== undefined && running.kind !== "play" ? "max" : speedLabel(p.speed);
  return `${what} · ${p.events} events${p.live ? ` · ${speed}` : ""}`;
}
