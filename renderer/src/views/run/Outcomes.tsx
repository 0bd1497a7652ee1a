import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useMemo, useRef, useState } from "react";
import {
  nextSort,
  outcomeFacets,
  outcomeView,
  type OutcomeColumn,
  type OutcomeFilter,
  type OutcomeRow,
  type OutcomeSort,
} from "../../model/outcomes.ts";
import type { WhyTarget } from "../../model/why.ts";
import { FacetSelect, patchFilter } from "../FacetSelect.tsx";

export interface OutcomesProps {
  readonly rows: readonly OutcomeRow[];
  readonly selected: string | undefined;
  readonly onSelect: (delivery: string | undefined) => void;
  /** The recipient whose Why panel is open, if any. */
  readonly why?: WhyTarget | undefined;
  /** Opens (or, for the one open, closes) the Why panel of a recipient. */
  readonly onWhy?: (target: WhyTarget | undefined) => void;
}

/**
 * Above this many rows the table scrolls in a box of its own and draws only
 * the rows in view (a fleet's trace has thousands of recipients: laying out
 * every row took about a second); below it, every row is drawn as before.
 */
export const WINDOWED_FROM = 200;
const ROW_HEIGHT = 26;

/**
 * Per recipient: message, recipient, outcome, when, attempts, POSTs, rule, and "Why?". A row selects its
 * delivery; "Why?" opens the explanation of its outcome. Drawn again only when its props change (not when
 * the clock alone moves).
 */
