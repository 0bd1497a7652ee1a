import { parse } from "yaml";
import { firstSentence, readAnnotations, readLesson, type ScenarioAnnotation, type ScenarioLesson } from "./lesson.ts";

/** One scenario file as lists show it: its name, title and description for a learner, and its lesson. */
export interface ScenarioSummary {
  readonly file: string;
  readonly name: string;
  /** Its `title`, else its name. */
  readonly title: string;
  readonly description: string;
  /** The description's first sentence: the library's one line. */
  readonly summary: string;
  /** Its place in the "Start here" path, if it is a lesson. */
  readonly lesson?: ScenarioLesson;
  /** Its well-formed annotations (none left out when the file parses). */
  readonly annotations?: readonly ScenarioAnnotation[];
}

/**
 * The name, title, description, lesson and annotations of a scenario file's
 * text. A file that does not parse is still listed, with its error as the
 * description, so the user sees that it is there and broken.
 */
export function summarizeScenario(file: string, text: string): ScenarioSummary {
  try {
    const doc: unknown = parseFast(text);
    const record = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>) : {};
    const name = typeof record["name"] === "string" ? record["name"] : file;
    const description = typeof record["description"] === "string" ? record["description"] : "";
    const titleField = record["title"];
    const title = typeof titleField === "string" && titleField.trim() !== "" ? titleField.trim() : name;
    const lesson = readLesson(record["lesson"]);
    const annotations = readAnnotations(record["annotations"]);
    return {
      file,
      name,
      title,
      description,
      summary: withoutTitle(firstSentence(description), title),
      ...(lesson !== undefined && { lesson }),
      ...(annotations.length > 0 && { annotations }),
    };
  } catch (error) {
    const description = `cannot be read: ${(error as Error).message}`;
    return { file, name: file, title: file, description, summary: firstSentence(description) };
  }
}

/** A summary that starts with the title and a colon (`One POST, four fates: the 200 …`) without them. */
function withoutTitle(summary: string, title: string): string {
  if (!summary.toLowerCase().startsWith(`${title.toLowerCase()}:`)) return summary;
  const rest = summary.slice(title.length + 1).trim();
  return rest === "" ? summary : `${rest.charAt(0).toUpperCase()}${rest.slice(1)}`;
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
