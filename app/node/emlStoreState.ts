/**
 * What a .eml store (emlStore.ts) holds while it lives: one {@link EmlStoreState} object that its parts — the
 * mailboxes' usage (emlStoreUsage.ts), the flushes to disk (emlStoreSync.ts), a message written and published
 * (emlStoreWrite.ts) and the spool (emlStoreSpool.ts) — share in place of the closure they were written in
 * (decision 0145); and the names the store gives its folders and files.
 */
import { randomBytes } from "node:crypto";
import { closeSync } from "node:fs";
import { join } from "node:path";

/** A mailbox's count: its `.eml` files and their bytes. */
export interface Usage {
  messages: number;
  bytes: number;
}

/** The count of a folder, trusted while the folder's modification time is `mtimeMs`. */
export interface KnownUsage extends Usage {
  mtimeMs: number;
}

/** The folder fsync of one folder: the deliveries waiting for the next one, while one is scheduled or running. */
export interface FolderSync {
  waiting: ((error: Error | null) => void)[];
}

/** Called just before an fsync is issued, and may hold it back or fail it (EmlStoreSyncHooks' `beforeSync`). */
export type BeforeSync = (kind: "file" | "folder", path: string) => Promise<void> | undefined;

/** A store's settings and what it keeps in memory about its folders. */
export interface EmlStoreState {
  readonly root: string;
  /** Flush files and folders to disk before a delivery resolves. */
  readonly sync: boolean;
  /** A spooled message is flushed on the way after every this many bytes. */
  readonly spoolSyncBytes: number;
  /** The tests' hook before each fsync, if any. */
  readonly beforeSync: BeforeSync | undefined;
  /** The count of each mailbox folder counted, with the modification time it goes with. */
  readonly counts: Map<string, KnownUsage>;
  /** Folders being counted by `usage`; deliveries leave such a folder alone until the count is taken. */
  readonly recounts: Map<string, Promise<Usage>>;
  /** Folders this store just made, until the folders holding them are flushed (only with fsync). */
  readonly newFolders: Map<string, Promise<void>>;
  /** The grouped fsync of each folder being flushed. */
  readonly folderSyncs: Map<string, FolderSync>;
}

/** The name of this store's temporary files (`deliver`'s and the spool's): a dot, 16 hex digits, `.tmp`. */
export const TEMPORARY_FILE = /^\.[0-9a-f]{16}\.tmp$/;

/** A new temporary file's path in `dir`: a dot, 16 random hex digits, `.tmp` ({@link TEMPORARY_FILE}). */
export function temporaryPath(dir: string): string {
  return join(dir, `.${randomBytes(8).toString("hex")}.tmp`);
}

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

/** The folder of a mailbox under the store's root (it may not exist yet). */
export function mailboxDir(store: EmlStoreState, mailbox: string): string {
  return join(store.root, mailboxFolderName(mailbox));
}

/** `20250501T100000.123Z`: ISO 8601 basic, sortable, without characters file systems refuse. */
export function fileTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "");
}

/** The file name part of a delivery id: only `A-Z a-z 0-9 . _ ~ -` (the Idempotency-Key alphabet), the rest as `_`. */
export function safeId(deliveryId: string): string {
  const cleaned = deliveryId.replace(/[^A-Za-z0-9._~-]/g, "_").replace(/^\.+/, "_");
  return cleaned === "" ? "delivery" : cleaned.slice(0, 128);
}

/** A message's file name without its `.eml` (or `-<n>.eml`): `<time>-<delivery>`. */
export function messageStem(meta: { readonly deliveryId: string; readonly receivedAtMs: number }): string {
  return `${fileTime(meta.receivedAtMs)}-${safeId(meta.deliveryId)}`;
}

export function noop(): void {}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closing after a failure: the failure is what gets reported.
  }
}
