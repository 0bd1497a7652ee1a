/** A run's start (a sweep's point's readings and seed, eml: files) and the run on screen as Compare and Sweep start from it. */
import { describe, expect, it } from "vitest";
import type { PlaybackContext } from "../session/machine.ts";
import { baseOfRun, startOfScenario } from "./runStart.ts";

describe("how a run starts", () => {
  it("a scenario's start records bodies; a sweep's point adds its readings (when it has any) and its seed", () => {
    expect(startOfScenario("name: x", "x.yaml", "1.0")).toEqual({
      type: "start",
      text: "name: x",
      file: "x.yaml",
      mailscope: "1.0",
      recordBodies: true,
    });
    const bytes = new Uint8Array([1]);
    expect(
      startOfScenario(
        "t",
        "f",
        "1.0",
        { emls: { "m.eml": bytes } },
        { settings: [["G16", "fallback-window=1h"]], seed: 7 },
      ),
    ).toMatchObject({ readings: [["G16", "fallback-window=1h"]], seed: 7, emls: { "m.eml": bytes } });
    expect(startOfScenario("t", "f", "1.0", undefined, { settings: [] })).not.toHaveProperty("readings");
  });

  it("Compare and Sweep start from a live run only: its text, seed, readings set, and the playhead as an offset", () => {
    const summary = {
      name: "s",
      seed: 3,
      readings: { G16: "x" },
      startMs: 1000,
    } as unknown as PlaybackContext["summary"];
    const source = { kind: "scenario", start: { type: "start", text: "name: s" } } as const;
    expect(baseOfRun({ summary, source }, [["G16", "x"]], 4000)).toEqual({
      name: "s",
      text: "name: s",
      file: "scenario.yaml",
      seed: 3,
      settings: [["G16", "x"]],
      readings: { G16: "x" },
      startMs: 1000,
      playheadOffsetMs: 3000,
    });
    expect(baseOfRun({ summary, source }, [], 0)?.playheadOffsetMs).toBe(0);
    expect(baseOfRun({ summary, source: { kind: "trace" } }, [], 0)).toBeUndefined();
    expect(baseOfRun({ source }, [], 0)).toBeUndefined();
  });
});
