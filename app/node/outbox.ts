/**
 * The outbox of `mailscope serve`'s outbound side: the DSNs of failures after
 * acceptance (G17) that have no final outcome yet, kept on disk so that a
 * restart does not lose them. `serve` adds an entry before it hands the DSN
 * to its sender, removes it once every recipient has a final outcome, and on
 * start resubmits every entry an earlier run left behind.
 *
 * An entry is two files in the outbox folder: `<id>.eml`, the message byte
 * for byte, and `<id>.json`, its envelope (`from` null, `to`, `submittedAt`,
 * `messageId`, and what it reports on). `<id>` is the submission time (as the
 * mail store names files) and a random suffix, so a listing is oldest first.
 *
 * Each file is written as the mail store writes its files: into a temporary
 * file (`.<name>.<random>.tmp`), flushed (fdatasync), renamed to its name,
 * and the folder flushed (fsync). The message comes first and the envelope
 * last: an entry exists once its `.json` does. Removal goes the other way,
 * the `.json` first. A file that cannot be read back (an envelope that is not
 * JSON or lacks a field, a message without its envelope or the reverse) is
 * moved aside as `<name>.bad` and reported, never deleted.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { cannotSyncFolder, fileTime } from "./emlStore.ts";
import { StorageError } from "../ports.ts";

/** An entry's envelope: the `.json` file. */
export const outboxEnvelopeSchema = z.object({
  /** Always null: the outbox holds DSNs, sent with the null reverse-path (ENV-3). */
  from: z.null(),
  to: z.array(z.string().min(1)).min(1),
  /** When the DSN was queued, ISO 8601. */
  submittedAt: z.iso.datetime(),
  /** The DSN's Message-ID, without angle brackets: its id in the sender's trace. */
  messageId: z.string().min(1),
  /** The failure it reports: the original delivery and the recipients that failed after acceptance. */
  about: z
    .object({
      deliveryId: z.string(),
      recipients: z.array(z.object({ mailbox: z.string(), status: z.string() })),
    })
    .optional(),
});

export type OutboxEnvelope = z.output<typeof outboxEnvelopeSchema>;

/** One entry of the outbox. */
export interface OutboxEntry {
  readonly id: string;
  readonly envelope: OutboxEnvelope;
  readonly message: Uint8Array;
  /** The `.json` file that holds the envelope. */
  readonly file: string;
}

/** A file {@link Outbox.load} could not read back, and where it was moved. */
export interface SetAside {
  readonly file: string;
  readonly movedTo: string;
  readonly reason: string;
}

/** What {@link createOutbox} may be told. */
export interface OutboxOptions {
  /** Flush files and the folder to disk before `add` and `remove` resolve. Default true. */
  readonly fsync?: boolean;
  /** @internal Test seam: told of every flush before it is made. */
  readonly onSync?: (kind: "file" | "folder", path: string) => void;
}

export interface Outbox {
  readonly dir: string;
  /** Writes an entry; resolves once it is on disk (with fsync). */
  add(envelope: OutboxEnvelope, message: Uint8Array): Promise<OutboxEntry>;
  /** Removes an entry; one already gone is no error. */
  remove(id: string): Promise<void>;
  /** Every entry, oldest first. What cannot be read back is moved aside and listed in `setAside`. */
  load(): Promise<{ readonly entries: readonly OutboxEntry[]; readonly setAside: readonly SetAside[] }>;
}

