import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importTrace } from "../trace/importer.ts";
import { main } from "./main.ts";
import { formatOffset } from "../trace/offset.ts";
import { jsonOutcomes, parseSeed, report, runCommandAction } from "./run.ts";
import { loadScenarioFile } from "../node/scenarioLoader.ts";
import { checkInvariants } from "../sim/invariants.ts";
import { runLoadedScenario, type ScenarioRun } from "../sim/runScenario.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { exportMarkdown } from "../trace/exportMarkdown.ts";

const DAY_MS = 86_400_000;

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe("mailscope run", () => {
  it("STATE-3: prints the timeline of a fallback with +h:mm:ss offsets, the outcome and the checks; exit 0", async () => {
    const { io, out } = capture();
    expect(await runCommandAction("scenarios/receiver-down-past-fallback-window.yaml", {}, io)).toBe(0);
    const text = out.join("\n");
    expect(out[0]).toBe(
      "receiver-down-past-fallback-window (scenarios/receiver-down-past-fallback-window.yaml), seed 7",
    );
    expect(out[1]).toBe("readings: G16=jitter=off, fallback-window=2h; others default");
    expect(text).toContain("      +0:00:00  a.example  message m1@a.example from alice@a.example to bob@b.example");
    expect(text).toContain(
      "      +2:03:00  a.example  handed bob@b.example to SMTP (fallback); the relay accepted [STATE-3]",
    );
    expect(text).toMatch(
      /outcomes:\n {2}m1 +bob@b\.example +smtp \(fallback\) +\+2:03:00 +8 attempts +0 POSTs +STATE-3/,
    );
    expect(text).toContain("  ok    smtp-only-where-allowed: 1 hand-off to SMTP, each allowed");
    expect(out.at(-1)).toMatch(/^passed: all 8 checks; \d+ events; 2:03:00 of virtual time in \d+\.\d\d s$/);
  });

  it("collapses alike attempts: five days of retries read in a few lines", async () => {
    const { io, out } = capture();
    expect(await runCommandAction("scenarios/rate-limited-then-down.yaml", {}, io)).toBe(0);
    // The folded retries keep their schedule: when each started, in days past the first 24 hours.
    expect(
      out.some((l) =>
        /… the same \d+ more times, at \+2:03:52, \+2:52:05, \+3:47:01 … \+4d 21:44:43, \+4d 22:35:32; the last ending at \+4d 22:35:32\.287$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(out).toContain(
      "+4d 23:40:45.301  a.example  no attempt 128: it would come in 51m35s, after the give-up in 19m15s [STATE-7]",
    );
    expect(out).toContain(
      "     +5d 0:00:00  a.example  gave up on bob@b.example after 127 attempts: bounced [STATE-7]",
    );
    expect(out.length).toBeLessThan(60);
    // A check's detail names its times as the timeline does; the trace keeps its own text (+120:00:00).
    expect(out).toContain(
      "  ok    expectations[0]: m1 bob@b.example bounced: m1 bob@b.example: bounced at +5d 0:00:00 (STATE-7); 127 attempts, 6 POSTs, DSN received at +5d 0:00:00",
    );
    expect(out.join("\n")).not.toMatch(/\+\d{3}:\d\d:\d\d/);
    const full = capture();
    expect(await runCommandAction("scenarios/rate-limited-then-down.yaml", { full: true }, full.io)).toBe(0);
    expect(full.out.length).toBeGreaterThan(1000);
    expect(full.out.join("\n")).toContain("DNS SVCB _svc.b.example?");
  });

  it("words a step as send's progress does (app/trace/describe.ts): a failed SVCB lookup with rule and gap, a message kept back with its problem", async () => {
    const pin = capture();
    expect(await runCommandAction("scenarios/gap-G7-enforced.yaml", {}, pin.io)).toBe(0);
    expect(pin.out).toContain(
      "      +2:00:00  a.example  SVCB lookup for b.example failed (nxdomain), and a discovery pin is valid [ERR-25, G7]",
    );
    const large = capture();
    expect(await runCommandAction("scenarios/gap-G13-pre-check.yaml", {}, large.io)).toBe(0);
    expect(large.out.join("\n")).toMatch(/ {2}attempt 1: not sent: message_too_large \(permanent\) \[ERR-12\]$/m);
  });

  it("--trace, --har and --report write the exports; the trace reads back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-"));
    const { io, out } = capture();
    const files = { trace: join(dir, "t.json"), har: join(dir, "t.har"), report: join(dir, "t.md") };
    expect(await runCommandAction("scenarios/happy-path.yaml", { ...files, seed: "5" }, io)).toBe(0);
    const text = readFileSync(files.trace, "utf8");
    const trace = importTrace(text);
    expect(trace.ok).toBe(true);
    if (trace.ok) expect(trace.value.seed).toBe(5);
    // Streamed to the file, the export's own bytes: JSON.stringify's layout of it.
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    const har = JSON.parse(readFileSync(files.har, "utf8")) as { log: { entries: unknown[] } };
    expect(har.log.entries).toHaveLength(2);
    expect(readFileSync(files.report, "utf8")).toContain("mailscope run scenarios/happy-path.yaml --seed 5");
    expect(out.slice(-3)).toEqual([
      `wrote trace ${files.trace}`,
      `wrote HAR ${files.har}`,
      `wrote report ${files.report}`,
    ]);
  });

  it("the outcomes count each recipient's own attempts and POSTs, not its delivery's (teach-mixed-recipient-results)", async () => {
    const { io, out } = capture();
    expect(await runCommandAction("scenarios/teach-mixed-recipient-results.yaml", {}, io)).toBe(0);
    const row = (recipient: string) => out.find((l) => l.startsWith("  m1 ") && l.includes(` ${recipient} `));
    expect(row("bob@b.example")).toMatch(/ accepted +\+0:01:00 +1 attempt +1 POST +RCP-2$/);
    expect(row("carol@b.example")).toMatch(/ accepted +\+0:10:00 +2 attempts +2 POSTs +RCP-2$/);
    expect(row("dave@b.example")).toMatch(/ bounced +\+5d 0:01:00 +125 attempts +125 POSTs +STATE-7$/);
    expect(out.join("\n")).not.toContain("why:");
  });

  it("--explain: why each recipient got its outcome, the same words as the app's Why panel (app/trace/explain.ts)", async () => {
    const { io, out } = capture();
    expect(await runCommandAction("scenarios/rate-limited-then-down.yaml", { explain: true }, io)).toBe(0);
    const at = out.indexOf("why:");
    expect(at).toBeGreaterThan(out.indexOf("outcomes:"));
    expect(at).toBeLessThan(out.indexOf("checks:"));
    expect(out.slice(at + 1, at + 8)).toEqual([
      "  m1 bob@b.example: bounced at +5d 0:00:00",
      "    attempt 1 at +0:00:00 got 429 rate_limited, which is not fallback-eligible (ERR-23), so SMTP was ruled out for this message: retried over the service (STATE-5), not before its Retry-After (RETRY-7)  [events 3, 19, 20, 22, 23]",
      expect.stringMatching(
        /^ {4}attempts 2–6 \(\+0:02:00 … \+0:32:31\.023\) got no answer \(connection refused\), .* \(ERR-24\) {2}\[events 24, 34, 38, 39, 49 … 15 in all\]$/,
      ),
      expect.stringMatching(/^ {4}attempts 7–127 /),
      expect.stringMatching(
        /^ {4}at \+5d 0:00:00 the sender gave up, 5 days after the first attempt, after 127 attempts, and bounced it \(STATE-7\)/,
      ),
      expect.stringMatching(
        /^ {4}at \+5d 0:00:00 the sender sent alice@a\.example a DSN \(EVT-3\), accepted at \+5d 0:00:00 {2}\[events \d+, \d+\]$/,
      ),
      expect.stringMatching(/^ {2}dsn\.\S+ alice@a\.example: accepted at \+5d 0:00:00$/),
    ]);
  });

  it("--json prints a summary with the trace hash and the reproduce command", async () => {
    const { io, out } = capture();
    expect(await runCommandAction("scenarios/happy-path.yaml", { json: true, set: ["G7=ignored"] }, io)).toBe(0);
    const summary = JSON.parse(out.join("\n")) as Record<string, unknown>;
    expect(summary).toMatchObject({ scenario: "happy-path", seed: 1, passed: true, complete: true });
    expect(summary["traceHash"]).toMatch(/^[0-9a-f]{64}$/);
    expect(summary["reproduce"]).toBe("mailscope run scenarios/happy-path.yaml --seed 1 --set G7=ignored");
    const bounced = capture();
    expect(await runCommandAction("scenarios/rate-limited-then-down.yaml", { json: true }, bounced.io)).toBe(0);
    const outcomes = (JSON.parse(bounced.out.join("\n")) as { outcomes: Record<string, unknown>[] }).outcomes;
    const bob = outcomes.find((o) => o["recipient"] === "bob@b.example");
    expect(bob).toMatchObject({
      outcome: "bounced",
      at: "+5d 0:00:00",
      problem: expect.stringMatching(/\/temporary_failure$/) as unknown,
      attempts: 127,
      posts: 6,
      submittedAt: "+0:00:00",
    });
    expect((bob?.["attemptsAt"] as string[]).slice(0, 2)).toEqual(["+0:00:00", "+0:02:00"]);
    // `why`: the explanation of app/trace/explain.ts, with each clause's evidence by seq.
    const why = bob?.["why"] as { headline: string; text: string; clauses: { text: string; evidence: number[] }[] };
    expect(why.headline).toBe("bounced at +5d 0:00:00");
    expect(why.text).toMatch(/^bounced at \+5d 0:00:00 — attempt 1 at \+0:00:00 got 429 rate_limited/);
    expect(why.clauses[0]?.evidence).toEqual([3, 19, 20, 22, 23]);
  });

  it("a failed expectation: exit 1 and the reproduce command with the seed on stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-"));
    const file = join(dir, "wrong.yaml");
    writeFileSync(
      file,
      "name: wrong\ndomains:\n  a.example: { mailboxes: [alice] }\n  b.example: { mailboxes: [bob] }\nmessages:\n  - { from: alice@a.example, to: bob@b.example }\nexpectations:\n  - { outcome: bounced }\n",
    );
    const { io, out, err } = capture();
    expect(await runCommandAction(file, { seed: "abc" }, io)).toBe(1);
    expect(out.at(-1)).toMatch(/^FAILED: 1 of 8 checks failed/);
    expect(err).toEqual([`reproduce: mailscope run ${file} --seed abc`]);
  });

  it("bad input is exit 2: a scenario error with file:line:column, a bad --set, a missing file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "name: bad\ndomains:\n  a.example:\n    mailboxes: [alice]\n    G18: sometimes\n");
    const first = capture();
    expect(await runCommandAction(file, {}, first.io)).toBe(2);
    expect(first.err).toEqual([
      `${file}:5:10: domains["a.example"].G18: is "sometimes"; expected one of "accept", "fail"`,
    ]);
    const second = capture();
    expect(await runCommandAction("scenarios/happy-path.yaml", { set: ["G5=x"] }, second.io)).toBe(2);
    expect(second.err[0]).toMatch(/^mailscope run: --set G5: G5 \(SVCB record format\) is not switchable/);
    const third = capture();
    expect(await runCommandAction(join(dir, "none.yaml"), {}, third.io)).toBe(2);
    expect(third.err[0]).toBe(`${join(dir, "none.yaml")}:1:1: (file): cannot be read: no such file`);
  });

  it("an output path that cannot be written is exit 2 before the scenario is even read, not after the run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-"));
    const missing = join(dir, "missing", "t.json");
    const first = capture();
    // The scenario does not exist either: the output paths are checked first, so nothing is read or run.
    expect(await runCommandAction(join(dir, "none.yaml"), { trace: missing }, first.io)).toBe(2);
    expect(first.err).toEqual([
      `mailscope run: --trace ${missing}: cannot be written: the folder ${join(dir, "missing")} does not exist`,
    ]);
    expect(first.out).toEqual([]);
    const second = capture();
    expect(
      await runCommandAction("scenarios/happy-path.yaml", { trace: join(dir, "t.json"), har: dir }, second.io),
    ).toBe(2);
    expect(second.err).toEqual([`mailscope run: --har ${dir}: cannot be written: it is a folder`]);
    const third = capture();
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(await runCommandAction("scenarios/happy-path.yaml", { report: join(file, "r.md") }, third.io)).toBe(2);
    expect(third.err).toEqual([
      `mailscope run: --report ${join(file, "r.md")}: cannot be written: ${file} is not a folder`,
    ]);
  });

  it("is registered in the mailscope command: `run` and `check` exit with their codes", async () => {
    const log = console.log;
    const error = console.error;
    console.log = () => {};
    console.error = () => {};
    try {
      expect(await main(["run", "scenarios/happy-path.yaml"])).toBe(0);
      expect(await main(["run", "scenarios/happy-path.yaml", "--set", "G7"])).toBe(2);
      expect(await main(["check", "scenarios/happy-path.yaml"])).toBe(0);
    } finally {
      console.log = log;
      console.error = error;
    }
  });

  it("the summary of a run of 300,000 events and 100,000 recipients is printed, not a stack overflow", async () => {
    // A run long enough that a list of its events (or outcomes) spread into Math.max overflows the stack:
    // rate-limited-then-down's five days again and again, six days apart, and as many recipient rows.
    const load = await loadScenarioFile("scenarios/rate-limited-then-down.yaml");
    if (!load.ok) throw new Error("the scenario does not load");
    const run = await runLoadedScenario(load.loaded, {});
    const events: RecordedEvent[] = [];
    for (let round = 0; events.length < 300_000; round++) {
      for (const e of run.trace.events)
        events.push({ ...e, seq: events.length, timeMs: e.timeMs + round * 6 * DAY_MS });
    }
    // The summary's outcome rows come from the trace (app/sim/outcomeRows.ts): the first submission names
    // 100,000 more recipients, each a row of its own.
    const submitted = events.findIndex((e) => e.name === "message.submitted");
    const first = events[submitted];
    if (first === undefined) throw new Error("no submission");
    const to = [...((first.data?.["to"] as string[] | undefined) ?? [])];
    for (let i = 0; i < 100_000; i++) to.push(`r${i}@b.example`);
    events[submitted] = { ...first, data: { ...first.data, to } };
    const big: ScenarioRun = { ...run, trace: { ...run.trace, events }, endMs: events.at(-1)?.timeMs ?? 0 };

    const lines = report(big, "big.yaml", 0, false);
    expect(lines.at(-1)).toMatch(new RegExp(`^passed: all \\d+ checks; ${events.length} events; `));
    expect(lines.filter((l) => l.includes("@b.example") && l.includes(" r99999@b.example "))).toHaveLength(1);
    // The --json outcomes: a recipient's attempts are those made before its outcome (the first round's bounce),
    // read off the whole 300,000-event trace.
    const once = jsonOutcomes(run)[0]?.["attemptsAt"] as unknown[];
    expect(jsonOutcomes(big)[0]?.["attemptsAt"]).toHaveLength(once.length);
    // The checks and the exports of the same run.
    expect(
      checkInvariants(events, { readings: run.world.readings, complete: true, startMs: run.world.startMs }).length,
    ).toBeGreaterThan(0);
    expect(exportMarkdown(big.trace, { maxDiagramMessages: 1 })).toContain("## Outcomes");
    // Its work is the point (300,000 events through every reader), not its speed: on a shared, loaded machine
    // it took over the default minute, so it has five.
  }, 300_000);

  it("seeds and offsets", () => {
    expect(parseSeed("42")).toBe(42);
    expect(parseSeed("042x")).toBe("042x");
    expect(formatOffset(Date.UTC(2026, 0, 6, 1, 2, 3, 40), Date.UTC(2026, 0, 1))).toBe("+5d 1:02:03.040");
    expect(formatOffset(Date.UTC(2027, 0, 1), Date.UTC(2026, 0, 1))).toBe("+365d 0:00:00");
    expect(formatOffset(Date.UTC(2026, 0, 1, 23, 59, 59), Date.UTC(2026, 0, 1))).toBe("+23:59:59");
    expect(formatOffset(0, 60_000)).toBe("-0:01:00");
  });
});
