import { describe, expect, it } from "vitest";
import { indexTrace } from "./expectations.ts";
import { outcomeRows } from "./outcomeRows.ts";
import { runScenarioText } from "./runScenario.ts";

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

async function run(name: string) {
  const outcome = await runScenarioText(library[`../../scenarios/${name}.yaml`] ?? "", { file: `${name}.yaml` });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
  return outcome.run;
}

describe("the outcomes table: attempts and POSTs per recipient, not per delivery", () => {
  it("teach-mixed-recipient-results: bob, accepted by the first POST, has 1 attempt and 1 POST (not the delivery's 125)", async () => {
    const { trace, world } = await run("teach-mixed-recipient-results");
    const rows = outcomeRows(trace.events, world.startMs).filter((r) => r.message === "m1");
    expect(rows.map((r) => [r.recipient, r.outcome, r.attempts, r.posts])).toEqual([
      ["bob@b.example", "accepted", 1, 1],
      ["nobody@b.example", "rejected", 1, 1],
      // Deferred at attempt 1, accepted by attempt 2's new delivery (STATE-6).
      ["carol@b.example", "accepted", 2, 2],
      // Deferred at every attempt until the give-up: every attempt named dave.
      ["dave@b.example", "bounced", 125, 125],
    ]);
    // The expectations read the same counts, and their evidence is the attempts of the recipient.
    const facts = indexTrace(trace.events);
    expect(facts.facts("m1@a.example", "bob@b.example")).toMatchObject({ attempts: 1, posts: 1 });
    expect(facts.evidence("m1@a.example", "bob@b.example").attempts).toHaveLength(1);
    expect(facts.evidence("m1@a.example", "carol@b.example").attempts).toHaveLength(2);
  });

  it("rate-limited-then-down: 127 attempts, of which 6 POSTed (the others failed at the capabilities, and would have)", async () => {
    const { trace, world } = await run("rate-limited-then-down");
    const bob = outcomeRows(trace.events, world.startMs).find((r) => r.recipient === "bob@b.example");
    expect(bob).toMatchObject({ outcome: "bounced", attempts: 127, posts: 6 });
  });

  it("an address the sender rejected at submission (no valid mailbox) had no attempt and no POST", () => {
    const ev = (seq: number, name: string, data: Record<string, unknown>) => ({ seq, timeMs: 0, name, data });
    const events = [
      ev(0, "message.submitted", {
        messageId: "m1@a.example",
        from: "alice@a.example",
        to: ["no address", "bob@b.example"],
      }),
      ev(1, "machine.started", {
        deliveryActor: "m1@a.example→b.example",
        messageId: "m1@a.example",
        recipients: ["bob@b.example"],
      }),
      ev(2, "recipient.outcome", {
        messageId: "m1@a.example",
        recipient: "no address",
        outcome: "rejected",
        rule: "MBX-1",
      }),
      ev(3, "attempt.started", { deliveryId: "m1@a.example→b.example#1", attempt: 1, recipients: ["bob@b.example"] }),
      ev(4, "recipient.outcome", {
        messageId: "m1@a.example",
        recipient: "bob@b.example",
        outcome: "accepted",
        rule: "RCP-2",
      }),
    ];
    expect(outcomeRows(events, 0).map((r) => [r.recipient, r.attempts, r.posts])).toEqual([
      ["no address", 0, 0],
      ["bob@b.example", 1, 1],
    ]);
    // A trace written before machine.started counts the delivery's attempts as it did.
    expect(
      outcomeRows(
        events.filter((e) => e.name !== "machine.started"),
        0,
      )[1],
    ).toMatchObject({ attempts: 1 });
  });
});
