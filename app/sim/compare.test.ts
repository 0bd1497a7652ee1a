/**
 * Issue 15 "Compare and fork": the difference table and the verdicts of two
 * runs, on real runs of the library's G16 scenario (a 2.5-hour outage of
 * b.example's receiver, jitter off), and the check that a fork agrees with
 * its original before the fork point.
 */
import { describe, expect, it } from "vitest";
import g16 from "../../scenarios/gap-G16-fallback-window-4h.yaml?raw";
import g16Default from "../../scenarios/gap-G16-fallback-window-2h.yaml?raw";
import { checkPrefix, compareOutcomes, fieldText, prefixHash, tracePrefix, verdictOf } from "./compare.ts";
import { forkScenario } from "./fork.ts";
import { outcomeRows, type OutcomeRow } from "./outcomeRows.ts";
import { runScenarioText, type ScenarioRun, type RunScenarioOptions } from "./runScenario.ts";

async function run(text: string, options: RunScenarioOptions = {}): Promise<ScenarioRun> {
  const outcome = await runScenarioText(text, options);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  return outcome.run;
}

const rowsOf = (r: ScenarioRun): OutcomeRow[] => outcomeRows(r.trace.events, r.world.startMs);

describe("compareOutcomes", () => {
  it("G16 fallback window 1h vs 4h (RETRY-4, RETRY-5): smtp at +1:03:00 vs accepted at +3:03:00, every field flagged", async () => {
    const a = await run(g16, { readings: [["G16", "fallback-window=1h"]] });
    const b = await run(g16);
    const table = compareOutcomes(rowsOf(a), rowsOf(b));
    expect(table.same).toBe(false);
    expect(table.differing).toBe(1);
    const [line] = table.lines;
    expect(line?.message).toBe("m1");
    expect(line?.recipient).toBe("bob@b.example");
    expect(line?.verdict).toBe("smtp at +1:03:00 vs accepted at +3:03:00");
    expect(line?.differs).toEqual(["outcome", "time", "attempts", "posts", "rule"]);
    expect(fieldText(line?.a, "outcome")).toBe("smtp (fallback)");
    expect(fieldText(line?.b, "attempts")).toBe("9");
    expect(fieldText(line?.a, "rule")).toBe("STATE-3");
  });

  it("the same run twice: no difference, verdict `same: …`", async () => {
    const a = await run(g16);
    const table = compareOutcomes(rowsOf(a), rowsOf(await run(g16)));
    expect(table.same).toBe(true);
    expect(table.lines.map((l) => l.verdict)).toEqual(["same: accepted at +3:03:00"]);
  });

  it("a recipient only one run has is flagged in every field", () => {
    const row: OutcomeRow = {
      message: "m2",
      messageId: "m2@a.example",
      recipient: "bob@b.example",
      outcome: "accepted",
      outcomeText: "accepted",
      dsn: false,
      atMs: 1000,
      when: "+0:00:01",
      attempts: 1,
      posts: 1,
      rule: "RCP-2",
      delivery: "m2@a.example→b.example",
    };
    const table = compareOutcomes([], [row]);
    expect(table.lines[0]?.verdict).toBe("not submitted vs accepted at +0:00:01");
    expect(verdictOf(row, { ...row, posts: 2 }, ["posts"])).toBe("accepted at +0:00:01 in both; POSTs 1 vs 2");
  });
});

describe("fork at a time", () => {
  it("ending the outage at +0:30:00 delivers at +0:31:00 while the original goes to SMTP at +2:03:00; the prefixes hash the same", async () => {
    const fork = forkScenario(g16Default, 30 * 60_000, { kind: "end-fault", fault: "b-down" });
    if (!fork.ok) throw new Error(JSON.stringify(fork.errors));
    const a = await run(g16Default);
    const b = await run(fork.text);
    const startMs = a.world.startMs;
    const forkMs = startMs + 30 * 60_000;
    const check = await checkPrefix(a.trace.events, b.trace.events, forkMs, startMs);
    expect(check.identical).toBe(true);
    expect(check.eventsA).toBeGreaterThan(10);
    expect(check.text).toMatch(/^identical before \+0:30:00 \(\d+ events/);
    expect(await prefixHash(a.trace.events, forkMs)).toBe(check.hashB);
    const table = compareOutcomes(rowsOf(a), rowsOf(b));
    expect(table.lines[0]?.verdict).toBe("smtp at +2:03:00 vs accepted at +0:31:00");
  });

  it("a fault declaration is cut at the fork time, so the changed window does not count as a difference before it", async () => {
    const a = await run(g16Default);
    const prefix = tracePrefix(a.trace.events, a.world.startMs + 60_000);
    const declared = prefix.find((e) => e.name === "fault.window");
    expect(declared?.data?.["untilMs"]).toBe(a.world.startMs + 60_000);
    expect(prefix.map((e) => e.seq)).toEqual(prefix.map((_, i) => i));
  });

  it("issue 23: a fork placed exactly at an event's time: that event is the fork's, not the prefix's; no false difference", async () => {
    const a = await run(g16Default);
    const startMs = a.world.startMs;
    // The retry at +0:31:00 (jitter off): the fork point is its very time.
    const retry = a.trace.events.find((e) => e.name === "timer.fired" && e.timeMs - startMs === 31 * 60_000);
    if (retry === undefined) throw new Error("no retry at +0:31:00");
    const forkMs = retry.timeMs;
    const prefix = tracePrefix(a.trace.events, forkMs);
    expect(prefix.at(-1)?.timeMs).toBeLessThan(forkMs);
    expect(tracePrefix(a.trace.events, forkMs + 1).some((e) => e.name === "timer.fired" && e.timeMs === forkMs)).toBe(
      true,
    );
    const changes = [
      { kind: "end-fault", fault: "b-down" },
      { kind: "start-fault", faultKind: "timeout", host: "mx.b.example" },
      { kind: "submit", from: "alice@a.example", to: ["bob@b.example"] },
    ] as const;
    for (const change of changes) {
      const fork = forkScenario(g16Default, forkMs - startMs, change);
      if (!fork.ok) throw new Error(JSON.stringify(fork.errors));
      const b = await run(fork.text);
      const check = await checkPrefix(a.trace.events, b.trace.events, forkMs, startMs);
      expect(check, change.kind).toMatchObject({ identical: true, eventsA: prefix.length, eventsB: prefix.length });
      expect(check.text, change.kind).toMatch(/^identical before \+0:31:00 /);
    }
    // The fork that ends the outage then does differ at that time: its retry gets through.
    const ended = forkScenario(g16Default, forkMs - startMs, changes[0]);
    if (!ended.ok) throw new Error("fork");
    const b = await run(ended.text);
    const at = (r: ScenarioRun) =>
      r.trace.events.filter((e) => e.timeMs === forkMs && e.name === "attempt.ended").map((e) => e.data?.["status"]);
    expect([at(a), at(b)]).toEqual([[], [200]]);
  });

  it("two different runs differ before the fork point, and the check says where", async () => {
    const a = await run(g16Default);
    const b = await run(g16Default, { readings: [["G16", "jitter=on"]] });
    const check = await checkPrefix(a.trace.events, b.trace.events, a.world.startMs + 30 * 60_000, a.world.startMs);
    expect(check.identical).toBe(false);
    expect(check.firstDifference).toBeDefined();
    expect(check.text).toMatch(/^differ before \+0:30:00: event \d+ at \+\d+:\d\d:\d\d/);
  });
});
