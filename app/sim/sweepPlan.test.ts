/**
 * What a sweep varies (note 0066): the paths it addresses — a scenario's
 * numbers and durations (G16, RETRY-5 through the readings and the knobs),
 * gap readings, the draft's numbers — the values it takes, the grid, each
 * point's scenario, and bad input named at its path.
 */
import { parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { parseScenarioText } from "./scenario.ts";
import { MAX_SWEEP_POINTS, parseSeeds, planSweep, pointScenarios, sweepFields, type SweepPlan } from "./sweepPlan.ts";

/** receiver-down-past-fallback-window, shortened: an outage of b.example's host, a rate limit with a Retry-After. */
const SCENARIO = `name: s
seed: 7
readings:
  G16: jitter=off # exact times
domains:
  a.example: { mailboxes: [alice] }
  b.example:
    mailboxes: [bob]
    policy:
      unavailable: { times: 2, retryAfterS: 60 }
messages:
  - { id: m1, at: 0, from: alice@a.example, to: bob@b.example }
faults:
  network:
    - id: b-down
      kind: connection-refused
      host: mx.b.example
      until: 3h
    - { kind: rate-limited, host: mx.b.example, retryAfterS: 120, from: 5h, probability: 0.5 }
`;

function plan(varies: Record<string, string>, seeds?: (number | string)[]): SweepPlan {
  const planned = planSweep(
    SCENARIO,
    Object.entries(varies).map(([path, values]) => ({ path, values })),
    seeds,
  );
  if (!planned.ok) throw new Error(planned.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
  return planned.plan;
}

function errors(varies: Record<string, string>): string[] {
  const planned = planSweep(
    SCENARIO,
    Object.entries(varies).map(([path, values]) => ({ path, values })),
  );
  return planned.ok ? [] : planned.errors.map((e) => `${e.path}: ${e.message}`);
}

const texts = (p: SweepPlan, axis = 0): string[] => p.axes[axis]?.values.map((v) => v.text) ?? [];

describe("paths: the scenario's numbers and durations, by the schema", () => {
  it("lists each one with its kind, items by their id, a domain by its name; then readings and knobs", () => {
    const fields = sweepFields(parseDocument(SCENARIO).toJS());
    expect(
      fields.filter((f) => !/^(G\d|[A-Z]+-\d)/.test(f.path)).map((f) => `${f.path} ${f.kind} ${f.current}`),
    ).toEqual([
      "seed integer 7",
      "domains.b.example.policy.unavailable.times integer 2",
      "domains.b.example.policy.unavailable.retryAfterS integer 60",
      "messages[m1].at time 0",
      "faults.network[b-down].until time 3h",
      "faults.network[1].retryAfterS integer 120",
      "faults.network[1].from time 5h",
      "faults.network[1].probability number 0.5",
    ]);
    const paths = fields.map((f) => f.path);
    expect(paths).toContain("G16.fallback-window");
    expect(paths).toContain("G7");
    expect(paths).toContain("RETRY-2.cap");
  });

  it("an item by index or id, a field the scenario leaves out but the schema has, a quoted key", () => {
    expect(plan({ "faults.network[0].until": "1h" }).axes[0]).toMatchObject({
      path: "faults.network[b-down].until",
      kind: "time",
      target: { kind: "field", path: ["faults", "network", 0, "until"] },
    });
    expect(plan({ "faults.network[b-down].from": "1h" }).axes[0]?.target).toEqual({
      kind: "field",
      path: ["faults", "network", 0, "from"],
    });
    expect(plan({ 'domains["b.example"].capabilitiesMaxAgeS': "60" }).axes[0]).toMatchObject({
      path: "domains.b.example.capabilitiesMaxAgeS",
      kind: "integer",
    });
    expect(plan({ "G16.fallback-window": "1h" }).axes[0]?.target).toEqual({
      kind: "reading",
      gap: "G16",
      param: "fallback-window",
    });
    expect(plan({ "readings.G7": "enforced,ignored" }).axes[0]).toMatchObject({ path: "G7", kind: "choice" });
    expect(plan({ "retry-2.cap": "30m" }).axes[0]).toMatchObject({
      path: "RETRY-2.cap",
      target: { kind: "constant", knob: "RETRY-2.cap" },
    });
  });
});

describe("values: ranges with a step, lists", () => {
  it("1h..6h/30m holds both ends; 60..5400/60 numbers; 0..1/0.1 without drift; a list as given", () => {
    expect(texts(plan({ "faults.network[b-down].until": "1h..6h/30m" }))).toEqual([
      "1h",
      "1h30m",
      "2h",
      "2h30m",
      "3h",
      "3h30m",
      "4h",
      "4h30m",
      "5h",
      "5h30m",
      "6h",
    ]);
    const counts = plan({ "faults.network[1].retryAfterS": "60..5400/60" }).axes[0]?.values ?? [];
    expect([counts.length, counts[0]?.number, counts.at(-1)?.number]).toEqual([90, 60, 5400]);
    expect(texts(plan({ "faults.network[1].probability": "0..1/0.1" }))).toEqual([
      "0",
      "0.1",
      "0.2",
      "0.3",
      "0.4",
      "0.5",
      "0.6",
      "0.7",
      "0.8",
      "0.9",
      "1",
    ]);
    expect(texts(plan({ "G16.fallback-window": "1h,90m,4h" }))).toEqual(["1h", "1h30m", "4h"]);
    expect(texts(plan({ "domains.b.example.policy.unavailable.times": "1..4" }))).toEqual(["1", "2", "3", "4"]);
  });

  it("several --vary make a grid, the last varying fastest; seeds ride along", () => {
    const p = plan({ "faults.network[b-down].until": "1h,2h,3h", "G16.fallback-window": "1h,4h" }, [1, 2]);
    expect(p.points.map((x) => x.values.map((v) => v.text).join(" "))).toEqual([
      "1h 1h",
      "1h 4h",
      "2h 1h",
      "2h 4h",
      "3h 1h",
      "3h 4h",
    ]);
    expect(p.points[3]?.coords).toEqual([1, 1]);
    expect(p.seeds).toEqual([1, 2]);
    expect(parseSeeds("1..3")).toEqual({ ok: true, value: [1, 2, 3] });
    expect(parseSeeds("3,x")).toEqual({ ok: true, value: [3, "x"] });
    expect(parseSeeds("5..2")).toMatchObject({ ok: false });
  });
});

describe("a point's scenario", () => {
  it("the text with the field written in (comments and layout kept), readings and knobs as --set pairs", () => {
    const p = plan({ "faults.network[b-down].until": "2h30m", "G16.fallback-window": "3h", "RETRY-6": "3d" });
    const point = pointScenarios(SCENARIO)(p.axes, p.points[0]?.values ?? []);
    expect(point.settings).toEqual([
      ["G16", "fallback-window=3h"],
      ["RETRY-6", "3d"],
    ]);
    expect(point.text).toBe(SCENARIO.replace("until: 3h", "until: 2h30m"));
    const parsed = parseScenarioText(point.text);
    expect(parsed.ok && parsed.scenario.faults.network[0]?.until).toBe("2h30m");
    // Two fields at once, each where it is written.
    const two = plan({ "messages[m1].at": "1m", "faults.network[1].retryAfterS": "30" });
    expect(pointScenarios(SCENARIO)(two.axes, two.points[0]?.values ?? []).text).toBe(
      SCENARIO.replace("at: 0,", "at: 1m,").replace("retryAfterS: 120", "retryAfterS: 30"),
    );
    // A field the scenario leaves out is added to its mapping, a flow mapping kept one.
    const at = plan({ "faults.network[1].until": "6h" });
    expect(pointScenarios(SCENARIO)(at.axes, at.points[0]?.values ?? []).text).toContain(
      "{kind: rate-limited, host: mx.b.example, retryAfterS: 120, from: 5h, probability: 0.5, until: 6h}",
    );
  });
});

describe("bad input is named at its path (exit 2 in the CLI)", () => {
  it("an unknown path lists the valid ones", () => {
    const [message] = errors({ "faults.network[7].until": "1h" });
    expect(message).toMatch(
      /^faults\.network\[7\]\.until: faults\.network has no item \[7\]; it has \[b-down\], \[1\]\. Valid paths: the scenario's numbers and durations: seed, .*faults\.network\[b-down\]\.until.*; gap readings: G3\.tolerance-seconds, .*; the draft's numbers: RETRY-1, /,
    );
    expect(errors({ "messages[m1].nope": "1" })[0]).toMatch(
      /messages\[m1\]\.nope is not in the scenario; messages\[m1\] has messages\[m1\]\.id/,
    );
    expect(errors({ "faults.network[b-down].host": "1,2" })[0]).toMatch(
      /host is not a number or a duration\. Valid paths/,
    );
    expect(errors({ G1: "x" })[0]).toMatch(
      /^G1: G1 is not a reading a sweep can vary; the readings are G3\.tolerance-seconds/,
    );
  });

  it("a value of the wrong kind, an empty or inverted range, a step of 0, a grid over the limit", () => {
    expect(errors({ "faults.network[1].probability": "1h" })).toEqual([
      'faults.network[1].probability: "1h" is not a number',
    ]);
    expect(errors({ "faults.network[1].probability": "0..2/0.5" })).toEqual([
      "faults.network[1].probability: 2 is above the greatest value, 1",
    ]);
    expect(errors({ "RETRY-2.cap": "600..1200/60" })).toEqual([
      'RETRY-2.cap: "600" is not a duration such as 90s, 30m or 2h (with its unit)',
    ]);
    expect(errors({ "RETRY-3": "0.5..1/0.25" })[0]).toMatch(
      /RETRY-3 \(jitter \(± fraction\)\) is a number from 0 to 1 \(not included\)/,
    );
    expect(errors({ G7: "enforced,maybe" })).toEqual(['G7: "maybe" is not one of enforced, ignored']);
    expect(errors({ "G16.fallback-window": "" })[0]).toMatch(/no values/);
    expect(errors({ "G16.fallback-window": "4h..1h/1h" })).toEqual([
      'G16.fallback-window: the range "4h..1h/1h" is inverted: 1h comes before 4h',
    ]);
    expect(errors({ "G16.fallback-window": "1h..4h/0s" })[0]).toMatch(/step .* must be more than 0/);
    expect(errors({ "G16.fallback-window": "1h..4h" })[0]).toMatch(/needs a step/);
    expect(errors({ "messages[m1].at": "0..20000/1" })[0]).toMatch(
      new RegExp(`has 20001 values; a sweep has at most ${MAX_SWEEP_POINTS} points`),
    );
    expect(errors({ "messages[m1].at": "0..200s/1s", "faults.network[b-down].until": "1h..2h/1m" })).toEqual([
      "--vary: the grid has 201 × 61 = 12261 points; a sweep has at most 10000",
    ]);
    expect(errors({ "G16.fallback-window": "1h", "readings.G16.fallback-window": "2h" })[0]).toMatch(/varied twice/);
  });
});
