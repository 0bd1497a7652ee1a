/// <reference types="vite/client" />
/**
 * The retry schedule and the fallback window as the trace alone shows them:
 * scenarios/rate-limited-then-down.yaml is run, its trace exported to JSON and
 * imported again, and everything below is read from the imported events only
 * (no sender, no world), as the app's timeline draws an imported trace.
 *
 * The scenario: b.example answers the first POST 429 with Retry-After 120 s,
 * then refuses every connection for good, so the sender retries for 5 days
 * (127 attempts, the last 121 ending at the capabilities fetch) and bounces.
 */
import { describe, expect, it } from "vitest";
import scenarioText from "../../scenarios/rate-limited-then-down.yaml?raw";
import { GIVE_UP_AFTER_MS, baseRetryDelayMs } from "../sender/retrySchedule.ts";
import { exportJson } from "../trace/exportJson.ts";
import { importTrace } from "../trace/importer.ts";
import type { Trace } from "../trace/schema.ts";
import { runScenarioText } from "./runScenario.ts";

const ACTOR = "m1@a.example→b.example";
const HOUR = 3_600_000;

type Data = Readonly<Record<string, unknown>>;

async function importedTrace(): Promise<Trace> {
  const outcome = await runScenarioText(scenarioText, { file: "scenarios/rate-limited-then-down.yaml" });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  const imported = importTrace(exportJson(outcome.run.trace));
  if (!imported.ok) throw new Error(imported.violations.map((v) => `${v.path}: ${v.message}`).join("; "));
  return imported.value;
}

/** The data of the actor's events named `name`, in order. */
function actorData(trace: Trace, name: string): Data[] {
  return trace.events.filter((e) => e.name === name && e.data?.["deliveryActor"] === ACTOR).map((e) => e.data ?? {});
}

const num = (value: unknown): number => {
  expect(typeof value).toBe("number");
  return value as number;
};

