/**
 * The difference table and the verdicts of two
 * runs, on real runs of the library's G16 scenario (a 2.5-hour outage of
 * b.example's receiver, jitter off), and the check that a fork agrees with
 * its original before the fork point.
 */
import { describe, expect, it } from "vitest";
import g16 from "../../scenarios/gap-G16-fallback-window-4h.yaml?raw";
import g16Default from "../../scenarios/gap-G16-fallback-window-2h.yaml?raw";
import state6 from "../../scenarios/state-6-give-up-after-5-days.yaml?raw";
import failureAfterAcceptance from "../../scenarios/teach-failure-after-acceptance.yaml?raw";
import mixed from "../../scenarios/teach-mixed-recipient-results.yaml?raw";
import jitterOn from "../../scenarios/gap-G16-jitter-on.yaml?raw";
import type { RecordedEvent } from "../trace/schema.ts";
import {
  checkPrefix,
  compareOutcomes,
  compareRuns,
  fieldText,
  prefixHash,
  tracePrefix,
  verdictOf,
  VERDICT_KIND_TEXT,
  type PartingSide,
} from "./compare.ts";
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

  it("a fork placed exactly at an event's time: that event is the fork's, not the prefix's; no false difference", async () => {
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

describe("Compare's verdicts are true of the two runs", () => {
  const seeds = async (text: string, a: number, b: number) => {
    const ra = await run(text, { seed: a });
    const rb = await run(text, { seed: b });
    return { ra, rb, ...compareRuns(ra.trace.events, rb.trace.events, ra.world.startMs) };
  };

  it("EVT-3, STATE-7: two seeds that bounce alike — the DSNs are matched by what they report on, not by their Message-ID", async () => {
    const { ra, rb, table } = await seeds(state6, 1, 2);
    // The seed draws the DSN's Message-ID: the two runs' DSNs have different ones.
    const dsnIds = (r: ScenarioRun) =>
      r.trace.events.filter((e) => e.name === "dsn.sent").map((e) => e.data?.["dsnMessageId"]);
    expect(dsnIds(ra)).not.toEqual(dsnIds(rb));
    // Before: 3 lines, "3 of 3 recipients ended differently" (each DSN "not submitted" in the other run).
    expect(table.lines.map((l) => [l.message, l.recipient, l.kind])).toEqual([
      ["m1", "bob@b.example", "same-outcome"],
      ["DSN of m1 (bounced: bob@b.example)", "alice@a.example", "same"],
    ]);
    expect(table.lines[0]?.verdict).toMatch(/^bounced at \+5d 0:00:00 in both; attempts \d+ vs \d+/);
    expect(table.summary).toBe(
      "Same outcomes: all 2 recipients ended the same way, 1 of them at another time or after other attempts.",
    );
  });

  it("STATE-8, EVT-4, RCP-2: a receiver's DSN after acceptance and a rejection's DSN are matched too; the same decisions, never parting", async () => {
    for (const text of [failureAfterAcceptance, mixed]) {
      const { table, parting } = await seeds(text, 1, 2);
      expect(table.same).toBe(true);
      expect(table.lines.filter((l) => l.dsn).map((l) => l.message)).toEqual(
        text === mixed
          ? ["DSN of m1 (rejected: nobody@b.example)", "DSN of m1 (bounced: dave@b.example)"]
          : ["DSN of m1 (failure-after-acceptance: bob@b.example)"],
      );
      expect(table.summary).toMatch(/^Same: all \d recipients ended alike\.$/);
      expect(parting.parts).toBe(false);
      expect(parting.text).toMatch(/^The runs never part: they make the same \d+ decisions\.$/);
    }
  });

  it("the four kinds of verdict, each with its words", () => {
    const row: OutcomeRow = {
      message: "m1",
      messageId: "m1@a.example",
      recipient: "bob@b.example",
      outcome: "accepted",
      outcomeText: "accepted",
      dsn: false,
      atMs: 60_000,
      when: "+0:01:00",
      attempts: 2,
      posts: 2,
      rule: "RCP-2",
      delivery: "m1@a.example→b.example",
    };
    const later = { ...row, atMs: 180_000, when: "+0:03:00", attempts: 3, posts: 3 };
    const table = compareOutcomes(
      [row, { ...row, recipient: "carol@b.example" }],
      [
        later,
        { ...row, recipient: "carol@b.example", outcome: "smtp", outcomeText: "smtp (fallback)", rule: "STATE-3" },
        { ...row, message: "m2" },
      ],
    );
    expect(table.lines.map((l) => [l.kind, VERDICT_KIND_TEXT[l.kind], l.verdict])).toEqual([
      [
        "same-outcome",
        "same outcome, different time or attempts",
        "accepted in both, at +0:01:00 vs +0:03:00; attempts 2 vs 3, POSTs 2 vs 3",
      ],
      ["different-outcome", "different outcome", "accepted at +0:01:00 vs smtp at +0:01:00"],
      ["one-run", "in one run only", "not submitted vs accepted at +0:01:00"],
    ]);
    expect(table.kinds).toEqual({ same: 0, "same-outcome": 1, "different-outcome": 1, "one-run": 1 });
    expect(table.summary).toBe(
      "Differ: 2 of 3 recipients ended differently (1 in one run only); 1 more the same way at another time or after other attempts.",
    );
    expect(compareOutcomes([row], [row]).summary).toBe("Same: all 1 recipient ended alike.");
  });

  it("where the runs first part, in every mode: two readings, two seeds, a fork — each side's decision, an event of its run", async () => {
    const check = (events: readonly RecordedEvent[], side: PartingSide | undefined, words: RegExp) => {
      expect(side?.text).toMatch(words);
      const event = events.find((e) => e.seq === side?.seq);
      expect(event?.timeMs).toBe(side?.timeMs);
      expect(["attempt.judged", "timer.set", "recipient.result", "smtp.handoff", "recipient.outcome"]).toContain(
        event?.name,
      );
    };
    // Two readings (RETRY-4): the runs judge and retry alike until the 1 h window ends; they part where A hands
    // off and B retries — not at attempt 1, judged under another window but decided alike (note 0039).
    const a = await run(g16, { readings: [["G16", "fallback-window=1h"]] });
    const b = await run(g16);
    const readings = compareRuns(a.trace.events, b.trace.events, a.world.startMs).parting;
    expect(readings).toMatchObject({ parts: true, at: "+1:03:00" });
    expect(readings.alike).toBeGreaterThan(10);
    check(a.trace.events, readings.a, /^\+1:03:00 handed bob@b\.example to SMTP \(fallback\)/);
    check(b.trace.events, readings.b, /^\+1:03:00 m1@a\.example→b\.example: attempt 8 in 1h \[RETRY-2\]$/);

    // Two seeds (RETRY-3): the jitter draws another first retry delay.
    const { ra, rb, parting } = await seeds(jitterOn, 1, 2);
    expect(parting.parts).toBe(true);
    check(ra.trace.events, parting.a, /^\+0:00:00 m1@a\.example→b\.example: attempt 2 in \S+ \[RETRY-1\]$/);
    check(rb.trace.events, parting.b, /attempt 2 in/);
    expect(parting.a?.text).not.toBe(parting.b?.text);

    // A fork at +0:30:00 ending the outage: the same until the next attempt, at +0:31:00.
    const fork = forkScenario(g16Default, 30 * 60_000, { kind: "end-fault", fault: "b-down" });
    if (!fork.ok) throw new Error(JSON.stringify(fork.errors));
    const original = await run(g16Default);
    const forked = await run(fork.text);
    const atFork = compareRuns(original.trace.events, forked.trace.events, original.world.startMs).parting;
    expect(atFork).toMatchObject({ parts: true, at: "+0:31:00" });
    check(
      original.trace.events,
      atFork.a,
      /^\+0:31:00 m1@a\.example→b\.example: attempt 6 over at capabilities \(temporary, fallback-eligible/,
    );
    check(forked.trace.events, atFork.b, /^\+0:31:00 m1@a\.example→b\.example: bob@b\.example: accepted/);
    expect(atFork.text).toBe(
      `The runs first part at +0:31:00, after ${atFork.alike} decisions alike: A ${atFork.a?.text}; B ${atFork.b?.text}.`,
    );
  });
});
