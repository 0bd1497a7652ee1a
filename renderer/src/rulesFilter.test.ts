import { describe, expect, it } from "vitest";
import type { Rule } from "../../app/protocol/rules.ts";
import { filterRules } from "./rulesFilter.ts";

const sample: Rule[] = [
  {
    id: "RETRY-1",
    section: "Retry schedule",
    strength: "FACT",
    text: "First retry 1 minute after the first attempt.",
    applies: ["sender"],
  },
  {
    id: "RETRY-4",
    section: "Retry schedule",
    strength: "SHOULD",
    text: "The fallback window SHOULD be 2 hours.",
    applies: ["sender"],
  },
  {
    id: "ERR-4",
    section: "Errors",
    strength: "FACT",
    text: "unsupported_version: SMTP fallback allowed immediately.",
    applies: ["sender"],
  },
];

describe("filterRules", () => {
  it("keeps every rule for an empty query", () => {
    expect(filterRules(sample, "  ").map((r) => r.id)).toEqual(["RETRY-1", "RETRY-4", "ERR-4"]);
  });
  it("matches an ID prefix and a whole ID", () => {
    expect(filterRules(sample, "retry").map((r) => r.id)).toEqual(["RETRY-1", "RETRY-4"]);
    expect(filterRules(sample, "ERR-4").map((r) => r.id)).toEqual(["ERR-4"]);
  });
  it("needs every word to match, in text or section", () => {
    expect(filterRules(sample, "fallback window").map((r) => r.id)).toEqual(["RETRY-4"]);
    expect(filterRules(sample, "fallback nothing-like-this")).toEqual([]);
  });
});
