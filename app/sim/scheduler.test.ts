import { describe, expect, it } from "vitest";
import { subtle } from "../protocol/webCrypto.ts";
import { createActor, createMachine } from "xstate";
import {
  createScheduler,
  DEFAULT_START_MS,
  hostMacrotask,
  messageChannelMacrotask,
  SimulationError,
  type HostTimers,
  type PlaybackProgress,
} from "./scheduler.ts";
import { maxOf } from "../protocol/lists.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

describe("scheduler: ordering (ARCHITECTURE Determinism: events by virtual time, then sequence)", () => {
  it("starts at 2026-01-01T00:00:00Z unless told otherwise", () => {
    expect(createScheduler().now()).toBe(Date.parse("2026-01-01T00:00:00Z"));
    expect(DEFAULT_START_MS).toBe(Date.parse("2026-01-01T00:00:00Z"));
    expect(createScheduler({ startMs: 1000 }).now()).toBe(1000);
  });

  it("runs earlier times first and, at the same time, in the order scheduled", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.at(20, () => log.push("c@20"));
    s.at(10, () => log.push("a@10"));
    s.at(10, () => log.push("b@10"));
    s.after(0, () => log.push("now"));
    const result = await s.run();
    expect(log).toEqual(["now", "a@10", "b@10", "c@20"]);
    expect(result).toEqual({ reason: "idle", nowMs: 20, events: 4 });
  });

  it("gives the clock the event's time, and lets events schedule more events", async () => {
    const s = createScheduler({ startMs: 0 });
    const seen: number[] = [];
    s.clock.setTimeout(() => {
      seen.push(s.clock.now());
      s.clock.setTimeout(() => seen.push(s.clock.now()), 5);
      s.clock.setTimeout(() => seen.push(-s.clock.now()), -3); // a negative delay means now
    }, 100);
    await s.run();
    expect(seen).toEqual([100, -100, 105]);
  });

  it("clearTimeout cancels an event; cancelling twice or an unknown id is false", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    const id = s.clock.setTimeout(() => log.push("cancelled"), 10);
    s.after(20, () => log.push("kept"));
    expect(s.pendingEvents).toBe(2);
    s.clock.clearTimeout(id);
    expect(s.pendingEvents).toBe(1);
    expect(s.cancel(id)).toBe(false);
    expect(s.cancel("nope")).toBe(false);
    await s.run();
    expect(log).toEqual(["kept"]);
  });

  it("keeps (time, sequence) order over many random insertions (heap check)", async () => {
    const s = createScheduler({ startMs: 0, yieldToHost: messageChannelMacrotask });
    const order: [number, number][] = [];
    // A fixed pseudo-random pattern of times, with many ties.
    for (let i = 0; i < 500; i++) {
      const t = (i * 7919) % 37;
      s.at(t, () => order.push([t, i]));
    }
    await s.run();
    const sorted = [...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(order).toEqual(sorted);
  });
});

describe("scheduler: run to a time, step, pause and resume", () => {
  it("runUntil runs the events at or before the time and sets the clock to it", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: number[] = [];
    for (const t of [10, 50, 50, 51, 200]) s.at(t, () => log.push(t));
    const result = await s.runUntil(50);
    expect(log).toEqual([10, 50, 50]);
    expect(result).toEqual({ reason: "until", nowMs: 50, events: 3 });
    const later = await s.runUntil(120);
    expect(later).toEqual({ reason: "until", nowMs: 120, events: 1 });
    expect(s.nextEventAtMs()).toBe(200);
  });

  it("step runs one event at a time and reports undefined at the end", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.at(5, () => log.push("a"), "first");
    s.at(7, () => log.push("b"), "second");
    expect(await s.step()).toMatchObject({ timeMs: 5, label: "first" });
    expect(log).toEqual(["a"]);
    expect(s.now()).toBe(5);
    expect(await s.step()).toMatchObject({ timeMs: 7, label: "second" });
    expect(await s.step()).toBeUndefined();
    expect(s.executedEvents).toBe(2);
  });

  it("maxEvents stops a run with reason limit", async () => {
    const s = createScheduler({ startMs: 0 });
    for (let i = 0; i < 5; i++) s.at(i, () => undefined);
    expect(await s.run({ maxEvents: 2 })).toEqual({ reason: "limit", nowMs: 1, events: 2 });
  });

  it("pause stops after the current event; resume continues the same way", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: number[] = [];
    for (let i = 1; i <= 5; i++) {
      s.at(i * 10, () => {
        log.push(i);
        if (i === 2) s.pause();
      });
    }
    const first = await s.run();
    expect(first).toEqual({ reason: "paused", nowMs: 20, events: 2 });
    expect(s.state).toBe("paused");
    expect(log).toEqual([1, 2]);
    const rest = await s.resume();
    expect(rest).toEqual({ reason: "idle", nowMs: 50, events: 3 });
    expect(log).toEqual([1, 2, 3, 4, 5]);
    expect(s.state).toBe("idle");
    await expect(s.resume()).rejects.toThrow(/nothing is paused/);
  });

  it("refuses a second run while one is going", async () => {
    const s = createScheduler({ startMs: 0 });
    s.at(1, () => undefined);
    const running = s.run();
    await expect(s.run()).rejects.toThrow(/already running/);
    await running;
  });
});

