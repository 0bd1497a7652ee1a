import { describe, expect, it } from "vitest";
import { exploreOptions } from "../../../app/explore/options.ts";
import { buildReport, exploreHeader } from "../../../app/explore/report.ts";
import { runLanes, shardLanes, type ExploreConfig, type RunReport } from "../../../app/explore/search.ts";
import { parseUserProperties } from "../../../app/explore/userProperties.ts";
import { parseScenarioText } from "../../../app/sim/scenario.ts";
import {
  addRuns,
  galleryList,
  galleryScenario,
  growthPoints,
  progressText,
  startState,
  violationList,
  violationScenario,
  withReport,
} from "./explore.ts";

const OPTIONS = exploreOptions({
  domains: { max: 2 },
  messages: { max: 2 },
  recipients: { max: 3 },
  lanes: 4,
  shrinkRuns: 20,
});
const parsed = parseUserProperties("properties:\n  - id: nothing-submitted\n    never: message.submitted\n", "p.yaml");
if (!parsed.ok) throw new Error("properties");
const CONFIG: ExploreConfig = {
  seed: 3,
  runs: 8,
  options: OPTIONS,
  properties: parsed.properties,
  corpus: [],
  mailscope: "test",
};

async function explored() {
  const reports: RunReport[] = [];
  const lanes = await runLanes(CONFIG, shardLanes(OPTIONS.lanes, { index: 1, count: 1 }), {
    onRun: (r) => reports.push(r),
  });
  return { reports, report: buildReport(exploreHeader({ ...CONFIG, runs: 8 }), lanes) };
}

describe("the Explore view's model, on a real exploration", () => {
  it("counts runs and behaviours as they come, in any order, and ends on the report's figures", async () => {
    const { reports, report } = await explored();
    const live = addRuns(addRuns(startState(8), reports.slice(4).reverse()), reports.slice(0, 4));
    expect(live.runs).toBe(8);
    expect(live.keys.size).toBe(report.coverage.keys);
    expect(live.growth.at(-1)).toEqual({ runs: 8, keys: report.coverage.keys });
    expect(
      galleryList(live)
        .map((g) => g.path)
        .sort(),
    ).toEqual(report.gallery.map((g) => g.path).sort());
    const [v] = violationList(live);
    expect(v?.property).toBe("nothing-submitted");
    expect(v?.count).toBe(8);
    expect(v?.index).toBe(0);
    const done = withReport(live, report);
    expect(done.phase).toBe("done");
    expect(galleryList(done)).toEqual(report.gallery);
    expect(violationList(done)[0]?.yaml).toBe(report.violations[0]?.shrunk.yaml);
    expect(progressText(done, 4000)).toBe(
      `8 of 8 runs · 2.0 runs/s · ${report.coverage.keys} behaviours · ${report.gallery.length} paths · 1 property violated`,
    );
  });

  it("opens a violation's shrunk world and a gallery world as scenarios a person can run", async () => {
    const { report } = await explored();
    const done = withReport(startState(8), report);
    const v = violationScenario(violationList(done)[0]!);
    expect(v.name).toBe("explore-nothing-submitted.yaml");
    expect(v.text).toMatch(/^# mailscope explore: this scenario violates nothing-submitted\.\n/);
    expect(parseScenarioText(v.text, v.name).ok).toBe(true);
    const g = galleryScenario(galleryList(done)[0]!, OPTIONS, "3");
    expect(g).toBeDefined();
    expect(parseScenarioText(g!.text, g!.name).ok).toBe(true);
    expect(g!.text).toContain(`mailscope explore --run ${galleryList(done)[0]!.seed}`);
  });

  it("a violation's detail past a day reads as every time on screen does (+5d 0:25:48.911), its file's comment too", async () => {
    const { report } = await explored();
    const [first] = report.violations;
    const detail = "m1@a.example→a.example: attempt 123 at +120:25:48.911, at or after the give-up at 5 days [STATE-7]";
    const edited = { ...report, violations: [{ ...first!, shrunk: { ...first!.shrunk, detail } }] };
    const [v] = violationList(withReport(startState(8), edited));
    expect(v?.detail).toBe(
      "m1@a.example→a.example: attempt 123 at +5d 0:25:48.911, at or after the give-up at 5 days [STATE-7]",
    );
    expect(violationScenario(v!).text).toContain(
      "# What it shows: m1@a.example→a.example: attempt 123 at +5d 0:25:48.911",
    );
  });

  it("draws at most 200 points of the growth, the first and the last kept", () => {
    const growth = Array.from({ length: 1001 }, (_, runs) => ({ runs, keys: runs * 2 }));
    const points = growthPoints(growth);
    expect(points).toHaveLength(200);
    expect(points[0]).toEqual({ runs: 0, keys: 0 });
    expect(points.at(-1)).toEqual({ runs: 1000, keys: 2000 });
  });
});
