/**
 * Running a sweep (note 0066) on real runs: each point is the run `mailscope
 * run` makes (the same trace hash), the boundary where a recipient's outcome
 * changes (STATE-3: the hand-off once an attempt is at or after the fallback
 * window's end), distributions over seeds (RETRY-3's jitter), refinement by
 * bisection, a point whose scenario does not validate, and the pool that runs
 * them.
 */
import { describe, expect, it } from "vitest";
import downText from "../../scenarios/receiver-down-past-fallback-window.yaml?raw";
import jitterText from "../../scenarios/gap-G16-jitter-on.yaml?raw";
import { traceHash } from "../trace/exportJson.ts";
import { runScenarioText } from "./runScenario.ts";
import { inThisRealm } from "./runHere.ts";
import { poolOf, type PoolWorker } from "./runPool.ts";
import { distribution, findBoundaries, runSweep, summarize, type PointRun, type SweepResult } from "./sweep.ts";
import { planSweep, pointScenarios } from "./sweepPlan.ts";
import { handleWorkerRequest, type WorkerReply, type WorkerRequest } from "./worker.ts";

const FILE = "scenarios/receiver-down-past-fallback-window.yaml";
const TEXT = downText;

async function sweep(
  varies: Record<string, string>,
  options: { seeds?: (number | string)[]; refine?: { resolution: number; kind: "duration" | "number" } } = {},
  text = TEXT,
): Promise<SweepResult> {
  const planned = planSweep(
    text,
    Object.entries(varies).map(([path, values]) => ({ path, values })),
    options.seeds,
  );
  if (!planned.ok) throw new Error(planned.errors.map((e) => e.message).join("\n"));
  return runSweep(planned.plan, {
    text,
    file: FILE,
    pool: inThisRealm(),
    ...(options.refine !== undefined && { refine: options.refine }),
  });
}

const MIN = 60_000;

