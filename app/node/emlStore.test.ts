import { mkdtemp, readFile, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmlStore, fileTime, mailboxFolderName } from "./emlStore.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mailscope-eml-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const message = (text: string): Uint8Array => new TextEncoder().encode(text);

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
});
