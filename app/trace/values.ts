/**
 * Reading a JSON value whose shape no catalogue gives: a field looked up by
 * name on an event of any name (a user's property, a coverage key), or an
 * open object an event carries (a fault's settings, a document). An event of
 * a known name is read with `eventReader.ts` instead, which knows its fields.
 */

/** `value` when it is a string. */
export function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** `value` when it is a finite number. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The strings of an array (others left out), a lone string as a list of one, anything else none. */
export function textsOf(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string")
    : typeof value === "string"
      ? [value]
      : [];
}
