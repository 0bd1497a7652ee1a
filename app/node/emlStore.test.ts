import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { chmod, mkdtemp, readFile, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createEmlStore, fileTime, mailboxFolderName, type EmlStoreSyncHooks } from "./emlStore.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mailscope-eml-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const message = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Every name in a folder (the hidden temporary files too). */
const namesIn = async (dir: string): Promise<string[]> => (await readdir(dir)).sort();

/** Sync hooks counting the fsyncs, by kind, and the paths they were for. */
function countingHooks(): EmlStoreSyncHooks & { file: string[]; folder: string[] } {
  const file: string[] = [];
  const folder: string[] = [];
  return {
    file,
    folder,
    beforeSync(kind, path) {
      (kind === "file" ? file : folder).push(path);
      return undefined;
    },
  };
}

describe("createEmlStore", () => {
  it("POST-9 POST-10: stores the message byte for byte as <root>/<mailbox>/<time>-<deliveryId>.eml", async () => {
    const store = createEmlStore(root);
    // CRLF, a DKIM header and bytes that are not UTF-8 all survive untouched.
    const bytes = new Uint8Array([
      ...message("DKIM-Signature: v=1; a=rsa-sha256;\r\n b=abc\r\nSubject: hi\r\n\r\nbody\r\n"),
      0xff,
      0x00,
      0x80,
    ]);
    const at = Date.UTC(2025, 4, 1, 10, 0, 0, 123);
    await store.deliver("bob@example.net", bytes, { deliveryId: "key-1", receivedAtMs: at });
    const files = await store.list("bob@example.net");
    expect(files).toEqual([join(root, "bob@example.net", "20250501T100000.123Z-key-1.eml")]);
    expect(new Uint8Array(await readFile(files[0] as string))).toEqual(bytes);
    // No temporary file is left behind.
    expect(await readdir(join(root, "bob@example.net"))).toEqual(["20250501T100000.123Z-key-1.eml"]);
  });

  it("G22: the domain is folded to lowercase, the local part kept as is", async () => {
    const store = createEmlStore(root);
    await store.deliver("Bob@Example.NET", message("a"), { deliveryId: "d1", receivedAtMs: 0 });
    await store.deliver("Bob@example.net", message("b"), { deliveryId: "d2", receivedAtMs: 1 });
    expect(await store.list("Bob@example.net")).toHaveLength(2);
    expect(basename(store.mailboxDir("Bob@EXAMPLE.net"))).toBe("Bob@example.net");
  });

  it("MBX-4 MBX-5: quoted and non-ASCII local parts become safe folder names", () => {
    expect(mailboxFolderName('"a/b\\\\c"@example.net')).toBe("%22a%2Fb%5C%5Cc%22@example.net");
    expect(mailboxFolderName("jörg@example.net")).toBe("j%C3%B6rg@example.net");
    expect(mailboxFolderName('".."@example.net')).toBe("%22..%22@example.net");
    expect(mailboxFolderName("a%b@example.net")).toBe("a%25b@example.net");
    // Different mailboxes never share a folder.
    expect(mailboxFolderName("a%2Fb@x.example")).not.toBe(mailboxFolderName("a/b@x.example"));
  });

  it("POST-12: the same delivery stored twice in one millisecond keeps both files", async () => {
    const store = createEmlStore(root);
    await store.deliver("bob@example.net", message("one"), { deliveryId: "same", receivedAtMs: 5 });
    await store.deliver("bob@example.net", message("two"), { deliveryId: "same", receivedAtMs: 5 });
    const files = await store.list("bob@example.net");
    expect(files.map((f) => basename(f))).toEqual([`${fileTime(5)}-same-2.eml`, `${fileTime(5)}-same.eml`]);
  });

  it("ERR-9: usage counts the messages and bytes of a mailbox, for quotas", async () => {
    const store = createEmlStore(root);
    expect(await store.usage("bob@example.net")).toEqual({ messages: 0, bytes: 0 });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.deliver("bob@example.net", message("x".repeat(i + 1)), { deliveryId: `d${i}`, receivedAtMs: 1000 + i }),
      ),
    );
    expect(await store.usage("bob@example.net")).toEqual({ messages: 12, bytes: 78 });
    expect(await store.usage("alice@example.net")).toEqual({ messages: 0, bytes: 0 });
  });

  it("ERR-9: usage notices files removed or added by someone else", async () => {
    const store = createEmlStore(root);
    await store.deliver("bob@example.net", message("12345"), { deliveryId: "a", receivedAtMs: 1 });
    await store.deliver("bob@example.net", message("123"), { deliveryId: "b", receivedAtMs: 2 });
    expect(await store.usage("bob@example.net")).toEqual({ messages: 2, bytes: 8 });
    const [first] = await store.list("bob@example.net");
    await unlink(first as string);
    await writeFile(join(store.mailboxDir("bob@example.net"), "by-hand.eml"), "1234567");
    await writeFile(join(store.mailboxDir("bob@example.net"), "notes.txt"), "not a message");
    expect(await store.usage("bob@example.net")).toEqual({ messages: 2, bytes: 10 });
  });

  it("POST-12: a delivery id outside the Idempotency-Key alphabet cannot escape the folder", async () => {
    const store = createEmlStore(root);
    await store.deliver("bob@example.net", message("m"), { deliveryId: "../../etc/passwd", receivedAtMs: 0 });
    const files = await store.list("bob@example.net");
    expect(files).toHaveLength(1);
    expect(basename(files[0] as string)).toBe(`${fileTime(0)}-__.._etc_passwd.eml`);
  });

  it("SVC-8: a failed write rejects and leaves no file", async () => {
    const store = createEmlStore(root);
    // A file where the mailbox folder should be: mkdir fails.
    await writeFile(join(root, "bob@example.net"), "in the way");
    await expect(
      store.deliver("bob@example.net", message("m"), { deliveryId: "d", receivedAtMs: 0 }),
    ).rejects.toThrow();
    expect(await readdir(root)).toEqual(["bob@example.net"]);
  });

  it("SVC-8: a failed write rejects with the fs error, leaves no temporary file, and the store keeps working", async () => {
    const store = createEmlStore(root);
    await writeFile(join(root, "bob@example.net"), "in the way");
    // The error names the store and the folder, and keeps the system's code.
    await expect(
      store.deliver("bob@example.net", message("m"), { deliveryId: "d", receivedAtMs: 0 }),
    ).rejects.toMatchObject({
      code: "ENOTDIR",
      store: "mail store",
      path: join(root, "bob@example.net"),
      message: expect.stringMatching(new RegExp(`^mail store ${join(root, "bob@example.net")}: ENOTDIR`)),
    });
    await unlink(join(root, "bob@example.net"));
    await store.deliver("bob@example.net", message("m"), { deliveryId: "d", receivedAtMs: 0 });
    expect(await namesIn(join(root, "bob@example.net"))).toEqual([`${fileTime(0)}-d.eml`]);
  });

  it.skipIf(process.getuid?.() === 0)(
    "SVC-8: a read-only mailbox folder rejects (EACCES) and leaves no file",
    async () => {
      const store = createEmlStore(root);
      await store.deliver("bob@example.net", message("one"), { deliveryId: "a", receivedAtMs: 0 });
      const dir = store.mailboxDir("bob@example.net");
      await chmod(dir, 0o500);
      try {
        await expect(
          store.deliver("bob@example.net", message("two"), { deliveryId: "b", receivedAtMs: 1 }),
        ).rejects.toMatchObject({ code: "EACCES" });
      } finally {
        await chmod(dir, 0o700);
      }
      await store.deliver("bob@example.net", message("three"), { deliveryId: "c", receivedAtMs: 2 });
      expect(await namesIn(dir)).toEqual([`${fileTime(0)}-a.eml`, `${fileTime(2)}-c.eml`]);
    },
  );

  it("SVC-8: a write that fails after the temporary file exists (the fsync, here) removes it; the next delivery works", async () => {
    let failNext = false;
    const store = createEmlStore(root, {
      syncHooks: {
        beforeSync(kind) {
          if (kind !== "file" || !failNext) return undefined;
          failNext = false;
          return Promise.reject(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
        },
      },
    });
    await store.deliver("bob@example.net", message("first"), { deliveryId: "a", receivedAtMs: 0 });
    expect(await store.usage("bob@example.net")).toEqual({ messages: 1, bytes: 5 });
    failNext = true;
    // Large, so the chunked write path is the one cleaning up.
    const large = new Uint8Array(3 * 1024 * 1024);
    await expect(store.deliver("bob@example.net", large, { deliveryId: "b", receivedAtMs: 1 })).rejects.toMatchObject({
      code: "EIO",
    });
    const dir = store.mailboxDir("bob@example.net");
    expect(await namesIn(dir)).toEqual([`${fileTime(0)}-a.eml`]);
    await store.deliver("bob@example.net", message("third"), { deliveryId: "c", receivedAtMs: 2 });
    expect(await namesIn(dir)).toEqual([`${fileTime(0)}-a.eml`, `${fileTime(2)}-c.eml`]);
    expect(await store.usage("bob@example.net")).toEqual({ messages: 2, bytes: 10 });
  });

  it("ERR-9: concurrent deliveries to one mailbox all land, once each, and usage counts them", async () => {
    const store = createEmlStore(root);
    await store.deliver("bob@example.net", message("seed"), { deliveryId: "seed", receivedAtMs: 0 });
    // A kept count, so the deliveries below go through its bookkeeping.
    expect(await store.usage("bob@example.net")).toEqual({ messages: 1, bytes: 4 });
    const bodies = Array.from({ length: 40 }, (_, i) => `message ${i} ${"x".repeat(i)}`);
    // The same delivery id and millisecond for all: the -2, -3… names under concurrency.
    await Promise.all(
      bodies.map((body) => store.deliver("bob@example.net", message(body), { deliveryId: "same", receivedAtMs: 7 })),
    );
    const bytes = 4 + bodies.reduce((sum, body) => sum + body.length, 0);
    expect(await store.usage("bob@example.net")).toEqual({ messages: 41, bytes });
    const files = await store.list("bob@example.net");
    expect(files).toHaveLength(41);
    expect(new Set(files.map((f) => basename(f)))).toEqual(
      new Set([
        `${fileTime(0)}-seed.eml`,
        `${fileTime(7)}-same.eml`,
        ...bodies.slice(1).map((_, i) => `${fileTime(7)}-same-${i + 2}.eml`),
      ]),
    );
    const stored = await Promise.all(files.map(async (f) => (await readFile(f)).toString()));
    expect(stored.sort()).toEqual(["seed", ...bodies].sort());
    // No temporary file left.
    expect((await namesIn(store.mailboxDir("bob@example.net"))).filter((n) => !n.endsWith(".eml"))).toEqual([]);
  });

  it("ERR-9: concurrent deliveries to many mailboxes all land, and usage stays right for each", async () => {
    const store = createEmlStore(root);
    const mailboxes = Array.from({ length: 64 }, (_, i) => `user${i}@example.net`);
    // Half of them with a kept count from a first message, half new.
    await Promise.all(
      mailboxes.slice(0, 32).map(async (m) => {
        await store.deliver(m, message("first"), { deliveryId: "first", receivedAtMs: 0 });
        await store.usage(m);
      }),
    );
    await Promise.all(
      mailboxes.flatMap((m, i) =>
        Array.from({ length: 5 }, (_, j) =>
          store.deliver(m, message(`${m} ${j}`), { deliveryId: `d${j}`, receivedAtMs: 1000 + i }),
        ),
      ),
    );
    for (const [i, m] of mailboxes.entries()) {
      const old = i < 32 ? 1 : 0;
      const bytes = (i < 32 ? 5 : 0) + [0, 1, 2, 3, 4].reduce((sum, j) => sum + `${m} ${j}`.length, 0);
      expect(await store.usage(m)).toEqual({ messages: 5 + old, bytes });
      expect(await namesIn(store.mailboxDir(m))).toHaveLength(5 + old);
    }
  });

  it("usage while deliveries run to the same mailbox: the count taken then stays right", async () => {
    const store = createEmlStore(root);
    await store.deliver("bob@example.net", message("1"), { deliveryId: "a", receivedAtMs: 0 });
    const deliveries = Array.from({ length: 20 }, (_, i) =>
      store.deliver("bob@example.net", message("22"), { deliveryId: `d${i}`, receivedAtMs: 1 }),
    );
    const during = store.usage("bob@example.net");
    const more = Array.from({ length: 20 }, (_, i) =>
      store.deliver("bob@example.net", message("333"), { deliveryId: `e${i}`, receivedAtMs: 2 }),
    );
    await Promise.all([...deliveries, ...more, during]);
    expect(await store.usage("bob@example.net")).toEqual({ messages: 41, bytes: 1 + 40 + 60 });
  });

  it("POST-9: a large message (above the synchronous write size) is stored byte for byte", async () => {
    const hooks = countingHooks();
    const store = createEmlStore(root, { syncHooks: hooks });
    const large = new Uint8Array(randomBytes(3 * 1024 * 1024 + 17));
    await store.deliver("bob@example.net", large, { deliveryId: "big", receivedAtMs: 0 });
    const files = await store.list("bob@example.net");
    expect(files).toHaveLength(1);
    expect(new Uint8Array(await readFile(files[0] as string))).toEqual(large);
    expect(await store.usage("bob@example.net")).toEqual({ messages: 1, bytes: large.byteLength });
    expect(hooks.file).toHaveLength(1);
  });

  it("durability: a delivery resolves only after a folder fsync that started after its link; links made meanwhile share the next one", async () => {
    const held: { files: string[]; release: () => void }[] = [];
    let fileSyncs = 0;
    const store = createEmlStore(root, {
      syncHooks: {
        beforeSync(kind, path) {
          if (kind === "file") {
            fileSyncs += 1;
            return undefined;
          }
          if (path !== store.mailboxDir("bob@example.net")) return undefined;
          // What this fsync covers: the links already in the folder when it is issued.
          const { promise, resolve } = Promise.withResolvers<void>();
          held.push({ files: readdirSync(path).filter((n) => n.endsWith(".eml")), release: resolve });
          return promise;
        },
      },
    });
    const dir = store.mailboxDir("bob@example.net");
    const resolved: string[] = [];
    const send = (id: string): Promise<void> =>
      store
        .deliver("bob@example.net", message(id), { deliveryId: id, receivedAtMs: 0 })
        .then(() => void resolved.push(id));
    const name = (id: string): string => `${fileTime(0)}-${id}.eml`;

    const a = send("a");
    await vi.waitFor(() => expect(held).toHaveLength(1));
    expect(held[0]?.files).toEqual([name("a")]);
    // While a's folder fsync is held, b and c are written and linked…
    const bc = [send("b"), send("c")];
    await vi.waitFor(async () => expect((await readdir(dir)).filter((n) => n.endsWith(".eml"))).toHaveLength(3));
    // …but no second fsync of the folder runs beside the first, and nobody has resolved.
    await new Promise((r) => setImmediate(r));
    expect(held).toHaveLength(1);
    expect(resolved).toEqual([]);

    held[0]?.release();
    await a;
    // The first fsync started before b's and c's links: it does not cover them.
    expect(resolved).toEqual(["a"]);
    await vi.waitFor(() => expect(held).toHaveLength(2));
    expect(held[1]?.files.sort()).toEqual([name("a"), name("b"), name("c")]);
    expect(resolved).toEqual(["a"]);
    held[1]?.release();
    await Promise.all(bc);
    expect(resolved.sort()).toEqual(["a", "b", "c"]);
    // b and c shared one folder fsync; every file had its own.
    expect(held).toHaveLength(2);
    expect(fileSyncs).toBe(3);
  });

  it("durability: a new mailbox folder's own entry is flushed too (its parent folder, once for several)", async () => {
    const hooks = countingHooks();
    const store = createEmlStore(root, { syncHooks: hooks });
    await Promise.all([
      store.deliver("bob@example.net", message("1"), { deliveryId: "a", receivedAtMs: 0 }),
      store.deliver("bob@example.net", message("2"), { deliveryId: "b", receivedAtMs: 0 }),
      store.deliver("carol@example.net", message("3"), { deliveryId: "c", receivedAtMs: 0 }),
    ]);
    expect(hooks.file).toHaveLength(3);
    // Both folders were made in the same turn of the event loop: one flush of the root for the two.
    expect(hooks.folder.filter((f) => f === root)).toHaveLength(1);
    expect(hooks.folder.filter((f) => f === store.mailboxDir("carol@example.net"))).toHaveLength(1);
    // bob's two share one folder fsync or not, depending on when their file fsyncs end.
    expect(hooks.folder.filter((f) => f === store.mailboxDir("bob@example.net")).length).toBeGreaterThanOrEqual(1);
    // Later deliveries into existing folders flush only their folder.
    await store.deliver("bob@example.net", message("4"), { deliveryId: "d", receivedAtMs: 0 });
    expect(hooks.folder.filter((f) => f === root)).toHaveLength(1);
    expect(hooks.file).toHaveLength(4);
  });

  it("fsync: false syncs nothing", async () => {
    const hooks = countingHooks();
    const store = createEmlStore(root, { fsync: false, syncHooks: hooks });
    await Promise.all([
      store.deliver("bob@example.net", message("small"), { deliveryId: "a", receivedAtMs: 0 }),
      store.deliver("carol@example.net", new Uint8Array(2 * 1024 * 1024), { deliveryId: "b", receivedAtMs: 0 }),
    ]);
    expect(await store.list("bob@example.net")).toHaveLength(1);
    expect(await store.list("carol@example.net")).toHaveLength(1);
    expect(hooks.file).toEqual([]);
    expect(hooks.folder).toEqual([]);
  });
});

