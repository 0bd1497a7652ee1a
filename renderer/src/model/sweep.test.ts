/**
 * The Sweep view's data (note 0067), on real sweeps of
 * receiver-down-past-fallback-window: the fields the form offers with their
 * starting ranges, the charts' rows read off the points (STATE-3: accepted
 * while the outage ends inside the 2 h fallback window, smtp at +2:03:00
 * after it), the boundary, the run a point opens and Compare's two sides of a
 * boundary (the same scenario and settings as the point's runs).
 */
import { describe, expect, it } from "vitest";
import downText from "../../../scenarios/receiver-down-past-fallback-window.yaml?raw";
import { inThisRealm } from "../../../app/sim/runHere.ts";
import { runSweep, type SweepResult } from "../../../app/sim/sweep.ts";
import { planSweep } from "../../../app/sim/sweepPlan.ts";
import { constantControls } from "./readings.ts";
import {
  boundariesHeading,
  boundariesOf,
  boundarySides,
  chartProblem,
  pointRun,
  pointsTable,
  rangeValues,
  seriesData,
  seriesRows,
  sweepChart,
  sweepChoices,
  unitFor,
} from "./sweep.ts";

const FILE = "scenarios/receiver-down-past-fallback-window.yaml";
const BASE = { text: downText, file: FILE, name: "receiver-down-past-fallback-window", settings: [], seed: 7 } as const;

async function sweep(path: string, values: string, seeds?: number[]): Promise<SweepResult> {
  const planned = planSweep(downText, [{ path, values }], seeds);
  if (!planned.ok) throw new Error(planned.errors.map((e) => e.message).join("\n"));
  return runSweep(planned.plan, { text: downText, file: FILE, pool: inThisRealm() });
}

describe("the fields a sweep can vary", () => {
  const choices = sweepChoices(downText);
  const byPath = (p: string) => choices.find((c) => c.path === p);

  it("the scenario's durations with their value and a range around it; the readings and the draft's numbers", () => {
    expect(byPath("faults.network[b-down].until")).toMatchObject({
      kind: "time",
      current: "3h",
      label: "faults.network[b-down].until (now 3h)",
      from: "1h",
      to: "6h",
      step: "30m",
    });
    expect(byPath("G16.fallback-window")).toMatchObject({ from: "1h", to: "4h", step: "30m" });
    expect(byPath("RETRY-2.cap")?.label).toBe("RETRY-2.cap: backoff cap (SPEC.md 1h)");
    expect(byPath("RETRY-2.cap")).toMatchObject({ from: "20m", to: "2h", step: "10m" });
    // A long span steps in a round number of days: a handful of points, not one per day.
    expect(byPath("CAP-13")).toMatchObject({ from: "100d", to: "800d", step: "100d" });
  });

  it("a range as --vary writes it; a choice sweeps every reading", () => {
    const until = byPath("faults.network[b-down].until");
    if (!until) throw new Error("no field");
    expect(rangeValues(until, " 1h", "6h ", "30m")).toBe("1h..6h/30m");
    expect(rangeValues({ kind: "choice", options: ["on", "off"] }, "", "", "")).toBe("on,off");
  });

  it("text that does not parse offers none of its fields, still the readings and the draft's numbers", () => {
    const paths = sweepChoices("messages: [").map((c) => c.path);
    expect(paths.filter((p) => !/^(G\d|[A-Z]+-\d)/.test(p))).toEqual([]);
    expect(paths).toContain("G16.fallback-window");
    expect(paths).toContain("RETRY-2.cap");
  });

  it("durations are drawn in hours from 2 h, minutes from 2 min, else seconds", () => {
    expect(unitFor(7_200_000).name).toBe("h");
    expect(unitFor(7_199_999).name).toBe("min");
    expect(unitFor(119_999).name).toBe("s");
  });
});

