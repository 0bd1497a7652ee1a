/**
 * Reading the request body with a ceiling (ERR-12, LIM-2, G10 "size"): the
 * receiver never holds more than `limit` bytes plus the one chunk that
 * crossed it, whether Content-Length is absent, honest or lying. Chunked or
 * resumable upload is not offered (LIM-13), so the body is one stream.
 */

/** The outcome of {@link readBodyWithLimit}. */
export type BodyRead =
  | { readonly kind: "ok"; readonly body: Uint8Array }
  /** More than `limit` bytes: the stream was cancelled after `bytesRead`. */
  | { readonly kind: "too-large"; readonly bytesRead: number }
  /** The stream failed or produced something other than bytes. */
  | { readonly kind: "error"; readonly detail: string };

/**
 * Reads `stream` to its end, or until more than `limit` bytes have arrived;
 * then cancels it (so the sender's stream stops being pulled) and reports
 * `too-large`. A `null` stream is an empty body.
 */
export async function readBodyWithLimit(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<BodyRead> {
  if (stream === null) return { kind: "ok", body: new Uint8Array(0) };
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = stream.getReader();
  } catch (error) {
    return { kind: "error", detail: `the body cannot be read (${describe(error)})` };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        stop(reader);
        return { kind: "error", detail: "the body stream produced something other than bytes" };
      }
      total += value.length;
      if (total > limit) {
        stop(reader);
        return { kind: "too-large", bytesRead: total };
      }
      chunks.push(value);
    }
  } catch (error) {
    stop(reader);
    return { kind: "error", detail: `the body could not be read to its end (${describe(error)})` };
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return { kind: "ok", body: chunks[0] };
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.length;
  }
  return { kind: "ok", body };
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
