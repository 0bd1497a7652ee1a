import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readBodyAtHand, readBodyWithLimit } from "./body.ts";
import type { BodyRead } from "./body.ts";
import { createReceiverHarness, textMessage } from "./testing.ts";

// readBodyWithLimit after the performance pass: one buffer sized from Content-Length when that is
// within the limit, doubling growth otherwise (never past the limit), a one-chunk body used as it
// came. Whatever Content-Length says (honest, absent, shorter or longer than the body), only the
// bytes that arrive count, they come back byte for byte, and reading stops with the chunk that
// crosses the limit (ERR-12, LIM-2, G10 "size", G24).

/** Deterministic bytes (a linear congruential generator; no Math.random in the core's tests). */
function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** `bytes` cut at `sizes` (the last chunk takes the rest). */
function cut(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= bytes.length) break;
    chunks.push(bytes.slice(at, Math.min(bytes.length, at + size)));
    at += size;
  }
  if (at < bytes.length) chunks.push(bytes.slice(at));
  return chunks;
}

/**
 * A stream of `chunks` made one at a time, only when the reader asks (no read-ahead), counting how
 * many it was asked for and whether it was cancelled.
 */
function pulledStream(chunks: readonly Uint8Array[]): {
  stream: ReadableStream<Uint8Array>;
  pulls: () => number;
  cancelled: () => boolean;
} {
  let pulls = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks[pulls];
        if (next === undefined) {
          controller.close();
          return;
        }
        pulls += 1;
        controller.enqueue(next);
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulls: () => pulls, cancelled: () => cancelled };
}

