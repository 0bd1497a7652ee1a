import { describe, expect, it } from "vitest";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { asLargeRun } from "../sim/testingRuns.ts";
import { exportJson, traceHash } from "../trace/exportJson.ts";
import { heldEventsOf } from "../trace/store.ts";
import { jsonOutcomes, report, whyLines } from "./run.ts";

describe("mailscope run over a recorder's store", () => {
  it("prints the same report, --json outcomes, --explain, hash and trace file, without building the events' array", async () => {
    const load = await loadScenarioFile("scenarios/receiver-down-past-fallback-window.yaml");
    if (!load.ok) throw new Error("the scenario did not load");
    const run = await runLoadedScenario(load.loaded, { mailscope: "test" });
    const large = asLargeRun(run);
    expect(heldEventsOf(large.trace)).toBeDefined();
    const labels = new Map(run.world.messages.map((m) => [m.messageId, m.id]));
    expect(report(large, "f.yaml", 1000, false, true)).toEqual(report(run, "f.yaml", 1000, false, true));
    expect(report(large, "f.yaml", 1000, true)).toEqual(report(run, "f.yaml", 1000, true));
    expect(JSON.stringify(jsonOutcomes(large))).toBe(JSON.stringify(jsonOutcomes(run)));
    expect(whyLines(large, labels)).toEqual(whyLines(run, labels));
    expect(await traceHash(large.trace)).toBe(await traceHash(run.trace));
    expect(exportJson(large.trace)).toBe(exportJson(run.trace));
    // None of them built the array.
    expect(heldEventsOf(large.trace)).toBeDefined();
  });
});
