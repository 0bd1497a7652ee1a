import { describe, expect, it } from "vitest";
import { buildModel, type Model } from "../sim/invariants.ts";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { scenarioSchema, type ScenarioInput } from "../sim/scenario.ts";
import { generateWorld } from "./generate.ts";
import { BUILT_IN_PROPERTIES, judgeScenario } from "./judge.ts";
import { exploreOptions } from "./options.ts";
import { checkRunProperties } from "./properties.ts";
import { shrinkWorld } from "./shrink.ts";

const CONTEXT = { properties: [], mailscope: "test" };

/** A world the engine cannot build: a message smaller than its own generated headers. */
const CRASHING: ScenarioInput = {
  name: "crash",
  domains: { "a.example": { mailboxes: ["alice"] }, "b.example": { mailboxes: ["bob", "carol"] } },
  messages: [
    { id: "m1", from: "alice@a.example", to: ["bob@b.example", "carol@b.example"] },
    { id: "m2", from: "alice@a.example", to: "bob@b.example", size: 10 },
  ],
};

describe("a run judged", () => {
  it("holds every built-in property on a plain delivery, in the order they are reported", async () => {
    const judged = await judgeScenario(
      { name: "ok", domains: CRASHING.domains, messages: [CRASHING.messages![0]!] },
      CONTEXT,
    );
    expect(judged.failed).toEqual([]);
    expect(judged.checks.map((c) => c.id)).toEqual(BUILT_IN_PROPERTIES.map((p) => p.id));
    expect(judged.keys.has("recipient.outcome:accepted")).toBe(true);
  });

  it("is a finding when the engine throws, never an exception out of the explorer; and shrinks like any other", async () => {
    const judged = await judgeScenario(CRASHING, CONTEXT);
    expect(judged.failed).toEqual(["engine-crash"]);
    expect(judged.checks[0]?.detail).toMatch(
      /^the run threw: WorldError: m2: size 10 is smaller than the generated headers/,
    );
    const shrunk = await shrinkWorld(
      CRASHING,
      async (s) => (await judgeScenario(s, CONTEXT)).failed.includes("engine-crash"),
      50,
    );
    expect(shrunk.scenario.messages).toEqual([{ id: "m2", from: "alice@a.example", to: "bob@b.example", size: 10 }]);
  });

  it("is a finding when the world is not even a valid scenario", async () => {
    const judged = await judgeScenario({ name: "bad", domains: {} }, CONTEXT);
    expect(judged.failed).toEqual(["engine-crash"]);
    expect(judged.checks[0]?.detail).toContain(
      "the world is not a valid scenario: domains: a scenario has at least one domain",
    );
  });

  it("STATE-7, RCP-7: the run properties read the deliveries the invariants rebuilt, the same as rebuilt from the whole trace", async () => {
    // The judge builds the model once (decision 0205): the trace's invariant.checked and expectation.checked
    // events, written after the invariants were checked, change nothing buildModel reads.
    for (const base of [3, 17, 2026]) {
      const scenario = scenarioSchema.parse(generateWorld({ base, overrides: {} }, exploreOptions({})).scenario);
      let model: Model | undefined;
      const run = await runLoadedScenario(
        { scenario, source: "", emls: new Map() },
        { mailscope: "test", onModel: (built) => (model = built) },
      );
      expect(model).toEqual(buildModel(run.trace.events));
      const options = { readings: run.world.readings, complete: run.complete, startMs: run.world.startMs };
      expect(checkRunProperties(run.trace.events, options, model)).toEqual(
        checkRunProperties(run.trace.events, options),
      );
    }
  });
});
