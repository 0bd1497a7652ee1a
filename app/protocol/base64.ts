/**
 * Byte helpers for the pure core: base64 (standard and URL-safe), hex, and a
 * way to hand a `Uint8Array` to `crypto.subtle`. The core may not use Node's
 * `Buffer`, and `Uint8Array.prototype.toBase64` is not yet in every runtime we
 * target, so these sit on `btoa`/`atob`, which browsers and Node both have.
 */

/** Standard base64 (RFC 4648 §4) with `=` padding. */
export function bytesToBase64(bytes: Uint8Array): string {
  return bytes.length <= SCRATCH_BYTES ? encodeBase64(bytes, STANDARD, true) : btoa(bytesToBinary(bytes));
}

/** The characters of each alphabet, as codes: standard (RFC 4648 §4) and URL-safe (§5). */
const STANDARD = Uint8Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", (c) =>
  c.charCodeAt(0),
);
const URL_SAFE = Uint8Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", (c) =>
  c.charCodeAt(0),
);
const PAD = 0x3d;
/** Up to this many bytes, base64 is written into {@link SCRATCH}; past it, `btoa` does it. */
const SCRATCH_BYTES = 3 * 1024;
/**
 * The characters being written, reused: digests, signatures and keys are short, and written one by one into
 * this array they become one flat string in one decode (as {@link bytesToHex}), where `btoa` took a binary
 * string built first and checked character by character (decision 0235).
 */
const SCRATCH = new Uint8Array((SCRATCH_BYTES / 3) * 4);

/** The base64 of at most {@link SCRATCH_BYTES} bytes in `alphabet`, with or without `=` padding. */
function encodeBase64(bytes: Uint8Array, alphabet: Uint8Array, pad: boolean): string {
  const whole = bytes.length - (bytes.length % 3);
  let o = 0;
  for (let i = 0; i < whole; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    SCRATCH[o++] = alphabet[n >>> 18] as number;
    SCRATCH[o++] = alphabet[(n >>> 12) & 63] as number;
    SCRATCH[o++] = alphabet[(n >>> 6) & 63] as number;
    SCRATCH[o++] = alphabet[n & 63] as number;
  }
  const rest = bytes.length - whole;
  if (rest > 0) {
    const n = ((bytes[whole] as number) << 16) | (rest === 2 ? (bytes[whole + 1] as number) << 8 : 0);
    SCRATCH[o++] = alphabet[n >>> 18] as number;
    SCRATCH[o++] = alphabet[(n >>> 12) & 63] as number;
    if (rest === 2) SCRATCH[o++] = alphabet[(n >>> 6) & 63] as number;
    else if (pad) SCRATCH[o++] = PAD;
    if (pad) SCRATCH[o++] = PAD;
  }
  return HEX_TEXT.decode(SCRATCH.subarray(0, o));
}

/** Bytes a `String.fromCharCode` call takes at most (a bounded argument list), 32 KiB of stack. */
const BINARY_CHUNK = 0x1000;

/**
 * The bytes as a "binary string" (latin1: each byte one character, U+0000 to U+00FF), as `btoa` takes
 * it. `TextDecoder("latin1")` is windows-1252, which maps 0x80–0x9F elsewhere, so it will not do. Each
 * chunk is handed over with `apply`, which reads the typed array as it is, where spreading it walks an
 * iterator and builds an array first (~15 × slower on a 5 KB message, and its garbage).
 */
export function bytesToBinary(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += BINARY_CHUNK) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + BINARY_CHUNK) as unknown as number[]);
  }
  return binary;
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes standard, padded base64, strictly: the length must be a multiple of
 * four, padding must be exact and the unused bits of the last character zero.
 * Returns `undefined` for anything else, so a caller can say what was wrong.
 * Strictness matters where one text must map to one key (a key record's `p=`),
 * because a lenient decoder would accept several spellings of the same key.
 */
export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!STRICT_BASE64.test(text)) return undefined;
  const bytes = binaryToBytes(atob(text));
  // Reject non-zero pad bits: re-encoding must give the input back.
  return bytesToBase64(bytes) === text ? bytes : undefined;
}

/** Base64url without padding (RFC 4648 §5), as JWK members use it. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  if (bytes.length <= SCRATCH_BYTES) return encodeBase64(bytes, URL_SAFE, false);
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes unpadded base64url (RFC 4648 §5); `undefined` when it is not. */
export function base64UrlToBytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return base64ToBytes(padded);
}

/** The character codes of the lowercase hex digits. */
const HEX_DIGITS = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** Hex digits are ASCII, which UTF-8 decodes to one flat string, faster than `fromCharCode` here. */
const HEX_TEXT = new TextDecoder();

/**
 * Lowercase hex of the bytes, as one flat string. Appending a pair of digits per byte (`out += …`) made a
 * rope of one 32-byte node per byte (V8's cons strings), which stays a rope wherever nobody reads it
 * whole: a receiver's idempotency record kept its `sha-256:<hex>` as ~1 KiB of rope instead of 80 bytes
 * (decision 0185).
 */
export function bytesToHex(bytes: Uint8Array): string {
  const codes = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    codes[2 * i] = HEX_DIGITS[b >> 4] as number;
    codes[2 * i + 1] = HEX_DIGITS[b & 15] as number;
  }
  return HEX_TEXT.decode(codes);
}

/** Bytes of an even-length hex string; `undefined` when it is not hex. */
export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Constant-shape comparison of two byte strings (no early exit on the first difference). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * The same bytes typed as an ArrayBuffer-backed view, which is what the DOM
 * typings of `crypto.subtle` accept. Copies only when the bytes live in a
 * SharedArrayBuffer, so a large body is not duplicated in the usual case.
 */
export function asBufferSource(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
}

/** A view over an ArrayBuffer returned by a parser or by `crypto.subtle`. */
export function fromArrayBuffer(buffer: ArrayBuffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(buffer);
}

/** The bytes of a "binary string" (latin1, as {@link bytesToBinary} makes it): each character's code, one byte. */
export function binaryToBytes(binary: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
