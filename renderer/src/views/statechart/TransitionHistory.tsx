import { useEffect, useRef } from "react";
import type { HistoryRow } from "../../model/statechart.ts";

export interface TransitionHistoryProps {
  readonly rows: readonly HistoryRow[];
  /** The row the chart shows (the transition just taken), -1 for none. */
  readonly current: number;
  /** Whether the chart is pinned to a row chosen here (rather than following the playhead). */
  readonly pinned: boolean;
  readonly onPick: (row: HistoryRow) => void;
  readonly onRule: (rule: string) => void;
}

/**
 * Transitions drawn at most: those around the one shown. A long run's actor takes tens of thousands (a
 * 100k-event trace of one delivery), and laying out every one took seconds.
 */
export const HISTORY_WINDOW = 1000;

/** The actor's transitions in order: when, which (from → to), the table's row, and why the guard chose it. */
export function TransitionHistory({ rows: all, current, pinned, onPick, onRule }: TransitionHistoryProps) {
  const from = Math.max(0, Math.min(current - HISTORY_WINDOW / 2, all.length - HISTORY_WINDOW));
  const rows = all.length > HISTORY_WINDOW ? all.slice(from, from + HISTORY_WINDOW) : all;
  const before = all.length > HISTORY_WINDOW ? from : 0;
  const after = all.length - before - rows.length;
  const scroller = useRef<HTMLDivElement>(null);
  // Keep the current row in sight while following the playhead (within the list only, not the page),
  // also when the list changes size (the window, the drawing beside it).
  useEffect(() => {
    const box = scroller.current;
    if (box === null || pinned) return;
    const reveal = () => {
      const row = box.querySelector<HTMLElement>(`li[data-index="${current}"]`);
      if (row === null) return;
      const top = row.offsetTop; // the list is the row's offset parent
      if (top < box.scrollTop || top + row.offsetHeight > box.scrollTop + box.clientHeight)
        box.scrollTop = Math.max(0, top - box.clientHeight + row.offsetHeight + 8);
    };
    reveal();
    const observer = new ResizeObserver(reveal);
    observer.observe(box);
    return () => observer.disconnect();
  }, [current, pinned, all.length]);
  // A row pinned from elsewhere (a Why clause's step) is brought into sight once, within the list.
  useEffect(() => {
    const box = scroller.current;
    if (box === null || !pinned) return;
    const row = box.querySelector<HTMLElement>(`li[data-index="${current}"]`);
    if (row === null) return;
    const top = row.offsetTop;
    if (top < box.scrollTop || top + row.offsetHeight > box.scrollTop + box.clientHeight)
      box.scrollTop = Math.max(0, top - (box.clientHeight - row.offsetHeight) / 2);
  }, [current, pinned]);
  return (
    <div className="sc-history" ref={scroller} tabIndex={0} role="region" aria-label="Transition history">
      {rows.length === 0 ? (
        <p className="muted">No transition yet.</p>
      ) : (
        // A list, not a table: one transition per item, read in order.
        <ol className="sc-rows">
          {before > 0 && (
            <li className="muted sc-more" aria-hidden="true">
              … {before} earlier transitions
            </li>
          )}
          {rows.map((r) => {
            const isCurrent = r.index === current;
            return (
              <li
                key={r.seq}
                data-index={r.index}
                data-transition={r.name}
                aria-current={isCurrent ? "step" : undefined}
                className={isCurrent ? "sc-current" : undefined}
              >
                <button
                  className="link sc-at"
                  onClick={() => onPick(r)}
                  aria-label={`Show the machine after ${r.name} at ${r.at}`}
                  title="Show the machine right after this transition, and mark its event in the log"
                >
                  {r.at}
                </button>
                <span className="sc-main">
                  <code className="sc-name">{r.name}</code>
                  {r.row !== undefined && <span className="sc-row"> (row {r.row})</span>}
                  <span className="sc-fromto muted">
                    {" "}
                    {short(r.from)} → {short(r.to)}
                  </span>
                  <span className="sc-why">{r.why}</span>
                  <span className="sc-rules">
                    {r.rules.map((rule) => (
                      <button key={rule} className="rule" onClick={() => onRule(rule)} title={`Rule ${rule}`}>
                        {rule}
                      </button>
                    ))}
                  </span>
                </span>
              </li>
            );
          })}
          {after > 0 && (
            <li className="muted sc-more" aria-hidden="true">
              … {after} later transitions
            </li>
          )}
        </ol>
      )}
    </div>
  );
}

/** `attemptingOverService.judging` → `judging` (the box the chart draws it in says the rest). */
function short(path: string): string {
  return path.slice(path.lastIndexOf(".") + 1);
}
