import { describe, expect, it } from "vitest";
import { defaultScenarioReadings } from "../sim/scenario.ts";
import { checkRunProperties, RUN_PROPERTIES, type JudgedEvent } from "./properties.ts";

const A = "m1@a.example→b.example";
const readings = { ...defaultScenarioReadings, retryTiming: { jitter: false, fallbackWindowS: 3600 } };

/** Events with seqs in order. */
function trace(...events: Omit<JudgedEvent, "seq">[]): JudgedEvent[] {
  return events.map((e, seq) => ({ ...e, seq }));
}
const submitted = (from: string | null = "alice@a.example") => ({
  name: "message.submitted",
  timeMs: 0,
  domain: "a.example",
  data: { messageId: "m1@a.example", from, to: ["bob@b.example"] },
});
const started = (timeMs: number, deliveryId = `${A}#1`, key = "k1", attempt = 1) => ({
  name: "attempt.started",
  timeMs,
  domain: "a.example",
  data: { deliveryId, attempt, idempotencyKey: key, recipients: ["bob@b.example"] },
});
const refused = (timeMs: number, deliveryId = `${A}#1`) => ({
  name: "attempt.ended",
  timeMs,
  domain: "a.example",
  data: { deliveryId, failure: "connection-refused", class: "temporary", fallbackEligible: true },
});
const fired = (timeMs: number) => ({ name: "timer.fired", timeMs, domain: "a.example", data: { deliveryActor: A } });
const handoff = (timeMs: number, reason = "fallback") => ({
  name: "smtp.handoff",
  timeMs,
  domain: "a.example",
  data: { messageId: "m1@a.example", recipients: ["bob@b.example"], reason },
});
const bounced = (timeMs: number) => ({
  name: "delivery.bounced",
  timeMs,
  domain: "a.example",
  data: { messageId: "m1@a.example", domain: "b.example", recipients: ["bob@b.example"] },
});

function verdict(events: JudgedEvent[], id: string) {
  const result = checkRunProperties(events, { readings, complete: true, startMs: 0 }).find((c) => c.id === id);
  if (result === undefined) throw new Error(`no result for ${id}`);
  return result;
}

describe("the whole-run properties of explore", () => {
  it("are reported in order, one result each", () => {
    const results = checkRunProperties(trace(submitted()), { readings, complete: true, startMs: 0 });
    expect(results.map((r) => r.id)).toEqual(RUN_PROPERTIES.map((p) => p.id));
    expect(results.every((r) => r.passed)).toBe(true);
  });

  it("rejected-never-smtp: a rejected recipient handed to SMTP is a violation (RCP-7, STATE-9)", () => {
    const rejected = {
      name: "recipient.result",
      timeMs: 1,
      domain: "a.example",
      data: { deliveryId: `${A}#1`, recipient: "bob@b.example", status: "rejected" },
    };
    const bad = verdict(trace(submitted(), started(0), rejected, handoff(2)), "rejected-never-smtp");
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain("[RCP-7]");
    expect(bad.evidence).toEqual([2, 3]);
  });

  it("rejected-never-smtp: a 404 unsupported_version may go to SMTP at once (STATE-4, ERR-26)", () => {
    const unsupported = {
      name: "attempt.ended",
      timeMs: 1,
      domain: "a.example",
      data: { deliveryId: `${A}#1`, status: 404, problem: "https://x.example/problems/unsupported_version" },
    };
    expect(
      verdict(trace(submitted(), started(0), unsupported, handoff(2, "no-common-version")), "rejected-never-smtp")
        .passed,
    ).toBe(true);
  });

  it("nothing-after-give-up: a timer after the bounce is a violation (STATE-7)", () => {
    const timer = { name: "timer.set", timeMs: 5, domain: "a.example", data: { deliveryActor: A } };
    const bad = verdict(trace(submitted(), started(0), refused(0), bounced(4), timer), "nothing-after-give-up");
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain("timer.set");
    expect(verdict(trace(submitted(), started(0), refused(0), bounced(4)), "nothing-after-give-up").passed).toBe(true);
  });

  it("idempotency-keys: a replay with a new key is a violation (POST-24)", () => {
    const bad = verdict(
      trace(submitted(), started(0, `${A}#1`, "k1", 1), started(60_000, `${A}#1`, "k2", 2)),
      "idempotency-keys",
    );
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain("[POST-24]");
  });

  it("idempotency-keys: a new delivery with an old key is a violation (STATE-6, POST-27)", () => {
    const bad = verdict(
      trace(submitted(), started(0, `${A}#1`, "k1"), started(60_000, `${A}#2`, "k1", 2)),
      "idempotency-keys",
    );
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain("[STATE-6, POST-27]");
  });

  it("idempotency-keys: keys are scoped per signing domain (AUTH-5)", () => {
    const other = { ...started(0, "m2@c.example→b.example#1", "k1"), domain: "c.example" };
    expect(verdict(trace(submitted(), started(0, `${A}#1`, "k1"), other), "idempotency-keys").passed).toBe(true);
  });

  it("dsn-for-every-bounce: a bounce no DSN reports is a violation, unless the sender is null (EVT-3)", () => {
    expect(verdict(trace(submitted(), started(0), refused(0), bounced(4)), "dsn-for-every-bounce").passed).toBe(false);
    expect(verdict(trace(submitted(null), started(0), refused(0), bounced(4)), "dsn-for-every-bounce").passed).toBe(
      true,
    );
    const dsn = {
      name: "dsn.sent",
      timeMs: 4,
      domain: "a.example",
      data: { messageId: "m1@a.example", recipients: ["bob@b.example"], reason: "bounced" },
    };
    expect(verdict(trace(submitted(), started(0), refused(0), bounced(4), dsn), "dsn-for-every-bounce").passed).toBe(
      true,
    );
  });

  it("fallback-at-window-end: an attempt at the window's end, every one fallback-eligible, is the last over the service (STATE-3)", () => {
    const H = 3_600_000;
    const base = [submitted(), started(0), refused(0), fired(H), started(H, `${A}#1`, "k1", 2), refused(H)];
    const bad = verdict(
      trace(...base, fired(2 * H), started(2 * H, `${A}#1`, "k1", 3), refused(2 * H)),
      "fallback-at-window-end",
    );
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain("attempt 2 at +1:00:00");
    expect(bad.detail).toContain("[STATE-3]");
    expect(verdict(trace(...base, handoff(H)), "fallback-at-window-end").passed).toBe(true);
    // An attempt just before the end may be retried.
    const early = [
      submitted(),
      started(0),
      refused(0),
      fired(H - 1),
      started(H - 1, `${A}#1`, "k1", 2),
      refused(H - 1),
    ];
    expect(
      verdict(trace(...early, fired(2 * H), started(2 * H, `${A}#1`, "k1", 3)), "fallback-at-window-end").passed,
    ).toBe(true);
  });
});
