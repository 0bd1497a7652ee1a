import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXPLORE_OPTIONS,
  exploreOptions,
  FEATURE_NAMES,
  optionsRecord,
  readExploreOptions,
} from "./options.ts";

describe("the explorer's options", () => {
  it("default to the issue's ranges: 1–4 domains, 1–5 messages, 1–150 recipients", () => {
    expect(DEFAULT_EXPLORE_OPTIONS.domains).toEqual({ min: 1, max: 4 });
    expect(DEFAULT_EXPLORE_OPTIONS.messages).toEqual({ min: 1, max: 5 });
    expect(DEFAULT_EXPLORE_OPTIONS.recipients).toEqual({ min: 1, max: 150 });
    expect(DEFAULT_EXPLORE_OPTIONS.latestSubmissionMs).toBe(5 * 86_400_000);
    for (const f of FEATURE_NAMES) expect(DEFAULT_EXPLORE_OPTIONS.features[f]).toBeGreaterThan(0);
  });

  it("give each feature its own chance: true, false or a number", () => {
    const options = exploreOptions({
      featureChance: 0.4,
      features: { partition: false, latency: true, "null-sender": 0.9 },
    });
    expect(options.features.partition).toBe(0);
    expect(options.features.latency).toBe(0.4);
    expect(options.features["null-sender"]).toBe(0.9);
    expect(options.features["size-near-limit"]).toBe(0.02);
  });

  it("go into a report as plain data that reads back the same", () => {
    const options = exploreOptions({ domains: { max: 2 }, latestSubmission: "2d", features: { partition: false } });
    expect(exploreOptions(optionsRecord(options) as never)).toEqual(options);
  });

  it("read from YAML, with every mistake at its line and column", () => {
    const text = [
      "domains:",
      "  min: 3",
      "  max: 2",
      "messages: { max: 99 }",
      "features:",
      "  partitions: false",
      "latestSubmission: soon",
      "lane: 4",
      "",
    ].join("\n");
    const read = readExploreOptions(text, "opts.yaml");
    expect(read.ok).toBe(false);
    if (read.ok) return;
    const lines = read.errors.map((e) => `${e.line}:${e.column} ${e.field}: ${e.message}`);
    expect(lines.join("\n")).toMatch(/^2:\d+ domains: min is at most max/m);
    expect(lines.join("\n")).toMatch(/^4:\d+ messages\.max: .*20/m);
    expect(lines.join("\n")).toMatch(/^6:\d+ features(\.partitions)?: /m);
    expect(lines.join("\n")).toMatch(/^7:\d+ latestSubmission: a duration/m);
    expect(lines.join("\n")).toMatch(/^8:1 lane: unknown field "lane"/m);
  });

  it("take an empty file as the defaults", () => {
    expect(readExploreOptions("", "opts.yaml")).toEqual({ ok: true, options: DEFAULT_EXPLORE_OPTIONS });
  });
});
