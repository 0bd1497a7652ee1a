/**
 * The request body of POST /v1/messages: `multipart/mixed` (RFC 2046 §5.1)
 * with exactly two parts, 1 `application/json` (the Envelope) and 2
 * `message/rfc822` (the message, byte for byte, no transfer encoding).
 *
 * SPEC.md leaves the boundary and part-header rules open; gap G9 fills them:
 * an RFC 2046 boundary of 1–70 characters, CRLF line breaks, preamble and
 * epilogue tolerated, each part's own headers may hold only Content-Type
 * (others are ignored), any other shape is `invalid_request`.
 *
 * The parser is a hand-written byte scanner rather than
 * `@remix-run/multipart-parser`, because that library (0.16) cannot do what
 * G9 needs: it rejects a preamble, skips the two bytes after a delimiter
 * without checking they are CRLF (so `--boundaryX` or a bare LF slips
 * through), mis-reads a part with no header lines, and never says where the
 * close delimiter ends, so the epilogue is lost. The scanner finds each
 * delimiter with skips ({@link byteSearch}) that, in ordinary text, look at
 * about one pair of bytes per delimiter length, so a 25 MiB message part
 * costs a fraction of one pass.
 *
 * Violation paths: `headers.Content-Type` for the request header, `body` for
 * the framing, `body.part[i]` and `body.part[i].Content-Type` for a part,
 * with `i` counted from 0 as in JSONPath (`body.part[1]` is the message).
 */
