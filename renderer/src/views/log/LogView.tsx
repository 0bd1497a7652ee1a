import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useDeferredValue, useEffect, useMemo, useRef, useState, type RefObject } from "react";
import {
  filterLog,
  filtersHiding,
  hiddenBy,
  markedHidden,
  withoutFilters,
  type LogFilterKey,
  draftLogWordIndex,
  LOG_INDEX_SLICE,
  logFacets,
  stepLogWordIndex,
  type LogWordIndex,
  rowOfSeq,
  type LogFilter,
  type LogRow,
} from "../../model/log.ts";
import { CopyLink } from "../run/Permalink.tsx";
import { FacetSelect } from "../FacetSelect.tsx";
import { scrollClearOfBars } from "../scrollClear.ts";

export interface LogViewProps {
  readonly rows: readonly LogRow[];
  /** The event selected (a link's, a line's, a timeline mark's): its line is marked and brought into view. */
  readonly selected?: number | undefined;
  /** The event a permalink selected: the page itself scrolls to its line (a link opens at its place). */
  readonly linked?: number | undefined;
  /** A line's time pressed: select its event. */
  readonly onSelect?: (seq: number) => void;
  /** The selected delivery (from the outcomes table), if any. */
  readonly delivery: string | undefined;
  readonly onClearDelivery: () => void;
  readonly onRule: (rule: string) => void;
  /** Seqs to mark (a check's evidence, a Why clause's). */
  readonly highlight: ReadonlySet<number>;
  /**
   * How many times a link to marked lines was followed (a check's "evidence", a Why clause's "Log"): each time,
   * the focus comes to the log — to its "show them" when its filters hide some of the lines marked.
   */
  readonly highlightLinks?: number;
}

const ROW_HEIGHT = 24;
const NO_ROWS: readonly LogRow[] = [];

/**
 * The log's word index for a search: built once a search is typed, a slice of rows between
 * frames (never blocking the page for more than a slice), and again for a longer log of the same run
 * (its rows keep their words: only the new ones are read). Until it is built, the index of the rows
 * before, if any, answers; `read` says how far the build is.
 */
function useWordIndex(
  rows: readonly LogRow[],
  enabled: boolean,
): { readonly index: LogWordIndex | undefined; readonly read: number } {
  const [state, setState] = useState<{ readonly index: LogWordIndex | undefined; readonly read: number }>({
    index: undefined,
    read: 0,
  });
  const built = useRef<LogWordIndex | undefined>(undefined);
  useEffect(() => {
    if (!enabled || built.current?.rows === rows) return;
    const draft = draftLogWordIndex(rows);
    let id: ReturnType<typeof setTimeout> | undefined;
    const slice = () => {
      const index = stepLogWordIndex(draft, LOG_INDEX_SLICE);
      if (index !== undefined) {
        built.current = index;
        setState({ index, read: rows.length });
      } else {
        setState((s) => ({ index: s.index, read: draft.next }));
        id = setTimeout(slice, 0);
      }
    };
    id = setTimeout(slice, 0);
    return () => clearTimeout(id);
  }, [rows, enabled]);
  return state;
}

/**
 * The log: virtualised rows in the CLI's words, filterable, following the playhead.
 * Drawn again only when its props change (not when the clock alone moves).
 */