export const Outcomes = memo(function Outcomes({ rows: all, selected, onSelect, why, onWhy }: OutcomesProps) {
  const [filter, setFilter] = useState<OutcomeFilter>({});
  const [sort, setSort] = useState<OutcomeSort | undefined>();
  const facets = useMemo(() => outcomeFacets(all), [all]);
  const rows = useMemo(() => outcomeView(all, filter, sort), [all, filter, sort]);
  const filtered = Object.values(filter).some((v) => v !== undefined);
  const windowed = rows.length > WINDOWED_FROM;
  const scroller = useRef<HTMLDivElement>(null);
  // The virtualiser's functions are not memoisable; this component is not compiled, and needs not be.
  // eslint-disable-next-line react-hooks/incompatible-library -- the React Compiler skips it, as said above
  const virtual = useVirtualizer({
    count: windowed ? rows.length : 0,
    getScrollElement: () => (windowed ? scroller.current : null),
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  const items = windowed ? virtual.getVirtualItems() : undefined;
  const drawn = items === undefined ? rows.map((r, index) => ({ r, index })) : [];
  if (items !== undefined)
    for (const item of items) drawn.push({ r: rows[item.index] as OutcomeRow, index: item.index });
  const above = items?.[0]?.start ?? 0;
  const below = items === undefined ? 0 : virtual.getTotalSize() - (items.at(-1)?.end ?? 0);
  return (
    <section aria-labelledby="outcomes-heading" className="panel">
      <div className="panel-head">
        <h3 id="outcomes-heading">Outcomes</h3>
        {all.length > 0 && (
          <span className="muted" role="status" data-testid="outcomes-count">
            showing {rows.length.toLocaleString("en-US")} of {all.length.toLocaleString("en-US")}
          </span>
        )}
      </div>
      {all.length > 0 && <OutcomeFilters facets={facets} filter={filter} onFilter={setFilter} filtered={filtered} />}
      <div
        ref={scroller}
        {...(windowed && {
          className: "outcomes-scroll",
          tabIndex: 0,
          role: "region",
          "aria-label": "Outcomes, scrolling",
        })}
      >
        {all.length === 0 ? (
          <p className="muted">No message submitted yet.</p>
        ) : rows.length === 0 ? (
          <p className="muted">No recipient passes these filters.</p>
        ) : (
          <table className="outcomes" {...(windowed && { "aria-rowcount": rows.length + 1 })}>
            <thead>
              <tr>
                {COLUMNS.map(([column, words]) => (
                  <SortableHeader key={column} column={column} words={words} sort={sort} onSort={setSort} />
                ))}
                {onWhy && (
                  <th scope="col">
                    <span className="visually-hidden">Explanation</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {above > 0 && <tr aria-hidden="true" style={{ height: above }} />}
              {drawn.map(({ r, index }) => {
                const isSelected = selected === r.delivery;
                return (
                  <tr
                    key={`${r.messageId} ${r.recipient}`}
                    {...(windowed && { "aria-rowindex": index + 2, "data-index": index, ref: virtual.measureElement })}
                    aria-selected={isSelected}
                    className={isSelected ? "selected" : ""}
                  >
                    <td>
                      <button
                        className="link"
                        aria-pressed={isSelected}
                        onClick={() => onSelect(isSelected ? undefined : r.delivery)}
                        title={r.dsn ? "A delivery status notification" : r.messageId}
                      >
                        {r.dsn ? `DSN ${r.message}` : r.message}
                      </button>
                    </td>
                    <td>{r.recipient}</td>
                    <td>
                      <span className={`outcome ${r.outcome}`}>{r.outcomeText}</span>
                    </td>
                    <td className="num">{r.when}</td>
                    <td className="num">{r.attempts}</td>
                    <td className="num">{r.posts}</td>
                    <td>{r.rule ?? ""}</td>
                    {onWhy && (
                      <td>
                        <WhyButton row={r} open={why} onWhy={onWhy} />
                      </td>
                    )}
                  </tr>
                );
              })}
              {below > 0 && <tr aria-hidden="true" style={{ height: below }} />}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
});

/** "Why?" beside an outcome: its accessible name starts with the words it shows. */
function WhyButton({
  row,
  open,
  onWhy,
}: {
  readonly row: OutcomeRow;
  readonly open: WhyTarget | undefined;
  readonly onWhy: (target: WhyTarget | undefined) => void;
}) {
  const isOpen = open?.messageId === row.messageId && open.recipient === row.recipient;
  return (
    <button
      className="link why-button"
      aria-pressed={isOpen}
      aria-label={`Why? ${row.recipient} of ${row.dsn ? `DSN ${row.message}` : row.message}: ${row.outcomeText}`}
      onClick={() => onWhy(isOpen ? undefined : { messageId: row.messageId, recipient: row.recipient })}
    >
      Why?
    </button>
  );
}

/** The table's columns and their headers' words. */
const COLUMNS: readonly (readonly [OutcomeColumn, string])[] = [
  ["message", "Message"],
  ["recipient", "Recipient"],
  ["outcome", "Outcome"],
  ["when", "When"],
  ["attempts", "Attempts"],
  ["posts", "POSTs"],
  ["rule", "Rule"],
];

/** A column header: a button that sorts by it (Enter or Space, as any button), `aria-sort` saying the order. */
function SortableHeader({
  column,
  words,
  sort,
  onSort,
}: {
  readonly column: OutcomeColumn;
  readonly words: string;
  readonly sort: OutcomeSort | undefined;
  readonly onSort: (sort: OutcomeSort) => void;
}) {
  const direction = sort?.column === column ? sort.direction : undefined;
  return (
    <th scope="col" aria-sort={direction ?? "none"}>
      <button className="sort" onClick={() => onSort(nextSort(sort, column))}>
        {words}
        <span aria-hidden="true" className="sort-arrow">
          {direction === "ascending" ? " ▲" : direction === "descending" ? " ▼" : ""}
        </span>
      </button>
    </th>
  );
}

/** The outcomes' filters: outcome, recipient domain, message words, more than N attempts; and clearing them. */
function OutcomeFilters({
  facets,
  filter,
  onFilter,
  filtered,
}: {
  readonly facets: { readonly outcomes: readonly string[]; readonly domains: readonly string[] };
  readonly filter: OutcomeFilter;
  readonly onFilter: (filter: OutcomeFilter) => void;
  readonly filtered: boolean;
}) {
  const set = (patch: Partial<Record<keyof OutcomeFilter, unknown>>) => onFilter(patchFilter(filter, patch));
  return (
    <div className="filters" role="group" aria-label="Outcome filters">
      <FacetSelect
        label="Outcome"
        name="Filter by outcome"
        value={filter.outcome}
        values={facets.outcomes}
        text={(o) => (o === "smtp" ? "smtp (went to SMTP)" : o)}
        onChange={(outcome) => set({ outcome })}
      />
      <FacetSelect
        label="Domain"
        name="Filter by recipient domain"
        value={filter.domain}
        values={facets.domains}
        onChange={(domain) => set({ domain })}
      />
      <label>
        Message{" "}
        <input
          type="search"
          size={12}
          value={filter.message ?? ""}
          onChange={(e) => set({ message: e.target.value === "" ? undefined : e.target.value })}
        />
      </label>
      <label>
        Attempts more than{" "}
        <input
          type="number"
          min={0}
          step={1}
          className="attempts-over"
          value={filter.attemptsOver ?? ""}
          onChange={(e) => {
            const n = e.target.valueAsNumber;
            set({ attemptsOver: Number.isFinite(n) ? n : undefined });
          }}
        />
      </label>
      <button onClick={() => onFilter({})} disabled={!filtered}>
        Clear filters
      </button>
    </div>
  );
}
