import { useMemo } from "react";
import { readingControls, readingSetting, type ReadingControl } from "../../model/readings.ts";

export interface ReadingsProps {
  readonly readings: Readonly<Record<string, string>>;
  readonly disabled: boolean;
  readonly onChange: (setting: [string, string]) => void;
  /** Whether the panel is unfolded; kept by the run view across restarts. */
  readonly open: boolean;
  readonly onToggle: (open: boolean) => void;
}

/** The switchable gaps' readings; a change restarts the run with it. */
export function Readings({ readings, disabled, onChange, open, onToggle }: ReadingsProps) {
  const controls = useMemo(() => readingControls(readings), [readings]);
  return (
    <details className="panel readings" open={open} onToggle={(e) => onToggle(e.currentTarget.open)}>
      <summary>Readings of the spec's gaps</summary>
      <p className="muted">Where the spec leaves a choice open, pick a reading; the run restarts with it.</p>
      <div className="readings-grid">
        {controls.map((c: ReadingControl) => (
          <label key={c.key} title={c.title}>
            <span>
              {c.label} <span className="muted">{c.title}</span>
            </span>
            <select value={c.value} disabled={disabled} onChange={(e) => onChange(readingSetting(c, e.target.value))}>
              {c.options.map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          </label>
        ))}
      </div>
    </details>
  );
}
