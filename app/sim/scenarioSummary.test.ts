import { describe, expect, it } from "vitest";
import { summarizeScenario } from "./scenarioSummary.ts";

describe("summarizeScenario", () => {
  it("reads name and a folded description as YAML", () => {
    const text = "name: demo\ndescription: >-\n  first line\n  second line\nseed: 1\n";
    expect(summarizeScenario("demo.yaml", text)).toEqual({
      file: "demo.yaml",
      name: "demo",
      title: "demo",
      description: "first line second line",
      summary: "first line second line",
    });
  });
  it("falls back to the file name, and lists a broken file with its error", () => {
    expect(summarizeScenario("x.yaml", "seed: 1\n")).toEqual({
      file: "x.yaml",
      name: "x.yaml",
      title: "x.yaml",
      description: "",
      summary: "",
    });
    const broken = summarizeScenario("bad.yaml", "name: [unclosed\n");
    expect(broken.name).toBe("bad.yaml");
    expect(broken.description).toMatch(/^cannot be read: /);
  });
  it("reads a JSON scenario (JSON is YAML) and a YAML flow mapping alike", () => {
    const json = JSON.stringify({ name: "gen", description: "made by a bench", seed: 1 });
    expect(summarizeScenario("gen.json", ` ${json}`)).toEqual({
      file: "gen.json",
      name: "gen",
      title: "gen",
      description: "made by a bench",
      summary: "made by a bench",
    });
    expect(summarizeScenario("flow.yaml", "{name: flow, description: not JSON}")).toEqual({
      file: "flow.yaml",
      name: "flow",
      title: "flow",
      description: "not JSON",
      summary: "not JSON",
    });
  });

  it("a summary that starts with the title says the rest", () => {
    const text =
      'name: x\ntitle: One POST, four fates\ndescription: "One POST, four fates: the answer carries one result per recipient. More."';
    expect(summarizeScenario("x.yaml", text).summary).toBe("The answer carries one result per recipient.");
  });
  it("reads the title, the first sentence as the summary, the lesson and the well-formed annotations", () => {
    const text = [
      "name: down",
      "title: Receiver down",
      "description: >-",
      "  b.example's receiver refuses every connection for three hours. Each attempt fails.",
      "lesson: { order: 2, watchFor: [the band, 7] }",
      "annotations:",
      "  - { at: 2h, note: the window ends }",
      "  - { on: smtp.handoff, nth: 1, note: handed over, pause: false }",
      "  - { on: no.such.kind, note: dropped }",
      "  - { at: 1m, on: smtp.handoff, note: both, dropped }",
      "  - { at: 1m }",
    ].join("\n");
    expect(summarizeScenario("down.yaml", text)).toEqual({
      file: "down.yaml",
      name: "down",
      title: "Receiver down",
      description: "b.example's receiver refuses every connection for three hours. Each attempt fails.",
      summary: "b.example's receiver refuses every connection for three hours.",
      lesson: { order: 2, watchFor: ["the band"] },
      annotations: [
        { at: "2h", note: "the window ends", pause: true },
        { on: "smtp.handoff", nth: 1, note: "handed over", pause: false },
      ],
    });
  });
});
