import { describe, expect, it } from "vitest";
import { importTraceValue } from "../trace/importer.ts";
import { traceHash } from "../trace/exportJson.ts";
import { runScenarioText, UNKNOWN_VERSION } from "./runScenario.ts";
import { handleWorkerRequest } from "./worker.ts";
import { parseScenarioText } from "./scenario.ts";
import { eventBudgetOf, runawayOf } from "./world.ts";

const HAPPY = `name: happy
seed: 11
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
expectations:
  - { message: m1, recipient: bob@b.example, outcome: accepted, within: 1s }
`;

/** Rate-limited once, then down: never SMTP (ERR-23), bounce after 5 days (STATE-7). */
const FIVE_DAYS = `name: five-days
seed: 3
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: rate-limited, host: mx.b.example, path: /v1/messages, retryAfterS: 120, until: 30s }
    - { kind: connection-refused, host: mx.b.example, from: 30s }
expectations:
  - { message: m1, outcome: bounced, after: 5d, within: 5d, never: [smtp] }
  - { message: m1, outcome: dsn-received, within: 5d1m }
`;

async function run(text: string, options: Parameters<typeof runScenarioText>[1] = {}) {
  const outcome = await runScenarioText(text, { file: "scenarios/x.yaml", ...options });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  return outcome.run;
}