export const LogView = memo(function LogView({
  rows,
  selected,
  linked,
  onSelect,
  delivery,
  onClearDelivery,
  onRule,
  highlight,
  highlightLinks = 0,
}: LogViewProps) {
  const [filter, setFilter] = useState<LogFilter>({});
  const [onlyEvidence, setOnlyEvidence] = useState(false);
  const [follow, setFollow] = useState(true);
  const facets = useMemo(() => logFacets(rows), [rows]);
  // Typing stays fluid: the search follows the words typed as soon as the page is free.
  const text = useDeferredValue(filter.text ?? "");
  const searching = text.trim() !== "";
  const words = useWordIndex(rows, searching);
  // A search answers from the index (of these rows, or of the rows before while it is built for these).
  const wordIndex = searching ? words.index : undefined;
  const searched = searching ? (wordIndex?.rows ?? NO_ROWS) : rows;
  const indexing = searching && wordIndex?.rows !== rows;
  // "Only evidence rows": those citing a rule or gap, and those a Why clause or a check points at.
  const evidence = useMemo(
    () => (onlyEvidence ? ({ evidence: true, also: highlight } as const) : undefined),
    [onlyEvidence, highlight],
  );
  const shown = useMemo(
    () =>
      filterLog(
        searched,
        {
          ...filter,
          text,
          ...(delivery !== undefined && { delivery }),
          ...evidence,
        },
        wordIndex,
      ),
    [searched, filter, text, delivery, evidence, wordIndex],
  );
  const scroller = useRef<HTMLDivElement>(null);
  const onPage = useLineOnPage(scroller);
  // The marked lines last brought into view (below).
  const [highlighted, setHighlighted] = useState<ReadonlySet<number> | undefined>();
  // The filters as they hide a line (the search as typed, not as deferred).
  const hidingFilter = useMemo(
    () => ({ ...filter, ...(delivery !== undefined && { delivery }), ...evidence }),
    [filter, delivery, evidence],
  );
  // Show a hidden line: only the filters that hide it are taken off, the others stay as the reader set them. Its
  // button goes: the focus comes to the log, which shows the line; marked lines are brought into view again (the
  // first may be another than the one in view before).
  const showHidden = (keys: readonly LogFilterKey[], marked: boolean) => {
    setFilter((f) => withoutFilters(f, keys));
    if (keys.includes("evidence")) setOnlyEvidence(false);
    if (keys.includes("delivery")) onClearDelivery();
    if (marked) setHighlighted(undefined);
    scroller.current?.focus({ preventScroll: true });
    onPage.ask();
  };
  // The virtualiser's functions are not memoisable; this component is not compiled, and needs not be.
  // eslint-disable-next-line react-hooks/incompatible-library -- the React Compiler skips it, as said above
  const virtual = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
  });
  useEffect(() => {
    if (follow && shown.length > 0) virtual.scrollToIndex(shown.length - 1, { align: "end" });
  }, [follow, shown.length, virtual]);
  // A check's evidence (or a history row's event): stop following and bring its first line into view, once the
  // log shows one (a live run's later batch may bring it). Only a new highlight moves the view: once brought into
  // view, later batches and filters leave the reader where they are.
  useEffect(() => {
    if (highlight.size === 0 || highlight === highlighted) return;
    const index = shown.findIndex((r) => highlight.has(r.seq));
    if (index < 0) return;
    setHighlighted(highlight);
    setFollow(false);
    virtual.scrollToIndex(index, { align: "center" });
    onPage.scrolledTo((shown[index] as LogRow).seq);
  }, [highlight, highlighted, shown, virtual, onPage]);

  // A newly selected event: stop following and bring its line into view, once the filters show it.
  const [scrolledTo, setScrolledTo] = useState<number | undefined>();
  useEffect(() => {
    if (selected === undefined || selected === scrolledTo) return;
    const index = shown.findIndex((r) => r.seq === selected);
    if (index < 0) return;
    setScrolledTo(selected);
    setFollow(false);
    virtual.scrollToIndex(index, { align: "center" });
    onPage.scrolledTo(selected);
    if (selected === linked) requestAnimationFrame(() => scroller.current?.scrollIntoView({ block: "center" }));
  }, [selected, linked, scrolledTo, shown, virtual, onPage]);

  const set = (patch: Partial<LogFilter>) => setFilter((f) => ({ ...f, ...patch }));
  return (
    <section aria-labelledby="log-heading" className="panel log">
      <div className="panel-head">
        <h3 id="log-heading">Log</h3>
        <span className="muted" data-testid="log-count">
          {shown.length} of {rows.filter((r) => filter.full === true || !r.detail).length} lines
        </span>
        {indexing && (
          <span className="muted" role="status">
            searching: {Math.floor((100 * Math.min(words.read, rows.length)) / Math.max(1, rows.length))} % of the log
            read
          </span>
        )}
      </div>
      <div className="filters" role="group" aria-label="Log filters">
        <label>
          Search{" "}
          <input
            type="search"
            size={18}
            placeholder="words in the log"
            value={filter.text ?? ""}
            onChange={(e) => set({ text: e.target.value })}
          />
        </label>
        <FacetSelect
          label="Domain"
          name="Filter by domain"
          value={filter.domain}
          values={facets.domains}
          onChange={(domain) => set({ domain })}
        />
        <KindPicker kinds={facets.kinds} chosen={filter.kinds} onChange={(kinds) => set({ kinds })} />
        <FacetSelect
          label="Rule"
          name="Filter by rule"
          value={filter.rule}
          values={facets.rules}
          onChange={(rule) => set({ rule })}
        />
        <label>
          <input type="checkbox" checked={filter.full === true} onChange={(e) => set({ full: e.target.checked })} />{" "}
          Wire and state machine
        </label>
        <label title="Events citing a rule or gap of the spec, and those a Why clause or a check points at">
          <input type="checkbox" checked={onlyEvidence} onChange={(e) => setOnlyEvidence(e.target.checked)} /> Only
          evidence rows
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
      <HiddenLines
        rows={rows}
        selected={selected}
        highlight={highlight}
        filter={hidingFilter}
        onShow={showHidden}
        links={highlightLinks}
        log={scroller}
      />
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
              <LogLine
                key={row.seq}
                row={row}
                top={item.start}
                selected={row.seq === selected}
                evidence={highlight.has(row.seq)}
                onSelect={onSelect}
                onRule={onRule}
              />
            );
          })}
        </div>
      </div>
    </section>
  );
});

