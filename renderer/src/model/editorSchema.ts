/**
 * What the scenario editor knows from schemas/scenario.schema.json: the keys
 * a mapping can take at the cursor, the values a field can take, and the
 * docs of the field under the pointer. The place in the document is read from
 * the indentation of block YAML (what scenario files are written in), so it
 * works on half-typed text that no YAML parser would accept; flow
 * collections (`{ a: 1 }`, `[x, y]`) are not looked into.
 */

/** The part of JSON Schema (draft 2020-12) that the scenario schema uses. */
export interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | SchemaNode;
  readonly propertyNames?: SchemaNode;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: string;
}

/** A path segment that stands for "an item of the sequence". */
export const ITEM = "[]";

/** A path in the document: mapping keys and {@link ITEM}s. */
export type SchemaPath = readonly string[];

/** `faults.network[].kind`: a path as the docs and the hover show it. */
export function pathText(path: SchemaPath): string {
  return path.reduce((s, seg) => (seg === ITEM ? `${s}[]` : s === "" ? seg : `${s}.${seg}`), "");
}

// ---------------------------------------------------------------------------
// Reading block YAML by its indentation

interface Line {
  /** The text of the line. */
  readonly text: string;
  /** Offset of the line's start in the document. */
  readonly start: number;
  /** Empty, a comment or a document marker: no structure. */
  readonly blank: boolean;
  /** Columns of the sequence dashes (`- `) before the content, outermost first. */
  readonly dashes: readonly number[];
  /** Column where the content after the indentation and the dashes starts. */
  readonly keyCol: number;
  /** The mapping key on the line, if there is one. */
  readonly key?: string;
  /** Where the key ends (column), for hovers. */
  readonly keyEnd?: number;
  /** The value after `key:`, without its comment; "" for a block to follow. */
  readonly value?: string;
  /** Column where the value starts. */
  readonly valueCol?: number;
}

const KEY = /^("[^"]*"|'[^']*'|[^\s:#'"{[\]},&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)[ \t]*:(?=\s|$)/;

function readLine(text: string, start: number): Line {
  const trimmed = text.trim();
  if (trimmed === "" || trimmed.startsWith("#") || trimmed === "---" || trimmed === "...") {
    return { text, start, blank: true, dashes: [], keyCol: text.length - text.trimStart().length };
  }
  let col = text.length - text.trimStart().length;
  const dashes: number[] = [];
  while (text[col] === "-" && (col + 1 === text.length || text[col + 1] === " " || text[col + 1] === "\t")) {
    dashes.push(col);
    col++;
    while (text[col] === " " || text[col] === "\t") col++;
  }
  const rest = text.slice(col);
  const m = KEY.exec(rest);
  if (!m) return { text, start, blank: false, dashes, keyCol: col };
  const raw = m[1] ?? "";
  const key = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
  let valueCol = col + m[0].length;
  while (text[valueCol] === " " || text[valueCol] === "\t") valueCol++;
  const value = stripComment(text.slice(valueCol)).trimEnd();
  return { text, start, blank: false, dashes, keyCol: col, key, keyEnd: col + raw.length, value, valueCol };
}

