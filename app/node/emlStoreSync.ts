/**
 * A .eml store's flushes to disk (emlStore.ts): the fdatasync of a message's file, the grouped fsync of a
 * folder (group commit: the deliveries whose links landed in a folder share one), and the flush of the folders
 * holding one the store just made. Each goes through libuv's pool, the one thing here that waits for the disk.
 */
import { fdatasync, fsync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { asError } from "../errorMessage.ts";
import { closeQuietly, noop, type EmlStoreState, type FolderSync } from "./emlStoreState.ts";

/** The fsync (data only: fdatasync) of a message's file, through the pool. */
export function fileSynced(store: EmlStoreState, fd: number, tmp: string): Promise<void> {
  return new Promise((done, fail) => {
    syncFd(store, "file", tmp, fd, (error) => (error === null ? done() : fail(error)));
  });
}

/**
 * Resolves once a message linked into `dir` is as durable as the folder's entry for it: after the folder's
 * next flush and, when the store just made the folder, its parents' (a folder this store made is only as
 * durable as the entry naming it).
 */
export function linkSynced(store: EmlStoreState, dir: string): Promise<unknown> {
  const made = store.newFolders.get(dir);
  return made === undefined ? folderSynced(store, dir) : Promise.all([folderSynced(store, dir), made]);
}

/**
 * Resolves after an fsync of `dir` that started after this call (so after
 * the caller's link), grouped: the deliveries that arrive while one is
 * scheduled or running wait for the next, which starts (on `setImmediate`,
 * to gather what the same turn of the event loop linked) when it is done,
 * one fsync for all of them. Different folders are flushed concurrently.
 */
function folderSynced(store: EmlStoreState, dir: string): Promise<void> {
  return new Promise((done, fail) => {
    const settle = (error: Error | null): void => (error === null ? done() : fail(error));
    const state = store.folderSyncs.get(dir);
    if (state !== undefined) {
      state.waiting.push(settle);
      return;
    }
    const fresh: FolderSync = { waiting: [settle] };
    store.folderSyncs.set(dir, fresh);
    setImmediate(flushFolder, store, dir, fresh);
  });
}

function flushFolder(store: EmlStoreState, dir: string, state: FolderSync): void {
  // The batch is fixed before the fsync is issued: every link in it is already in the folder.
  const batch = state.waiting;
  state.waiting = [];
  const finish = (error: Error | null): void => {
    for (const settle of batch) settle(error);
    if (state.waiting.length > 0) setImmediate(flushFolder, store, dir, state);
    else store.folderSyncs.delete(dir);
  };
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch (error) {
    finish(cannotSyncFolder(error) ? null : (error as Error));
    return;
  }
  syncFd(store, "folder", dir, fd, (error) => {
    closeQuietly(fd);
    finish(error === null || cannotSyncFolder(error) ? null : error);
  });
}

/** One fsync through the pool (the callback API: one round trip, no FileHandle), after the test hook if any. */
function syncFd(
  store: EmlStoreState,
  kind: "file" | "folder",
  path: string,
  fd: number,
  done: (error: Error | null) => void,
): void {
  const run = (): void => {
    if (kind === "file") fdatasync(fd, done);
    else fsync(fd, done);
  };
  const held = store.beforeSync?.(kind, path);
  if (held === undefined) run();
  else held.then(run, (error: unknown) => done(asError(error)));
}

/**
 * Flushes the folders holding the ones `mkdir` just made (`dir` and its
 * parents up to `created`), and keeps the promise for every delivery into
 * `dir` until then: a delivery racing the one that made the folder must not
 * resolve before the folder's own entry is on disk.
 */
export function flushNewFolders(store: EmlStoreState, dir: string, created: string): void {
  const first = resolve(created);
  const parents: string[] = [];
  for (let child = resolve(dir); ; child = dirname(child)) {
    parents.push(dirname(child));
    if (child === first || dirname(child) === child) break;
  }
  const flushed = Promise.all(parents.map((parent) => folderSynced(store, parent))).then(noop);
  const done = (): void => {
    if (store.newFolders.get(dir) === flushed) store.newFolders.delete(dir);
  };
  // Also marks a failure handled: the deliveries awaiting it still see it.
  flushed.then(done, done);
  store.newFolders.set(dir, flushed);
}

/** Folder fsync failures that only mean the platform cannot do it (Windows, some network file systems), or the folder is gone. */
export function cannotSyncFolder(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (
    code === "EISDIR" ||
    code === "EPERM" ||
    code === "EACCES" ||
    code === "EINVAL" ||
    code === "ENOTSUP" ||
    code === "EOPNOTSUPP" ||
    code === "EBADF" ||
    code === "ENOENT"
  );
}
