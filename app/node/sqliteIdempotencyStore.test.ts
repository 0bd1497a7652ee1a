import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IdempotencyRecord } from "../receiver/idempotencyStore.ts";
import { createReceiverHarness } from "../receiver/testing.ts";
import {
  IdempotencyStoreOpenError,
  openSqliteIdempotencyStore,
  type SqliteIdempotencyStore,
} from "./sqliteIdempotencyStore.ts";
import { StorageError } from "../ports.ts";
import { createEmlStore } from "./emlStore.ts";

let dir: string;
let file: string;
const opened: SqliteIdempotencyStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-idem-"));
  file = join(dir, "state", "idempotency.sqlite");
});

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

function open(options?: Parameters<typeof openSqliteIdempotencyStore>[1]): SqliteIdempotencyStore {
  const store = openSqliteIdempotencyStore(file, options);
  opened.push(store);
  return store;
}

/** A record whose body holds every byte value, and header fields in a telling order and spelling. */
function record(digest: string, storedAtMs: number, ttlMs = 1000): IdempotencyRecord {
  return {
    contentDigest: digest,
    response: {
      status: 200,
      headers: [
        ["Content-Type", "application/json"],
        ["x-b", "2"],
        ["X-A", '1, "quoted"'],
      ],
      body: Uint8Array.from({ length: 256 }, (_, i) => i),
    },
    storedAtMs,
    expiresAtMs: storedAtMs + ttlMs,
  };
}

describe("the SQLite idempotency store (serve)", () => {
  it("POST-12, POST-25: a record survives closing and reopening the file, response byte for byte", async () => {
    const first = open();
    await first.put("a.example", "k", record("sha-256:aa", 1000, 7 * 86_400_000));
    await first.close();
    const again = open();
    expect(await again.get("a.example", "k", 2000)).toEqual(record("sha-256:aa", 1000, 7 * 86_400_000));
  });

  it("POST-12: after a put resolves the record is in the file, as another connection reads it, before any close", async () => {
    const store = open();
    await store.put("a.example", "k", record("sha-256:aa", 0));
    // Exclusive locking keeps other connections out; the WAL's content is what a crash leaves: copy both and read them.
    const { copyFileSync } = await import("node:fs");
    const copy = join(dir, "copy.sqlite");
    copyFileSync(file, copy);
    copyFileSync(`${file}-wal`, `${copy}-wal`);
    const reader = new DatabaseSync(copy);
    try {
      expect(reader.prepare("SELECT key, content_digest FROM idempotency").all()).toEqual([
        { key: "k", content_digest: "sha-256:aa" },
      ]);
    } finally {
      reader.close();
    }
  });

  it("AUTH-6: records are kept per (signing domain, key); a domain never sees another's", async () => {
    const store = open();
    await store.put("a.example", "k", record("sha-256:aa", 0));
    await store.put("b.example", "k", record("sha-256:bb", 0));
    expect((await store.get("a.example", "k", 10))?.contentDigest).toBe("sha-256:aa");
    expect((await store.get("b.example", "k", 10))?.contentDigest).toBe("sha-256:bb");
    expect(await store.get("c.example", "k", 10)).toBeUndefined();
    expect(await store.get("a.example", "K", 10)).toBeUndefined();
  });

  it("POST-25: a key put again gets the new record", async () => {
    const store = open();
    await store.put("a.example", "k", record("old", 0));
    await store.put("a.example", "k", record("new", 500));
    expect((await store.get("a.example", "k", 600))?.contentDigest).toBe("new");
    expect(store.count()).toBe(1);
  });

  it("LIM-6: a record is gone from its expiry on; purge deletes the expired ones, in batches, and leaves the rest", async () => {
    const store = open();
    await Promise.all(Array.from({ length: 1203 }, (_, i) => store.put("a.example", `old-${i}`, record("d", 0, 1000))));
    await store.put("a.example", "live", record("d", 0, 5000));
    expect(await store.get("a.example", "old-1", 999)).toBeDefined();
    expect(await store.get("a.example", "old-1", 1000)).toBeUndefined();
    expect(store.count()).toBe(1204);
    expect(await store.purge(1000)).toBe(1203);
    expect(store.count()).toBe(1);
    expect(await store.get("a.example", "live", 1000)).toBeDefined();
  });

  it("POST-12: each put resolves after a flush of the WAL; puts made together share flushes (group commit)", async () => {
    const flushes: number[] = [];
    const store = open({ onWalFlush: (puts) => flushes.push(puts) });
    await store.put("a.example", "alone", record("d", 0));
    expect(flushes).toEqual([1]);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.put("a.example", `k${i}`, record(`d${i}`, 0))));
    const together = flushes.slice(1);
    expect(together.reduce((a, b) => a + b, 0)).toBe(50);
    expect(together.length).toBeLessThan(50);
    for (let i = 0; i < 50; i++) expect((await store.get("a.example", `k${i}`, 1))?.contentDigest).toBe(`d${i}`);
  });

  it("--no-fsync: puts resolve without flushing the WAL", async () => {
    const flushes: number[] = [];
    const store = open({ fsync: false, onWalFlush: (puts) => flushes.push(puts) });
    await store.put("a.example", "k", record("d", 0));
    expect(flushes).toEqual([]);
    expect((await store.get("a.example", "k", 1))?.contentDigest).toBe("d");
  });

  it("close waits for the flush under way and removes the WAL (checkpointed into the file)", async () => {
    const store = open();
    const put = store.put("a.example", "k", record("d", 0));
    await store.close();
    await put;
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = open();
    expect((await again.get("a.example", "k", 1))?.contentDigest).toBe("d");
  });

  it("a second process on the same file is refused at open, naming the cause", async () => {
    open();
    expect(() => openSqliteIdempotencyStore(file)).toThrow(IdempotencyStoreOpenError);
    expect(() => openSqliteIdempotencyStore(file)).toThrow(/in use by another process/);
  });

  it("a file that is not a SQLite database, or holds a newer schema, is refused with its name", async () => {
    const bad = join(dir, "bad.sqlite");
    await writeFile(bad, "not a database, just text that is long enough to fill a header page ".repeat(20));
    expect(() => openSqliteIdempotencyStore(bad)).toThrow(new RegExp(`idempotency store ${bad}: .*not a database`));
    const newer = join(dir, "newer.sqlite");
    const db = new DatabaseSync(newer);
    db.exec("PRAGMA user_version = 99");
    db.close();
    expect(() => openSqliteIdempotencyStore(newer)).toThrow(/schema version 99 is newer/);
  });

  it("afterPut is told once the record is durable", async () => {
    const told: string[] = [];
    const store = open({ afterPut: (domain, key) => told.push(`${domain}/${key}`) });
    await store.put("a.example", "k", record("d", 0));
    expect(told).toEqual(["a.example/k"]);
  });
});

