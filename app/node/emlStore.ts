/**
 * The Mail store port (ARCHITECTURE.md "Ports") as a folder of .eml files:
 * `<root>/<mailbox>/<time>-<deliveryId>.eml`, one file per message and
 * mailbox, the message byte for byte as it arrived (POST-9, POST-10: DKIM
 * signatures inside it survive).
 *
 * Each file is written atomically: into a temporary file in the same folder,
 * flushed to disk (fsync), then renamed to its name, and the folder itself
 * flushed, so that once `deliver` resolves (and the receiver answers
 * `accepted`) the message survives a crash, and a reader never sees half a
 * message.
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { MailStore } from "../ports.ts";

/** What {@link createEmlStore} may be told. */
export interface EmlStoreOptions {
  /** Flush files and folders to disk before `deliver` resolves. Default true; off only for benchmarks of everything else. */
  readonly fsync?: boolean;
}

/** An {@link MailStore} over a folder, with what a command or a test needs to look inside. */
export interface EmlStore extends MailStore {
  readonly root: string;
  /** The folder of a mailbox (it may not exist yet). */
  mailboxDir(mailbox: string): string;
  /** The .eml files of a mailbox, oldest first, as full paths. */
  list(mailbox: string): Promise<string[]>;
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

/** `20250501T100000.123Z`: ISO 8601 basic, sortable, without characters file systems refuse. */
export function fileTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "");
}

/** The file name part of a delivery id: only `A-Z a-z 0-9 . _ ~ -` (the Idempotency-Key alphabet), the rest as `_`. */
function safeId(deliveryId: string): string {
  const cleaned = deliveryId.replace(/[^A-Za-z0-9._~-]/g, "_").replace(/^\.+/, "_");
  return cleaned === "" ? "delivery" : cleaned.slice(0, 128);
}

/**
 * A Mail store writing .eml files under `root` (created when needed).
 *
 * `usage` counts the `.eml` files of a mailbox and their sizes. The count is
 * kept in memory and trusted while the folder's modification time is the one
 * seen last, so that quotas cost one `stat` per delivery; when someone else
 * adds or removes files (a user reading mail), the folder is counted again.
 */
export function createEmlStore(root: string, options: EmlStoreOptions = {}): EmlStore {
  const sync = options.fsync ?? true;
  const cache = new Map<string, { mtimeMs: number; messages: number; bytes: number }>();
  const mailboxDir = (mailbox: string): string => join(root, mailboxFolderName(mailbox));

  async function count(dir: string): Promise<{ messages: number; bytes: number }> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { messages: 0, bytes: 0 };
      throw error;
    }
    let messages = 0;
    let bytes = 0;
    for (const name of names) {
      if (!name.endsWith(".eml")) continue;
      try {
        const info = await stat(join(dir, name));
        if (!info.isFile()) continue;
        messages += 1;
        bytes += info.size;
      } catch {
        // Removed while counting: not there any more.
      }
    }
    return { messages, bytes };
  }

  async function dirMtime(dir: string): Promise<number | undefined> {
    try {
      return (await stat(dir)).mtimeMs;
    } catch {
      return undefined;
    }
  }

  async function usage(mailbox: string): Promise<{ messages: number; bytes: number }> {
    const dir = mailboxDir(mailbox);
    const mtimeMs = await dirMtime(dir);
    if (mtimeMs === undefined) {
      cache.delete(dir);
      return { messages: 0, bytes: 0 };
    }
    const known = cache.get(dir);
    if (known !== undefined && known.mtimeMs === mtimeMs) return { messages: known.messages, bytes: known.bytes };
    const counted = await count(dir);
    cache.set(dir, { mtimeMs, ...counted });
    return counted;
  }

  // Deliveries to one mailbox run one after the other, so the kept count never misses one.
  const queues = new Map<string, Promise<void>>();

  function deliver(
    mailbox: string,
    message: Uint8Array,
    meta: { readonly deliveryId: string; readonly receivedAtMs: number },
  ): Promise<void> {
    const dir = mailboxDir(mailbox);
    const previous = queues.get(dir) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => write(dir, message, meta));
    const tail = next.catch(() => {});
    queues.set(dir, tail);
    void tail.then(() => {
      if (queues.get(dir) === tail) queues.delete(dir);
    });
    return next;
  }

  async function write(
    dir: string,
    message: Uint8Array,
    meta: { readonly deliveryId: string; readonly receivedAtMs: number },
  ): Promise<void> {
    // The kept count stays valid only if nobody else touched the folder since it was taken.
    const known = cache.get(dir);
    if (known !== undefined && (await dirMtime(dir)) !== known.mtimeMs) cache.delete(dir);

    const tmp = join(dir, `.${randomBytes(8).toString("hex")}.tmp`);
    let handle;
    try {
      handle = await open(tmp, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // The mailbox's first message: make its folder (only then, to spare a call per delivery).
      await mkdir(dir, { recursive: true });
      handle = await open(tmp, "wx", 0o600);
    }
    try {
      await handle.writeFile(message);
      if (sync) await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw error;
    }
    await handle.close();

    const stem = `${fileTime(meta.receivedAtMs)}-${safeId(meta.deliveryId)}`;
    try {
      await publish(dir, tmp, stem);
    } catch (error) {
      await unlink(tmp).catch(() => {});
      throw error;
    }
    if (sync) await syncDir(dir);
    const still = cache.get(dir);
    if (still !== undefined) {
      const mtimeMs = await dirMtime(dir);
      if (mtimeMs !== undefined)
        cache.set(dir, { mtimeMs, messages: still.messages + 1, bytes: still.bytes + message.byteLength });
    }
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

  return { root, deliver, usage, mailboxDir, list };
}

/**
 * Gives the finished temporary file its name: `<stem>.eml`, or `<stem>-2.eml`
 * and so on when that name is taken (the same delivery stored twice in one
 * millisecond), never overwriting. A hard link fails atomically on a taken
 * name; where links are not supported, a check and a rename do.
 */
async function publish(dir: string, tmp: string, stem: string): Promise<void> {
  for (let n = 1; n < 1000; n++) {
    const target = join(dir, n === 1 ? `${stem}.eml` : `${stem}-${n}.eml`);
    try {
      await link(tmp, target);
      await unlink(tmp);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") continue;
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
      if (await exists(target)) continue;
      await rename(tmp, target);
      return;
    }
  }
  throw new Error(`no free file name for ${stem}.eml in ${dir}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Flushes a folder's entries (the rename) to disk; not possible on every platform (Windows), where it is skipped. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // EISDIR / EPERM on platforms that cannot fsync a directory.
  } finally {
    await handle?.close().catch(() => {});
  }
}
