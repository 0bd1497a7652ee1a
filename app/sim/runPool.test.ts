/**
 * The pool's choices (note 0155): how many workers a sweep's runs
 * are worth, as a pure function of the runs left, what a run costs here and
 * what a worker's start costs; and a pool that takes workers while it runs,
 * feeds each once ready, and counts the workers it used.
 */
import { describe, expect, it } from "vitest";
import { poolOf, workersWorth, type PoolWorker } from "./runPool.ts";
import type { WorkerReply, WorkerRequest } from "./worker.ts";

describe("how many workers the runs left are worth", () => {
  const cores = { workers: 1, most: 2 };
  it("the bench's 44-point sweep, warm runs of 6 ms against a 250 ms thread start: this thread alone", () => {
    expect(workersWorth({ runsLeft: 43, msPerRun: 6, startMs: 250, ...cores })).toBe(1);
  });

  it("the same runs on threads of the TypeScript sources (a 1 s start): alone too", () => {
    expect(workersWorth({ runsLeft: 43, msPerRun: 6, startMs: 1000, ...cores })).toBe(1);
  });

  it("a thread is worth starting once the work left is twice its start", () => {
    expect(workersWorth({ runsLeft: 100, msPerRun: 4.99, startMs: 250, ...cores })).toBe(1);
    expect(workersWorth({ runsLeft: 100, msPerRun: 5, startMs: 250, ...cores })).toBe(2);
  });

  it("a large sweep gets every worker: 10,000 runs on 8 cores, 440 runs on 2", () => {
    expect(workersWorth({ runsLeft: 10_000, msPerRun: 6, startMs: 250, workers: 1, most: 8 })).toBe(8);
    expect(workersWorth({ runsLeft: 439, msPerRun: 6, startMs: 250, ...cores })).toBe(2);
    // A few long runs too: 3 points of 2 s each.
    expect(workersWorth({ runsLeft: 2, msPerRun: 2000, startMs: 250, workers: 1, most: 3 })).toBe(3);
  });

  it("in between, as many as each take at least half a start's worth of runs", () => {
    // 1 s left after a 250 ms start: (1000 − 250) / n ≥ 125 → n ≤ 6.
    expect(workersWorth({ runsLeft: 100, msPerRun: 10, startMs: 250, workers: 1, most: 16 })).toBe(6);
  });

  it("never fewer than the pool has, never more than the most; unknown sizes get every worker", () => {
    expect(workersWorth({ runsLeft: 1, msPerRun: 1, startMs: 250, workers: 2, most: 4 })).toBe(2);
    expect(workersWorth({ runsLeft: 0, msPerRun: 6, startMs: 250, workers: 1, most: 4 })).toBe(1);
    expect(workersWorth({ runsLeft: Number.POSITIVE_INFINITY, msPerRun: 6, startMs: 250, workers: 1, most: 4 })).toBe(
      4,
    );
    expect(workersWorth({ runsLeft: 10, msPerRun: 6, startMs: 0, workers: 1, most: 4 })).toBe(4);
  });
});

/** A worker that answers each request when told to, and says when it is ready. */
function fakeWorker(readyNow = true) {
  const posted: WorkerRequest[] = [];
  let reply: (r: WorkerReply) => void = () => undefined;
  let ready: () => void = () => undefined;
  const worker: PoolWorker = {
    ...(!readyNow && { ready: new Promise<void>((resolve) => (ready = resolve)) }),
    post: (request) => posted.push(request),
    listen: (onReply) => (reply = onReply),
    terminate: () => undefined,
  };
  const answer = (): void => {
    const request = posted.shift();
    if (request !== undefined)
      reply({ type: "error", ...(request.id !== undefined && { id: request.id }), message: "x" });
  };
  return { worker, posted, answer, ready: () => ready() };
}

const request = (id: number): WorkerRequest => ({ type: "run", id, text: "", file: "a.yaml" });
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("a pool that grows", () => {
  it("a worker added while it runs is fed once ready; the workers used are those that ran a request", async () => {
    const first = fakeWorker();
    const pool = poolOf([first.worker], 2);
    expect(pool.size).toBe(2);
    const replies = [1, 2, 3].map((id) => pool.run(request(id)));
    expect(first.posted).toHaveLength(1);
    expect(pool.used).toBe(1);
    const second = fakeWorker(false);
    pool.add(second.worker);
    await tick();
    expect(second.posted).toHaveLength(0);
    second.ready();
    await tick();
    expect(second.posted).toHaveLength(1);
    expect(pool.used).toBe(2);
    first.answer();
    second.answer();
    await tick();
    first.answer();
    expect((await Promise.all(replies)).map((r) => r.type)).toEqual(["error", "error", "error"]);
    pool.close();
  });

  it("a worker added after close is ended, not fed", () => {
    const pool = poolOf([fakeWorker().worker]);
    pool.close();
    let ended = false;
    pool.add({ ...fakeWorker().worker, terminate: () => (ended = true) });
    expect(ended).toBe(true);
  });
});
