import { describe, expect, it } from "vitest";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { checkRows, checkSummary } from "./checks.ts";
import { groupLibrary, groupOf } from "./library.ts";
import { describeEvent } from "../../../app/trace/describe.ts";
import { createLogRowsCache, deliveryOf, filterLog, logFacets, logRows, rowAtTime } from "./log.ts";
import { outcomeRows } from "./outcomes.ts";
import { clockText, formatDuration, formatOffset, parseOffset } from "./time.ts";

const scenarioTexts = import.meta.glob<string>("../../../scenarios/*.yaml", {
  query: "?raw",
  import: "default",
  eager: true,
});

async function trace(name: string, readings?: [string, string][]): Promise<Trace> {
  const file = `scenarios/${name}.yaml`;
  const text = scenarioTexts[`../../../${file}`];
  if (text === undefined) throw new Error(`no ${file}`);
  const outcome = await runScenarioText(text, { file, ...(readings && { readings }) });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
  return outcome.run.trace;
}

describe("time", () => {
  it("prints offsets as the CLI does and reads what a person types", () => {
    expect(formatOffset(Date.UTC(2026, 0, 6, 1, 2, 3, 40), Date.UTC(2026, 0, 1))).toBe("+5d 1:02:03.040");
    expect(formatOffset(120_000, 0)).toBe("+0:02:00");
    expect(clockText(5 * 86_400_000, 0)).toEqual({ offset: "+5d 0:00:00", days: "day 6, 00:00:00" });
    expect(clockText(3_723_000, 0)).toEqual({ offset: "+1:02:03", days: "day 1, 01:02:03" });
    expect(parseOffset("+2:03:00")).toBe(7_380_000);
    expect(parseOffset("2:03")).toBe(7_380_000);
    expect(parseOffset("90m")).toBe(5_400_000);
    expect(parseOffset("1d 4h")).toBe(100_800_000);
    expect(parseOffset("soon")).toBeUndefined();
    expect(parseOffset("")).toBeUndefined();
  });

  it("reads back every offset it prints, days and milliseconds included", () => {
    for (const ms of [
      0,
      1,
      59_999,
      3_600_000,
      86_399_999,
      86_400_000,
      5 * 86_400_000 + 32 * 60_000 + 20_185,
      365 * 86_400_000,
    ])
      expect(parseOffset(formatOffset(ms, 0)), formatOffset(ms, 0)).toBe(ms);
    expect(parseOffset("+5d 0:00:00")).toBe(5 * 86_400_000);
    expect(parseOffset("5d 1:02")).toBe(5 * 86_400_000 + 3_720_000);
  });

  it("writes durations in words", () => {
    expect([800, 58_000, 120_000, 3_780_000, 5 * 86_400_000].map(formatDuration)).toEqual([
      "800 ms",
      "58 s",
      "2 min",
      "1 h 3 min",
      "5 d",
    ]);
  });
});

