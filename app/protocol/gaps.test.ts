import { describe, it, expect } from "vitest";
import { gaps, gapById } from "./gaps.ts";
import { rules, ruleById } from "./rules.ts";
import type { Rule } from "./rules.ts";

describe("gaps table", () => {
  it("numbers the gaps G1, G2, … without holes", () => {
    expect(gaps.map((g) => g.id)).toEqual(gaps.map((_, i) => `G${i + 1}`));
  });

  it("keeps the twenty gaps of the design", () => {
    expect(gaps.length).toBeGreaterThanOrEqual(20);
    expect(gapById("G7")?.readings).toEqual(["enforced", "ignored"]);
    expect(gapById("G19")?.defaultValue).toBe("401");
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
