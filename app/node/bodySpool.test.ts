/**
 * Large bodies are spooled rather than buffered before authentication: in
 * the receiver with the .eml store's spool and the Node
 * crypto provider (as `mailscope serve` runs them). A large body whose
 * signature verifies from the headers is written to the spool while it is
 * hashed; its reader keeps only the envelope part and the last MiB gathered
 * for a write. A digest that does not match: 401, the spool never read back
 * and deleted. A match: read back once, stored from the spool byte for byte.
 * app/cli/serveSpool.test.ts does the same over loopback HTTPS.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { MailSpool, MailStore } from "../ports.ts";
import type { DigestAlgorithm } from "../protocol/digest.ts";
import { parseMultipartBody } from "../protocol/multipart.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { createReceiverHarness, readProblem, textMessage } from "../receiver/testing.ts";
import { createEmlStore } from "./emlStore.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";

const MiB = 1024 * 1024;
const BOUNDARY = "mailscope-test-boundary-0f3c9a";

let restore: () => void;
let root: string;
beforeAll(() => {
  restore = useCryptoProvider(nodeCryptoProvider());
});
afterAll(() => restore());
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mailscope-body-spool-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** What was done with one spool of the store. */
interface Seen {
  written: number;
  writes: number;
  reads: number;
  closed: boolean;
}

/** The .eml store under `root`, its spools watched. */
function watchedStore(): { store: MailStore & { list(mailbox: string): Promise<string[]> }; spools: Seen[] } {
  const eml = createEmlStore(root, { fsync: false });
  const spools: Seen[] = [];
  const store = {
    deliver: eml.deliver.bind(eml),
    usage: eml.usage.bind(eml),
    list: eml.list.bind(eml),
    spool(): MailSpool {
      const inner = eml.spool();
      const seen: Seen = { written: 0, writes: 0, reads: 0, closed: false };
      spools.push(seen);
      return {
        write(bytes, position) {
          seen.writes += 1;
          seen.written += bytes.length;
          inner.write(bytes, position);
        },
        read(target) {
          seen.reads += 1;
          return inner.read?.(target) ?? Promise.reject(new Error("no read"));
        },
        finish: (size) => inner.finish(size),
        deliver: (mailbox, meta) => inner.deliver(mailbox, meta),
        close() {
          seen.closed = true;
          inner.close();
        },
      };
    },
  };
  return { store, spools };
}

/** A message of `size` bytes: headers, then lines of text. */
function largeMessage(size: number): Uint8Array {
  const head = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "" });
  const message = new Uint8Array(size);
  message.set(head);
  for (let i = head.length; i < size; i++) message[i] = i % 72 === 71 ? 10 : 0x41 + (i % 26);
  return message;
}

/** `request` with `body` (default its own) arriving in chunks of 64 KiB, its Content-Length declared. */
async function arriving(request: Request, body?: Uint8Array): Promise<Request> {
  const bytes = body ?? new Uint8Array(await request.arrayBuffer());
  const headers = new Headers(request.headers);
  headers.set("content-length", String(bytes.length));
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 64 * 1024));
      at += 64 * 1024;
    },
  });
  return new Request(request.url, { method: "POST", headers, body: stream, duplex: "half" } as RequestInit);
}

const spoolFiles = (): Promise<string[]> => readdir(join(root, ".spool")).catch(() => []);

describe("a large body is held in the spool, not in memory, until its digest is checked", () => {
  // Whatever algorithms the Content-Digest has (the Node provider hashes sha-256 and sha-512 in pieces).
  const digestSets: (readonly DigestAlgorithm[])[] = [["sha-256"], ["sha-512"], ["sha-512", "sha-256"]];

  it.each(digestSets.map((algorithms) => [algorithms.join(" and "), algorithms] as const))(
    "AUTH-5 POST-5: a valid signature (Content-Digest %s) replayed with another 3 MiB body → 401; the body went to the spool, was never read back, and no spool file is left",
    async (_name, digestAlgorithms) => {
      const { store, spools } = watchedStore();
      const h = await createReceiverHarness((c) => c, { mailStore: store });
      const request = await h.request({ message: largeMessage(3 * MiB), digestAlgorithms });
      const body = new Uint8Array(await request.clone().arrayBuffer());
      body[body.length - 100] = 0x79;
      const answer = await readProblem(await h.receiver(await arriving(request, body)));
      expect([answer.status, answer.identifier]).toEqual([401, "invalid_signature"]);
      // The strongest algorithm is checked first (RFC 9530's preference, app/protocol/digest.ts).
      expect(answer.json["detail"]).toMatch(new RegExp(`^digest: ${digestAlgorithms[0]} digest does not match`));
      const parsed = parseMultipartBody(body, `multipart/mixed; boundary="${BOUNDARY}"`);
      if (!parsed.ok) throw new Error("not a delivery body");
      const start = parsed.value.message.byteOffset;
      expect(start).toBeLessThan(4096);
      // Every byte from the message's start on went to the spool, in writes of 1 MiB, but the last MiB
      // gathered for a write (never written: the digest failed first).
      expect(spools).toHaveLength(1);
      expect(spools[0]?.written).toBe(Math.floor((body.length - start) / MiB) * MiB);
      expect(spools[0]?.writes).toBe(Math.floor((body.length - start) / MiB));
      expect(spools[0]?.reads).toBe(0);
      expect(spools[0]?.closed).toBe(true);
      expect(await store.list("bob@b.example")).toEqual([]);
      await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
    },
  );

  it.each(digestSets.map((algorithms) => [algorithms.join(" and "), algorithms] as const))(
    "POST-9 POST-10: a matching 3 MiB body (Content-Digest %s) is read back once and stored from the spool, byte for byte; no spool file is left",
    async (_name, digestAlgorithms) => {
      const { store, spools } = watchedStore();
      const h = await createReceiverHarness((c) => c, { mailStore: store });
      const message = largeMessage(3 * MiB + 5);
      const to = ["bob@b.example", "carol@b.example"];
      expect((await h.receiver(await arriving(await h.request({ to, message, digestAlgorithms })))).status).toBe(200);
      expect(spools).toHaveLength(1);
      expect(spools[0]?.reads).toBe(1);
      for (const mailbox of to) {
        const files = await store.list(mailbox);
        expect(files).toHaveLength(1);
        expect(new Uint8Array(await readFile(files[0] ?? ""))).toEqual(message);
      }
      await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
    },
  );
});
