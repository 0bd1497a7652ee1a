import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readBodyWithLimit } from "../receiver/body.ts";
import { MAX_BOUNDARY_LENGTH, buildMultipartBody, byteSearch, indexOfBytes, parseMultipartBody } from "./multipart.ts";

// The delimiter search after the performance pass: needles of 8 bytes or more are found with
// Horspool's skips, shorter ones by jumping between first bytes. A multipart delimiter is
// CRLF "--" boundary, so boundaries of 1 to 70 characters (G9, RFC 2046) give needles of 5 to 74
// bytes, on both sides of that threshold. Both must find exactly what a naive search finds; and
// the parts come back as views into the body (POST-7, POST-9).

const encoder = new TextEncoder();
const LIMIT = 26214400;
/** RFC 2046 bchars. */
const BCHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=? ";

/** The reference: every start position, every byte compared. */
function naiveIndexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  for (let i = Math.max(0, from); i + needle.length <= haystack.length; i++) {
    let j = 0;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function naiveAll(haystack: Uint8Array, needle: Uint8Array): number[] {
  const found: number[] = [];
  for (let at = naiveIndexOf(haystack, needle, 0); at !== -1; at = naiveIndexOf(haystack, needle, at + 1)) {
    found.push(at);
  }
  return found;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A valid boundary (G9): 1–70 bchars, not ending in a space. */
const boundaryArb = fc
  .array(fc.constantFrom(...BCHARS), { minLength: 1, maxLength: MAX_BOUNDARY_LENGTH })
  .map((chars) => {
    const text = chars.join("");
    return text.endsWith(" ") ? `${text.slice(0, -1)}x` : text;
  });

/** The needles the parser searches for, from one boundary: CRLF "--" boundary (the delimiter), "--" boundary, and the bare boundary. */
function needlesOf(boundary: string): Uint8Array[] {
  return [encoder.encode(`\r\n--${boundary}`), encoder.encode(`--${boundary}`), encoder.encode(boundary)];
}

/**
 * A haystack fragment around `needle`: random bytes, bytes drawn from the needle's own alphabet,
 * the needle itself, or a near miss (one byte changed, the last byte changed, the first byte changed,
 * a prefix, a run of its first bytes before the whole, the needle with its last byte cut at the end).
 */
function fragmentArb(needle: Uint8Array): fc.Arbitrary<Uint8Array> {
  const n = needle.length;
  const changedAt = (i: number, delta: number): Uint8Array => {
    const copy = needle.slice();
    copy[i] = ((copy[i] ?? 0) + delta) & 0xff;
    return copy;
  };
  return fc.oneof(
    fc.uint8Array({ maxLength: 2 * n + 8 }),
    fc
      .array(fc.nat({ max: n - 1 }), { maxLength: 2 * n + 8 })
      .map((idx) => Uint8Array.from(idx, (i) => needle[i] ?? 0)),
    fc.constant(needle),
    fc.tuple(fc.nat({ max: n - 1 }), fc.integer({ min: 1, max: 255 })).map(([i, d]) => changedAt(i, d)),
    fc.integer({ min: 1, max: 255 }).map((d) => changedAt(n - 1, d)),
    fc.integer({ min: 1, max: 255 }).map((d) => changedAt(0, d)),
    fc.nat({ max: n - 1 }).map((k) => needle.slice(0, k)),
    fc.nat({ max: n - 1 }).map((k) => concat([needle.slice(0, k), needle])),
  );
}

describe("indexOfBytes against a naive search (POST-7, G9)", () => {
  it("POST-7, G9 (property): delimiters of boundaries of 1–70 characters, with near misses, are found exactly where a naive search finds them", () => {
    fc.assert(
      fc.property(
        boundaryArb.chain((boundary) => {
          const needles = needlesOf(boundary);
          return fc.tuple(
            fc
              .constantFrom(...needles)
              .chain((needle) => fc.tuple(fc.constant(needle), fc.array(fragmentArb(needle), { maxLength: 12 }))),
            fc.nat({ max: 400 }),
          );
        }),
        ([[needle, fragments], fromSeed]) => {
          const haystack = concat(fragments);
          const from = fromSeed % (haystack.length + 3);
          expect(indexOfBytes(haystack, needle, from)).toBe(naiveIndexOf(haystack, needle, from));
          // Every occurrence, walking from one to the next as the splitter does.
          const all: number[] = [];
          for (let at = indexOfBytes(haystack, needle, 0); at !== -1; at = indexOfBytes(haystack, needle, at + 1)) {
            all.push(at);
          }
          expect(all).toEqual(naiveAll(haystack, needle));
        },
      ),
      { numRuns: 1500, seed: 20261121 },
    );
  });

  it("G9 (property): any needle of 1–74 bytes over a three-letter alphabet (dense partial matches) agrees with the naive search", () => {
    const letter = fc.constantFrom(0x2d, 0x61, 0x0d);
    fc.assert(
      fc.property(
        fc.array(letter, { minLength: 1, maxLength: 74 }),
        fc.array(letter, { maxLength: 600 }),
        fc.nat({ max: 610 }),
        (needleCodes, haystackCodes, from) => {
          const needle = Uint8Array.from(needleCodes);
          const haystack = Uint8Array.from(haystackCodes);
          expect(indexOfBytes(haystack, needle, from)).toBe(naiveIndexOf(haystack, needle, from));
        },
      ),
      { numRuns: 1500, seed: 7 },
    );
  });

  it("G9: for every boundary length 1–70, a delimiter at the very start, at the very end, at `from`, just before `from`, and cut off at the end", () => {
    for (let length = 1; length <= MAX_BOUNDARY_LENGTH; length++) {
      const boundary = BCHARS.slice(0, 62).repeat(2).slice(0, length);
      for (const needle of needlesOf(boundary)) {
        const n = needle.length;
        const filler = encoder.encode("x".repeat(n + 3));
        const atStart = concat([needle, filler]);
        expect(indexOfBytes(atStart, needle, 0), `start, ${n}`).toBe(0);
        expect(indexOfBytes(atStart, needle, 1), `start from 1, ${n}`).toBe(-1);
        const atEnd = concat([filler, needle]);
        expect(indexOfBytes(atEnd, needle, 0), `end, ${n}`).toBe(filler.length);
        expect(indexOfBytes(atEnd, needle, filler.length), `end from it, ${n}`).toBe(filler.length);
        expect(indexOfBytes(atEnd, needle, filler.length + 1), `end from after it, ${n}`).toBe(-1);
        expect(indexOfBytes(needle, needle, 0), `alone, ${n}`).toBe(0);
        const cutOff = concat([filler, needle.subarray(0, n - 1)]);
        expect(indexOfBytes(cutOff, needle, 0), `cut off, ${n}`).toBe(-1);
        const twice = concat([needle, needle]);
        expect(indexOfBytes(twice, needle, 1), `second of two, ${n}`).toBe(n);
        // A needle whose last byte differs at every window position the skips could land on.
        const nearMisses = concat(
          Array.from({ length: 4 }, () => concat([needle.subarray(0, n - 1), Uint8Array.of(0)])),
        );
        expect(indexOfBytes(concat([nearMisses, needle]), needle, 0), `after near misses, ${n}`).toBe(
          nearMisses.length,
        );
      }
    }
  });
});

describe("the parts found by the search, from a body read in chunks (POST-7, POST-9, G9, LIM-2)", () => {
  /** A message with near-miss delimiter lines of `boundary` (never `--boundary` itself, which the builder refuses). */
  function messageArb(boundary: string): fc.Arbitrary<Uint8Array> {
    const text = (s: string): Uint8Array => encoder.encode(s);
    const other = (c: string): string => (c === "a" ? "b" : "a");
    const nearMiss = fc.oneof(
      fc.nat({ max: boundary.length - 1 }).map((i) => {
        const changed = `${boundary.slice(0, i)}${other(boundary[i] ?? "a")}${boundary.slice(i + 1)}`;
        return text(`\r\n--${changed}\r\n`);
      }),
      fc.nat({ max: boundary.length - 1 }).map((k) => text(`\r\n--${boundary.slice(0, k)}\r\n`)),
      fc.constant(text(`\r\n-${boundary}\r\n`)),
      fc.constant(text(`\r\n- -${boundary}--\r\n`)),
      fc.uint8Array({ maxLength: 200 }),
      fc.constant(text("\r\n")),
    );
    return fc.array(nearMiss, { maxLength: 10 }).map((parts) => concat([text("Subject: x\r\n\r\n"), ...parts]));
  }

  it("POST-7, POST-9, G9, LIM-2 (property): any boundary of 1–70, near misses in the message, the body cut into chunks inside its delimiters → the exact message and envelope, as views at the naive search's positions", async () => {
    await fc.assert(
      fc.asyncProperty(
        boundaryArb.chain((boundary) =>
          fc.tuple(
            fc.constant(boundary),
            messageArb(boundary),
            fc.array(fc.nat({ max: 4000 }), { maxLength: 8 }),
            fc.array(fc.nat({ max: 80 }), { maxLength: 3 }),
            fc.boolean(),
          ),
        ),
        async ([boundary, message, randomCuts, delimiterOffsets, withLength]) => {
          const dash = encoder.encode(`--${boundary}`);
          fc.pre(naiveIndexOf(message, dash, 0) === -1);
          const envelope = { from: "alice@a.example", to: ["bob@b.example"] };
          const built = buildMultipartBody(envelope, message, boundary);
          const body = built.body;

          // Chunk edges inside every delimiter (the dash-boundary at 0 and each CRLF-- boundary), plus random ones.
          const delimiter = encoder.encode(`\r\n--${boundary}`);
          const starts = [0, ...naiveAll(body, delimiter)];
          const cuts = new Set<number>();
          for (const start of starts)
            for (const off of delimiterOffsets) cuts.add(start + (off % (delimiter.length + 1)));
          for (const c of randomCuts) cuts.add(c % (body.length + 1));
          const edges = [...cuts].filter((c) => c > 0 && c < body.length).sort((a, b) => a - b);
          const chunks: Uint8Array[] = [];
          let prev = 0;
          for (const edge of [...edges, body.length]) {
            chunks.push(body.slice(prev, edge));
            prev = edge;
          }
          let index = 0;
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              const next = chunks[index++];
              if (next === undefined) controller.close();
              else controller.enqueue(next);
            },
          });
          const read = await readBodyWithLimit(stream, LIMIT, withLength ? { expectedLength: body.length } : {});
          if (read.kind !== "ok") throw new Error(`read failed: ${JSON.stringify(read)}`);
          const received = read.body;

          const parsed = parseMultipartBody(received, built.contentType);
          if (!parsed.ok) throw new Error(`parse failed: ${JSON.stringify(parsed.violations)}`);
          const { envelopeJson, message: got } = parsed.value;
          expect([...got]).toEqual([...message]);
          expect(new TextDecoder().decode(envelopeJson)).toBe(JSON.stringify(envelope));

          // Where the naive search puts the parts: the message starts after the second delimiter line's
          // part headers and ends at the third delimiter (the close delimiter), the envelope likewise.
          const found = naiveAll(received, delimiter);
          expect(found).toHaveLength(2);
          const headerEnd = (from: number): number => naiveIndexOf(received, encoder.encode("\r\n\r\n"), from) + 4;
          const envelopeStart = headerEnd(0);
          const messageStart = headerEnd(found[0] ?? 0);
          // Views into the body read, at the positions the naive search gives.
          expect(envelopeJson.buffer).toBe(received.buffer);
          expect(got.buffer).toBe(received.buffer);
          expect(envelopeJson.byteOffset - received.byteOffset).toBe(envelopeStart);
          expect(envelopeJson.length).toBe((found[0] ?? 0) - envelopeStart);
          expect(got.byteOffset - received.byteOffset).toBe(messageStart);
          expect(got.length).toBe((found[1] ?? 0) - messageStart);
        },
      ),
      { numRuns: 300, seed: 20261121 },
    );
  });

  it("POST-7, G9: preamble and epilogue come back as views too, and the body is not copied", () => {
    const boundary = "b0undary-with-more-than-8";
    const built = buildMultipartBody(
      { from: "a@a.example", to: ["b@b.example"] },
      encoder.encode("X: y\r\n\r\nhi"),
      boundary,
    );
    const body = concat([encoder.encode("preamble\r\n"), built.body, encoder.encode("epilogue")]);
    const parsed = parseMultipartBody(body, built.contentType);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
    const { preamble, epilogue, message } = parsed.value;
    expect(new TextDecoder().decode(preamble)).toBe("preamble");
    expect(new TextDecoder().decode(epilogue)).toBe("epilogue");
    for (const part of [preamble, epilogue, message]) expect(part?.buffer).toBe(body.buffer);
    expect(epilogue?.byteOffset).toBe(body.length - "epilogue".length);
  });

  it("POST-7, G9: searches built for several needles, short and past 256 bytes, find what a naive search finds when used in turn", () => {
    // The searches share one table of shifts (decision 0235): each must find its own needle whatever ran between.
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 8, maxLength: 300 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 64 })), { minLength: 1, maxLength: 12 }),
        (needles, uses) => {
          const searches = needles.map((needle) => byteSearch(needle));
          for (const [which, noise] of uses) {
            const k = which % needles.length;
            const needle = needles[k] as Uint8Array;
            const haystack = concat([noise, needle.subarray(0, needle.length - 1), noise, needle, noise]);
            for (const from of [0, noise.length + 1]) {
              expect((searches[k] as (h: Uint8Array, f: number) => number)(haystack, from)).toBe(
                naiveIndexOf(haystack, needle, from),
              );
            }
          }
        },
      ),
      { numRuns: 200, seed: 20261128 },
    );
  });
});
