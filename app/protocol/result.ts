/**
 * Results of the protocol library's parsers. No parser throws on bad input:
 * each returns either the value or every violation it found, each naming the
 * JSON path of the offending field and the rule (from the rules catalogue,
 * `rules.ts`) that it breaks.
 */

/** One broken rule at one place of the input. */
export interface Violation {
  /** JSONPath of the offending value: `$` is the whole input, `$.to[2]` the third recipient. */
  readonly path: string;
  /** Rule ID from the catalogue, e.g. `MBX-4`. */
  readonly rule: string;
  /** What is wrong, in words a user can act on. */
  readonly message: string;
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly violations: readonly Violation[] };

export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

export function fail<T = never>(...violations: Violation[]): Parsed<T> {
  return { ok: false, violations };
}

/**
 * {@link fail} with a list, however long: a list spread into `fail(...)` overflows the stack from
 * about a hundred thousand items, and bad input can hold that many violations (a header block of
 * that many broken lines, a result of that many broken entries).
 */
export function failWith<T = never>(violations: readonly Violation[]): Parsed<T> {
  return { ok: false, violations };
}

/** Thrown only by the `…OrThrow` conveniences; carries the same violations. */
export class ProtocolError extends Error {
  readonly violations: readonly Violation[];
  constructor(violations: readonly Violation[]) {
    super(violations.map((v) => `${v.path}: ${v.message} [${v.rule}]`).join("; "));
    this.name = "ProtocolError";
    this.violations = violations;
  }
}

/** The value of a parse, or a {@link ProtocolError} with its violations. */
export function unwrap<T>(parsed: Parsed<T>): T {
  if (parsed.ok) return parsed.value;
  throw new ProtocolError(parsed.violations);
}

/** Appends a member or index to a JSONPath. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