import { bytesEqual, bytesToHex } from "./base64.ts";
import { keptAnswers } from "./memo.ts";
import { ProtocolError, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import { pushAll } from "./lists.ts";
import { isAscii } from "./ascii.ts";

/** POST request header table: Content-Type is `multipart/mixed` (G9: with an RFC 2046 boundary). */
const RULE_CONTENT_TYPE = "POST-6";
/** The body is multipart/mixed with exactly two parts in order (G9: framing, CRLF, part count). */
const RULE_BODY = "POST-7";
/** Part 1 is `application/json`. */
const RULE_ENVELOPE_PART = "POST-8";
/** Part 2 is `message/rfc822`, byte for byte, with no transfer encoding. */
const RULE_MESSAGE_PART = "POST-9";

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
export const MAX_BOUNDARY_LENGTH = 70;

/** The media type of part 1. */
export const ENVELOPE_PART_TYPE = "application/json";
/** The media type of part 2. */
export const MESSAGE_PART_TYPE = "message/rfc822";

/** RFC 2046 §5.1.1 `bchars`: digits, letters and `'()+_,-./:=?` plus space (not last). */
const BCHARS = /^[0-9A-Za-z'()+_,\-./:=? ]*$/;
/** RFC 2045 §5.1 `token`: US-ASCII printable, no space, no tspecials. */
const TOKEN = /^[!#$%&'*+\-.0-9A-Z^_`a-z{|}~]+$/;
/** {@link TOKEN} for one character, by its code: a table rather than a regular expression per character. */
const TOKEN_CHARS = (() => {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = TOKEN.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
})();
function isTokenChar(code: number): boolean {
  return code < 128 && TOKEN_CHARS[code] === 1;
}
/** RFC 5322 §3.6.8 field-name: printable US-ASCII except colon. */
const FIELD_NAME = /^[!-9;-~]+$/;

/** Transfer encodings that leave the bytes as they are (RFC 2045 §6.1): the only ones part 2 may name. */
const IDENTITY_ENCODINGS = new Set(["7bit", "8bit", "binary"]);

const CR = 0x0d;
const LF = 0x0a;
const HYPHEN = 0x2d;
const SPACE = 0x20;
const TAB = 0x09;

const encoder = new TextEncoder();
/** Part headers are ASCII (RFC 2045) or UTF-8 (RFC 6532); never fatal, a bad byte shows as U+FFFD. */
const decoder = new TextDecoder("utf-8");

/** A media type with its parameters (RFC 2045 §5.1). */
export interface MediaType {
  /** `type/subtype`, lower-cased. */
  readonly type: string;
  /** Parameters by lower-cased name; quoted-string values unquoted. */
  readonly params: Readonly<Record<string, string>>;
}

/** The request's Content-Type: multipart/mixed with its boundary. */
export interface MultipartContentType extends MediaType {
  readonly type: "multipart/mixed";
  readonly boundary: string;
}

/** One header field of a part, unfolded. */
export interface HeaderField {
  /** The name as written. */
  readonly name: string;
  /** The value, unfolded (RFC 5322 §2.2.3: line breaks before whitespace removed) and trimmed. */
  readonly value: string;
}

/** One body part of a multipart entity. */
export interface MultipartPart {
  readonly headers: readonly HeaderField[];
  /**
   * The part's body: the bytes after the blank line that ends its headers, up
   * to (not including) the CRLF that starts the next delimiter. A view into
   * the input, not a copy.
   */
  readonly content: Uint8Array;
}

/** A multipart body split at its delimiters (RFC 2046 §5.1.1 `multipart-body`). */
export interface MultipartSplit {
  /** Bytes before the CRLF that precedes the first delimiter; absent when the body starts with it. */
  readonly preamble?: Uint8Array;
  readonly parts: readonly MultipartPart[];
  /** Bytes after the CRLF that follows the close delimiter; absent when the body ends with it. */
  readonly epilogue?: Uint8Array;
}

/** The two parts of a request body. */
export interface MultipartBody {
  /** Part 1's bytes, for the Envelope parser. A view into the body, like every part here: read them, never write. */
  readonly envelopeJson: Uint8Array;
  /** Part 2's bytes exactly as sent: the RFC 5322 message. */
  readonly message: Uint8Array;
  readonly preamble?: Uint8Array;
  readonly epilogue?: Uint8Array;
}

// ── Boundaries ──────────────────────────────────────────────────────────

/** Why `boundary` is not an RFC 2046 boundary, or `undefined` when it is one. */
export function boundaryProblem(boundary: string): string | undefined {
  if (boundary.length === 0) return "the boundary is empty (RFC 2046: 1 to 70 characters)";
  if (boundary.length > MAX_BOUNDARY_LENGTH) {
    return `the boundary has ${boundary.length} characters, more than the ${MAX_BOUNDARY_LENGTH} RFC 2046 allows`;
  }
  if (!BCHARS.test(boundary)) {
    return "the boundary holds a character outside RFC 2046 bchars (letters, digits, space and '()+_,-./:=?)";
  }
  if (boundary.endsWith(" ")) return "the boundary ends in a space (RFC 2046 forbids it)";
  return undefined;
}

/** Whether `boundary` is a valid RFC 2046 boundary. */
export function isValidBoundary(boundary: string): boolean {
  return boundaryProblem(boundary) === undefined;
}

/**
 * A boundary made from `randomBytes` (the caller's Random port: nothing here
 * draws randomness) that the message does not contain as `--boundary`,
 * which RFC 2046 §5.1.1 requires of the encapsulated material. The first 24
 * bytes are used, as hex after a `mailscope-` prefix: token characters only,
 * so the Content-Type parameter needs no quoting. 16 or more random bytes make
 * a collision practically impossible; should one happen anyway, a counter is
 * appended until the message no longer contains the candidate (it always
 * ends: a message of n bytes holds fewer than n + 1 distinct candidates).
 */
export function chooseBoundary(randomBytes: Uint8Array, message: Uint8Array): string {
  const base = `mailscope-${bytesToHex(randomBytes.subarray(0, 24))}`;
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? base : `${base}.${n}`;
    if (indexOfBytes(message, encoder.encode(`--${candidate}`), 0) === -1) return candidate;
  }
}

// ── Building ────────────────────────────────────────────────────────────

/**
 * The request body of POST /v1/messages and its Content-Type header value:
 * part 1 `application/json` holding the Envelope, part 2 `message/rfc822`
 * holding `message` verbatim (no transfer encoding), CRLF line breaks, no
 * preamble, a CRLF after the close delimiter.
 *
 * `envelope` is serialized with `JSON.stringify`; a string is taken as the
 * JSON text itself, so a scenario can send a malformed envelope on purpose.
 *
 * Throws a {@link ProtocolError} (a caller's mistake, not bad input from the
 * network) when the boundary is not an RFC 2046 boundary or occurs as
 * `--boundary` in the envelope or the message: use {@link chooseBoundary}.
 */
export function buildMultipartBody(
  envelope: unknown,
  message: Uint8Array,
  boundary: string,
): { body: Uint8Array; contentType: string } {
  const problem = boundaryProblem(boundary);
  if (problem !== undefined) {
    throw new ProtocolError([{ path: "boundary", rule: RULE_CONTENT_TYPE, message: problem }]);
  }
  const json = typeof envelope === "string" ? envelope : (JSON.stringify(envelope) as string | undefined);
  if (json === undefined) {
    throw new ProtocolError([
      { path: "envelope", rule: RULE_ENVELOPE_PART, message: "the envelope is not JSON-serializable" },
    ]);
  }
  // ASCII JSON (the usual envelope) is written straight into the body and looked for there: encoded first, it
  // was a buffer of its own, copied into the body (decision 0235).
  const envelopeBytes = isAscii(json) ? undefined : encoder.encode(json);
  const built = multipartBytes(
    [
      { contentType: ENVELOPE_PART_TYPE, bytes: envelopeBytes ?? json },
      { contentType: MESSAGE_PART_TYPE, bytes: message },
    ],
    boundary,
  );
  const envelopeStart = `--${boundary}\r\nContent-Type: ${ENVELOPE_PART_TYPE}\r\n\r\n`.length;
  const written = built.body.subarray(envelopeStart, envelopeStart + (envelopeBytes?.length ?? json.length));
  const findDash = byteSearch(encoder.encode(`--${boundary}`));
  const collisions: Violation[] = [];
  if (findDash(written, 0) !== -1) {
    collisions.push({
      path: "envelope",
      rule: RULE_BODY,
      message: `the envelope contains --${boundary}; choose another boundary`,
    });
  }
  if (findDash(message, 0) !== -1) {
    collisions.push({
      path: "message",
      rule: RULE_BODY,
      message: `the message contains --${boundary}; choose another boundary`,
    });
  }
  if (collisions.length > 0) throw new ProtocolError(collisions);
  return built;
}

/**
 * Any parts in the framing {@link buildMultipartBody} writes (CRLF, no
 * preamble, a CRLF after the close delimiter), each with its Content-Type
 * alone: what a test or `mailscope probe` sends when it wants a body of the
 * wrong shape (three parts, the message first). The boundary is not checked
 * against the parts: a caller that wants it safe uses {@link chooseBoundary}.
 * A part's content is bytes, or text, written as UTF-8.
 */
export function multipartBytes(
  parts: readonly { readonly contentType: string; readonly bytes: Uint8Array | string }[],
  boundary: string,
): { body: Uint8Array; contentType: string } {
  const lines = parts.map(
    (part, i) => `${i === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Type: ${part.contentType}\r\n\r\n`,
  );
  lines.push(`${parts.length === 0 ? "" : "\r\n"}--${boundary}--\r\n`);
  const contentType = `multipart/mixed; boundary=${parameterValue(boundary)}`;
  // Written straight into the body when the framing is ASCII (one character, one byte), as it is with a valid
  // boundary and the usual types: encoding each line first made a buffer of its own per line (decision 0235).
  if (!lines.every((line) => isAscii(line)) || parts.some((p) => typeof p.bytes === "string" && !isAscii(p.bytes))) {
    const chunks: Uint8Array[] = [];
    parts.forEach((part, i) =>
      chunks.push(
        encoder.encode(lines[i] as string),
        typeof part.bytes === "string" ? encoder.encode(part.bytes) : part.bytes,
      ),
    );
    chunks.push(encoder.encode(lines[parts.length] as string));
    return { body: concatBytes(chunks), contentType };
  }
  let length = 0;
  for (const line of lines) length += line.length;
  for (const part of parts) length += part.bytes.length;
  const body = new Uint8Array(length);
  let at = 0;
  parts.forEach((part, i) => {
    at += encoder.encodeInto(lines[i] as string, body.subarray(at)).written;
    if (typeof part.bytes === "string") at += encoder.encodeInto(part.bytes, body.subarray(at)).written;
    else {
      body.set(part.bytes, at);
      at += part.bytes.length;
    }
  });
  encoder.encodeInto(lines[parts.length] as string, body.subarray(at));
  return { body, contentType };
}

// ── Content-Type ────────────────────────────────────────────────────────

/**
 * Parses a media type (RFC 2045 §5.1): `type/subtype` then `; name=value`
 * parameters, values as tokens or quoted-strings. Type and parameter names
 * are case-insensitive and come back lower-cased. A trailing `;` is
 * tolerated (common in the wild); comments, duplicate parameters and RFC 2231
 * continuations are not understood (the latter kept under their own names).
 */
export function parseMediaType(value: string, path: string, rule: string): Parsed<MediaType> {
  // The usual request Content-Type, read before the memo: its boundary is new on every request, so the memo
  // never knew it and only churned (an entry made, hashed and dropped per request; decision 0255).
  const plain = PLAIN_MULTIPART.exec(value);
  const result: MediaType | string =
    plain !== null ? { type: "multipart/mixed", params: { boundary: plain[1] as string } } : scanMediaTypeMemo(value);
  if (typeof result === "string") return fail({ path, rule, message: result });
  return ok(result);
}

/**
 * Parses the request's Content-Type header: it must be `multipart/mixed`
 * (POST-6) with a `boundary` parameter that is an RFC 2046 boundary (G9).
 * `null` (the header is absent) is a violation too.
 */
export function parseContentType(header: string | null): Parsed<MultipartContentType> {
  const path = "headers.Content-Type";
  if (header === null)
    return fail({
      path,
      rule: RULE_CONTENT_TYPE,
      message: "the Content-Type header is missing; it must be multipart/mixed",
    });
  const parsed = parseMediaType(header, path, RULE_CONTENT_TYPE);
  if (!parsed.ok) return parsed;
  const { type, params } = parsed.value;
  if (type !== "multipart/mixed") {
    return fail({ path, rule: RULE_CONTENT_TYPE, message: `the Content-Type is ${type}; it must be multipart/mixed` });
  }
  const boundary = params["boundary"];
  if (boundary === undefined) {
    return fail({ path, rule: RULE_CONTENT_TYPE, message: "multipart/mixed without a boundary parameter" });
  }
  const problem = boundaryProblem(boundary);
  if (problem !== undefined) return fail({ path, rule: RULE_CONTENT_TYPE, message: `${problem} (G9)` });
  return ok({ type: "multipart/mixed", boundary, params });
}

// ── Parsing ─────────────────────────────────────────────────────────────

/**
 * Splits and checks the request body of POST /v1/messages against its
 * Content-Type header value: exactly two parts, in order, part 1
 * `application/json` and part 2 `message/rfc822` (types compared
 * case-insensitively, parameters such as `charset` allowed), each with one
 * Content-Type header (other part headers ignored, G9), part 2 without a
 * transfer encoding other than the identity ones. Part 2 comes back byte for
 * byte. `contentType` is the header's value, or what {@link parseContentType} made of it already (the receiver
 * parses it with the other headers). The parts are views into `body`, not copies: a caller that keeps one
 * keeps the body, and nobody may write into either. Every violation found is
 * reported; the parser never throws.
 */
export function parseMultipartBody(
  body: Uint8Array,
  contentType: string | MultipartContentType,
): Parsed<MultipartBody> {
  const type = typeof contentType === "string" ? parseContentType(contentType) : ok(contentType);
  if (!type.ok) return type;
  const split = splitMultipart(body, type.value.boundary, "body", RULE_BODY);
  if (!split.ok) return split;
  const { parts, preamble, epilogue } = split.value;

  const violations: Violation[] = [];
  if (parts.length !== 2) {
    violations.push({
      path: "body",
      rule: RULE_BODY,
      message: `the body has ${parts.length} part${parts.length === 1 ? "" : "s"}; it must have exactly two (application/json, then message/rfc822)`,
    });
  }
  const [envelopePart, messagePart] = parts;
  if (envelopePart !== undefined) checkPartType(envelopePart, 0, ENVELOPE_PART_TYPE, RULE_ENVELOPE_PART, violations);
  if (messagePart !== undefined) {
    checkPartType(messagePart, 1, MESSAGE_PART_TYPE, RULE_MESSAGE_PART, violations);
    const encodings = messagePart.headers.filter((h) => h.name.toLowerCase() === "content-transfer-encoding");
    for (const encoding of encodings) {
      if (!IDENTITY_ENCODINGS.has(encoding.value.toLowerCase())) {
        violations.push({
          path: "body.part[1].Content-Transfer-Encoding",
          rule: RULE_MESSAGE_PART,
          message: `the message part names transfer encoding ${encoding.value}; it must be carried byte for byte with none`,
        });
      }
    }
  }
  if (violations.length > 0 || envelopePart === undefined || messagePart === undefined) return failWith(violations);

  // Views, not copies: a 25 MiB message part would otherwise cost its size a second time.
  return ok({
    envelopeJson: envelopePart.content,
    message: messagePart.content,
    ...(preamble !== undefined ? { preamble } : {}),
    ...(epilogue !== undefined ? { epilogue } : {}),
  });
}

/**
 * Splits a multipart body at its delimiters (RFC 2046 §5.1.1) with CRLF line
 * breaks: an optional preamble ending in CRLF, `--boundary` lines (optional
 * trailing spaces or tabs, then CRLF), each part's header block and blank
 * line, the close delimiter `--boundary--`, an optional CRLF and epilogue.
 *
 * A line that starts with `--boundary` is a delimiter whatever follows
 * (RFC 2046: "it is sufficient that the boundary appear in its entirety
 * following the CRLF"), so `--boundaryX` is a malformed delimiter, not
 * content. A bare LF never ends a line here; where one stands in for CRLF the
 * violation says so. The parts' contents are views into `body`.
 *
 * `path` names the body in violations (parts are `path.part[i]`), `rule` is
 * the rule broken by a malformed framing.
 */
export function splitMultipart(body: Uint8Array, boundary: string, path: string, rule: string): Parsed<MultipartSplit> {
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  const dash = delimiter.subarray(2);
  const findDelimiter = byteSearch(delimiter);

  // The first dash-boundary sits at offset 0 or right after the preamble's CRLF.
  let preamble: Uint8Array | undefined;
  let at: number;
  if (startsWithAt(body, dash, 0)) {
    at = 0;
  } else {
    const found = findDelimiter(body, 0);
    if (found === -1) {
      const bareLf = indexOfBytes(body, concatBytes([Uint8Array.of(LF), dash]), 0) !== -1;
      return fail({
        path,
        rule,
        message: bareLf
          ? `no line starts with --${boundary} after a CRLF; the body uses bare LF line breaks, but G9 requires CRLF`
          : `the body holds no delimiter line --${boundary}`,
      });
    }
    preamble = body.subarray(0, found);
    at = found + 2;
  }

  const parts: MultipartPart[] = [];
  const violations: Violation[] = [];
  for (;;) {
    // `at` points at a dash-boundary at the start of a line.
    let p = at + dash.length;
    if (body[p] === HYPHEN && body[p + 1] === HYPHEN) {
      if (parts.length === 0)
        return fail({
          path,
          rule,
          message: `the first delimiter is already the close delimiter --${boundary}--: there are no parts`,
        });
      p += 2;
      p = skipPadding(body, p);
      let epilogue: Uint8Array | undefined;
      if (p < body.length) {
        if (body[p] === CR && body[p + 1] === LF) epilogue = body.subarray(p + 2);
        else return fail({ path, rule, message: lineEndProblem(body, p, `the close delimiter --${boundary}--`) });
      }
      if (violations.length > 0) return failWith(violations);
      return ok({
        ...(preamble !== undefined ? { preamble } : {}),
        parts,
        ...(epilogue !== undefined ? { epilogue } : {}),
      });
    }
    p = skipPadding(body, p);
    if (!(body[p] === CR && body[p + 1] === LF)) {
      return fail({ path, rule, message: lineEndProblem(body, p, `the delimiter line --${boundary}`) });
    }
    const start = p + 2;
    const next = findDelimiter(body, start);
    const partPath = `${path}.part[${parts.length}]`;
    if (next === -1) {
      return fail({
        path,
        rule,
        message: `part ${parts.length} is not followed by another delimiter: the close delimiter --${boundary}-- is missing`,
      });
    }
    const part = readPart(body.subarray(start, next), partPath, rule);
    if (part.ok) parts.push(part.value);
    else {
      for (const v of part.violations) violations.push(v);
      parts.push({ headers: [], content: body.subarray(start, next) });
    }
    at = next + 2;
  }
}

/**
 * Parses a header block (RFC 5322 §2.2 / RFC 2045): fields `name: value`
 * separated by CRLF, continuation lines starting with space or tab. `bytes`
 * may end with the CRLF of its last field; the blank line is not part of it.
 * A bare CR or LF, a line without a colon or a continuation with nothing to
 * continue is a violation at `path`.
 */
export function parseHeaderBlock(bytes: Uint8Array, path: string, rule: string): Parsed<HeaderField[]> {
  for (const usual of USUAL_PART_HEADERS) if (bytesEqual(bytes, usual.bytes)) return ok([usual.field]);
  let text = decoder.decode(bytes);
  if (text.endsWith("\r\n")) text = text.slice(0, -2);
  if (text.length === 0) return ok([]);
  const fields: HeaderField[] = [];
  const violations: Violation[] = [];
  let current: { name: string; value: string } | undefined;
  const flush = (): void => {
    if (current !== undefined) fields.push({ name: current.name, value: current.value.trim() });
    current = undefined;
  };
  for (const line of text.split("\r\n")) {
    if (/[\r\n]/.test(line)) {
      violations.push({ path, rule, message: "a header line holds a bare CR or LF; G9 requires CRLF line breaks" });
      continue;
    }
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (current === undefined)
        violations.push({ path, rule, message: "the header block starts with a continuation line" });
      else current.value += line;
      continue;
    }
    flush();
    const colon = line.indexOf(":");
    const name = colon === -1 ? "" : line.slice(0, colon);
    if (colon === -1 || !FIELD_NAME.test(name)) {
      violations.push({ path, rule, message: `not a header field: ${JSON.stringify(line.slice(0, 60))}` });
      continue;
    }
    current = { name, value: line.slice(colon + 1) };
  }
  flush();
  if (violations.length > 0) return failWith(violations);
  return ok(fields);
}

/**
 * The first index at or after `from` where `needle` occurs in `haystack`, or
 * -1. A short needle jumps between occurrences of its first byte with the
 * native `indexOf`; a longer one (a multipart delimiter) is found by
 * {@link byteSearch}'s skips. Either way the cost is about one pass plus a
 * short comparison per candidate. To look for one needle several times,
 * build its search once with {@link byteSearch}.
 */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  return byteSearch(needle)(haystack, from);
}

