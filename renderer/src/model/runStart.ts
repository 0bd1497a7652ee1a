/**
 * How a run starts, as data: the session's `start` for a scenario (its text, its eml: files, a sweep's point's
 * readings and seed), and the run on screen as Compare and Sweep start from it.
 */
import type { StartCommand } from "../../../app/sim/sessionProtocol.ts";
import type { PlaybackContext } from "../session/machine.ts";
import type { CompareBase } from "./compare.ts";
import type { EmlFiles } from "./editorDoc.ts";

/** A sweep's point: its readings and draft numbers (as --set), and its seed. */
export interface PointSettings {
  readonly settings: readonly (readonly [string, string])[];
  readonly seed?: number | string;
}

/** The session's `start` of the scenario `text` (file `file`), whole bodies recorded for the inspector. */
export function startOfScenario(
  text: string,
  file: string,
  mailscope: string,
  emlFiles?: EmlFiles,
  point?: PointSettings,
): StartCommand {
  return {
    type: "start",
    text,
    file,
    ...(point !== undefined && point.settings.length > 0 && { readings: point.settings }),
    ...(point?.seed !== undefined && { seed: point.seed }),
    mailscope,
    recordBodies: true,
    ...(emlFiles?.emls !== undefined && { emls: emlFiles.emls }),
    ...(emlFiles?.emlErrors !== undefined && { emlErrors: emlFiles.emlErrors }),
  };
}

/**
 * The run on screen, as Compare and Sweep start from it (with the readings set in the run view, `settings`,
 * and its playhead, where a fork starts); undefined for an opened trace or a run not started yet.
 */
export function baseOfRun(
  context: Pick<PlaybackContext, "summary" | "source">,
  settings: readonly (readonly [string, string])[],
  playheadMs: number,
): CompareBase | undefined {
  const { summary, source } = context;
  if (!summary || source?.kind !== "scenario") return undefined;
  return {
    name: summary.name,
    text: source.start.text,
    file: source.start.file ?? "scenario.yaml",
    seed: summary.seed,
    ...(source.start.emls !== undefined && { emls: source.start.emls }),
    settings,
    readings: summary.readings,
    ...(summary.constants !== undefined && { constants: summary.constants }),
    startMs: summary.startMs,
    playheadOffsetMs: Math.max(0, playheadMs - summary.startMs),
  };
}
