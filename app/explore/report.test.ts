import { describe, expect, it } from "vitest";
import { machineGraph } from "./coverage.ts";
import { exploreOptions } from "./options.ts";
import {
  buildReport,
  corpusAdditions,
  exploreHeader,
  mergeShards,
  reportText,
  shardFile,
  SHARD_FORMAT,
} from "./report.ts";
import { runLanes, shardLanes, type ExploreConfig, type LaneResult } from "./search.ts";

const OPTIONS = exploreOptions({
  domains: { max: 2 },
  messages: { max: 2 },
  recipients: { max: 3 },
  lanes: 6,
  shrinkRuns: 20,
});
const CONFIG: ExploreConfig = { seed: 9, runs: 18, options: OPTIONS, properties: [], corpus: [], mailscope: "test" };
const HEADER = exploreHeader({ ...CONFIG, runs: CONFIG.runs });
const ALL = shardLanes(OPTIONS.lanes, { index: 1, count: 1 });

let whole: Promise<LaneResult[]> | undefined;
const wholeRun = (): Promise<LaneResult[]> => (whole ??= runLanes(CONFIG, ALL));

describe("the exploration's report", () => {
  it("does not depend on the order the lanes come back in", async () => {
    const lanes = await wholeRun();
    expect(reportText(buildReport(HEADER, [...lanes].reverse()))).toBe(reportText(buildReport(HEADER, lanes)));
  });

  it("counts the runs, and its coverage grows to the keys covered", async () => {
    const report = buildReport(HEADER, await wholeRun());
    expect(report.runs).toBe(18);
    const growth = report.coverage.growth;
    expect(growth[0]).toEqual({ runs: 0, keys: 0 });
    expect(growth.at(-1)).toEqual({ runs: 18, keys: report.coverage.keys });
    for (let i = 1; i < growth.length; i++) expect(growth[i]!.keys).toBeGreaterThanOrEqual(growth[i - 1]!.keys);
    expect(report.coverage.transitions.total).toBe(machineGraph().transitions.length);
    expect(report.corpus.added[0]?.index).toBe(0);
  });

  it("is the same from three shards as from one process", async () => {
    const shards = [1, 2, 3].map((index) => ({ index, count: 3 }));
    const files = await Promise.all(
      shards.map(async (shard) => ({
        name: `shard-${shard.index}.json`,
        value: JSON.parse(
          JSON.stringify(shardFile(HEADER, shard, await runLanes(CONFIG, shardLanes(OPTIONS.lanes, shard)))),
        ),
      })),
    );
    const merged = mergeShards(files);
    expect(merged.ok).toBe(true);
    if (!merged.ok) return;
    expect(reportText(buildReport(merged.header, merged.lanes))).toBe(
      reportText(buildReport(HEADER, await wholeRun())),
    );
  });

  it("refuses shards of different explorations, saying what differs", async () => {
    const lanes = await wholeRun();
    const one = (index: number, header = HEADER) =>
      JSON.parse(JSON.stringify(shardFile(header, { index, count: 2 }, lanes)));
    const other = exploreHeader({
      ...CONFIG,
      seed: 10,
      runs: 18,
      options: { ...OPTIONS, shrinkRuns: 5 },
    });
    const result = mergeShards([
      { name: "a.json", value: one(1) },
      { name: "b.json", value: one(2, { ...other, mailscope: "9.9.9" }) },
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const text = result.problems.join("\n");
    expect(text).toContain("b.json is not a shard of the exploration of a.json");
    expect(text).toContain('mailscope: "test" vs "9.9.9"');
    expect(text).toContain("seed: 9 vs 10");
    expect(text).toContain("options.shrinkRuns: 20 vs 5");
  });

  it("refuses a missing or doubled shard, another file, and another version", async () => {
    const lanes = await wholeRun();
    const shard = (index: number) => JSON.parse(JSON.stringify(shardFile(HEADER, { index, count: 3 }, lanes)));
    const result = mergeShards([
      { name: "a.json", value: shard(1) },
      { name: "b.json", value: shard(1) },
      { name: "c.json", value: { format: "mailscope-trace" } },
      { name: "d.json", value: { ...shard(2), format: SHARD_FORMAT, version: 99 } },
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      `c.json: not a shard file of mailscope explore (its format is not "${SHARD_FORMAT}")`,
      "d.json: shard file version 99; this Mailscope reads version 1",
      "b.json and a.json are both shard 1/3",
      "shards 2/3, 3/3 missing",
    ]);
  });

  it("resumes a corpus: its keys count from the start, and its runs are mutated", async () => {
    const first = await wholeRun();
    const corpus = corpusAdditions(HEADER, first);
    expect(corpus.length).toBe(buildReport(HEADER, first).corpus.added.length);
    const resumed: ExploreConfig = { ...CONFIG, seed: 10, corpus };
    const lanes = await runLanes(resumed, ALL);
    const report = buildReport(exploreHeader({ ...resumed, runs: 18 }), lanes);
    expect(report.corpus.resumed).toBe(corpus.length);
    const known = new Set(corpus.flatMap((e) => e.keys));
    expect(report.coverage.growth[0]!.keys).toBe(known.size);
    for (const lane of lanes)
      for (const add of lane.additions) for (const k of add.keys) expect(known.has(k)).toBe(false);
  });
});
