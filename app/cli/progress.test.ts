/**
 * Long runs print progress on stderr. The clock is the CliIo's, so
 * these tests move it themselves: nothing here waits or reads wall time.
 */
import { describe, expect, it } from "vitest";
import type { CliIo } from "./io.ts";
import { formatProgress, progressPrinter, progressWanted } from "./progress.ts";
import { runCommandAction } from "./run.ts";

/** An io whose clock moves `stepMs` each time it is read. */
function fakeIo(stepMs: number, errIsTty = false): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  let t = 0;
  return {
    io: { out: (l) => out.push(l), err: (l) => err.push(l), now: () => (t += stepMs), errIsTty },
    out,
    err,
  };
}

const P = { virtualMs: 93_784_000, horizonMs: 6 * 86_400_000, events: 120_345, messagesDone: 5012, messages: 100_000 };

describe("progress lines", () => {
  it("say where virtual time is, against the horizon, the events and the messages done", () => {
    expect(formatProgress(P)).toBe(
      "progress: +1d 2:03:04 of +6d 0:00:00 virtual, 120345 events, 5012 of 100000 messages done",
    );
    expect(formatProgress({ ...P, virtualMs: 61_500 }, "scenarios/a.yaml")).toBe(
      "progress scenarios/a.yaml: +0:01:01 of +6d 0:00:00 virtual, 120345 events, 5012 of 100000 messages done",
    );
  });

  it("come at most once a second of the io's clock, the first a second after the start", () => {
    const { io, err } = fakeIo(400);
    const report = progressPrinter(io); // the clock reads 400 when it is made
    for (let i = 0; i < 10; i++) report({ ...P, events: i }); // it reads 800, 1200, 1600 (a second on: printed), …
    expect(err.map((l) => /(\d+) events/.exec(l)?.[1])).toEqual(["2", "5", "8"]);
  });

  it("are on with --progress, off with --no-progress, else on when stderr is a terminal", () => {
    expect(progressWanted(true, fakeIo(1).io)).toBe(true);
    expect(progressWanted(false, fakeIo(1, true).io)).toBe(false);
    expect(progressWanted(undefined, fakeIo(1, true).io)).toBe(true);
    expect(progressWanted(undefined, fakeIo(1, false).io)).toBe(false);
  });

  it("mailscope run prints them on stderr with --progress, and none without on a pipe", async () => {
    const slow = fakeIo(5000);
    expect(await runCommandAction("scenarios/happy-path.yaml", { progress: true }, slow.io)).toBe(0);
    expect(slow.err).toEqual([
      expect.stringMatching(/^progress: \+[\dd :]+ of \+12d 0:00:\d\d virtual, \d+ events, 1 of 1 messages done$/),
    ]);
    expect(slow.out.at(-1)).toMatch(/^passed: /);
    const piped = fakeIo(5000);
    expect(await runCommandAction("scenarios/happy-path.yaml", {}, piped.io)).toBe(0);
    expect(piped.err).toEqual([]);
  });
});
