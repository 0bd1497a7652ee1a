/**
 * schemas/trace.schema.json constrains each event name's `data` as
 * docs/trace-format.md describes it: real traces fit, an event missing a field
 * its name always carries, or with a value outside the table's enumeration,
 * does not.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { eventMisfits, traceEvents } from "../trace/events.ts";
import { exportJson } from "../trace/exportJson.ts";
import type { Trace } from "../trace/schema.ts";
import { loadScenarioFile } from "../node/scenarioLoader.ts";

const schema = JSON.parse(readFileSync("schemas/trace.schema.json", "utf8")) as Record<string, unknown>;
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

type Exported = { events: { name: string; data?: Record<string, unknown> }[] };
/** Each scenario's run, with whole bodies recorded, once for the file. */
const runs = new Map<string, Promise<Trace>>();

/** `file`'s run as exported: with whole bodies (`full`) or without. */
async function traceOf(file: string, full = false): Promise<Exported> {
  let run = runs.get(file);
  if (run === undefined) {
    run = loadScenarioFile(file).then(async (load) => {
      if (!load.ok) throw new Error(`${file} does not load`);
      return (await runLoadedScenario(load.loaded, { recordBodies: true, mailscope: "0.0.0-test" })).trace;
    });
    runs.set(file, run);
  }
  return JSON.parse(exportJson(await run, { full })) as Exported;
}

const scenarioFiles = readdirSync("scenarios")
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => `scenarios/${f}`);

describe("trace.schema.json: each event name's data", () => {
  it("constrains every event name of the catalogue", () => {
    const clauses = (schema as { properties: { events: { items: { allOf: { if: unknown }[] } } } }).properties.events
      .items.allOf;
    expect(clauses.map((c) => JSON.stringify(c.if))).toEqual(
      Object.keys(traceEvents).map((name) =>
        JSON.stringify({ properties: { name: { const: name } }, required: ["name"] }),
      ),
    );
  });

  it("every bundled scenario's trace fits, with bodies and without", { timeout: 120_000 }, async () => {
    expect(scenarioFiles.length).toBeGreaterThan(40);
    for (const file of scenarioFiles) {
      for (const full of [false, true]) {
        const trace = await traceOf(file, full);
        expect(validate(trace), `${file}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      }
    }
  });

  it(
    "each event of a real run fits its name's zod definition, with every field the catalogue types",
    { timeout: 120_000 },
    async () => {
      const names = new Set<string>();
      for (const file of scenarioFiles) {
        for (const event of (await traceOf(file, true)).events) {
          expect(eventMisfits(event), file).toEqual([]);
          names.add(event.name);
        }
      }
      // The events the bundled scenarios do not emit: a probe's (app/probe/probe.test.ts checks those), the
      // world's answer to a DSN loop, a pin removed, a run off SPEC.md's numbers.
      const unseen = Object.keys(traceEvents).filter((name) => !names.has(name));
      expect(unseen.sort()).toEqual([
        "dsn.suppressed",
        "pin.removed",
        "probe.case",
        "probe.started",
        "probe.tls",
        "spec.constants",
      ]);
    },
  );

  it("an event without a field its name always carries, or with a value outside the table, does not fit", async () => {
    const trace = await traceOf("scenarios/happy-path.yaml");
    const bent = (name: string, change: (data: Record<string, unknown>) => Record<string, unknown>) => ({
      ...trace,
      events: trace.events.map((e) => (e.name === name ? { ...e, data: change({ ...e.data }) } : e)),
    });
    expect(validate(trace)).toBe(true);
    expect(validate(bent("recipient.outcome", (d) => ({ ...d, outcome: "delivered" })))).toBe(false);
    expect(validate(bent("attempt.started", ({ url: _url, ...d }) => d))).toBe(false);
    expect(validate(bent("http.response", (d) => ({ ...d, status: "200" })))).toBe(false);
    expect(validate(bent("message.submitted", (d) => ({ ...d, to: "bob@b.example" })))).toBe(false);
    expect(validate({ ...trace, events: [{ seq: 0, timeMs: 0, name: "timer.set" }] })).toBe(false);
  });
});
