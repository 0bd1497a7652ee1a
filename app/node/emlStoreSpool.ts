/**
 * A .eml store's spool (MailStore.spool, emlStore.ts): a message written while it arrives, into a temporary
 * file under `<root>/.spool/` (no mailbox folder can be named so: a leading dot is encoded), flushed every
 * `spoolSyncBytes` on the way so that the flush at the end has little left to do; then, per mailbox,
 * hard-linked into the mailbox's folder under the name `deliver` would give it, and the folder flushed, as
 * `deliver` does. Where hard links are refused, the finished file is copied instead. One {@link SpoolFile}
 * holds what a spool knows of its file.
 */
import {
  constants,
  copyFileSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  read as readFrom,
  unlinkSync,
  write,
} from "node:fs";
import { join } from "node:path";
import type { MailSpool } from "../ports.ts";
import { asError } from "../errorMessage.ts";
import { closeQuietly, mailboxDir, messageStem, temporaryPath, type EmlStoreState } from "./emlStoreState.ts";
import { fileSynced, linkSynced } from "./emlStoreSync.ts";
import { changeFolder, untilCounted } from "./emlStoreUsage.ts";
import { discard, linkInto, publish } from "./emlStoreWrite.ts";

/** The spool's file: as `deliver`'s, and read back too (a body kept there before it is authenticated). */
const CREATE_NEW_READABLE = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL;

/** A spool with the path of its file. */
export type EmlSpool = Required<MailSpool> & { readonly path: string };

/** One spool's file and where its writes and flushes are. */
interface SpoolFile {
  readonly store: EmlStoreState;
  /** `<root>/.spool`. */
  readonly folder: string;
  readonly path: string;
  /** The file, once the first write or read opened it. */
  fd: number | undefined;
  /** The first failure of a write or a flush on the way: every later call fails with it. */
  failure: Error | undefined;
  /** Writes issued and not yet done. */
  inFlight: number;
  /** Who waits for the writes in flight to be done. */
  idle: (() => void)[];
  /** Bytes written since the last flush on the way. */
  unsynced: number;
  /** The flush on the way under way, if any. */
  syncing: Promise<void> | undefined;
  finished: boolean;
  closed: boolean;
}

/** A new spool of the store (its file is made by the first write). */
export function spool(store: EmlStoreState): EmlSpool {
  const folder = join(store.root, ".spool");
  const file: SpoolFile = {
    store,
    folder,
    path: temporaryPath(folder),
    fd: undefined,
    failure: undefined,
    inFlight: 0,
    idle: [],
    unsynced: 0,
    syncing: undefined,
    finished: false,
    closed: false,
  };
  return {
    path: file.path,
    write: (bytes, position) => writeSpool(file, bytes, position),
    read: (target) => readSpool(file, target),
    finish: (size) => finishSpool(file, size),
    deliver: (mailbox, meta) => deliverSpooled(file, mailbox, meta),
    close: () => closeSpool(file),
  };
}

function writeSpool(file: SpoolFile, bytes: Uint8Array, position: number): void {
  if (file.closed || file.failure !== undefined || file.finished || bytes.byteLength === 0) return;
  try {
    writeAt(file, open(file), bytes, position);
  } catch (error) {
    fail(file, error);
  }
}

async function readSpool(file: SpoolFile, target: Uint8Array): Promise<void> {
  if (file.closed || file.finished) throw new Error("the spool is closed or already finished");
  await untilIdle(file);
  if (file.failure !== undefined) throw file.failure;
  if (target.byteLength === 0) return;
  const fd = open(file);
  let done = 0;
  while (done < target.byteLength) {
    const n = await new Promise<number>((resolve, reject) => {
      readFrom(fd, target, done, target.byteLength - done, done, (error, bytesRead) => {
        if (error !== null) reject(error);
        else resolve(bytesRead);
      });
    });
    if (n === 0) throw new Error(`the spool holds fewer than the ${target.byteLength} bytes asked for`);
    done += n;
  }
}

