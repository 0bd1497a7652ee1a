import { describe, expect, it } from "vitest";
import { outcomeRows } from "../sim/outcomeRows.ts";
import { runScenarioText } from "../sim/runScenario.ts";
import { dataOf } from "./eventReader.ts";
import { explainOutcomes, explainRecipient, judgedAnswer, smtpRuling, type Why } from "./explain.ts";
import { formatOffset } from "./offset.ts";
import { rulesCited } from "./ruleEvidence.ts";
import type { RecordedEvent, Trace } from "./schema.ts";

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

async function scenarioTrace(name: string): Promise<Trace> {
  const text = library[`../../scenarios/${name}.yaml`];
  if (text === undefined) throw new Error(`no scenarios/${name}.yaml`);
  const outcome = await runScenarioText(text, { file: `scenarios/${name}.yaml` });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
  return outcome.run.trace;
}

const RULE_IN_TEXT = /\(([A-Z]+-\d+)\)/g;

/**
 * Holds every clause of `why` to the trace: each cited event exists and is what the clause says it is (its name,
 * time, rule, attempt number); the clause's time, rules, attempts and readings are in its words and in its events.
 */
function holdToTrace(why: Why, events: readonly RecordedEvent[], startMs: number, where: string): void {
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  const readings = (events.find((e) => e.name === "message.submitted" && e.data?.["messageId"] === why.messageId)
    ?.data?.["readings"] ?? {}) as Record<string, string>;
  expect(why.explained, `${where}: ${why.text}`).toBe(true);
  expect(why.clauses.length, where).toBeGreaterThan(0);
  for (const clause of why.clauses) {
    const at = `${where}: "${clause.text}"`;
    expect(clause.evidence.length, at).toBeGreaterThan(0);
    for (const c of clause.evidence) {
      const e = bySeq.get(c.seq);
      expect(e, `${at}: event ${c.seq}`).toBeDefined();
      expect(e?.name, `${at}: event ${c.seq}`).toBe(c.name);
      expect(e?.timeMs, `${at}: event ${c.seq}`).toBe(c.timeMs);
      if (c.rule !== undefined) expect(rulesCited(e?.data), `${at}: event ${c.seq}`).toContain(c.rule);
      if (c.attempt !== undefined) expect(e?.data?.["attempt"], `${at}: event ${c.seq}`).toBe(c.attempt);
    }
    // Its time is one of its events', and written in it.
    expect(
      clause.evidence.map((c) => c.timeMs),
      at,
    ).toContain(clause.atMs);
    expect(clause.at, at).toBe(formatOffset(clause.atMs, startMs));
    expect(clause.text, at).toContain(clause.at);
    // Every rule it names, one of its events cites; it names no other.
    const named = [...clause.text.matchAll(RULE_IN_TEXT)].map((m) => m[1]);
    expect(new Set(named), at).toEqual(new Set(clause.rules));
    for (const rule of clause.rules)
      expect(
        clause.evidence.some((c) => c.rule === rule),
        `${at}: ${rule}`,
      ).toBe(true);
    // The attempts it counts are in its words and its events.
    if (clause.attempts !== undefined) {
      const [first, last] = clause.attempts;
      expect(clause.text, at).toContain(first === last ? `attempt ${first} ` : `attempts ${first}–${last} `);
      for (const n of [first, last])
        expect(
          clause.evidence.some((c) => c.attempt === n),
          `${at}: attempt ${n}`,
        ).toBe(true);
    }
    // The readings it names are the message's.
    for (const reading of clause.readings) {
      expect(clause.text, at).toContain(reading);
      const [id, ...value] = reading.split("=");
      expect(readings[id ?? ""], at).toBe(value.join("="));
    }
  }
  // SMTP ruled out: by the first attempt judged with a broken "every attempt eligible".
  if (why.smtpRuledOut !== undefined) {
    const judged = bySeq.get(why.smtpRuledOut.seq);
    expect(judged?.name, where).toBe("attempt.judged");
    expect(judged?.data?.["attempt"], where).toBe(why.smtpRuledOut.attempt);
    expect(judged?.data?.["allAttemptsFallbackEligible"], where).toBe(false);
    const earlier = events.filter(
      (e) =>
        e.name === "attempt.judged" &&
        e.data?.["deliveryActor"] === judged?.data?.["deliveryActor"] &&
        e.seq < why.smtpRuledOut!.seq,
    );
    expect(
      earlier.every((e) => e.data?.["allAttemptsFallbackEligible"] === true),
      where,
    ).toBe(true);
  }
}

describe("Why?: every outcome of every bundled scenario, held to its events", () => {
  const names = Object.keys(library).map((p) => p.replace(/^.*\/(.*)\.yaml$/, "$1"));

  it("the library has its scenarios", () => {
    expect(names.length).toBeGreaterThan(40);
  });

  for (const name of names) {
    it(name, async () => {
      const trace = await scenarioTrace(name);
      const whys = explainOutcomes(trace.events, trace.startedAtMs);
      const rows = outcomeRows(trace.events, trace.startedAtMs);
      // One explanation per recipient outcome, in the outcomes table's order, of the same outcome and time.
      expect(whys.map((w) => [w.messageId, w.recipient, w.outcome])).toEqual(
        rows.map((r) => [r.messageId, r.recipient, r.outcome]),
      );
      for (const [i, why] of whys.entries()) {
        const row = rows[i];
        expect(why.headline).toContain(row?.when ?? "?");
        holdToTrace(why, trace.events, trace.startedAtMs, `${name} ${why.messageId} ${why.recipient}`);
      }
    });
  }
});

