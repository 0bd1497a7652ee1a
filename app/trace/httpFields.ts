/**
 * The fields of the trace's `http.request` and `http.response` events that
 * describe a message: its headers as an object, its body's SHA-256 as a
 * Content-Digest member, and the body itself when whole bodies are recorded.
 * The simulated network and `mailscope probe` write them the same way, so the
 * app's sequence diagram and inspector read both alike.
 */
import { bytesToBase64 } from "../protocol/base64.ts";
import { sha256 } from "../protocol/sha256.ts";
import { startDigest, subtle } from "../protocol/webCrypto.ts";

/** Header names (lowercase, sorted by the Headers class) to values. */
export function headersObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  });
  return out;
}

/** `sha-256=:<base64>:`, the form of a Content-Digest member (RFC 9530), so a trace reader can compare the two. */
export async function sha256Field(bytes: Uint8Array): Promise<string> {
  return digestField(new Uint8Array(await subtle.digest("SHA-256", bytes.slice())));
}

/**
 * Bodies up to this size are digested for the trace in JavaScript: a few KB
 * hash faster there than a WebCrypto round trip to the host's thread pool,
 * while a large body hashes several times faster natively.
 */
export const INLINE_DIGEST_MAX_BYTES = 256 * 1024;

/** {@link sha256Field} computed synchronously in JavaScript (app/protocol/sha256.ts). */
export function sha256FieldInline(bytes: Uint8Array): string {
  // The crypto provider's SHA-256 when there is one (node:crypto under `mailscope`), else the one in TypeScript.
  const running = startDigest("SHA-256");
  if (running === undefined) return digestField(sha256(bytes));
  running.update(bytes);
  return digestField(running.digest());
}

function digestField(digest: Uint8Array): string {
  return `sha-256=:${bytesToBase64(digest)}:`;
}

/** A body for the trace: UTF-8 text as `body`, anything else as `bodyBase64`. */
export function bodyFields(bytes: Uint8Array): { body: string } | { bodyBase64: string } {
  try {
    // ignoreBOM keeps a leading byte order mark in the text, so the recorded body encodes back to its bytes.
    return { body: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { bodyBase64: bytesToBase64(bytes) };
  }
}
