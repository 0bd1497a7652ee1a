import type { ReactNode } from "react";

/** A column's heading: its words, or `{ hidden }` for words only a screen reader says (a column of buttons). */
export type ColumnHeading = string | { readonly hidden: string };

export interface TableProps {
  readonly className?: string;
  /** The table's name as a caption: said to a screen reader only, unless `captionShown`. */
  readonly caption?: string;
  readonly captionShown?: boolean;
  /** The table's name when it has no caption. */
  readonly label?: string;
  /** The columns' widths (a `<colgroup>`), when the stylesheet sets them. */
  readonly colgroup?: ReactNode;
  /** The columns' headings, left to right; `false` or `undefined` leaves a column out. */
  readonly columns: readonly (ColumnHeading | false | undefined)[];
  /** The rows: `<tr>` elements. */
  readonly children: ReactNode;
}

/**
 * A table of rows under one row of column headings, as the inspector, the probe report, Explore and Sweep
 * draw theirs: the heading row and caption written once.
 */
export function Table({ className, caption, captionShown = false, label, colgroup, columns, children }: TableProps) {
  return (
    <table className={className} aria-label={label}>
      {caption !== undefined && <caption className={captionShown ? undefined : "visually-hidden"}>{caption}</caption>}
      {colgroup}
      <thead>
        <tr>
          {columns.map((c, i) =>
            c === false || c === undefined ? null : (
              <th scope="col" key={i}>
                {typeof c === "string" ? c : <span className="visually-hidden">{c.hidden}</span>}
              </th>
            ),
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
