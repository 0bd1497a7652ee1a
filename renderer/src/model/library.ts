/**
 * The scenario library, grouped as docs/ and the file names group it —
 * teaching (`teach-*`), the state table (`state-*`), the errors table
 * (`error-*`), the gaps (`gap-*`) and the others — and searched by name,
 * file and description.
 */

/** A scenario as the library lists it. */
export interface LibraryEntry {
  readonly file: string;
  readonly name: string;
  readonly description: string;
  /** What an opened file is: a scenario (it can be edited) or a trace or bug bundle (it cannot). */
  readonly kind?: "scenario" | "trace";
}

export type LibraryGroupId = "teaching" | "state" | "errors" | "gaps" | "others" | "opened";

export interface LibraryGroup<E extends LibraryEntry = LibraryEntry> {
  readonly id: LibraryGroupId;
  readonly title: string;
  readonly entries: readonly E[];
}

const GROUPS: readonly { id: LibraryGroupId; title: string; prefix?: string }[] = [
  { id: "teaching", title: "Teaching", prefix: "teach-" },
  { id: "state", title: "State table", prefix: "state-" },
  { id: "errors", title: "Errors table", prefix: "error-" },
  { id: "gaps", title: "Gaps", prefix: "gap-" },
  { id: "others", title: "Others" },
];

/** The group of a file name. */
export function groupOf(file: string): LibraryGroupId {
  const base = file.slice(file.lastIndexOf("/") + 1);
  return GROUPS.find((g) => g.prefix !== undefined && base.startsWith(g.prefix))?.id ?? "others";
}

/** Whether `entry` matches every word of `query` (name, file or description; any case). */
export function matches(entry: LibraryEntry, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hay = `${entry.name} ${entry.file} ${entry.description}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/**
 * The library's groups, in a fixed order, each sorted by name (numbers in
 * order: state-2 before state-10), without the groups left empty by the
 * search. `opened` (files the user opened) comes first.
 */
export function groupLibrary<E extends LibraryEntry>(
  bundled: readonly E[],
  query = "",
  opened: readonly E[] = [],
): LibraryGroup<E>[] {
  const byName = (a: E, b: E) => a.name.localeCompare(b.name, "en", { numeric: true });
  const groups: LibraryGroup<E>[] = [];
  const openedShown = opened.filter((e) => matches(e, query));
  if (openedShown.length > 0) groups.push({ id: "opened", title: "Opened", entries: openedShown });
  for (const g of GROUPS) {
    const entries = bundled.filter((e) => groupOf(e.file) === g.id && matches(e, query)).sort(byName);
    if (entries.length > 0) groups.push({ id: g.id, title: g.title, entries });
  }
  return groups;
}
