import { describe, expect, it } from "vitest";
import { runScenarioText } from "./runScenario.ts";

// One attempt of two POSTs (101 recipients, max_recipients 100: G12 split), each taking a minute, both answered
// 429 with the same Retry-After date. Found by `mailscope explore` (retry-schedule property).
const recipients = Array.from({ length: 101 }, (_, i) => `r${String(i).padStart(3, "0")}@b.example`);
const SCENARIO = `name: retry-after-two-posts
seed: 1
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    catchAll: true
    capabilities: { max_message_size: 26214400, max_recipients: 100 }
messages:
  - id: m1
    at: 0
    from: alice@a.example
    to: [${recipients.join(", ")}]
faults:
  network:
    - id: slow
      kind: latency
      host: mx.b.example
      path: /v1/messages
      latency: 60000
    - id: busy
      kind: rate-limited
      host: mx.b.example
      path: /v1/messages
      retryAfter: "Thu, 01 Jan 2026 00:10:00 GMT"
      until: 5m
`;

describe("RETRY-7 over an attempt of several POSTs", () => {
  it("each Retry-After counts from the time its own answer came, not from the attempt's end", async () => {
    const outcome = await runScenarioText(SCENARIO, { file: "retry-after-two-posts.yaml" });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    const { trace, invariants } = outcome.run;
    const start = trace.startedAtMs;
    const ended = trace.events.filter((e) => e.name === "attempt.ended" && e.data?.["attempt"] === 1);
    // The two answers, a minute apart, name the same moment: +0:10:00 (540 s after +0:01:00, 480 s after +0:02:00).
    expect(ended.map((e) => [(e.timeMs - start) / 1000, e.data?.["retryAfterS"]])).toEqual([
      [60, 540],
      [120, 480],
    ]);
    const second = trace.events.find((e) => e.name === "attempt.started" && e.data?.["attempt"] === 2);
    // Attempt 2 at the later of the schedule (+0:01:00 ± 20 % after +0:00:00) and both answers' bounds: +0:10:00.
    // Counted from the attempt's end it came a minute late, at +0:11:00.
    expect(((second?.timeMs ?? 0) - start) / 1000).toBe(600);
    expect(invariants.filter((c) => !c.passed)).toEqual([]);
  });
});
