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

describe("the scenario library's traces", () => {
  it("each exports a trace that imports again, and HAR export takes it", async () => {
    const files = await findScenarioFiles([join(import.meta.dirname, "../../scenarios")]);
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const load = await loadScenarioFile(file);
      if (!load.ok) throw new Error(`${file}: ${load.errors.map((e) => e.message).join("\n")}`);
      const run = await runLoadedScenario(load.loaded);
      expect(run.passed, file).toBe(true);
      reimports(run.trace, file);
    }
  }, 300_000);
});
