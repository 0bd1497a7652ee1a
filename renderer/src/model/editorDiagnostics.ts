/**
 * The scenario editor's diagnostics: the engine's own scenario parser
 * (app/sim/scenario.ts, the one `mailscope run` and `check` use) run on the
 * text as typed, each error placed at its line and column.
 */
import { formatScenarioError, parseScenarioText, type ScenarioError } from "../../../app/sim/scenario.ts";

/** One problem of the text, where the editor marks it. */
export interface EditorDiagnostic extends ScenarioError {
  /** Offsets into the text: the marked span. */
  readonly from: number;
  readonly to: number;
  /** `file:line:column: field: message`, as the CLI prints it. */
  readonly text: string;
}

/** The offset of a 1-based line and column in `text`, clamped to the text. */
export function offsetOf(text: string, line: number, column: number): number {
  let start = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf("\n", start);
    if (next < 0) return text.length;
    start = next + 1;
  }
  const end = lineEnd(text, start);
  return Math.min(start + Math.max(0, column - 1), end);
}

function lineEnd(text: string, start: number): number {
  const nl = text.indexOf("\n", start);
  return nl < 0 ? text.length : nl > start && text[nl - 1] === "\r" ? nl - 1 : nl;
}

/**
 * The marked span of an error at `from`: the value or key there, up to the end
 * of its line (a trailing comment left out); one character at least where the
 * line has any.
 */
function spanEnd(text: string, from: number): number {
  const end = lineEnd(text, from);
  const rest = text.slice(from, end);
  const comment = /^["']/.test(rest) ? -1 : rest.search(/\s#/);
  const body = (comment < 0 ? rest : rest.slice(0, comment)).trimEnd();
  return from + (body.length > 0 ? body.length : Math.min(1, rest.length));
}

/** The parser's errors in `text`, named `file`; none when it reads as a scenario. */
export function scenarioDiagnostics(text: string, file: string): EditorDiagnostic[] {
  const parsed = parseScenarioText(text, file);
  if (parsed.ok) return [];
  return parsed.errors.map((error) => {
    const from = offsetOf(text, error.line, error.column);
    return { ...error, from, to: spanEnd(text, from), text: formatScenarioError(error) };
  });
}

/** "No problems", "1 problem", "3 problems". */
export function problemCount(n: number): string {
  return n === 0 ? "No problems" : n === 1 ? "1 problem" : `${n} problems`;
}
