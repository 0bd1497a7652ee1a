/**
 * The receiver's idempotency store (app/receiver/idempotencyStore.ts) kept
 * on disk, for `mailscope serve`: a key answered before a restart or a crash
 * is still known after it (POST-12, POST-25, LIM-6), and its stored response
 * is replayed byte for byte. Decision note 0013 says why SQLite, and why it
 * is flushed the way it is.
 *
 * One SQLite file (`node:sqlite`, built into Node), one table keyed by
 * (signing domain, key), holding the body's digest (G11), the response as it
 * was sent (status, header fields in order, body bytes) and the store and
 * expiry times. A second table holds the intents: a delivery
 * writes one, durably, before it stores its first message, and its record
 * replaces it in one transaction; an intent left over is a delivery a crash
 * cut off between storing and answering, which its retry resumes. Nothing per key is held in memory: SQLite's page cache is
 * bounded (a few MiB), so memory stays flat however many keys are stored.
 *
 * Durability. `node:sqlite` is synchronous: with `synchronous=FULL` each
 * commit would flush the WAL on the event loop (about 5 ms on the disks
 * measured, the whole server stopped meanwhile). So commits run with
 * `synchronous=NORMAL` in WAL mode, which writes the WAL without flushing it
 * (a process crash loses nothing: the bytes are in the kernel; the database
 * is never corrupted by a power loss), and `put` resolves only after an
 * fdatasync of the WAL file issued through libuv's thread pool, after its
 * commit. Puts that arrive while a flush is scheduled or running share the
 * next one (group commit), as the .eml store's folder flushes do. So once a
 * `put` resolves, and the receiver answers, the record survives a power loss
 * as the message does.
 *
 * The database is opened in exclusive locking mode: a second process on the
 * same file (another `serve` with the same `--state`) is refused at start
 * rather than sharing keys it cannot coordinate.
 */
import { asError } from "../errorMessage.ts";
import { closeSync, fdatasync, fstatSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type {
  DeliveryIntent,
  IdempotencyRecord,
  IdempotencyStore,
  StoredResponse,
} from "../receiver/idempotencyStore.ts";
import { StorageError } from "../ports.ts";

/** The schema this code writes; a file with a newer one is refused. */
const SCHEMA_VERSION = 2;
/** Expired records are deleted this many at a time, so that a purge never holds the event loop long. */
const PURGE_BATCH = 500;

/** What {@link openSqliteIdempotencyStore} may be told. */
export interface SqliteIdempotencyStoreOptions {
  /** Flush the WAL before `put` resolves. Default true; off only for tests and benches (`serve --no-fsync`). */
  readonly fsync?: boolean;
  /** @internal Test seam: called once a `put` is durable, just before it resolves (the crash test kills the process here). */
  readonly afterPut?: (signingDomain: string, key: string) => void;
  /** @internal Test seam: called as a `put` begins, before anything is written (after the mail is stored: a crash test kills here). */
  readonly beforePut?: (signingDomain: string, key: string) => void;
  /** @internal Test seam: told of each fdatasync of the WAL just before it is issued, with how many puts it covers. */
  readonly onWalFlush?: (puts: number) => void;
  /** @internal Test seam: the file may grow to this many pages (SQLite's max_page_count): a full disk, for tests. */
  readonly maxPages?: number;
}

/** The durable store, with what `serve` and the tests need beyond the port. */
export interface SqliteIdempotencyStore extends IdempotencyStore {
  /** The file, as it was given. */
  readonly file: string;
  /** Deletes the records expired by `nowMs`, {@link PURGE_BATCH} at a time, yielding between batches; returns how many went. */
  purge(nowMs: number): Promise<number>;
  /** How many records the file holds, expired ones not yet purged included. */
  count(): number;
  /** How many deliveries were cut off after they began storing mail and before their record (a crash): their retries resume them. */
  countIntents(): number;
  begin(signingDomain: string, key: string, intent: DeliveryIntent): Promise<void>;
  intent(signingDomain: string, key: string, nowMs: number): Promise<DeliveryIntent | undefined>;
  /** Waits for the flushes under way, then closes the database. Later calls do nothing. */
  close(): Promise<void>;
}

/** The database could not be opened or is not an idempotency store: a usage error for `serve`. */
export class IdempotencyStoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IdempotencyStoreOpenError";
  }
}

