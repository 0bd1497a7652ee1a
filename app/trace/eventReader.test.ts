/**
 * The narrowing reader: a consumer reads an event's data as the catalogue types it, and a trace's data that
 * does not fit (a file written by hand, an older version) reads as absent, never as a wrong type.
 */
import { describe, expect, it } from "vitest";
import { dataOf, isEvent, readEvent } from "./eventReader.ts";
import { parseDeliveryActorId, messageOfActor } from "./deliveryIds.ts";
import { sampleTrace } from "./sampleTrace.ts";

const ended = {
  seq: 3,
  timeMs: 10,
  name: "attempt.ended",
  data: { deliveryId: "m1@a.example→b.example#1", attempt: 2, status: 503, class: "temporary", fallbackEligible: true },
};

describe("reading events by the catalogue", () => {
  it("narrows by name and reads the data typed, the same object when every field fits", () => {
    const e = readEvent(ended);
    expect(e).toBe(ended);
    if (e?.name !== "attempt.ended") throw new Error("not narrowed");
    const status: number | undefined = e.data.status;
    expect(status).toBe(503);
    expect(dataOf(ended, "attempt.ended")?.attempt).toBe(2);
    expect(dataOf(ended, "attempt.started")).toBeUndefined();
    expect(isEvent(ended, "attempt.ended")).toBe(true);
    // @ts-expect-error — no event is named attempt.endd
    expect(isEvent(ended, "attempt.endd")).toBe(false);
  });

  it("reads a field whose value does not fit its type as absent, and keeps the others (a copy)", () => {
    const odd = { ...ended, data: { ...ended.data, status: "503", attempt: -1, extra: [1] } };
    const d = dataOf(odd, "attempt.ended");
    expect(d).toEqual({ deliveryId: ended.data.deliveryId, class: "temporary", fallbackEligible: true, extra: [1] });
    expect(odd.data.status).toBe("503");
    const list = { seq: 0, timeMs: 0, name: "smtp.handoff", data: { messageId: "m", recipients: ["a", 2] } };
    expect(dataOf(list, "smtp.handoff")?.recipients).toBeUndefined();
    expect(dataOf({ name: "dns.changed", data: { name: "x", records: null } }, "dns.changed")?.records).toBeNull();
    expect(dataOf({ name: "dns.changed" }, "dns.changed")).toEqual({});
  });

  it("leaves an event of a name the catalogue does not have unread", () => {
    expect(readEvent({ name: "made.up", data: {} })).toBeUndefined();
    expect(readEvent({ name: "toString", data: {} })).toBeUndefined();
  });

  it("reads the sample trace's events as they are, but for its timer.set's reason, which is none of the catalogue's", () => {
    for (const e of sampleTrace().events) {
      if (e.name !== "timer.set") expect(readEvent(e), e.name).toBe(e);
      else expect(readEvent(e)?.data).toEqual({ deliveryActor: "d1", atMs: e.data?.["atMs"], delayMs: 60_000 });
    }
  });
});

describe("delivery actor ids", () => {
  it("split at the arrow into the message and the domain (STATE-6: a delivery is numbered after its actor)", () => {
    expect(parseDeliveryActorId("m1@a.example→b.example")).toEqual({ messageId: "m1@a.example", domain: "b.example" });
    expect(parseDeliveryActorId("d1")).toBeUndefined();
    expect(messageOfActor("m1@a.example→b.example")).toBe("m1@a.example");
    expect(messageOfActor("d1")).toBe("d1");
  });
});
