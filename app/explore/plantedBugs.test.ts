import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PLANTED_BUG_NAMES, PLANTED_BUGS, type PlantedBug } from "../sender/plantedBugs.ts";
import { parseScenarioText, type ScenarioInput } from "../sim/scenario.ts";
import { worldSize } from "./generate.ts";
import { exploreOptions } from "./options.ts";
import { runLanes, type Finding } from "./search.ts";

/**
 * Issue 26 item 5: explore finds each planted bug from a fixed seed and
 * shrinks it to at most 2 domains, 1 message and 2 faults, within a budget
 * counted in runs (never in seconds). The worlds are the small ones of the
 * bench (at most 2 domains, 2 messages, 5 recipients each).
 */
const OPTIONS = exploreOptions({
  domains: { max: 2 },
  messages: { max: 2 },
  recipients: { max: 5 },
  lanes: 8,
  shrinkRuns: 300,
});
/** Runs to find each bug in, and the property that must catch it. */
const EXPECTED: Record<PlantedBug, { readonly property: string; readonly budget: number }> = {
  "rate-limited-fallback-eligible": { property: "smtp-only-where-allowed", budget: 200 },
  "replay-new-key": { property: "idempotency-keys", budget: 200 },
  "retry-after-give-up": { property: "give-up-at-5-days", budget: 200 },
  "window-end-exclusive": { property: "fallback-at-window-end", budget: 200 },
};

/** Explores with `bug` planted until the property catches it (or the budget is spent); the finding, shrunk. */
async function hunt(bug: PlantedBug): Promise<{ finding?: Finding; runs: number }> {
  const { property, budget } = EXPECTED[bug];
  let finding: Finding | undefined;
  let runs = 0;
  await runLanes(
    { seed: 26, runs: budget, options: OPTIONS, properties: [], corpus: [], mailscope: "test", plantedBug: bug },
    Array.from({ length: OPTIONS.lanes }, (_, l) => l),
    {
      onRun: (report) => {
        runs++;
        finding ??= report.shrunk?.find((f) => f.property === property);
      },
      shouldStop: () => finding !== undefined,
    },
  );
  return { ...(finding !== undefined && { finding }), runs };
}

describe("explore finds and shrinks each planted bug (issue 26)", () => {
  it("plants only the bugs it documents, each naming the rules it breaks", () => {
    for (const bug of PLANTED_BUG_NAMES) expect(PLANTED_BUGS[bug]).toMatch(/breaks [A-Z]+-\d+/);
    expect(Object.keys(EXPECTED).sort()).toEqual([...PLANTED_BUG_NAMES].sort());
  });

  it.each(PLANTED_BUG_NAMES)(
    "%s: found within its run budget and shrunk to ≤ 2 domains, 1 message, 2 faults",
    async (bug) => {
      const { finding, runs } = await hunt(bug);
      expect(finding, `${bug} not found in ${runs} runs`).toBeDefined();
      const f = finding as Finding;
      expect(runs).toBeLessThanOrEqual(EXPECTED[bug].budget);
      expect(f.shrinkRuns).toBeLessThanOrEqual(OPTIONS.shrinkRuns);
      expect(f.shrunkSize.domains).toBeLessThanOrEqual(2);
      expect(f.shrunkSize.messages).toBe(1);
      expect(f.shrunkSize.faults).toBeLessThanOrEqual(2);
      // The shrunk world is a scenario a person can open: it parses, and says what it shows.
      const parsed = parseScenarioText(f.shrunkYaml, "shrunk.yaml");
      expect(parsed.ok).toBe(true);
      expect(worldSize(parse(f.shrunkYaml) as ScenarioInput)).toEqual(f.shrunkSize);
      expect(f.shrunkDetail).not.toBe("");
    },
  );

  it("without the planted bug, the same exploration violates nothing (STATE-3, STATE-7, POST-24, ERR-23)", async () => {
    const failed = new Set<string>();
    await runLanes(
      { seed: 26, runs: 48, options: OPTIONS, properties: [], corpus: [], mailscope: "test" },
      Array.from({ length: OPTIONS.lanes }, (_, l) => l),
      { onRun: (report) => report.failed.forEach((f) => failed.add(f)) },
    );
    expect([...failed]).toEqual([]);
  });
});
