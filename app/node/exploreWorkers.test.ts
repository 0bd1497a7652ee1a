import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { exploreOptions } from "../explore/options.ts";
import { runLanes, type ExploreConfig, type LaneResult } from "../explore/search.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";
import { runLanesInWorkers } from "./exploreWorkers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OPTIONS = {
  domains: { max: 1 },
  messages: { max: 1 },
  recipients: { max: 2 },
  networkFaults: { max: 1 },
  lanes: 4,
};
const config = (runs?: number): ExploreConfig => ({
  seed: 3,
  ...(runs !== undefined && { runs }),
  options: exploreOptions(OPTIONS),
  properties: [],
  corpus: [],
  mailscope: "test",
});

beforeAll(() => useCryptoProvider(nodeCryptoProvider()));

describe("explore's worker threads (--workers)", () => {
  it("deal a fixed number of runs' lanes to free workers: the lanes' results of one thread", async () => {
    const here = await runLanes(config(12), [0, 1, 2, 3]);
    const threads = await runLanesInWorkers(config(12), [0, 1, 2, 3], 2, () => {}, "always").results;
    expect(threads).toEqual(here);
  }, 120_000);

  it("give every lane a result when stopped, the lanes not started with no run", async () => {
    const running = runLanesInWorkers(config(400), [0, 1, 2, 3], 2, () => running.stop(), "always");
    const results: LaneResult[] = await running.results;
    expect(results.map((r) => r.lane)).toEqual([0, 1, 2, 3]);
    expect(results.reduce((n, r) => n + r.runs, 0)).toBeLessThan(400);
  }, 120_000);

  it("start under `node --input-type=module -e` (Node refuses a thread that inherits --input-type)", () => {
    const code = `
      const { runLanesInWorkers } = await import("./app/node/exploreWorkers.ts");
      const { exploreOptions } = await import("./app/explore/options.ts");
      const config = { seed: 3, runs: 4, options: exploreOptions(${JSON.stringify(OPTIONS)}), properties: [], corpus: [], mailscope: "test" };
      const results = await runLanesInWorkers(config, [0, 1, 2, 3], 2, () => {}, "always").results;
      console.log(JSON.stringify(results.map((r) => [r.lane, r.runs])));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
  }, 120_000);
});