function stripComment(value: string): string {
  if (/^["']/.test(value)) return value;
  const hash = value.search(/(^|\s)#/);
  return hash < 0 ? value : value.slice(0, hash);
}

function readLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (const part of text.split("\n")) {
    lines.push(readLine(part.endsWith("\r") ? part.slice(0, -1) : part, start));
    start += part.length + 1;
  }
  return lines;
}

/** The index of the line that holds `offset`, and the column. */
function lineAt(lines: readonly Line[], offset: number): { index: number; column: number } {
  let index = 0;
  while (index + 1 < lines.length && (lines[index + 1]?.start ?? Infinity) <= offset) index++;
  return { index, column: offset - (lines[index]?.start ?? 0) };
}

/**
 * The path of the mapping whose keys stand at `col` on line `index`, the line
 * itself opening sequence items at `dashes`.
 */
function mappingPath(lines: readonly Line[], index: number, col: number, dashes: readonly number[]): string[] {
  const reversed: string[] = [];
  let kind: "map" | "seq" = "map";
  let at = col;
  const enterItems = (ds: readonly number[]) => {
    for (let k = ds.length - 1; k >= 0; k--) reversed.push(ITEM);
    if (ds.length > 0) {
      kind = "seq";
      at = ds[0] ?? 0;
    }
  };
  enterItems(dashes);
  for (let i = index - 1; i >= 0 && !(kind === "map" && at === 0); i--) {
    const line = lines[i];
    if (line === undefined || line.blank) continue;
    if (kind === "map") {
      if (line.keyCol > at) continue;
      if (line.keyCol === at) {
        // A sibling; or the first entry of this mapping, an item of a sequence.
        if (line.dashes.length > 0) enterItems(line.dashes);
        continue;
      }
    } else {
      const indent = line.dashes[0] ?? line.keyCol;
      if (line.dashes.includes(at) || indent > at) continue;
    }
    // The key that owns the node we are in.
    if (line.key === undefined) break;
    reversed.push(line.key);
    kind = "map";
    at = line.keyCol;
    enterItems(line.dashes);
  }
  return reversed.reverse();
}

/** The keys (and their values) of the mapping at `col` around line `index`, that line left out. */
function siblings(lines: readonly Line[], index: number, col: number, opensItem: boolean): Map<string, string> {
  const found = new Map<string, string>();
  const take = (line: Line) => {
    if (line.key !== undefined && line.keyCol === col) found.set(line.key, line.value ?? "");
  };
  // Upwards, unless this line opens the item (then there is nothing of it above).
  if (!opensItem) {
    for (let i = index - 1; i >= 0; i--) {
      const line = lines[i];
      if (line === undefined || line.blank || line.keyCol > col) continue;
      if (line.keyCol < col) break;
      take(line);
      if (line.dashes.length > 0) break;
    }
  }
  for (let i = index + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === undefined || line.blank || line.keyCol > col) continue;
    if (line.keyCol < col || line.dashes.length > 0) break;
    take(line);
  }
  return found;
}

// ---------------------------------------------------------------------------
// The schema at a path

function branches(node: SchemaNode): SchemaNode[] {
  const alternatives = [...(node.anyOf ?? []), ...(node.oneOf ?? [])];
  return alternatives.length === 0 ? [node] : alternatives.flatMap(branches);
}

function isObject(node: SchemaNode): boolean {
  return node.type === "object" || node.properties !== undefined;
}

/** The object branches of `node`; with `values` known, those whose constant fields agree with them. */
function objectBranches(node: SchemaNode, values?: ReadonlyMap<string, string>): SchemaNode[] {
  const objects = branches(node).filter(isObject);
  if (values === undefined || objects.length < 2) return objects;
  const agreeing = objects.filter((b) =>
    Object.entries(b.properties ?? {}).every(([k, p]) => {
      const v = values.get(k);
      return p.const === undefined || v === undefined || unquote(v) === String(p.const);
    }),
  );
  return agreeing.length > 0 ? agreeing : objects;
}

function unquote(value: string): string {
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}

/** Each key an object (any of its branches) can take, with its schema (the first branch that has it). */
function propertiesOf(node: SchemaNode, values?: ReadonlyMap<string, string>): Map<string, SchemaNode> {
  const props = new Map<string, SchemaNode>();
  for (const b of objectBranches(node, values)) {
    for (const [k, p] of Object.entries(b.properties ?? {})) {
      const seen = props.get(k);
      if (seen === undefined) props.set(k, p);
      else if (seen.description === undefined && p.description !== undefined) props.set(k, { ...seen, ...p });
    }
  }
  return props;
}

function requiredOf(node: SchemaNode, values?: ReadonlyMap<string, string>): Set<string> {
  const bs = objectBranches(node, values);
  // Required in every branch that is left.
  const sets = bs.map((b) => new Set(b.required ?? []));
  return new Set([...(sets[0] ?? [])].filter((k) => sets.every((s) => s.has(k))));
}

function child(node: SchemaNode, segment: string): SchemaNode | undefined {
  if (segment === ITEM) {
    const items = branches(node)
      .map((b) => b.items)
      .filter((i): i is SchemaNode => i !== undefined);
    return items.length === 0 ? undefined : items.length === 1 ? items[0] : { anyOf: items };
  }
  const p = propertiesOf(node).get(segment);
  if (p !== undefined) return p;
  for (const b of branches(node)) {
    if (isObject(b) && typeof b.additionalProperties === "object") return b.additionalProperties;
  }
  return undefined;
}

/** The schema of the node at `path`, if the schema knows it. */
export function schemaAt(root: SchemaNode, path: SchemaPath): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const segment of path) {
    if (node === undefined) return undefined;
    node = child(node, segment);
  }
  return node;
}

