import { describe, expect, it } from "vitest";
import {
  inWindow,
  latencySchema,
  matchGlob,
  parseDurationMs,
  resolveTimeMs,
  resolveWindow,
  sampleLatencyMs,
  timeOffsetSchema,
} from "./faultScope.ts";
import { createRandom } from "./random.ts";

const START = Date.UTC(2026, 0, 1);

describe("fault scope: times relative to the start of the run", () => {
  it("parses durations with units ms s m h d w, combined, and bare numbers as ms", () => {
    expect(parseDurationMs("500ms")).toBe(500);
    expect(parseDurationMs("90s")).toBe(90_000);
    expect(parseDurationMs("1h30m")).toBe(5_400_000);
    expect(parseDurationMs("1.5h")).toBe(5_400_000);
    expect(parseDurationMs("2d")).toBe(172_800_000);
    expect(parseDurationMs("1w")).toBe(604_800_000);
    expect(parseDurationMs("250")).toBe(250);
    for (const bad of ["", "h", "1x", "1h 30m", "-1s", "1h30"]) expect(parseDurationMs(bad)).toBeUndefined();
  });

  it("resolves numbers and durations from the start, ISO times as absolute", () => {
    expect(resolveTimeMs(1000, START)).toBe(START + 1000);
    expect(resolveTimeMs("1h", START)).toBe(START + 3_600_000);
    expect(resolveTimeMs("2026-01-01T02:00:00Z", START)).toBe(START + 7_200_000);
    expect(timeOffsetSchema.safeParse("2026-01-01T02:00:00+01:00").success).toBe(true);
    expect(timeOffsetSchema.safeParse("tomorrow").success).toBe(false);
    expect(timeOffsetSchema.safeParse(-5).success).toBe(false);
  });

  it("a window includes its start and excludes its end; open ends are unbounded", () => {
    const w = resolveWindow({ from: "1h", until: "2h" }, START);
    expect(inWindow(w, START + 3_599_999)).toBe(false);
    expect(inWindow(w, START + 3_600_000)).toBe(true);
    expect(inWindow(w, START + 7_200_000)).toBe(false);
    const open = resolveWindow({}, START);
    expect(inWindow(open, 0)).toBe(true);
    expect(inWindow(open, 8.64e15)).toBe(true);
  });
});

describe("fault scope: names and latency", () => {
  it("matches globs over hosts and paths, case-insensitively, with regex characters taken literally", () => {
    expect(matchGlob("*.b.example", "mx.b.example")).toBe(true);
    expect(matchGlob("*.b.example", "b.example")).toBe(false);
    expect(matchGlob("/v1/*", "/v1/messages")).toBe(true);
    expect(matchGlob("mx.b.example", "MX.B.EXAMPLE")).toBe(true);
    expect(matchGlob("a.example", "aXexample")).toBe(false);
    expect(matchGlob("(x)+", "(x)+")).toBe(true);
  });

  it("samples latencies in whole ms, clamping a normal at its floor", () => {
    const r = createRandom(1);
    expect(sampleLatencyMs(12.4, r)).toBe(12);
    expect(sampleLatencyMs({ distribution: "fixed", ms: 7 }, r)).toBe(7);
    for (let i = 0; i < 200; i++) {
      const u = sampleLatencyMs({ distribution: "uniform", minMs: 10, maxMs: 20 }, r);
      expect(u >= 10 && u <= 20 && Number.isInteger(u)).toBe(true);
      expect(sampleLatencyMs({ distribution: "normal", meanMs: 5, stddevMs: 50, minMs: 1 }, r)).toBeGreaterThanOrEqual(
        1,
      );
      expect(sampleLatencyMs({ distribution: "exponential", meanMs: 30 }, r)).toBeGreaterThanOrEqual(0);
    }
    expect(latencySchema.safeParse({ distribution: "uniform", minMs: 1 }).success).toBe(false);
  });

  it("samples an exponential latency with its mean, its spread (standard deviation = mean) and its tail", () => {
    const r = createRandom(20261125);
    const meanMs = 1000;
    const n = 20_000;
    const xs = Array.from({ length: n }, () => sampleLatencyMs({ distribution: "exponential", meanMs }, r));
    const mean = xs.reduce((a, x) => a + x, 0) / n;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
    // Standard errors over 20 000 draws: about 0.7 % for the mean and 1 % for the deviation; the bounds are 4 to 5 of them.
    expect(mean).toBeGreaterThan(970);
    expect(mean).toBeLessThan(1030);
    expect(sd).toBeGreaterThan(950);
    expect(sd).toBeLessThan(1050);
    // P(X > mean) = e^-1, P(X > 3 · mean) = e^-3, median = mean · ln 2.
    const share = (pick: (x: number) => boolean) => xs.filter(pick).length / n;
    expect(share((x) => x > meanMs)).toBeCloseTo(Math.exp(-1), 1);
    expect(Math.abs(share((x) => x > 3 * meanMs) - Math.exp(-3))).toBeLessThan(0.01);
    expect(Math.abs(share((x) => x <= meanMs * Math.LN2) - 0.5)).toBeLessThan(0.02);
    expect(xs.every((x) => Number.isInteger(x) && x >= 0)).toBe(true);
  });
});