describe("createEmlStore: spool (a large message written while it arrives)", () => {
  const spoolDir = (): string => join(root, ".spool");
  /** `bytes` written to `spool` in pieces of `size`, last piece first (writes may land in any order). */
  const writeBackwards = (
    spool: ReturnType<ReturnType<typeof createEmlStore>["spool"]>,
    bytes: Uint8Array,
    size: number,
  ): void => {
    const offsets: number[] = [];
    for (let at = 0; at < bytes.length; at += size) offsets.push(at);
    for (const at of offsets.reverse()) spool.write(bytes.subarray(at, at + size), at);
  };

  it("POST-9 POST-10: a spooled message, finished at its size, is stored byte for byte for each mailbox; closing removes the spool file", async () => {
    const hooks = countingHooks();
    // Flushed on the way every 64 KiB (8 MiB outside tests): the same path as a 9 MiB message,
    // at a size whose writes and flushes take no time worth counting on any disk.
    const store = createEmlStore(root, { syncHooks: hooks, spoolSyncBytes: 64 * 1024 });
    const bytes = new Uint8Array(randomBytes(9 * 64 * 1024 + 5));
    const spool = store.spool();
    // The message and what followed it in the body (the closing delimiter): the store cuts the tail off.
    const withTail = new Uint8Array(bytes.length + 9);
    withTail.set(bytes);
    withTail.set(message("\r\n--b--\r\n"), bytes.length);
    writeBackwards(spool, withTail, 16 * 1024);
    await spool.finish(bytes.length);
    await spool.deliver("bob@example.net", { deliveryId: "big", receivedAtMs: 0 });
    await spool.deliver("carol@example.net", { deliveryId: "big", receivedAtMs: 0 });
    spool.close();
    for (const mailbox of ["bob@example.net", "carol@example.net"]) {
      const files = await store.list(mailbox);
      expect(files.map((f) => basename(f))).toEqual([`${fileTime(0)}-big.eml`]);
      expect(new Uint8Array(await readFile(files[0] as string))).toEqual(bytes);
      expect(await store.usage(mailbox)).toEqual({ messages: 1, bytes: bytes.length });
    }
    await vi.waitFor(async () => expect(await namesIn(spoolDir())).toEqual([]));
    // Flushed on the way (every 64 KiB here) and once at the end; each mailbox folder (and the new folders' parent) flushed.
    expect(hooks.file.length).toBeGreaterThanOrEqual(2);
    expect(hooks.folder).toContain(store.mailboxDir("bob@example.net"));
    expect(hooks.folder).toContain(store.mailboxDir("carol@example.net"));
  });

  it("SVC-3: a spool closed without being finished leaves nothing in any mailbox, and no spool file", async () => {
    const store = createEmlStore(root);
    const spool = store.spool();
    writeBackwards(spool, new Uint8Array(randomBytes(3 * 1024 * 1024)), 1024 * 1024);
    spool.close();
    await vi.waitFor(async () => expect(await namesIn(spoolDir())).toEqual([]));
    expect(await readdir(root)).toEqual([".spool"]);
  });

  it("durability: finish resolves only after the spooled file's fdatasync; a failed one rejects finish, and deliver refuses an unfinished spool", async () => {
    const store = createEmlStore(root, {
      syncHooks: { beforeSync: (kind) => (kind === "file" ? Promise.reject(new Error("EIO")) : undefined) },
    });
    const spool = store.spool();
    spool.write(message("Subject: x\r\n\r\nbody"), 0);
    // The spool file is named.
    await expect(spool.finish(18)).rejects.toThrow(
      new RegExp(`^mail store ${join(root, ".spool")}/\\.[0-9a-f]{16}\\.tmp: EIO$`),
    );
    await expect(spool.deliver("bob@example.net", { deliveryId: "x", receivedAtMs: 0 })).rejects.toThrow(
      "not finished",
    );
    spool.close();
    expect(await store.list("bob@example.net")).toEqual([]);
  });

  it("a spool holding fewer bytes than the message's size refuses to finish", async () => {
    const store = createEmlStore(root, { fsync: false });
    const spool = store.spool();
    spool.write(message("short"), 0);
    await expect(spool.finish(100)).rejects.toThrow("fewer than");
    spool.close();
  });

  it("read gives back the bytes written, once the writes queued before it are done; fewer bytes than asked for → rejects", async () => {
    const store = createEmlStore(root, { fsync: false });
    const spool = store.spool();
    const bytes = new Uint8Array(randomBytes(3 * 1024 * 1024 + 11));
    writeBackwards(spool, bytes, 256 * 1024);
    const back = new Uint8Array(bytes.length);
    await spool.read?.(back);
    expect(Buffer.compare(back, bytes)).toBe(0);
    await expect(spool.read?.(new Uint8Array(bytes.length + 1))).rejects.toThrow("fewer than");
    // Still a spool like any other: finished and stored after being read.
    await spool.finish(bytes.length);
    await spool.deliver("bob@example.net", { deliveryId: "read-back", receivedAtMs: 0 });
    spool.close();
    const [file] = await store.list("bob@example.net");
    expect(Buffer.compare(await readFile(file ?? ""), bytes)).toBe(0);
    await vi.waitFor(async () => expect(await namesIn(spoolDir())).toEqual([]));
  });
});

describe("holds (whether a delivery cut off by a crash stored its message)", () => {
  it("POST-12: a mailbox holds a delivery's message whatever its time, and only that delivery's", async () => {
    const root = await mkdtemp(join(tmpdir(), "mailscope-holds-"));
    try {
      const store = createEmlStore(root, { fsync: false });
      const message = new TextEncoder().encode("Subject: x\r\n\r\nx\r\n");
      await store.deliver("bob@b.example", message, { deliveryId: "a.example/k.1@1000", receivedAtMs: 1000 });
      await store.deliver("bob@b.example", message, { deliveryId: "a.example/k.1@1000", receivedAtMs: 1000 });
      expect(await store.holds("bob@b.example", "a.example/k.1@1000")).toBe(true);
      expect(await store.holds("bob@b.example", "a.example/k.1@100")).toBe(false);
      expect(await store.holds("bob@b.example", "a.example/kx1@1000")).toBe(false);
      expect(await store.holds("carol@b.example", "a.example/k.1@1000")).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