/** The values a field can take from a fixed list (enums, constants, booleans), in the schema's order. */
export function enumValues(node: SchemaNode): string[] {
  const values: string[] = [];
  const add = (v: unknown) => {
    const s = String(v);
    if (!values.includes(s)) values.push(s);
  };
  for (const b of branches(node)) {
    for (const v of b.enum ?? []) add(v);
    if (b.const !== undefined) add(b.const);
    if (b.type === "boolean") ["true", "false"].forEach(add);
  }
  return values;
}

/** A short account of what a field takes: `string`, `integer ≥ 0 or string`, `one of a, b`. */
export function typeSummary(node: SchemaNode): string {
  const parts: string[] = [];
  for (const b of branches(node)) {
    let s: string;
    if (b.enum !== undefined) s = `one of ${b.enum.map((v) => String(v)).join(", ")}`;
    else if (b.const !== undefined) s = JSON.stringify(b.const);
    else if (b.type === "array") s = b.items ? `list of ${typeSummary(b.items)}` : "list";
    else if (isObject(b)) s = "mapping";
    else if (Array.isArray(b.type)) s = b.type.join(" or ");
    else if (typeof b.type === "string") {
      s = b.type;
      const max = b.maximum !== undefined && b.maximum < Number.MAX_SAFE_INTEGER ? b.maximum : undefined;
      if (b.minimum !== undefined && max !== undefined) s += ` in [${b.minimum}, ${max}]`;
      else if (b.minimum !== undefined) s += ` ≥ ${b.minimum}`;
      if (b.format !== undefined) s += ` (${b.format})`;
    } else s = "any value";
    if (!parts.includes(s)) parts.push(s);
  }
  return parts.join(" or ");
}

// ---------------------------------------------------------------------------
// Completion

/** One thing to complete with. */
export interface SchemaCompletion {
  readonly label: string;
  /** The text put in: `key: `, or `key:` and the next line's indentation for mappings and lists. */
  readonly apply: string;
  readonly kind: "property" | "value";
  /** What it takes (a {@link typeSummary}), and "required". */
  readonly detail: string;
  /** The schema's description. */
  readonly info?: string;
  /** Required fields first. */
  readonly boost: number;
}

/** The completions at a place: the text from..to is replaced. */
export interface SchemaCompletions {
  readonly from: number;
  readonly to: number;
  readonly path: SchemaPath;
  readonly options: readonly SchemaCompletion[];
}

