import { useState } from "react";
import { exportHar } from "../../../../app/trace/exportHar.ts";
import { exportJson } from "../../../../app/trace/exportJson.ts";
import { exportMarkdown } from "../../../../app/trace/exportMarkdown.ts";
import type { Trace } from "../../../../app/trace/schema.ts";

export interface ExportBarProps {
  readonly trace: Trace;
  readonly onSave: (name: string, contents: string, type: string) => void;
}

/** The file name of an export: the scenario's name and what it is. */
export function exportName(trace: Trace, suffix: string): string {
  return `${trace.scenario.name.replace(/[^A-Za-z0-9._-]+/g, "-")}${suffix}`;
}

/** Export the run: trace JSON (redacted unless asked), HAR, the Markdown bug report. */
export function ExportBar({ trace, onSave }: ExportBarProps) {
  const [full, setFull] = useState(false);
  return (
    <div className="export" role="group" aria-label="Export">
      <span className="muted">Export</span>
      <button
        onClick={() =>
          onSave(exportName(trace, ".mailscope-trace.json"), exportJson(trace, { full }), "application/json")
        }
      >
        Trace JSON
      </button>
      <label>
        <input type="checkbox" checked={full} onChange={(e) => setFull(e.target.checked)} /> with message bodies
      </label>
      <button
        onClick={() =>
          onSave(exportName(trace, ".har"), `${JSON.stringify(exportHar(trace), null, 2)}\n`, "application/json")
        }
      >
        HAR
      </button>
      <button onClick={() => onSave(exportName(trace, ".md"), exportMarkdown(trace), "text/markdown")}>
        Report (Markdown)
      </button>
    </div>
  );
}
