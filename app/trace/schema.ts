/**
 * The trace document: what a simulation run leaves behind, and what the UI,
 * the exporters and `mailscope check` read. Version 2.
 *
 * A trace carries what is needed to reproduce and to judge the run: the
 * scenario (name, file, text), the seed, the readings of the gaps in force
 * (docs/gaps.md: a shared trace says which interpretation produced it), the
 * start of virtual time, every event in order, and the results of the
 * invariant and expectation checks.
 *
 * Version 2 (this one) adds what a view needs to draw a run from the trace
 * alone: `fault.window` and `dns.changed` events, the `exchangeId` of the
 * HTTP exchange on the receiver's events, and the `evidence` of each check
 * (docs/trace-format.md "Versions"). A version 1 trace reads as it is: it
 * simply lacks them.
 *
 * The zod schema is the single definition; `scripts/gen-trace-schema.ts`
 * writes it out as JSON Schema to `schemas/trace.schema.json`. Objects are
 * open: a reader ignores members it does not know, so later minor additions
 * need no new version.
 */
import * as z from "zod";
import { eventDataJsonSchema } from "./eventData.ts";

/** The `format` member of every trace. */
export const TRACE_FORMAT = "mailscope-trace";
/** The trace version this Mailscope writes; it reads every version from 1 up to this one. */
export const TRACE_VERSION = 2;
/** The versions this Mailscope reads. */
export const TRACE_VERSIONS_READ = [1, 2] as const;

/** What an event name looks like: dotted and lowercase (`attempt.started`). */
export const EVENT_NAME_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** Zod schema of one recorded event. */
export const recordedEventSchema = z
  .object({
    seq: z.int().min(0).meta({ description: "Position in the run, from 0, with no gaps." }),
    timeMs: z.number().meta({ description: "Virtual time, ms since the epoch." }),
    name: z
      .string()
      .regex(EVENT_NAME_PATTERN, "an event name is dotted and lowercase (attempt.started)")
      .meta({ description: "Dotted, lowercase; the names are listed in app/trace/events.ts." }),
    domain: z.string().optional().meta({ description: "The domain whose component emitted the event." }),
    data: z.record(z.string(), z.unknown()).optional().meta({ description: "The event's fields, plain JSON." }),
  })
  .meta({ title: "Event" });

/** Zod schema of one invariant or expectation result. */
export const checkResultSchema = z
  .object({
    id: z.string().min(1),
    passed: z.boolean(),
    detail: z.string().optional(),
    evidence: z.array(z.int().min(0)).optional().meta({
      description:
        "The seqs of the events that are the check's evidence, in order: for a failed check the events that show the failure, for a passed one those that satisfy it (version 2).",
    }),
  })
  .meta({ title: "CheckResult" });

/** Zod schema of a whole trace, version 2 (a version 1 trace fits it too). */
export const traceSchema = z
  .object({
    format: z.literal(TRACE_FORMAT),
    version: z.literal(TRACE_VERSIONS_READ).meta({
      description: `The trace format's version: ${TRACE_VERSION} as written now, 1 as read from older files.`,
    }),
    mailscope: z.string().min(1).meta({ description: "The Mailscope version that wrote the trace." }),
    scenario: z
      .object({
        name: z.string().min(1),
        file: z.string().optional().meta({ description: "The scenario file, as the run command was given it." }),
        source: z.string().optional().meta({ description: "The scenario's text." }),
      })
      .meta({ title: "ScenarioRef" }),
    seed: z
      .union([z.int().min(0).max(Number.MAX_SAFE_INTEGER), z.string()])
      .meta({ description: "The seed of the run (--seed)." }),
    readings: z
      .record(z.string(), z.string())
      .meta({ description: 'Gap ID → reading in force (docs/gaps.md), e.g. { G7: "enforced" }.' }),
    constants: z.record(z.string(), z.string()).optional().meta({
      description:
        'The draft\'s numbers that departed from SPEC.md in this run, each by its knob (rule ID), e.g. { "RETRY-2.cap": "30m" }; absent when the run followed SPEC.md\'s (app/protocol/specConstants.ts).',
    }),
    startedAtMs: z.number().meta({ description: "Virtual time at the start of the run, ms since the epoch." }),
    redactions: z
      .array(z.enum(["bodies", "private-keys"]))
      .optional()
      .meta({ description: "What an export left out; absent in a trace as recorded." }),
    events: z.array(recordedEventSchema),
    invariants: z.array(checkResultSchema).optional(),
    expectations: z.array(checkResultSchema).optional(),
  })
  .meta({
    title: "Mailscope trace",
    description:
      "A recorded simulation run of the Inter-Domain Mail Delivery Service (mailscope-trace, version 2; version 1 is read too).",
  });

/** One recorded event. */
export type RecordedEvent = z.output<typeof recordedEventSchema>;
/** One invariant or expectation result. */
export type CheckResult = z.output<typeof checkResultSchema>;
/** A trace document, version 2 (or 1, as read from an older file). */
export type Trace = z.output<typeof traceSchema>;

/** The JSON Schema (draft 2020-12) of a trace, as written to schemas/trace.schema.json. */
export function traceJsonSchema(): Record<string, unknown> {
  // Input mode: objects stay open (no additionalProperties: false), as the reader treats them.
  const schema = z.toJSONSchema(traceSchema, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
  // Each event name's `data` as docs/trace-format.md gives it (the reader itself stays lenient).
  const events = (schema as { properties?: { events?: { items?: Record<string, unknown> } } }).properties?.events;
  if (events?.items !== undefined) events.items = { ...events.items, allOf: eventDataJsonSchema() };
  return schema;
}
