import { describe, expect, it } from "vitest";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import { StopFinder, STEP_LEVELS, type EventsByIndex, type PlaybackStop } from "../sim/breakpoints.ts";
import { checkPrefix, compareRuns } from "../sim/compare.ts";
import { runLoadedScenario, type ScenarioRun } from "../sim/runScenario.ts";
import { asLargeRun } from "../sim/testingRuns.ts";
import { runOutcomes } from "../sim/worker.ts";
import { exportJson, traceHash } from "../trace/exportJson.ts";
import { ruleCounts } from "../trace/ruleEvidence.ts";
import { eventsOf, heldEventsOf } from "../trace/store.ts";
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

describe("check, compare and the sweep's worker over a recorder's store (decision 0225)", () => {
  async function runOf(file: string, seed?: number): Promise<ScenarioRun> {
    const load = await loadScenarioFile(file);
    if (!load.ok) throw new Error(`${file} did not load`);
    return runLoadedScenario(load.loaded, { mailscope: "test", ...(seed !== undefined && { seed }) });
  }

  it("check's event count and rule counts, and the sweep's outcomes, are the array's, without building it", async () => {
    const run = await runOf("scenarios/rate-limited-then-down.yaml");
    const large = asLargeRun(run);
    expect(eventsOf(large.trace).length).toBe(run.trace.events.length);
    expect(ruleCounts(eventsOf(large.trace))).toEqual(ruleCounts(run.trace.events));
    const startMs = run.world.startMs;
    expect(JSON.stringify(runOutcomes(eventsOf(large.trace), startMs))).toBe(
      JSON.stringify(runOutcomes(run.trace.events, startMs)),
    );
    expect(heldEventsOf(large.trace)).toBeDefined();
  });

  it("compare's table, parting and prefix check are the arrays', without building them", async () => {
    const a = await runOf("scenarios/rate-limited-then-down.yaml", 1);
    const b = await runOf("scenarios/rate-limited-then-down.yaml", 2);
    const [la, lb] = [asLargeRun(a), asLargeRun(b)];
    const startMs = a.world.startMs;
    const stored = compareRuns(eventsOf(la.trace), eventsOf(lb.trace), startMs);
    expect(JSON.stringify(stored)).toBe(JSON.stringify(compareRuns(a.trace.events, b.trace.events, startMs)));
    expect(stored.parting.parts).toBe(true);
    // A run against itself never parts: the decisions read to the end of both.
    expect(JSON.stringify(compareRuns(eventsOf(la.trace), eventsOf(la.trace), startMs))).toBe(
      JSON.stringify(compareRuns(a.trace.events, a.trace.events, startMs)),
    );
    for (const forkMs of [startMs + 60_000, startMs + 86_400_000]) {
      expect(await checkPrefix(eventsOf(la.trace), eventsOf(lb.trace), forkMs, startMs)).toEqual(
        await checkPrefix(a.trace.events, b.trace.events, forkMs, startMs),
      );
    }
    expect(heldEventsOf(la.trace)).toBeDefined();
    expect(heldEventsOf(lb.trace)).toBeDefined();
  });
});

describe("the live session's stop finder over a recorder (decision 0225)", () => {
  it("finds the same steps reading the recorder's store by place as reading the array, without building it", async () => {
    const load = await loadScenarioFile("scenarios/rate-limited-then-down.yaml");
    if (!load.ok) throw new Error("the scenario did not load");
    const run = await runLoadedScenario(load.loaded, { mailscope: "test" });
    const { recorder } = asLargeRun(run).world;
    for (const level of STEP_LEVELS) {
      const stops = (events: EventsByIndex): (PlaybackStop | undefined)[] => {
        const finder = new StopFinder();
        const found: (PlaybackStop | undefined)[] = [];
        for (let stop = finder.next(events, level); stop !== undefined; stop = finder.next(events, level)) {
          found.push(stop);
          if (found.length === 3) finder.skip(events, finder.scanned + 5); // a jump ahead in between
        }
        return found;
      };
      const fromArray = stops(run.trace.events);
      expect(fromArray.length).toBeGreaterThan(1);
      expect(stops(recorder)).toEqual(fromArray);
    }
    expect([...recorder.iterate(3, 9)]).toEqual(run.trace.events.slice(3, 9)); // a batch the session posts
  });
});
