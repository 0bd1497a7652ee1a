/** What the run view says of the run at a moment: its phase, clock, end and how often it draws the whole run. */
import { describe, expect, it } from "vitest";
import type { PlaybackContext } from "../session/machine.ts";
import {
  HEAVY_VIEWS_AT_MAX_EVERY_MS,
  HEAVY_VIEWS_EVERY_MS,
  heavyViewsEveryMs,
  knownEndOf,
  runPlayheadMs,
  shownPhaseOf,
} from "./runShown.ts";

const result = { endMs: 900 } as PlaybackContext["result"];

describe("what the run view shows of the run", () => {
  it("never says Finished before the views drew the end: a live run is still playing, a trace loading", () => {
    expect(shownPhaseOf("finished", false, true)).toBe("playing");
    expect(shownPhaseOf("finished", false, false)).toBe("loading");
    expect(shownPhaseOf("finished", true, true)).toBe("finished");
    expect(shownPhaseOf("paused", false, true)).toBe("paused");
  });

  it("the clock at the end is where the run ended, before it the session's playhead, else the start", () => {
    expect(runPlayheadMs(true, { result, progress: { playheadMs: 1000 } as PlaybackContext["progress"] }, 0)).toBe(900);
    expect(runPlayheadMs(false, { result, progress: { playheadMs: 500 } as PlaybackContext["progress"] }, 0)).toBe(500);
    expect(runPlayheadMs(false, {}, 7)).toBe(7);
  });

  it("the end is known after a jump back, or from an opened trace's result; a live run's result alone is not", () => {
    expect(knownEndOf({ knownEndMs: 800 })).toBe(800);
    expect(knownEndOf({ source: { kind: "trace" }, result })).toBe(900);
    expect(knownEndOf({ source: { kind: "scenario" } as PlaybackContext["source"], result })).toBeUndefined();
  });

  it("the whole-run views follow a play a few times a second; at max, a jump or run-to-the-end once a second", () => {
    expect(heavyViewsEveryMs({ speed: 3600, drive: { kind: "play" } })).toBe(HEAVY_VIEWS_EVERY_MS);
    expect(heavyViewsEveryMs({ speed: 3600 })).toBe(HEAVY_VIEWS_EVERY_MS);
    expect(heavyViewsEveryMs({ speed: "max", drive: { kind: "play" } })).toBe(HEAVY_VIEWS_AT_MAX_EVERY_MS);
    expect(heavyViewsEveryMs({ speed: 60, drive: { kind: "jump", toMs: 5 } })).toBe(HEAVY_VIEWS_AT_MAX_EVERY_MS);
    expect(heavyViewsEveryMs({ speed: 60, drive: { kind: "finish" } })).toBe(HEAVY_VIEWS_AT_MAX_EVERY_MS);
  });
});
