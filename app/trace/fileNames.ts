/**
 * The file names Mailscope writes and opens (decision 0033). Traces and bug
 * bundles have extensions of their own, with one dot, so that the file
 * associations of Windows, macOS and Linux (which all match on the last
 * extension) can tell them from other JSON: `run.mstrace`, `run.msbundle`.
 * Both are JSON inside. Files written before (`*.mailscope-trace.json`,
 * `*.mailscope-bundle.json`, any `.json`) open too: a `.json` file opens as a
 * trace, and whether it is a trace or a bundle is read from its content
 * (its `format` member), as it is for the new extensions.
 */

/** A trace's extension (without the dot). */
export const TRACE_EXTENSION = "mstrace";
/** A bug bundle's extension (without the dot). */
export const BUNDLE_EXTENSION = "msbundle";
/** A scenario's extensions (YAML). */
export const SCENARIO_EXTENSIONS: readonly string[] = ["yaml", "yml"];
/** What opens as a trace (a bundle opens as its trace): the two extensions, and any JSON written before them. */
export const TRACE_OPEN_EXTENSIONS: readonly string[] = [TRACE_EXTENSION, BUNDLE_EXTENSION, "json"];

/** The ending of an exported trace's file name. */
export const TRACE_SUFFIX = `.${TRACE_EXTENSION}`;
/** The ending of a bug bundle's file name. */
export const BUNDLE_SUFFIX = `.${BUNDLE_EXTENSION}`;

/** The extension of a file name, lower case, without the dot ("" when it has none). */
function extensionOf(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? "" : base.slice(dot + 1).toLowerCase();
}

/** What a file opens as, by its name: a scenario (YAML), a trace (or bundle), or neither. */
export function kindOfFileName(name: string): "scenario" | "trace" | undefined {
  const ext = extensionOf(name);
  if (SCENARIO_EXTENSIONS.includes(ext)) return "scenario";
  if (TRACE_OPEN_EXTENSIONS.includes(ext)) return "trace";
  return undefined;
}

/** The `accept` list of a file input or picker for a kind (`.yaml`, `.yml`). */
export function acceptedSuffixes(kind: "scenario" | "trace"): string[] {
  return (kind === "scenario" ? SCENARIO_EXTENSIONS : TRACE_OPEN_EXTENSIONS).map((e) => `.${e}`);
}
