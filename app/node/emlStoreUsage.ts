/**
 * A .eml store's mailboxes' usage (emlStore.ts): the `.eml` files of a mailbox and their sizes, counted once and
 * kept in memory while the folder's modification time is the one seen last, so that quotas cost one `stat` per
 * delivery; and every change the store makes to a folder, made so that the kept count stays right.
 */
import { statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { mailboxDir, noop, type EmlStoreState, type Usage } from "./emlStoreState.ts";

/** `usage` stats this many files of a folder being counted, then lets the event loop run. */
const COUNT_SLICE = 256;

/**
 * Makes one change to a folder (`change`, synchronous) and keeps its count
 * right: dropped if the folder changed since it was taken, else moved to
 * the folder's new modification time, with one message of `addedBytes` more
 * when the change published one. When `change` throws, the count keeps the
 * old time; if the folder changed anyway, the next look drops it.
 */
export function changeFolder<T>(store: EmlStoreState, dir: string, change: () => T, addedBytes?: number): T {
  const known = store.counts.get(dir);
  if (known === undefined) return change();
  if (mtimeOf(dir) !== known.mtimeMs) {
    store.counts.delete(dir);
    return change();
  }
  const result = change();
  const mtimeMs = mtimeOf(dir);
  if (mtimeMs === undefined) {
    store.counts.delete(dir);
  } else {
    known.mtimeMs = mtimeMs;
    if (addedBytes !== undefined) {
      known.messages += 1;
      known.bytes += addedBytes;
    }
  }
  return result;
}

/** A mailbox's usage: the kept count while its folder is unchanged, else the folder counted again (once at a time). */
export async function usage(store: EmlStoreState, mailbox: string): Promise<Usage> {
  const dir = mailboxDir(store, mailbox);
  const mtimeMs = mtimeOf(dir);
  if (mtimeMs === undefined) {
    store.counts.delete(dir);
    return { messages: 0, bytes: 0 };
  }
  const known = store.counts.get(dir);
  if (known !== undefined && known.mtimeMs === mtimeMs) return { messages: known.messages, bytes: known.bytes };
  let counting = store.recounts.get(dir);
  if (counting === undefined) {
    store.counts.delete(dir);
    const started = count(dir).then((counted) => {
      // The time from before the listing: a change after it (only someone else's, deliveries wait) shows as a newer one.
      store.counts.set(dir, { mtimeMs, ...counted });
      return counted;
    });
    const done = (): void => {
      if (store.recounts.get(dir) === started) store.recounts.delete(dir);
    };
    started.then(done, done);
    store.recounts.set(dir, started);
    counting = started;
  }
  const counted = await counting;
  return { messages: counted.messages, bytes: counted.bytes };
}

/** Counts a folder: one listing through the pool, then a synchronous `stat` per file, a slice at a time. */
async function count(dir: string): Promise<Usage> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { messages: 0, bytes: 0 };
    throw error;
  }
  let messages = 0;
  let bytes = 0;
  let statted = 0;
  for (const name of names) {
    if (!name.endsWith(".eml")) continue;
    if (++statted % COUNT_SLICE === 0) await new Promise((resume) => setImmediate(resume));
    try {
      const info = statSync(join(dir, name), { throwIfNoEntry: false });
      if (info === undefined || !info.isFile()) continue;
      messages += 1;
      bytes += info.size;
    } catch {
      // Unreadable: not counted, as a removed one.
    }
  }
  return { messages, bytes };
}

/**
 * Waits, if the folder is being counted, until it is (whatever the count's fate, and again if another count
 * started meanwhile). Callers look at `store.recounts.size` first, so a delivery waits no turn when nothing is
 * being counted.
 */
export async function untilCounted(store: EmlStoreState, dir: string): Promise<void> {
  for (let counting = store.recounts.get(dir); counting !== undefined; counting = store.recounts.get(dir)) {
    await counting.then(noop, noop);
  }
}

/** A folder's modification time, or undefined when it is not there (or not readable). */
function mtimeOf(dir: string): number | undefined {
  try {
    return statSync(dir, { throwIfNoEntry: false })?.mtimeMs;
  } catch {
    return undefined;
  }
}
