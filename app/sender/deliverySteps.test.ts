import { describe, expect, it } from "vitest";
import type { DeliveryContext } from "./deliveryContext.ts";
import { bouncePending, handOffPending, openDeliveries } from "./deliverySteps.ts";
import type { Endpoint } from "./discovery.ts";
import { T0, testDeliveryContext } from "./testing.ts";

const endpoint = (maxRecipients: number): Endpoint => ({
  origin: "https://mx.b.example",
  version: "v1",
  capabilities: { versions: ["v1"], max_message_size: 26_214_400, max_recipients: maxRecipients },
});

function contextWith(overrides: Partial<DeliveryContext> = {}): DeliveryContext {
  return { ...testDeliveryContext(), ...overrides };
}

describe("the delivery machine's steps, without a machine", () => {
  it("POST-23, G12 split: the waiting recipients get deliveries of max_recipients each, every one its own key", () => {
    const context = contextWith();
    const opened = openDeliveries(context, endpoint(1), context.input.deps.random);
    expect(opened.waiting).toEqual([]);
    expect(opened.deliveriesMade).toBe(2);
    expect(opened.deliveries?.map((d) => [d.deliveryId, d.recipients])).toEqual([
      ["m1@a.example→b.example#1", ["bob@b.example"]],
      ["m1@a.example→b.example#2", ["carol@b.example"]],
    ]);
    expect(new Set(opened.deliveries?.map((d) => d.idempotencyKey)).size).toBe(2);
    expect(opened.newDeliveries.map((n) => [n.batch, n.batches, n.maxRecipients, n.deferred])).toEqual([
      [1, 2, 1, false],
      [2, 2, 1, false],
    ]);
  });

  it("POST-24: with no recipient waiting, nothing is opened (a request-level retry keeps its delivery), and nothing new to trace", () => {
    const context = contextWith({ waiting: [] });
    expect(openDeliveries(context, endpoint(100), context.input.deps.random)).toEqual({
      endpoint: endpoint(100),
      newDeliveries: [],
    });
  });

  it("STATE-6, G20: deferred recipients get a new delivery, said to be for deferred ones", () => {
    const context = contextWith({ waiting: [{ address: "bob@b.example", deferred: true }], deliveriesMade: 1 });
    const opened = openDeliveries(context, endpoint(100), context.input.deps.random);
    expect(opened.newDeliveries.map((n) => [n.delivery.deliveryId, n.deferred])).toEqual([
      ["m1@a.example→b.example#2", true],
    ]);
  });

  it("G18, STATE-7: handing off and bouncing make every pending recipient final, with the rule that decided", () => {
    const context = testDeliveryContext();
    const handed = handOffPending({ ...context, smtp: { reason: "no-service", rule: "SVC-11", gaps: ["G6"] } }, T0);
    expect(handed.newOutcomes.map((o) => [o.recipient, o.outcome, o.rule, o.gaps])).toEqual([
      ["bob@b.example", "smtp", "SVC-11", ["G6", "G18"]],
      ["carol@b.example", "smtp", "SVC-11", ["G6", "G18"]],
    ]);
    const bounced = bouncePending(context, T0);
    expect(bounced.newOutcomes.map((o) => [o.outcome, o.rule])).toEqual([
      ["bounced", "STATE-7"],
      ["bounced", "STATE-7"],
    ]);
    expect([handed.waiting, bounced.deliveries]).toEqual([[], []]);
  });
});
