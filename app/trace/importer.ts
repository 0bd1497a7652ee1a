/**
 * Reads a trace file back (the UI's "open trace", `mailscope check`):
 * validates the format and version first, so that the message for a file
 * that is not a trace, or a trace from a newer Mailscope, says exactly that,
 * and only then the shape, with a JSONPath for each problem.
 *
 * Violations name the rule `TRACE-FORMAT`, `TRACE-VERSION` or `TRACE-SCHEMA`
 * (these are Mailscope's own rules, not the spec's catalogue).
 */
import type * as z from "zod";
import { childPath, fail, ok, type Parsed, type Violation } from "../protocol/result.ts";
import { TRACE_FORMAT, TRACE_VERSION, traceSchema, type Trace } from "./schema.ts";

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
      message: `the trace version is ${JSON.stringify(version)}; a version is a whole number from 1 (this Mailscope reads version ${TRACE_VERSION})`,
    });
  }
  if (version > TRACE_VERSION) {
    const writer = typeof doc["mailscope"] === "string" ? ` by Mailscope ${doc["mailscope"]}` : "";
    return fail({
      path: "$.version",
      rule: "TRACE-VERSION",
      message:
        `this trace is version ${version}, written${writer}; this Mailscope reads trace version ${TRACE_VERSION} ` +
        "only. Open it with a newer Mailscope.",
    });
  }
  const parsed = traceSchema.safeParse(json);
  if (!parsed.success) return fail(...parsed.error.issues.map(issueViolation));
  const order = orderViolations(parsed.data);
  return order.length > 0 ? fail(...order) : ok(parsed.data);
}

function formatViolation(message: string): Violation {
  return { path: "$", rule: "TRACE-FORMAT", message };
}

function issueViolation(issue: z.core.$ZodIssue): Violation {
  let path = "$";
  for (const key of issue.path) path = childPath(path, typeof key === "number" ? key : String(key));
  return { path, rule: "TRACE-SCHEMA", message: issue.message };
}

/** Events are numbered 0, 1, 2, … and never go back in time. */
function orderViolations(trace: Trace): Violation[] {
  const out: Violation[] = [];
  let previousMs = Number.NEGATIVE_INFINITY;
  trace.events.forEach((event, i) => {
    if (event.seq !== i) {
      out.push({
        path: `$.events[${i}].seq`,
        rule: "TRACE-SCHEMA",
        message: `event ${i} has seq ${event.seq}; events are numbered from 0 without gaps`,
      });
    }
    if (event.timeMs < previousMs) {
      out.push({
        path: `$.events[${i}].timeMs`,
        rule: "TRACE-SCHEMA",
        message: `event ${i} goes back in time (${event.timeMs} < ${previousMs})`,
      });
    }
    previousMs = Math.max(previousMs, event.timeMs);
  });
  return out;
}