describe("running a scenario", () => {
  it("the trace document: scenario, seed, readings in force, version, every event, and the checks", async () => {
    const r = await run(HAPPY, { mailscope: "9.9.9" });
    const { trace } = r;
    expect(importTraceValue(trace).ok).toBe(true);
    expect(trace).toMatchObject({
      format: "mailscope-trace",
      version: 2,
      mailscope: "9.9.9",
      scenario: { name: "happy", file: "scenarios/x.yaml", source: HAPPY },
      seed: 11,
      startedAtMs: Date.UTC(2026, 0, 1),
    });
    expect(trace.readings).toEqual({
      G3: "tolerance-seconds=300",
      G7: "enforced",
      G8: "temporary-failure",
      G12: "split",
      G13: "pre-check",
      G16: "jitter=on, fallback-window=2h",
      G18: "accept",
      G19: "401",
      G26: "permanent",
      G46: "fallback-eligible",
      G47: "ignored",
    });
    expect(r.passed).toBe(true);
    expect(r.complete).toBe(true);
    expect(trace.invariants?.map((c) => c.id)).toEqual([
      "terminal-outcome",
      "no-duplicate-delivery",
      "smtp-only-where-allowed",
      "no-retry-after-permanent",
      "retry-schedule",
      "give-up-at-5-days",
      "no-dsn-about-a-dsn",
    ]);
    expect(trace.expectations).toHaveLength(1);
    // The checks are events too, at the end, at the time of the last event of the run.
    const tail = trace.events.slice(-8);
    expect(tail.map((e) => e.name)).toEqual([...Array<string>(7).fill("invariant.checked"), "expectation.checked"]);
    expect(tail[0]?.data).toMatchObject({
      id: "terminal-outcome",
      passed: true,
      rules: ["STATE-1", "STATE-7", "STATE-9", "SVC-11"],
    });
    expect(tail[0]?.timeMs).toBe(trace.events.at(-9)?.timeMs);
    expect(r.outcomes).toEqual([
      expect.objectContaining({
        message: "m1",
        recipient: "bob@b.example",
        outcome: "accepted",
        rule: "RCP-2",
        dsn: false,
      }),
    ]);
    expect(r.reproduce).toBe("mailscope run scenarios/x.yaml --seed 11");
  });

  it("the same scenario and seed give the same trace, byte for byte; --seed and --set give another", async () => {
    const first = await traceHash((await run(FIVE_DAYS)).trace);
    expect(await traceHash((await run(FIVE_DAYS)).trace)).toBe(first);
    expect(await traceHash((await run(FIVE_DAYS, { seed: 4 })).trace)).not.toBe(first);
    const jitterOff = await run(FIVE_DAYS, { readings: [["G16", "jitter=off"]] });
    expect(await traceHash(jitterOff.trace)).not.toBe(first);
    expect(jitterOff.trace.readings["G16"]).toBe("jitter=off, fallback-window=2h");
    expect(jitterOff.reproduce).toBe("mailscope run scenarios/x.yaml --seed 3 --set G16=jitter=off,fallback-window=2h");
  });

  it("STATE-7, ERR-23: rate-limited once then down: never SMTP, bounced at 5 days, DSN to alice", async () => {
    // Five virtual days on the virtual clock; how fast that runs is a bench row (cli: rate-limited-then-down, warm), not a test.
    const r = await run(FIVE_DAYS);
    expect(r.passed).toBe(true);
    expect(r.endMs - r.world.startMs).toBe(5 * 86_400_000);
    expect(r.outcomes.map((o) => [o.recipient, o.outcome, o.dsn])).toEqual([
      ["bob@b.example", "bounced", false],
      ["alice@a.example", "accepted", true],
    ]);
  });

  it("a run cut short by its horizon fails terminal-outcome, and says the run did not complete", async () => {
    const r = await run(FIVE_DAYS.replace("seed: 3", "seed: 3\nhorizon: 1h"));
    expect(r.complete).toBe(false);
    expect(r.passed).toBe(false);
    expect(r.endMs).toBe(r.world.startMs + 3_600_000);
    expect(r.invariants[0]).toEqual({
      id: "terminal-outcome",
      passed: false,
      detail: "bob@b.example of m1@a.example has no outcome when the run stopped at its horizon",
      // The evidence: the submission that has no outcome.
      evidence: r.trace.events.filter((e) => e.name === "message.submitted").map((e) => e.seq),
    });
    expect(r.outcomes[0]?.outcome).toBe("pending");
  });

  it("bad input comes back as errors, never thrown: the scenario's own, and a bad --set", async () => {
    const bad = await runScenarioText("name: x\ndomains: {}\n", { file: "x.yaml" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors[0]).toMatchObject({ file: "x.yaml", line: 2, column: 10, field: "domains" });
    const set = await runScenarioText(HAPPY, { file: "x.yaml", readings: [["G12", "sometimes"]] });
    expect(set.ok).toBe(false);
    if (!set.ok) expect(set.errors[0]?.message).toBe('G12: G12 reads "split" or "send-whole", not "sometimes"');
  });
});

describe("the worker's request handler", () => {
  it("answers a run with the trace's hash, the checks, and the trace when asked", async () => {
    const reply = await handleWorkerRequest({
      type: "run",
      id: "a",
      text: HAPPY,
      file: "scenarios/x.yaml",
      wantTrace: true,
    });
    expect(reply.type).toBe("result");
    if (reply.type !== "result") return;
    expect(reply.id).toBe("a");
    expect(reply.passed).toBe(true);
    expect(reply.trace?.mailscope).toBe(UNKNOWN_VERSION);
    expect(reply.hash).toBe(await traceHash((await run(HAPPY, { mailscope: UNKNOWN_VERSION })).trace));
  });

  it("answers a bad scenario with file:line:column errors, and a bad request with an error", async () => {
    expect(await handleWorkerRequest({ type: "run", text: "name: x\n", file: "x.yaml" })).toEqual({
      type: "invalid",
      errors: ["x.yaml:1:1: domains: is required (record)"],
    });
    expect(
      await handleWorkerRequest({ type: "stop" } as unknown as Parameters<typeof handleWorkerRequest>[0]),
    ).toMatchObject({
      type: "error",
    });
  });
});

describe("progress of long runs", () => {
  const MANY = `name: many
seed: 5
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob, carol] }
messages:
${Array.from({ length: 30 }, (_, i) => `  - { from: alice@a.example, to: [bob@b.example, carol@b.example], at: ${i * 60_000} }`).join("\n")}
`;

  it("reports virtual time, events and messages done every few events; the trace is the same as without", async () => {
    const plain = await runScenarioText(MANY);
    const seen: { virtualMs: number; events: number; messagesDone: number; messages: number; horizonMs: number }[] = [];
    const reported = await runScenarioText(MANY, { onProgress: (p) => seen.push(p), progressEvents: 2 });
    if (!plain.ok || !reported.ok) throw new Error("the scenario should load");
    expect(await traceHash(reported.run.trace)).toBe(await traceHash(plain.run.trace));
    expect(seen.length).toBeGreaterThan(5);
    for (const [i, p] of seen.entries()) {
      expect(p.messages).toBe(30);
      expect(p.horizonMs).toBe(plain.run.world.horizonMs - plain.run.world.startMs);
      if (i > 0) {
        const before = seen[i - 1] as (typeof seen)[number];
        expect(p.virtualMs).toBeGreaterThanOrEqual(before.virtualMs);
        expect(p.events).toBeGreaterThanOrEqual(before.events);
        expect(p.messagesDone).toBeGreaterThanOrEqual(before.messagesDone);
      }
    }
    expect(seen.some((p) => p.messagesDone > 0 && p.messagesDone < 30)).toBe(true);
    expect(seen.at(-1)?.messagesDone).toBe(30);
    // The checks' events (invariant.checked, expectation.checked) come after the run.
    expect(seen.at(-1)?.events).toBeLessThan(plain.run.trace.events.length);
  });
});

/**
 * A sender that (wrongly) gives its DSNs a `from` (dsnFromPostmaster): ghost@a.example writes to a mailbox
 * b.example does not have; the DSN about it goes back to ghost, whom a.example does not have either, so the
 * DSN fails too — and a DSN about that one would go to postmaster@a.example, who does not exist, and so on.
 */
const DSN_LOOP = `name: dsn-loop
seed: 5
domains:
  a.example:
    mailboxes: [alice]
    senderMisbehaviour: { dsnFromPostmaster: true }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: ghost@a.example, to: nobody@b.example }
`;

describe("a DSN never causes a DSN (DSNs about DSNs ran until memory was gone)", () => {
  it("ENV-3, EVT-4: the DSN's own failure is not reported; the run ends, and every check holds", async () => {
    const r = await run(DSN_LOOP);
    const named = (name: string) => r.trace.events.filter((e) => e.name === name);
    expect(r.error).toBeUndefined();
    expect(r.complete).toBe(true);
    expect(r.passed).toBe(true);
    const [sent, ...more] = named("dsn.sent");
    expect(more).toEqual([]);
    expect(sent?.data).toMatchObject({ messageId: "m1@a.example", to: "ghost@a.example" });
    // The DSN went out with the wrong from, failed at a.example, and its failure stopped there.
    expect(named("message.submitted")[1]?.data).toMatchObject({
      from: "postmaster@a.example",
      to: ["ghost@a.example"],
    });
    expect(named("dsn.suppressed").map((e) => e.data)).toEqual([
      { messageId: sent?.data?.["dsnMessageId"], recipients: ["ghost@a.example"], rule: "ENV-3" },
    ]);
    expect(r.invariants.find((c) => c.id === "no-dsn-about-a-dsn")).toMatchObject({
      passed: true,
      detail: "1 DSN sent, none about a DSN",
    });
  });

  it("ENV-3: a receiver's DSN about a message that was itself a DSN (a failure after accepting it) is not sent either", async () => {
    // The DSN to alice is accepted by a.example, then fails after acceptance (STATE-8).
    const text = DSN_LOOP.replace("from: ghost@a.example", "from: alice@a.example").replace(
      "    senderMisbehaviour: { dsnFromPostmaster: true }",
      "    senderMisbehaviour: { dsnFromPostmaster: true }\n    policy: { failAfterAcceptance: [{ mailbox: alice@a.example, status: 5.2.2, diagnostic: smtp; 552 full }] }",
    );
    const r = await run(text);
    const named = (name: string) => r.trace.events.filter((e) => e.name === name);
    expect(r.error).toBeUndefined();
    expect(r.complete).toBe(true);
    expect(named("failure.after-acceptance")).toHaveLength(1);
    expect(named("dsn.sent")).toHaveLength(1);
    expect(named("dsn.suppressed").map((e) => [e.domain, e.data?.["messageId"]])).toEqual([
      ["a.example", named("dsn.sent")[0]?.data?.["dsnMessageId"]],
    ]);
    expect(r.invariants.every((c) => c.passed)).toBe(true);
  });

  it("the event budget stops a run that loops anyway, with an error naming the loop; the invariant shows it", async () => {
    // Only with the engine's guard off (a test seam) does the loop go round.
    const r = await run(DSN_LOOP, { guardDsnLoops: false, eventBudget: 3_000 });
    expect(r.passed).toBe(false);
    expect(r.complete).toBe(false);
    expect(r.error).toMatch(
      /^the run was stopped at its budget of 3000 trace events: a loop of DSNs about DSNs, (\d+) messages each reporting the one before: m1@a\.example → dsn\.[0-9a-f]+@a\.example → dsn\.[0-9a-f]+@a\.example → … → dsn\.[0-9a-f]+@a\.example → dsn\.[0-9a-f]+@a\.example \(a DSN never causes a DSN: ENV-3, RFC 5321 §4\.5\.5\)$/,
    );
    const chain = Number(/, (\d+) messages/.exec(r.error ?? "")?.[1]);
    expect(chain).toBe(r.trace.events.filter((e) => e.name === "dsn.sent").length + 1);
    expect(
      r.trace.events.filter((e) => e.name !== "invariant.checked" && e.name !== "expectation.checked").length,
    ).toBeLessThan(3_100);
    const check = r.invariants.find((c) => c.id === "no-dsn-about-a-dsn");
    expect(check?.passed).toBe(false);
    expect(check?.detail).toMatch(
      /^the DSN dsn\.[0-9a-f]+@a\.example reports on dsn\.[0-9a-f]+@a\.example, itself a DSN about m1@a\.example \[ENV-3\]/,
    );
    expect(r.invariants.find((c) => c.id === "simulation")).toMatchObject({ passed: false, detail: r.error });
  });

  it("a runaway without DSNs about DSNs is named by the delivery most of its events belong to", () => {
    const event = (name: string, data: Record<string, unknown>) => ({ name, timeMs: 0, data });
    const events = [
      ...Array.from({ length: 30 }, () => event("timer.fired", { deliveryActor: "m2@a.example→b.example" })),
      ...Array.from({ length: 10 }, () => event("timer.fired", { deliveryActor: "m1@a.example→b.example" })),
      event("dsn.sent", { messageId: "m1@a.example", dsnMessageId: "dsn.1@a.example" }),
      ...Array.from({ length: 5 }, () => event("dns.query", { name: "_svc.b.example" })),
    ];
    expect(runawayOf(events)).toBe("most of them (30 of 46) are of the delivery m2@a.example→b.example");
  });

  it("the budget by default: 100,000 events, and 10,000 a message and a recipient", () => {
    expect(eventBudgetOf({ messages: [] })).toBe(100_000);
    const scenario = parseScenarioText(DSN_LOOP);
    if (!scenario.ok) throw new Error("the scenario does not parse");
    expect(eventBudgetOf(scenario.scenario)).toBe(120_000);
  });
});
