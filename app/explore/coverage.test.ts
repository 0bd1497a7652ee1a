import { describe, expect, it } from "vitest";
import downPastWindow from "../../scenarios/receiver-down-past-fallback-window.yaml?raw";
import { runScenarioText } from "../sim/runScenario.ts";
import { coverageKeys, machineGraph, machinePaths, pathWords, transitionKeys } from "./coverage.ts";

async function events(text: string) {
  const result = await runScenarioText(text);
  if (!result.ok) throw new Error("the scenario does not load");
  return result.run.trace.events;
}

describe("what a run covered", () => {
  it("matches the trace's transitions to the delivery machine's graph, and keeps the rules, gaps and outcomes it cites", async () => {
    const keys = coverageKeys(await events(downPastWindow));
    // The graph's own id of fallBackToSmtpAfterWindow (row 2), found by its name: ids follow the machine's definition.
    const fallBack = machineGraph().transitions.find((t) =>
      JSON.stringify(t.meta).includes('"name":"fallBackToSmtpAfterWindow"'),
    );
    expect(transitionKeys()).toContain(`transition:${String(fallBack?.id)}`);
    expect(keys.has(`transition:${String(fallBack?.id)}`)).toBe(true);
    expect(keys.has("row:2")).toBe(true);
    expect(keys.has("rule:STATE-3")).toBe(true);
    expect(keys.has("gap:G16")).toBe(true);
    expect(keys.has("recipient.outcome:smtp")).toBe(true);
    expect(keys.has("smtp.handoff:fallback:true")).toBe(true);
    // The checks' verdicts cite rules whatever happened: they are not coverage.
    expect([...keys].some((k) => k === "event:invariant.checked")).toBe(false);
  });

  it("ERR-22: an answer's key is its values in words, whether a trace wrote them as numbers or as text, read again or not", () => {
    // Keys are made once per distinct values and looked up value by value (decision 0205): the same words, the same key.
    const ended = (seq: number, status: unknown, problem?: unknown) => ({
      seq,
      timeMs: 0,
      name: "attempt.ended",
      data: { status, class: "temporary", fallbackEligible: true, ...(problem !== undefined && { problem }) },
    });
    const first = coverageKeys([
      ended(0, 503),
      ended(1, "503"),
      ended(2, { code: 503 }),
      ended(3, 429, "x/rate_limited"),
    ]);
    const again = coverageKeys([
      ended(0, 503),
      ended(1, "503"),
      ended(2, { code: 503 }),
      ended(3, 429, "x/rate_limited"),
    ]);
    const answers = [...first].filter((k) => k.startsWith("attempt.ended:")).sort();
    expect(answers).toEqual([
      "attempt.ended:-:-:temporary:true",
      "attempt.ended:429:-:temporary:true:rate_limited",
      "attempt.ended:503:-:temporary:true",
    ]);
    expect([...again].sort()).toEqual([...first].sort());
  });

  it("reads every citation form the rules view reads, and none from the verdicts", () => {
    const keys = coverageKeys([
      {
        seq: 0,
        timeMs: 0,
        name: "attempt.ended",
        data: { rules: ["POST-5", "POST-5"], gap: "G16", detail: "$.to [ENV-8]" },
      },
      { seq: 1, timeMs: 0, name: "timer.set", data: { rule: "STATE-3", violates: ["AUTH-5"], gaps: ["G10", "x"] } },
      { seq: 2, timeMs: 0, name: "dns.query" },
      { seq: 3, timeMs: 0, name: "invariant.checked", data: { rules: ["STATE-7"], gap: "G29" } },
    ]);
    const cited = [...keys].filter((k) => k.startsWith("rule:") || k.startsWith("gap:")).sort();
    expect(cited).toEqual(["gap:G10", "gap:G16", "rule:AUTH-5", "rule:ENV-8", "rule:POST-5", "rule:STATE-3"]);
    // An event without data still names its behaviour (its distinguishing fields read "-").
    expect(keys.has("event:dns.query")).toBe(true);
  });

  it("writes a path through the machine once, whatever the number of retries", async () => {
    const [path] = machinePaths(await events(downPastWindow));
    expect(path).toMatch(
      /^\(.*retryWithinFallbackWindow retrySameDelivery.*\)\+ \| .*fallBackToSmtpAfterWindow handedOver$/,
    );
    expect(pathWords(["postToEndpoint", "answersRead", "finishAllAccepted"])).toBe(
      "postToEndpoint answersRead finishAllAccepted",
    );
    expect(pathWords(["a", "retrySameDelivery", "a", "retrySameDelivery", "b"])).toBe("(a retrySameDelivery)+ | b");
    expect(pathWords(["a", "retrySameDelivery", "b"])).toBe("a retrySameDelivery | b");
    expect(pathWords(["a", "retrySameDelivery", "c", "retrySameDelivery", "a", "retrySameDelivery", "b"])).toBe(
      "(a retrySameDelivery | c retrySameDelivery)+ | b",
    );
  });
});