/**
 * A line shown by "show it" is brought into the window too, not only into the log's box (the page may have the
 * log half below the fold): `ask` before the filters change, `scrolledTo` once the log has scrolled to the line.
 */
function useLineOnPage(log: RefObject<HTMLDivElement | null>) {
  const asked = useRef(false);
  return useMemo(
    () => ({
      ask: () => {
        asked.current = true;
      },
      scrolledTo: (seq: number) => {
        if (!asked.current) return;
        asked.current = false;
        // Once the virtual list has drawn the line where it scrolled to.
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const line = log.current?.querySelector(`[data-seq="${seq}"]`);
            if (line) scrollClearOfBars(line, { block: "center" });
          }),
        );
      },
    }),
    [log],
  );
}

/**
 * What the filters hide of the selected event's line and of the lines marked as evidence, each with its "show"
 * button. A link to marked lines followed (`links` counts them) brings the focus here: to "show them" when the
 * filters hide some of the lines, else to the log itself (the page scrolls to it: see useRunSelection).
 */
function HiddenLines(p: {
  readonly rows: readonly LogRow[];
  readonly selected: number | undefined;
  readonly highlight: ReadonlySet<number>;
  /** Every filter of the log, as they hide a line. */
  readonly filter: LogFilter;
  /** Take off the filters `keys` (those that hide the selected line, or the marked ones). */
  readonly onShow: (keys: readonly LogFilterKey[], marked: boolean) => void;
  readonly links: number;
  readonly log: RefObject<HTMLDivElement | null>;
}) {
  const { rows, highlight, filter, onShow, links, log } = p;
  // The selected event's line, when the filters hide it (a link followed with a filter on): what hides it.
  const selected = p.selected === undefined ? undefined : rowOfSeq(rows, p.selected);
  const hiding = useMemo(() => (selected === undefined ? [] : hiddenBy(selected, filter)), [selected, filter]);
  // The lines marked as evidence that the filters hide (a filter on, then a check's evidence followed).
  const marked = useMemo(() => markedHidden(rows, highlight, filter), [rows, highlight, filter]);
  const showMarked = useRef<HTMLButtonElement>(null);
  const linksSeen = useRef(links);
  useEffect(() => {
    if (links === linksSeen.current) return;
    linksSeen.current = links;
    (showMarked.current ?? log.current)?.focus({ preventScroll: true });
  }, [links, log]);
  return (
    <>
      {selected !== undefined && hiding.length > 0 && (
        <p className="notice" role="status" data-testid="log-hidden">
          Event #{selected.seq} is selected, but the log hides its line: {hiding.join(", ")}.{" "}
          <button onClick={() => onShow(filtersHiding(selected, filter), false)}>Show it</button>
        </p>
      )}
      {marked.text !== undefined && (
        <p className="notice" role="status" data-testid="log-marked-hidden">
          <span id="log-marked-hidden-text">{marked.text}</span>{" "}
          <button
            ref={showMarked}
            onClick={() =>
              onShow(
                marked.by.map((b) => b.key),
                true,
              )
            }
            aria-describedby="log-marked-hidden-text"
          >
            {marked.hidden === 1 ? "Show it" : "Show them"}
          </button>
        </p>
      )}
    </>
  );
}

