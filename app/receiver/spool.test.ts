import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MailSpool, MailStore } from "../ports.ts";
import { buildMultipartBody, parseMultipartBody } from "../protocol/multipart.ts";
import { createMemoryMailStore, type MemoryMailStore } from "./memoryMailStore.ts";
import { createBodySpooler, SPOOL_MIN_BYTES } from "./spool.ts";
import { createReceiverHarness, readProblem, textMessage } from "./testing.ts";

const BOUNDARY = "mailscope-test-boundary-0f3c9a";

/** What a fake spool was asked to do. */
interface SpoolRecord {
  bytes: Uint8Array;
  writes: number;
  /** How often the spool was read back (only a spool made `readable`). */
  reads: number;
  finishedAt?: number;
  closed: boolean;
  delivered: string[];
}

/** A MailSpool that keeps the bytes in memory and records every call. */
function recordingSpool(
  onDeliver: (mailbox: string, bytes: Uint8Array, meta: { deliveryId: string; receivedAtMs: number }) => Promise<void>,
  fail: { finish?: boolean; deliver?: boolean; readable?: boolean } = {},
): { spool: MailSpool; record: SpoolRecord } {
  const record: SpoolRecord = { bytes: new Uint8Array(0), writes: 0, reads: 0, closed: false, delivered: [] };
  const spool: MailSpool = {
    write(bytes, position) {
      record.writes += 1;
      if (position + bytes.length > record.bytes.length) {
        const grown = new Uint8Array(position + bytes.length);
        grown.set(record.bytes);
        record.bytes = grown;
      }
      record.bytes.set(bytes, position);
    },
    finish(size) {
      if (fail.finish === true) return Promise.reject(new Error("disk full"));
      if (record.bytes.length < size) return Promise.reject(new Error("short"));
      record.finishedAt = size;
      return Promise.resolve();
    },
    async deliver(mailbox, meta) {
      if (fail.deliver === true) throw new Error("link failed");
      if (record.finishedAt === undefined) throw new Error("not finished");
      await onDeliver(mailbox, record.bytes.slice(0, record.finishedAt), meta);
      record.delivered.push(mailbox);
    },
    close() {
      record.closed = true;
    },
    ...(fail.readable === true && {
      read(target: Uint8Array) {
        record.reads += 1;
        if (record.bytes.length < target.length) return Promise.reject(new Error("short"));
        target.set(record.bytes.subarray(0, target.length));
        return Promise.resolve();
      },
    }),
  };
  return { spool, record };
}

/** A memory store that also spools (as the .eml store does), keeping a record of each spool. */
function spoolingStore(fail: { finish?: boolean; deliver?: boolean; readable?: boolean } = {}): {
  store: MailStore & Pick<MemoryMailStore, "all" | "messages">;
  spools: SpoolRecord[];
} {
  const memory = createMemoryMailStore();
  const spools: SpoolRecord[] = [];
  const store = {
    deliver: memory.deliver.bind(memory),
    usage: memory.usage.bind(memory),
    all: memory.all.bind(memory),
    messages: memory.messages.bind(memory),
    spool(): MailSpool {
      const { spool, record } = recordingSpool((mailbox, bytes, meta) => memory.deliver(mailbox, bytes, meta), fail);
      spools.push(record);
      return spool;
    },
  };
  return { store, spools };
}

/** `body` as a stream of `size`-byte chunks. */
function chunked(body: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.length) {
        controller.close();
        return;
      }
      controller.enqueue(body.slice(at, at + size));
      at += size;
    },
  });
}

/** `request` again, with its Content-Length declared and its body arriving in chunks (as `serve` hands it over). */
async function asArriving(request: Request, chunk = 64 * 1024, declared?: number): Promise<Request> {
  const body = new Uint8Array(await request.arrayBuffer());
  const headers = new Headers(request.headers);
  headers.set("content-length", String(declared ?? body.length));
  return new Request(request.url, {
    method: "POST",
    headers,
    body: chunked(body, chunk),
    duplex: "half",
  } as RequestInit);
}

/** A message of about `size` bytes: headers, then lines of text. */
function largeMessage(size: number, seed = 0): Uint8Array {
  const head = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "" });
  const message = new Uint8Array(size);
  message.set(head);
  for (let i = head.length; i < size; i++) message[i] = i % 72 === 71 ? 10 : 0x41 + ((i + seed) % 26);
  return message;
}

/** Feeds `body` to a spooler in pieces of the given sizes, as the body reader would. */
function feed(spooler: ReturnType<typeof createBodySpooler>, body: Uint8Array, sizes: readonly number[]): void {
  let at = 0;
  let i = 0;
  while (at < body.length) {
    const size = Math.max(1, sizes[i++ % Math.max(1, sizes.length)] ?? 1);
    spooler.onBytes(body.subarray(at, at + size), at);
    at += size;
  }
}