const VALUE_LINE = /^(\s*(?:-\s+)*)("[^"]*"|'[^']*'|[^\s:#'"-][^:#]*?)[ \t]*:[ \t]+(["']?)([^"'#\s]*)$/;
const KEY_LINE = /^(\s*(?:-\s+)*)([\w.-]*)$/;

/** The keys or values the schema allows at `offset` of `text`; undefined where it has nothing to say. */
export function completeAt(root: SchemaNode, text: string, offset: number): SchemaCompletions | undefined {
  const lines = readLines(text);
  const { index, column } = lineAt(lines, offset);
  const line = lines[index];
  if (line === undefined) return undefined;
  const before = line.text.slice(0, column);
  const after = /^[\w.-]*/.exec(line.text.slice(column))?.[0] ?? "";

  const valueMatch = VALUE_LINE.exec(before);
  if (valueMatch) {
    const head = readLine(before, line.start);
    if (head.key === undefined) return undefined;
    const path = [...mappingPath(lines, index, head.keyCol, head.dashes), head.key];
    const variants = fieldVariants(root, path, siblings(lines, index, head.keyCol, head.dashes.length > 0));
    const values = variants.flatMap(enumValues).filter((v, i, all) => all.indexOf(v) === i);
    if (values.length === 0) return undefined;
    const partial = valueMatch[4] ?? "";
    const field = variants[0];
    return {
      from: offset - partial.length,
      to: offset + after.length,
      path,
      options: values.map((v) => ({
        label: v,
        apply: v,
        kind: "value" as const,
        detail: "",
        ...(field?.description !== undefined && { info: field.description }),
        boost: 0,
      })),
    };
  }

  const keyMatch = KEY_LINE.exec(before);
  if (!keyMatch) return undefined;
  const partial = keyMatch[2] ?? "";
  const head = readLine(`${keyMatch[1] ?? ""}x`, line.start);
  const col = head.keyCol;
  const path = mappingPath(lines, index, col, head.dashes);
  const node = schemaAt(root, path);
  if (node === undefined) return undefined;
  const present = siblings(lines, index, col, head.dashes.length > 0);
  const from = offset - partial.length;
  const to = offset + after.length;

  if (head.dashes.length > 0 && !branches(node).some(isObject)) {
    // A list of values (`versions: [v1]` written as a block).
    const values = enumValues(node);
    if (values.length === 0) return undefined;
    return {
      from,
      to,
      path,
      options: values.map((v) => ({ label: v, apply: v, kind: "value", detail: "", boost: 0 })),
    };
  }
  const required = requiredOf(node, present);
  const options: SchemaCompletion[] = [];
  for (const [key, prop] of propertiesOf(node, present)) {
    if (present.has(key)) continue;
    const isRequired = required.has(key);
    options.push({
      label: key,
      apply: applyKey(key, prop, col),
      kind: "property",
      detail: `${typeSummary(prop)}${isRequired ? " · required" : ""}`,
      ...(prop.description !== undefined && { info: prop.description }),
      boost: isRequired ? 1 : 0,
    });
  }
  return options.length === 0 ? undefined : { from, to, path, options };
}

/** The schema of the field `path` ends in: one per branch of its parent where the parent is a union. */
function fieldVariants(root: SchemaNode, path: SchemaPath, values: ReadonlyMap<string, string>): SchemaNode[] {
  const parent = schemaAt(root, path.slice(0, -1));
  const key = path[path.length - 1];
  if (parent === undefined || key === undefined) return [];
  const fromBranches = objectBranches(parent)
    .map((b) => b.properties?.[key])
    .filter((p): p is SchemaNode => p !== undefined);
  if (fromBranches.length > 0) {
    // A discriminator (`kind`) offers every branch's constant; another field, the branch the discriminator picks.
    if (fromBranches.every((p) => p.const !== undefined)) return fromBranches;
    const picked = propertiesOf(parent, values).get(key);
    return picked ? [picked] : fromBranches;
  }
  const other = child(parent, key);
  return other ? [other] : [];
}

function applyKey(key: string, prop: SchemaNode, col: number): string {
  const indent = " ".repeat(col + 2);
  const kinds = branches(prop);
  if (kinds.every((b) => b.type === "array" && b.items !== undefined && branches(b.items).some(isObject))) {
    return `${key}:\n${indent}- `;
  }
  if (kinds.every(isObject)) return `${key}:\n${indent}`;
  return `${key}: `;
}

// ---------------------------------------------------------------------------
// Hover

/** The docs of the field under the pointer. */
export interface SchemaHover {
  /** The key's span in the document. */
  readonly from: number;
  readonly to: number;
  readonly path: SchemaPath;
  /** `faults.network[].kind` */
  readonly title: string;
  readonly type: string;
  readonly required: boolean;
  readonly description?: string;
}

/** The docs of the field whose key (or value) is at `offset`; undefined where the schema knows no such field. */
export function hoverAt(root: SchemaNode, text: string, offset: number): SchemaHover | undefined {
  const lines = readLines(text);
  const { index, column } = lineAt(lines, offset);
  const line = lines[index];
  if (line === undefined || line.key === undefined || line.keyEnd === undefined) return undefined;
  if (column < line.keyCol || column > line.text.length) return undefined;
  const parentPath = mappingPath(lines, index, line.keyCol, line.dashes);
  const values = siblings(lines, index, line.keyCol, line.dashes.length > 0);
  values.set(line.key, line.value ?? "");
  const parent = schemaAt(root, parentPath);
  if (parent === undefined) return undefined;
  const path = [...parentPath, line.key];
  const variants = fieldVariants(root, path, values);
  const field = variants.length > 1 ? { anyOf: variants } : variants[0];
  if (field === undefined) return undefined;
  const described = variants.find((v) => v.description !== undefined);
  return {
    from: line.start + line.keyCol,
    to: line.start + line.keyEnd,
    path,
    title: pathText(path),
    type: typeSummary(field),
    required: requiredOf(parent, values).has(line.key),
    ...(described?.description !== undefined && { description: described.description }),
  };
}