describe("a sweep of receiver-down-past-fallback-window", () => {
  it("STATE-3: the outage's end against the 2 h window: accepted up to 2h, then smtp at the 8th attempt; one boundary", async () => {
    const result = await sweep({ "faults.network[b-down].until": "1h..3h/30m" });
    expect(result.points.map((p) => `${p.point.values[0]?.text} ${p.recipients[0]?.mode}`)).toEqual([
      "1h accepted",
      "1h30m accepted",
      "2h accepted",
      "2h30m smtp",
      "3h smtp",
    ]);
    const smtp = result.points[3]?.recipients[0];
    expect(smtp).toMatchObject({ outcomeText: "smtp (fallback)", rule: "STATE-3", counts: { smtp: 1 } });
    expect(smtp?.time).toEqual({ n: 1, min: 123 * MIN, median: 123 * MIN, p90: 123 * MIN, max: 123 * MIN });
    expect(smtp?.attempts?.median).toBe(8);
    expect(smtp?.posts?.median).toBe(0);
    expect(result.boundaries.map((b) => b.text)).toEqual(["boundary between 2h and 2h30m: accepted → smtp"]);
    expect(result.runs).toBe(5);
    expect(result.passed).toBe(true);
  });

  it("each point is the run mailscope run makes of that scenario: the same trace hash", async () => {
    const result = await sweep({ "faults.network[b-down].until": "2h30m", "G16.fallback-window": "3h" });
    const run = result.points[0]?.runs[0];
    const scenario = pointScenarios(TEXT)(result.plan.axes, result.points[0]?.point.values ?? []);
    const direct = await runScenarioText(scenario.text, { file: FILE, readings: scenario.settings });
    if (!direct.ok || run?.ok !== true) throw new Error("no run");
    expect(run.hash).toBe(await traceHash(direct.run.trace));
    expect(run.outcomes[0]).toMatchObject({ outcome: "accepted", atMs: 183 * MIN });
  });

  it("--refine 1m bisects the boundary down to a minute (each step a run): the hand-off starts with an outage past 2h03m", async () => {
    const result = await sweep(
      { "faults.network[b-down].until": "2h..2h30m/30m" },
      { refine: { resolution: MIN, kind: "duration" } },
    );
    const refined = result.boundaries[0]?.refined;
    expect(refined).toMatchObject({ from: { text: "2h3m" }, to: { text: "2h4m" }, before: "accepted", after: "smtp" });
    expect(refined?.text).toBe("refined: between 2h3m and 2h4m: accepted → smtp (5 more runs, to 1m)");
    expect(result.runs).toBe(2 + (refined?.runs ?? 0));
  });

  it("a grid of outage × window: boundaries along each axis, each naming the value held", async () => {
    const result = await sweep({ "faults.network[b-down].until": "1h30m,2h30m", "G16.fallback-window": "1h,2h" });
    expect(result.boundaries.map((b) => b.text)).toEqual([
      "boundary between 1h30m and 2h30m (faults.network[b-down].until; G16.fallback-window 2h): accepted → smtp",
      "boundary between 1h and 2h (G16.fallback-window; faults.network[b-down].until 1h30m): smtp → accepted",
    ]);
  });

  it("a point whose scenario does not validate is that point's error, not the sweep's; no boundary to it", async () => {
    const result = await sweep({ "G16.fallback-window": "30m,1h" });
    const [bad, good] = result.points;
    expect(bad?.runs[0]).toMatchObject({
      ok: false,
      error: expect.stringMatching(/G16: fallback-window is 30m; it must be within 1h and 4h \(RETRY-5\)/),
    });
    expect(bad?.recipients).toEqual([]);
    expect(good?.recipients[0]?.mode).toBe("smtp");
    expect(result.boundaries).toEqual([]);
    expect(result.passed).toBe(false);
  });

  it("RETRY-5.max and the window as a grid: a 6 h window runs where the bounds allow it", async () => {
    const result = await sweep({ "RETRY-5.max": "4h,8h", "G16.fallback-window": "6h" });
    expect(result.points.map((p) => (p.runs[0]?.ok ? p.recipients[0]?.mode : "error"))).toEqual(["error", "accepted"]);
  });
});

describe("seeds: distributions (RETRY-3's jitter)", () => {
  it("every point under each seed; the share of each outcome, and min, median, p90, max of the time", async () => {
    const result = await sweep({ "G16.fallback-window": "2h" }, { seeds: [1, 2, 3, 4, 5, 6] }, jitterText);
    const point = result.points[0];
    expect(point?.runs.map((r) => r.seed)).toEqual([1, 2, 3, 4, 5, 6]);
    const carol = point?.recipients.find((r) => r.recipient === "carol@c.example");
    const times = (point?.runs ?? []).flatMap((r) =>
      r.ok ? r.outcomes.filter((o) => o.recipient === "carol@c.example").map((o) => o.atMs ?? 0) : [],
    );
    expect(carol?.time).toEqual(distribution(times));
    expect(Object.values(carol?.counts ?? {}).reduce((a, b) => a + b, 0)).toBe(6);
  });

  it("nearest-rank quantiles; the most frequent outcome decides a boundary, ties to the earlier outcome", () => {
    expect(distribution([5, 1, 4, 2, 3])).toEqual({ n: 5, min: 1, median: 3, p90: 5, max: 5 });
    expect(distribution([10, 20])).toEqual({ n: 2, min: 10, median: 10, p90: 20, max: 20 });
    const run = (outcome: string): PointRun => ({
      ok: true,
      hash: "",
      passed: true,
      invariantsFailed: [],
      expectationsFailed: [],
      events: 0,
      outcomes: [{ message: "m1", recipient: "bob@b.example", outcome, outcomeText: outcome, attempts: 1, posts: 1 }],
    });
    const tie = summarize([run("smtp"), run("accepted")])[0];
    expect(tie).toMatchObject({ counts: { accepted: 1, smtp: 1 }, mode: "accepted" });
    const plan = planSweep(TEXT, [{ path: "G16.fallback-window", values: "1h,2h" }], [1, 2, 3]);
    if (!plan.ok) throw new Error("plan");
    const [p, q] = plan.plan.points;
    const boundaries = findBoundaries(plan.plan, [
      { point: p!, runs: [], recipients: summarize([run("smtp"), run("smtp"), run("accepted")]) },
      { point: q!, runs: [], recipients: summarize([run("accepted"), run("accepted"), run("accepted")]) },
    ]);
    expect(boundaries.map((b) => b.text)).toEqual(["boundary between 1h and 2h: smtp (67 %) → accepted (100 %)"]);
  });
});

