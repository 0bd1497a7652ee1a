/**
 * The draft's numbers as knobs: a scenario's `constants`, `--set`
 * and the world's runs follow them, the trace and the report say the run
 * departs from SPEC.md, and the invariants judge by the numbers in force.
 */
import { describe, expect, it } from "vitest";
import { SPEC_CONSTANTS, SPEC_KNOBS } from "../protocol/specConstants.ts";
import { exportMarkdown, reproduceCommand } from "../trace/exportMarkdown.ts";
import { applyConstant, constantsOf, constantsOfEvents, departures, parseKnobValue } from "./constants.ts";
import { checkInvariants } from "./invariants.ts";
import { runScenarioText } from "./runScenario.ts";
import { parseScenarioText, parseSetArgument, resolveReadings } from "./scenario.ts";

/** b.example refuses connections for 3 hours; jitter off, so every time is exact. */
const DOWN_3H = `name: down
seed: 7
readings: { G16: jitter=off }
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { id: b-down, kind: connection-refused, host: mx.b.example, until: 3h }
`;

async function run(text: string, readings: readonly (readonly [string, string])[] = []) {
  const outcome = await runScenarioText(text, { file: "scenarios/down.yaml", readings });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  return outcome.run;
}

const attemptTimes = (events: readonly { name: string; timeMs: number; data?: Record<string, unknown> }[]) =>
  events.filter((e) => e.name === "attempt.judged").map((e) => (e.timeMs - events[0]!.timeMs) / 60_000);

describe("the knobs: one per number of the draft, named after its rule", () => {
  it("each knob's SPEC.md value is the spec's (RETRY-1, RETRY-2, RETRY-3, RETRY-5, RETRY-6, GET-6, GET-7, CAP-13)", () => {
    expect(SPEC_CONSTANTS).toEqual({
      firstRetryMs: 60_000,
      backoffFactor: 2,
      retryCapMs: 3_600_000,
      jitterFraction: 0.2,
      fallbackWindowMinS: 3_600,
      fallbackWindowMaxS: 14_400,
      giveUpMs: 432_000_000,
      capabilitiesDefaultMaxAgeS: 3_600,
      capabilitiesMaxAgeS: 86_400,
      pinMaxAgeS: 31_557_600,
    });
    expect(SPEC_KNOBS.map((k) => k.name)).toEqual([
      "RETRY-1",
      "RETRY-2.factor",
      "RETRY-2.cap",
      "RETRY-3",
      "RETRY-5.min",
      "RETRY-5.max",
      "RETRY-6",
      "GET-6",
      "GET-7",
      "CAP-13",
    ]);
    for (const knob of SPEC_KNOBS) expect(knob.rules[0]).toBe(knob.name.split(".")[0]);
  });

  it("a value is a duration with its unit, or a number for the factor and the jitter; bad ones say what the knob takes", () => {
    const cap = SPEC_KNOBS.find((k) => k.name === "RETRY-2.cap")!;
    expect(parseKnobValue(cap, "30m")).toEqual({ ok: true, value: 1_800_000 });
    expect(parseKnobValue(cap, "1800")).toMatchObject({ ok: false, message: expect.stringMatching(/with a unit/) });
    expect(parseKnobValue(cap, "fast")).toMatchObject({ ok: false, message: expect.stringMatching(/SPEC\.md: 1h/) });
    expect(applyConstant(SPEC_CONSTANTS, "retry-3", "0.3")).toMatchObject({
      ok: true,
      constants: { jitterFraction: 0.3 },
    });
    expect(applyConstant(SPEC_CONSTANTS, "RETRY-3", "1")).toMatchObject({ ok: false });
    expect(applyConstant(SPEC_CONSTANTS, "CAP-13", "1.5s")).toMatchObject({ ok: false });
    expect(applyConstant(SPEC_CONSTANTS, "RETRY-9", "1m")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/no knob RETRY-9.*RETRY-1, RETRY-2\.factor/),
    });
  });

  it("--set takes knobs beside gaps, and G16.fallback-window as G16=fallback-window", () => {
    expect(parseSetArgument("RETRY-2.cap=30m")).toEqual(["RETRY-2.cap", "30m"]);
    expect(parseSetArgument("retry-6=3d")).toEqual(["RETRY-6", "3d"]);
    expect(parseSetArgument("G16.fallback-window=3h")).toEqual(["G16", "fallback-window=3h"]);
    expect(parseSetArgument("G7=ignored")).toEqual(["G7", "ignored"]);
    expect(() => parseSetArgument("RETRY-9=1m")).toThrow(/no such knob/);
    expect(() => parseSetArgument("nonsense")).toThrow(/--set takes/);
  });

  it("RETRY-5: G16's window is checked against the bounds in force, whatever the order of the settings", () => {
    expect(resolveReadings([["G16", "fallback-window=6h"]])).toMatchObject({ ok: false, id: "G16" });
    const wider = resolveReadings([
      ["G16", "fallback-window=6h"],
      ["RETRY-5.max", "8h"],
    ]);
    expect(wider).toMatchObject({ ok: true, readings: { retryTiming: { fallbackWindowS: 21_600 } } });
    expect(resolveReadings([["RETRY-5.max", "90m"]])).toMatchObject({
      ok: false,
      id: "RETRY-5",
      message: expect.stringMatching(/window in force \(G16 2h\)/),
    });
    expect(resolveReadings([["RETRY-5.min", "5h"]])).toMatchObject({ ok: false, id: "RETRY-5.min" });
  });

  it("a scenario's constants: checked at their line, a bad one named with what it takes", () => {
    const bad = parseScenarioText(`${DOWN_3H}constants:\n  RETRY-2.cap: 10\n  RETRY-7: 1m\n`, "s.yaml");
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.errors.map((e) => `${e.line}: ${e.field}: ${e.message.slice(0, 40)}`)).toEqual([
      '13: constants["RETRY-2.cap"]: RETRY-2.cap (backoff cap) is a duration ',
      "14: constants.RETRY-7: there is no knob RETRY-7; the draft's nu",
    ]);
  });
});

