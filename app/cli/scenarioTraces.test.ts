/**
 * Every scenario of the library (scenarios/) exports a trace that imports
 * again, with and without bodies, and that the HAR export takes.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findScenarioFiles, loadScenarioFile } from "../node/scenarioLoader.ts";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { exportHar } from "../trace/exportHar.ts";
import { exportJson } from "../trace/exportJson.ts";
import { importTrace } from "../trace/importer.ts";
import type { Trace } from "../trace/schema.ts";

/** Exported with and without bodies, the trace imports with all its events; HAR export takes it. */
function reimports(trace: Trace, file: string): void {
  for (const full of [false, true]) {
    const parsed = importTrace(exportJson(trace, { full }));
    if (!parsed.ok) throw new Error(`${file}: ${parsed.violations.map((v) => `${v.path}: ${v.message}`).join("\n")}`);
    expect(parsed.value.events).toHaveLength(trace.events.length);
  }
  expect(() => exportHar(trace), file).not.toThrow();
}

const SCENARIOS = join(import.meta.dirname, "../../scenarios");

async function runFile(name: string) {
  const load = await loadScenarioFile(join(SCENARIOS, name));
  if (!load.ok) throw new Error(load.errors.map((e) => e.message).join("\n"));
  return runLoadedScenario(load.loaded);
}

describe("the scenario library's traces", () => {
  it("each exports a trace that imports again, and HAR export takes it", async () => {
    const files = await findScenarioFiles([SCENARIOS]);
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const load = await loadScenarioFile(file);
      if (!load.ok) throw new Error(`${file}: ${load.errors.map((e) => e.message).join("\n")}`);
      const run = await runLoadedScenario(load.loaded);
      expect(run.passed, file).toBe(true);
      reimports(run.trace, file);
    }
  }, 300_000);

  it("rate-limited-then-down: the trace alone gives its two fault windows", async () => {
    const { trace } = await runFile("rate-limited-then-down.yaml");
    const start = trace.startedAtMs;
    const windows = trace.events.filter((e) => e.name === "fault.window");
    expect(windows.map((e) => [e.timeMs, e.data])).toEqual([
      [
        start,
        {
          id: "rate-limited-once",
          layer: "network",
          kind: "rate-limited",
          scope: { host: "mx.b.example", path: "/v1/messages" },
          fromMs: start,
          untilMs: start + 30_000,
          probability: 1,
          settings: { retryAfterS: 120 },
        },
      ],
      [
        start,
        {
          id: "b-down",
          layer: "network",
          kind: "connection-refused",
          scope: { host: "mx.b.example" },
          fromMs: start + 30_000,
          untilMs: null,
          probability: 1,
          settings: {},
        },
      ],
    ]);
    // The answers those faults decided cite them by id.
    const cited = new Set(trace.events.map((e) => e.data?.["fault"]).filter((f) => f !== undefined));
    expect(cited).toEqual(new Set(["rate-limited-once", "b-down"]));
  });

  it("rate-limited-then-down: the check results, read back from the exported file, name their evidence", async () => {
    const run = await runFile("rate-limited-then-down.yaml");
    const parsed = importTrace(exportJson(run.trace));
    if (!parsed.ok) throw new Error("the trace does not import");
    const { events, invariants = [], expectations = [] } = parsed.value;
    expect(invariants.length).toBeGreaterThan(0);
    expect(expectations).toHaveLength(2);
    const named = (seqs: readonly number[] | undefined) => (seqs ?? []).map((seq) => events[seq]?.name);
    const byId = new Map(invariants.map((r) => [r.id, r]));
    expect(named(byId.get("terminal-outcome")?.evidence)).toEqual(["recipient.outcome", "recipient.outcome"]);
    expect(named(byId.get("give-up-at-5-days")?.evidence)).toEqual(["delivery.bounced"]);
    expect(named(byId.get("retry-schedule")?.evidence).filter((n) => n === "timer.fired")).toHaveLength(126);
    // The bounce, then the DSN to alice and its acceptance.
    expect(named(expectations[0]?.evidence)).toEqual(["recipient.outcome"]);
    expect(events[expectations[0]?.evidence?.[0] ?? -1]?.data).toMatchObject({ outcome: "bounced", rule: "STATE-7" });
    expect(named(expectations[1]?.evidence)).toEqual(["dsn.sent", "recipient.outcome"]);
    // The same results, with their evidence, in the trace's own check events.
    const checked = events.filter((e) => e.name === "expectation.checked").map((e) => e.data?.["evidence"]);
    expect(checked).toEqual(expectations.map((r) => r.evidence));
  });

  it("gap-G7-enforced: each DNS change at the time it takes effect", async () => {
    const { trace } = await runFile("gap-G7-enforced.yaml");
    const changes = trace.events.filter((e) => e.name === "dns.changed");
    expect(changes.map((e) => [e.timeMs - trace.startedAtMs, e.data?.["name"], e.data?.["records"] === null])).toEqual([
      [3_600_000, "_svc.b.example", true],
      [9_000_000, "_svc.b.example", false],
    ]);
    // Before the first change the record was answered; after it, NXDOMAIN until the second.
    const answers = trace.events.filter((e) => e.name === "dns.answer" && e.data?.["name"] === "_svc.b.example");
    const first = changes[0]?.seq ?? 0;
    const second = changes[1]?.seq ?? 0;
    expect(answers.filter((e) => e.seq > first && e.seq < second).every((e) => e.data?.["kind"] === "nxdomain")).toBe(
      true,
    );
  });
});
