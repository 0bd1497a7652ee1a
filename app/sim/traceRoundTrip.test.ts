/**
 * Every trace the simulator writes reads back: the exported JSON of any run
 * imports again (events numbered without gaps, never back in time), and the
 * HAR export takes it. A property over random small scenarios with random DNS
 * and network latencies (the receiver once traced a request at its arrival
 * after the key lookup's later events). Every scenario of the library:
 * app/cli/scenarioTraces.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exportHar } from "../trace/exportHar.ts";
import { exportJson } from "../trace/exportJson.ts";
import { importTrace } from "../trace/importer.ts";
import type { Trace } from "../trace/schema.ts";
import { runScenarioText } from "./runScenario.ts";

/** Exported with and without bodies, the trace imports with all its events; HAR export takes it. */
function reimports(trace: Trace): void {
  for (const full of [false, true]) {
    const parsed = importTrace(exportJson(trace, { full }));
    if (!parsed.ok) throw new Error(parsed.violations.map((v) => `${v.path}: ${v.message}`).join("\n"));
    expect(parsed.value.events).toHaveLength(trace.events.length);
  }
  expect(() => exportHar(trace)).not.toThrow();
}

const latency = fc.oneof(
  fc.integer({ min: 0, max: 400 }),
  fc
    .tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }))
    .map(([minMs, maxMs]) => ({ distribution: "uniform", minMs, maxMs })),
  fc.integer({ min: 1, max: 200 }).map((meanMs) => ({ distribution: "exponential", meanMs })),
);

const scenario = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  dnsLatency: latency,
  networkLatency: latency,
  messages: fc.array(
    fc.record({
      atMs: fc.integer({ min: 0, max: 2000 }),
      to: fc.subarray(["bob@b.example", "carol@b.example", "dan@c.example"], { minLength: 1 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  faultyPost: fc.boolean(),
});

describe("exported traces import again", () => {
  it("for random small scenarios with random DNS and network latencies", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const text = JSON.stringify({
          name: "random",
          seed: s.seed,
          horizon: "2h",
          dns: { latency: s.dnsLatency },
          network: { latency: s.networkLatency },
          domains: {
            "a.example": { mailboxes: ["alice"] },
            "b.example": { mailboxes: ["bob", "carol"] },
            "c.example": { mailboxes: ["dan"] },
          },
          messages: s.messages.map((m) => ({ from: "alice@a.example", to: m.to, at: m.atMs })),
          faults: s.faultyPost
            ? { network: [{ kind: "unavailable", path: "/v1/messages", probability: 0.5, until: "20m" }] }
            : {},
        });
        const outcome = await runScenarioText(text, { file: "random.yaml" });
        if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
        reimports(outcome.run.trace);
      }),
      { numRuns: 12, seed: 20_261_125 },
    );
  }, 120_000);
});