describe("the charts of a sweep of the outage's end", () => {
  it("STATE-3: a row per point in hours; accepted up to 2h, then smtp at 2.05 h after 8 attempts; one boundary", async () => {
    const result = await sweep("faults.network[b-down].until", "1h..3h/30m");
    const chart = sweepChart(result.plan, result.points);
    expect(chart.axis).toMatchObject({ path: "faults.network[b-down].until", kind: "time", unit: { name: "h" } });
    expect(chart.timeUnit.name).toBe("h");
    expect(chart.outcomes).toEqual(["accepted", "smtp"]);
    expect(chart.seeds).toBe(false);
    expect(chart.recipients).toEqual([{ key: "m1 bob@b.example", label: "m1 bob@b.example" }]);
    expect(chart.rows.map((r) => [r.x, r.label, r.mode, r.checks])).toEqual([
      [1, "1h", "accepted", "invariants ok · expectations not met"],
      [1.5, "1h30m", "accepted", "invariants ok · expectations not met"],
      [2, "2h", "accepted", "invariants ok · expectations not met"],
      [2.5, "2h30m", "smtp", "ok"],
      [3, "3h", "smtp", "ok"],
    ]);
    const smtp = chart.rows[3];
    expect(smtp?.shares).toEqual({ smtp: 1 });
    expect(smtp?.time).toEqual({ min: 2.05, median: 2.05, p90: 2.05, max: 2.05 });
    expect(smtp?.attempts).toEqual({ min: 8, median: 8, max: 8 });
    expect(smtp?.posts).toEqual({ min: 0, median: 0, max: 0 });
    expect(boundariesOf(result.boundaries, "m1 bob@b.example").map((b) => b.text)).toEqual([
      "boundary between 2h and 2h30m: accepted → smtp",
    ]);
    expect(boundariesOf(result.boundaries, "m9 nobody@b.example")).toEqual([]);
    // The list's heading says whose boundaries it shows, of how many the progress line counts.
    expect(boundariesHeading(1, 1)).toBe("Boundary");
    expect(boundariesHeading(3, 3, "m1 bob@b.example")).toBe("Boundaries (3)");
    expect(boundariesHeading(3, 1, "m2 carol@c.example")).toBe(
      "Boundaries of m2 carol@c.example: 1 of the sweep's 3 (pick another recipient above for the rest)",
    );
    expect(boundariesHeading(2, 0, "m1 bob@b.example")).toBe(
      "No boundary for m1 bob@b.example: the sweep's 2 are other recipients' (pick one above)",
    );
  });

  it("points still running are left out (a chart drawn mid-sweep)", async () => {
    const result = await sweep("faults.network[b-down].until", "1h..3h/30m");
    const partial = result.points.map((p, i) => (i % 2 === 0 ? p : undefined));
    expect(sweepChart(result.plan, partial).rows.map((r) => r.label)).toEqual(["1h", "2h", "3h"]);
    expect(sweepChart(result.plan, []).rows).toEqual([]);
  });

  it("a point opens the run of its scenario (the outage's end set in the text) under the seed chosen", async () => {
    const result = await sweep("faults.network[b-down].until", "2h30m");
    const point = result.points[0];
    if (!point) throw new Error("no point");
    const start = pointRun(BASE, result.plan, point.point.values, 3);
    expect(start.name).toBe("receiver-down-past-fallback-window at faults.network[b-down].until=2h30m");
    expect(start.text).toMatch(/until: 2h30m/);
    expect(start.seed).toBe(3);
    expect(start.settings).toEqual([]);
  });

  it("a boundary of a reading: Compare's two sides carry the reading as a setting, titled by their value", async () => {
    const result = await sweep("G16.fallback-window", "2h,4h");
    expect(result.boundaries.map((b) => b.text)).toEqual(["boundary between 2h and 4h: smtp → accepted"]);
    const [a, b] = boundarySides(BASE, result.plan, result.points, result.boundaries[0]!);
    expect([a.label, a.title, a.readings]).toEqual(["A", "G16.fallback-window=2h", [["G16", "fallback-window=2h"]]]);
    expect([b.label, b.title, b.readings]).toEqual(["B", "G16.fallback-window=4h", [["G16", "fallback-window=4h"]]]);
    expect(a.text).toBe(downText);
    expect(a.seed).toBe(7);
  });

  it("RETRY-3: under seeds each row has the share of each outcome and the spread of its time", async () => {
    const result = await sweep("G16.fallback-window", "2h", [1, 2, 3, 4]);
    const chart = sweepChart(result.plan, result.points);
    expect(chart.seeds).toBe(true);
    const row = chart.rows[0];
    expect(row?.runs).toBe(4);
    const total = Object.values(row?.shares ?? {}).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1);
    expect(row?.time?.min).toBeLessThanOrEqual(row?.time?.median ?? 0);
    expect(row?.time?.median).toBeLessThanOrEqual(row?.time?.p90 ?? 0);
    expect(row?.time?.p90).toBeLessThanOrEqual(row?.time?.max ?? 0);
  });
});