/** Finds a needle in a haystack from an index on: the index of the first occurrence, or -1. */
export type ByteSearch = (haystack: Uint8Array, from: number) => number;

/** From this needle length on, {@link byteSearch} skips (Horspool) instead of jumping between first bytes. */
const SKIP_MIN = 8;

/**
 * The search for `needle` (copied: changing the array afterwards does not
 * change what is searched for), to run on any number of haystacks.
 *
 * From {@link SKIP_MIN} bytes on it is Horspool's algorithm on pairs of
 * bytes: the window moves by how far the pair of bytes at its end lies from
 * the needle's end, so that in ordinary text, where the pair is rarely one of
 * the needle's, it moves by nearly the needle's length at every step, even
 * when the text shares most of its letters with the needle (hex digits, as in
 * a boundary Mailscope chooses). The pairs are looked up in a hashed table of
 * 1024 shifts; pairs that share an entry get the smaller shift, which is
 * always safe.
 */
export function byteSearch(needle: Uint8Array): ByteSearch {
  const own = needle.slice();
  const n = own.length;
  if (n === 0) return (haystack, from) => (from <= haystack.length ? from : -1);
  if (n < SKIP_MIN) return (haystack, from) => firstByteSearch(haystack, own, from);
  let stamp = 0;
  return (haystack, from) => {
    if (from < 0) return firstByteSearch(haystack, own, from);
    if (tableNeedle !== own) stamp = holdShifts(own);
    return pairSkipSearch(haystack, own, stamp, from);
  };
}

