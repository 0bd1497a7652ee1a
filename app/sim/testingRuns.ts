/** For tests: runs of the tests' scenarios (app/sim/testing.ts), as `mailscope run` makes them. */
import { runScenarioText, type ScenarioRun } from "./runScenario.ts";
import { emlReader } from "./scenario.ts";
import { EML_BYTES, EML_PATH, EML_SCENARIO } from "./testing.ts";
import type { TraceEvent } from "../ports.ts";
import { createRecorder, type Recorder } from "../trace/recorder.ts";
import type { RecordedEvent, Trace } from "../trace/schema.ts";
import { eventsOf } from "../trace/store.ts";

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

/** A recorder that recorded `events` again, in order: its store holds them, never built as an array. */
export function recorderOf(events: Iterable<RecordedEvent>): Recorder {
  const recorder = createRecorder({ strict: false });
  for (const e of events) {
    recorder.emit({
      name: e.name,
      timeMs: e.timeMs,
      ...(e.domain !== undefined && { domain: e.domain }),
      ...(e.data !== undefined && { data: e.data }),
    } as TraceEvent);
  }
  return recorder;
}

/**
 * `trace` as a large run's document (decision 0195): the same members and events, the events held by
 * `recorder`'s store (by default one that recorded them again) and not built as an array until a reader
 * reads `events` (`heldEventsOf` says whether one did). A small run's events are built once for its checks.
 */
export function storedTrace(trace: Trace, recorder: Recorder = recorderOf(eventsOf(trace))): Trace {
  return recorder.toTrace({
    mailscope: trace.mailscope,
    scenario: trace.scenario,
    seed: trace.seed,
    readings: trace.readings,
    ...(trace.constants !== undefined && { constants: trace.constants }),
    startedAtMs: trace.startedAtMs,
    ...(trace.invariants !== undefined && { invariants: trace.invariants }),
    ...(trace.expectations !== undefined && { expectations: trace.expectations }),
  });
}

/** `run` as a large run leaves it: its trace and its world's recorder as {@link storedTrace}'s. */
export function asLargeRun(run: ScenarioRun): ScenarioRun {
  const recorder = recorderOf(run.world.recorder.iterate());
  return { ...run, trace: storedTrace(run.trace, recorder), world: { ...run.world, recorder } };
}
