import { describe, expect, it } from "vitest";
import { gaps } from "./gaps.ts";
import { READING_GAPS, READING_NAMES, readingNameOf, type ReadingName } from "./readingNames.ts";

describe("the readings' names (G3, G7, G8, G12, G13, G16, G18, G19, G26, G46, G47)", () => {
  const entries = Object.entries(READING_GAPS) as [ReadingName, string][];

  it("maps each readable name to exactly one gap ID, and no two names to one gap", () => {
    const ids = entries.map(([, id]) => id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [name, id] of entries)
      expect(entries.filter(([, other]) => other === id).map(([n]) => n)).toEqual([name]);
  });

  it("names exactly the switchable gaps of the gaps table, in its order", () => {
    expect(entries.map(([, id]) => id)).toEqual(gaps.filter((g) => g.switchable).map((g) => g.id));
  });

  it("reads back: a gap's ID gives its name, and another ID none", () => {
    for (const [name, id] of entries) {
      expect(readingNameOf(id)).toBe(name);
      expect(READING_NAMES[id as keyof typeof READING_NAMES]).toBe(name);
    }
    expect(readingNameOf("G1")).toBeUndefined();
    expect(readingNameOf("toString")).toBeUndefined();
    expect(readingNameOf("overMaxRecipients")).toBeUndefined();
  });
});
