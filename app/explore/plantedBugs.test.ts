import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PLANTED_BUG_NAMES, PLANTED_BUGS } from "../sender/plantedBugs.ts";
import { parseScenarioText, type ScenarioInput } from "../sim/scenario.ts";
import { worldSize } from "./generate.ts";
import { runLanes, shardLanes, type Finding } from "./search.ts";
import { CAUGHT_BY, HUNT_BUDGET, HUNT_OPTIONS, HUNT_SEED, huntPlantedBug } from "./testing.ts";

/**
 * `explore` finds each planted bug from a fixed seed and
 * shrinks it to at most 2 domains, 1 message and 2 faults, within a budget
 * counted in runs (never in seconds). The worlds are small (at most 2
 * domains, 2 messages, 5 recipients each).
 */
describe("explore finds and shrinks each planted bug", () => {
  it("plants only the bugs it documents, each naming the rules it breaks", () => {
    for (const bug of PLANTED_BUG_NAMES) expect(PLANTED_BUGS[bug]).toMatch(/breaks [A-Z]+-\d+/);
    expect(Object.keys(CAUGHT_BY).sort()).toEqual([...PLANTED_BUG_NAMES].sort());
  });

  it.each(PLANTED_BUG_NAMES)(
    "%s: found within its run budget and shrunk to ≤ 2 domains, 1 message, 2 faults",
    async (bug) => {
      const { finding, runs } = await huntPlantedBug(bug);
      expect(finding, `${bug} not found in ${runs} runs`).toBeDefined();
      const f = finding as Finding;
      expect(runs).toBeLessThanOrEqual(HUNT_BUDGET);
      expect(f.shrinkRuns).toBeLessThanOrEqual(HUNT_OPTIONS.shrinkRuns);
      expect(f.shrunkSize.domains).toBeLessThanOrEqual(2);
      expect(f.shrunkSize.messages).toBe(1);
      expect(f.shrunkSize.faults).toBeLessThanOrEqual(2);
      // The shrunk world is a scenario a person can open: it parses, and says what it shows.
      expect(parseScenarioText(f.shrunkYaml, "shrunk.yaml").ok).toBe(true);
      expect(worldSize(parse(f.shrunkYaml) as ScenarioInput)).toEqual(f.shrunkSize);
      expect(f.shrunkDetail).not.toBe("");
      // Its description says what it violates, its times as the app writes them (retry-after-give-up's are days).
      const { description } = parse(f.shrunkYaml) as { description: string };
      expect(description).toMatch(/^[a-z0-9-]+: /);
      const hours = [...description.matchAll(/\+(\d+):\d\d:\d\d/g)].map((m) => Number(m[1]));
      expect(hours.every((h) => h < 24)).toBe(true);
    },
  );

  it("without the planted bug, the same exploration violates nothing (STATE-3, STATE-7, POST-24, ERR-23)", async () => {
    const failed = new Set<string>();
    await runLanes(
      { seed: HUNT_SEED, runs: 48, options: HUNT_OPTIONS, properties: [], corpus: [], mailscope: "test" },
      shardLanes(HUNT_OPTIONS.lanes, { index: 1, count: 1 }),
      { onRun: (report) => report.failed.forEach((f) => failed.add(f)) },
    );
    expect([...failed]).toEqual([]);
  });
});
