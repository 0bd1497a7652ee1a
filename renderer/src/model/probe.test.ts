import { describe, expect, it } from "vitest";
import { runProbe } from "../../../app/probe/probe.ts";
import { inProcessProbe } from "../../../app/probe/testing.ts";
import { exchangeChecks, exchangeView } from "./inspector.ts";
import { caseEvents, caseRange, filterRows, isProbeTrace, probeReportOf, summaryText } from "./probe.ts";
import { sequenceOf } from "../../../app/trace/sequence.ts";

/** A probe's trace against a receiver that takes a stale signature (one MUST case fails). */
async function probeTrace() {
  const { options, ports } = await inProcessProbe("stale-accepted");
  return (await runProbe(options, ports)).trace;
}

describe("a probe's report from its trace", () => {
  it("AUTH-5: the cases, their results by grade and the failed one, read off probe.case events", async () => {
    const trace = await probeTrace();
    expect(isProbeTrace(trace.events)).toBe(true);
    const report = probeReportOf(trace.events);
    expect(report).toBeDefined();
    if (!report) return;
    expect(report.rows).toHaveLength(55);
    expect(report.counts.MUST).toEqual({ PASS: 49, FAIL: 1, SKIP: 1 });
    expect(report.counts.SHOULD).toEqual({ PASS: 3, FAIL: 0, SKIP: 0 });
    expect(summaryText(report)).toBe("55 cases: 53 PASS, 1 FAIL, 1 SKIP; 1 MUST case failed");
    const failed = filterRows(report.rows, "failed");
    expect(failed.map((r) => [r.id, r.rule, r.grade])).toEqual([["signature-stale", "AUTH-5", "MUST"]]);
    expect(failed[0]?.actual).toMatch(/^200 bob@b\.example accepted/);
    expect(filterRows(report.rows, "not-passed").map((r) => r.id)).toEqual(["signature-stale", "retry-after"]);
    expect(report.plan).toMatchObject({ cases: 55, messages: 2, mailboxes: ["bob@b.example", "carol@b.example"] });
    expect(report.receivers).toEqual([
      { origin: "https://b.example", config: expect.objectContaining({ domains: ["b.example"] }) },
    ]);
    expect(Object.keys(report.keyRecords)).toEqual(["s1._svckey.a.example"]);
  });

  it("a probe.started without a whole plan (an edited trace) gives no plan, not a plan of zeros", async () => {
    const trace = await probeTrace();
    const [started, ...rest] = trace.events;
    if (started === undefined) throw new Error("no probe.started");
    const { plan: _plan, ...withoutPlan } = started.data as Record<string, unknown>;
    const partial = { ...started, data: { ...withoutPlan, plan: { cases: 55 } } };
    const report = probeReportOf([partial, ...rest]);
    expect(report?.plan).toBeUndefined();
    expect(report?.startedSeq).toBe(started.seq);
    expect(probeReportOf([{ ...started, data: withoutPlan }, ...rest])?.plan).toBeUndefined();
    expect(probeReportOf(trace.events)?.plan?.requests).toBeGreaterThan(0);
  });

  it("POST-12, AUTH-5: a case's exchanges draw its sequence diagram, and the inspector checks them with the probe's key", async () => {
    const trace = await probeTrace();
    const report = probeReportOf(trace.events);
    const replay = report?.rows.find((r) => r.id === "replay");
    expect(replay?.exchanges).toHaveLength(2);
    const events = replay ? caseEvents(trace.events, replay) : undefined;
    const range = events ? caseRange(events) : undefined;
    expect(events && range).toBeTruthy();
    if (!events || !range || !replay || !report) return;
    const diagram = sequenceOf(events, { fromMs: range[0], toMs: range[1] }, report.startMs);
    expect(diagram.participants).toEqual(["sender a.example", "b.example"]);
    expect(diagram.rows.map((r) => `${r.kind} ${r.exchangeId ?? ""} ${r.label}`)).toEqual([
      `request ${replay.exchanges[0] ?? ""} POST /v1/messages`,
      `response ${replay.exchanges[0] ?? ""} 200`,
      `request ${replay.exchanges[1] ?? ""} POST /v1/messages`,
      `response ${replay.exchanges[1] ?? ""} 200`,
    ]);
    const lines = await exchangeChecks(trace.events, replay.exchanges[1] ?? "", report.receivers, report.keyRecords);
    const signature = lines?.find((l) => l.check === "signature");
    expect(signature?.status).toBe("pass");
    const stale = report.rows.find((r) => r.id === "signature-stale");
    const staleLines = await exchangeChecks(
      trace.events,
      stale?.exchanges[0] ?? "",
      report.receivers,
      report.keyRecords,
    );
    expect(staleLines?.find((l) => l.check === "created")).toMatchObject({ status: "fail", rule: "G3" });
  });

  it("GET-3: in force for a probe's POST, the capabilities its GET /v1/capabilities was answered with", async () => {
    const trace = await probeTrace();
    const report = probeReportOf(trace.events);
    const stale = report?.rows.find((r) => r.id === "signature-stale");
    const capabilities = report?.rows.find((r) => r.id === "capabilities-200");
    const x = exchangeView(trace.events, stale?.exchanges[0] ?? "", report?.startMs ?? 0);
    const answered = trace.events.find(
      (e) => e.name === "http.response" && e.data?.["exchangeId"] === capabilities?.exchanges[0],
    );
    expect(answered).toBeDefined();
    expect(x?.capabilities).toMatchObject({ origin: "https://b.example", how: "fetched", seq: answered?.seq });
    expect(JSON.parse(x?.capabilities?.document ?? "{}")).toMatchObject({ max_message_size: 26214400 });
    // The capabilities request itself had none in force yet.
    expect(exchangeView(trace.events, capabilities?.exchanges[0] ?? "", 0)?.capabilities).toBeUndefined();
  });

  it("a case skipped before anything was sent has no events to draw; a trace of a run is no probe's", async () => {
    const trace = await probeTrace();
    const report = probeReportOf(trace.events);
    const skipped = report?.rows.find((r) => r.id === "retry-after");
    expect(skipped && caseEvents(trace.events, skipped)).toBeUndefined();
    expect(probeReportOf(trace.events.slice(1))).toBeUndefined();
  });
});
