import { describe, expect, it } from "vitest";
import { summarizeScenario } from "./scenarioSummary.ts";

describe("summarizeScenario", () => {
  it("reads name and a folded description as YAML", () => {
    const text = "name: demo\ndescription: >-\n  first line\n  second line\nseed: 1\n";
    expect(summarizeScenario("demo.yaml", text)).toEqual({
      file: "demo.yaml",
      name: "demo",
      description: "first line second line",
    });
  });
  it("falls back to the file name, and lists a broken file with its error", () => {
    expect(summarizeScenario("x.yaml", "seed: 1\n")).toEqual({ file: "x.yaml", name: "x.yaml", description: "" });
    const broken = summarizeScenario("bad.yaml", "name: [unclosed\n");
    expect(broken.name).toBe("bad.yaml");
    expect(broken.description).toMatch(/^cannot be read: /);
  });
  it("reads a JSON scenario (JSON is YAML) and a YAML flow mapping alike", () => {
    const json = JSON.stringify({ name: "gen", description: "made by a bench", seed: 1 });
    expect(summarizeScenario("gen.json", ` ${json}`)).toEqual({
      file: "gen.json",
      name: "gen",
      description: "made by a bench",
    });
    expect(summarizeScenario("flow.yaml", "{name: flow, description: not JSON}")).toEqual({
      file: "flow.yaml",
      name: "flow",
      description: "not JSON",
    });
  });
});