describe("the body spooler (a large message written while it arrives)", () => {
  it("POST-2 POST-9: finds where the message part's content starts, across any chunking, and spools exactly the message", async () => {
    const message = largeMessage(300_000);
    const { body, contentType } = buildMultipartBody(
      { from: "alice@a.example", to: ["bob@b.example"] },
      message,
      BOUNDARY,
    );
    const parsed = parseMultipartBody(body, contentType);
    if (!parsed.ok) throw new Error("fixture");
    for (const sizes of [[1], [7, 13], [4096], [body.length]]) {
      const stored: Uint8Array[] = [];
      const { spool, record } = recordingSpool((_m, bytes) => {
        stored.push(bytes);
        return Promise.resolve();
      });
      const spooler = createBodySpooler(BOUNDARY, spool);
      feed(spooler, body, sizes);
      const step = spooler.storeFor(body, parsed.value.message);
      expect(step).toBeDefined();
      await expect(step?.("bob@b.example", { deliveryId: "d", receivedAtMs: 0 })).resolves.toBe(true);
      expect(stored[0]).toEqual(message);
      spooler.close();
      expect(record.closed).toBe(true);
    }
  });

  it("G9: a preamble and transport padding after the delimiter still spool the message", async () => {
    const message = largeMessage(5000);
    const envelope = new TextEncoder().encode('{"from":"alice@a.example","to":["bob@b.example"]}');
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    const body = new Uint8Array([
      ...text(`a preamble\r\n--${BOUNDARY}\r\nContent-Type: application/json\r\n\r\n`),
      ...envelope,
      ...text(`\r\n--${BOUNDARY}  \t\r\nContent-Type: message/rfc822\r\n\r\n`),
      ...message,
      ...text(`\r\n--${BOUNDARY}--\r\n`),
    ]);
    const parsed = parseMultipartBody(body, `multipart/mixed; boundary=${BOUNDARY}`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
    expect(parsed.value.message).toEqual(message);
    const stored: Uint8Array[] = [];
    const { spool } = recordingSpool((_m, bytes) => {
      stored.push(bytes);
      return Promise.resolve();
    });
    const spooler = createBodySpooler(BOUNDARY, spool);
    feed(spooler, body, [3]);
    await spooler.storeFor(body, parsed.value.message)?.("bob@b.example", { deliveryId: "d", receivedAtMs: 0 });
    expect(stored).toEqual([message]);
  });

  it("a message parsed elsewhere than where the spool started (or a copy of it) is not taken from the spool", () => {
    const message = largeMessage(5000);
    const { body, contentType } = buildMultipartBody({ from: null, to: ["bob@b.example"] }, message, BOUNDARY);
    const parsed = parseMultipartBody(body, contentType);
    if (!parsed.ok) throw new Error("fixture");
    const spooler = createBodySpooler(BOUNDARY, recordingSpool(() => Promise.resolve()).spool);
    feed(spooler, body, [1000]);
    expect(spooler.storeFor(body, parsed.value.message.slice())).toBeUndefined();
    expect(spooler.storeFor(body, body.subarray(10, 20))).toBeUndefined();
  });

  it("a body whose message does not start within its first 256 KiB is not spooled at all", () => {
    const { spool, record } = recordingSpool(() => Promise.resolve());
    const spooler = createBodySpooler(BOUNDARY, spool);
    const body = new Uint8Array(300 * 1024).fill(0x61);
    feed(spooler, body, [64 * 1024]);
    expect(record.writes).toBe(0);
    expect(spooler.storeFor(body, body.subarray(1))).toBeUndefined();
  });

  it("contiguous pieces of one buffer are handed on as few writes of at least 1 MiB", () => {
    const message = largeMessage(4 * 1024 * 1024);
    const { body } = buildMultipartBody({ from: "alice@a.example", to: ["bob@b.example"] }, message, BOUNDARY);
    const { spool, record } = recordingSpool(() => Promise.resolve());
    const spooler = createBodySpooler(BOUNDARY, spool);
    feed(spooler, body, [16 * 1024]);
    expect(record.writes).toBeLessThanOrEqual(5);
  });

  it("property, POST-9: whatever the body and its chunking, a spool is used only when it holds exactly the parsed message", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 0, maxLength: 3000 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (message, sizes, preamble) => {
          const built = buildMultipartBody({ from: "alice@a.example", to: ["bob@b.example"] }, message, BOUNDARY);
          const body = preamble
            ? new Uint8Array([...new TextEncoder().encode("preamble\r\n"), ...built.body])
            : built.body;
          const parsed = parseMultipartBody(body, built.contentType);
          if (!parsed.ok) return;
          const stored: Uint8Array[] = [];
          const { spool } = recordingSpool((_m, bytes) => {
            stored.push(bytes);
            return Promise.resolve();
          });
          const spooler = createBodySpooler(BOUNDARY, spool);
          feed(spooler, body, sizes);
          const step = spooler.storeFor(body, parsed.value.message);
          if (step === undefined) return;
          expect(await step("bob@b.example", { deliveryId: "d", receivedAtMs: 0 })).toBe(true);
          expect(stored[0]).toEqual(parsed.value.message);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the receiver with a spooling store (large bodies)", () => {
  const SIZE = SPOOL_MIN_BYTES + 200_000;

  it("POST-9 POST-10: a large delivery to two mailboxes is stored from the spool, byte for byte, and the spool let go", async () => {
    const { store, spools } = spoolingStore();
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const message = largeMessage(SIZE);
    const to = ["bob@b.example", "carol@b.example"];
    const response = await h.receiver(await asArriving(await h.request({ to, message })));
    expect(response.status).toBe(200);
    expect(spools).toHaveLength(1);
    expect(spools[0]?.delivered).toEqual(to);
    expect(spools[0]?.closed).toBe(true);
    for (const mailbox of to) expect(store.messages(mailbox).map((m) => m.message)).toEqual([message]);
  });

  it("SVC-3 G10: a large delivery refused (a bad signature → 401) stores nothing and starts no spool: its body is never read", async () => {
    const { store, spools } = spoolingStore();
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const request = await h.request({ message: largeMessage(SIZE), headers: { signature: "sig1=:AAAA:" } });
    const answer = await readProblem(await h.receiver(await asArriving(request)));
    expect(answer.status).toBe(401);
    expect(store.all()).toHaveLength(0);
    expect(spools).toHaveLength(0);
  });

  it("ERR-3: a large delivery whose only recipient does not exist stores nothing and lets the spool go", async () => {
    const { store, spools } = spoolingStore();
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const response = await h.receiver(
      await asArriving(await h.request({ to: ["nobody@b.example"], message: largeMessage(SIZE) })),
    );
    expect(response.status).toBe(200);
    expect(store.all()).toHaveLength(0);
    expect(spools[0]?.delivered).toEqual([]);
    expect(spools[0]?.closed).toBe(true);
  });

  it("SVC-8: a spool that cannot be finished (the disk, say) → the message is stored from memory instead, still accepted", async () => {
    const { store, spools } = spoolingStore({ finish: true });
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const message = largeMessage(SIZE);
    const response = await h.receiver(await asArriving(await h.request({ message })));
    expect(response.status).toBe(200);
    expect(spools[0]?.delivered).toEqual([]);
    expect(store.messages("bob@b.example").map((m) => m.message)).toEqual([message]);
  });

  it("SVC-8: a spooled message the store then fails to file → that recipient is deferred with temporary_failure", async () => {
    const { store } = spoolingStore({ deliver: true });
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const response = await h.receiver(await asArriving(await h.request({ message: largeMessage(SIZE) })));
    const json = (await response.json()) as { results: { status: string; problem?: { type: string } }[] };
    expect(json.results[0]?.status).toBe("deferred");
    expect(json.results[0]?.problem?.type).toMatch(/temporary_failure$/);
    expect(store.all()).toHaveLength(0);
  });

  it("ERR-12 LIM-2: a Content-Length that understates a body going past the limit → 413, nothing stored, the spool let go", async () => {
    const { store, spools } = spoolingStore();
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    const request = await h.request({ message: largeMessage(26214400 + 10) });
    const answer = await readProblem(await h.receiver(await asArriving(request, 256 * 1024, SIZE)));
    expect([answer.status, answer.identifier]).toEqual([413, "message_too_large"]);
    expect(store.all()).toHaveLength(0);
    expect(spools[0]?.closed).toBe(true);
  });

  it("a small delivery does not spool at all", async () => {
    const { store, spools } = spoolingStore();
    const h = await createReceiverHarness((c) => c, { mailStore: store });
    expect((await h.receiver(await asArriving(await h.request()))).status).toBe(200);
    expect(spools).toHaveLength(0);
    expect(store.all()).toHaveLength(1);
  });
});

describe("a spooler that holds the body (app/node/bodySpool.test.ts runs it in the receiver)", () => {
  it("property, POST-9: whatever the chunking, and with no message start in the first 256 KiB, the spooler gives the body back byte for byte", async () => {
    const request = await (await createReceiverHarness()).request({ message: largeMessage(300_000) });
    const withPart = new Uint8Array(await request.arrayBuffer());
    const noStart = new Uint8Array(300_000).fill(0x61);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(withPart, noStart),
        fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 8 }),
        async (body, sizes) => {
          const { spool, record } = recordingSpool(() => Promise.resolve(), { readable: true });
          const spooler = createBodySpooler(BOUNDARY, spool, { holdsBody: true });
          let at = 0;
          let i = 0;
          while (at < body.length) {
            const size = sizes[i++ % sizes.length] ?? 1;
            // Each chunk its own buffer, as the reader hands them over when it keeps nothing.
            spooler.onBytes(body.slice(at, at + size), at);
            at += size;
          }
          expect(sameBytes(await spooler.body(body.length), body)).toBe(true);
          expect(record.reads).toBe(1);
          spooler.close();
        },
      ),
      { numRuns: 10 },
    );
  });
});

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
