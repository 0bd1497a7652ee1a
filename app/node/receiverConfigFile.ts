/**
 * `receiver.yaml`: the receiver's configuration (`app/receiver/config.ts`)
 * as a YAML file, for `mailscope serve`. Every problem is reported as
 * `file:line:column: field: message`, pointing at the offending value (or,
 * for a missing field, at the object that lacks it): YAML syntax errors from
 * the parser, schema errors from zod located as every YAML file of the
 * project locates them (`app/sim/yamlPosition.ts`).
 */
import type * as z from "zod";
import { receiverConfigSchema, type ReceiverConfig } from "../receiver/config.ts";
import { fieldName, formatFileError, parseYamlWith, type FileError } from "../sim/yamlPosition.ts";
import { readBoundedText, readErrorReason } from "./boundedRead.ts";

export { fieldName };

/** A problem in a configuration file: file, line, column, field and what is wrong. */
export type ConfigFileError = FileError;

/** The outcome of loading a configuration file. */
export type ConfigFileResult<T> =
  | { readonly ok: true; readonly value: T; readonly file: string }
  | { readonly ok: false; readonly errors: readonly ConfigFileError[]; readonly file: string };

/** `file:line:column: field: message`, the form editors and terminals link. */
export const formatConfigError: (error: ConfigFileError) => string = formatFileError;

/** Thrown by {@link readReceiverConfigFile}: every error, one per line of the message. */
export class ConfigFileInvalidError extends Error {
  readonly errors: readonly ConfigFileError[];
  constructor(errors: readonly ConfigFileError[]) {
    super(errors.map(formatConfigError).join("\n"));
    this.name = "ConfigFileInvalidError";
    this.errors = errors;
  }
}

/**
 * Parses YAML `text` (named `file` in errors) and validates it with `schema`.
 * Never throws: a YAML syntax error, an empty file or a schema violation each
 * come back as errors with a line and column.
 */
export function validateYamlText<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): ConfigFileResult<z.output<S>> {
  const parsed = parseYamlWith(text, file, schema, {
    empty: "the file is empty; it must hold a mapping of fields",
    notMapping: "the file must hold a mapping of fields",
  });
  return parsed.ok ? { ok: true, value: parsed.value, file } : { ok: false, file, errors: parsed.errors };
}

/** Reads and validates a receiver configuration file; a file that cannot be read is one error at 1:1. */
export async function loadReceiverConfigFile(file: string): Promise<ConfigFileResult<ReceiverConfig>> {
  let text: string;
  try {
    text = await readBoundedText(file, "configurations");
  } catch (error) {
    const reason = readErrorReason(error);
    return {
      ok: false,
      file,
      errors: [{ file, line: 1, column: 1, field: "(file)", message: `cannot be read: ${reason}` }],
    };
  }
  return validateYamlText(text, file, receiverConfigSchema);
}

/**
 * The receiver configuration in `file`, defaults applied.
 *
 * @throws ConfigFileInvalidError listing every problem as `file:line:column: field: message`.
 */
export async function readReceiverConfigFile(file: string): Promise<ReceiverConfig> {
  const result = await loadReceiverConfigFile(file);
  if (!result.ok) throw new ConfigFileInvalidError(result.errors);
  return result.value;
}