/**
 * {@link byteSearch}'s loop for a needle of {@link SKIP_MIN} bytes or more, whose shifts {@link SHIFTS} holds
 * under `stamp`: a function of this module, not of the closure each needle gets, so that V8 keeps its optimized
 * code from one message to the next (a closure's is dropped with the closure; decision 0200).
 */
function pairSkipSearch(haystack: Uint8Array, needle: Uint8Array, stamp: number, from: number): number {
  const lastIndex = needle.length - 1;
  const lastByte = needle[lastIndex] as number;
  const end = haystack.length - needle.length;
  let i = from;
  while (i <= end) {
    const b = haystack[i + lastIndex] as number;
    if (b === lastByte) {
      let j = 0;
      while (j < lastIndex && haystack[i + j] === needle[j]) j++;
      if (j === lastIndex) return i;
    }
    const entry = SHIFTS[pairHash(haystack[i + lastIndex - 1] as number, b)] as number;
    i += entry >>> 8 === stamp ? entry & 0xff : lastIndex;
  }
  return -1;
}

const PAIR_TABLE_SIZE = 1024;

/** A pair of bytes as an index into a table of {@link PAIR_TABLE_SIZE} entries (ten bits: all of an ASCII pair's). */
function pairHash(a: number, b: number): number {
  return ((a << 3) ^ b) & (PAIR_TABLE_SIZE - 1);
}

