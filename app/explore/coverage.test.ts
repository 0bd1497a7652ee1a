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
