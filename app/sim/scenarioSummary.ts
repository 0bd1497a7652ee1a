import { parse } from "yaml";

/** One scenario file as lists show it: its name and its description for a learner. */
export interface ScenarioSummary {
  readonly file: string;
  readonly name: string;
  readonly description: string;
}

/**
 * The name and description of a scenario file's text. A file that does not
 * parse is still listed, with its error as the description, so the user sees
 * that it is there and broken.
 */
export function summarizeScenario(file: string, text: string): ScenarioSummary {
  try {
    const doc: unknown = parseFast(text);
    const record = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>) : {};
    return {
      file,
      name: typeof record["name"] === "string" ? record["name"] : file,
      description: typeof record["description"] === "string" ? record["description"] : "",
    };
  } catch (error) {
    return { file, name: file, description: `cannot be read: ${(error as Error).message}` };
  }
}

/**
 * The YAML document's value. A JSON text (a generated scenario) is read with
 * JSON.parse, which gives the same value a hundred times faster; any other
 * text, or JSON that does not parse, goes to the YAML parser.
 */
function parseFast(text: string): unknown {
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // Not JSON after all: YAML says what it is.
    }
  }
  return parse(text);
}
