/**
 * Requests and responses whose body the core built from bytes it holds, and
 * those bytes, so that whoever receives the message in the same process (the
 * simulated network, the receiver, the sender reading an answer) takes the
 * body as those bytes instead of reading it back through the message's stream.
 *
 * The message is still a fetch `Request` or `Response` with that body: a
 * reader that streams it gets the same bytes, and a message from anywhere
 * else (a real socket, a test's `new Request`) has no bytes here and is read
 * as any body is. Reading a body back costs a stream, its reads and a copy,
 * and a browser may settle those reads through its own task queue, which a
 * simulation cannot see (app/sim/network.ts); bytes at hand cost nothing and
 * settle nowhere.
 *
 * The bytes are the caller's and must not change afterwards (the core never
 * changes a body it built). The message's stream is made in JavaScript and
 * pulled only when someone reads it, giving a copy of the bytes then (the copy
 * fetch makes when it is given bytes, made when needed): fetch's own body of
 * bytes costs twice as much to make (undici builds a byte stream and copies the
 * bytes at once, ~25 µs more per message on this machine), and a message whose
 * body is at hand is never read through it. A body read from a JavaScript stream
 * settles in microtasks in every engine, where a browser may read a body given
 * as bytes through its own task queue. A request with a stream body is
 * `duplex: "half"`; one sent over a real network is given its length first
 * (app/node/tlsFetch.ts `withContentLength`), so it goes out as one with bytes.
 */

const bodies = new WeakMap<Request | Response, Uint8Array>();

/** The SHA-256 of a body at hand, as a Content-Digest member, when its maker computed it (decision 0210). */
const sha256Fields = new WeakMap<Request | Response, string>();

const NO_BYTES = new Uint8Array(0);

/**
 * `new Request(url, init)` with `bytes` as its body (none when empty), known to {@link bodyBytesOf}.
 * `sha256Field` is the bytes' SHA-256 as a Content-Digest member (`sha-256=:…:`) when the caller has just
 * computed it from these very bytes (the sender, for its Content-Digest), known to {@link bodySha256FieldOf}.
 */
export function requestWithBody(
  url: string,
  init: Omit<RequestInit, "body">,
  bytes: Uint8Array,
  sha256Field?: string,
): Request {
  const request = new Request(
    url,
    bytes.length === 0 ? init : ({ ...init, body: pulledWhenRead(bytes), duplex: "half" } as RequestInit),
  );
  bodies.set(request, bytes.length === 0 ? NO_BYTES : bytes);
  if (sha256Field !== undefined) sha256Fields.set(request, sha256Field);
  return request;
}

/**
 * The SHA-256 of `message`'s body at hand as a Content-Digest member, when whoever made the message
 * computed it from those bytes ({@link requestWithBody}); `undefined` otherwise, and once the body is read.
 * For a reader that records the body's digest (the simulated network's trace), not for a receiver, which
 * checks a Content-Digest by hashing the bytes itself.
 */
export function bodySha256FieldOf(message: Request | Response): string | undefined {
  return bodyBytesOf(message) === undefined ? undefined : sha256Fields.get(message);
}

/** `new Response(bytes, init)`, known to {@link bodyBytesOf}; `null` (a HEAD, a 204) has no body. */
export function responseWithBody(bytes: Uint8Array | null, init: ResponseInit): Response {
  const response = new Response(bytes === null || bytes.length === 0 ? null : pulledWhenRead(bytes), init);
  if (bytes !== null) bodies.set(response, bytes.length === 0 ? NO_BYTES : bytes);
  return response;
}

/**
 * A stream of one chunk, a copy of `bytes`, made when the first read asks for it (a high-water mark of
 * 0: nothing is pulled before then), so that a reader that changes what it read changes only its copy.
 */
function pulledWhenRead(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        controller.enqueue(bytes.slice());
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The body of `message` when it is at hand: the bytes it was made from by
 * {@link requestWithBody} or {@link responseWithBody}, or none for a message
 * without a body; `undefined` when the body must be read (a message made
 * elsewhere, or one whose body was read already).
 */
export function bodyBytesOf(message: Request | Response): Uint8Array | undefined {
  if (message.bodyUsed) return undefined;
  return bodies.get(message) ?? (message.body === null ? NO_BYTES : undefined);
}
