import { describe, expect, it } from "vitest";
import { parseDsn } from "../protocol/dsn.ts";
import { buildFailureDsn, headerBlock, parseDiagnostic } from "./afterAcceptance.ts";
import { createReceiverHarness, createTestSender, signedDelivery, textMessage } from "./testing.ts";

const failBob = { mailbox: "bob@b.example", status: "5.2.1", diagnostic: "550 5.2.1 mailbox disabled after delivery" };

describe("failure after acceptance (G17)", () => {
  it("SVC-8, STATE-8, EVT-2, EVT-4, G17, G29: after the 200, a DSN with null from goes to the envelope sender through the outbound side", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { failAfterAcceptance: [failBob] } }));
    const message = textMessage({
      from: "alice@a.example",
      to: ["bob@b.example"],
      subject: "Quarterly report",
      messageId: "q1",
    });
    const response = await h.deliver({ message });
    expect(((await response.json()) as { results: { status: string }[] }).results[0]?.status).toBe("accepted");
    // Nothing before the 200 is out: the DSN is scheduled on the Clock.
    expect(h.outbox).toHaveLength(0);
    await h.clock.advance(0);
    expect(h.outbox).toHaveLength(1);
    const sent = h.outbox[0];
    expect(sent?.from).toBeNull();
    expect(sent?.to).toEqual(["alice@a.example"]);
    // What it reports, for the outbound side's log: the delivery (signing domain/key@arrival) and who failed.
    expect(sent?.about).toEqual({
      deliveryId: expect.stringMatching(/^a\.example\/.+@[0-9]+$/),
      recipients: [failBob],
    });
    const dsn = await parseDsn(sent?.message ?? new Uint8Array());
    expect(dsn.ok).toBe(true);
    if (!dsn.ok) return;
    expect(dsn.value.to).toEqual(["alice@a.example"]);
    expect(dsn.value.partTypes).toEqual(["text/plain", "message/delivery-status", "text/rfc822-headers"]);
    expect(dsn.value.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "b.example" });
    const [recipient] = dsn.value.deliveryStatus.recipients;
    expect(recipient?.finalRecipient).toEqual({ type: "rfc822", value: "bob@b.example" });
    expect(recipient?.action).toBe("failed");
    expect(recipient?.status).toBe("5.2.1");
    expect(recipient?.diagnosticCode).toEqual({ type: "smtp", value: "550 5.2.1 mailbox disabled after delivery" });
    // Part 3 is the original header block, byte for byte.
    expect(dsn.value.returned?.content).toEqual(headerBlock(message));
    expect(h.trace.named("failure.after-acceptance").map((e) => e.data)).toEqual([
      { mailbox: "bob@b.example", status: "5.2.1" },
    ]);
  });

  it("G17: delayMs schedules the failure on the Clock", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { failAfterAcceptance: [{ ...failBob, delayMs: 60_000 }] },
    }));
    await h.deliver();
    await h.clock.advance(59_999);
    expect(h.outbox).toHaveLength(0);
    expect(h.trace.named("failure.after-acceptance")).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.outbox).toHaveLength(1);
    expect(h.trace.named("failure.after-acceptance")[0]?.timeMs).toBe(h.clock.now());
  });

  it("ENV-3, G17: no DSN for a message whose envelope sender is null (the failure is still traced)", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { failAfterAcceptance: [failBob] } }));
    await h.deliver({ from: null });
    await h.clock.advance(0);
    expect(h.outbox).toHaveLength(0);
    expect(h.trace.named("failure.after-acceptance")).toHaveLength(1);
  });

  it("G17: only accepted recipients can fail after acceptance; two of one delivery share one DSN", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: {
        failAfterAcceptance: [
          failBob,
          { mailbox: "carol@b.example", status: "4.2.2", diagnostic: "x-local; quota recount" },
          { mailbox: "dave@b.example", status: "5.0.0", diagnostic: "x" },
        ],
        recipientRefusals: [{ mailbox: "dave@b.example" }],
      },
    }));
    await h.deliver({ to: ["bob@b.example", "carol@b.example", "dave@b.example"] });
    await h.clock.advance(0);
    expect(h.outbox).toHaveLength(1);
    const dsn = await parseDsn(h.outbox[0]?.message ?? new Uint8Array());
    expect(
      dsn.ok &&
        dsn.value.deliveryStatus.recipients.map((r) => [r.finalRecipient.value, r.status, r.diagnosticCode?.type]),
    ).toEqual([
      ["bob@b.example", "5.2.1", "smtp"],
      ["carol@b.example", "4.2.2", "x-local"],
    ]);
  });

  it("POST-12, G17: a replay delivers nothing and so schedules no second DSN", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { failAfterAcceptance: [failBob] } }));
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    await h.deliver({ idempotencyKey: "once", message });
    await h.deliver({ idempotencyKey: "once", message });
    await h.clock.advance(0);
    expect(h.outbox).toHaveLength(1);
  });

  it("G17: without an outbound side the failure is traced and nothing is sent", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { failAfterAcceptance: [failBob] } }), {
      outbound: undefined,
    });
    await h.deliver();
    await h.clock.advance(0);
    expect(h.trace.named("failure.after-acceptance")).toHaveLength(1);
  });

  it("EVT-2, ENV-3, AUTH-4: the DSN is a normal message: b.example's sender can deliver it to a.example with a null from", async () => {
    const b = await createReceiverHarness((c) => ({ ...c, policy: { failAfterAcceptance: [failBob] } }));
    await b.deliver();
    await b.clock.advance(0);
    const dsn = b.outbox[0];
    expect(dsn).toBeDefined();
    if (dsn === undefined) return;
    // a.example's receiver, trusting b.example's key.
    const a = await createReceiverHarness((c) => ({
      ...c,
      domains: ["a.example"],
      mailboxes: [{ address: "alice@a.example" }],
    }));
    const bKey = await createTestSender("b.example");
    a.resolver.setTxt(bKey.keyid, [bKey.keyRecord]);
    const request = await signedDelivery({
      from: dsn.from,
      to: dsn.to,
      message: dsn.message,
      key: bKey.privateKey,
      keyid: bKey.keyid,
      createdS: a.clock.nowS(),
      idempotencyKey: "dsn-1",
    });
    const response = await a.receiver(request);
    expect(response.status).toBe(200);
    expect(a.store.messages("alice@a.example")[0]?.message).toEqual(dsn.message);
  });
});

