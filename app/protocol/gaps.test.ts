import { describe, it, expect } from "vitest";
import { gaps, gapById } from "./gaps.ts";
import { rules, ruleById } from "./rules.ts";
import type { Rule } from "./rules.ts";

describe("gaps table", () => {
  it("numbers the gaps G1, G2, … without holes", () => {
    expect(gaps.map((g) => g.id)).toEqual(gaps.map((_, i) => `G${i + 1}`));
  });

  it("pins the catalogue: 48 gaps, G1 to G48 (a gap added or dropped updates this list on purpose)", () => {
    expect(gaps).toHaveLength(48);
    expect(gaps.map((g) => g.id)).toEqual(Array.from({ length: 48 }, (_, i) => `G${i + 1}`));
  });

  it("pins the switchable gaps, their readings and defaults (the scenario files and the app offer exactly these)", () => {
    const switchable = gaps.filter((g) => g.switchable).map((g) => [g.id, g.readings, g.defaultValue]);
    expect(switchable).toEqual([
      ["G3", ["tolerance-seconds=<n>"], "tolerance-seconds=300"],
      ["G7", ["enforced", "ignored"], "enforced"],
      ["G8", ["temporary-failure", "smtp"], "temporary-failure"],
      ["G12", ["split", "send-whole"], "split"],
      ["G13", ["pre-check", "send"], "pre-check"],
      ["G16", ["jitter=on", "jitter=off", "fallback-window=<1h..4h>"], "jitter=on, fallback-window=2h"],
      ["G18", ["accept", "fail"], "accept"],
      ["G19", ["401", "403"], "401"],
      ["G26", ["permanent", "retry"], "permanent"],
      ["G46", ["fallback-eligible", "alive"], "fallback-eligible"],
      ["G47", ["ignored", "lower-bound"], "ignored"],
    ]);
  });

  it("has every gap cited by the rules catalogue", () => {
    for (const r of rules as readonly Rule[]) {
      for (const g of r.gaps ?? []) expect(gapById(g), `${r.id} cites ${g}`).toBeDefined();
    }
  });

  it("lets every gap touch at least one existing rule", () => {
    for (const g of gaps) {
      expect(g.rules.length, g.id).toBeGreaterThan(0);
      for (const id of g.rules) expect(ruleById(id), `${g.id} → ${id}`).toBeDefined();
    }
  });

  it("names readings and a default for switchable gaps only", () => {
    for (const g of gaps) {
      if (g.switchable) {
        expect(g.readings?.length, g.id).toBeGreaterThan(0);
        expect(g.defaultValue, g.id).toBeDefined();
      } else {
        expect(g.readings, g.id).toBeUndefined();
        expect(g.defaultValue, g.id).toBeUndefined();
      }
      expect(g.title.length, g.id).toBeGreaterThan(0);
      expect(g.defaultReading.length, g.id).toBeGreaterThan(0);
    }
  });

  it("returns undefined for an unknown gap", () => {
    expect(gapById("G0")).toBeUndefined();
    expect(gapById("G999")).toBeUndefined();
  });
});
