/**
 * schemas/trace.schema.json constrains each event name's `data` as
 * docs/trace-format.md describes it: real traces fit, an event missing a field
 * its name always carries, or with a value outside the table's enumeration,
 * does not.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { runLoadedScenario } from "../sim/runScenario.ts";
import { EVENT_DATA } from "../trace/eventData.ts";
import { traceEventNames } from "../trace/events.ts";
import { exportJson } from "../trace/exportJson.ts";
import { loadScenarioFile } from "../node/scenarioLoader.ts";

const schema = JSON.parse(readFileSync("schemas/trace.schema.json", "utf8")) as Record<string, unknown>;
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

async function traceOf(
  file: string,
  full = false,
): Promise<{ events: { name: string; data?: Record<string, unknown> }[] }> {
  const load = await loadScenarioFile(file);
  if (!load.ok) throw new Error(`${file} does not load`);
  const run = await runLoadedScenario(load.loaded, { recordBodies: full, mailscope: "0.0.0-test" });
  return JSON.parse(exportJson(run.trace, { full })) as { events: { name: string; data?: Record<string, unknown> }[] };
}

describe("trace.schema.json: each event name's data", () => {
  it("lists every event name of the catalogue", () => {
    expect(Object.keys(EVENT_DATA).sort()).toEqual(Object.keys(traceEventNames).sort());
  });

  it("real traces fit: a replay (with bodies), a 5-day bounce and its DSN, G46, a failure after acceptance, a vanished SVCB record", async () => {
    for (const [file, full] of [
      ["scenarios/teach-idempotent-replay-lost-response.yaml", true],
      ["scenarios/rate-limited-then-down.yaml", false],
      ["scenarios/gap-G46-alive.yaml", false],
      ["scenarios/teach-failure-after-acceptance.yaml", false],
      ["scenarios/teach-pin-vanished-svcb.yaml", false],
    ] as const) {
      const trace = await traceOf(file, full);
      expect(validate(trace), `${file}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
    }
  });

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