describe("scheduler: speed (no per-second ticking)", () => {
  it("a 5-day retry chain (1 min doubling, capped at 1 h: LIM-12) runs event to event", async () => {
    let yields = 0;
    const s = createScheduler({
      yieldToHost: () => {
        yields++;
        return hostMacrotask();
      },
    });
    const start = s.now();
    let attempts = 0;
    let delayMs = MINUTE_MS;
    const attempt = (): void => {
      attempts++;
      if (s.now() - start >= 5 * DAY_MS) return;
      s.clock.setTimeout(attempt, delayMs);
      delayMs = Math.min(delayMs * 2, HOUR_MS);
    };
    s.after(0, attempt);
    const result = await s.run();
    expect(result.reason).toBe("idle");
    expect(result.nowMs - start).toBeGreaterThanOrEqual(5 * DAY_MS);
    expect(result.nowMs - start).toBeLessThan(5 * DAY_MS + HOUR_MS);
    // 7 doubling steps, then one an hour for ~5 days.
    expect(attempts).toBeGreaterThan(115);
    expect(attempts).toBeLessThan(130);
    // One host yield per event plus one when the event scheduled the next: cost follows events, not seconds.
    expect(yields).toBeLessThanOrEqual(2 * result.events + 2);
  }, 5_000);

  it("with MessageChannel yields, the same chain gives the same event times", async () => {
    const times = async (yieldToHost: () => Promise<void>): Promise<number[]> => {
      const s = createScheduler({ yieldToHost });
      const seen: number[] = [];
      let delayMs = MINUTE_MS;
      const attempt = (): void => {
        seen.push(s.now());
        if (s.now() - s.startMs >= 5 * DAY_MS) return;
        s.clock.setTimeout(attempt, delayMs);
        delayMs = Math.min(delayMs * 2, HOUR_MS);
      };
      s.after(0, attempt);
      await s.run();
      return seen;
    };
    const fast = await times(messageChannelMacrotask);
    expect(fast).toEqual(await times(hostMacrotask));
    expect(fast.length).toBeGreaterThan(115);
  }, 5_000);
});

