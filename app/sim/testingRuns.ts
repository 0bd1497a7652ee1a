/** For tests: runs of the tests' scenarios (app/sim/testing.ts), as `mailscope run` makes them. */
import { runScenarioText } from "./runScenario.ts";
import { emlReader } from "./scenario.ts";
import { EML_BYTES, EML_PATH, EML_SCENARIO } from "./testing.ts";
import type { Trace } from "../trace/schema.ts";

/** The trace of the eml: scenario (`raw`, its message read from mail/hello.eml), whole HTTP bodies kept. */
export async function emlTraceWithBodies(): Promise<Trace> {
  const outcome = await runScenarioText(EML_SCENARIO, {
    file: "raw.yaml",
    recordBodies: true,
    readFile: emlReader({ [EML_PATH]: EML_BYTES }),
  });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  return outcome.run.trace;
}
