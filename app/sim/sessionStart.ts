/**
 * A session's `start` (session.ts): the scenario loaded and its world built as `mailscope run` builds them,
 * and what a start command that came over a message port must hold.
 */
import { worldErrorAt } from "./runScenario.ts";
import { emlReader, formatScenarioError, loadScenario } from "./scenario.ts";
import type { StartCommand } from "./sessionProtocol.ts";
import { DEFAULT_SPEED, liveRun, type SessionState } from "./sessionState.ts";
import { summarize } from "./sessionSummary.ts";
import { createWorld, WorldError, type World, type WorldOptions } from "./world.ts";

/** Loads the scenario and builds its world; posts `ready` with its summary, or `invalid` with its errors. */
export async function start(s: SessionState, command: StartCommand): Promise<void> {
  s.phase = "starting";
  s.interrupt = undefined;
  s.live = undefined;
  const invalid = (errors: readonly string[]): void => {
    s.phase = "empty";
    s.send({ type: "invalid", errors });
  };
  const load = await loadScenario(command.text, {
    ...(command.file !== undefined && { file: command.file }),
    // A Uint8Array as the protocol says; a bare ArrayBuffer (a transferred file) is taken too.
    readFile: emlReader(command.emls, command.emlErrors),
  });
  if (!load.ok) return invalid(load.errors.map(formatScenarioError));
  const { loaded } = load;
  const worldOptions: WorldOptions = {
    ...(command.seed !== undefined && { seed: command.seed }),
    ...(command.readings !== undefined && { readings: command.readings }),
    recordBodies: command.recordBodies === true,
    emls: loaded.emls,
    ...(s.scheduler !== undefined && { scheduler: s.scheduler }),
  };
  let world: World;
  try {
    world = await createWorld(loaded.scenario, worldOptions);
  } catch (error) {
    if (!(error instanceof WorldError)) throw error;
    return invalid([formatScenarioError(worldErrorAt(error, command.file))]);
  }
  if (s.interrupt === "cancel") return; // cancel posts "cancelled"
  s.live = liveRun(s, world, loaded, worldOptions, command.mailscope, DEFAULT_SPEED);
  s.phase = "ready";
  s.send({ type: "ready", summary: summarize(world, loaded) });
}

/** What is wrong with a start command that came over a message port, if anything. */
export function startProblem(command: StartCommand): string | undefined {
  if (typeof command.text !== "string") return "text is the scenario's YAML, a string";
  if (command.file !== undefined && typeof command.file !== "string") return "file is a string";
  if (command.seed !== undefined && typeof command.seed !== "number" && typeof command.seed !== "string") {
    return "seed is a number or a string";
  }
  if (
    command.readings !== undefined &&
    !(
      Array.isArray(command.readings) &&
      command.readings.every(
        (r: unknown) => Array.isArray(r) && r.length === 2 && r.every((part: unknown) => typeof part === "string"),
      )
    )
  ) {
    return 'readings are pairs of strings, [["G16", "4h"]]';
  }
  if (command.emls !== undefined && (typeof command.emls !== "object" || command.emls === null)) {
    return "emls maps each eml path to its bytes (a Uint8Array)";
  }
  if (
    command.emlErrors !== undefined &&
    (typeof command.emlErrors !== "object" ||
      command.emlErrors === null ||
      !Object.values(command.emlErrors).every((m: unknown) => typeof m === "string"))
  ) {
    return "emlErrors maps each eml path to why it could not be read (a string)";
  }
  return undefined;
}
