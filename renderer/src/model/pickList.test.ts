import { describe, expect, it } from "vitest";
import { pickList } from "./pickList.ts";

const actors = Array.from({ length: 3714 }, (_, i) => `m${i + 1}@a.example→${i % 2 === 0 ? "b" : "c"}.example`);

describe("a long picker narrowed by words typed", () => {
  it("keeps the items with every word, any case, at most the limit, and counts the rest", () => {
    expect(pickList(actors, "", undefined).items).toHaveLength(200);
    expect(pickList(actors, "", undefined).more).toBe(3514);
    expect(pickList(actors, "M371 c.example", undefined)).toEqual({
      items: ["m3710@a.example→c.example", "m3712@a.example→c.example", "m3714@a.example→c.example"],
      more: 0,
    });
  });
  it("keeps the chosen one listed even when the words leave it out", () => {
    expect(pickList(actors, "m12@", "m7@a.example→b.example").items).toEqual([
      "m7@a.example→b.example",
      "m12@a.example→c.example",
    ]);
    expect(pickList(actors, "nothing", undefined)).toEqual({ items: [], more: 0 });
  });
});
