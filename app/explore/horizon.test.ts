import { describe, expect, it } from "vitest";
import { maxOf } from "../protocol/lists.ts";
import { durationMs, parseScenarioText } from "../sim/scenario.ts";
import { generateWorld, WORLD_HORIZON_AFTER_LAST_MS } from "./generate.ts";
import { judgeScenario } from "./judge.ts";
import { exploreOptions } from "./options.ts";

describe("a generated world's horizon", () => {
  it("leaves room for a bounce's DSN to be delivered or bounce in turn (STATE-7, EVT-3)", async () => {
    // m1 bounces at 5 days (bob's mailbox is full); the DSN to alice is answered 429 for ever, so it bounces 5
    // days later. The default horizon (6 days after the last message) would stop the run with the DSN pending,
    // and terminal-outcome would fail for a run that did nothing wrong.
    const world = {
      name: "dsn-after-bounce",
      horizon: WORLD_HORIZON_AFTER_LAST_MS,
      domains: {
        "a.example": { mailboxes: ["s1"] },
        "b.example": { mailboxes: [{ address: "u1", quota: { messages: 0 } }] },
      },
      messages: [{ id: "m1", from: "s1@a.example", to: "u1@b.example" }],
      faults: {
        network: [{ kind: "rate-limited" as const, host: "mx.a.example", path: "/v1/messages", retryAfterS: 60 }],
      },
    };
    expect((await judgeScenario(world, { properties: [], mailscope: "test" })).failed).toEqual([]);
    const { horizon: _default, ...cut } = world;
    expect((await judgeScenario(cut, { properties: [], mailscope: "test" })).failed).toEqual(["terminal-outcome"]);
  });

  it("is set on every world: 12 days after its last message", () => {
    for (let base = 0; base < 20; base++) {
      const parsed = parseScenarioText(
        JSON.stringify(generateWorld({ base, overrides: {} }, exploreOptions()).scenario),
        "w.json",
      );
      if (!parsed.ok) throw new Error(`seed ${base} makes an invalid world`);
      const last = maxOf(parsed.scenario.messages.map((m) => durationMs(m.at)));
      expect(durationMs(parsed.scenario.horizon ?? 0)).toBe(last + WORLD_HORIZON_AFTER_LAST_MS);
    }
  });
});