describe("buildFailureDsn", () => {
  const input = {
    reportingDomain: "b.example",
    to: "alice@a.example",
    recipients: [failBob],
    message: textMessage({ from: "alice@a.example", to: ["bob@b.example"] }),
    arrivalMs: Date.UTC(2026, 0, 15, 9, 0, 0),
    nowMs: Date.UTC(2026, 0, 15, 9, 5, 0),
    deliveryId: "a.example/key-1@1768467600000",
  };

  it("EVT-4: the same delivery gives the same DSN bytes (Message-ID and boundary derive from it)", async () => {
    expect(await buildFailureDsn(input)).toEqual(await buildFailureDsn(input));
    expect(await buildFailureDsn(input)).not.toEqual(await buildFailureDsn({ ...input, deliveryId: "other" }));
  });

  it("EVT-4: the DSN carries Arrival-Date and Last-Attempt-Date from the Clock", async () => {
    const dsn = await parseDsn(await buildFailureDsn(input));
    expect(dsn.ok && dsn.value.deliveryStatus.arrivalDate).toBe("Thu, 15 Jan 2026 09:00:00 +0000");
    expect(dsn.ok && dsn.value.deliveryStatus.recipients[0]?.lastAttemptDate).toBe("Thu, 15 Jan 2026 09:05:00 +0000");
  });

  it("EVT-4: diagnostics are `type; text` or plain text read as smtp", () => {
    expect(parseDiagnostic("X-Local; disk quota")).toEqual({ type: "x-local", text: "disk quota" });
    expect(parseDiagnostic("550 5.1.1 gone")).toEqual({ type: "smtp", text: "550 5.1.1 gone" });
  });

  it("EVT-4: the header block ends before the blank line; a message without a body is all header", () => {
    const text = new TextEncoder().encode("A: 1\r\nB: 2\r\n\r\nbody\r\n");
    expect(new TextDecoder().decode(headerBlock(text))).toBe("A: 1\r\nB: 2\r\n");
    const bare = new TextEncoder().encode("A: 1\r\n");
    expect(headerBlock(bare)).toEqual(bare);
  });
});
