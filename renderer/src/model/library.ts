/**
 * The scenario library, grouped as docs/ and the file names group it — the
 * "Start here" lessons first (scenarios with a `lesson`, in its order), then
 * teaching (`teach-*`), the state table (`state-*`), the errors table
 * (`error-*`), the gaps (`gap-*`) and the others — and searched by title,
 * name, file and description. Each scenario is listed once: a lesson under
 * "Start here" only.
 */
import type { ScenarioLesson } from "../../../app/sim/lesson.ts";

/** A scenario as the library lists it. */
export interface LibraryEntry {
  readonly file: string;
  readonly name: string;
  readonly description: string;
  /** Its human title (the file's `title`, else its name). */
  readonly title?: string;
  /** One line: the description's first sentence. */
  readonly summary?: string;
  /** Its place in the "Start here" path, if it is a lesson. */
  readonly lesson?: ScenarioLesson;
  /** What an opened file is: a scenario (it can be edited) or a trace or bug bundle (it cannot). */
  readonly kind?: "scenario" | "trace";
}

export type LibraryGroupId = "start" | "teaching" | "state" | "errors" | "gaps" | "others" | "opened";

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

/** The title of the "Start here" group. */
export const START_HERE = "Start here";

/** The group of a file name (by its prefix; a lesson's own group is "Start here", see {@link groupLibrary}). */
export function groupOf(file: string): LibraryGroupId {
  const base = file.slice(file.lastIndexOf("/") + 1);
  return GROUPS.find((g) => g.prefix !== undefined && base.startsWith(g.prefix))?.id ?? "others";
}

/** The title an entry is listed by. */
export function titleOf(entry: LibraryEntry): string {
  return entry.title ?? entry.name;
}

/** Whether `entry` matches every word of `query` (title, name, file or description; any case). */
export function matches(entry: LibraryEntry, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hay = `${entry.title ?? ""} ${entry.name} ${entry.file} ${entry.description}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

const byNumericName = new Intl.Collator("en", { numeric: true }).compare;

/** The "Start here" path: the entries that are lessons, in their order (then by name). */
export function lessonPath<E extends LibraryEntry>(entries: readonly E[]): E[] {
  return entries
    .filter((e) => e.lesson !== undefined)
    .sort((a, b) => (a.lesson?.order ?? 0) - (b.lesson?.order ?? 0) || byNumericName(a.name, b.name));
}

/**
 * The library's groups, in a fixed order — "Start here" (the lessons, in their order), then the groups by
 * file name, each sorted by name (numbers in order: state-2 before state-10) — without the groups left
 * empty by the search. `opened` (files the user opened) comes first.
 */
export function groupLibrary<E extends LibraryEntry>(
  bundled: readonly E[],
  query = "",
  opened: readonly E[] = [],
): LibraryGroup<E>[] {
  const groups: LibraryGroup<E>[] = [];
  const openedShown = opened.filter((e) => matches(e, query));
  if (openedShown.length > 0) groups.push({ id: "opened", title: "Opened", entries: openedShown });
  const lessons = lessonPath(bundled).filter((e) => matches(e, query));
  if (lessons.length > 0) groups.push({ id: "start", title: START_HERE, entries: lessons });
  for (const g of GROUPS) {
    const entries = bundled
      .filter((e) => e.lesson === undefined && groupOf(e.file) === g.id && matches(e, query))
      .sort((a, b) => byNumericName(a.name, b.name));
    if (entries.length > 0) groups.push({ id: g.id, title: g.title, entries });
  }
  return groups;
}

/** Where a scenario is in the "Start here" path: its number, the path's length, the lessons around it. */
export interface LessonPlace<E extends LibraryEntry = LibraryEntry> {
  /** From 1. */
  readonly number: number;
  readonly total: number;
  readonly lesson: ScenarioLesson;
  readonly previous?: E;
  readonly next?: E;
}

/**
 * The place of the scenario `name` in the path of `bundled`; undefined when it is not a lesson there. A file
 * opened from elsewhere that has a `lesson` (a teacher's new one) takes its place by its order among them.
 */
export function lessonPlace<E extends LibraryEntry>(
  bundled: readonly E[],
  current: { readonly name: string; readonly file: string; readonly lesson?: ScenarioLesson | undefined },
): LessonPlace<E> | undefined {
  const path: readonly LibraryEntry[] = lessonPath(bundled);
  const own = path.findIndex((e) => e.name === current.name && sameFile(e.file, current.file));
  let list = path;
  let at = own;
  if (own < 0) {
    if (current.lesson === undefined) return undefined;
    const self: LibraryEntry = { file: current.file, name: current.name, description: "", lesson: current.lesson };
    list = lessonPath([...path.filter((e) => e.name !== current.name), self]);
    at = list.indexOf(self);
  }
  const lesson = list[at]?.lesson;
  if (lesson === undefined) return undefined;
  const previous = list[at - 1] as E | undefined;
  const next = list[at + 1] as E | undefined;
  return {
    number: at + 1,
    total: list.length,
    lesson,
    ...(previous !== undefined && { previous }),
    ...(next !== undefined && { next }),
  };
}

/** Whether two names of a file are the same file (`scenarios/x.yaml` and `x.yaml`). */
function sameFile(a: string, b: string): boolean {
  const base = (f: string) => f.slice(f.lastIndexOf("/") + 1);
  return base(a) === base(b);
}