describe("scheduler: tracked work finishes before the next event", () => {
  it("a crypto.subtle.digest started in an event completes before the next event at the same time", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.at(10, () => {
      log.push("first:start");
      void s
        .track(crypto.subtle.digest("SHA-256", new TextEncoder().encode("x".repeat(100_000))), "digest")
        .then(async (digest) => {
          log.push(`first:digest ${new Uint8Array(digest).length}`);
          // A second round of host work, started after the first settled.
          await s.track(crypto.subtle.digest("SHA-512", new Uint8Array(digest)), "digest-2");
          log.push("first:done");
        });
    });
    s.at(10, () => log.push("second"));
    await s.run();
    expect(log).toEqual(["first:start", "first:digest 32", "first:done", "second"]);
  });

  it("WebCrypto results of one event are released together, in the order the operations started", async () => {
    // A slow digest started first and a fast one started second: the host finishes
    // the fast one first, but its continuation must not run ahead of the slow one,
    // or two deliveries at one virtual instant would interleave by machine speed.
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.at(10, () => {
      void subtle.digest("SHA-512", new Uint8Array(8_000_000)).then(() => log.push("slow"));
      void subtle.digest("SHA-256", new Uint8Array(8)).then(() => log.push("fast"));
      void Promise.resolve().then(() => log.push("microtask"));
    });
    s.at(10, () => log.push("next event"));
    await s.run();
    expect(log).toEqual(["microtask", "slow", "fast", "next event"]);
  });

  it("an async event function's tracked work is awaited, and a failure fails the run with the event and time", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.at(5, async () => {
      await s.track(crypto.subtle.digest("SHA-256", new Uint8Array(8)));
      log.push("async done");
    });
    s.at(5, () => log.push("next"));
    await s.run();
    expect(log).toEqual(["async done", "next"]);

    s.at(
      7,
      () => {
        throw new Error("boom");
      },
      "exploding",
    );
    const error = await s.run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimulationError);
    expect((error as SimulationError).eventLabel).toBe("exploding");
    expect((error as SimulationError).timeMs).toBe(7);
    // The time as an offset from the run's start, as the app and `mailscope run` write times (never an ISO timestamp).
    expect((error as Error).message).toMatch(/boom.*"exploding" at \+0:00:00\.007\)$/);
  });

  it("fail() ends a run whose event never settles (a loop in zero virtual time), with that error, however it is driven", async () => {
    for (const drive of ["run", "realtime", "step"] as const) {
      const s = createScheduler({ startMs: 0 });
      let turns = 0;
      let stop = false;
      const budget = new Error("over budget");
      // Host work that goes on, one host task after another, at one virtual time: the event never settles.
      const spin = async (): Promise<void> => {
        while (!stop) {
          await s.track(new Promise((resolve) => setTimeout(resolve, 0)));
          if (++turns === 50) s.fail(budget);
        }
      };
      s.at(1, () => void spin(), "spinning");
      s.at(2, () => {}, "after");
      const run = drive === "run" ? s.run() : drive === "step" ? s.step() : s.runRealtime(Infinity);
      const error = await run.catch((e: unknown) => e);
      const at = turns;
      stop = true;
      expect(error, drive).toBe(budget);
      expect(at, drive).toBeLessThan(60);
      expect(s.state, drive).toBe("idle");
      expect(s.pendingEvents, drive).toBe(1);
    }
  });

  it("a sleep resolves on the virtual clock, in its own event", async () => {
    const s = createScheduler({ startMs: 0 });
    const log: string[] = [];
    s.after(0, async () => {
      await s.sleep(250);
      log.push(`woke at ${s.now()}`);
    });
    s.at(100, () => log.push("at 100"));
    await s.run();
    expect(log).toEqual(["at 100", "woke at 250"]);
  });

  it("tracking a promise that waits on virtual time is reported as a stall, not a hang", async () => {
    const s = createScheduler({ startMs: 0, stallMs: 0 });
    s.after(0, () => {
      void s.track(s.sleep(1000), "misused sleep");
    });
    await expect(s.run()).rejects.toThrow(/misused sleep.*did not settle/);
  });

  it("serves as XState's clock: a delayed transition fires at its virtual time", async () => {
    const s = createScheduler({ startMs: 0 });
    const machine = createMachine({
      initial: "waiting",
      states: { waiting: { after: { [MINUTE_MS]: "retrying" } }, retrying: {} },
    });
    const actor = createActor(machine, { clock: s.clock });
    const seen: [string, number][] = [];
    actor.subscribe((snapshot) => seen.push([String(snapshot.value), s.now()]));
    actor.start();
    await s.run();
    expect(seen.at(-1)).toEqual(["retrying", MINUTE_MS]);
  });
});

/** Host timers a test fires by hand, recording every wait asked for. */
function manualHost(): HostTimers & { readonly waits: number[]; fireNext(): boolean } {
  const queue: (() => void)[] = [];
  const waits: number[] = [];
  return {
    waits,
    setTimeout(fn, delayMs) {
      queue.push(fn);
      waits.push(delayMs);
      return waits.length;
    },
    fireNext() {
      const next = queue.shift();
      next?.();
      return next !== undefined;
    },
  };
}

