/**
 * What each event name's `data` holds, as JSON Schema, for
 * schemas/trace.schema.json: derived from the catalogue (events.ts), with the
 * fields every event of that name carries, the types of all its fields, and
 * their enumerations. `data` stays open, as the reader treats it: fields the
 * catalogue does not list are allowed. Fields added in trace version 2 are
 * optional there, so a version-1 trace still fits.
 */
import * as z from "zod";
import { traceEvents } from "./events.ts";

type JsonSchema = Readonly<Record<string, unknown>>;

/** The JSON Schema of one event name's `data`: its fields, open to more. */
export function eventDataSchema(def: { readonly data: z.ZodType }): Record<string, unknown> {
  const { $schema: _schema, ...schema } = z.toJSONSchema(def.data, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  });
  return schema;
}

/** The `allOf` of if-name-then-data clauses that constrains an event's `data` by its name. */
export function eventDataJsonSchema(): JsonSchema[] {
  return Object.entries(traceEvents).map(([name, def]) => ({
    if: { properties: { name: { const: name } }, required: ["name"] },
    then: { properties: { data: eventDataSchema(def) }, required: ["data"] },
  }));
}