interface Row {
  content_digest: string;
  status: number;
  headers: string;
  body: Uint8Array;
  stored_at_ms: number;
  expires_at_ms: number;
}

/** A flush of the WAL under way, and the puts waiting for the next one. */
interface WalSync {
  waiting: ((error: Error | null) => void)[];
}

/**
 * The database at `path` opened, locked for this process, in WAL mode, with the schema made.
 *
 * @throws IdempotencyStoreOpenError naming `file`.
 */
function openDatabase(file: string, path: string, maxPages: number | undefined): DatabaseSync {
  let db: DatabaseSync;
  try {
    mkdirSync(dirname(path), { recursive: true });
    db = new DatabaseSync(path, { timeout: 0 });
  } catch (error) {
    throw new IdempotencyStoreOpenError(`idempotency store ${file}: cannot open: ${(error as Error).message}`);
  }
  try {
    // Exclusive before the first access, so no shared-memory index is made and the lock is this process's.
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    const mode = db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode?: string } | undefined;
    if (mode?.journal_mode !== "wal") throw new Error(`journal_mode is ${String(mode?.journal_mode)}, not wal`);
    db.exec("PRAGMA synchronous = NORMAL");
    const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version > SCHEMA_VERSION) {
      throw new Error(`schema version ${version} is newer than this mailscope's ${SCHEMA_VERSION}`);
    }
    db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency (
        signing_domain TEXT NOT NULL,
        key            TEXT NOT NULL,
        content_digest TEXT NOT NULL,
        status         INTEGER NOT NULL,
        headers        TEXT NOT NULL,
        body           BLOB NOT NULL,
        stored_at_ms   INTEGER NOT NULL,
        expires_at_ms  INTEGER NOT NULL,
        PRIMARY KEY (signing_domain, key)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at_ms);
      CREATE TABLE IF NOT EXISTS intent (
        signing_domain TEXT NOT NULL,
        key            TEXT NOT NULL,
        content_digest TEXT NOT NULL,
        delivery_id    TEXT NOT NULL,
        started_at_ms  INTEGER NOT NULL,
        expires_at_ms  INTEGER NOT NULL,
        PRIMARY KEY (signing_domain, key)
      ) WITHOUT ROWID;
      PRAGMA user_version = ${SCHEMA_VERSION};
    `);
    if (maxPages !== undefined) db.exec(`PRAGMA max_page_count = ${Math.floor(maxPages)}`);
  } catch (error) {
    try {
      db.close();
    } catch {
      // Reporting the first failure.
    }
    const message = (error as Error).message;
    throw new IdempotencyStoreOpenError(
      /locked|busy/i.test(message)
        ? `idempotency store ${file}: in use by another process (another serve with the same --state?)`
        : `idempotency store ${file}: ${message}`,
    );
  }
  return db;
}

/** The store's statements, prepared once. */
function prepareStatements(
  db: DatabaseSync,
): Readonly<
  Record<
    | "select"
    | "upsert"
    | "purgeBatch"
    | "countAll"
    | "countIntents"
    | "selectIntent"
    | "upsertIntent"
    | "deleteIntent"
    | "purgeIntents",
    StatementSync
  >
> {
  const select = db.prepare(
    "SELECT content_digest, status, headers, body, stored_at_ms, expires_at_ms FROM idempotency WHERE signing_domain = ? AND key = ?",
  );
  const upsert = db.prepare(
    `INSERT INTO idempotency (signing_domain, key, content_digest, status, headers, body, stored_at_ms, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (signing_domain, key) DO UPDATE SET
       content_digest = excluded.content_digest, status = excluded.status, headers = excluded.headers,
       body = excluded.body, stored_at_ms = excluded.stored_at_ms, expires_at_ms = excluded.expires_at_ms`,
  );
  const purgeBatch = db.prepare(
    `DELETE FROM idempotency WHERE (signing_domain, key) IN
       (SELECT signing_domain, key FROM idempotency WHERE expires_at_ms <= ? LIMIT ${PURGE_BATCH})`,
  );
  const countAll = db.prepare("SELECT count(*) AS n FROM idempotency");
  const countIntents = db.prepare("SELECT count(*) AS n FROM intent");
  const selectIntent = db.prepare(
    "SELECT content_digest, delivery_id, started_at_ms, expires_at_ms FROM intent WHERE signing_domain = ? AND key = ?",
  );
  const upsertIntent = db.prepare(
    `INSERT INTO intent (signing_domain, key, content_digest, delivery_id, started_at_ms, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (signing_domain, key) DO UPDATE SET
       content_digest = excluded.content_digest, delivery_id = excluded.delivery_id,
       started_at_ms = excluded.started_at_ms, expires_at_ms = excluded.expires_at_ms`,
  );
  const deleteIntent = db.prepare("DELETE FROM intent WHERE signing_domain = ? AND key = ?");
  const purgeIntents = db.prepare("DELETE FROM intent WHERE expires_at_ms <= ?");
  return { select, upsert, purgeBatch, countAll, countIntents, selectIntent, upsertIntent, deleteIntent, purgeIntents };
}

/**
 * Opens (creating if needed, with its folder) the SQLite idempotency store at
 * `file`.
 *
 * @throws IdempotencyStoreOpenError when the file cannot be opened, is not a
 * SQLite database, holds a newer schema, or is in use by another process.
 */
export function openSqliteIdempotencyStore(
  file: string,
  options: SqliteIdempotencyStoreOptions = {},
): SqliteIdempotencyStore {
  const path = resolve(file);
  const walPath = `${path}-wal`;
  const sync = options.fsync ?? true;
  const db = openDatabase(file, path, options.maxPages);
  const { select, upsert, purgeBatch, countAll, countIntents, selectIntent, upsertIntent, deleteIntent, purgeIntents } =
    prepareStatements(db);

  let walFd: number | undefined;
  let walSync: WalSync | undefined;
  let closed = false;

  /**
   * Resolves after an fdatasync of the WAL issued after this call (so after
   * the caller's commit), shared with every put that asks while one is
   * scheduled or running: they wait for the next, which starts when it ends.
   */
  function walFlushed(): Promise<void> {
    return new Promise((done, fail) => {
      const settle = (error: Error | null): void => (error === null ? done() : fail(error));
      if (walSync !== undefined) {
        walSync.waiting.push(settle);
        return;
      }
      const fresh: WalSync = { waiting: [settle] };
      walSync = fresh;
      setImmediate(flushWal, fresh);
    });
  }

  function flushWal(state: WalSync): void {
    // The batch is fixed before the flush is issued: each of its commits is already in the WAL.
    const batch = state.waiting;
    state.waiting = [];
    const finish = (error: Error | null): void => {
      for (const settle of batch) settle(error);
      if (state.waiting.length > 0) setImmediate(flushWal, state);
      else walSync = undefined;
    };
    let fd: number;
    try {
      // The WAL exists from the first commit on and, while this connection is open, is only
      // rewritten in place (never removed), so one descriptor serves the store's life; checked
      // anyway (two stats), since flushing a file that is no longer the WAL would flush nothing.
      if (walFd !== undefined && fstatSync(walFd).ino !== statSync(walPath, { throwIfNoEntry: false })?.ino) {
        closeSync(walFd);
        walFd = undefined;
      }
      walFd ??= openSync(walPath, "r");
      fd = walFd;
    } catch (error) {
      finish(error as Error);
      return;
    }
    options.onWalFlush?.(batch.length);
    fdatasync(fd, finish);
  }

  const store: SqliteIdempotencyStore = {
    file,

    get(signingDomain, key, nowMs) {
      try {
        const row = select.get(signingDomain, key) as Row | undefined;
        if (row === undefined || row.expires_at_ms <= nowMs) return Promise.resolve(undefined);
        return Promise.resolve(toRecord(row));
      } catch (error) {
        return Promise.reject(asError(error));
      }
    },

    async put(signingDomain, key, record) {
      if (closed) throw new Error("the idempotency store is closed");
      options.beforePut?.(signingDomain, key);
      const { response } = record;
      // The record and the end of the intent in one transaction: never both, never neither.
      db.exec("BEGIN");
      try {
        deleteIntent.run(signingDomain, key);
        upsert.run(
          signingDomain,
          key,
          record.contentDigest,
          response.status,
          JSON.stringify(response.headers),
          response.body,
          record.storedAtMs,
          record.expiresAtMs,
        );
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
      if (sync) await walFlushed();
      options.afterPut?.(signingDomain, key);
    },

    async begin(signingDomain, key, intent) {
      if (closed) throw new Error("the idempotency store is closed");
      upsertIntent.run(
        signingDomain,
        key,
        intent.contentDigest,
        intent.deliveryId,
        intent.startedAtMs,
        intent.expiresAtMs,
      );
      if (sync) await walFlushed();
    },

    intent(signingDomain, key, nowMs) {
      try {
        const row = selectIntent.get(signingDomain, key) as
          { content_digest: string; delivery_id: string; started_at_ms: number; expires_at_ms: number } | undefined;
        if (row === undefined || Number(row.expires_at_ms) <= nowMs) return Promise.resolve(undefined);
        return Promise.resolve({
          contentDigest: row.content_digest,
          deliveryId: row.delivery_id,
          startedAtMs: Number(row.started_at_ms),
          expiresAtMs: Number(row.expires_at_ms),
        });
      } catch (error) {
        return Promise.reject(asError(error));
      }
    },

    async purge(nowMs) {
      let purged = 0;
      if (!closed) purgeIntents.run(nowMs);
      for (;;) {
        if (closed) return purged;
        const { changes } = purgeBatch.run(nowMs);
        purged += Number(changes);
        if (Number(changes) < PURGE_BATCH) return purged;
        await new Promise((resume) => setImmediate(resume));
      }
    },

    count: () => Number((countAll.get() as { n: number }).n),
    countIntents: () => Number((countIntents.get() as { n: number }).n),

    async close() {
      if (closed) return;
      closed = true;
      // The next flush covers every commit made so far; puts waiting for one settle with it.
      const pending = walSync;
      if (pending !== undefined) await new Promise<void>((resume) => pending.waiting.push(() => resume()));
      if (walFd !== undefined) {
        try {
          closeSync(walFd);
        } catch {
          // Closing anyway.
        }
      }
      // A clean close checkpoints the WAL into the database and removes it.
      db.close();
    },
  };
  // Every failure names this store and its file: "database or disk is full" alone does not say which.
  const named =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await operation(...args);
      } catch (error) {
        throw StorageError.of("idempotency store", path, error);
      }
    };
  return {
    ...store,
    get: named(store.get),
    put: named(store.put),
    begin: named(store.begin),
    intent: named(store.intent),
    purge: named(store.purge),
  };
}

function toRecord(row: Row): IdempotencyRecord {
  const response: StoredResponse = {
    status: row.status,
    headers: JSON.parse(row.headers) as [string, string][],
    body: row.body,
  };
  return {
    contentDigest: row.content_digest,
    response,
    storedAtMs: Number(row.stored_at_ms),
    expiresAtMs: Number(row.expires_at_ms),
  };
}