describe("the receiver over the SQLite store", () => {
  it("POST-12, POST-26, G11: replay byte for byte and 409 on other content, as with the memory store", async () => {
    const store = open();
    const h = await createReceiverHarness((c) => c, { idempotencyStore: store });
    const message = "Subject: a\r\n\r\nbody\r\n";
    const first = await h.deliver({ idempotencyKey: "k", message });
    const firstBody = new Uint8Array(await first.arrayBuffer());
    await h.clock.advance(60_000);
    const second = await h.deliver({ idempotencyKey: "k", message });
    expect([second.status, [...second.headers]]).toEqual([first.status, [...first.headers]]);
    expect(new Uint8Array(await second.arrayBuffer())).toEqual(firstBody);
    expect(h.store.all()).toHaveLength(1);
    expect((await h.deliver({ idempotencyKey: "k", message: "Subject: a\r\n\r\nother\r\n" })).status).toBe(409);
    expect(h.trace.named("idempotency.replay")).toHaveLength(1);
  });
});

describe("a full disk (every storage error names the store and the path)", () => {
  /**
   * Fills the file to its page limit with small intents of a.example, keys in ascending order, until one is
   * refused: the table's last page is then full, so any intent after them (key "z") needs a page the file
   * may not have.
   */
  async function fill(store: SqliteIdempotencyStore): Promise<unknown> {
    for (let i = 0; i < 100_000; i++) {
      const intent = { contentDigest: "x", deliveryId: "d", startedAtMs: 0, expiresAtMs: 1e15 };
      const refused = await store.begin("a.example", `k${String(i).padStart(6, "0")}`, intent).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (refused !== undefined) return refused;
    }
    throw new Error("the file never filled");
  }

  it("a write the disk refuses rejects with the store and its file, the system's words kept", async () => {
    const store = open({ maxPages: 8 });
    const error = await fill(store);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({
      store: "idempotency store",
      path: resolve(file),
      reason: "database or disk is full",
    });
    expect((error as Error).message).toBe(`idempotency store ${resolve(file)}: database or disk is full`);
    const large = { ...record("d", 0), response: { ...record("d", 0).response, body: new Uint8Array(64 * 1024) } };
    await expect(store.put("a.example", "k", large)).rejects.toThrow(`idempotency store ${resolve(file)}: `);
    // Reading still works, and says nothing is there.
    expect(await store.get("a.example", "k", 0)).toBeUndefined();
  });

  it("ERR-21: the receiver defers the recipient, naming the idempotency store and its file, not the mail store; no mail is stored", async () => {
    const store = open({ maxPages: 8 });
    await fill(store);
    const mail = await mkdtemp(join(tmpdir(), "mailscope-idem-mail-"));
    try {
      const h = await createReceiverHarness((c) => c, { idempotencyStore: store, mailStore: createEmlStore(mail) });
      const answer = await h.deliver({ idempotencyKey: "z" });
      expect(answer.status).toBe(200);
      const result = (await answer.json()) as { results: { status: string; problem?: { detail?: string } }[] };
      expect(result.results[0]?.status).toBe("deferred");
      expect(result.results[0]?.problem?.detail).toBe(
        `the idempotency store failed at ${resolve(file)}: database or disk is full`,
      );
      expect(await readdir(mail)).toEqual([]);
    } finally {
      await rm(mail, { recursive: true, force: true });
    }
  });
});

