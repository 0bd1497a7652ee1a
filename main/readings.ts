/** Help ▸ Spec Readings: the gaps of the spec a run may read either way, and their readings. */
import { gapById } from "../app/protocol/gaps.ts";
import { defaultScenarioReadings, readingsNotation, SWITCHABLE_GAPS } from "../app/sim/scenario.ts";

/** One line per switchable gap: `G16 (title): default jitter=on, fallback-window=2h`. */
export function readingsText(): string {
  const defaults = readingsNotation(defaultScenarioReadings);
  return SWITCHABLE_GAPS.map((id) => `${id} (${gapById(id)?.title ?? id}): default ${defaults[id] ?? "?"}`).join("\n");
}
