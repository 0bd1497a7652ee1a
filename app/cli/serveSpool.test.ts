/**
 * Large bodies are spooled rather than buffered before authentication. Over
 * loopback HTTPS, with the Node crypto provider (as
 * `mailscope` runs): a large body whose signature verifies from the headers
 * goes to a spool file under `<maildir>/.spool/` while it is hashed, not to
 * memory; a digest that does not match deletes the spool (401, nothing
 * stored), a match stores the spooled message byte for byte. Nothing here
 * depends on speed: the spool's removal is awaited, not timed.
 */
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { nodeCryptoProvider } from "../node/nodeCrypto.ts";
import type { DigestAlgorithm } from "../protocol/digest.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import type { TestSender } from "../receiver/testing.ts";
import { startServe, type RunningServe } from "./serve.ts";
import {
  addressOf,
  createServeFolder,
  headersOf,
  httpsSend,
  largeMessage,
  piecesOf,
  serveOptions,
  signedForServe,
  type HttpsAnswer,
} from "./testing.ts";

const MiB = 1024 * 1024;

let dir: string;
let sender: TestSender;
let running: RunningServe;
let restore: () => void;

beforeAll(async () => {
  restore = useCryptoProvider(nodeCryptoProvider());
  let config: string;
  ({ dir, config, sender } = await createServeFolder("mailscope-serve-spool-", ["bob@b.example"]));
  running = await startServe(serveOptions(config, dir), { out: () => {}, err: () => {} });
});

afterAll(async () => {
  await running?.close();
  restore?.();
  await rm(dir, { recursive: true, force: true });
});

/**
 * POSTs `body` with `headers`; `chunked`: sent chunked (no Content-Length). `pause`: the bytes after
 * the first `at` are sent once `until` has settled.
 */
function post(
  headers: Record<string, string>,
  body: Uint8Array,
  options: { chunked?: boolean; pause?: { at: number; until: () => Promise<unknown> } } = {},
): Promise<HttpsAnswer> {
  const { chunked = false, pause } = options;
  async function* paused(at: number, until: () => Promise<unknown>): AsyncGenerator<Uint8Array> {
    yield* piecesOf(body.subarray(0, at));
    await until();
    yield* piecesOf(body.subarray(at));
  }
  return httpsSend(addressOf(running), {
    method: "POST",
    path: "/v1/messages",
    headers: {
      ...headers,
      ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.byteLength) }),
    },
    body: pause !== undefined ? paused(pause.at, pause.until) : chunked ? piecesOf(body) : body,
  });
}

/** A signed delivery of `message`: its headers and its body's bytes. */
async function signed(
  message: Uint8Array,
  key: string,
  digestAlgorithms?: readonly DigestAlgorithm[],
): Promise<{ headers: Record<string, string>; body: Uint8Array }> {
  const request = await signedForServe(sender, running.server.port, {
    message,
    idempotencyKey: key,
    ...(digestAlgorithms !== undefined && { digestAlgorithms }),
  });
  return { headers: headersOf(request), body: new Uint8Array(await request.arrayBuffer()) };
}

const spoolDir = (): string => join(dir, "mail", ".spool");
const spoolFiles = async (): Promise<string[]> => readdir(spoolDir()).catch(() => []);
/** The bytes in the one spool file there is (0 when there is none). */
const spooledBytes = async (): Promise<number> => {
  const files = await spoolFiles();
  return files.length === 1 ? (await stat(join(spoolDir(), files[0] ?? ""))).size : 0;
};

describe("a large body is spooled, not buffered, before its digest is checked", () => {
  it("AUTH-5 POST-5: a valid signature replayed with another 4 MiB body → 401 invalid_signature (digest), nothing stored, no spool file left", async () => {
    const { headers, body } = await signed(largeMessage(4 * 1024 * 1024), "spool-replay");
    const other = body.slice();
    other[other.length - 100] = 0x79;
    const before = (await running.store.list("bob@b.example")).length;
    const answer = await post(headers, other);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body.toString())).toMatchObject({
      type: "https://b.example/problems/invalid_signature",
      detail: expect.stringMatching(/^digest: sha-256 digest does not match the body/),
    });
    expect(await running.store.list("bob@b.example")).toHaveLength(before);
    await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
  });

  it("POST-9 POST-10: a matching 4 MiB body is stored from the spool, byte for byte; the spool is emptied", async () => {
    const message = largeMessage(4 * 1024 * 1024);
    const { headers, body } = await signed(message, "spool-match");
    const before = (await running.store.list("bob@b.example")).length;
    expect((await post(headers, body)).status).toBe(200);
    const files = await running.store.list("bob@b.example");
    expect(files).toHaveLength(before + 1);
    const stored = await Promise.all(files.map((f) => readFile(f)));
    expect(stored.filter((bytes) => Buffer.compare(bytes, Buffer.from(message)) === 0)).toHaveLength(1);
    await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
  });

  it("POST-9, ERR-12: a chunked body (no Content-Length) is spooled too: a mismatch is 401 with no spool left, a match is stored byte for byte", async () => {
    const message = largeMessage(2 * 1024 * 1024 + 17);
    const { headers, body } = await signed(message, "spool-chunked");
    const other = body.slice();
    other[other.length - 100] = 0x79;
    expect((await post(headers, other, { chunked: true })).status).toBe(401);
    await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
    const before = (await running.store.list("bob@b.example")).length;
    expect((await post(headers, body, { chunked: true })).status).toBe(200);
    const files = await running.store.list("bob@b.example");
    expect(files).toHaveLength(before + 1);
    const stored = await Promise.all(files.map((f) => readFile(f)));
    expect(stored.filter((bytes) => Buffer.compare(bytes, Buffer.from(message)) === 0)).toHaveLength(1);
    await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
  });

  it.each([
    ["with its Content-Length", false],
    ["chunked", true],
  ] as const)(
    "AUTH-5 POST-5: a valid signature whose Content-Digest is sha-512 alone, replayed with another 4 MiB body %s: the body goes to the spool in whole MiB, not to memory, and is refused 401 (digest) unread; nothing stored, no spool file left",
    async (_how, chunked) => {
      const { headers, body } = await signed(largeMessage(4 * 1024 * 1024), `spool-sha512-${String(chunked)}`, [
        "sha-512",
      ]);
      expect(headers["content-digest"]).toMatch(/^sha-512=:[^,]+:$/);
      const other = body.slice();
      other[other.length - 100] = 0x79;
      const before = (await running.store.list("bob@b.example")).length;
      // Halfway, the body's bytes so far are in the spool file in writes of 1 MiB (a body held in memory
      // is spooled, if at all, as its chunks arrive: see app/receiver/spool.ts) before the rest is sent.
      let halfway = -1;
      const answer = await post(headers, other, {
        chunked,
        pause: {
          at: 2 * MiB + 12_345,
          until: () =>
            vi.waitFor(
              async () => {
                halfway = await spooledBytes();
                expect(halfway).toBeGreaterThanOrEqual(2 * MiB);
              },
              { timeout: 20_000 },
            ),
        },
      });
      expect(halfway).toBe(2 * MiB);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body.toString())).toMatchObject({
        type: "https://b.example/problems/invalid_signature",
        detail: expect.stringMatching(/^digest: sha-512 digest does not match the body/),
      });
      expect(await running.store.list("bob@b.example")).toHaveLength(before);
      await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
    },
  );
});
