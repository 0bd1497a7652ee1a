/**
 * The Mail store port (ARCHITECTURE.md "Ports") as a folder of .eml files:
 * `<root>/<mailbox>/<time>-<deliveryId>.eml`, one file per message and
 * mailbox, the message byte for byte as it arrived (POST-9, POST-10: DKIM
 * signatures inside it survive).
 *
 * Each file is written atomically: into a temporary file in the same folder,
 * flushed to disk (fdatasync), then hard-linked to its name, and the folder
 * itself flushed (fsync), so that once `deliver` resolves (and the receiver
 * answers `accepted`) the message survives a crash, and a reader never sees
 * half a message.
 *
 * This is on the hot path of `mailscope serve`, and what costs CPU there is
 * not the disk but the round trips through libuv's thread pool (50-100 µs of
 * CPU each on a small VM, against 5-10 µs for the same small-file call made
 * synchronously). So the metadata work (open, close, link, unlink, stat,
 * mkdir) and the write of a small message are synchronous calls on the event
 * loop; only what really waits for the disk goes to the pool: the fdatasync
 * of each file, the fsync of a folder, which deliveries whose links landed
 * in that folder share (group commit), and the write of a large message, in
 * chunks.
 */
import { unlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { StorageError, type MailSpool, type MailStore } from "../ports.ts";
import { mailboxDir, safeId, TEMPORARY_FILE, type BeforeSync, type EmlStoreState } from "./emlStoreState.ts";
import { spool, type EmlSpool } from "./emlStoreSpool.ts";
import { changeFolder, usage } from "./emlStoreUsage.ts";
import { deliver } from "./emlStoreWrite.ts";

export { fileTime, mailboxFolderName } from "./emlStoreState.ts";
export { cannotSyncFolder } from "./emlStoreSync.ts";

/** What {@link createEmlStore} may be told. */
export interface EmlStoreOptions {
  /** Flush files and folders to disk before `deliver` resolves. Default true; off only for benchmarks of everything else. */
  readonly fsync?: boolean;
  /** @internal Test seam: sees (and may hold back or fail) every fsync before it is issued. */
  readonly syncHooks?: EmlStoreSyncHooks;
  /**
   * @internal Test seam: a spooled message is flushed on the way after every
   * this many bytes (default 8 MiB), so a test can see those flushes without
   * writing and flushing megabytes, whose time depends on the disk.
   */
  readonly spoolSyncBytes?: number;
}

/** @internal What the tests may hook into: the syncs, which they cannot observe from outside. */
export interface EmlStoreSyncHooks {
  /**
   * Called just before an fsync is issued: `file` with a message's temporary
   * file, `folder` with a folder (the batch it covers is fixed by then, so
   * every link it covers is already in the folder). A returned promise holds
   * the fsync back until it resolves; a rejection fails it as the fsync would.
   */
  readonly beforeSync?: BeforeSync;
}

/** An {@link MailStore} over a folder, with what a command or a test needs to look inside. */
export interface EmlStore extends MailStore {
  readonly root: string;
  spool(): MailSpool;
  /** The folder of a mailbox (it may not exist yet). */
  mailboxDir(mailbox: string): string;
  /** The .eml files of a mailbox, oldest first, as full paths. */
  list(mailbox: string): Promise<string[]>;
  /**
   * Removes the temporary files an interrupted run left (a crash while a
   * message was written or spooled): this store's hidden `.<16 hex>.tmp`
   * files in the mailbox folders and in `.spool/`. They are never mail: a
   * message is published by linking its finished file to its `.eml` name.
   * Call it before any delivery starts (at `serve` start): a delivery under
   * way has such a file too. Returns the paths removed.
   */
  removeLeftovers(): Promise<string[]>;
  /**
   * Whether the mailbox holds a message of `deliveryId` (its `<time>-<delivery>[-n].eml` name says so),
   * whatever its time: after a crash, whether a delivery cut off stored it here before it was answered.
   * Reads the mailbox's folder: for that rare case, not for every delivery.
   */
  holds(mailbox: string, deliveryId: string): Promise<boolean>;
}

/** A spooled message is flushed on the way after every this many bytes written (see emlStoreSpool.ts). */
const SPOOL_SYNC_BYTES = 8 * 1024 * 1024;

/**
 * A Mail store writing .eml files under `root` (created when needed).
 *
 * `usage` counts the `.eml` files of a mailbox and their sizes. The count is
 * kept in memory and trusted while the folder's modification time is the one
 * seen last, so that quotas cost one `stat` per delivery; when someone else
 * adds or removes files (a user reading mail), the folder is counted again.
 *
 * Deliveries run concurrently, also to one mailbox: every change this store
 * makes to a folder (a temporary file made or removed, a link) is one
 * synchronous step, and when the folder's count is kept, that step is framed
 * by two `stat`s of the folder: the one before tells whether someone else
 * changed it since the count was taken (then it is dropped), the one after
 * gives the modification time the updated count goes with.
 *
 * Its state is one {@link EmlStoreState}; the parts that work on it are files of their own: the usage
 * (emlStoreUsage.ts), the flushes (emlStoreSync.ts), a message written (emlStoreWrite.ts), the spool
 * (emlStoreSpool.ts).
 */
export function createEmlStore(root: string, options: EmlStoreOptions = {}): EmlStore {
  const store: EmlStoreState = {
    root,
    sync: options.fsync ?? true,
    spoolSyncBytes: options.spoolSyncBytes ?? SPOOL_SYNC_BYTES,
    beforeSync: options.syncHooks?.beforeSync,
    counts: new Map(),
    recounts: new Map(),
    newFolders: new Map(),
    folderSyncs: new Map(),
  };
  const dirOf = (mailbox: string): string => mailboxDir(store, mailbox);
  return {
    root,
    deliver: (mailbox, message, meta) => named(dirOf(mailbox), deliver(store, mailbox, message, meta)),
    usage: (mailbox) => named(dirOf(mailbox), usage(store, mailbox)),
    mailboxDir: dirOf,
    list: (mailbox) => list(dirOf(mailbox)),
    spool: () => namedSpool(store, spool(store)),
    removeLeftovers: () => named(root, removeLeftovers(store)),
    holds: (mailbox, deliveryId) => holds(dirOf(mailbox), deliveryId),
  };
}

/** The .eml files of a mailbox's folder, oldest first, as full paths. */
async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir))
      .filter((n) => n.endsWith(".eml"))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** Removes this store's temporary files from the folders under its root (EmlStore.removeLeftovers). */
