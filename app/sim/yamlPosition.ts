import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from "yaml";
import type * as z from "zod";
import { maxOf } from "../protocol/lists.ts";
import { errorMessage } from "../errorMessage.ts";

/** A line and column, both 1-based, as editors show them. */
export interface TextPosition {
  readonly line: number;
  readonly column: number;
}

/** Turns an offset into the text into a line and column. */
export type OffsetToPosition = (offset: number) => TextPosition;

/** The {@link OffsetToPosition} of a yaml LineCounter. */
export function lineCounterPositions(lines: LineCounter): OffsetToPosition {
  return (offset) => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
}

/**
 * Where the value at `path` stands in a YAML document, or its deepest ancestor
 * that exists: a missing field points at the mapping it belongs in.
 */
export function positionOf(doc: Document, path: readonly (string | number)[], at: OffsetToPosition): TextPosition {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    const offset = nodeOffset(node);
    if (offset !== undefined) return at(offset);
  }
  return { line: 1, column: 1 };
}

/** Where the key `key` of the mapping at `path` stands (for an unknown field), if it is there. */
export function keyPositionOf(
  doc: Document,
  path: readonly (string | number)[],
  key: string,
  at: OffsetToPosition,
): TextPosition | undefined {
  const parent = path.length === 0 ? doc.contents : doc.getIn(path, true);
  if (!isMap(parent)) return undefined;
  for (const item of parent.items) {
    if (!isPair(item)) continue;
    const k = item.key;
    if ((isScalar(k) ? String(k.value) : String(k)) === key) {
      const offset = nodeOffset(k);
      return offset === undefined ? undefined : at(offset);
    }
  }
  return undefined;
}

function nodeOffset(node: unknown): number | undefined {
  if (node === null || typeof node !== "object") return undefined;
  if (isScalar(node) || isMap(node) || isSeq(node)) return (node as Node).range?.[0];
  return undefined;
}

/** A problem in a YAML file, where an editor or a terminal can link to it. */
export interface FileError {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  /** The field as a path (`messages[2].to`); `(yaml)` for syntax, `(file)` for the file as a whole. */
  readonly field: string;
  readonly message: string;
}

/** `file:line:column: field: message`, the form editors and terminals link. */
export function formatFileError(error: FileError): string {
  return `${error.file}:${error.line}:${error.column}: ${error.field}: ${error.message}`;
}

/** A YAML text read into a document and its plain value, or its syntax errors. */
export type YamlRead =
  | { readonly ok: true; readonly doc: Document; readonly at: OffsetToPosition; readonly data: unknown }
  | { readonly ok: false; readonly errors: readonly FileError[] };

/**
 * Reads YAML (or JSON) text the way every file of Mailscope is read: duplicate
 * keys are errors, aliases are bounded (no billion laughs), and a syntax error
 * comes back with its line and column instead of being thrown.
 */
export function readYaml(text: string, file: string): YamlRead {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = lineCounterPositions(lines);
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({
        file,
        ...at(e.pos[0]),
        field: "(yaml)",
        message: e.message.split("\n")[0] ?? e.message,
      })),
    };
  }
  try {
    return { ok: true, doc, at, data: doc.toJS({ maxAliasCount: 100 }) };
  } catch (error) {
    const message = errorMessage(error);
    return { ok: false, errors: [{ file, line: 1, column: 1, field: "(yaml)", message }] };
  }
}

/** A path in a file as a field name: `messages[2].to`, `domains["b.example"].policy`. */
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

type Issue = z.core.$ZodIssue;

/** Words after "unknown field" for an unknown key at `path` (a suggestion of the field meant), or "". */
export type UnknownKeyHint = (key: string, doc: Document, path: readonly (string | number)[]) => string;

/**
 * A schema's complaint about the value read from `doc`, as errors located in
 * the file: an unknown key at the key itself, a missing field at the mapping it
 * belongs in, a union's complaint from the branch that got furthest into the
 * value, a discriminated union's unknown `kind` with the kinds there are.
 */
