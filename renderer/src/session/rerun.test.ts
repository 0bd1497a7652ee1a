import { describe, expect, it } from "vitest";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import { emlReader } from "../../../app/sim/scenario.ts";
import { compareReplay, createBundle, type Bundle } from "../../../app/trace/bundle.ts";
import { recordedBodies } from "../../../app/trace/exportJson.ts";
import { workerSessionPort } from "./port.ts";
import { liveWorker } from "./testing.ts";
import { rerunBundle } from "./rerun.ts";
import { scenarioTrace } from "../model/testing.ts";
import { EML_BYTES, EML_SCENARIO } from "../../../app/sim/testing.ts";

describe("Re-run and compare (an opened bundle re-run in a session of its own)", () => {
  it("a bundle of the app's run (bodies recorded) re-runs in a live session to the same hash: reproduced", async () => {
    const trace = await scenarioTrace("state-1-temporary-failure-retried", {
      recordBodies: true,
      readings: [["G7", "ignored"]],
      mailscope: "0.1.0",
    });
    expect(recordedBodies(trace)).toBe(true);
    const bundle = await createBundle(trace, { recordBodies: recordedBodies(trace) });
    const rerun = await rerunBundle(bundle, "0.1.0", () => workerSessionPort(liveWorker));
    expect(await compareReplay(bundle, rerun)).toEqual({ reproduced: true, hash: bundle.traceHash });
  });

  it("a scenario that no longer loads is an error that says so", async () => {
    const trace = await scenarioTrace("happy-path", { mailscope: "0.1.0" });
    const bundle: Bundle = {
      ...(await createBundle(trace, { recordBodies: false })),
      scenario: { name: "happy-path", text: "name: happy-path\ndomains: 7\n" },
    };
    await expect(rerunBundle(bundle, "0.1.0", () => workerSessionPort(liveWorker))).rejects.toThrow(
      /the bundled scenario does not load here: .*domains/,
    );
  });

  /** The trace of the eml: scenario run from its file's bytes, as `mailscope run` runs it from disk. */
  const emlTrace = async (recordBodies: boolean) => {
    const outcome = await runScenarioText(EML_SCENARIO, {
      file: "raw.yaml",
      recordBodies,
      mailscope: "0.1.0",
      readFile: emlReader({ "mail/hello.eml": EML_BYTES }),
    });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    return outcome.run.trace;
  };

  it("POST-9: a bundle of an eml: scenario re-runs with the bundled bytes: reproduced", async () => {
    const trace = await emlTrace(true);
    const bundle = await createBundle(trace, { recordBodies: true, emls: { "mail/hello.eml": EML_BYTES } });
    const starts: unknown[] = [];
    const rerun = await rerunBundle(bundle, "0.1.0", (start) => {
      starts.push(start);
      return workerSessionPort(liveWorker);
    });
    expect(starts).toMatchObject([{ type: "start", emls: { "mail/hello.eml": EML_BYTES } }]);
    expect(await compareReplay(bundle, rerun)).toEqual({ reproduced: true, hash: bundle.traceHash });
  });

  it("a bundle of an eml: scenario without the file's bytes: an error at $.emls, no session started", async () => {
    const trace = await emlTrace(false);
    const bundle = await createBundle(trace, { recordBodies: false });
    let started = false;
    await expect(
      rerunBundle(bundle, "0.1.0", () => {
        started = true;
        return workerSessionPort(liveWorker);
      }),
    ).rejects.toThrow(
      /^\$\.emls\["mail\/hello\.eml"\]: missing: the scenario's messages\[0\] takes its message from mail\/hello\.eml/,
    );
    expect(started).toBe(false);
  });
});
