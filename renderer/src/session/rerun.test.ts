import { describe, expect, it } from "vitest";
import { compareReplay, createBundle, recordedBodies, type Bundle } from "../../../app/trace/bundle.ts";
import { workerSessionPort } from "./port.ts";
import { liveWorker } from "./testing.ts";
import { rerunBundle } from "./rerun.ts";
import { scenarioTrace } from "../model/testing.ts";

describe("Re-run and compare (issue 15: an opened bundle re-run in a session of its own)", () => {
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
});
