import { describe, expect, it } from "vitest";
import { maxOf } from "../protocol/lists.ts";
import { DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS, durationMs, parseScenarioText } from "../sim/scenario.ts";
import { generateWorld, WORLD_HORIZON_AFTER_LAST_MS } from "./generate.ts";
import { judgeScenario } from "./judge.ts";
import { exploreOptions } from "./options.ts";

const DAY = 86_400_000;

/**
 * m1 is submitted `at` after the start and bounces 5 days later (bob's mailbox is full); the DSN to alice is
 * answered 429 for ever, so it bounces 5 days after that.
 */
const dsnAfterBounce = (at = "0s") => ({
  name: "dsn-after-bounce",
  domains: {
    "a.example": { mailboxes: ["s1"] },
    "b.example": { mailboxes: [{ address: "u1", quota: { messages: 0 } }] },
  },
  messages: [{ id: "m1", from: "s1@a.example", to: "u1@b.example", at }],
  faults: {
    network: [{ kind: "rate-limited" as const, host: "mx.a.example", path: "/v1/messages", retryAfterS: 60 }],
  },
});

describe("the default horizon", () => {
  it("leaves room for a bounce's DSN to bounce in turn (STATE-7, EVT-3)", async () => {
    // With 6 days after the last message (the default before), the run stopped with the DSN pending and
    // terminal-outcome failed for a sender that did nothing wrong.
    expect((await judgeScenario(dsnAfterBounce(), { properties: [], mailscope: "test" })).failed).toEqual([]);
    const late = await judgeScenario(dsnAfterBounce("119h"), { properties: [], mailscope: "test" });
    expect(late.failed).toEqual([]);
    const dsn = late.run?.trace.events.filter((e) => e.name === "recipient.outcome").map((e) => e.data?.["outcome"]);
    expect(dsn).toEqual(["bounced", "bounced"]);
    expect(late.run?.complete).toBe(true);
    expect(DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS).toBe(12 * DAY);
  });
});

describe("a generated world's horizon", () => {
  it("is set on every world: the default, 12 days after its last message, written in its YAML", () => {
    expect(WORLD_HORIZON_AFTER_LAST_MS).toBe(DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS);
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