async function finishSpool(file: SpoolFile, size: number): Promise<void> {
  if (file.closed || file.finished) throw new Error("the spool is closed or already finished");
  await untilIdle(file);
  await file.syncing;
  if (file.failure !== undefined) throw file.failure;
  const fd = open(file);
  if (fstatSync(fd).size < size) throw new Error(`the spool holds fewer than the message's ${size} bytes`);
  ftruncateSync(fd, size);
  if (file.store.sync) await fileSynced(file.store, fd, file.path);
  file.finished = true;
}

/** The finished message into a mailbox: linked (or, where links are refused, copied), then its folder flushed. */
async function deliverSpooled(
  file: SpoolFile,
  mailbox: string,
  meta: { readonly deliveryId: string; readonly receivedAtMs: number },
): Promise<void> {
  if (!file.finished || file.closed) throw new Error("the spool is not finished");
  const { store, path } = file;
  const dir = mailboxDir(store, mailbox);
  const stem = messageStem(meta);
  const size = fstatSync(open(file)).size;
  if (store.recounts.size > 0) await untilCounted(store, dir);
  const linked = changeFolder(store, dir, () => linkInto(store, dir, path, stem), size);
  if (!linked) await copyInto(store, dir, path, stem, size);
  if (!store.sync) return;
  await linkSynced(store, dir);
}

/** No hard links here: a copy, written and flushed as `deliver` writes its own. */
async function copyInto(store: EmlStoreState, dir: string, path: string, stem: string, size: number): Promise<void> {
  const tmp = temporaryPath(dir);
  try {
    changeFolder(store, dir, () => copyFileSync(path, tmp, constants.COPYFILE_EXCL));
    if (store.sync) {
      const copy = openSync(tmp, "r");
      try {
        await fileSynced(store, copy, tmp);
      } finally {
        closeQuietly(copy);
      }
    }
    changeFolder(store, dir, () => publish(dir, tmp, stem), size);
  } catch (error) {
    discard(store, dir, tmp);
    throw error;
  }
}

function closeSpool(file: SpoolFile): void {
  if (file.closed) return;
  file.closed = true;
  // Writes still running hold the descriptor: it is closed, and the file removed, after them.
  void untilIdle(file).then(() => {
    if (file.fd !== undefined) closeQuietly(file.fd);
    try {
      unlinkSync(file.path);
    } catch {
      // Never made, or already gone.
    }
  });
}

function fail(file: SpoolFile, error: unknown): void {
  file.failure ??= asError(error);
}

/** A write is done: when it was the last in flight, those waiting for the writes go on. */
function settled(file: SpoolFile): void {
  if (file.inFlight > 0) return;
  const waiting = file.idle;
  file.idle = [];
  for (const resume of waiting) resume();
}

function untilIdle(file: SpoolFile): Promise<void> {
  return file.inFlight === 0 ? Promise.resolve() : new Promise((resume) => file.idle.push(resume));
}

/** The spool's file, made (with `.spool/` if needed) on first use. */
function open(file: SpoolFile): number {
  if (file.fd !== undefined) return file.fd;
  try {
    file.fd = openSync(file.path, CREATE_NEW_READABLE, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(file.folder, { recursive: true });
    file.fd = openSync(file.path, CREATE_NEW_READABLE, 0o600);
  }
  return file.fd;
}

/** A flush on the way, one at a time, while the rest keeps arriving. */
function syncOnTheWay(file: SpoolFile, fd: number): void {
  if (!file.store.sync || file.syncing !== undefined || file.unsynced < file.store.spoolSyncBytes) return;
  file.unsynced = 0;
  file.syncing = fileSynced(file.store, fd, file.path).then(
    () => {
      file.syncing = undefined;
    },
    (error: unknown) => {
      file.syncing = undefined;
      fail(file, error);
    },
  );
}

function writeAt(file: SpoolFile, fd: number, bytes: Uint8Array, position: number): void {
  file.inFlight += 1;
  write(fd, bytes, 0, bytes.byteLength, position, (error, written) => {
    if (error !== null) fail(file, error);
    else if (written < bytes.byteLength && file.failure === undefined && !file.closed) {
      // A short write: the rest, before this one counts as done.
      writeAt(file, fd, bytes.subarray(written), position + written);
    } else {
      file.unsynced += written;
      syncOnTheWay(file, fd);
    }
    file.inFlight -= 1;
    settled(file);
  });
}
