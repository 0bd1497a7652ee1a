import { describe, expect, it } from "vitest";
import { createSenderWatch, type WatchedRequest } from "./expectations.ts";

const base = "https://b.example/problems";
const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);
const post = (atS: number, key: string, answer: WatchedRequest["answer"]): WatchedRequest => ({
  atMs: T0 + atS * 1000,
  method: "POST",
  path: "/v1/messages",
  signingDomain: "a.example",
  idempotencyKey: key,
  answer,
});
const problem = (status: number, identifier: string, retryAfter?: string): WatchedRequest["answer"] => ({
  kind: "response",
  status,
  json: { type: `${base}/${identifier}`, status },
  ...(retryAfter !== undefined && { retryAfter }),
});
const results = (...entries: Record<string, unknown>[]): WatchedRequest["answer"] => ({
  kind: "response",
  status: 200,
  json: { results: entries },
});

describe("what the spec expects of a sender next, as serve's log says it", () => {
  it("RETRY-1, RETRY-7, STATE-3: a 503 with Retry-After: the same key, no earlier than the later bound, SMTP not before the window", () => {
    const watch = createSenderWatch({ clockScale: 1, problemBase: base });
    const [next] = watch.observe(post(0, "k1", problem(503, "temporary_failure", "120")));
    expect(next).toContain("temporary_failure, temporary, fallback-eligible [ERR-10]");
    expect(next).toContain(
      "the same Idempotency-Key [POST-24] no earlier than 09:02:00.000Z (Retry-After 120 s [RETRY-7])",
    );
    expect(next).toContain("SMTP not yet: from 10:00:00.000Z at the earliest");
    expect(next).toContain("give-up at 2026-01-20T09:00:00.000Z [STATE-7]");
  });

  it("RETRY-1, RETRY-3: a retry before the schedule allows is EARLY; one after it is on time", () => {
    const watch = createSenderWatch({ clockScale: 1, problemBase: base });
    watch.observe(post(0, "k1", { kind: "none", failure: "connection-reset" }));
    expect(watch.observe(post(10, "k1", { kind: "none", failure: "connection-reset" }))[0]).toMatch(
      /^sender: EARLY: attempt 2, 10 s after the last; the spec allowed it from 09:00:48\.000Z \(retry 1 of the schedule/,
    );
    expect(watch.observe(post(10 + 100, "k1", results({ recipient: "bob@b.example", status: "accepted" })))[0]).toMatch(
      /^sender: attempt 3 of this delivery, 100 s after the last: on time \(allowed from 96 s\) \[POST-24\]/,
    );
  });

  it("STATE-3, ERR-22: after an hour of request-level failures SMTP is allowed; a 429 on the way rules it out for good", () => {
    const watch = createSenderWatch({ clockScale: 1, problemBase: base });
    watch.observe(post(0, "k1", problem(503, "temporary_failure", "60")));
    expect(watch.observe(post(3600, "k1", problem(503, "temporary_failure", "60"))).at(-1)).toContain(
      "SMTP allowed now",
    );
    const other = createSenderWatch({ clockScale: 1, problemBase: base });
    other.observe(post(0, "k2", problem(429, "rate_limited", "60")));
    expect(other.observe(post(3600, "k2", problem(503, "temporary_failure"))).at(-1)).toContain(
      "never SMTP: an attempt of this delivery was not fallback-eligible [ERR-23]",
    );
  });

  it("STATE-4, STATE-9: unsupported_version allows SMTP at once; a 401 is final, and a retry of it is unexpected", () => {
    const watch = createSenderWatch({ clockScale: 1, problemBase: base });
    expect(watch.observe(post(0, "k1", problem(404, "unsupported_version")))[0]).toContain(
      "SMTP is allowed at once, even with a valid pin [STATE-4, ERR-26]",
    );
    expect(watch.observe(post(0, "k2", problem(401, "invalid_signature")))[0]).toContain(
      "invalid_signature is permanent: no retry, and never SMTP [STATE-9, ERR-23]",
    );
    expect(watch.observe(post(120, "k2", problem(401, "invalid_signature")))[0]).toMatch(
      /^sender: UNEXPECTED: attempt 2/,
    );
  });

  it("STATE-6, POST-27, RETRY-7: a deferred recipient comes back in a new delivery with a new key, after its retry_after", () => {
    const watch = createSenderWatch({ clockScale: 60, problemBase: base });
    const deferred = {
      recipient: "bob@b.example",
      status: "deferred",
      problem: { type: `${base}/mailbox_full` },
      retry_after: 300,
    };
    const [next] = watch.observe(post(0, "k1", results(deferred)));
    // 300 s of the spec's clock at ×60: 5 s on the wall clock.
    expect(next).toContain(
      "bob@b.example in a new delivery with a new Idempotency-Key no earlier than 09:00:05.000Z (5 min on the spec's clock) (retry_after 300 s [RETRY-7])",
    );
    expect(watch.observe(post(2, "k2", results({ recipient: "bob@b.example", status: "accepted" })))[0]).toMatch(
      /^sender: EARLY: bob@b\.example, deferred at .*, is back 2 min later; allowed from 09:00:05\.000Z/,
    );
    const again = createSenderWatch({ clockScale: 60, problemBase: base });
    again.observe(post(0, "k1", results(deferred)));
    expect(again.observe(post(10, "k1", results(deferred)))[0]).toContain(
      "came back under the same Idempotency-Key; a new delivery takes a new one [STATE-6, POST-27]",
    );
  });
});
