/**
 * A message stored by a .eml store (emlStore.ts): written into a temporary file of the mailbox's folder (one
 * synchronous call for a small message, chunks through the pool for a large one), flushed, then published under
 * its name by a hard link, never overwriting, and the folder flushed, so that once `deliver` resolves the
 * message survives a crash and a reader never sees half of it.
 */
import {
  closeSync,
  constants,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { closeQuietly, mailboxDir, messageStem, temporaryPath, type EmlStoreState } from "./emlStoreState.ts";
import { fileSynced, flushNewFolders, linkSynced } from "./emlStoreSync.ts";
import { changeFolder, untilCounted } from "./emlStoreUsage.ts";

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
/** A new temporary file: write only, created here, failing if the (random) name is somehow taken. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/** Stores one message in a mailbox (MailStore.deliver): written, flushed, published, its folder flushed. */
export async function deliver(
  store: EmlStoreState,
  mailbox: string,
  message: Uint8Array,
  meta: { readonly deliveryId: string; readonly receivedAtMs: number },
): Promise<void> {
  const dir = mailboxDir(store, mailbox);
  const stem = messageStem(meta);
  const size = message.byteLength;
  if (store.recounts.size > 0) await untilCounted(store, dir);

  const tmp = temporaryPath(dir);
  const fd = changeFolder(store, dir, () => createTemp(store, dir, tmp));
  let open = true;
  try {
    if (size <= SMALL_MESSAGE_BYTES) writeAllSync(fd, message);
    else await writeInChunks(fd, message);
    if (store.sync) await fileSynced(store, fd, tmp);
    open = false;
    closeSync(fd);
  } catch (error) {
    if (open) closeQuietly(fd);
    discard(store, dir, tmp);
    throw error;
  }

  if (store.recounts.size > 0) await untilCounted(store, dir);
  try {
    changeFolder(store, dir, () => publish(dir, tmp, stem), size);
  } catch (error) {
    discard(store, dir, tmp);
    throw error;
  }
  if (!store.sync) return;
  await linkSynced(store, dir);
}

/** Opens a new temporary file; on a mailbox's first message, makes its folder first (only then, to spare a call per delivery). */
function createTemp(store: EmlStoreState, dir: string, tmp: string): number {
  try {
    return openSync(tmp, CREATE_NEW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const created = mkdirSync(dir, { recursive: true });
  if (store.sync && created !== undefined) flushNewFolders(store, dir, created);
  return openSync(tmp, CREATE_NEW, 0o600);
}

/** Removes a temporary file after a failure, best effort (it may never have been made). */
export function discard(store: EmlStoreState, dir: string, tmp: string): void {
  try {
    changeFolder(store, dir, () => unlinkSync(tmp));
  } catch {
    // Already gone, or the folder is unusable: nothing more to undo.
  }
}

/**
 * Gives the finished temporary file its name: `<stem>.eml`, or `<stem>-2.eml`
 * and so on when that name is taken (the same delivery stored twice in one
 * millisecond), never overwriting. A hard link fails atomically on a taken
 * name; where links are not supported, a check and a rename do (one
 * synchronous step, so no delivery of this store slips in between).
 */
export function publish(dir: string, tmp: string, stem: string): void {
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

/**
 * Hard-links `source` into `dir` under the first free name for `stem`,
 * making the folder if needed (as a first delivery does); false when the
 * file system refuses hard links (the caller copies instead).
 */
export function linkInto(store: EmlStoreState, dir: string, source: string, stem: string): boolean {
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
        if (store.sync && created !== undefined) flushNewFolders(store, dir, created);
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
