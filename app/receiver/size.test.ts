import { describe, expect, it } from "vitest";
import { buildMultipartBody } from "../protocol/multipart.ts";
import { readBodyWithLimit } from "./body.ts";
import { createReceiverHarness, readProblem, textMessage } from "./testing.ts";

const LIMIT = 26214400;
const CHUNK = 64 * 1024;

/** A body stream that makes `chunks` chunks of CHUNK bytes on demand, counting how many were pulled. */
function countingStream(chunks: number): {
  stream: ReadableStream<Uint8Array>;
  pulls: () => number;
  cancelled: () => boolean;
} {
  let pulls = 0;
  let cancelled = false;
  const chunk = new Uint8Array(CHUNK).fill(0x61);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulls >= chunks) {
          controller.close();
          return;
        }
        pulls += 1;
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    },
    // No read-ahead: a chunk is made only when the reader asks for one.
    { highWaterMark: 0 },
  );
  return { stream, pulls: () => pulls, cancelled: () => cancelled };
}

/** The chunks a reader that stops right after passing LIMIT pulls, plus slack for one chunk of read-ahead. */
const MOST_PULLS = Math.ceil(LIMIT / CHUNK) + 2;

describe("413 message_too_large (ERR-12, LIM-2, G10, G24)", () => {
  it("ERR-12, POST-18, G10: a Content-Length over max_message_size → 413 before one byte is read", async () => {
    const h = await createReceiverHarness();
    const body = countingStream(1000);
    const response = await h.deliver({ stream: body.stream, headers: { "content-length": String(LIMIT + 1) } });
    const answer = await readProblem(response);
    expect([answer.status, answer.identifier, answer.contentType]).toEqual([
      413,
      "message_too_large",
      "application/problem+json",
    ]);
    expect(body.pulls()).toBe(0);
    expect(body.cancelled()).toBe(true);
    expect(h.store.all()).toHaveLength(0);
  });

  it("ERR-12, LIM-2: no Content-Length and a body that goes on past the limit → 413, reading stopped right after the limit", async () => {
    const h = await createReceiverHarness();
    const body = countingStream(10_000);
    const request = await h.request({ stream: body.stream, headers: { "content-length": null } });
    expect(request.headers.get("content-length")).toBeNull();
    const answer = await readProblem(await h.receiver(request));
    expect([answer.status, answer.identifier]).toEqual([413, "message_too_large"]);
    expect(body.pulls()).toBeGreaterThan(LIMIT / CHUNK);
    expect(body.pulls()).toBeLessThanOrEqual(MOST_PULLS);
    expect(body.cancelled()).toBe(true);
    expect(h.store.all()).toHaveLength(0);
  });

  it("ERR-12, LIM-2: a lying Content-Length (1000, with a stream far longer) → 413, reading stopped right after the limit", async () => {
    const h = await createReceiverHarness();
    const body = countingStream(10_000);
    const answer = await readProblem(await h.deliver({ stream: body.stream, headers: { "content-length": "1000" } }));
    expect([answer.status, answer.identifier]).toEqual([413, "message_too_large"]);
    expect(body.pulls()).toBeLessThanOrEqual(MOST_PULLS);
    expect(body.cancelled()).toBe(true);
  });

  it("LIM-2, G24: a request body of exactly max_message_size is accepted; one byte more is 413", async () => {
    const h = await createReceiverHarness();
    const boundary = "mailscope-test-boundary-0f3c9a";
    const head = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "" });
    const overhead = buildMultipartBody({ from: "alice@a.example", to: ["bob@b.example"] }, head, boundary).body.length;
    const padded = (extra: number): Uint8Array => {
      const message = new Uint8Array(head.length + LIMIT - overhead + extra).fill(0x78);
      message.set(head);
      return message;
    };
    const exact = await h.deliver({ message: padded(0), idempotencyKey: "exact" });
    expect(exact.status).toBe(200);
    expect(h.store.messages("bob@b.example")[0]?.message.length).toBe(head.length + LIMIT - overhead);
    const over = await readProblem(await h.deliver({ message: padded(1), idempotencyKey: "over" }));
    expect([over.status, over.identifier]).toEqual([413, "message_too_large"]);
  });

  it("LIM-1, CAP-7: a larger configured max_message_size is the limit that applies", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, capabilities: { max_message_size: LIMIT + 10 * CHUNK } }));
    const body = countingStream(Math.ceil(LIMIT / CHUNK) + 5);
    const answer = await readProblem(await h.deliver({ stream: body.stream }));
    // Within the larger limit the body is read to its end; it is not the signed body, so the digest fails.
    expect([answer.status, answer.identifier]).toEqual([401, "invalid_signature"]);
    expect(body.pulls()).toBe(Math.ceil(LIMIT / CHUNK) + 5);
  });
});

describe("readBodyWithLimit", () => {
  it("LIM-2: reads a body under the limit whole, in order", async () => {
    const parts = [new Uint8Array([1, 2]), new Uint8Array([3]), new Uint8Array([4, 5, 6])];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    });
    const read = await readBodyWithLimit(stream, 6);
    expect(read).toEqual({ kind: "ok", body: new Uint8Array([1, 2, 3, 4, 5, 6]) });
  });

  it("LIM-2: a null body is empty; one byte over the limit is too large", async () => {
    expect(await readBodyWithLimit(null, 0)).toEqual({ kind: "ok", body: new Uint8Array(0) });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(7));
        controller.close();
      },
    });
    expect(await readBodyWithLimit(stream, 6)).toEqual({ kind: "too-large", bytesRead: 7 });
  });

  it("ERR-16: a stream that errors or yields non-bytes is an error, not a throw", async () => {
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset"));
      },
    });
    expect((await readBodyWithLimit(failing, 10)).kind).toBe("error");
    const strings = new ReadableStream<unknown>({
      start(controller) {
        controller.enqueue("text");
        controller.close();
      },
    }) as ReadableStream<Uint8Array>;
    expect(await readBodyWithLimit(strings, 10)).toMatchObject({ kind: "error" });
  });
});