function okBody(read: BodyRead): Uint8Array {
  if (read.kind !== "ok") throw new Error(`expected the body, got ${JSON.stringify(read)}`);
  return read.body;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const LIMIT = 200_000;
const DATA = pseudoRandomBytes(150_000, 7);
/** 150 000 bytes in chunks of uneven sizes, none a power of two. */
const MANY = cut(DATA, [1, 4093, 17, 65_537, 3, 30_000, 12_345]);

describe("readBodyWithLimit: Content-Length honest, absent or lying (LIM-2, ERR-12, G24)", () => {
  it("LIM-2, G24: honest Content-Length, many chunks → the bytes byte for byte, in one buffer of exactly that length", async () => {
    const source = pulledStream(MANY);
    const body = okBody(await readBodyWithLimit(source.stream, LIMIT, { expectedLength: DATA.length }));
    expect(body.length).toBe(DATA.length);
    expect(sameBytes(body, DATA)).toBe(true);
    // Preallocated from Content-Length: no buffer larger than the body was made.
    expect(body.buffer.byteLength).toBe(DATA.length);
    expect(source.pulls()).toBe(MANY.length);
    expect(source.cancelled()).toBe(false);
  });

  it("LIM-2, G24: no Content-Length, many chunks → the bytes byte for byte; the grown buffer never passes the limit", async () => {
    const source = pulledStream(MANY);
    const body = okBody(await readBodyWithLimit(source.stream, LIMIT));
    expect(sameBytes(body, DATA)).toBe(true);
    // Doubling from 64 KiB would reach 256 KiB for 150 000 bytes; the limit (200 000) caps it.
    expect(body.buffer.byteLength).toBeGreaterThanOrEqual(DATA.length);
    expect(body.buffer.byteLength).toBeLessThanOrEqual(LIMIT);
  });

  it("LIM-2, G24: a Content-Length shorter than the body (1000 for 150 000 bytes) → every byte that arrives is read", async () => {
    const body = okBody(await readBodyWithLimit(pulledStream(MANY).stream, LIMIT, { expectedLength: 1000 }));
    expect(body.length).toBe(DATA.length);
    expect(sameBytes(body, DATA)).toBe(true);
    expect(body.buffer.byteLength).toBeLessThanOrEqual(LIMIT);
  });

  it("LIM-2, G24: a Content-Length longer than the body (190 000 for 150 000 bytes) → the body is the bytes that came, no zero padding", async () => {
    const body = okBody(await readBodyWithLimit(pulledStream(MANY).stream, LIMIT, { expectedLength: 190_000 }));
    expect(body.length).toBe(DATA.length);
    expect(sameBytes(body, DATA)).toBe(true);
  });

  it("LIM-2: a Content-Length over the limit (the caller did not refuse it) is not used to size the buffer", async () => {
    const body = okBody(await readBodyWithLimit(pulledStream(MANY).stream, LIMIT, { expectedLength: 10 * LIMIT }));
    expect(sameBytes(body, DATA)).toBe(true);
    expect(body.buffer.byteLength).toBeLessThanOrEqual(LIMIT);
  });

  it("LIM-2: Content-Length 0 with an empty stream, a null stream, and only empty chunks are all the empty body", async () => {
    expect(okBody(await readBodyWithLimit(pulledStream([]).stream, LIMIT, { expectedLength: 0 }))).toEqual(
      new Uint8Array(0),
    );
    expect(okBody(await readBodyWithLimit(null, 0))).toEqual(new Uint8Array(0));
    const empties = [new Uint8Array(0), new Uint8Array(0)];
    expect(okBody(await readBodyWithLimit(pulledStream(empties).stream, 0, { expectedLength: 0 }))).toEqual(
      new Uint8Array(0),
    );
  });
});

describe("readBodyWithLimit: one chunk or many (LIM-2)", () => {
  it("LIM-2: a body of one chunk is that chunk, not a copy, with or without Content-Length", async () => {
    const chunk = pseudoRandomBytes(5000, 11);
    expect(okBody(await readBodyWithLimit(pulledStream([chunk]).stream, LIMIT))).toBe(chunk);
    const withLength = okBody(await readBodyWithLimit(pulledStream([chunk]).stream, LIMIT, { expectedLength: 5000 }));
    expect(withLength).toBe(chunk);
    // Empty chunks around it change nothing.
    const padded = [new Uint8Array(0), chunk, new Uint8Array(0)];
    expect(okBody(await readBodyWithLimit(pulledStream(padded).stream, LIMIT))).toBe(chunk);
  });

  it("LIM-2: a body of one chunk that is a view into a larger buffer comes back as exactly that view's bytes", async () => {
    const backing = pseudoRandomBytes(1000, 12);
    const view = backing.subarray(100, 900);
    const body = okBody(await readBodyWithLimit(pulledStream([view]).stream, LIMIT));
    expect(body.length).toBe(800);
    expect(sameBytes(body, backing.slice(100, 900))).toBe(true);
  });

  it("LIM-2: with two or more chunks the body is its own buffer: changing the chunks afterwards changes nothing", async () => {
    const chunks = cut(pseudoRandomBytes(3000, 13), [1000, 1000]);
    const expected = Uint8Array.from(chunks.flatMap((c) => [...c]));
    for (const expectedLength of [undefined, 3000, 10, 5000]) {
      const copies = chunks.map((c) => c.slice());
      const body = okBody(
        await readBodyWithLimit(pulledStream(copies).stream, LIMIT, {
          ...(expectedLength !== undefined && { expectedLength }),
        }),
      );
      for (const c of copies) c.fill(0);
      expect(sameBytes(body, expected)).toBe(true);
    }
  });

  it("LIM-2: empty chunks between non-empty ones are skipped, the order kept", async () => {
    const chunks = [Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3), new Uint8Array(0), Uint8Array.of(4, 5)];
    const body = okBody(await readBodyWithLimit(pulledStream(chunks).stream, 5, { expectedLength: 5 }));
    expect([...body]).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("readBodyWithLimit: the limit (ERR-12, LIM-2, G10 size)", () => {
  it("LIM-2, G24: exactly the limit is accepted (one chunk, many chunks, each Content-Length variant)", async () => {
    const exact = pseudoRandomBytes(LIMIT, 21);
    for (const chunks of [[exact], cut(exact, [65_536, 65_536, 65_536])]) {
      for (const expectedLength of [undefined, LIMIT, 1, LIMIT + 1]) {
        const body = okBody(
          await readBodyWithLimit(pulledStream(chunks).stream, LIMIT, {
            ...(expectedLength !== undefined && { expectedLength }),
          }),
        );
        expect(body.length).toBe(LIMIT);
        expect(sameBytes(body, exact)).toBe(true);
      }
    }
  });

  it("ERR-12, LIM-2: one byte over the limit is too large, whether that byte comes alone or inside a chunk", async () => {
    const over = pseudoRandomBytes(LIMIT + 1, 22);
    // The extra byte as a chunk of its own, after exactly the limit.
    const alone = pulledStream([...cut(over.subarray(0, LIMIT), [100_000]), over.subarray(LIMIT)]);
    expect(await readBodyWithLimit(alone.stream, LIMIT, { expectedLength: LIMIT })).toEqual({
      kind: "too-large",
      bytesRead: LIMIT + 1,
    });
    expect(alone.pulls()).toBe(3);
    expect(alone.cancelled()).toBe(true);
    // One chunk of limit + 1.
    const single = pulledStream([over]);
    expect(await readBodyWithLimit(single.stream, LIMIT)).toEqual({ kind: "too-large", bytesRead: LIMIT + 1 });
    expect(single.cancelled()).toBe(true);
  });

  it("ERR-12, LIM-2, G10: reading stops with the chunk that crosses the limit (honest, absent, shorter and longer Content-Length)", async () => {
    const chunk = new Uint8Array(4096).fill(0x61);
    const endless = Array.from({ length: 1000 }, () => chunk);
    // 4096 × 48 = 196 608 ≤ 200 000 < 4096 × 49: the 49th chunk crosses.
    const crossing = Math.floor(LIMIT / 4096) + 1;
    for (const expectedLength of [undefined, 4096 * 1000, 1000, LIMIT]) {
      const source = pulledStream(endless);
      const read = await readBodyWithLimit(source.stream, LIMIT, {
        ...(expectedLength !== undefined && { expectedLength }),
      });
      expect(read).toEqual({ kind: "too-large", bytesRead: crossing * 4096 });
      expect(source.pulls()).toBe(crossing);
      expect(source.cancelled()).toBe(true);
    }
  });

  it("ERR-12, LIM-2, G24 (property): any cut of any body, any Content-Length, any limit: ok iff within the limit, bytes equal, stopped at the crossing chunk", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 3000 }),
        fc.array(fc.integer({ min: 0, max: 700 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 3200 }),
        fc.oneof(fc.constant<"absent">("absent"), fc.constant<"honest">("honest"), fc.integer({ min: 0, max: 4000 })),
        async (data, sizes, limit, length) => {
          const chunks = cut(data, sizes);
          const source = pulledStream(chunks);
          const expectedLength = length === "absent" ? undefined : length === "honest" ? data.length : length;
          const read = await readBodyWithLimit(source.stream, limit, {
            ...(expectedLength !== undefined && { expectedLength }),
          });
          if (data.length <= limit) {
            const body = okBody(read);
            expect(sameBytes(body, data)).toBe(true);
            expect(source.pulls()).toBe(chunks.length);
            expect(source.cancelled()).toBe(false);
            if (chunks.filter((c) => c.length > 0).length >= 2) {
              expect(body.buffer.byteLength).toBeLessThanOrEqual(Math.max(limit, 0));
            }
          } else {
            let total = 0;
            let index = 0;
            while (total <= limit) total += chunks[index++]?.length ?? 0;
            expect(read).toEqual({ kind: "too-large", bytesRead: total });
            expect(source.pulls()).toBe(index);
            expect(source.cancelled()).toBe(true);
          }
        },
      ),
      { numRuns: 400, seed: 20261121 },
    );
  });
});

