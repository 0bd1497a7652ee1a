import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOutbox, type OutboxEnvelope } from "./outbox.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mailscope-outbox-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

const envelope: OutboxEnvelope = {
  from: null,
  to: ["alice@a.example"],
  submittedAt: "2026-11-21T11:03:51.368Z",
  messageId: "dsn.1@b.example",
  about: { deliveryId: "a.example/k1@1795259031369", recipients: [{ mailbox: "bob@b.example", status: "5.2.1" }] },
};

describe("the outbox of serve's outbound side (G17, ENV-3)", () => {
  it("G17: an entry is the message byte for byte and its JSON envelope, flushed file by file and folder by folder", async () => {
    const synced: string[] = [];
    const dir = join(root, "state", "outbox");
    const outbox = createOutbox(dir, { onSync: (kind, path) => synced.push(`${kind} ${path}`) });
    const entry = await outbox.add(envelope, bytes("DSN\r\n"));
    expect(entry.id).toMatch(/^20261121T110351\.368Z-[0-9a-f]{12}$/);
    expect((await readdir(dir)).sort()).toEqual([`${entry.id}.eml`, `${entry.id}.json`]);
    expect(await readFile(join(dir, `${entry.id}.eml`), "utf8")).toBe("DSN\r\n");
    expect(JSON.parse(await readFile(entry.file, "utf8"))).toEqual(envelope);
    // The new folder in its parents, then each file and the folder after each rename: the message before the envelope.
    expect(synced.filter((s) => s.startsWith("file")).map((s) => /\.(eml|json)\./.exec(s)?.[1])).toEqual([
      "eml",
      "json",
    ]);
    expect(synced).toContain(`folder ${join(root, "state")}`);
    expect(synced).toContain(`folder ${root}`);
    expect(synced.filter((s) => s === `folder ${dir}`)).toHaveLength(2);
  });

  it("G17: load gives back every entry, oldest first; remove takes an entry away (twice is no error)", async () => {
    const outbox = createOutbox(root, { fsync: false });
    const later = await outbox.add({ ...envelope, submittedAt: "2026-11-21T12:00:00.000Z" }, bytes("later"));
    const first = await outbox.add(envelope, bytes("first"));
    const loaded = await createOutbox(root).load();
    expect(loaded.setAside).toEqual([]);
    expect(loaded.entries.map((e) => [e.id, new TextDecoder().decode(e.message)])).toEqual([
      [first.id, "first"],
      [later.id, "later"],
    ]);
    expect(loaded.entries[0]?.envelope).toEqual(envelope);
    await outbox.remove(first.id);
    await outbox.remove(first.id);
    expect((await outbox.load()).entries.map((e) => e.id)).toEqual([later.id]);
    expect(await readdir(root)).toHaveLength(2);
  });

  it("an outbox that cannot be written names itself and its folder, with the system's code", async () => {
    // A file where the folder should be.
    await writeFile(join(root, "outbox"), "in the way");
    const outbox = createOutbox(join(root, "outbox", "dsn"));
    await expect(outbox.add(envelope, bytes("m"))).rejects.toMatchObject({
      store: "outbox",
      path: join(root, "outbox", "dsn"),
      code: "ENOTDIR",
      message: expect.stringMatching(new RegExp(`^outbox ${join(root, "outbox", "dsn")}: ENOTDIR`)),
    });
  });

  it("a missing folder is an empty outbox", async () => {
    expect(await createOutbox(join(root, "none")).load()).toEqual({ entries: [], setAside: [] });
  });

  it("G45: an envelope that is not JSON, one that lacks a field, and a message without its envelope are moved aside as .bad, never deleted", async () => {
    const outbox = createOutbox(root);
    const good = await outbox.add(envelope, bytes("good"));
    await writeFile(join(root, "20260101T000000.000Z-aaaa.json"), "{ not json");
    await writeFile(join(root, "20260101T000000.000Z-aaaa.eml"), "kept");
    await writeFile(join(root, "20260101T000000.000Z-bbbb.json"), JSON.stringify({ ...envelope, to: [] }));
    await writeFile(join(root, "20260101T000000.000Z-bbbb.eml"), "kept too");
    await writeFile(join(root, "20260101T000000.000Z-cccc.eml"), "orphan");
    // A .bad of the same name already there is not overwritten.
    await writeFile(join(root, "20260101T000000.000Z-cccc.eml.bad"), "older");
    await writeFile(join(root, ".20260101T000000.000Z-dddd.eml.1234.tmp"), "half");

    const loaded = await outbox.load();
    expect(loaded.entries.map((e) => e.id)).toEqual([good.id]);
    expect(loaded.setAside.map((s) => [s.file.slice(root.length + 1), s.movedTo.slice(root.length + 1)])).toEqual([
      ["20260101T000000.000Z-aaaa.json", "20260101T000000.000Z-aaaa.json.bad"],
      ["20260101T000000.000Z-aaaa.eml", "20260101T000000.000Z-aaaa.eml.bad"],
      ["20260101T000000.000Z-bbbb.json", "20260101T000000.000Z-bbbb.json.bad"],
      ["20260101T000000.000Z-bbbb.eml", "20260101T000000.000Z-bbbb.eml.bad"],
      ["20260101T000000.000Z-cccc.eml", "20260101T000000.000Z-cccc.eml.2.bad"],
    ]);
    expect(loaded.setAside[0]?.reason).toMatch(/^the envelope is not JSON/);
    expect(loaded.setAside[2]?.reason).toMatch(/^the envelope is not one: to: /);
    expect(loaded.setAside[4]?.reason).toMatch(/^a message without its envelope/);
    expect(await readFile(join(root, "20260101T000000.000Z-aaaa.eml.bad"), "utf8")).toBe("kept");
    expect(await readFile(join(root, "20260101T000000.000Z-cccc.eml.bad"), "utf8")).toBe("older");
    expect(await readFile(join(root, "20260101T000000.000Z-cccc.eml.2.bad"), "utf8")).toBe("orphan");
    // Nothing is set aside twice: a second load sees only the good entry.
    expect(await outbox.load()).toMatchObject({ entries: [{ id: good.id }], setAside: [] });
  });
});