/** Drives a playback to its end: fire host timers as they come, yielding real macrotasks in between. */
async function drive<T>(
  host: ReturnType<typeof manualHost>,
  run: Promise<T>,
  onFrame?: (frame: number) => void,
): Promise<T> {
  let done = false;
  const result = run.finally(() => {
    done = true;
  });
  for (let frame = 0; !done && frame < 10_000; frame++) {
    await hostMacrotask();
    if (host.fireNext()) onFrame?.(frame);
  }
  return result;
}

describe("scheduler: real-time playback (runRealtime) on injected host timers", () => {
  it("waits real time proportional to the virtual gaps, in frames, and reports progress", async () => {
    const host = manualHost();
    const s = createScheduler({ startMs: 0, host });
    const log: number[] = [];
    s.at(1000, () => log.push(s.now()));
    s.at(3000, () => log.push(s.now()));
    const progress: PlaybackProgress[] = [];
    const result = await drive(
      host,
      s.runRealtime(10, (p) => progress.push(p), { frameMs: 50 }),
    );
    expect(result).toEqual({ reason: "idle", nowMs: 3000, events: 2 });
    expect(log).toEqual([1000, 3000]);
    // 3000 virtual ms at 10× is 300 real ms, asked for in frames of at most 50 ms.
    expect(host.waits.reduce((a, b) => a + b, 0)).toBe(300);
    expect(maxOf(host.waits)).toBeLessThanOrEqual(50);
    const playheads = progress.map((p) => p.playheadMs);
    expect(playheads).toEqual([...playheads].sort((a, b) => a - b));
    expect(progress.some((p) => p.playheadMs > p.nowMs)).toBe(true); // moving between events
    expect(progress.at(-1)).toMatchObject({ nowMs: 3000, playheadMs: 3000, pendingEvents: 0 });
  });

  it("Infinity plays as fast as possible: no host waits at all", async () => {
    const host = manualHost();
    const s = createScheduler({ startMs: 0, host });
    s.at(DAY_MS, () => undefined);
    const result = await s.runRealtime(Number.POSITIVE_INFINITY);
    expect(result.nowMs).toBe(DAY_MS);
    expect(host.waits).toEqual([]);
  });

  it("pauses in the middle of a wait without moving the clock, and resumes from the playhead", async () => {
    const host = manualHost();
    const s = createScheduler({ startMs: 0, host });
    const log: number[] = [];
    s.at(1000, () => log.push(s.now()));
    const paused = await drive(host, s.runRealtime(1, undefined, { frameMs: 100 }), (frame) => {
      if (frame >= 2) s.pause();
    });
    expect(paused.reason).toBe("paused");
    expect(s.now()).toBe(0); // the clock moves only with events
    expect(log).toEqual([]);
    const waitedBefore = host.waits.reduce((a, b) => a + b, 0);
    const resumed = await drive(host, s.resume());
    expect(resumed).toMatchObject({ reason: "idle", nowMs: 1000 });
    expect(log).toEqual([1000]);
    expect(host.waits.reduce((a, b) => a + b, 0)).toBe(1000); // no real time lost or repeated
    expect(waitedBefore).toBeGreaterThan(0);
  });

  it("a factor change applies from the next frame; untilMs stops playback at that time", async () => {
    const host = manualHost();
    const s = createScheduler({ startMs: 0, host });
    s.at(10_000, () => undefined);
    const result = await drive(host, s.runRealtime(100, undefined, { frameMs: 10, untilMs: 4000 }), (frame) => {
      if (frame === 0) s.setRealtimeFactor(1000);
    });
    expect(result).toEqual({ reason: "until", nowMs: 4000, events: 0 });
    // First frame at 100× (10 ms = 1000 virtual ms), the rest at 1000× (3000 virtual ms = 3 ms).
    expect(host.waits).toEqual([10, 3]);
    expect(() => s.setRealtimeFactor(0)).toThrow(RangeError);
  });
});
