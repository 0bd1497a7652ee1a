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
import { asError } from "../errorMessage.ts";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fdatasync,
  fstatSync,
  fsync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  read as readFrom,
  renameSync,
  statSync,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { StorageError, type MailSpool, type MailStore } from "../ports.ts";

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
  readonly beforeSync?: (kind: "file" | "folder", path: string) => Promise<void> | undefined;
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

/** The name of this store's temporary files (`deliver`'s and the spool's): a dot, 16 hex digits, `.tmp`. */
const TEMPORARY_FILE = /^\.[0-9a-f]{16}\.tmp$/;

/**
 * Messages up to this size are written with one synchronous call on the
 * event loop (about 50 µs for 256 KiB into the page cache, no more than a
 * thread pool round trip costs); larger ones go through the pool in
 * {@link WRITE_CHUNK} pieces, so a 25 MiB message never blocks the loop for
 * the tens of milliseconds one write of it takes.
 */
const SMALL_MESSAGE_BYTES = 256 * 1024;
/** The piece a large message is written in: big enough that the round trips cost little next to the copying. */
const WRITE_CHUNK = 1024 * 1024;
/** A spooled message is flushed on the way after every this many bytes written (see `spool`). */
const SPOOL_SYNC_BYTES = 8 * 1024 * 1024;
/** A new temporary file: write only, created here, failing if the (random) name is somehow taken. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
/** The spool's file: as {@link CREATE_NEW}, and read back too (a body kept there before it is authenticated). */
const CREATE_NEW_READABLE = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL;
/** `usage` stats this many files of a folder being counted, then lets the event loop run. */
const COUNT_SLICE = 256;

/**
 * The folder name of a mailbox: the address with its domain lowercased (G22:
 * domains compare without case, local parts exactly), and every character
 * that is not safe in a file name on every platform percent-encoded as UTF-8
 * (`/`, `\`, `:`, `"`, `%`, spaces, controls, non-ASCII…). A leading dot is
 * encoded too, so no mailbox becomes `.`, `..` or a hidden folder.
 */
export function mailboxFolderName(mailbox: string): string {
  const at = mailbox.lastIndexOf("@");
  const normalized =
    at < 0
      ? mailbox
      : `${mailbox.slice(0, at)}@${mailbox
          .slice(at + 1)
          .toLowerCase()
          .replace(/\.$/, "")}`;
  let out = "";
  for (const byte of new TextEncoder().encode(normalized)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9@._+=!#$&'^`{}~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out.startsWith(".") ? `%2E${out.slice(1)}` : out;
}

/** `20250501T100000.123Z`: ISO 8601 basic, sortable, without characters file systems refuse. */
export function fileTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "");
}

/** The file name part of a delivery id: only `A-Z a-z 0-9 . _ ~ -` (the Idempotency-Key alphabet), the rest as `_`. */
function safeId(deliveryId: string): string {
  const cleaned = deliveryId.replace(/[^A-Za-z0-9._~-]/g, "_").replace(/^\.+/, "_");
  return cleaned === "" ? "delivery" : cleaned.slice(0, 128);
}

interface Usage {
  messages: number;
  bytes: number;
}

/** The count of a folder, trusted while the folder's modification time is `mtimeMs`. */
interface KnownUsage extends Usage {
  mtimeMs: number;
}

/** The folder fsync of one folder: the deliveries waiting for the next one, while one is scheduled or running. */
interface FolderSync {
  waiting: ((error: Error | null) => void)[];
}

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
 */
