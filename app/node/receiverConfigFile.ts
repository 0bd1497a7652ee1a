/**
 * `receiver.yaml`: the receiver's configuration (`app/receiver/config.ts`)
 * as a YAML file, for `mailscope serve`. Every problem is reported as
 * `file:line:column: field: message`, pointing at the offending value (or,
 * for a missing field, at the object that lacks it): YAML syntax errors from
 * the parser, schema errors from zod with each issue's path looked up in the
 * YAML document's nodes.
 */
import { readFile } from "node:fs/promises";
import { LineCounter, parseDocument, type Document } from "yaml";
import type * as z from "zod";
import { receiverConfigSchema, type ReceiverConfig } from "../receiver/config.ts";
import { keyPositionOf, lineCounterPositions, positionOf } from "../sim/yamlPosition.ts";

/** One problem of a configuration file. */
export interface ConfigFileError {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  /** The field as a path, `capabilities.max_message_size`, `mailboxes[2].address`; `(file)` for the file as a whole. */
  readonly field: string;
  readonly message: string;
}

/** The outcome of loading a configuration file. */
export type ConfigFileResult<T> =
  | { readonly ok: true; readonly value: T; readonly file: string }
  | { readonly ok: false; readonly errors: readonly ConfigFileError[]; readonly file: string };

/** `file:line:column: field: message`, the form editors and terminals link. */
export function formatConfigError(error: ConfigFileError): string {
  return `${error.file}:${error.line}:${error.column}: ${error.field}: ${error.message}`;
}

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
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      file,
      errors: doc.errors.map((e) => ({
        file,
        line: e.linePos?.[0].line ?? 1,
        column: e.linePos?.[0].col ?? 1,
        field: "(yaml)",
        message: e.message.split("\n")[0] ?? e.message,
      })),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return {
      ok: false,
      file,
      errors: [
        { file, line: 1, column: 1, field: "(yaml)", message: error instanceof Error ? error.message : String(error) },
      ],
    };
  }
  if (data === null || data === undefined) {
    return {
      ok: false,
      file,
      errors: [
        { file, line: 1, column: 1, field: "(file)", message: "the file is empty; it must hold a mapping of fields" },
      ],
    };
  }
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data, file };
  const errors = parsed.error.issues.flatMap((issue) => issueErrors(issue, doc, lineCounter, file));
  errors.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: false, file, errors };
}

/** Reads and validates a receiver configuration file; a file that cannot be read is one error at 1:1. */
export async function loadReceiverConfigFile(file: string): Promise<ConfigFileResult<ReceiverConfig>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? "no such file"
        : error instanceof Error
          ? error.message
          : String(error);
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

// ---------------------------------------------------------------------------

type Issue = z.core.$ZodIssue;

function issueErrors(issue: Issue, doc: Document, lines: LineCounter, file: string): ConfigFileError[] {
  const path = issue.path.filter((p): p is string | number => typeof p === "string" || typeof p === "number");
  if (issue.code === "unrecognized_keys") {
    // Point at each unknown key itself.
    return issue.keys.map((key) => {
      const at =
        keyPositionOf(doc, path, key, lineCounterPositions(lines)) ??
        positionOf(doc, path, lineCounterPositions(lines));
      return { file, ...at, field: fieldName([...path, key]), message: `unknown field "${key}"` };
    });
  }
  const at = positionOf(doc, path, lineCounterPositions(lines));
  return [{ file, ...at, field: fieldName(path), message: issueMessage(issue, doc, path) }];
}

function issueMessage(issue: Issue, doc: Document, path: readonly (string | number)[]): string {
  if (issue.code === "invalid_type" && !doc.hasIn(path)) {
    return `is required (${issue.expected})`;
  }
  return issue.message;
}

/** `capabilities.max_message_size`, `mailboxes[2].address`. */
export function fieldName(path: readonly (string | number)[]): string {
  if (path.length === 0) return "(top level)";
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += `[${JSON.stringify(part)}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}
