import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useMemo, useRef, useState } from "react";
import { filterLog, logFacets, type LogFilter, type LogRow } from "../../model/log.ts";

export interface LogViewProps {
  readonly rows: readonly LogRow[];
  /** The selected delivery (from the outcomes table), if any. */
  readonly delivery: string | undefined;
  readonly onClearDelivery: () => void;
  readonly onRule: (rule: string) => void;
  /** Seqs to mark (a check's evidence). */
  readonly highlight: ReadonlySet<number>;
}

const ROW_HEIGHT = 24;

/**
 * The log: virtualised rows in the CLI's words, filterable, following the playhead.
 * Drawn again only when its props change (not when the clock alone moves).
 */
export const LogView = memo(function LogView({ rows, delivery, onClearDelivery, onRule, highlight }: LogViewProps) {
  const [filter, setFilter] = useState<LogFilter>({});
  const [follow, setFollow] = useState(true);
  const facets = useMemo(() => logFacets(rows), [rows]);
  const shown = useMemo(
    () => filterLog(rows, { ...filter, ...(delivery !== undefined && { delivery }) }),
    [rows, filter, delivery],
  );
  const scroller = useRef<HTMLDivElement>(null);
  // The virtualiser's functions are not memoisable; this component is not compiled, and needs not be.
  const virtual = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
  });
  useEffect(() => {
    if (follow && shown.length > 0) virtual.scrollToIndex(shown.length - 1, { align: "end" });
  }, [follow, shown.length, virtual]);
  // A check's evidence (or a history row's event): stop following and bring its first line into view.
  useEffect(() => {
    if (highlight.size === 0) return;
    const index = shown.findIndex((r) => highlight.has(r.seq));
    if (index < 0) return;
    setFollow(false);
    virtual.scrollToIndex(index, { align: "center" });
    // Only a new highlight moves the view; later batches and filters leave the reader where they are.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [highlight]);

  const set = (patch: Partial<LogFilter>) => setFilter((f) => ({ ...f, ...patch }));
  return (
    <section aria-labelledby="log-heading" className="panel log">
      <div className="panel-head">
        <h3 id="log-heading">Log</h3>
        <span className="muted" data-testid="log-count">
          {shown.length} of {rows.filter((r) => filter.full === true || !r.detail).length} lines
        </span>
      </div>
      <div className="filters" role="group" aria-label="Log filters">
        <label>
          Domain{" "}
          <select
            aria-label="Filter by domain"
            value={filter.domain ?? ""}
            onChange={(e) => set({ domain: e.target.value || undefined })}
          >
            <option value="">all</option>
            {facets.domains.map((d) => (
              <option key={d}>{d}</option>
            ))}
          </select>
        </label>
        <label>
          Event{" "}
          <select
            aria-label="Filter by event"
            value={filter.kind ?? ""}
            onChange={(e) => set({ kind: e.target.value || undefined })}
          >
            <option value="">all</option>
            {facets.kinds.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Rule{" "}
          <select
            aria-label="Filter by rule"
            value={filter.rule ?? ""}
            onChange={(e) => set({ rule: e.target.value || undefined })}
          >
            <option value="">all</option>
            {facets.rules.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={filter.full === true} onChange={(e) => set({ full: e.target.checked })} />{" "}
          Wire and state machine
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow playhead
        </label>
        {delivery !== undefined && (
          // Its name is its words (WCAG 2.5.3, axe's label-content-name-mismatch), then what a press does.
          <button className="chip" onClick={onClearDelivery} title="Show every delivery">
            delivery {delivery}
            <span className="visually-hidden"> (show every delivery)</span>
            <span aria-hidden="true"> ✕</span>
          </button>
        )}
      </div>
      <div
        ref={scroller}
        className="log-scroll"
        role="log"
        aria-label="Event log"
        tabIndex={0}
        onWheel={() => setFollow(false)}
      >
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((item) => {
            const row = shown[item.index];
            if (row === undefined) return null;
            return (
              <div
                key={row.seq}
                className={`log-row${row.detail ? " detail" : ""}${highlight.has(row.seq) ? " evidence" : ""}`}
                data-seq={row.seq}
                data-evidence={highlight.has(row.seq) || undefined}
                data-testid="log-row"
                style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
              >
                <span className="at">{row.at}</span>
                <span className="domain">{row.domain}</span>
                <span className="text" title={row.text}>
                  {row.text.replace(/ \[[^\]]+\]$/, "")}
                </span>
                {row.rules.map((r) => (
                  <button key={r} className="rule" onClick={() => onRule(r)} title={`Rule ${r}`}>
                    {r}
                  </button>
                ))}
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
});