describe("Why?: the words of each kind of ending", async () => {
  const whysOf = async (name: string) => {
    const trace = await scenarioTrace(name);
    return explainOutcomes(trace.events, trace.startedAtMs);
  };
  const find = (whys: readonly Why[], messageId: string, recipient: string): Why => {
    const found = whys.find((w) => w.messageId === messageId && w.recipient === recipient);
    if (found === undefined) throw new Error(`no ${messageId} ${recipient}`);
    return found;
  };

  it("rate-limited-then-down: bounced, SMTP ruled out at attempt 1 by the 429 (ERR-23), the give-up and the DSN", async () => {
    const bob = find(await whysOf("rate-limited-then-down"), "m1@a.example", "bob@b.example");
    expect(bob.headline).toBe("bounced at +5d 0:00:00");
    expect(bob.clauses.map((c) => c.kind)).toEqual(["attempts", "attempts", "attempts", "give-up", "dsn"]);
    expect(bob.clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:00:00 got 429 rate_limited, which is not fallback-eligible (ERR-23), so SMTP was ruled out for this message: retried over the service (STATE-5), not before its Retry-After (RETRY-7)",
      "attempts 2–6 (+0:02:00 … +0:32:31.023) got no answer (connection refused), fallback-eligible, but SMTP was ruled out at attempt 1: retried over the service until the give-up (ERR-24)",
      "attempts 7–127 (+1:03:11.061 … +4d 23:40:45.301) could not fetch the capabilities (no answer: connection refused), fallback-eligible, but SMTP was ruled out at attempt 1: retried over the service until the give-up (ERR-24)",
      "at +5d 0:00:00 the sender gave up, 5 days after the first attempt, after 127 attempts, and bounced it (STATE-7); attempt 128 would have come at +5d 0:32:20.185",
      "at +5d 0:00:00 the sender sent alice@a.example a DSN (EVT-3), accepted at +5d 0:00:00",
    ]);
    expect(bob.smtpRuledOut).toMatchObject({ attempt: 1, answer: "429 rate_limited" });
    expect(bob.clauses[2]?.attempts).toEqual([7, 127]);
    expect(bob.text.startsWith("bounced at +5d 0:00:00 — attempt 1 at +0:00:00 got 429 rate_limited")).toBe(true);
  });

  it("teach-mixed-recipient-results: accepted at once, rejected per recipient, accepted in a new delivery after a deferral, bounced after deferrals", async () => {
    const whys = await whysOf("teach-mixed-recipient-results");
    const m1 = (r: string) => find(whys, "m1@a.example", r);
    expect(m1("bob@b.example").clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:01:00: the receiver accepted it (RCP-2)",
    ]);
    expect(m1("bob@b.example").smtpRuledOut).toBeUndefined();
    expect(m1("nobody@b.example").clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:01:00: the receiver rejected it (recipient_not_found), which is final: not retried, and never SMTP (STATE-9)",
      "at +0:01:00 the sender sent alice@a.example a DSN (EVT-4), accepted at +0:01:00",
    ]);
    expect(m1("carol@b.example").clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:01:00 got deferred (rate_limited, retry_after 540 s), which never falls back to SMTP (ERR-23), so SMTP was ruled out for this message: retried as a new delivery (STATE-6), not before its retry_after (RETRY-7)",
      "attempt 2 at +0:10:00, in a new delivery (STATE-6): the receiver accepted it (RCP-2)",
    ]);
    const dave = m1("dave@b.example");
    expect(dave.headline).toBe("bounced at +5d 0:01:00");
    expect(dave.clauses.map((c) => [c.kind, c.attempts])).toEqual([
      ["attempts", [1, 1]],
      ["attempts", [2, 125]],
      ["give-up", undefined],
      ["dsn", undefined],
    ]);
    expect(dave.clauses[1]?.text).toMatch(
      /^attempts 2–125 \(\+0:10:00 … \+4d 23:12:00\) got deferred \(mailbox_full\)/,
    );
  });

  it("SMTP: at once for no common version and for no service; after the window when every attempt was fallback-eligible", async () => {
    const version = find(await whysOf("teach-no-common-version"), "m1@a.example", "bob@b.example");
    expect(version.headline).toBe("handed to SMTP (no-common-version) at +0:00:00");
    expect(version.clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:00:00 found no common version (ours v1; theirs v2): handed to SMTP at once (STATE-4); the SMTP relay accepted it",
    ]);
    const legacy = find(await whysOf("gap-G18-fail"), "m1@a.example", "bob@legacy.example");
    expect(legacy.clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:00:00 found no usable SVCB record (nxdomain): plain SMTP (SVC-11); the SMTP relay refused it",
    ]);
    const down = find(await whysOf("receiver-down-past-fallback-window"), "m1@a.example", "bob@b.example");
    expect(down.clauses.at(-1)).toMatchObject({
      kind: "smtp",
      at: "+2:03:00",
      attempts: [8, 8],
      rules: ["STATE-3"],
      readings: ["G16=jitter=off, fallback-window=7200s"],
      text: "every attempt was fallback-eligible; the fallback window of 2 h (reading G16=jitter=off, fallback-window=7200s) ended at +2:00:00, and attempt 8 at +2:03:00, the first at or after its end, could not fetch the capabilities (no answer: connection refused): handed to SMTP (STATE-3); the SMTP relay accepted it",
    });
  });

  it("a request-level 4xx: final, never SMTP, with the reading that decided (G26 permanent) and the time of a slow answer", async () => {
    const g26 = find(await whysOf("gap-G26-permanent"), "m1@a.example", "bob@b.example");
    expect(g26.clauses[0]?.text).toBe(
      "attempt 1 at +0:00:00 got 403 policy_rejected, a request-level answer for the whole delivery, which is final: not retried, and never SMTP (STATE-9) (reading G26=permanent)",
    );
    const large = find(await whysOf("gap-G13-send"), "m1@a.example", "bob@b.example");
    expect(large.clauses[0]?.text).toBe(
      "attempt 1 at +0:00:00 got 413 message_too_large at +0:02:00, a request-level answer for the whole delivery, which is final: not retried, and never SMTP (STATE-9)",
    );
  });

  it("a DSN after acceptance, and a null sender that gets no DSN", async () => {
    const after = find(await whysOf("teach-failure-after-acceptance"), "m1@a.example", "bob@b.example");
    expect(after.clauses.map((c) => c.text)).toEqual([
      "attempt 1 at +0:00:00: the receiver accepted it (RCP-2)",
      "at +0:05:00 the mailbox failed after acceptance (5.1.1), and b.example sent alice@a.example a DSN (STATE-8), accepted at +0:05:00",
    ]);
    const whys = await whysOf("error-invalid-signature");
    const dsn = whys.find((w) => w.messageId.startsWith("dsn.") && w.outcome === "rejected");
    expect(dsn?.clauses.map((c) => c.kind)).toEqual(["dsn-of", "rejected", "no-dsn"]);
    expect(dsn?.clauses.at(-1)?.text).toMatch(/^no DSN: the message's envelope sender is null \(it is a DSN itself/);
  });

  it("says what it cannot explain rather than guessing, and explains a recipient still pending", async () => {
    const trace = await scenarioTrace("rate-limited-then-down");
    // The trace cut before the bounce: bob is pending.
    const cut = trace.events.filter((e) => e.timeMs < trace.startedAtMs + 60 * 60_000);
    const pending = explainRecipient(cut, trace.startedAtMs, "m1@a.example", "bob@b.example");
    expect(pending.headline).toBe("no outcome yet");
    expect(pending.explained).toBe(true);
    expect(pending.clauses.at(-1)?.text).toBe("no outcome yet: attempt 6 at +0:32:31.023 is the latest");
    // Without its attempts' events (an edited trace), the bounce is not explained.
    const bare = trace.events.filter((e) => !["machine.started", "attempt.judged", "timer.fired"].includes(e.name));
    const bounced = explainRecipient(bare, trace.startedAtMs, "m1@a.example", "bob@b.example");
    expect(bounced.explained).toBe(false);
    expect(bounced.text).toContain("the trace does not say");
    // A message the trace never submitted.
    expect(explainRecipient(trace.events, trace.startedAtMs, "m9@a.example", "x@b.example")).toMatchObject({
      explained: false,
      outcome: "pending",
    });
  });
});

