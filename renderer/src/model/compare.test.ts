/**
 * The Compare view's data (README, "Compare and fork"), on real runs of the
 * library's G16 scenarios: the two sides of two readings, two seeds and a
 * fork, the fork's choices at a time, and the table and shared axis of two
 * finished runs.
 */
import { describe, expect, it } from "vitest";
import g16 from "../../../scenarios/gap-G16-fallback-window-4h.yaml?raw";
import g16Default from "../../../scenarios/gap-G16-fallback-window-2h.yaml?raw";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import {
  comparisonOf,
  forkChoices,
  forkSides,
  readingSides,
  seedSides,
  type CompareBase,
  type CompareSide,
} from "./compare.ts";
import { readingControls } from "./readings.ts";

const START = Date.UTC(2026, 0, 1);

function base(text: string, name: string): CompareBase {
  return {
    name,
    text,
    file: `scenarios/${name}.yaml`,
    seed: 16,
    settings: [["G7", "ignored"]],
    readings: { G16: "jitter=off, fallback-window=4h" },
    startMs: START,
    playheadOffsetMs: 30 * 60_000,
  };
}

async function events(side: CompareSide) {
  const run = await runScenarioText(side.text, { file: side.file, seed: side.seed, readings: side.readings });
  if (!run.ok) throw new Error(JSON.stringify(run.errors));
  return run.run.trace.events;
}

describe("compare model", () => {
  it("two readings keep the run view's other settings and set the control's parameter on each side", () => {
    const control = readingControls({ G16: "jitter=off, fallback-window=4h" }).find(
      (c) => c.key === "G16 fallback-window",
    );
    if (!control) throw new Error("no G16 control");
    const [a, b] = readingSides(base(g16, "gap-G16-fallback-window-4h"), control, "1h", "4h");
    expect(a.title).toBe("G16 fallback window 1h");
    expect(a.readings).toEqual([
      ["G7", "ignored"],
      ["G16", "fallback-window=1h"],
    ]);
    expect(b.readings).toEqual([
      ["G7", "ignored"],
      ["G16", "fallback-window=4h"],
    ]);
  });

  it("two seeds: numbers stay numbers", () => {
    const [a, b] = seedSides(base(g16, "x"), "3", "abc");
    expect([a.seed, b.seed, a.title]).toEqual([3, "abc", "seed 3"]);
  });

  it("the fork's choices at +0:30:00 of the 2.5-hour outage: end it, re-weigh it, start an outage, submit again", () => {
    expect(forkChoices(g16Default, 30 * 60_000).map((c) => c.label)).toEqual([
      "End fault b-down (connection-refused) now",
      "Change the probability of fault b-down (now 1)",
      "Start an outage of mx.a.example (connection refused) now",
      "Start an outage of mx.b.example (connection refused) now",
      "Submit a message from alice@a.example to bob@b.example now",
    ]);
    // After the outage there is no fault to end.
    expect(forkChoices(g16Default, 3 * 3_600_000).map((c) => c.change.kind)).toEqual([
      "start-fault",
      "start-fault",
      "submit",
    ]);
  });

  it("G16 1h vs 4h: the table says smtp at +1:03:00 vs accepted at +3:03:00; the axis ends at the later run's end", async () => {
    const control = readingControls({ G16: "jitter=off, fallback-window=4h" }).find(
      (c) => c.key === "G16 fallback-window",
    );
    if (!control) throw new Error("no G16 control");
    const [a, b] = readingSides({ ...base(g16, "g16"), settings: [] }, control, "1h", "4h");
    const comparison = comparisonOf(await events(a), await events(b), START);
    expect(comparison.table.lines.map((l) => l.verdict)).toEqual(["smtp at +1:03:00 vs accepted at +3:03:00"]);
    expect(comparison.axisEndMs).toBe(START + 3 * 3_600_000 + 3 * 60_000);
  });

  it("a fork at +0:30:00 ending the outage: the original as A, the fork as B, named for saving", async () => {
    const made = forkSides({ ...base(g16Default, "gap-G16-fallback-window-2h"), settings: [] }, 30 * 60_000, {
      kind: "end-fault",
      fault: "b-down",
    });
    if (!made.ok) throw new Error(made.errors.join("; "));
    expect(made.name).toBe("gap-G16-fallback-window-2h-fork-30m");
    expect(made.sides.map((s) => s.title)).toEqual(["original", "fork at +0:30:00: ended fault b-down"]);
    const comparison = comparisonOf(await events(made.sides[0]), await events(made.sides[1]), START);
    expect(comparison.table.lines[0]?.verdict).toBe("smtp at +2:03:00 vs accepted at +0:31:00");
    const bad = forkSides(base(g16Default, "x"), 3 * 3_600_000, { kind: "end-fault", fault: "b-down" });
    expect(bad.ok ? "" : bad.errors[0]).toMatch(
      /^scenarios\/x\.yaml:\d+:\d+: faults\.network\[0\]: fault b-down is not active at \+3:00:00/,
    );
  });
});
