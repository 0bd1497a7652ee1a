import { describe, expect, it } from "vitest";
import { recipientsOf, type ScenarioInput } from "../sim/scenario.ts";
import { generateWorld, worldSize } from "./generate.ts";
import { exploreOptions } from "./options.ts";
import { shrinkWorld } from "./shrink.ts";

/** A world of 4 domains, messages to many recipients and faults of each layer, from a fixed seed. */
function bigWorld(): ScenarioInput {
  const options = exploreOptions({
    domains: { min: 4, max: 4 },
    messages: { min: 4, max: 4 },
    recipients: { min: 6, max: 12 },
  });
  for (let base = 0; ; base++) {
    const w = generateWorld({ base, overrides: {} }, options).scenario;
    if (
      (w.faults?.network?.length ?? 0) >= 2 &&
      recipientsOf((w.messages ?? [])[0]!).some((r) => r.endsWith("@b.example"))
    )
      return w;
  }
}

describe("shrinking a world", () => {
  it("keeps what the violation needs and drops the rest (delta debugging, no engine)", async () => {
    const world = bigWorld();
    const target = recipientsOf((world.messages ?? [])[0]!).find((r) => r.endsWith("@b.example")) as string;
    // The "violation": some message is addressed to the target recipient.
    const fails = async (s: ScenarioInput): Promise<boolean> =>
      (s.messages ?? []).some((m) => recipientsOf(m).includes(target));
    const shrunk = await shrinkWorld(world, fails, 1000);
    const size = worldSize(shrunk.scenario);
    expect(await fails(shrunk.scenario)).toBe(true);
    expect(size.messages).toBe(1);
    expect(size.recipients).toBe(1);
    expect(size.faults).toBe(0);
    expect(Object.keys(shrunk.scenario.domains).sort()).toEqual(
      [...new Set(["b.example", (shrunk.scenario.messages ?? [])[0]!.from?.split("@")[1] ?? "b.example"])].sort(),
    );
    expect(size.total).toBeLessThan(worldSize(world).total);
    expect(shrunk.exhausted).toBe(false);
  });

  it("is deterministic, and stops at its budget of runs", async () => {
    const world = bigWorld();
    const fails = async (s: ScenarioInput): Promise<boolean> => worldSize(s).faults > 0;
    const a = await shrinkWorld(world, fails, 1000);
    const b = await shrinkWorld(world, fails, 1000);
    expect(b).toEqual(a);
    expect(worldSize(a.scenario).faults).toBe(1);
    const cut = await shrinkWorld(world, fails, 3);
    expect(cut.runs).toBe(3);
    expect(cut.exhausted).toBe(true);
  });

  it("never returns a larger world, nor one that passes", async () => {
    const world = bigWorld();
    const shrunk = await shrinkWorld(world, async () => false, 50);
    expect(shrunk.scenario).toEqual(world);
    expect(shrunk.steps).toBe(0);
  });
});