describe("rate-limited-then-down, read back from its exported and imported trace", async () => {
  const trace = await importedTrace();
  const start = trace.startedAtMs;
  const attempts = actorData(trace, "attempt.judged");
  const plans = actorData(trace, "timer.set");

  it("STATE-5, STATE-7, ERR-21, ERR-23, GET-9: 127 attempts are events, each with number, start, end, class, fallback-eligibility, rule and stage; 6 reached a POST", () => {
    expect(attempts).toHaveLength(127);
    attempts.forEach((a, index) => {
      expect(a["attempt"]).toBe(index + 1);
      expect(num(a["endedAtMs"])).toBeGreaterThanOrEqual(num(a["startedAtMs"]));
      expect(typeof a["class"]).toBe("string");
      expect(typeof a["fallbackEligible"]).toBe("boolean");
      expect(a["rule"]).toMatch(/^[A-Z]+-[0-9]+$/);
      // After the 429, no attempt may ever let the message fall back (ERR-23).
      expect(a["allAttemptsFallbackEligible"]).toBe(false);
    });
    expect(attempts[0]).toMatchObject({
      startedAtMs: start,
      stage: "post",
      class: "temporary",
      status: 429,
      fallbackEligible: false,
      rule: "ERR-8",
    });
    expect(attempts.slice(1, 6).map((a) => [a["stage"], a["class"], a["fallbackEligible"], a["rule"]])).toEqual(
      Array.from({ length: 5 }, () => ["post", "temporary", true, "ERR-21"]),
    );
    // From +30 min the refused connection hits the capabilities fetch first, once its cached copy is stale.
    expect(new Set(attempts.slice(6).map((a) => `${a["stage"]} ${a["class"]} ${a["rule"]} ${a["posts"]}`))).toEqual(
      new Set(["capabilities temporary GET-9 0"]),
    );
    // The POSTs keep their own events: one per attempt that reached the POST.
    const posted = trace.events.filter(
      (e) => e.name === "attempt.started" && String(e.data?.["deliveryId"]).startsWith(`${ACTOR}#`),
    );
    expect(posted.map((e) => e.data?.["attempt"])).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("RETRY-4, RETRY-6: one fallback window, on the first attempt's event: from the first attempt, 2 hours, and the give-up 5 days after it", () => {
    const windows = attempts.filter((a) => a["fallbackWindowEndMs"] !== undefined);
    expect(windows).toHaveLength(1);
    expect(windows[0]).toMatchObject({
      attempt: 1,
      fallbackWindowS: 7_200,
      fallbackWindowStartMs: start,
      fallbackWindowEndMs: start + 2 * HOUR,
      giveUpAtMs: start + GIVE_UP_AFTER_MS,
    });
    const bounced = trace.events.find((e) => e.name === "delivery.bounced" && e.data?.["messageId"] === "m1@a.example");
    expect(bounced?.timeMs).toBe(start + GIVE_UP_AFTER_MS);
    expect(bounced?.data?.["attempts"]).toBe(127);
  });

  it("RETRY-1, RETRY-2, RETRY-3, RETRY-7: each retry's plan has its base, jittered and lower-bound delays and what decided; the first waits for Retry-After", () => {
    // 126 retries were made; a 127th was planned after attempt 127, for after the give-up, which came first.
    expect(plans).toHaveLength(127);
    expect(actorData(trace, "timer.fired")).toHaveLength(126);
    plans.forEach((p, index) => {
      const retry = index + 1;
      expect(p["retry"]).toBe(retry);
      expect(p["attemptStartedAtMs"]).toBe(attempts[index]?.["startedAtMs"]);
      const base = num(p["baseDelayMs"]);
      const jittered = num(p["jitteredDelayMs"]);
      expect(base).toBe(baseRetryDelayMs(retry));
      expect(p["jitter"]).toBe(true);
      expect(jittered).toBeGreaterThanOrEqual(Math.floor(0.8 * base));
      expect(jittered).toBeLessThanOrEqual(Math.ceil(1.2 * base));
      expect(p["scheduledAtMs"]).toBe(num(p["attemptStartedAtMs"]) + jittered);
      if (retry < 127) expect(p["atMs"]).toBe(attempts[retry]?.["startedAtMs"]);
      else expect(num(p["atMs"])).toBeGreaterThanOrEqual(num(p["giveUpAtMs"]));
    });
    expect(plans[0]).toMatchObject({
      baseDelayMs: 60_000,
      lowerBoundMs: start + 120_000,
      lowerBoundDelayMs: 120_000,
      atMs: start + 120_000,
      decidedBy: "retry-after",
      rule: "RETRY-7",
    });
    expect(num(plans[0]?.["jitteredDelayMs"])).toBeLessThan(120_000);
    const rest = plans.slice(1);
    expect(rest.every((p) => p["decidedBy"] === "jittered-delay" && p["lowerBoundMs"] === undefined)).toBe(true);
    expect(rest.every((p) => p["atMs"] === p["scheduledAtMs"])).toBe(true);
  });

  it("SVC-5: the actor's start and every state it passed through, and the discovery events it caused, are in the trace", () => {
    expect(actorData(trace, "machine.started")).toEqual([
      expect.objectContaining({ state: "attemptingOverService.discovering", recipients: ["bob@b.example"] }),
    ]);
    let state = actorData(trace, "machine.started")[0]?.["state"];
    for (const t of actorData(trace, "machine.transition")) {
      expect(t["from"]).toBe(state);
      state = t["to"];
    }
    expect(state).toBe("bounced");
    const discovery = trace.events.filter(
      (e) =>
        ["discovery.resolved", "capabilities.fetched", "capabilities.cached", "capabilities.invalid"].includes(
          e.name,
        ) && e.data?.["domain"] === "b.example",
    );
    expect(discovery.length).toBeGreaterThanOrEqual(127);
    expect(discovery.every((e) => e.data?.["deliveryActor"] === ACTOR)).toBe(true);
  });
});

describe("G16: the retry delay counts from the attempt's start, however slow its POST (on times, not a hash)", () => {
  /** b.example answers every POST 503 after `latency`; jitter off. The attempts' starts, in seconds from the first. */
  async function starts(latency: string): Promise<{ starts: number[]; ends: number[]; planned: number[] }> {
    const outcome = await runScenarioText(`name: slow
readings: { G16: jitter=off }
horizon: 10m
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: latency, host: mx.b.example, path: /v1/messages, latency: ${latency} }
    - { kind: unavailable, host: mx.b.example, path: /v1/messages, problem: false }
`);
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    const events = outcome.run.trace.events;
    const t0 = outcome.run.world.startMs;
    const judged = events.filter((e) => e.name === "attempt.judged").map((e) => e.data ?? {});
    const timers = events.filter((e) => e.name === "timer.set").map((e) => e.data ?? {});
    return {
      starts: judged.map((d) => (num(d["startedAtMs"]) - t0) / 1000),
      ends: judged.map((d) => (num(d["endedAtMs"]) - t0) / 1000),
      // When each retry was planned for: the time it then started (never one already past).
      planned: timers.map((d) => (num(d["atMs"]) - t0) / 1000),
    };
  }

  it("RETRY-1, RETRY-2: a POST answered after 40 s: the retries start at 1, 3 and 7 minutes after the first attempt, not after its answer", async () => {
    const slow = await starts("40000");
    expect(slow.starts).toEqual([0, 60, 180, 420]);
    expect(slow.ends).toEqual([40, 100, 220, 460]);
    expect(slow.planned.slice(0, 3)).toEqual([60, 180, 420]);
  });

  it("G16: a POST slower than the delay: the retry starts as soon as the answer is in, and the next delay counts from that retry's start", async () => {
    const slower = await starts("90000");
    // Planned 1 minute after 0:00, the retry cannot start before the answer at 1:30; the next is 2 minutes after 1:30.
    expect(slower.starts).toEqual([0, 90, 210, 450]);
    expect(slower.ends).toEqual([90, 180, 300, 540]);
    expect(slower.planned.slice(0, 3)).toEqual([90, 210, 450]);
  });
});
