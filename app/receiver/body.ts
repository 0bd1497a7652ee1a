/**
 * Reading the request body with a ceiling (ERR-12, LIM-2, G10 "size"): the
 * receiver never holds more than `limit` bytes plus the one chunk that
 * crossed it, whether Content-Length is absent, honest or lying. Chunked or
 * resumable upload is not offered (LIM-13), so the body is one stream.
 */
import { errorMessage } from "../errorMessage.ts";

/** The outcome of {@link readBodyWithLimit}. */
export type BodyRead =
  | { readonly kind: "ok"; readonly body: Uint8Array }
  /** More than `limit` bytes: the stream was cancelled after `bytesRead`. */
  | { readonly kind: "too-large"; readonly bytesRead: number }
  /** The stream failed or produced something other than bytes. */
  | { readonly kind: "error"; readonly detail: string };

/** What {@link readBodyWithLimit} may be told. */
export interface ReadBodyOptions {
  /**
   * The length the request declares (Content-Length), when it has one. A
   * body of several chunks is then gathered into one buffer of that size
   * from the start (when it is within `limit`), instead of growing one.
   */
  readonly expectedLength?: number;
  /**
   * Sees the body's bytes as they arrive: `bytes` are those at `offset`, as
   * they will be in the body handed back (a view into it, or the first chunk
   * itself), never changed afterwards. Not called for a body that turns out
   * too large, past the point it did.
   */
  readonly onBytes?: (bytes: Uint8Array, offset: number) => void;
  /**
   * False: the bytes are only handed to `onBytes` (each chunk as it came),
   * not kept; the body handed back is empty (a large body not yet
   * authenticated goes to a spool, not to memory). Default true.
   */
  readonly keep?: boolean;
}

/** The smallest buffer a body of several chunks starts with when its length is not known. */
const INITIAL_CAPACITY = 64 * 1024;

/**
 * Reads `stream` to its end, or until more than `limit` bytes have arrived;
 * then cancels it (so the sender's stream stops being pulled) and reports
 * `too-large`. A `null` stream is an empty body; bytes are a body at hand
 * (app/protocol/bodies.ts), read as a stream of that one chunk would be.
 *
 * The bytes are gathered once: a body of one chunk is that chunk; a body of
 * several is copied, chunk by chunk as it arrives, into one buffer, sized
 * from `expectedLength` when that is given and within `limit`, else grown
 * geometrically (never past `limit`). So the body costs its size once, not
 * once for the chunks and again for their concatenation.
 */
export async function readBodyWithLimit(
  stream: ReadableStream<Uint8Array> | Uint8Array | null,
  limit: number,
  options: ReadBodyOptions = {},
): Promise<BodyRead> {
  if (stream === null) return { kind: "ok", body: new Uint8Array(0) };
  if (stream instanceof Uint8Array) return readBodyAtHand(stream, limit, options);
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = stream.getReader();
  } catch (error) {
    return { kind: "error", detail: `the body cannot be read (${errorMessage(error)})` };
  }
  const expected = options.expectedLength;
  /** The first chunk, kept as it is until a second one arrives. */
  let first: Uint8Array | undefined;
  let buffer: Uint8Array | undefined;
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        stop(reader);
        return { kind: "error", detail: "the body stream produced something other than bytes" };
      }
      const at = total;
      total += value.length;
      if (total > limit) {
        stop(reader);
        return { kind: "too-large", bytesRead: total };
      }
      if (value.length === 0) continue;
      if (options.keep === false) {
        options.onBytes?.(value, at);
        continue;
      }
      if (buffer === undefined && first === undefined) {
        first = value;
        options.onBytes?.(value, at);
        continue;
      }
      if (buffer === undefined || total > buffer.length) {
        const grown = new Uint8Array(capacityFor(total, buffer?.length ?? 0, expected, limit));
        if (buffer !== undefined) grown.set(buffer.subarray(0, at));
        else if (first !== undefined) grown.set(first);
        buffer = grown;
        first = undefined;
      }
      buffer.set(value, at);
      options.onBytes?.(buffer.subarray(at, total), at);
    }
  } catch (error) {
    stop(reader);
    return { kind: "error", detail: `the body could not be read to its end (${errorMessage(error)})` };
  }
  if (buffer !== undefined) return { kind: "ok", body: buffer.subarray(0, total) };
  return { kind: "ok", body: first ?? new Uint8Array(0) };
}

/**
 * {@link readBodyWithLimit} of a body already in memory (app/protocol/bodies.ts): what reading it as a
 * stream of that one chunk gives, without a stream, and answered at once (no promise to wait for).
 */
export function readBodyAtHand(bytes: Uint8Array, limit: number, options: ReadBodyOptions = {}): BodyRead {
  if (bytes.length > limit) return { kind: "too-large", bytesRead: bytes.length };
  if (bytes.length > 0) options.onBytes?.(bytes, 0);
  return { kind: "ok", body: options.keep === false || bytes.length === 0 ? new Uint8Array(0) : bytes };
}

/** The size of the buffer that must hold `needed` bytes: the expected length when it fits, else twice the old size. */
function capacityFor(needed: number, current: number, expected: number | undefined, limit: number): number {
  if (expected !== undefined && expected >= needed && expected <= limit) return expected;
  return Math.min(limit, Math.max(needed, current * 2, INITIAL_CAPACITY));
}

/**
 * The declared Content-Length when it is a plain decimal number; `undefined`
 * when absent or not one (then only the bytes that arrive count).
 */
export function declaredLength(header: string | null): number | undefined {
  if (header === null || !/^[0-9]+$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

/** Cancels a body nobody will read, so its source stops; errors are of no interest then. */
export function discardBody(stream: ReadableStream<Uint8Array> | null): void {
  if (stream === null || stream.locked) return;
  stream.cancel().catch(() => {});
}

function stop(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  // Not awaited: a source whose cancel never settles must not hold the answer back.
  reader.cancel().catch(() => {});
}
