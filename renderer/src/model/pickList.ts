/**
 * A long list narrowed by what a person types (the statechart's delivery picker has one
 * option per delivery, 3,714 in the 100k-event trace): the items holding every word typed (any case), at most
 * `limit` of them, the chosen one always kept, and how many more matched.
 */
export interface PickList {
  readonly items: readonly string[];
  /** Matches left out past `limit`. */
  readonly more: number;
}

export function pickList(all: readonly string[], query: string, chosen: string | undefined, limit = 200): PickList {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const items: string[] = [];
  let matched = 0;
  for (const item of all) {
    const hay = item.toLowerCase();
    if (!words.every((w) => hay.includes(w))) continue;
    matched += 1;
    if (items.length < limit) items.push(item);
  }
  if (chosen !== undefined && !items.includes(chosen) && all.includes(chosen)) items.unshift(chosen);
  return { items, more: Math.max(0, matched - limit) };
}
