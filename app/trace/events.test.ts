/**
 * The event catalogue (events.ts) is the one definition of every trace event: what a producer emits is
 * checked against it when it compiles (the `@ts-expect-error` lines below fail the typecheck if the
 * mistake they carry compiles), and what a run emits against it when it runs (app/cli/traceSchema.test.ts).
 */
import { describe, expect, it } from "vitest";
import { traceEvent } from "../ports.ts";
import { closestEventName, eventMisfits, isTraceEventName, traceEventNames, traceEvents, type Emit } from "./events.ts";
import { createRecorder } from "./recorder.ts";

describe("the event catalogue", () => {
  it("names every event once, dotted and lowercase, each with who emits it and what it says", () => {
    for (const [name, def] of Object.entries(traceEvents)) {
      expect(name).toMatch(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/);
      expect(def.by, name).not.toBe("");
      expect(def.about, name).not.toBe("");
      expect(traceEventNames[name as keyof typeof traceEvents]).toBe(def.about);
    }
    expect(isTraceEventName("attempt.ended")).toBe(true);
    expect(isTraceEventName("attempt.endd")).toBe(false);
    expect(closestEventName("attempt.endd")).toBe("attempt.ended");
  });

  it("says what in an event its definition does not allow (for whole traces: a run's, a probe's)", () => {
    expect(eventMisfits({ name: "dns.query", data: { name: "_svc.b.example", type: "SVCB" } })).toEqual([]);
    expect(eventMisfits({ name: "dns.qery", data: {} })).toEqual(["dns.qery: no such event in the catalogue"]);
    const misfits = eventMisfits({ name: "dns.query", data: { name: 1, type: "SVCB", extra: true } });
    expect(misfits).toHaveLength(2);
    expect(misfits[0]).toMatch(/^dns\.query\.name: /);
    expect(misfits[1]).toBe("dns.query.extra: not in the catalogue");
  });

  it("types emit: a misspelt event name, a misspelt field, a missing field or a value of another type does not compile", () => {
    const r = createRecorder({ strict: false });
    const ended = { deliveryId: "d1", attempt: 1, class: "results", fallbackEligible: false } as const;
    r.emit({ name: "attempt.ended", timeMs: 0, data: ended });
    // @ts-expect-error — no event is named attempt.endd
    r.emit({ name: "attempt.endd", timeMs: 0, data: ended });
    // @ts-expect-error — attempt.ended has no field fallbackEligable
    r.emit({ name: "attempt.ended", timeMs: 0, data: { ...ended, fallbackEligable: true } });
    const { fallbackEligible: _dropped, ...withoutOne } = ended;
    // @ts-expect-error — attempt.ended always says whether it is fallbackEligible
    r.emit({ name: "attempt.ended", timeMs: 0, data: withoutOne });
    // @ts-expect-error — an HTTP status is a number
    r.emit({ name: "attempt.ended", timeMs: 0, data: { ...ended, status: "200" } });
    const outcome = { messageId: "m", recipient: "r", outcome: "delivered", rule: "X" } as const;
    // @ts-expect-error — recipient.outcome's outcome is one of the catalogue's
    r.emit({ name: "recipient.outcome", timeMs: 0, data: outcome });
    expect(r.events.map((e) => e.name)).toEqual([
      "attempt.ended",
      "attempt.endd",
      "attempt.ended",
      "attempt.ended",
      "attempt.ended",
      "recipient.outcome",
    ]);
  });

  it("types a producer's own emit(name, data) the same way, without the fields it adds itself", () => {
    const r = createRecorder();
    const emit: Emit<"pin.set" | "pin.removed", "domain"> = (name, data) =>
      r.emit(traceEvent(name, 5, { domain: "b.example", ...data } as never, "a.example"));
    emit("pin.removed", { reason: "absent", rule: "CAP-11" });
    // @ts-expect-error — this emit does not emit dns.query
    emit("dns.query", { name: "b.example", type: "SVCB" });
    // @ts-expect-error — pin.removed has no field reasons
    emit("pin.removed", { reasons: "absent" });
    expect(r.events).toEqual([
      {
        seq: 0,
        timeMs: 5,
        name: "pin.removed",
        domain: "a.example",
        data: { domain: "b.example", reason: "absent", rule: "CAP-11" },
      },
      {
        seq: 1,
        timeMs: 5,
        name: "dns.query",
        domain: "a.example",
        data: { domain: "b.example", name: "b.example", type: "SVCB" },
      },
      { seq: 2, timeMs: 5, name: "pin.removed", domain: "a.example", data: { domain: "b.example", reasons: "absent" } },
    ]);
  });
});
