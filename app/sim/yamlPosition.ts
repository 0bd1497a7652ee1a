import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from "yaml";

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