describe("a run under other numbers (RETRY-1, RETRY-2, RETRY-6)", () => {
  it("follows them: a 30 s first retry and a 10 min cap move every attempt and the hand-off", async () => {
    const spec = await run(DOWN_3H);
    expect(attemptTimes(spec.trace.events)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    const other = await run(DOWN_3H, [
      ["RETRY-1", "30s"],
      ["RETRY-2.cap", "10m"],
    ]);
    expect(attemptTimes(other.trace.events).slice(0, 8)).toEqual([0, 0.5, 1.5, 3.5, 7.5, 15.5, 25.5, 35.5]);
    expect(other.outcomes[0]).toMatchObject({ outcome: "smtp", atMs: other.world.startMs + 125.5 * 60_000 });
    expect(other.passed).toBe(true);
  });

  it("says so: the trace's constants and a spec.constants event first; SPEC.md's runs have neither (their traces unchanged)", async () => {
    const spec = await run(DOWN_3H);
    expect(spec.trace.constants).toBeUndefined();
    expect(spec.trace.events.some((e) => e.name === "spec.constants")).toBe(false);
    const other = await run(`${DOWN_3H}constants: { RETRY-2.cap: 10m }\n`, [["RETRY-6", "3d"]]);
    expect(other.trace.constants).toEqual({ "RETRY-2.cap": "10m", "RETRY-6": "3d" });
    expect(other.trace.events[0]).toMatchObject({
      seq: 0,
      name: "spec.constants",
      data: {
        constants: { "RETRY-2.cap": "10m", "RETRY-6": "3d" },
        rules: ["RETRY-2", "RETRY-6", "STATE-7"],
        departures: [
          { name: "RETRY-2.cap", value: "10m", spec: "1h" },
          { name: "RETRY-6", value: "3d", spec: "5d" },
        ],
      },
    });
    expect(constantsOfEvents(other.trace.events)).toMatchObject({ retryCapMs: 600_000, giveUpMs: 3 * 86_400_000 });
    expect(departures(constantsOf(other.trace.constants)).map((d) => d.name)).toEqual(["RETRY-2.cap", "RETRY-6"]);
    // The report says so, and its command reproduces the run.
    expect(exportMarkdown(other.trace)).toContain("- **Departs from SPEC.md:** RETRY-2.cap=10m; RETRY-6=3d");
    expect(reproduceCommand(other.trace)).toMatch(/--set RETRY-2\.cap=10m --set RETRY-6=3d$/);
  });

  it("RETRY-6: a 3-day give-up bounces at 3 days, and give-up-at-5-days judges by it (STATE-7)", async () => {
    const DOWN = DOWN_3H.replace("until: 3h", "from: 0").replace(
      "G16: jitter=off",
      'G16: "jitter=off, fallback-window=1h"',
    );
    const text = DOWN.replace("kind: connection-refused", "kind: rate-limited, path: /v1/messages, retryAfterS: 60");
    const threeDays = await run(text, [["RETRY-6", "3d"]]);
    const bounced = threeDays.trace.events.find((e) => e.name === "delivery.bounced");
    expect(bounced && bounced.timeMs - threeDays.world.startMs).toBe(3 * 86_400_000);
    const giveUp = threeDays.invariants.find((c) => c.id === "give-up-at-5-days");
    expect(giveUp).toMatchObject({
      passed: true,
      detail: expect.stringMatching(/each at 3d; .*not SPEC\.md's 5 days/),
    });
    // Judged by SPEC.md's numbers, the same trace breaks the rule: the checker is not the sender's copy.
    const events = threeDays.trace.events.filter((e) => !e.name.endsWith(".checked"));
    const asSpec = checkInvariants(events, {
      readings: threeDays.world.readings,
      complete: true,
      startMs: threeDays.world.startMs,
    });
    expect(asSpec.find((c) => c.id === "give-up-at-5-days")).toMatchObject({
      passed: false,
      detail: expect.stringMatching(/before 5 days had passed \[STATE-7, RETRY-6\]/),
    });
  });

  it("RETRY-2: the retry-schedule invariant follows a cap in force, and catches a run judged by another", async () => {
    const other = await run(DOWN_3H, [["RETRY-2.cap", "10m"]]);
    const schedule = other.invariants.find((c) => c.id === "retry-schedule");
    expect(schedule).toMatchObject({ passed: true, detail: expect.stringMatching(/cap 10m \(not SPEC\.md's\)/) });
    const events = other.trace.events.filter((e) => !e.name.endsWith(".checked"));
    const asSpec = checkInvariants(events, {
      readings: other.world.readings,
      complete: true,
      startMs: other.world.startMs,
    });
    expect(asSpec.find((c) => c.id === "retry-schedule")?.passed).toBe(false);
  });
});