describe("the receiver reads the body the same whatever Content-Length says (LIM-2, POST-9, G10, G24)", () => {
  /** A signed delivery whose body is sent again as a stream of `sizes` chunks, with this Content-Length. */
  async function streamed(
    h: Awaited<ReturnType<typeof createReceiverHarness>>,
    key: string,
    sizes: readonly number[],
    contentLength: (actual: number) => string | null,
  ): Promise<{ request: Request; message: Uint8Array }> {
    const message = textMessage({
      from: "alice@a.example",
      to: ["bob@b.example"],
      messageId: key,
      body: "x".repeat(70_000),
    });
    const signed = await h.request({ idempotencyKey: key, message });
    const bytes = new Uint8Array(await signed.arrayBuffer());
    const headers = new Headers(signed.headers);
    const length = contentLength(bytes.length);
    if (length === null) headers.delete("content-length");
    else headers.set("content-length", length);
    const request = new Request(signed.url, {
      method: "POST",
      headers,
      body: pulledStream(cut(bytes, sizes)).stream,
      duplex: "half",
    } as RequestInit);
    return { request, message };
  }

  const cases: [string, readonly number[], (actual: number) => string | null][] = [
    ["honest, many chunks", [1, 999, 8192, 3, 40_000], (n) => String(n)],
    ["absent, many chunks", [7, 65_536, 5], () => null],
    ["shorter than the body", [10_000, 10_000], () => "100"],
    ["longer than the body", [30_000], (n) => String(n + 5000)],
    ["honest, one chunk", [1_000_000], (n) => String(n)],
    ["absent, one chunk", [1_000_000], () => null],
  ];
  for (const [name, sizes, contentLength] of cases) {
    it(`LIM-2, POST-9, G10, G24: Content-Length ${name} → 200, the message stored byte for byte`, async () => {
      const h = await createReceiverHarness();
      const { request, message } = await streamed(h, `cl-${name.replace(/[^a-z]/g, "-")}`, sizes, contentLength);
      const response = await h.receiver(request);
      expect(response.status).toBe(200);
      const stored = h.store.messages("bob@b.example");
      expect(stored).toHaveLength(1);
      expect(sameBytes(stored[0]?.message ?? new Uint8Array(0), message)).toBe(true);
    });
  }
});