describe("an attempt.judged read by the catalogue (docs/decisions/0135)", () => {
  const judged = (data: Record<string, unknown>): RecordedEvent => ({
    seq: 7,
    timeMs: 1_000,
    name: "attempt.judged",
    domain: "a.example",
    data: { deliveryActor: "m1→b.example", attempt: 1, stage: "post", class: "temporary", posts: 1, ...data },
  });

  it("ERR-23: a 4xx answer rules SMTP out; the answer in words from its data", () => {
    const e = judged({
      status: 429,
      problem: "https://mailscope.example/problems/rate_limited",
      fallbackEligible: false,
    });
    expect(judgedAnswer(dataOf(e, "attempt.judged") ?? {})).toBe("429 rate_limited");
    expect(smtpRuling(e, 1, 0)).toMatchObject({ answer: "429 rate_limited", rule: "ERR-23", seq: 7 });
  });

  it("a hand-edited field of another type reads as absent", () => {
    const e = judged({
      status: "429",
      problem: "https://mailscope.example/problems/rate_limited",
      fallbackEligible: false,
    });
    expect(judgedAnswer(dataOf(e, "attempt.judged") ?? {})).toBe("rate_limited");
    expect(smtpRuling(e, 1, 0)?.rule).toBeUndefined();
  });
});