describe("a grid of two fields: the outage's end by the fallback window", () => {
  async function grid(): Promise<SweepResult> {
    const planned = planSweep(downText, [
      { path: "faults.network[b-down].until", values: "1h..3h/1h" },
      { path: "G16.fallback-window", values: "1h,3h" },
    ]);
    if (!planned.ok) throw new Error(planned.errors.map((e) => e.message).join("\n"));
    return runSweep(planned.plan, { text: downText, file: FILE, pool: inThisRealm() });
  }

  it("STATE-3, RETRY-5: a series per window; the outage ending past the window goes to SMTP, inside it is accepted", async () => {
    const result = await grid();
    const chart = sweepChart(result.plan, result.points);
    expect(chart.series).toEqual({ path: "G16.fallback-window", labels: ["1h", "3h"] });
    // Rows by series, then by x: a 1h window sends every outage past 1h to SMTP; a 3h one accepts all three.
    expect(chart.rows.map((r) => [r.series, r.label, r.mode])).toEqual([
      [0, "1h", "accepted"],
      [0, "2h", "smtp"],
      [0, "3h", "smtp"],
      [1, "1h", "accepted"],
      [1, "2h", "accepted"],
      [1, "3h", "accepted"],
    ]);
    expect(seriesRows(chart, 1).map((r) => r.label)).toEqual(["1h", "2h", "3h"]);
    // The line charts: one datum per x with each series' value beside the other.
    const attempts = seriesData(chart, (r) => r.attempts?.median);
    expect(attempts.map((d) => d.label)).toEqual(["1h", "2h", "3h"]);
    expect(attempts.every((d) => d.s0 !== undefined && d.s1 !== undefined)).toBe(true);
    // A dot of a line opens its own point: at 2h, the 1h window's line is the point (2h, 1h), the 3h window's (2h, 3h).
    const at2h = attempts[1];
    const pointOf = (series: number): string | undefined => {
      const index = at2h?.points[series];
      return index === undefined ? undefined : result.points[index]?.point.values.map((v) => v.text).join(" ");
    };
    expect([pointOf(0), pointOf(1)]).toEqual(["2h 1h", "2h 3h"]);
    // Boundaries along either field, each saying what it holds.
    expect(result.boundaries.map((b) => b.text)).toContain(
      "boundary between 1h and 2h (faults.network[b-down].until; G16.fallback-window 1h): accepted → smtp",
    );
  });

  it("STATE-3: the Points table puts a boundary only between its two points' rows; the second field's are listed apart", async () => {
    const result = await grid();
    const chart = sweepChart(result.plan, result.points);
    const { lines, apart } = pointsTable(chart, result.boundaries);
    const pointAt = (i: number): number | undefined => {
      const line = lines[i];
      return line?.kind === "point" ? line.row.point : undefined;
    };
    const placed = lines.flatMap((line, i) => (line.kind === "boundary" ? [{ b: line.boundary, i }] : []));
    // Along the outage's end (the rows' order): between 1h and 2h in the 1h window's series, its two rows around it.
    expect(placed.map(({ b }) => b.text)).toEqual([
      "boundary between 1h and 2h (faults.network[b-down].until; G16.fallback-window 1h): accepted → smtp",
    ]);
    for (const { b, i } of placed) {
      expect(pointAt(i - 1)).toBe(b.fromPoint);
      expect(pointAt(i + 1)).toBe(b.toPoint);
    }
    // Along the window (one row per series apart): at 2h and 3h, smtp with 1h → accepted with 3h.
    expect(apart.map((b) => [b.axis, b.from.text, b.to.text, b.before, b.after])).toEqual([
      [1, "1h", "3h", "smtp", "accepted"],
      [1, "1h", "3h", "smtp", "accepted"],
    ]);
    expect(lines.filter((l) => l.kind === "point")).toHaveLength(6);
  });

  it("a point still running leaves its series' value out at that x (the line joins its neighbours)", async () => {
    const result = await grid();
    const partial = result.points.map((p, i) => (i === 1 ? undefined : p));
    const data = seriesData(sweepChart(result.plan, partial), (r) => r.time?.median);
    expect(data[0]?.s0).toBeDefined();
    expect(data[0]?.s1).toBeUndefined();
  });

  it("the app draws one or two fields, the second of at most 8 values", () => {
    const plan = (n: number) => {
      const planned = planSweep(downText, [
        { path: "faults.network[b-down].until", values: "1h..2h/1h" },
        { path: "G16.fallback-window", values: `1h..${n}h/1h` },
      ]);
      if (!planned.ok) throw new Error("no plan");
      return planned.plan;
    };
    expect(chartProblem(plan(4))).toBeUndefined();
    expect(chartProblem(plan(9))).toBe(
      "G16.fallback-window takes 9 values; the second field of a grid takes at most 8 in the app (one line or small chart each)",
    );
  });
});

describe("the draft's numbers in Compare", () => {
  it("one control per knob: its value in force (SPEC.md's, or the run's departure) with half and twice SPEC.md's", () => {
    const cap = constantControls().find((c) => c.key === "RETRY-2.cap");
    expect(cap).toMatchObject({ gap: "RETRY-2.cap", value: "1h", options: ["30m", "1h", "2h"] });
    expect(cap?.param).toBeUndefined();
    const departed = constantControls({ "RETRY-2.cap": "45m" }).find((c) => c.key === "RETRY-2.cap");
    expect(departed?.value).toBe("45m");
    expect(departed?.options).toContain("45m");
  });
});
