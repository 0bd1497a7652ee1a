/**
 * The invariant checkers: they pass on real runs, and each one catches the
 * fault it is there for when a real trace is bent to contain it (the event a
 * buggy sender or receiver would have left).
 */
import { describe, expect, it } from "vitest";
import { checkInvariants, fallbackEligibleEnding, permanentEnding, type CheckedEvent } from "./invariants.ts";
import { runScenarioText } from "./runScenario.ts";
import { defaultScenarioReadings, type ScenarioReadings } from "./scenario.ts";

const DOMAINS = `domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob, carol]
`;

async function trace(
  body: string,
  seed?: number,
): Promise<{ events: CheckedEvent[]; readings: ScenarioReadings; startMs: number }> {
  const outcome = await runScenarioText(`name: t\n${DOMAINS}${body}`, seed === undefined ? {} : { seed });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  const events = outcome.run.world.recorder.events.filter((e) => !e.name.endsWith(".checked"));
  return {
    events: events.map((e) => ({ ...e, data: { ...e.data } })),
    readings: outcome.run.world.readings,
    startMs: outcome.run.world.startMs,
  };
}

/** The runs here submit their first message at the run's start, unless `startMs` says where the run started. */
function verdict(
  events: readonly CheckedEvent[],
  id: string,
  readings = defaultScenarioReadings,
  complete = true,
  startMs = events[0]?.timeMs ?? 0,
) {
  const result = checkInvariants(events, { readings, complete, startMs }).find((r) => r.id === id);
  if (result === undefined) throw new Error(`no invariant ${id}`);
  return result;
}

const HAPPY = "messages:\n  - { from: alice@a.example, to: [bob@b.example, carol@b.example] }\n";
const DOWN_3H = `readings: { G16: jitter=off }
messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: connection-refused, host: mx.b.example, until: 3h }
`;
const RATE_LIMITED_THEN_DOWN = `messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: rate-limited, host: mx.b.example, path: /v1/messages, retryAfterS: 120, until: 30s }
    - { kind: connection-refused, host: mx.b.example, from: 30s }
`;

const without = (events: CheckedEvent[], pick: (e: CheckedEvent) => boolean): CheckedEvent[] => {
  const i = events.findIndex(pick);
  return events.filter((_, j) => j !== i);
};

describe("invariants hold on real runs", () => {
  it("nothing to judge reads as nothing, not as a claim about zero cases ('0 bounces, each at 5 days')", async () => {
    const { events, readings, startMs } = await trace(HAPPY);
    const details = new Map(
      checkInvariants(events, { readings, complete: true, startMs }).map((r) => [r.id, r.detail]),
    );
    expect(details.get("smtp-only-where-allowed")).toBe("no hand-off to SMTP");
    expect(details.get("no-retry-after-permanent")).toBe("no permanent answer");
    expect(details.get("retry-schedule")).toBe("no retry (jitter on)");
    expect(details.get("give-up-at-5-days")).toBe("no bounce; no attempt after give-up at 5 days");
    expect(details.get("no-dsn-about-a-dsn")).toBe("no DSN sent");
  });

  it("every invariant passes on a happy path, a fallback and a 5-day bounce", async () => {
    for (const body of [HAPPY, DOWN_3H, RATE_LIMITED_THEN_DOWN]) {
      const { events, readings, startMs } = await trace(body);
      const results = checkInvariants(events, { readings, complete: true, startMs });
      expect(results.map((r) => r.id)).toEqual([
        "terminal-outcome",
        "no-duplicate-delivery",
        "smtp-only-where-allowed",
        "no-retry-after-permanent",
        "retry-schedule",
        "give-up-at-5-days",
        "no-dsn-about-a-dsn",
      ]);
      expect(results.filter((r) => !r.passed)).toEqual([]);
    }
  });
});

describe("terminal-outcome (STATE-1, STATE-7, STATE-9)", () => {
  it("a recipient without an outcome fails: stuck when nothing was left, pending at the horizon otherwise", async () => {
    const { events } = await trace(HAPPY);
    const missing = without(
      events,
      (e) => e.name === "recipient.outcome" && e.data?.["recipient"] === "carol@b.example",
    );
    expect(verdict(missing, "terminal-outcome").detail).toBe(
      "carol@b.example of m1@a.example has no outcome, yet nothing was left to run (a delivery is stuck)",
    );
    expect(verdict(missing, "terminal-outcome", defaultScenarioReadings, false).detail).toBe(
      "carol@b.example of m1@a.example has no outcome when the run stopped at its horizon",
    );
  });

  it("two outcomes for one recipient fail", async () => {
    const { events } = await trace(HAPPY);
    const outcome = events.find((e) => e.name === "recipient.outcome") as CheckedEvent;
    expect(
      verdict([...events, { ...outcome, data: { ...outcome.data, outcome: "smtp" } }], "terminal-outcome"),
    ).toMatchObject({
      passed: false,
      detail: "bob@b.example of m1@a.example has 2 outcomes",
    });
  });
});