async function removeLeftovers(store: EmlStoreState): Promise<string[]> {
  let folders: string[];
  try {
    folders = (await readdir(store.root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const removed: string[] = [];
  for (const folder of folders) {
    const dir = join(store.root, folder);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!TEMPORARY_FILE.test(name)) continue;
      const path = join(dir, name);
      try {
        changeFolder(store, dir, () => unlinkSync(path));
        removed.push(path);
      } catch {
        // Gone meanwhile, or not ours to remove: left alone.
      }
    }
  }
  return removed;
}

/** Whether a mailbox's folder holds a message of `deliveryId` (EmlStore.holds). */
async function holds(dir: string, deliveryId: string): Promise<boolean> {
  const id = safeId(deliveryId);
  const named = new RegExp(`^\\d{8}T\\d{6}\\.\\d{3}Z-${id.replace(/[.]/g, "\\.")}(?:-\\d+)?\\.eml$`);
  try {
    return (await readdir(dir)).some((name) => named.test(name));
  } catch {
    return false;
  }
}

/** A failure of the store names it and the folder or file it failed at: ENOSPC alone says neither. */
function named<T>(path: string, operation: Promise<T>): Promise<T> {
  return operation.catch((error: unknown) => {
    throw StorageError.of("mail store", path, error);
  });
}

/** A spool whose failures name the spool file, or the mailbox folder it was being stored into. */
function namedSpool(store: EmlStoreState, inner: EmlSpool): MailSpool {
  return {
    write: (bytes, position) => inner.write(bytes, position),
    finish: (size) => named(inner.path, inner.finish(size)),
    deliver: (mailbox, meta) => named(mailboxDir(store, mailbox), inner.deliver(mailbox, meta)),
    read: (target) => named(inner.path, inner.read(target)),
    close: () => inner.close(),
  };
}
