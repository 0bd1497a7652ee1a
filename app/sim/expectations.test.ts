import { describe, expect, it } from "vitest";
import { checkExpectations, expectationName, indexTrace } from "./expectations.ts";
import { runScenarioText } from "./runScenario.ts";
import { parseScenarioText } from "./scenario.ts";

const BASE = `name: e
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
  legacy.example:
    receiver: none
messages:
  - { id: ok, from: alice@a.example, to: bob@b.example }
  - { id: gone, at: 1m, from: alice@a.example, to: nobody@b.example }
  - { id: old, at: 2m, from: alice@a.example, to: carol@legacy.example }
`;

/** Runs BASE once with the given expectations and returns each result as [passed, detail]. */
async function judge(expectations: string): Promise<[boolean, string][]> {
  const outcome = await runScenarioText(`${BASE}expectations:\n${expectations}`);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  return outcome.run.expectations.map((r) => [r.passed, r.detail ?? ""]);
}

describe("expectations", () => {
  it("outcome, rule, attempts, posts and within hold for an accepted recipient", async () => {
    expect(
      await judge(
        "  - { message: ok, recipient: bob@b.example, outcome: accepted, rule: RCP-2, attempts: 1, posts: 1, within: 1s }\n",
      ),
    ).toEqual([[true, "ok bob@b.example: accepted at +0:00:00 (RCP-2); 1 attempt, 1 POST"]]);
  });

  it("a wrong outcome, rule, count or time each fail with what happened", async () => {
    const [[passed, detail]] = (await judge(
      "  - { message: ok, outcome: rejected, rule: STATE-9, attempts: { min: 2 }, posts: 0, after: 1h }\n",
    )) as [[boolean, string]];
    expect(passed).toBe(false);
    expect(detail).toBe(
      "ok bob@b.example: expected rejected, got accepted at +0:00:00 (RCP-2); expected the outcome by rule STATE-9, got RCP-2; expected after 1h, came 0:00:00 after its submission; expected 2…∞ attempts, got 1; expected 0 POSTs, got 1",
    );
  });

  it("G14, EVT-4: dsn-received: the rejection's DSN reached alice; `within` counts from the message's own `at` (+0:01:00), the detail's times are the run's, as the timeline's", async () => {
    expect(
      await judge(
        "  - { message: gone, outcome: dsn-received, within: 1s }\n  - { message: gone, outcome: rejected, never: [smtp] }\n",
      ),
    ).toEqual([
      [true, "gone nobody@b.example: rejected at +0:01:00 (STATE-9); 1 attempt, 1 POST, DSN received at +0:01:00"],
      [true, "gone nobody@b.example: rejected at +0:01:00 (STATE-9); 1 attempt, 1 POST, DSN received at +0:01:00"],
    ]);
  });

  it("an early outcome: `after` fails with how long after its submission it came", async () => {
    const [[passed, detail]] = (await judge("  - { message: gone, outcome: rejected, after: 1h }\n")) as [
      [boolean, string],
    ];
    expect(passed).toBe(false);
    expect(detail).toBe("gone nobody@b.example: expected after 1h, came 0:00:00 after its submission");
  });

  it("G6: smtp with its reason; never: [smtp] fails when it went to SMTP", async () => {
    expect(
      await judge(
        "  - { message: old, outcome: smtp, reason: no-service }\n  - { message: old, never: [smtp, dsn-received] }\n  - { message: old, outcome: smtp, reason: fallback }\n",
      ),
    ).toEqual([
      [true, "old carol@legacy.example: smtp at +0:02:00 (SVC-11); 1 attempt, 0 POSTs, SMTP (no-service)"],
      [false, "old carol@legacy.example: smtp must never happen, but did (smtp at +0:02:00 (SVC-11))"],
      [false, "old carol@legacy.example: expected an SMTP hand-off for fallback, got no-service"],
    ]);
  });

  it("without message and recipient an expectation covers every recipient of every message", async () => {
    const all = await judge("  - { never: [bounced] }\n  - { outcome: accepted }\n");
    const [passed, detail] = all[0] ?? [false, ""];
    expect(passed).toBe(true);
    expect(detail.split(" | ")).toHaveLength(3);
    const results = await judge("  - { outcome: accepted }\n");
    expect(results[0]?.[0]).toBe(false);
    expect(results[0]?.[1]).toBe(
      "gone nobody@b.example: expected accepted, got rejected at +0:01:00 (STATE-9) | old carol@legacy.example: expected accepted, got smtp at +0:02:00 (SVC-11)",
    );
  });

  it("reports are named by id, else by message, recipient and outcome", () => {
    const parsed = parseScenarioText(
      `${BASE}expectations:\n  - { id: mine, outcome: accepted }\n  - { message: ok, never: [smtp, bounced] }\n`,
    );
    if (!parsed.ok) throw new Error("invalid");
    expect(parsed.scenario.expectations.map((e, i) => expectationName(e, i))).toEqual([
      "mine",
      "expectations[1]: ok every recipient never smtp, bounced",
    ]);
  });

  it("a trace without any outcome: the recipient has none, 0 attempts", () => {
    const facts = indexTrace([]).facts("m1@a.example", "bob@b.example");
    expect(facts).toEqual({ messageId: "m1@a.example", recipient: "bob@b.example", attempts: 0, posts: 0 });
    const results = checkExpectations(
      [{ outcome: "accepted", within: "1h" }],
      [],
      [{ id: "m1", messageId: "m1@a.example", atMs: 0, to: ["bob@b.example"] }],
      0,
    );
    expect(results).toEqual([
      {
        id: "expectations[0]: every message every recipient accepted",
        passed: false,
        detail: "m1 bob@b.example: expected accepted, got no outcome",
      },
    ]);
  });
});

describe("expectations: evidence", () => {
  it("names the outcome, the DSN and its arrival, the hand-off and the attempts it was judged on, by seq", async () => {
    const outcome = await runScenarioText(`name: t
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: rate-limited, host: mx.b.example, path: /v1/messages, retryAfterS: 120, until: 30s }
    - { kind: connection-refused, host: mx.b.example, from: 30s }
expectations:
  - { message: m1, outcome: bounced, never: [smtp] }
  - { message: m1, outcome: dsn-received }
  - { message: m1, attempts: 1 }
`);
    if (!outcome.ok) throw new Error("the scenario does not load");
    const { trace, expectations } = outcome.run;
    const seqOf = (name: string, pick: (d: Record<string, unknown>) => boolean = () => true): number[] =>
      trace.events.filter((e) => e.name === name && pick(e.data ?? {})).map((e) => e.seq);
    const bounced = seqOf("recipient.outcome", (d) => d["outcome"] === "bounced");
    expect(bounced).toHaveLength(1);
    expect(expectations[0]).toMatchObject({ passed: true, evidence: bounced });
    const dsn = seqOf("dsn.sent");
    const arrival = seqOf("recipient.outcome", (d) => d["recipient"] === "alice@a.example");
    expect(expectations[1]).toMatchObject({ passed: true, evidence: [...dsn, ...arrival] });
    // Failed: the attempts counted, from the submission on.
    const attempts = [...seqOf("message.submitted").slice(0, 1), ...seqOf("timer.fired")];
    expect(expectations[2]).toMatchObject({ passed: false, evidence: [...attempts, ...bounced].sort((a, b) => a - b) });
  });
});
