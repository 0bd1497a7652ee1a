/**
 * Reads a trace file back (the UI's "open trace", `mailscope check`):
 * validates the format and version first, so that the message for a file
 * that is not a trace, or a trace from a newer Mailscope, says exactly that,
 * and only then the shape, with a JSONPath for each problem.
 *
 * It reads every version from 1 to {@link TRACE_VERSION} as it is: a version 1
 * trace simply lacks what version 2 added (docs/trace-format.md "Versions").
 * Linear in the number of events, and a broken file reports its first
 * {@link MAX_VIOLATIONS} problems and how many more there are.
 *
 * Violations name the rule `TRACE-FORMAT`, `TRACE-VERSION` or `TRACE-SCHEMA`
 * (these are Mailscope's own rules, not the spec's catalogue).
 */
import type * as z from "zod";
import { childPath, fail, ok, type Parsed, type Violation } from "../protocol/result.ts";
import {
  EVENT_NAME_PATTERN,
  TRACE_FORMAT,
  TRACE_VERSION,
  traceSchema,
  type RecordedEvent,
  type Trace,
} from "./schema.ts";

/** Parses and validates a trace document from its JSON text. Never throws. */
export function importTrace(text: string): Parsed<Trace> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail(formatViolation(`the file is not JSON (${(error as Error).message}), so it is not a Mailscope trace`));
  }
  return importTraceValue(json);
}

/** As {@link importTrace}, for a value already parsed from JSON. */
export function importTraceValue(json: unknown): Parsed<Trace> {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return fail(formatViolation("a Mailscope trace is a JSON object"));
  }
  const doc = json as Record<string, unknown>;
  if (doc["format"] !== TRACE_FORMAT) {
    const found =
      doc["format"] === undefined ? "it has no format member" : `its format is ${JSON.stringify(doc["format"])}`;
    return fail({
      ...formatViolation(`not a Mailscope trace: ${found}, expected "${TRACE_FORMAT}"`),
      path: "$.format",
    });
  }
  const version = doc["version"];
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    return fail({
      path: "$.version",
      rule: "TRACE-VERSION",
      message: `the trace version is ${JSON.stringify(version)}; a version is a whole number from 1 (this Mailscope reads versions 1 to ${TRACE_VERSION})`,
    });
  }
  if (version > TRACE_VERSION) {
    const writer = typeof doc["mailscope"] === "string" ? ` by Mailscope ${doc["mailscope"]}` : "";
    return fail({
      path: "$.version",
      rule: "TRACE-VERSION",
      message:
        `this trace is version ${version}, written${writer}; this Mailscope reads trace versions 1 to ` +
        `${TRACE_VERSION}. Open it with a newer Mailscope.`,
    });
  }
  // The members besides the events go through the schema; the events, which may number in the millions,
  // are checked in one pass of their own (shape and order together), with no copy of the list.
  const problems = new Problems(MAX_VIOLATIONS);
  const head = traceSchema.safeParse({ ...doc, events: [] });
  if (!head.success) for (const issue of head.error.issues) problems.add(issueViolation(issue));
  const events = doc["events"];
  if (Array.isArray(events)) checkEvents(events, problems);
  else problems.add({ path: "$.events", rule: "TRACE-SCHEMA", message: "events is missing or not a list" });
  if (!head.success || problems.count > 0) return { ok: false, violations: problems.list() };
  return ok({ ...head.data, events: events as RecordedEvent[] });
}

/**
 * The most violations an import reports one by one; past them, one more says how many were left out. A
 * broken file of a million events would otherwise give a million messages nobody reads.
 */
export const MAX_VIOLATIONS = 100;

/** Violations up to a limit, and a count of the rest. */
class Problems {
  readonly #kept: Violation[] = [];
  #count = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  get count(): number {
    return this.#count;
  }
  add(violation: Violation): void {
    this.#count++;
    if (this.#kept.length < this.limit) this.#kept.push(violation);
  }
  list(): Violation[] {
    const left = this.#count - this.#kept.length;
    if (left <= 0) return this.#kept;
    return [
      ...this.#kept,
      { path: "$", rule: "TRACE-SCHEMA", message: `and ${left} more problem${left === 1 ? "" : "s"} not listed` },
    ];
  }
}

function formatViolation(message: string): Violation {
  return { path: "$", rule: "TRACE-FORMAT", message };
}

function issueViolation(issue: z.core.$ZodIssue): Violation {
  let path = "$";
  for (const key of issue.path) path = childPath(path, typeof key === "number" ? key : String(key));
  return { path, rule: "TRACE-SCHEMA", message: issue.message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Each event's shape, as the schema's Event has it, and their order: numbered 0, 1, 2, … and never
 * back in time. Linear, and a problem costs no more than its message.
 */
function checkEvents(events: readonly unknown[], problems: Problems): void {
  const schema = (path: string, message: string): void => {
    problems.add({ path, rule: "TRACE-SCHEMA", message });
  };
  let previousMs = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    const at = `$.events[${i}]`;
    if (!isRecord(event)) {
      schema(at, "an event is an object { seq, timeMs, name, domain?, data? }");
      continue;
    }
    const { seq, timeMs, name, domain, data } = event;
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) {
      schema(`${at}.seq`, `seq is a whole number from 0, not ${JSON.stringify(seq) ?? "missing"}`);
    } else if (seq !== i) {
      schema(`${at}.seq`, `event ${i} has seq ${seq}; events are numbered from 0 without gaps`);
    }
    if (typeof timeMs !== "number" || !Number.isFinite(timeMs)) {
      schema(
        `${at}.timeMs`,
        `timeMs is a number (virtual ms since the epoch), not ${JSON.stringify(timeMs) ?? "missing"}`,
      );
    } else {
      if (timeMs < previousMs) schema(`${at}.timeMs`, `event ${i} goes back in time (${timeMs} < ${previousMs})`);
      else previousMs = timeMs;
    }
    if (typeof name !== "string" || !EVENT_NAME_PATTERN.test(name)) {
      schema(
        `${at}.name`,
        `an event name is dotted and lowercase (attempt.started), not ${JSON.stringify(name) ?? "missing"}`,
      );
    }
    if (domain !== undefined && typeof domain !== "string") schema(`${at}.domain`, "domain is a string");
    if (data !== undefined && !isRecord(data)) schema(`${at}.data`, "data is an object of the event's fields");
  }
}