/**
 * The shifts of {@link byteSearch}, one table for every needle, each entry a stamp (24 bits) and a shift (8
 * bits): an entry holds a shift for the needle whose stamp it bears, and for any other needle it holds none,
 * which moves the window by the needle's last index. A table of its own per needle, 1 KiB, was a buffer
 * outside V8's heap per search, three per POST, whose allocation and collection cost ~1 % of a fleet's CPU
 * (decision 0235); stamping a needle's own entries costs its length, not the table's.
 */
const SHIFTS = new Uint32Array(PAIR_TABLE_SIZE);
/** The needle whose stamp is the latest in {@link SHIFTS}. */
let tableNeedle: Uint8Array | undefined;
/** The latest stamp given. */
let lastStamp = 0;

/**
 * Stamps `needle`'s shifts into {@link SHIFTS} under a new stamp and returns it: when the window ends in the
 * pair at needle[j-1], needle[j] (j < the last index), the last index minus j, the last such j winning (pairs
 * that share an entry get the smaller shift, which is always safe); a shift past 255 is kept as 255, smaller
 * and so safe too.
 */
function holdShifts(needle: Uint8Array): number {
  if (lastStamp === 0xffffff) {
    SHIFTS.fill(0);
    lastStamp = 0;
  }
  const stamp = ++lastStamp;
  const lastIndex = needle.length - 1;
  for (let j = 1; j < lastIndex; j++) {
    SHIFTS[pairHash(needle[j - 1] as number, needle[j] as number)] = stamp * 256 + Math.min(lastIndex - j, 0xff);
  }
  tableNeedle = needle;
  return stamp;
}