describe("the log of rate-limited-then-down", async () => {
  const t = await trace("rate-limited-then-down");
  const rows = logRows(t.events, t.startedAtMs);

  it("reads as mailscope run's timeline: offset, domain, words, rule IDs", () => {
    const plain = filterLog(rows, {});
    expect(plain[0]).toMatchObject({
      at: "+0:00:00",
      domain: "a.example",
      kind: "message.submitted",
      text: "message m1@a.example from alice@a.example to bob@b.example",
    });
    const limited = plain.find((r) => r.text.startsWith("attempt 1: 429"));
    expect(limited?.text).toBe("attempt 1: 429 rate_limited (temporary, Retry-After 120s) [ERR-8]");
    expect(limited?.rules).toEqual(["ERR-8"]);
    const bounced = plain.find((r) => r.text.includes("BOUNCED"));
    expect(bounced).toMatchObject({ at: "+5d 0:00:00", rules: ["STATE-7"] });
    expect(plain.every((r) => !r.detail)).toBe(true);
    // No line for the checks; the wire only in the full log.
    expect(rows.some((r) => r.kind === "invariant.checked")).toBe(false);
    expect(rows.some((r) => r.kind === "http.request" && r.detail)).toBe(true);
    expect(filterLog(rows, { full: true }).length).toBe(rows.length);
  });

  it("rows written when read (a 100k-event log writes only what it shows) are the CLI's lines", () => {
    const expected = t.events.flatMap((e) => {
      const plain = describeEvent(e, { flavour: "timeline", full: false, startMs: t.startedAtMs });
      const full = describeEvent(e, { flavour: "timeline", full: true, startMs: t.startedAtMs });
      if (full === undefined) return [];
      const delivery = deliveryOf(e.data ?? {});
      return [
        {
          seq: e.seq,
          timeMs: e.timeMs,
          at: formatOffset(e.timeMs, t.startedAtMs),
          domain: e.domain ?? "",
          kind: e.name,
          text: (plain ?? full).trim(),
          detail: plain === undefined,
          ...(delivery !== undefined && { delivery }),
        },
      ];
    });
    expect(JSON.parse(JSON.stringify(logRows(t.events, t.startedAtMs)))).toEqual(
      expected.map((r, i) => ({ ...r, rules: rows[i]?.rules })),
    );
    expect(rows.map((r) => r.rules)).toEqual(
      t.events
        .filter((e) => e.name !== "invariant.checked" && e.name !== "expectation.checked")
        .map((e) => [...new Set([e.data?.["rule"], e.data?.["gap"], ...((e.data?.["violates"] as unknown[]) ?? [])])])
        .map((ids) => ids.filter((id): id is string => typeof id === "string" && id !== "")),
    );
  });

  it("grows with a live run: the cache describes only new events and equals logRows", () => {
    const cached = createLogRowsCache();
    let events: typeof t.events = [];
    for (let i = 0; i < t.events.length; i += 97) {
      events = events.concat(t.events.slice(i, i + 97));
      expect(cached(events, t.startedAtMs)).toEqual(logRows(events, t.startedAtMs));
    }
    expect(cached(t.events.slice(0, 10), t.startedAtMs)).toEqual(logRows(t.events.slice(0, 10), t.startedAtMs));
    expect(cached(t.events, t.startedAtMs + 1)[0]?.at).toBe("-0:00:00.001");
  });

  it("filters by domain, kind, rule, delivery and words; finds the playhead's row", () => {
    const facets = logFacets(rows);
    expect(facets.domains).toContain("a.example");
    expect(facets.kinds).toContain("attempt.ended");
    expect(facets.rules).toContain("RETRY-2");
    expect(filterLog(rows, { kind: "attempt.ended" }).every((r) => r.kind === "attempt.ended")).toBe(true);
    expect(filterLog(rows, { rule: "STATE-7" }).length).toBeGreaterThan(0);
    expect(filterLog(rows, { rule: "STATE-7" }).every((r) => r.rules.includes("STATE-7"))).toBe(true);
    const delivery = filterLog(rows, { delivery: "m1@a.example→b.example" });
    expect(delivery.length).toBeGreaterThan(100);
    expect(filterLog(rows, { text: "bounced" }).length).toBeGreaterThan(0);
    expect(rowAtTime(rows, t.startedAtMs - 1)).toBe(-1);
    expect(rows[rowAtTime(rows, t.startedAtMs + 120_000)]?.timeMs).toBeLessThanOrEqual(t.startedAtMs + 120_000);
  });

  it("outcomes: bounced at +5d 0:00:00 after 127 attempts and 6 POSTs, and the DSN accepted", () => {
    const out = outcomeRows(t.events, t.startedAtMs);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({
      message: "m1",
      recipient: "bob@b.example",
      outcome: "bounced",
      when: "+5d 0:00:00",
      attempts: 127,
      posts: 6,
      rule: "STATE-7",
      dsn: false,
      delivery: "m1@a.example→b.example",
    });
    expect(out[1]).toMatchObject({ recipient: "alice@a.example", outcome: "accepted", rule: "RCP-2", dsn: true });
    expect(out[1]?.message).toMatch(/^dsn\./);
    // Halfway through, the outcome is still pending.
    const half = t.events.filter((e) => e.timeMs < t.startedAtMs + 3_600_000);
    expect(outcomeRows(half, t.startedAtMs)[0]).toMatchObject({ outcome: "pending", when: "" });
  });

  it("checks: every invariant and expectation, ok", () => {
    const checks = checkRows(t.invariants, t.expectations);
    expect(checks.map((c) => c.id)).toContain("give-up-at-5-days");
    expect(checks.filter((c) => c.kind === "expectation")).toHaveLength(2);
    expect(checkSummary(checks)).toEqual({ passed: true, text: "passed: all 9 checks" });
    expect(checkRows([{ id: "x", passed: false, evidence: [3, 4] } as never], [])[0]).toMatchObject({
      mark: "FAIL",
      evidence: [3, 4],
    });
  });
});