/**
 * The event kinds shown: a disclosure of checkboxes, one per kind in the run (none ticked: every kind),
 * its summary saying how many are chosen.
 */
function KindPicker({
  kinds,
  chosen,
  onChange,
}: {
  readonly kinds: readonly string[];
  readonly chosen: ReadonlySet<string> | undefined;
  readonly onChange: (kinds: ReadonlySet<string> | undefined) => void;
}) {
  const n = chosen?.size ?? 0;
  const toggle = (kind: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(kind);
    else next.delete(kind);
    onChange(next.size === 0 ? undefined : next);
  };
  return (
    <details className="kind-picker">
      <summary>Events: {n === 0 ? "every kind" : n === 1 ? [...(chosen ?? [])][0] : `${n} kinds`}</summary>
      <fieldset>
        <legend>Event kinds shown (none ticked: every kind)</legend>
        <button onClick={() => onChange(undefined)} disabled={n === 0}>
          Every kind
        </button>
        <ul>
          {kinds.map((k) => (
            <li key={k}>
              <label>
                <input
                  type="checkbox"
                  checked={chosen?.has(k) === true}
                  onChange={(e) => toggle(k, e.target.checked)}
                />{" "}
                {k}
              </label>
            </li>
          ))}
        </ul>
      </fieldset>
    </details>
  );
}

/** One line of the log, at `top` px in the virtual list. */
function LogLine({
  row,
  top,
  selected,
  evidence,
  onSelect,
  onRule,
}: {
  readonly row: LogRow;
  readonly top: number;
  readonly selected: boolean;
  /** A check's evidence or a Why clause points at it. */
  readonly evidence: boolean;
  readonly onSelect: LogViewProps["onSelect"];
  readonly onRule: (rule: string) => void;
}) {
  return (
    <div
      className={`log-row${row.detail ? " detail" : ""}${evidence ? " evidence" : ""}${selected ? " selected" : ""}`}
      data-seq={row.seq}
      data-kind={row.kind}
      data-selected={selected || undefined}
      data-evidence={evidence || undefined}
      data-testid="log-row"
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
    >
      {onSelect ? (
        <button
          className="at link"
          aria-pressed={selected}
          title={`Select event #${row.seq} (for a link to it)`}
          onClick={() => onSelect(row.seq)}
        >
          {row.at}
        </button>
      ) : (
        <span className="at">{row.at}</span>
      )}
      <span className="domain">{row.domain}</span>
      <span className="text" title={row.text}>
        {row.text.replace(/ \[[^\]]+\]$/, "")}
      </span>
      {selected && <CopyLink key={row.seq} seq={row.seq} compact />}
      {row.rules.map((r) => (
        <button key={r} className="rule" onClick={() => onRule(r)} title={`Rule ${r}`}>
          {r}
        </button>
      ))}
    </div>
  );
}
