/**
 * The exports over a recorder's store (decision 0225): a large run's trace document holds its events in the
 * store, not as an array; the HAR, the Markdown report and the bundle read them from there one at a time and
 * write exactly what they wrote from the array, without building it.
 */
import { describe, expect, it } from "vitest";
import { runScenarioText } from "../sim/runScenario.ts";
import { emlTraceWithBodies, storedTrace } from "../sim/testingRuns.ts";
import { bundleText, bundleTextChunks, createBundle } from "./bundle.ts";
import { exportHar, exportHarChunks } from "./exportHar.ts";
import { leftOut, recordedBodies } from "./exportJson.ts";
import { exportMarkdown } from "./exportMarkdown.ts";
import type { Trace } from "./schema.ts";
import { heldEventsOf } from "./store.ts";

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

async function scenarioTrace(file: string): Promise<Trace> {
  const outcome = await runScenarioText(library[`../../${file}`] ?? "", { file, mailscope: "test" });
  if (!outcome.ok) throw new Error(`${file} did not load`);
  return outcome.run.trace;
}

/** The bundled scenarios the readers are compared on: retries, a fallback and checks; whole bodies (and an eml). */
const TRACES: readonly (readonly [string, () => Promise<Trace>])[] = [
  ["receiver-down-past-fallback-window", () => scenarioTrace("scenarios/receiver-down-past-fallback-window.yaml")],
  ["rate-limited-then-down", () => scenarioTrace("scenarios/rate-limited-then-down.yaml")],
  ["an eml: message with whole bodies recorded", emlTraceWithBodies],
];

/** The trace without its invariants and expectations members: the report reads the checks from the events. */
function withoutChecks(trace: Trace): Trace {
  const { invariants: _i, expectations: _e, ...rest } = trace;
  return rest;
}

describe.each(TRACES)("the exports of %s over a recorder's store", (_name, traceOf) => {
  it("the HAR is the array's, with and without bodies, and the events' array is never built", async () => {
    const trace = await traceOf();
    const stored = storedTrace(trace);
    for (const full of [false, true]) {
      const text = `${JSON.stringify(exportHar(trace, { full }), null, 2)}\n`;
      expect(`${JSON.stringify(exportHar(stored, { full }), null, 2)}\n`).toBe(text);
      // The file --har writes, a piece at a time, from the store and from the array.
      expect([...exportHarChunks(stored, { full })].join("")).toBe(text);
      expect([...exportHarChunks(trace, { full })].join("")).toBe(text);
    }
    // A run without HTTP exchanges: an empty list of entries, as JSON.stringify writes it.
    const quiet = { ...trace, events: trace.events.filter((e) => !e.name.startsWith("http.")) };
    expect([...exportHarChunks(storedTrace(quiet))].join("")).toBe(`${JSON.stringify(exportHar(quiet), null, 2)}\n`);
    expect(recordedBodies(stored)).toBe(recordedBodies(trace));
    expect(leftOut("har", stored, false)).toBe(leftOut("har", trace, false));
    expect(heldEventsOf(stored)).toBeDefined();
  });

  it("the Markdown report is the array's (checks from the members and from the events), without building it", async () => {
    const trace = await traceOf();
    const stored = storedTrace(trace);
    expect(exportMarkdown(stored, { file: "f.yaml" })).toBe(exportMarkdown(trace, { file: "f.yaml" }));
    const bare = withoutChecks(trace);
    const storedBare = storedTrace(bare);
    expect(exportMarkdown(storedBare, { maxDiagramMessages: 5 })).toBe(exportMarkdown(bare, { maxDiagramMessages: 5 }));
    expect(heldEventsOf(stored)).toBeDefined();
    expect(heldEventsOf(storedBare)).toBeDefined();
  });

  it("the bundle's text is the array's, with and without bodies, streamed without building the events", async () => {
    const trace = await traceOf();
    const stored = storedTrace(trace);
    const emls = { "mail/hello.eml": new TextEncoder().encode("Subject: hi\r\n\r\nhello\r\n") };
    for (const options of [
      { recordBodies: true, full: true, file: "f.yaml", emls },
      { recordBodies: true, passed: false },
      { recordBodies: false, full: true },
    ]) {
      const whole = bundleText(await createBundle(trace, options));
      expect([...(await bundleTextChunks(stored, options))].join("")).toBe(whole);
      expect([...(await bundleTextChunks(trace, options))].join("")).toBe(whole);
    }
    expect(heldEventsOf(stored)).toBeDefined();
  });
});