/** The search for a short needle: from one occurrence of its first byte (native `indexOf`) to the next. */
function firstByteSearch(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const n = needle.length;
  const first = needle[0] as number;
  const last = haystack.length - n;
  let i = from;
  while (i <= last) {
    i = haystack.indexOf(first, i);
    if (i === -1 || i > last) return -1;
    let j = 1;
    while (j < n && haystack[i + j] === needle[j]) j++;
    if (j === n) return i;
    i++;
  }
  return -1;
}

/** The bytes of several arrays, one after another, in one new array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** A parameter value as a token when it is one, else as a quoted-string (RFC 2045 §5.1). */
export function parameterValue(value: string): string {
  return TOKEN.test(value) ? value : `"${value.replace(/(["\\])/g, "\\$1")}"`;
}

// ── Internals ───────────────────────────────────────────────────────────

/**
 * The header blocks {@link buildMultipartBody} writes for its two parts, with the one field each parses to: a part
 * of every POST's body is one of them, found by comparing bytes rather than decoding, splitting and matching its
 * line (decision 0255).
 */
const USUAL_PART_HEADERS: readonly { readonly bytes: Uint8Array; readonly field: HeaderField }[] = [
  ENVELOPE_PART_TYPE,
  MESSAGE_PART_TYPE,
].map((type) => ({
  bytes: encoder.encode(`Content-Type: ${type}\r\n`),
  field: Object.freeze({ name: "Content-Type", value: type }),
}));

