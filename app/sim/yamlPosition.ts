import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from "yaml";
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
