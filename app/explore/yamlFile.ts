/**
 * Reading the small YAML files of `mailscope explore` (its options, a
 * properties file) against a zod schema, every problem located as
 * `file:line:column: field: message` — the form scenario errors take
 * (app/sim/yamlPosition.ts).
 */
import type * as z from "zod";
import { positionOf, readYaml, validateYaml, type FileError, type TextPosition } from "../sim/yamlPosition.ts";

/** A file read and validated, or what is wrong with it. */
export type YamlFileRead<T> =
  | {
      readonly ok: true;
      readonly value: T;
      /** Where the value at a path stands in the file (for errors found after the schema). */
      readonly locate: (path: readonly (string | number)[]) => TextPosition;
    }
  | { readonly ok: false; readonly errors: readonly FileError[] };

/**
 * Parses `text` as YAML (or JSON) and validates it with `schema`. An empty
 * file is `{}` when `emptyIs` says so. Never throws.
 */
export function readYamlFile<S extends z.ZodType>(
  schema: S,
  text: string,
  file: string,
  emptyIs?: unknown,
): YamlFileRead<z.output<S>> {
  const read = readYaml(text, file);
  if (!read.ok) return read;
  const { doc, at } = read;
  const data = read.data === null || read.data === undefined ? emptyIs : read.data;
  const checked = validateYaml(schema, data, doc, at, file);
  return checked.ok ? { ...checked, locate: (path) => positionOf(doc, path, at) } : checked;
}