describe("an SMTP hand-off and a reading", () => {
  it("G16 at 2 h hands off at +2:03:00; at 4 h the message is accepted at +3:03:00", async () => {
    const two = await trace("gap-G16-fallback-window-2h");
    expect(outcomeRows(two.events, two.startedAtMs)[0]).toMatchObject({
      outcome: "smtp",
      outcomeText: "smtp (fallback)",
      when: "+2:03:00",
      rule: "STATE-3",
    });
    const four = await trace("gap-G16-fallback-window-2h", [["G16", "fallback-window=4h"]]);
    expect(outcomeRows(four.events, four.startedAtMs)[0]).toMatchObject({ outcome: "accepted", when: "+3:03:00" });
    expect(checkSummary(checkRows(four.invariants, four.expectations)).passed).toBe(false);
  });
});

describe("the library", () => {
  const entries = [
    { file: "teach-mixed-recipient-results.yaml", name: "teach-mixed-recipient-results", description: "mixed" },
    { file: "state-10-x.yaml", name: "state-10-x", description: "" },
    { file: "state-2-fallback.yaml", name: "state-2-fallback", description: "fallback after the window" },
    { file: "error-rate-limited.yaml", name: "error-rate-limited", description: "429" },
    { file: "gap-G16-fallback-window-2h.yaml", name: "gap-G16-fallback-window-2h", description: "G16" },
    { file: "happy-path.yaml", name: "happy-path", description: "accepted" },
  ];
  it("groups by prefix, in order, and searches", () => {
    expect(groupOf("scenarios/teach-x.yaml")).toBe("teaching");
    const groups = groupLibrary(entries);
    expect(groups.map((g) => g.title)).toEqual(["Teaching", "State table", "Errors table", "Gaps", "Others"]);
    expect(groups[1]?.entries.map((e) => e.name)).toEqual(["state-2-fallback", "state-10-x"]);
    const found = groupLibrary(entries, "fallback");
    expect(found.map((g) => g.id)).toEqual(["state", "gaps"]);
    expect(groupLibrary(entries, "", [{ file: "mine.yaml", name: "mine", description: "" }])[0]?.title).toBe("Opened");
  });
});

describe("the readings panel", () => {
  it("has a control per switchable gap, the reading in force selected, and makes --set pairs", async () => {
    const { readingControls, readingSetting, mergeSettings } = await import("./readings.ts");
    const t = await trace("gap-G16-fallback-window-2h");
    const controls = readingControls(t.readings);
    const window = controls.find((c) => c.key === "G16 fallback-window");
    expect(window).toMatchObject({ value: "2h", options: ["1h", "2h", "3h", "4h"] });
    expect(controls.find((c) => c.key === "G16 jitter")?.value).toBe("off");
    expect(controls.find((c) => c.key === "G7")).toMatchObject({ options: ["enforced", "ignored"] });
    expect(controls.map((c) => c.gap)).toContain("G26");
    // G46 and G47 (the spec's two contradictions) offer both readings, as the engine names them.
    expect(controls.find((c) => c.key === "G46")).toMatchObject({ options: ["fallback-eligible", "alive"] });
    expect(controls.find((c) => c.key === "G47")).toMatchObject({ options: ["ignored", "lower-bound"] });
    const four = readingSetting(window!, "4h");
    expect(four).toEqual(["G16", "fallback-window=4h"]);
    expect(
      mergeSettings(
        [
          ["G16", "fallback-window=3h"],
          ["G7", "ignored"],
        ],
        four,
      ),
    ).toEqual([
      ["G7", "ignored"],
      ["G16", "fallback-window=4h"],
    ]);
  });
});
