import { useState } from "react";
import { bundleText, createBundle, recordedBodies } from "../../../../app/trace/bundle.ts";
import { BUNDLE_SUFFIX, TRACE_SUFFIX } from "../../../../app/trace/fileNames.ts";
import { exportHar } from "../../../../app/trace/exportHar.ts";
import { exportJson } from "../../../../app/trace/exportJson.ts";
import { exportMarkdown } from "../../../../app/trace/exportMarkdown.ts";
import type { Trace } from "../../../../app/trace/schema.ts";

export interface ExportBarProps {
  readonly trace: Trace;
  /** The bytes of the scenario's `eml:` files, when the run has them: the bug bundle carries them. */
  readonly emls?: Readonly<Record<string, Uint8Array>> | undefined;
  readonly onSave: (name: string, contents: string, type: string) => void;
}

/** The file name of an export: the scenario's name and what it is. */
export function exportName(trace: Trace, suffix: string): string {
  return `${trace.scenario.name.replace(/[^A-Za-z0-9._-]+/g, "-")}${suffix}`;
}

/** What an export writes: its file name, contents and media type. */
export function exportFile(
  trace: Trace,
  what: "trace" | "har" | "report",
  full = false,
): { readonly name: string; readonly contents: string; readonly type: string } {
  switch (what) {
    case "trace":
      return {
        name: exportName(trace, TRACE_SUFFIX),
        contents: exportJson(trace, { full }),
        type: "application/json",
      };
    case "har":
      return {
        name: exportName(trace, ".har"),
        contents: `${JSON.stringify(exportHar(trace), null, 2)}\n`,
        type: "application/json",
      };
    case "report":
      return { name: exportName(trace, ".md"), contents: exportMarkdown(trace), type: "text/markdown" };
  }
}

/**
 * The run's bug bundle (issue 15): scenario, seed, readings, version, trace and report in one JSON
 * file, with the bytes of the scenario's `eml:` files when the run has them. Bodies stay out unless
 * `full` (and the run recorded them).
 */
export async function bundleFile(
  trace: Trace,
  full = false,
  emls?: Readonly<Record<string, Uint8Array>>,
): Promise<{ readonly name: string; readonly contents: string; readonly type: string }> {
  const bundle = await createBundle(trace, {
    recordBodies: recordedBodies(trace),
    full,
    ...(emls !== undefined && { emls }),
  });
  return { name: exportName(trace, BUNDLE_SUFFIX), contents: bundleText(bundle), type: "application/json" };
}

/** Export the run: trace JSON (redacted unless asked), HAR, the Markdown bug report. */
export function ExportBar({ trace, emls, onSave }: ExportBarProps) {
  const [full, setFull] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const save = (what: "trace" | "har" | "report") => {
    const f = exportFile(trace, what, full);
    onSave(f.name, f.contents, f.type);
  };
  return (
    <div className="export" role="group" aria-label="Export">
      <span className="muted">Export</span>
      <button onClick={() => save("trace")}>Trace JSON</button>
      <label>
        <input type="checkbox" checked={full} onChange={(e) => setFull(e.target.checked)} /> with message bodies
      </label>
      <button onClick={() => save("har")}>HAR</button>
      <button onClick={() => save("report")}>Report (Markdown)</button>
      <button
        onClick={() => {
          setError(undefined);
          bundleFile(trace, full, emls).then(
            (f) => onSave(f.name, f.contents, f.type),
            (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
          );
        }}
        title="Scenario, seed, readings, Mailscope version, trace and report in one file that re-runs"
      >
        Bug bundle
      </button>
      {error && (
        <span role="alert" className="error">
          Could not make the bundle: {error}
        </span>
      )}
    </div>
  );
}