describe("the pool: one run at a time per worker, the next to the first free", () => {
  it("hands requests to free workers in order, and a failed worker's run comes back as an error, not a hang", async () => {
    const log: string[] = [];
    const fake = (name: string, fail = false): PoolWorker => {
      let reply: (r: WorkerReply) => void = () => {};
      let failure: (m: string) => void = () => {};
      return {
        post(request: WorkerRequest) {
          log.push(`${name} ${String(request.id)}`);
          if (fail) queueMicrotask(() => failure("it crashed"));
          else void handleWorkerRequest({ ...request, text: "not: a scenario" }).then(reply);
        },
        listen(r, f) {
          reply = r;
          failure = f;
        },
        terminate() {
          log.push(`${name} ended`);
        },
      };
    };
    const pool = poolOf([fake("a"), fake("b", true)]);
    const replies = await Promise.all([1, 2, 3, 4].map((id) => pool.run({ type: "run", id, text: "" })));
    expect(replies.map((r) => r.type)).toEqual(["invalid", "error", "invalid", "invalid"]);
    expect(replies[1]).toMatchObject({ id: 2, message: "the simulation worker failed: it crashed" });
    expect(log.slice(0, 2)).toEqual(["a 1", "b 2"]);
    expect(log.filter((l) => l.startsWith("a "))).toEqual(["a 1", "a 3", "a 4"]);
    pool.close();
    expect(log.slice(-2)).toEqual(["a ended", "b ended"]);
    expect(await pool.run({ type: "run", id: 5, text: "" })).toMatchObject({
      type: "error",
      message: "the pool is closed",
    });
  });

  it("a worker still starting is given nothing (the others run everything meanwhile); one of capacity 2 holds two", async () => {
    const log: string[] = [];
    const worker = (name: string, extra: Partial<Pick<PoolWorker, "ready" | "capacity">> = {}) => {
      let reply: (r: WorkerReply) => void = () => {};
      const held: number[] = [];
      const w: PoolWorker & { answer(): void } = {
        ...extra,
        post(request: WorkerRequest) {
          log.push(`${name} ${String(request.id)}`);
          held.push(Number(request.id));
        },
        listen(r) {
          reply = r;
        },
        terminate() {},
        answer() {
          const id = held.shift();
          if (id !== undefined) reply({ type: "invalid", id, errors: [] });
        },
      };
      return w;
    };
    let started: () => void = () => {};
    const here = worker("here");
    const thread = worker("thread", { ready: new Promise((r) => (started = r)), capacity: 2 });
    const pool = poolOf([here, thread]);
    const replies = [1, 2, 3, 4, 5].map((id) => pool.run({ type: "run", id, text: "" }));
    await Promise.resolve();
    expect(log).toEqual(["here 1"]);
    here.answer();
    expect(log).toEqual(["here 1", "here 2"]);
    started();
    await Promise.resolve();
    await Promise.resolve();
    // Ready: it takes two at once; the one free takes the next.
    expect(log).toEqual(["here 1", "here 2", "thread 3", "thread 4"]);
    thread.answer();
    expect(log.at(-1)).toBe("thread 5");
    here.answer();
    thread.answer();
    thread.answer();
    expect((await Promise.all(replies)).map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    pool.close();
  });
});
