/**
 * `mailscope sweep` (note 0066): the table with its boundary row, distributions
 * with --seeds, --refine, --json and --csv, the points run in worker threads
 * giving what this thread gives, the exit codes (0 every run held its
 * invariants, 1 not, 2 bad input) and bad input named at its option.
 */
import { describe, expect, it } from "vitest";
import { main } from "./main.ts";
import { parseResolution, sweepCommandAction, type SweepOptions } from "./sweep.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

const DOWN = "scenarios/receiver-down-past-fallback-window.yaml";

async function sweep(options: SweepOptions, file = DOWN) {
  const { io, out, err } = capture();
  const code = await sweepCommandAction(file, { workers: "1", ...options }, io);
  return { code, out, err };
}

describe("mailscope sweep", () => {
  it("STATE-3: a row per point, and the row where the outcome changes says so; exit 0", async () => {
    const { code, out, err } = await sweep({ vary: ["faults.network[b-down].until=1h30m..3h/30m"] });
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out[0]).toBe(
      `receiver-down-past-fallback-window (${DOWN}): 4 points (faults.network[b-down].until 4 values), 1 run each; 1 worker`,
    );
    expect(out.slice(2, 9)).toEqual([
      "faults.network[b-down].until  outcome          at        attempts  POSTs  checks",
      "1h30m                         accepted         +2:03:00  8         1      invariants ok · expectations not met",
      "2h                            accepted         +2:03:00  8         1      invariants ok · expectations not met",
      "  ↳ boundary between 2h and 2h30m: accepted → smtp",
      "2h30m                         smtp (fallback)  +2:03:00  8         0      ok",
      "3h                            smtp (fallback)  +2:03:00  8         0      ok",
      "",
    ]);
    expect(out.at(-1)).toMatch(/^passed: 4 runs in \d+\.\d\d s; 1 boundary; every run held its invariants$/);
  });

  it("--refine 1m: the boundary bisected to the minute; --json has it, and each run's outcomes", async () => {
    const { code, out } = await sweep({ vary: ["faults.network[b-down].until=2h,2h30m"], refine: "1m", json: true });
    expect(code).toBe(0);
    const json = JSON.parse(out.join("\n")) as {
      axes: unknown[];
      points: { values: Record<string, string>; recipients: { outcome: string }[]; runs: { outcomes: unknown[] }[] }[];
      boundaries: { from: string; to: string; before: string; after: string; refined: { from: string; to: string } }[];
      runs: number;
    };
    expect(json.axes).toEqual([
      { path: "faults.network[b-down].until", kind: "time", target: "field", values: ["2h", "2h30m"] },
    ]);
    expect(json.points.map((p) => [p.values["faults.network[b-down].until"], p.recipients[0]?.outcome])).toEqual([
      ["2h", "accepted"],
      ["2h30m", "smtp"],
    ]);
    expect(json.points[1]?.runs[0]?.outcomes[0]).toMatchObject({ outcome: "smtp", at: "+2:03:00", attempts: 8 });
    expect(json.boundaries[0]).toMatchObject({
      from: "2h",
      to: "2h30m",
      before: "accepted",
      after: "smtp",
      refined: { from: "2h3m", to: "2h4m" },
    });
    expect(json.runs).toBe(7);
  });

  it("--seeds: distributions per point (shares, min … max, median, p90) and one CSV row per run", async () => {
    const table = await sweep({ vary: ["G16.fallback-window=2h"], seeds: "1..4" }, "scenarios/gap-G16-jitter-on.yaml");
    expect(table.code).toBe(0);
    expect(table.out[0]).toMatch(/: 1 point \(G16\.fallback-window 1 value\), 4 seeds each; 1 worker$/);
    expect(table.out[2]).toMatch(/^G16\.fallback-window +recipient +outcome +at +attempts +POSTs +checks$/);
    expect(table.out[3]).toMatch(
      /^2h +m1 bob@b\.example +\S.* \+\d:\d\d:\d\d … \+\d:\d\d:\d\d \(median \+\d:\d\d:\d\d, p90 \+\d:\d\d:\d\d\)/,
    );
    const csv = await sweep(
      { vary: ["G16.fallback-window=2h"], seeds: "1..4", csv: true },
      "scenarios/gap-G16-jitter-on.yaml",
    );
    expect(csv.out[0]).toBe(
      "point,G16.fallback-window,seed,message,recipient,outcome,outcome_text,at_ms,at,attempts,posts,rule,invariants_failed,expectations_failed,error",
    );
    expect(csv.out).toHaveLength(1 + 4 * 3);
    expect(csv.out[1]).toMatch(/^0,2h,1,m1,bob@b\.example,(smtp|accepted),/);
  });

  it("with up to 3 workers the points run as in one: the same hashes; it says how many workers it used", async () => {
    const options = { vary: ["faults.network[b-down].until=1h,2h30m", "G16.fallback-window=1h..3h/1h"], json: true };
    const one = await sweep({ ...options, workers: "1" });
    const three = await sweep({ ...options, workers: "3" });
    const hashes = (out: string[]) =>
      (JSON.parse(out.join("\n")) as { points: { runs: { hash: string }[] }[] }).points.map((p) => p.runs[0]?.hash);
    expect(three.code).toBe(0);
    expect(hashes(three.out)).toEqual(hashes(one.out));
    expect(hashes(one.out)).toHaveLength(6);
    // Threads start only when the runs left are worth them (note 0155): 6 short runs may end in this thread.
    const used = (JSON.parse(three.out.join("\n")) as { workers: number }).workers;
    expect(used).toBeGreaterThanOrEqual(1);
    expect(used).toBeLessThanOrEqual(3);
  });

  it("a point that fails validation is that point's error: the sweep goes on and exits 1", async () => {
    const { code, out } = await sweep({ vary: ["G16.fallback-window=30m,1h"] });
    expect(code).toBe(1);
    expect(out[3]).toBe(
      "30m                  —                —         —         —      error: (scenario): G16: fallback-window is 30m; it must be within 1h and 4h (RETRY-5)",
    );
    expect(out.at(-1)).toMatch(/^FAILED: 2 runs in .*; 1 run failed or broke an invariant$/);
  });

  it("bad input: a located error naming the valid paths or the limit, exit 2", async () => {
    const unknown = await sweep({ vary: ["faults.network[b-down].untill=1h"] });
    expect(unknown.code).toBe(2);
    expect(unknown.err[0]).toMatch(
      /^mailscope sweep: --vary faults\.network\[b-down\]\.untill: faults\.network\[b-down\]\.untill is not in the scenario; .*Valid paths: the scenario's numbers and durations: seed, messages\[m1\]\.at, faults\.network\[b-down\]\.until; gap readings: .*; the draft's numbers: RETRY-1, /,
    );
    const cases: [SweepOptions, RegExp][] = [
      [{ vary: ["faults.network[b-down].until"] }, /--vary takes <path>=<values>/],
      [{ vary: ["faults.network[b-down].until=6h..1h/30m"] }, /the range "6h\.\.1h\/30m" is inverted/],
      [
        { vary: ["faults.network[b-down].until=1h..2h/1m", "G16.fallback-window=1h..4h/1m"] },
        /^mailscope sweep: --vary: the grid has 61 × 181 = 11041 points; a sweep has at most 10000$/,
      ],
      [{ vary: ["G16.fallback-window=1h"], seeds: "x,,y" }, /--seeds takes a range/],
      [{ vary: ["G16.fallback-window=1h"], set: ["RETRY-2.cap=5"] }, /--set RETRY-2\.cap: .*with a unit/],
      [{ vary: ["G16.fallback-window=1h"], refine: "soon" }, /--refine takes a resolution/],
      [{ vary: ["G16.fallback-window=1h"], workers: "0" }, /--workers takes a whole number/],
      [{ vary: ["G16.fallback-window=1h"], json: true, csv: true }, /--json and --csv: give one/],
    ];
    for (const [options, message] of cases) {
      const r = await sweep(options);
      expect(r.code, JSON.stringify(options)).toBe(2);
      expect(r.err.join("\n")).toMatch(message);
    }
    expect(parseResolution("0.5")).toEqual({ ok: true, value: { resolution: 0.5, kind: "number" } });
    expect(parseResolution("90s")).toEqual({ ok: true, value: { resolution: 90_000, kind: "duration" } });
  });

  it("is a command of mailscope, with its help; no --vary is a usage error (exit 2)", async () => {
    expect(await main(["sweep", DOWN])).toBe(2);
    expect(await main(["sweep", "no-such-file.yaml", "--vary", "x=1"])).toBe(2);
  });
});