describe("readBodyWithLimit: onBytes sees the body as it arrives (for spooling, decision 0011)", () => {
  it("property: the pieces onBytes sees are the body's bytes, in order, at their offsets, unchanged once the body is read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 20_000 }),
        fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (length, sizes, declare) => {
          const bytes = pseudoRandomBytes(length, length + sizes.length);
          const seen: { bytes: Uint8Array; offset: number }[] = [];
          const read = await readBodyWithLimit(pulledStream(cut(bytes, sizes)).stream, 1_000_000, {
            ...(declare && { expectedLength: length }),
            onBytes: (piece, offset) => seen.push({ bytes: piece, offset }),
          });
          const body = okBody(read);
          expect(sameBytes(body, bytes)).toBe(true);
          let next = 0;
          for (const piece of seen) {
            expect(piece.offset).toBe(next);
            expect(sameBytes(piece.bytes, bytes.subarray(next, next + piece.bytes.length))).toBe(true);
            next += piece.bytes.length;
          }
          expect(next).toBe(length);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("readBodyWithLimit: a body at hand (app/protocol/bodies.ts) reads as the stream of that one chunk (LIM-2, ERR-12)", () => {
  it("ERR-12, LIM-2 (property): same outcome, same bytes, the same pieces for onBytes, kept or not, within and over the limit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.nat({ max: 320 }),
        fc.boolean(),
        async (bytes, limit, keep) => {
          const seen = (into: [number, number[]][]) => (piece: Uint8Array, offset: number) =>
            void into.push([offset, [...piece]]);
          const fromStream: [number, number[]][] = [];
          const fromBytes: [number, number[]][] = [];
          const streamed = await readBodyWithLimit(pulledStream(bytes.length > 0 ? [bytes] : []).stream, limit, {
            keep,
            onBytes: seen(fromStream),
          });
          const atHand = await readBodyWithLimit(bytes, limit, { keep, onBytes: seen(fromBytes) });
          expect(atHand.kind).toBe(streamed.kind);
          if (atHand.kind === "ok" && streamed.kind === "ok") expect([...atHand.body]).toEqual([...streamed.body]);
          if (atHand.kind === "too-large" && streamed.kind === "too-large")
            expect(atHand.bytesRead).toBe(streamed.bytesRead);
          expect(fromBytes).toEqual(fromStream);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("LIM-2: the body at hand is handed back as it is, not copied", async () => {
    const bytes = pseudoRandomBytes(1000, 3);
    expect(okBody(await readBodyWithLimit(bytes, LIMIT))).toBe(bytes);
  });
});

describe("readBodyAtHand: a body at hand answers at once what reading it as a stream of one chunk would (LIM-2, ERR-12)", () => {
  const bytes = pseudoRandomBytes(10_000, 7);

  it("LIM-2: within the limit → those very bytes, as the stream read gives them, and onBytes sees them once", async () => {
    const seen: number[] = [];
    const atHand = readBodyAtHand(bytes, LIMIT, { onBytes: (chunk, at) => void seen.push(chunk.length, at) });
    expect(okBody(atHand)).toBe(bytes);
    expect(seen).toEqual([bytes.length, 0]);
    expect(okBody(await readBodyWithLimit(bytes, LIMIT))).toBe(bytes);
  });

  it("ERR-12, LIM-2: one byte over the limit → too-large with every byte counted, as the stream read reports it", async () => {
    const atHand = readBodyAtHand(bytes, bytes.length - 1, {});
    expect(atHand).toEqual({ kind: "too-large", bytesRead: bytes.length });
    expect(await readBodyWithLimit(pulledStream([bytes]).stream, bytes.length - 1)).toEqual(atHand);
  });

  it("LIM-2: empty, or not kept → the empty body", () => {
    expect(okBody(readBodyAtHand(new Uint8Array(0), 0, {}))).toEqual(new Uint8Array(0));
    expect(okBody(readBodyAtHand(bytes, LIMIT, { keep: false }))).toEqual(new Uint8Array(0));
  });
});
