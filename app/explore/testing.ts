/**
 * The planted-bug hunt, shared by app/explore/plantedBugs.test.ts and `npm run
 * bench explore`: explore small worlds from a fixed seed with a bug planted
 * (app/sender/plantedBugs.ts) until the property that must catch it fails and
 * its world is shrunk, or the budget of runs is spent.
 */
import type { PlantedBug } from "../sender/plantedBugs.ts";
import { exploreOptions } from "./options.ts";
import { runLanes, shardLanes, type Finding } from "./search.ts";

/** The small worlds of the hunt: at most 2 domains, 2 messages, 5 recipients each. */
export const HUNT_OPTIONS = exploreOptions({
  domains: { max: 2 },
  messages: { max: 2 },
  recipients: { max: 5 },
  lanes: 8,
  shrinkRuns: 300,
});
/** The seed every hunt starts from. */
export const HUNT_SEED = 26;
/** The most runs a hunt may take to find its bug. */
export const HUNT_BUDGET = 200;

/** The property that must catch each planted bug. */
export const CAUGHT_BY: Readonly<Record<PlantedBug, string>> = {
  "rate-limited-fallback-eligible": "smtp-only-where-allowed",
  "replay-new-key": "idempotency-keys",
  "retry-after-give-up": "give-up-at-5-days",
  "window-end-exclusive": "fallback-at-window-end",
};

/** Explores with `bug` planted until {@link CAUGHT_BY} catches it: the shrunk finding and the runs it took. */
export async function huntPlantedBug(bug: PlantedBug): Promise<{ finding?: Finding; runs: number }> {
  let finding: Finding | undefined;
  let runs = 0;
  await runLanes(
    {
      seed: HUNT_SEED,
      runs: HUNT_BUDGET,
      options: HUNT_OPTIONS,
      properties: [],
      corpus: [],
      mailscope: "test",
      plantedBug: bug,
    },
    shardLanes(HUNT_OPTIONS.lanes, { index: 1, count: 1 }),
    {
      onRun: (report) => {
        runs++;
        finding ??= report.shrunk?.find((f) => f.property === CAUGHT_BY[bug]);
      },
      shouldStop: () => finding !== undefined,
    },
  );
  return { ...(finding !== undefined && { finding }), runs };
}