describe("a key reused after its record expired, before the purge ran (POST-25, LIM-6)", () => {
  it("POST-25: gets a fresh delivery, not the old answer, with the same body or another; the memory store alike", async () => {
    for (const which of ["sqlite", "memory"] as const) {
      const h = await createReceiverHarness(
        (c) => c,
        which === "sqlite" ? { idempotencyStore: open({ fsync: false }) } : {},
      );
      const message = "Subject: a\r\n\r\nbody\r\n";
      const first = await h.deliver({ idempotencyKey: "k", message });
      expect(first.status, which).toBe(200);
      // Seven days on, to the millisecond: the record's expiry (the retention is 7 days), and no purge has run.
      await h.clock.advance(7 * 86_400_000);
      const again = await h.deliver({ idempotencyKey: "k", message });
      expect(again.status, which).toBe(200);
      expect(h.trace.named("idempotency.replay"), which).toHaveLength(0);
      expect(
        h.store.all().map((m) => m.mailbox),
        which,
      ).toEqual(["bob@b.example", "bob@b.example"]);
      // Another body under the expired key is a new delivery too, not a conflict.
      await h.clock.advance(7 * 86_400_000);
      const other = await h.deliver({ idempotencyKey: "k", message: "Subject: b\r\n\r\nother\r\n" });
      expect(other.status, which).toBe(200);
      expect(h.trace.named("idempotency.conflict"), which).toHaveLength(0);
      expect(h.store.all(), which).toHaveLength(3);
      // …and within the retention of that new record, the same key is answered from it.
      await h.clock.advance(86_400_000);
      expect((await h.deliver({ idempotencyKey: "k", message })).status, which).toBe(409);
    }
  });
});

describe("intents (a crash between storing mail and writing the key)", () => {
  const intent = { contentDigest: "sha-256:ab", deliveryId: "a.example/k@1", startedAtMs: 1000, expiresAtMs: 5000 };

  it("POST-12: an intent begun and never followed by its record is still there after a reopen; the record's put ends it", async () => {
    const first = openSqliteIdempotencyStore(file);
    await first.begin("a.example", "k", intent);
    await first.close();
    const store = open();
    expect(store.countIntents()).toBe(1);
    expect(await store.intent("a.example", "k", 2000)).toEqual(intent);
    expect(await store.intent("b.example", "k", 2000)).toBeUndefined();
    await store.put("a.example", "k", record("sha-256:ab", 2000));
    expect(store.countIntents()).toBe(0);
    expect(await store.intent("a.example", "k", 2000)).toBeUndefined();
    expect(store.count()).toBe(1);
  });

  it("LIM-6: an intent expires with the retention, and the purge removes it", async () => {
    const store = open();
    await store.begin("a.example", "k", intent);
    expect(await store.intent("a.example", "k", 5000)).toBeUndefined();
    await store.purge(5000);
    expect(store.countIntents()).toBe(0);
  });
});