/** The blank line that ends a part's header block, looked for once per part. */
const findBlankLine = byteSearch(Uint8Array.of(CR, LF, CR, LF));

/** Splits one part (the bytes between a delimiter line's CRLF and the next delimiter's CRLF). */
function readPart(span: Uint8Array, path: string, rule: string): Parsed<MultipartPart> {
  // No header lines: the part starts with the blank line.
  if (span[0] === CR && span[1] === LF) return ok({ headers: [], content: span.subarray(2) });
  const blank = findBlankLine(span, 0);
  // Headers only, no blank line and no body (RFC 2046 `body-part := MIME-part-headers [CRLF *OCTET]`).
  const headerBytes = blank === -1 ? span : span.subarray(0, blank + 2);
  const content = blank === -1 ? span.subarray(span.length) : span.subarray(blank + 4);
  const headers = parseHeaderBlock(headerBytes, path, rule);
  if (!headers.ok) return headers;
  return ok({ headers: headers.value, content });
}

/** Checks that a part has exactly one Content-Type and that it names `expected`. */
function checkPartType(
  part: MultipartPart,
  index: number,
  expected: string,
  rule: string,
  violations: Violation[],
): void {
  const path = `body.part[${index}].Content-Type`;
  const types = part.headers.filter((h) => h.name.toLowerCase() === "content-type");
  const [only] = types;
  if (only === undefined) {
    violations.push({ path, rule, message: `part ${index + 1} has no Content-Type; it must be ${expected}` });
    return;
  }
  if (types.length > 1) {
    violations.push({
      path,
      rule,
      message: `part ${index + 1} has ${types.length} Content-Type headers; it must have one`,
    });
    return;
  }
  const parsed = parseMediaType(only.value, path, rule);
  if (!parsed.ok) {
    pushAll(violations, parsed.violations);
    return;
  }
  if (parsed.value.type !== expected) {
    violations.push({ path, rule, message: `part ${index + 1} is ${parsed.value.type}; it must be ${expected}` });
  }
}

function startsWithAt(haystack: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at + needle.length > haystack.length) return false;
  for (let j = 0; j < needle.length; j++) if (haystack[at + j] !== needle[j]) return false;
  return true;
}

/** RFC 2046 transport-padding: linear white space after a delimiter. */
function skipPadding(body: Uint8Array, p: number): number {
  while (body[p] === SPACE || body[p] === TAB) p++;
  return p;
}