export function schemaIssueErrors(
  issue: Issue,
  doc: Document,
  at: OffsetToPosition,
  file: string,
  hint: UnknownKeyHint = () => "",
): FileError[] {
  const path = issue.path.filter((p): p is string | number => typeof p === "string" || typeof p === "number");
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      file,
      ...(keyPositionOf(doc, path, key, at) ?? positionOf(doc, path, at)),
      field: fieldName([...path, key]),
      message: `unknown field "${key}"${hint(key, doc, path)}`,
    }));
  }
  if (issue.code === "invalid_union") {
    // A union's branches each complain; the most useful is the one that got furthest into the value.
    const branches = issue.errors
      .map((branch) => branch.filter((i) => i.code !== "invalid_type" || i.path.length > 0))
      .filter((branch) => branch.length > 0)
      .sort((a, b) => depth(b) - depth(a));
    const best = branches[0];
    // …or the only branch of the value's type (a list of too many recipients, not a mailbox string).
    if (best !== undefined && (depth(best) > 0 || branches.length === 1)) {
      return best.flatMap((inner) =>
        schemaIssueErrors({ ...inner, path: [...issue.path, ...inner.path] } as Issue, doc, at, file, hint),
      );
    }
  }
  const options = (issue as unknown as { options?: unknown }).options;
  if (issue.code === "invalid_union" && "discriminator" in issue && Array.isArray(options)) {
    // A discriminated union (the network faults' `kind`): the path already ends at the discriminator.
    const value = doc.getIn(path);
    const kinds = (options as unknown[]).map(String).join(", ");
    return [
      {
        file,
        ...positionOf(doc, path, at),
        field: fieldName(path),
        message:
          value === undefined
            ? `is required: one of ${kinds}`
            : `unknown kind ${JSON.stringify(value)}; the kinds are ${kinds}`,
      },
    ];
  }
  return [{ file, ...positionOf(doc, path, at), field: fieldName(path), message: issueMessage(issue, doc, path) }];
}

function depth(issues: readonly Issue[]): number {
  return maxOf(
    issues.map((i) => i.path.length),
    0,
  );
}

function issueMessage(issue: Issue, doc: Document, path: readonly (string | number)[]): string {
  if (issue.code === "invalid_type" && path.length > 0 && !doc.hasIn(path)) return `is required (${issue.expected})`;
  if (issue.code === "invalid_value" && "values" in issue) {
    return `is ${JSON.stringify(doc.getIn(path))}; expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  return issue.message;
}

/** What {@link parseYamlWith} returns: the value with the document, to locate later errors; or every error found. */
export type YamlParse<T> =
  | { readonly ok: true; readonly value: T; readonly doc: Document; readonly at: OffsetToPosition }
  | { readonly ok: false; readonly errors: readonly FileError[] };

/**
 * Reads a YAML file that holds a mapping and validates it with `schema`. Never throws: a syntax error, an
 * empty file, a file that is not a mapping (`messages` say what it should hold) and each schema issue come
 * back as errors at their line and column, sorted.
 */
export function parseYamlWith<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  messages: { readonly empty: string; readonly notMapping: string },
  hint?: UnknownKeyHint,
): YamlParse<z.output<S>> {
  const read = readYaml(text, file);
  if (!read.ok) return read;
  const { doc, at, data } = read;
  const whole = (message: string): YamlParse<z.output<S>> => ({
    ok: false,
    errors: [{ file, line: 1, column: 1, field: "(file)", message }],
  });
  if (data === null || data === undefined) return whole(messages.empty);
  if (typeof data !== "object" || Array.isArray(data)) return whole(messages.notMapping);
  const checked = validateYaml(schema, data, doc, at, file, hint);
  return checked.ok ? { ...checked, doc, at } : checked;
}

/**
 * `data`, read from `doc`, validated with `schema`: its value, or each of the schema's issues located in the
 * file ({@link schemaIssueErrors}), sorted by line and column.
 */
export function validateYaml<S extends z.ZodType>(
  schema: S,
  data: unknown,
  doc: Document,
  at: OffsetToPosition,
  file: string,
  hint?: UnknownKeyHint,
): { readonly ok: true; readonly value: z.output<S> } | { readonly ok: false; readonly errors: readonly FileError[] } {
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, value: result.data };
  const errors = result.error.issues.flatMap((issue) => schemaIssueErrors(issue, doc, at, file, hint));
  errors.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: false, errors };
}