export function createEmlStore(root: string, options: EmlStoreOptions = {}): EmlStore {
  const sync = options.fsync ?? true;
  const spoolSyncBytes = options.spoolSyncBytes ?? SPOOL_SYNC_BYTES;
  const beforeSync = options.syncHooks?.beforeSync;
  const cache = new Map<string, KnownUsage>();
  /** Folders being counted by `usage`; deliveries leave such a folder alone until the count is taken. */
  const recounts = new Map<string, Promise<Usage>>();
  /** Folders this store just made, until the folders holding them are flushed (only with fsync). */
  const newFolders = new Map<string, Promise<void>>();
  const folderSyncs = new Map<string, FolderSync>();
  const mailboxDir = (mailbox: string): string => join(root, mailboxFolderName(mailbox));

  /**
   * Makes one change to a folder (`change`, synchronous) and keeps its count
   * right: dropped if the folder changed since it was taken, else moved to
   * the folder's new modification time, with one message of `addedBytes` more
   * when the change published one. When `change` throws, the count keeps the
   * old time; if the folder changed anyway, the next look drops it.
   */
  function changeFolder<T>(dir: string, change: () => T, addedBytes?: number): T {
    const known = cache.get(dir);
    if (known === undefined) return change();
    if (mtimeOf(dir) !== known.mtimeMs) {
      cache.delete(dir);
      return change();
    }
    const result = change();
    const mtimeMs = mtimeOf(dir);
    if (mtimeMs === undefined) {
      cache.delete(dir);
    } else {
      known.mtimeMs = mtimeMs;
      if (addedBytes !== undefined) {
        known.messages += 1;
        known.bytes += addedBytes;
      }
    }
    return result;
  }

  async function usage(mailbox: string): Promise<Usage> {
    const dir = mailboxDir(mailbox);
    const mtimeMs = mtimeOf(dir);
    if (mtimeMs === undefined) {
      cache.delete(dir);
      return { messages: 0, bytes: 0 };
    }
    const known = cache.get(dir);
    if (known !== undefined && known.mtimeMs === mtimeMs) return { messages: known.messages, bytes: known.bytes };
    let counting = recounts.get(dir);
    if (counting === undefined) {
      cache.delete(dir);
      const started = count(dir).then((counted) => {
        // The time from before the listing: a change after it (only someone else's, deliveries wait) shows as a newer one.
        cache.set(dir, { mtimeMs, ...counted });
        return counted;
      });
      const done = (): void => {
        if (recounts.get(dir) === started) recounts.delete(dir);
      };
      started.then(done, done);
      recounts.set(dir, started);
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

  /** Waits, if the folder is being counted, until it is (whatever the count's fate, and again if another count started meanwhile). */
  async function untilCounted(dir: string): Promise<void> {
    for (let counting = recounts.get(dir); counting !== undefined; counting = recounts.get(dir)) {
      await counting.then(noop, noop);
    }
  }

  async function deliver(
    mailbox: string,
    message: Uint8Array,
    meta: { readonly deliveryId: string; readonly receivedAtMs: number },
  ): Promise<void> {
    const dir = mailboxDir(mailbox);
    const stem = `${fileTime(meta.receivedAtMs)}-${safeId(meta.deliveryId)}`;
    const size = message.byteLength;
    if (recounts.size > 0) await untilCounted(dir);

    const tmp = join(dir, `.${randomBytes(8).toString("hex")}.tmp`);
    const fd = changeFolder(dir, () => createTemp(dir, tmp));
    let open = true;
    try {
      if (size <= SMALL_MESSAGE_BYTES) writeAllSync(fd, message);
      else await writeInChunks(fd, message);
      if (sync) await fileSynced(fd, tmp);
      open = false;
      closeSync(fd);
    } catch (error) {
      if (open) closeQuietly(fd);
      discard(dir, tmp);
      throw error;
    }

    if (recounts.size > 0) await untilCounted(dir);
    try {
      changeFolder(dir, () => publish(dir, tmp, stem), size);
    } catch (error) {
      discard(dir, tmp);
      throw error;
    }
    if (!sync) return;
    // A folder this store made is only as durable as the entry naming it: wait for its parent's flush too.
    const made = newFolders.get(dir);
    if (made === undefined) await folderSynced(dir);
    else await Promise.all([folderSynced(dir), made]);
  }

  /** Opens a new temporary file; on a mailbox's first message, makes its folder first (only then, to spare a call per delivery). */
  function createTemp(dir: string, tmp: string): number {
    try {
      return openSync(tmp, CREATE_NEW, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const created = mkdirSync(dir, { recursive: true });
    if (sync && created !== undefined) flushNewFolders(dir, created);
    return openSync(tmp, CREATE_NEW, 0o600);
  }

  /**
   * Flushes the folders holding the ones `mkdir` just made (`dir` and its
   * parents up to `created`), and keeps the promise for every delivery into
   * `dir` until then: a delivery racing the one that made the folder must not
   * resolve before the folder's own entry is on disk.
   */
  function flushNewFolders(dir: string, created: string): void {
    const first = resolve(created);
    const parents: string[] = [];
    for (let child = resolve(dir); ; child = dirname(child)) {
      parents.push(dirname(child));
      if (child === first || dirname(child) === child) break;
    }
    const flushed = Promise.all(parents.map(folderSynced)).then(noop);
    const done = (): void => {
      if (newFolders.get(dir) === flushed) newFolders.delete(dir);
    };
    // Also marks a failure handled: the deliveries awaiting it still see it.
    flushed.then(done, done);
    newFolders.set(dir, flushed);
  }

  /** Removes a temporary file after a failure, best effort (it may never have been made). */
  function discard(dir: string, tmp: string): void {
    try {
      changeFolder(dir, () => unlinkSync(tmp));
    } catch {
      // Already gone, or the folder is unusable: nothing more to undo.
    }
  }

  /** The fsync (data only: fdatasync) of a message's file, through the pool. */
  function fileSynced(fd: number, tmp: string): Promise<void> {
    return new Promise((done, fail) => {
      syncFd("file", tmp, fd, (error) => (error === null ? done() : fail(error)));
    });
  }

  /**
   * Resolves after an fsync of `dir` that started after this call (so after
   * the caller's link), grouped: the deliveries that arrive while one is
   * scheduled or running wait for the next, which starts (on `setImmediate`,
   * to gather what the same turn of the event loop linked) when it is done,
   * one fsync for all of them. Different folders are flushed concurrently.
   */
  function folderSynced(dir: string): Promise<void> {
    return new Promise((done, fail) => {
      const settle = (error: Error | null): void => (error === null ? done() : fail(error));
      const state = folderSyncs.get(dir);
      if (state !== undefined) {
        state.waiting.push(settle);
        return;
      }
      const fresh: FolderSync = { waiting: [settle] };
      folderSyncs.set(dir, fresh);
      setImmediate(flushFolder, dir, fresh);
    });
  }

  function flushFolder(dir: string, state: FolderSync): void {
    // The batch is fixed before the fsync is issued: every link in it is already in the folder.
    const batch = state.waiting;
    state.waiting = [];
    const finish = (error: Error | null): void => {
      for (const settle of batch) settle(error);
      if (state.waiting.length > 0) setImmediate(flushFolder, dir, state);
      else folderSyncs.delete(dir);
    };
    let fd: number;
    try {
      fd = openSync(dir, "r");
    } catch (error) {
      finish(cannotSyncFolder(error) ? null : (error as Error));
      return;
    }
    syncFd("folder", dir, fd, (error) => {
      closeQuietly(fd);
      finish(error === null || cannotSyncFolder(error) ? null : error);
    });
  }

  /** One fsync through the pool (the callback API: one round trip, no FileHandle), after the test hook if any. */
  function syncFd(kind: "file" | "folder", path: string, fd: number, done: (error: Error | null) => void): void {
    const run = (): void => {
      if (kind === "file") fdatasync(fd, done);
      else fsync(fd, done);
    };
    const held = beforeSync?.(kind, path);
    if (held === undefined) run();
    else held.then(run, (error: unknown) => done(asError(error)));
  }

  async function list(mailbox: string): Promise<string[]> {
    const dir = mailboxDir(mailbox);
    try {
      return (await readdir(dir))
        .filter((n) => n.endsWith(".eml"))
        .sort()
        .map((n) => join(dir, n));
    } catch {
      return [];
    }
  }

  /**
   * A message written while it arrives (MailStore.spool): into a temporary
   * file under `<root>/.spool/` (no mailbox folder can be named so: a
   * leading dot is encoded), flushed every {@link SPOOL_SYNC_BYTES} on the
   * way so that the flush at the end has little left to do; then, per
   * mailbox, hard-linked into the mailbox's folder under the name `deliver`
   * would give it, and the folder flushed, as `deliver` does. Where hard
   * links are refused, the finished file is copied instead.
   */
  function spool(): Required<MailSpool> & { readonly path: string } {
    const folder = join(root, ".spool");
    const path = join(folder, `.${randomBytes(8).toString("hex")}.tmp`);
    let fd: number | undefined;
    let failure: Error | undefined;
    let inFlight = 0;
    let idle: (() => void)[] = [];
    let unsynced = 0;
    let syncing: Promise<void> | undefined;
    let finished = false;
    let closed = false;

    const fail = (error: unknown): void => {
      failure ??= asError(error);
    };
    const settled = (): void => {
      if (inFlight > 0) return;
      const waiting = idle;
      idle = [];
      for (const resume of waiting) resume();
    };
    const untilIdle = (): Promise<void> =>
      inFlight === 0 ? Promise.resolve() : new Promise((resume) => idle.push(resume));
    const open = (): number => {
      if (fd !== undefined) return fd;
      try {
        fd = openSync(path, CREATE_NEW_READABLE, 0o600);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        mkdirSync(folder, { recursive: true });
        fd = openSync(path, CREATE_NEW_READABLE, 0o600);
      }
      return fd;
    };
    /** A flush on the way, one at a time, while the rest keeps arriving. */
    const syncOnTheWay = (file: number): void => {
      if (!sync || syncing !== undefined || unsynced < spoolSyncBytes) return;
      unsynced = 0;
      syncing = fileSynced(file, path).then(
        () => {
          syncing = undefined;
        },
        (error: unknown) => {
          syncing = undefined;
          fail(error);
        },
      );
    };
    const writeAt = (file: number, bytes: Uint8Array, position: number): void => {
      inFlight += 1;
      write(file, bytes, 0, bytes.byteLength, position, (error, written) => {
        if (error !== null) fail(error);
        else if (written < bytes.byteLength && failure === undefined && !closed) {
          // A short write: the rest, before this one counts as done.
          writeAt(file, bytes.subarray(written), position + written);
        } else {
          unsynced += written;
          syncOnTheWay(file);
        }
        inFlight -= 1;
        settled();
      });
    };

    return {
      path,

      write(bytes, position) {
        if (closed || failure !== undefined || finished || bytes.byteLength === 0) return;
        try {
          writeAt(open(), bytes, position);
        } catch (error) {
          fail(error);
        }
      },

      async read(target) {
        if (closed || finished) throw new Error("the spool is closed or already finished");
        await untilIdle();
        if (failure !== undefined) throw failure;
        if (target.byteLength === 0) return;
        const file = open();
        let done = 0;
        while (done < target.byteLength) {
          const n = await new Promise<number>((resolve, reject) => {
            readFrom(file, target, done, target.byteLength - done, done, (error, bytesRead) => {
              if (error !== null) reject(error);
              else resolve(bytesRead);
            });
          });
          if (n === 0) throw new Error(`the spool holds fewer than the ${target.byteLength} bytes asked for`);
          done += n;
        }
      },

      async finish(size) {
        if (closed || finished) throw new Error("the spool is closed or already finished");
        await untilIdle();
        await syncing;
        if (failure !== undefined) throw failure;
        const file = open();
        if (fstatSync(file).size < size) throw new Error(`the spool holds fewer than the message's ${size} bytes`);
        ftruncateSync(file, size);
        if (sync) await fileSynced(file, path);
        finished = true;
      },

      async deliver(mailbox, meta) {
        if (!finished || closed) throw new Error("the spool is not finished");
        const dir = mailboxDir(mailbox);
        const stem = `${fileTime(meta.receivedAtMs)}-${safeId(meta.deliveryId)}`;
        const size = fstatSync(open()).size;
        if (recounts.size > 0) await untilCounted(dir);
        const linked = changeFolder(dir, () => linkInto(dir, path, stem), size);
        if (!linked) {
          // No hard links here: a copy, written and flushed as `deliver` writes its own.
          const tmp = join(dir, `.${randomBytes(8).toString("hex")}.tmp`);
          try {
            changeFolder(dir, () => copyFileSync(path, tmp, constants.COPYFILE_EXCL));
            if (sync) {
              const copy = openSync(tmp, "r");
              try {
                await fileSynced(copy, tmp);
              } finally {
                closeQuietly(copy);
              }
            }
            changeFolder(dir, () => publish(dir, tmp, stem), size);
          } catch (error) {
            discard(dir, tmp);
            throw error;
          }
        }
        if (!sync) return;
        const made = newFolders.get(dir);
        if (made === undefined) await folderSynced(dir);
        else await Promise.all([folderSynced(dir), made]);
      },

      close() {
        if (closed) return;
        closed = true;
        // Writes still running hold the descriptor: it is closed, and the file removed, after them.
        void untilIdle().then(() => {
          if (fd !== undefined) closeQuietly(fd);
          try {
            unlinkSync(path);
          } catch {
            // Never made, or already gone.
          }
        });
      },
    };
  }

  /**
   * Hard-links `source` into `dir` under the first free name for `stem`,
   * making the folder if needed (as a first delivery does); false when the
   * file system refuses hard links (the caller copies instead).
   */
  function linkInto(dir: string, source: string, stem: string): boolean {
    for (let n = 1; n < 1000; n++) {
      const target = join(dir, n === 1 ? `${stem}.eml` : `${stem}-${n}.eml`);
      try {
        linkSync(source, target);
        return true;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EEXIST") continue;
        if (code === "ENOENT" && n === 1 && !existsSync(dir)) {
          const created = mkdirSync(dir, { recursive: true });
          if (sync && created !== undefined) flushNewFolders(dir, created);
          n = 0;
          continue;
        }
        if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS" || code === "EXDEV")
          return false;
        throw error;
      }
    }
    throw new Error(`no free file name for ${stem}.eml in ${dir}`);
  }

  async function removeLeftovers(): Promise<string[]> {
    let folders: string[];
    try {
      folders = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const removed: string[] = [];
    for (const folder of folders) {
      const dir = join(root, folder);
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
          changeFolder(dir, () => unlinkSync(path));
          removed.push(path);
        } catch {
          // Gone meanwhile, or not ours to remove: left alone.
        }
      }
    }
    return removed;
  }

  async function holds(mailbox: string, deliveryId: string): Promise<boolean> {
    const id = safeId(deliveryId);
    const named = new RegExp(`^\\d{8}T\\d{6}\\.\\d{3}Z-${id.replace(/[.]/g, "\\.")}(?:-\\d+)?\\.eml$`);
    try {
      return (await readdir(mailboxDir(mailbox))).some((name) => named.test(name));
    } catch {
      return false;
    }
  }

  return {
    root,
    deliver: (mailbox, message, meta) => named(mailboxDir(mailbox), deliver(mailbox, message, meta)),
    usage: (mailbox) => named(mailboxDir(mailbox), usage(mailbox)),
    mailboxDir,
    list,
    spool: () => namedSpool(spool()),
    removeLeftovers: () => named(root, removeLeftovers()),
    holds,
  };

  /** A failure of the store names it and the folder or file it failed at: ENOSPC alone says neither. */
  function named<T>(path: string, operation: Promise<T>): Promise<T> {
    return operation.catch((error: unknown) => {
      throw StorageError.of("mail store", path, error);
    });
  }

  /** A spool whose failures name the spool file, or the mailbox folder it was being stored into. */
  function namedSpool(inner: Required<MailSpool> & { readonly path: string }): MailSpool {
    return {
      write: (bytes, position) => inner.write(bytes, position),
      finish: (size) => named(inner.path, inner.finish(size)),
      deliver: (mailbox, meta) => named(mailboxDir(mailbox), inner.deliver(mailbox, meta)),
      read: (target) => named(inner.path, inner.read(target)),
      close: () => inner.close(),
    };
  }
}

function noop(): void {}

/** A folder's modification time, or undefined when it is not there (or not readable). */
function mtimeOf(dir: string): number | undefined {
  try {
    return statSync(dir, { throwIfNoEntry: false })?.mtimeMs;
  } catch {
    return undefined;
  }
}

/** Writes a small message with synchronous calls (one, unless the system writes less than asked). */
function writeAllSync(fd: number, message: Uint8Array): void {
  for (let offset = 0; offset < message.byteLength;) {
    offset += writeSync(fd, message, offset, message.byteLength - offset, offset);
  }
}

/** Writes a large message through the pool, {@link WRITE_CHUNK} at a time, from the caller's bytes (no copy). */
async function writeInChunks(fd: number, message: Uint8Array): Promise<void> {
  for (let offset = 0; offset < message.byteLength;) {
    const length = Math.min(WRITE_CHUNK, message.byteLength - offset);
    offset += await new Promise<number>((done, fail) => {
      write(fd, message, offset, length, offset, (error, written) => (error === null ? done(written) : fail(error)));
    });
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closing after a failure: the failure is what gets reported.
  }
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

/**
 * Gives the finished temporary file its name: `<stem>.eml`, or `<stem>-2.eml`
 * and so on when that name is taken (the same delivery stored twice in one
 * millisecond), never overwriting. A hard link fails atomically on a taken
 * name; where links are not supported, a check and a rename do (one
 * synchronous step, so no delivery of this store slips in between).
 */
function publish(dir: string, tmp: string, stem: string): void {
  for (let n = 1; n < 1000; n++) {
    const target = join(dir, n === 1 ? `${stem}.eml` : `${stem}-${n}.eml`);
    try {
      linkSync(tmp, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") continue;
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
      if (existsSync(target)) continue;
      renameSync(tmp, target);
      return;
    }
    try {
      unlinkSync(tmp);
    } catch {
      // The message is in place; a stray hidden .tmp file is not worth failing the delivery for.
    }
    return;
  }
  throw new Error(`no free file name for ${stem}.eml in ${dir}`);
}
