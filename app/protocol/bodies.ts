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
 * changes a body it built); the message keeps its own copy for its stream, as
 * fetch makes one.
 */
import { asBufferSource } from "./base64.ts";

const bodies = new WeakMap<Request | Response, Uint8Array>();

const NO_BYTES = new Uint8Array(0);

/** `new Request(url, init)` with `bytes` as its body (none when empty), known to {@link bodyBytesOf}. */
export function requestWithBody(url: string, init: Omit<RequestInit, "body">, bytes: Uint8Array): Request {
  const request = new Request(url, bytes.length === 0 ? init : { ...init, body: asBufferSource(bytes) });
  bodies.set(request, bytes.length === 0 ? NO_BYTES : bytes);
  return request;
}

/** `new Response(bytes, init)`, known to {@link bodyBytesOf}; `null` (a HEAD, a 204) has no body. */
export function responseWithBody(bytes: Uint8Array | null, init: ResponseInit): Response {
  const response = new Response(bytes === null || bytes.length === 0 ? null : asBufferSource(bytes), init);
  if (bytes !== null) bodies.set(response, bytes.length === 0 ? NO_BYTES : bytes);
  return response;
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