describe("no-duplicate-delivery (POST-12)", () => {
  it("POST-12: a lost answer is retried with the same key and replayed: the mailbox holds the message once", async () => {
    const { events } = await trace(
      `${HAPPY}faults:\n  network:\n    - { kind: connection-reset, phase: response, host: mx.b.example, path: /v1/messages, until: 30s }\n`,
    );
    expect(events.some((e) => e.name === "idempotency.replay")).toBe(true);
    expect(verdict(events, "no-duplicate-delivery")).toMatchObject({ passed: true });
  });

  it("the same Message-ID stored twice in one mailbox fails", async () => {
    const { events } = await trace(HAPPY);
    const delivered = events.find((e) => e.name === "mailbox.delivered") as CheckedEvent;
    expect(verdict([...events, delivered], "no-duplicate-delivery").detail).toBe(
      "bob@b.example received <m1@a.example> more than once",
    );
  });
});

describe("smtp-only-where-allowed (STATE-3, STATE-4, ERR-22, ERR-23)", () => {
  it("STATE-3: a fallback is judged against the window in force: 2 h passes, 3 h fails", async () => {
    const { events, readings } = await trace(DOWN_3H);
    expect(verdict(events, "smtp-only-where-allowed", readings).passed).toBe(true);
    const longer = { ...readings, retryTiming: { jitter: false, fallbackWindowS: 3 * 3600 } };
    expect(verdict(events, "smtp-only-where-allowed", longer).detail).toBe(
      "m1@a.example→b.example: handed to SMTP (fallback) at +2:03:00, after an attempt made at +2:03:00, before the 180-minute fallback window ended [STATE-3, ERR-22]",
    );
  });

  it("STATE-3: an attempt made before the window's end that ends after it does not allow the fallback; the next attempt does", async () => {
    // Refused throughout, except the attempt at +1:03, which waits an hour for its answer: made before the
    // 2-hour window ended, over after it. The states table judges an attempt by when it is made.
    const { events, readings } = await trace(`readings: { G16: jitter=off }
messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: timeout, host: mx.b.example, afterMs: 3600000, from: 62m, until: 64m }
    - { kind: connection-refused, host: mx.b.example, until: 5h }
`);
    const starts = events
      .filter((e) => e.name === "timer.fired" || e.name === "message.submitted")
      .map((e) => e.timeMs);
    const t0 = starts[0] ?? 0;
    const at = (e: CheckedEvent | undefined) => ((e?.timeMs ?? 0) - t0) / 60_000;
    // The engine: the seventh attempt (+63 min) ends at +123 min, after the window; it is retried, not handed
    // over, and the retry (60 minutes after the seventh attempt's start) is the attempt that hands over.
    expect(starts.map((t) => (t - t0) / 60_000)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    const handOff = events.find((e) => e.name === "smtp.handoff");
    expect(at(handOff)).toBe(123);
    expect(
      events.filter((e) => e.name === "attempt.ended" || e.name === "capabilities.invalid").length,
    ).toBeGreaterThanOrEqual(8);
    expect(verdict(events, "smtp-only-where-allowed", readings).passed).toBe(true);
    // The checker: the same hand-off right after the seventh attempt (the eighth taken out) is too early,
    // though that attempt ended after the window.
    const eighth = events.findLast((e) => e.name === "timer.fired") as CheckedEvent;
    const i = events.indexOf(eighth);
    const tooEarly = [
      ...events.slice(0, i),
      ...events.slice(i).filter((e) => e.name === "smtp.handoff" || e.name === "recipient.outcome"),
    ];
    expect(verdict(tooEarly, "smtp-only-where-allowed", readings).detail).toBe(
      "m1@a.example→b.example: handed to SMTP (fallback) at +2:03:00, after an attempt made at +1:03:00, before the 120-minute fallback window ended [STATE-3, ERR-22]",
    );
  });

  it("ERR-22, ERR-23: a hand-off after a 4xx temporary_failure fails: only a request-level 5xx or no answer is fallback-eligible", async () => {
    const { events, readings } = await trace(DOWN_3H);
    expect(verdict(events, "smtp-only-where-allowed", readings).passed).toBe(true);
    // One of the refused attempts answered instead, 400 with a temporary_failure problem (a receiver's mix-up, G43).
    const ended = events.find((e) => e.name === "capabilities.invalid" || e.name === "attempt.ended") as CheckedEvent;
    const bent = events.map((e) =>
      e === ended
        ? {
            ...e,
            name: "attempt.ended",
            data: { deliveryId: "m1@a.example→b.example#1", status: 400, problem: "https://p/temporary_failure" },
          }
        : e,
    );
    expect(verdict(bent, "smtp-only-where-allowed", readings).detail).toContain(
      "though attempt 1 was not fallback-eligible (answer 400 temporary_failure) [ERR-23]",
    );
  });

  it("ERR-23: a hand-off after a 429 (an authenticated answer) fails, whatever the reason given", async () => {
    const { events } = await trace(RATE_LIMITED_THEN_DOWN);
    const last = events.at(-1) as CheckedEvent;
    const handOff = (reason: string): CheckedEvent => ({
      name: "smtp.handoff",
      timeMs: last.timeMs,
      domain: "a.example",
      data: { messageId: "m1@a.example", recipients: ["bob@b.example"], reason },
    });
    const bounced = events.findIndex((e) => e.name === "delivery.bounced");
    const withHandOff = (reason: string): CheckedEvent[] => [
      ...events.slice(0, bounced),
      handOff(reason),
      ...events.slice(bounced),
    ];
    expect(verdict(withHandOff("fallback"), "smtp-only-where-allowed").detail).toContain(
      "though attempt 1 was not fallback-eligible (answer 429 rate_limited) [ERR-23]",
    );
    expect(verdict(withHandOff("no-common-version"), "smtp-only-where-allowed").detail).toContain(
      "handed to SMTP for no common version at +120:00:00, but the last attempt showed none [STATE-4]",
    );
    expect(verdict(withHandOff("no-service"), "smtp-only-where-allowed").detail).toContain(
      "the last attempt found an endpoint",
    );
  });

  it("STATE-4: no common version hands over at once; G6: no SVCB record too; both pass", async () => {
    const run = await runScenarioText(
      `name: v2\ndomains:\n  a.example: { mailboxes: [alice] }\n  b.example: { mailboxes: [bob], capabilities: { versions: [v2] } }\n  c.example: { receiver: none }\nmessages:\n  - { from: alice@a.example, to: [bob@b.example, carol@c.example] }\n`,
    );
    if (!run.ok) throw new Error("invalid");
    expect(run.run.outcomes.map((o) => [o.recipient, o.outcome, o.smtpReason])).toEqual([
      ["bob@b.example", "smtp", "no-common-version"],
      ["carol@c.example", "smtp", "no-service"],
    ]);
    expect(run.run.invariants.filter((i) => !i.passed)).toEqual([]);
  });
});

describe("no-retry-after-permanent (STATE-9, RCP-7)", () => {
  it("a delivery sent again after a 401 fails; a rejected recipient sent again fails", async () => {
    const rejected = await trace(
      `${HAPPY.replace("carol@b.example", "nobody@b.example")}faults:\n  network:\n    - { kind: unavailable, host: mx.b.example, path: /v1/messages, from: 1s }\n`,
    );
    const { events } = rejected;
    expect(verdict(events, "no-retry-after-permanent").passed).toBe(true);
    const started = events.find((e) => e.name === "attempt.started") as CheckedEvent;
    const again: CheckedEvent = { ...started, timeMs: started.timeMs + 60_000 };
    expect(verdict([...events, again], "no-retry-after-permanent").detail).toBe(
      "m1@a.example→b.example: nobody@b.example sent again at +0:01:00 after it was rejected at +0:00:00 [RCP-7]",
    );
    const happy = await trace(HAPPY);
    const ended = happy.events.find((e) => e.name === "attempt.ended") as CheckedEvent;
    const as401: CheckedEvent[] = happy.events.map((e) =>
      e === ended
        ? { ...e, data: { ...e.data, status: 401, class: "permanent", problem: "https://p/invalid_signature" } }
        : e,
    );
    const first = happy.events.find((e) => e.name === "attempt.started") as CheckedEvent;
    expect(verdict([...as401, { ...first, timeMs: first.timeMs + 1000 }], "no-retry-after-permanent").detail).toBe(
      "m1@a.example→b.example#1: sent again at +0:00:01 after a permanent answer (401) at +0:00:00 [STATE-9]",
    );
  });

  it("the errors table: 4xx is permanent except rate_limited and (G26 retry) a 403 with Retry-After; 5xx and no answer are fallback-eligible", () => {
    const g26 = { policyRejectedRetryAfter: "permanent" as const };
    expect(permanentEnding({ status: 400 }, g26)).toBe(true);
    expect(permanentEnding({ status: 429, problem: "https://p/rate_limited" }, g26)).toBe(false);
    expect(permanentEnding({ status: 403, retryAfterS: 60 }, g26)).toBe(true);
    expect(permanentEnding({ status: 403, retryAfterS: 60 }, { policyRejectedRetryAfter: "retry" })).toBe(false);
    expect(permanentEnding({ sent: false }, g26)).toBe(true);
    expect(fallbackEligibleEnding({ status: 503 })).toBe(true);
    expect(fallbackEligibleEnding({ failure: "connection" })).toBe(true);
    expect(fallbackEligibleEnding({ status: 200, class: "results" })).toBe(false);
    expect(fallbackEligibleEnding({ status: 200, class: "temporary" })).toBe(true);
    expect(fallbackEligibleEnding({ status: 429 })).toBe(false);
  });
});

describe("retry-schedule (RETRY-1, RETRY-2, RETRY-3, RETRY-7, G16)", () => {
  it("G16 jitter=off: each retry exactly at 1, 2, 4 … minutes after the previous attempt; one second early fails", async () => {
    const { events, readings } = await trace(DOWN_3H);
    expect(verdict(events, "retry-schedule", readings)).toMatchObject({
      passed: true,
      detail: "7 retries, each within the schedule (jitter off)",
    });
    const third = events.filter((e) => e.name === "timer.fired")[2] as CheckedEvent;
    const early = events.map((e) => (e === third ? { ...e, timeMs: e.timeMs - 1000 } : e));
    expect(verdict(early, "retry-schedule", readings).detail).toContain(
      "attempt 4 at +0:06:59, earlier than the 240-second delay after attempt 3 at +0:03:00 [RETRY-2, G16]",
    );
  });

  it("RETRY-2: a message submitted at +1:00:00 — the texts give run times, as the timeline writes them", async () => {
    const { events, readings, startMs } = await trace(
      DOWN_3H.replace("to: bob@b.example }", "to: bob@b.example, at: 1h }").replace("until: 3h", "until: 4h"),
    );
    const third = events.filter((e) => e.name === "timer.fired")[2] as CheckedEvent;
    const early = events.map((e) => (e === third ? { ...e, timeMs: e.timeMs - 1000 } : e));
    // Attempt 3 at 3 min into the delivery is 1 h 3 min into the run: the timeline's and the log's +1:03:00.
    expect(verdict(early, "retry-schedule", readings, true, startMs).detail).toContain(
      "attempt 4 at +1:06:59, earlier than the 240-second delay after attempt 3 at +1:03:00 [RETRY-2, G16]",
    );
  });

  it("RETRY-2: the checker holds the spec's 1-hour cap, not the sender's: a retry 50 minutes after the 63-minute attempt fails", async () => {
    const { events, readings } = await trace(DOWN_3H);
    const fired = events.filter((e) => e.name === "timer.fired");
    const start = (events[0] as CheckedEvent).timeMs;
    expect(fired.map((e) => (e.timeMs - start) / 60_000)).toEqual([1, 3, 7, 15, 31, 63, 123]);
    const seventh = fired[6] as CheckedEvent;
    const capped = events.map((e) => (e === seventh ? { ...e, timeMs: start + 113 * 60_000 } : e));
    expect(verdict(capped, "retry-schedule", readings).detail).toContain(
      "attempt 8 at +1:53:00, earlier than the 3600-second delay after attempt 7 at +1:03:00 [RETRY-2, G16]",
    );
  });

  it("RETRY-3: the checker holds the spec's ±20 %: a retry at 75 % of the delay fails", async () => {
    const { events, readings } = await trace(RATE_LIMITED_THEN_DOWN);
    const fired = events.filter((e) => e.name === "timer.fired");
    const second = fired[1] as CheckedEvent;
    const early = events.map((e) => (e === second ? { ...e, timeMs: (fired[0] as CheckedEvent).timeMs + 90_000 } : e));
    expect(verdict(early, "retry-schedule", readings).detail).toContain(
      "earlier than 80 % of the 120-second delay after attempt 2",
    );
  });

  it("G16 jitter=on: a retry at 125 % of the delay fails", async () => {
    const { events, readings } = await trace(RATE_LIMITED_THEN_DOWN);
    const fired = events.filter((e) => e.name === "timer.fired");
    const second = fired[1] as CheckedEvent;
    const previousStart = (fired[0] as CheckedEvent).timeMs;
    const late = events.map((e) => (e === second ? { ...e, timeMs: previousStart + 150_000 } : e));
    expect(verdict(late, "retry-schedule", readings).detail).toContain(
      "later than 120 % of the 120-second delay after attempt 2",
    );
  });

  it("G46: a hand-off after capabilities answered 429 is allowed under fallback-eligible, not under alive", async () => {
    const { events, readings } = await trace(`readings: { G16: jitter=off }
messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: rate-limited, host: mx.b.example, path: /v1/capabilities, until: 4h }
`);
    expect(events.some((e) => e.name === "smtp.handoff")).toBe(true);
    expect(verdict(events, "smtp-only-where-allowed", readings).passed).toBe(true);
    expect(verdict(events, "smtp-only-where-allowed", { ...readings, capabilities4xx: "alive" }).detail).toContain(
      "though attempt 1 was not fallback-eligible (capabilities answered 429 (G46 alive)) [ERR-23]",
    );
  });

  it("G47 lower-bound: the attempt after a capabilities 503 with Retry-After 600 s comes no earlier than 600 s", async () => {
    const { events, readings } = await trace(`readings: { G47: lower-bound }
messages:
  - { from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: unavailable, host: mx.b.example, path: /v1/capabilities, retryAfterS: 600, until: 9m }
`);
    const first = events.find((e) => e.name === "timer.fired") as CheckedEvent;
    expect(first.timeMs - (events[0] as CheckedEvent).timeMs).toBe(600_000);
    const early = events.map((e) => (e === first ? { ...e, timeMs: e.timeMs - 60_000 } : e));
    expect(verdict(early, "retry-schedule", readings).detail).toContain("before the Retry-After of +0:10:00 [RETRY-7]");
  });

  it("RETRY-7: the attempt after a 429 with Retry-After 120 s comes no earlier than 120 s", async () => {
    const { events, readings } = await trace(RATE_LIMITED_THEN_DOWN);
    const first = events.find((e) => e.name === "timer.fired") as CheckedEvent;
    expect(first.timeMs - (events[0] as CheckedEvent).timeMs).toBe(120_000);
    const early = events.map((e) => (e === first ? { ...e, timeMs: e.timeMs - 30_000 } : e));
    expect(verdict(early, "retry-schedule", readings).detail).toBe(
      "m1@a.example→b.example: attempt 2 at +0:01:30, before the Retry-After of +0:02:00 [RETRY-7]",
    );
  });
});

describe("give-up-at-5-days (STATE-7, RETRY-6)", () => {
  it("the bounce comes exactly 5 days after the first attempt; a second late or early fails", async () => {
    const { events } = await trace(RATE_LIMITED_THEN_DOWN);
    expect(verdict(events, "give-up-at-5-days").passed).toBe(true);
    const shift = (ms: number): CheckedEvent[] =>
      events.map((e) => (e.name === "delivery.bounced" ? { ...e, timeMs: e.timeMs + ms } : e));
    expect(verdict(shift(1000), "give-up-at-5-days").detail).toBe(
      "m1@a.example→b.example: bounced at +120:00:01, later than 5 days after the first attempt [STATE-7, RETRY-6]",
    );
    expect(verdict(shift(-1000), "give-up-at-5-days").detail).toBe(
      "m1@a.example→b.example: bounced at +119:59:59, before 5 days had passed [STATE-7, RETRY-6]",
    );
  });

  it("an attempt at or after the 5-day mark fails", async () => {
    const { events } = await trace(RATE_LIMITED_THEN_DOWN);
    const bounced = events.findIndex((e) => e.name === "delivery.bounced");
    const at = (events[bounced] as CheckedEvent).timeMs;
    const extra: CheckedEvent = {
      name: "timer.fired",
      timeMs: at,
      domain: "a.example",
      data: { deliveryActor: "m1@a.example→b.example" },
    };
    const bent = [...events.slice(0, bounced), extra, ...events.slice(bounced)];
    expect(verdict(bent, "give-up-at-5-days").detail).toContain("at or after the give-up at 5 days [STATE-7]");
  });
});

describe("no-dsn-about-a-dsn (ENV-3, EVT-4)", () => {
  it("a DSN about a message that was itself a DSN fails, naming both, with both as evidence", async () => {
    const { events } = await trace(HAPPY.replace("carol@b.example", "nobody@b.example"));
    const sent = events.find((e) => e.name === "dsn.sent") as CheckedEvent;
    expect(verdict(events, "no-dsn-about-a-dsn")).toMatchObject({
      passed: true,
      detail: "1 DSN sent, none about a DSN",
      evidence: [sent.seq],
    });
    const dsnId = String(sent.data?.["dsnMessageId"]);
    const second: CheckedEvent = {
      ...sent,
      seq: 10_000,
      timeMs: sent.timeMs + 60_000,
      data: { ...sent.data, messageId: dsnId, dsnMessageId: "dsn.again@a.example", to: "postmaster@a.example" },
    };
    expect(verdict([...events, second], "no-dsn-about-a-dsn")).toMatchObject({
      passed: false,
      detail: `the DSN dsn.again@a.example reports on ${dsnId}, itself a DSN about m1@a.example [ENV-3]`,
      evidence: [sent.seq, 10_000],
    });
    // Two DSNs about the same scenario message are no loop.
    const twin: CheckedEvent = { ...sent, seq: 10_001, data: { ...sent.data, dsnMessageId: "dsn.twin@a.example" } };
    expect(verdict([...events, twin], "no-dsn-about-a-dsn").passed).toBe(true);
  });
});

describe("evidence: each result names the events behind it, by seq", () => {
  it("a passed invariant names the events it judged; a failed one those that show the failure", async () => {
    const { events } = await trace(HAPPY);
    const outcomes = events.filter((e) => e.name === "recipient.outcome").map((e) => e.seq);
    expect(outcomes).toHaveLength(2);
    expect(verdict(events, "terminal-outcome").evidence).toEqual(outcomes);

    const delivered = events.find((e) => e.name === "mailbox.delivered") as CheckedEvent;
    const copy = { ...delivered, seq: 10_000 };
    expect(verdict([...events, copy], "no-duplicate-delivery")).toMatchObject({
      passed: false,
      evidence: [delivered.seq, 10_000],
    });
  });

  it("a resend after a rejection: the rejection and the resend", async () => {
    const { events } = await trace(
      `${HAPPY.replace("carol@b.example", "nobody@b.example")}faults:\n  network:\n    - { kind: unavailable, host: mx.b.example, path: /v1/messages, from: 1s }\n`,
    );
    const rejected = events.find((e) => e.name === "recipient.result" && e.data?.["status"] === "rejected");
    const started = events.find((e) => e.name === "attempt.started") as CheckedEvent;
    const again: CheckedEvent = { ...started, seq: 10_000, timeMs: started.timeMs + 60_000 };
    expect(verdict([...events, again], "no-retry-after-permanent").evidence).toEqual([rejected?.seq, 10_000]);
  });

  it("a violation given as text alone: the events of the attempt it names and of the one before", async () => {
    const { events, readings } = await trace(DOWN_3H);
    const third = events.filter((e) => e.name === "timer.fired")[2] as CheckedEvent;
    const early = events.map((e) => (e === third ? { ...e, timeMs: e.timeMs - 1000 } : e));
    const evidence = verdict(early, "retry-schedule", readings).evidence ?? [];
    expect(evidence).toContain(third.seq);
    const named = evidence.map((seq) => events.find((e) => e.seq === seq)?.name);
    expect(named).toContain("timer.set");
    expect(named.every((n) => n !== undefined && !n.startsWith("dns."))).toBe(true);
  });
});

describe("a trace the checkers did not see start", () => {
  it("judges events of a delivery whose message.submitted is not in it, instead of throwing (STATE-1)", () => {
    const cut: CheckedEvent[] = [
      {
        seq: 0,
        name: "attempt.started",
        timeMs: 0,
        domain: "c.example",
        data: {
          deliveryId: "m2@c.example→b.example#1",
          attempt: 1,
          idempotencyKey: "k1",
          recipients: ["bob@b.example"],
        },
      },
      { seq: 1, name: "timer.set", timeMs: 0, domain: "c.example", data: { deliveryActor: "m2@c.example→b.example" } },
    ];
    expect(
      checkInvariants(cut, { readings: defaultScenarioReadings, complete: true, startMs: 0 }).every((r) => r.passed),
    ).toBe(true);
  });
});
