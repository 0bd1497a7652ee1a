import { describe, expect, it } from "vitest";
import { formatGenome, parseGenome, withPart } from "./genome.ts";

describe("a run's seed (genome)", () => {
  it("is the number alone for a fresh run, and names each redrawn part", () => {
    expect(formatGenome({ base: 3735928559, overrides: {} })).toBe("3735928559");
    const mutated = withPart(withPart({ base: 7, overrides: {} }, "policies", 12), "swarm", 5);
    expect(formatGenome(mutated)).toBe("7+swarm.5+policies.12");
  });

  it("reads back what it writes", () => {
    const genome = { base: 42, overrides: { faults: 9, sim: 4294967295 } };
    const parsed = parseGenome(formatGenome(genome));
    expect(parsed).toEqual({ ok: true, genome });
  });

  it.each([
    ["", "starts with a number"],
    ["abc", "starts with a number"],
    ["4294967296", "starts with a number"],
    ["7+weather.3", "is not <part>.<number>"],
    ["7+faults", "is not <part>.<number>"],
    ["7+faults.x", "is not <part>.<number>"],
  ])("refuses %j, saying why", (text, why) => {
    const parsed = parseGenome(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain(why);
  });
});