/** Says what stands where a delimiter line should end in CRLF. */
function lineEndProblem(body: Uint8Array, p: number, what: string): string {
  if (p >= body.length) return `${what} is not followed by CRLF: the body ends there`;
  if (body[p] === LF) return `${what} ends in a bare LF; G9 requires CRLF line breaks`;
  return `${what} is followed by other characters; a delimiter line holds only the boundary (RFC 2046), and the content must not contain it`;
}

/**
 * {@link scanMediaType}, remembered for recent values up to 1 KiB (a receiver reads the same few, its
 * Content-Type and the parts', on every request); the results are frozen, since callers share them.
 */
const scanMediaTypeMemo = keptAnswers(
  (input: string): MediaType | string => {
    const scanned = scanMediaType(input);
    return typeof scanned === "string" ? scanned : Object.freeze({ ...scanned, params: Object.freeze(scanned.params) });
  },
  64,
  1024,
);

/** Up to this many parameters, a repeated name is looked for by walking them. */
const WALKED_PARAMETERS = 8;

/**
 * The Content-Type a sender writes (ours among them), `multipart/mixed; boundary=` and a token: what
 * {@link scanMediaType} would make of it, read by one regular expression in {@link parseMediaType}, before the memo.
 * Its boundary is new on every request, so the memo never knows it, and the scanner's character loop cost ~1 % of a
 * fleet's CPU (decision 0235).
 */
const PLAIN_MULTIPART = /^multipart\/mixed; boundary=([!#$%&'*+\-.0-9A-Z^_`a-z{|}~]+)$/;

/** RFC 2045 §5.1 media type scanner; returns an error text when the value is malformed. */
function scanMediaType(input: string): MediaType | string {
  // Headers reach us unfolded or folded; either way CRLF before whitespace is folding.
  const value = input.includes("\r\n") ? input.replace(/\r\n(?=[ \t])/g, "") : input;
  let i = 0;
  const skipWsp = (): void => {
    while (value[i] === " " || value[i] === "\t") i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < value.length && isTokenChar(value.charCodeAt(i))) i++;
    return value.slice(start, i);
  };
  skipWsp();
  const type = readToken();
  if (type === "" || value[i] !== "/") return `not a media type: ${JSON.stringify(input)}`;
  i++;
  const subtype = readToken();
  if (subtype === "") return `not a media type: ${JSON.stringify(input)}`;
  // Usually few enough to look for a repeated name by walking them; past a handful, in a set, so that a
  // header of many parameters costs linear time, not quadratic.
  const params: [name: string, value: string][] = [];
  let names: Set<string> | undefined;
  skipWsp();
  while (i < value.length) {
    if (value[i] !== ";") return `unexpected ${JSON.stringify(value[i])} in media type ${JSON.stringify(input)}`;
    i++;
    skipWsp();
    if (i >= value.length) break; // a trailing ";"
    const name = readToken().toLowerCase();
    if (name === "") return `a parameter without a name in ${JSON.stringify(input)}`;
    skipWsp();
    if (value[i] !== "=") return `parameter ${name} has no value in ${JSON.stringify(input)}`;
    i++;
    skipWsp();
    let parameter: string;
    if (value[i] === '"') {
      i++;
      parameter = "";
      for (;;) {
        // A run of plain characters at once; quotes and backslashes one at a time.
        let run = i;
        while (run < value.length && value.charCodeAt(run) !== 0x22 && value.charCodeAt(run) !== 0x5c) run++;
        if (run > i) {
          parameter += value.slice(i, run);
          i = run;
        }
        const c = value[i];
        if (c === undefined) return `unterminated quoted string in ${JSON.stringify(input)}`;
        i++;
        if (c === '"') break;
        if (c === "\\") {
          const escaped = value[i];
          if (escaped === undefined) return `unterminated quoted string in ${JSON.stringify(input)}`;
          parameter += escaped;
          i++;
        } else {
          parameter += c;
        }
      }
    } else {
      parameter = readToken();
      if (parameter === "") return `parameter ${name} has an empty or malformed value in ${JSON.stringify(input)}`;
    }
    const repeated = names !== undefined ? names.has(name) : params.some(([known]) => known === name);
    if (repeated) return `parameter ${name} appears twice in ${JSON.stringify(input)}`;
    params.push([name, parameter]);
    if (names !== undefined) names.add(name);
    else if (params.length >= WALKED_PARAMETERS) names = new Set(params.map(([known]) => known));
    skipWsp();
  }
  // fromEntries defines each name as an own property, `__proto__` too.
  return { type: `${type}/${subtype}`.toLowerCase(), params: Object.fromEntries(params) };
}