/** An outbox in folder `dir`, made (with its parents) when the first entry is added. */
export function createOutbox(dir: string, options: OutboxOptions = {}): Outbox {
  const sync = options.fsync ?? true;
  let made: Promise<void> | undefined;

  async function syncFolder(path: string): Promise<void> {
    if (!sync) return;
    options.onSync?.("folder", path);
    let handle: FileHandle | undefined;
    try {
      handle = await open(path, "r");
      await handle.sync();
    } catch (error) {
      if (!cannotSyncFolder(error)) throw error;
    } finally {
      await handle?.close();
    }
  }

  /** Makes the folder once; a folder made here is flushed in its parents, as the entries in it are only as durable as it. */
  function ensureFolder(): Promise<void> {
    made ??= (async () => {
      const created = await mkdir(dir, { recursive: true });
      if (created === undefined) return;
      const first = resolve(created);
      for (let child = resolve(dir); ; child = dirname(child)) {
        await syncFolder(dirname(child));
        if (child === first || dirname(child) === child) break;
      }
    })();
    // A failure is not kept: the next add tries again.
    made.catch(() => (made = undefined));
    return made;
  }

  /** Writes `bytes` to `name` in the folder: a temporary file, flushed, renamed; then the folder flushed. */
  async function writeDurably(name: string, bytes: Uint8Array): Promise<void> {
    const tmp = join(dir, `.${name}.${randomBytes(4).toString("hex")}.tmp`);
    const handle = await open(tmp, "wx", 0o600);
    try {
      await handle.writeFile(bytes);
      if (sync) {
        options.onSync?.("file", tmp);
        await handle.datasync();
      }
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw error;
    }
    await handle.close();
    await rename(tmp, join(dir, name));
    await syncFolder(dir);
  }

  async function add(envelope: OutboxEnvelope, message: Uint8Array): Promise<OutboxEntry> {
    const checked = outboxEnvelopeSchema.parse(envelope);
    await ensureFolder();
    const id = `${fileTime(Date.parse(checked.submittedAt))}-${randomBytes(6).toString("hex")}`;
    await writeDurably(`${id}.eml`, message);
    await writeDurably(`${id}.json`, new TextEncoder().encode(`${JSON.stringify(checked, null, 2)}\n`));
    return { id, envelope: checked, message, file: join(dir, `${id}.json`) };
  }

  async function remove(id: string): Promise<void> {
    await unlinkIfThere(join(dir, `${id}.json`));
    await unlinkIfThere(join(dir, `${id}.eml`));
    await syncFolder(dir);
  }

  async function load(): Promise<{ entries: OutboxEntry[]; setAside: SetAside[] }> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], setAside: [] };
      throw error;
    }
    const present = new Set(names.filter((n) => !n.startsWith(".") && /\.(eml|json)$/.test(n)));
    const ids = [...new Set([...present].map((n) => n.replace(/\.(eml|json)$/, "")))].sort();
    const entries: OutboxEntry[] = [];
    const setAside: SetAside[] = [];
    for (const id of ids) {
      const file = join(dir, `${id}.json`);
      const read = await readEntry(id, present);
      if (read.ok) {
        entries.push({ id, envelope: read.envelope, message: read.message, file });
        continue;
      }
      for (const name of [`${id}.json`, `${id}.eml`].filter((n) => present.has(n))) {
        setAside.push({ file: join(dir, name), movedTo: await moveAside(name), reason: read.reason });
      }
    }
    if (setAside.length > 0) await syncFolder(dir);
    return { entries, setAside };
  }

  async function readEntry(
    id: string,
    present: ReadonlySet<string>,
  ): Promise<{ ok: true; envelope: OutboxEnvelope; message: Uint8Array } | { ok: false; reason: string }> {
    if (!present.has(`${id}.json`))
      return { ok: false, reason: `a message without its envelope ${id}.json (a write or removal cut short)` };
    if (!present.has(`${id}.eml`))
      return { ok: false, reason: `an envelope without its message ${id}.eml (a removal cut short, or the file went)` };
    let json: unknown;
    try {
      json = JSON.parse(await readFile(join(dir, `${id}.json`), "utf8"));
    } catch (error) {
      return { ok: false, reason: `the envelope is not JSON (${(error as Error).message})` };
    }
    const parsed = outboxEnvelopeSchema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(envelope)"}: ${i.message}`);
      return { ok: false, reason: `the envelope is not one: ${issues.join("; ")}` };
    }
    try {
      return { ok: true, envelope: parsed.data, message: new Uint8Array(await readFile(join(dir, `${id}.eml`))) };
    } catch (error) {
      return { ok: false, reason: `the message cannot be read (${(error as Error).message})` };
    }
  }

  /** Renames `name` to `name.bad` (or `name.2.bad`, … when taken: nothing is overwritten); the new path. */
  async function moveAside(name: string): Promise<string> {
    for (let n = 1; ; n++) {
      const target = join(dir, n === 1 ? `${name}.bad` : `${name}.${n}.bad`);
      const taken = await stat(target).then(
        () => true,
        () => false,
      );
      if (taken) continue;
      await rename(join(dir, name), target);
      return target;
    }
  }

  /** A failure of the outbox names it and the folder or entry it failed at. */
  const named = <T>(path: string, operation: Promise<T>): Promise<T> =>
    operation.catch((error: unknown) => {
      throw StorageError.of("outbox", path, error);
    });
  return {
    dir,
    add: (envelope, message) => named(dir, add(envelope, message)),
    remove: (id) => named(join(dir, `${id}.json`), remove(id)),
    load: () => named(dir, load()),
  };
}

async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
