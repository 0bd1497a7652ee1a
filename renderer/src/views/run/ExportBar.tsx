import { bundleText, createBundle } from "../../../../app/trace/bundle.ts";
import { BUNDLE_SUFFIX, TRACE_SUFFIX } from "../../../../app/trace/fileNames.ts";
import { exportHar } from "../../../../app/trace/exportHar.ts";
import { exportJson, leftOut, recordedBodies } from "../../../../app/trace/exportJson.ts";
import { exportMarkdown } from "../../../../app/trace/exportMarkdown.ts";
import type { Trace } from "../../../../app/trace/schema.ts";

/** What the export bar (and File ▸ Export in the desktop app) writes. */
export type ExportWhat = "trace" | "har" | "report" | "bundle";

/** A file an export writes, and what it leaves out (said when it is saved). */
export interface ExportedFile {
  readonly name: string;
  readonly contents: string;
  readonly type: string;
  /** `Left out: message bodies and private keys.` */
  readonly leftOut: string;
}

/**
 * The run's exports, one state for the export bar and the desktop app's File ▸ Export: whether they keep
 * message bodies ("with message bodies"), what the last one left out, and the export itself.
 */
export interface RunExports {
  readonly full: boolean;
  readonly onFull: (full: boolean) => void;
  /** What the last export wrote and left out, said under the bar. */
  readonly note?: string | undefined;
  readonly onExport: (trace: Trace, what: ExportWhat) => void;
}

/** The file name of an export: the scenario's name and what it is. */
export function exportName(trace: Trace, suffix: string): string {
  return `${trace.scenario.name.replace(/[^A-Za-z0-9._-]+/g, "-")}${suffix}`;
}

/**
 * What an export writes: its file name, contents, media type and what it leaves out. Every export follows
 * "with message bodies" (`full`): the trace, the HAR and the bug bundle keep the bodies the run recorded only
 * with it; the report never holds a body. None holds a private key.
 */
export async function exportFile(
  trace: Trace,
  what: ExportWhat,
  full: boolean,
  emls?: Readonly<Record<string, Uint8Array>>,
): Promise<ExportedFile> {
  const left = leftOut(what, trace, full);
  switch (what) {
    case "trace":
      return {
        name: exportName(trace, TRACE_SUFFIX),
        contents: exportJson(trace, { full }),
        type: "application/json",
        leftOut: left,
      };
    case "har":
      return {
        name: exportName(trace, ".har"),
        contents: `${JSON.stringify(exportHar(trace, { full }), null, 2)}\n`,
        type: "application/json",
        leftOut: left,
      };
    case "report":
      return { name: exportName(trace, ".md"), contents: exportMarkdown(trace), type: "text/markdown", leftOut: left };
    case "bundle": {
      // The bug bundle: scenario, seed, readings, version, trace and report in one JSON file, with the
      // bytes of the scenario's `eml:` files when the run has them: its re-run needs them, so it carries them.
      const bundle = await createBundle(trace, {
        recordBodies: recordedBodies(trace),
        full,
        ...(emls !== undefined && { emls }),
      });
      const files = Object.keys(bundle.emls ?? {});
      const carried =
        files.length > 0
          ? ` It carries the bytes of the scenario's eml: file${files.length === 1 ? "" : "s"} (${files.join(", ")}): its re-run needs them.`
          : "";
      return {
        name: exportName(trace, BUNDLE_SUFFIX),
        contents: bundleText(bundle),
        type: "application/json",
        leftOut: `${left}${carried}`,
      };
    }
  }
}

/** `rate-limited-then-down.har: left out: message bodies and private keys (tick "with message bodies" …).` */
export function exportNote(file: ExportedFile, trace: Trace, what: ExportWhat, full: boolean): string {
  const bodies = what !== "report" && !full && recordedBodies(trace);
  return `${file.name}: ${file.leftOut.replace(/^Left out/, "left out")}${bodies ? ' Tick "with message bodies" to keep them.' : ""}`;
}

/** Export the run: trace JSON, HAR, the Markdown bug report and the bug bundle, with message bodies or without. */
export function ExportBar({ trace, full, onFull, note, onExport }: { readonly trace: Trace } & RunExports) {
  return (
    <div className="export" role="group" aria-label="Export">
      <span className="muted">Export</span>
      <label>
        <input type="checkbox" checked={full} onChange={(e) => onFull(e.target.checked)} /> with message bodies
      </label>
      <button onClick={() => onExport(trace, "trace")}>Trace JSON</button>
      <button onClick={() => onExport(trace, "har")}>HAR</button>
      <button onClick={() => onExport(trace, "report")}>Report (Markdown)</button>
      <button
        onClick={() => onExport(trace, "bundle")}
        title="Scenario, seed, readings, Mailscope version, trace and report in one file that re-runs"
      >
        Bug bundle
      </button>
      {note !== undefined && (
        <p role="status" className="export-note" data-testid="export-note">
          {note}
        </p>
      )}
    </div>
  );
}
