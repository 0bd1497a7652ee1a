/**
 * The workspace machine: the document open and the view on screen, as the user opens files, fails to open
 * one, compares and sweeps (the moves a user makes by mistake too: a broken file after a bundle, Back from a
 * Compare that came from a sweep).
 */
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { Bundle } from "../../../app/trace/bundle.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import type { CompareBase, CompareSide } from "../model/compare.ts";
import { workspaceMachine, type WorkspaceEvent } from "./workspace.ts";

const base = { name: "happy-path", text: "name: happy-path", file: "happy-path.yaml" } as unknown as CompareBase;
const bundle = { traceHash: "abc" } as unknown as Bundle;
const trace = { events: [] } as unknown as Trace;
const sides = [{ title: "a" }, { title: "b" }] as unknown as readonly [CompareSide, CompareSide];

function after(...events: WorkspaceEvent[]) {
  const actor = createActor(workspaceMachine).start();
  for (const e of events) actor.send(e);
  return actor.getSnapshot();
}

describe("the workspace machine", () => {
  it("starts with nothing open, in the run view (the welcome pane)", () => {
    expect(after()).toMatchObject({ value: "empty", context: { view: "run", error: undefined, exploring: false } });
  });

  it("a bundle opens as its trace with its panel; the next trace has no panel", () => {
    const s = after({ type: "SHOW", view: "rules" }, { type: "OPEN_BUNDLE", bundle, file: "b.msbundle" });
    expect(s).toMatchObject({ value: "bundle", context: { view: "run", bundle: { bundle, file: "b.msbundle" } } });
    expect(after({ type: "OPEN_BUNDLE", bundle, file: "b.msbundle" }, { type: "OPEN_TRACE" })).toMatchObject({
      value: "trace",
      context: { bundle: undefined },
    });
  });

  it("a file that cannot be opened shows its error and nothing of the bundle before it; the next file clears it", () => {
    const failed = after(
      { type: "OPEN_BUNDLE", bundle, file: "b.msbundle" },
      { type: "CANNOT_OPEN", message: "x: bad" },
    );
    expect(failed).toMatchObject({ value: "failed", context: { error: "x: bad", bundle: undefined, view: "run" } });
    expect(after({ type: "CANNOT_OPEN", message: "x: bad" }, { type: "OPEN_SCENARIO" })).toMatchObject({
      value: "scenario",
      context: { error: undefined },
    });
  });

  it("an error that is not a file's keeps the document open", () => {
    expect(after({ type: "OPEN_SCENARIO" }, { type: "FAIL", message: "not saved" })).toMatchObject({
      value: "scenario",
      context: { error: "not saved" },
    });
  });

  it("a probe's report shows in its own view and stays there while a scenario runs", () => {
    const s = after({ type: "OPEN_PROBE", file: "p.json", trace }, { type: "OPEN_SCENARIO" });
    expect(s).toMatchObject({ value: "scenario", context: { view: "run", probe: { file: "p.json", trace } } });
    expect(after({ type: "OPEN_PROBE", file: "p.json", trace }).context.view).toBe("probe");
  });

  it("Explore, once shown, stays mounted", () => {
    expect(after({ type: "SHOW", view: "explore" }, { type: "SHOW", view: "run" }).context.exploring).toBe(true);
  });

  it("Compare's Back goes to the run, or to the sweep its boundary came from", () => {
    expect(after({ type: "COMPARE", base }, { type: "BACK" }).context).toMatchObject({
      view: "run",
      compare: { base },
    });
    const boundary = after({ type: "SWEEP", base }, { type: "BOUNDARY", sides });
    expect(boundary.context).toMatchObject({ view: "compare", compare: { base, preset: sides }, sweep: base });
    expect(after({ type: "SWEEP", base }, { type: "BOUNDARY", sides }, { type: "BACK" }).context.view).toBe("sweep");
  });

  it("a boundary without a sweep does nothing", () => {
    expect(after({ type: "BOUNDARY", sides }).context).toMatchObject({ view: "run", compare: undefined });
  });
});
