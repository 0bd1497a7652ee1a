/**
 * What an opened trace file is: a trace, a bug bundle (its trace with the bundle), a probe's trace, or a file
 * that cannot be opened — said with its name and each violation's place, never a crash (bad input).
 */
import { describe, expect, it } from "vitest";
import { runProbe } from "../../../app/probe/probe.ts";
import { inProcessProbe } from "../../../app/probe/testing.ts";
import { createBundle } from "../../../app/trace/bundle.ts";
import { exportJson } from "../../../app/trace/exportJson.ts";
import { readTraceFile } from "./openedFile.ts";
import { scenarioTrace } from "./testing.ts";

describe("an opened trace file", () => {
  it("a run's trace opens as a trace; its bug bundle as the same trace with the bundle", async () => {
    const trace = await scenarioTrace("happy-path");
    const read = await readTraceFile("happy.mstrace", exportJson(trace));
    expect(read.kind).toBe("trace");
    expect(read.kind === "trace" && read.trace.events.length).toBe(trace.events.length);
    const bundle = await createBundle(trace, { recordBodies: false });
    const opened = await readTraceFile("happy.msbundle", JSON.stringify(bundle));
    expect(opened.kind).toBe("bundle");
    expect(opened.kind === "bundle" && opened.bundle.traceHash).toBe(bundle.traceHash);
  });

  it("AUTH-5: a probe's trace opens as the probe's report", async () => {
    const { options, ports } = await inProcessProbe("stale-accepted");
    const { trace } = await runProbe(options, ports);
    expect((await readTraceFile("probe.mstrace", exportJson(trace))).kind).toBe("probe");
  });

  it("a file that is not a trace, or a broken bundle, says so with the file's name and where", async () => {
    const notJson = await readTraceFile("notes.txt", "hello");
    expect(notJson).toMatchObject({ kind: "cannot-open" });
    expect(notJson.kind === "cannot-open" && notJson.message).toMatch(/^notes\.txt cannot be opened as a trace: /);
    const trace = await scenarioTrace("happy-path");
    const bundle = { ...(await createBundle(trace, { recordBodies: false })), traceHash: 42 };
    const broken = await readTraceFile("bad.msbundle", JSON.stringify(bundle));
    expect(broken.kind === "cannot-open" && broken.message).toMatch(
      /^bad\.msbundle cannot be opened as a bug bundle: /,
    );
  });
});
