/**
 * Reads an HTTP/1.1 request as captured in a file (RFC 9112): the request
 * line, the header section and the body, into a web `Request` for the
 * receiver and an exact view of its field lines for signature checks.
 *
 * Liberal in what it reads, since captures are edited by hand and pass
 * through editors: CRLF or bare LF line ends, empty lines before the request
 * line, obs-fold continuation lines (unfolded to one space, RFC 9112 §5.2),
 * a trailing newline after a Content-Length body. Strict where a receiver
 * would be: a missing Host, a Content-Length that disagrees with itself or
 * with the bytes, a malformed chunk. Every problem names its line.
 */
import type { HttpMessageView } from "../protocol/signature.ts";
import { errorMessage } from "../errorMessage.ts";
import { bytesToBinary } from "../protocol/base64.ts";

/** A problem with the input, at a 1-based line of the file. */
export interface RawHttpProblem {
  readonly line: number;
  readonly message: string;
}

/** A request read from raw HTTP/1.1 text. */
export interface RawHttpRequest {
  readonly method: string;
  /** The request-target as written on the request line. */
  readonly target: string;
  /** `HTTP/1.1` */
  readonly version: string;
  /** The absolute target URI: scheme, Host and target (RFC 9110 §7.1), as written (not normalized). */
  readonly url: string;
  /** Every field line in order, names as written, obs-fold unfolded. */
  readonly headers: readonly (readonly [string, string])[];
  /** Trailer fields of a chunked body, if any. */
  readonly trailers: readonly (readonly [string, string])[];
  /** The body: Content-Length bytes, or the chunked body decoded. */
  readonly body: Uint8Array<ArrayBuffer>;
  /** The 1-based line on which the body starts. */
  readonly bodyLine: number;
  /** What was tolerated: bare LFs, obs-fold, bytes after the body… */
  readonly warnings: readonly RawHttpProblem[];
  /** The message as RFC 9421 sees it: method, target URI and field lines, exactly. */
  readonly view: HttpMessageView;
  /** A web Request with the same method, URI, headers (combined by `Headers`) and body. */
  readonly request: Request;
}

/** The outcome of {@link parseRawHttpRequest}. */
export type RawHttpParse =
  | { readonly ok: true; readonly value: RawHttpRequest }
  | { readonly ok: false; readonly errors: readonly RawHttpProblem[]; readonly warnings: readonly RawHttpProblem[] };

/** What {@link parseRawHttpRequest} may be told. */
export interface RawHttpOptions {
  /** The scheme of the target URI for an origin-form target; default `https` (the service is HTTPS only). */
  readonly scheme?: "https" | "http";
  /** The authority to use when the request has no Host field; without it a missing Host is an error. */
  readonly defaultAuthority?: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Methods fetch refuses to carry (Fetch §2.2.2 forbidden methods). */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * Parses one HTTP/1.1 request from its bytes. Never throws: every problem
 * comes back with its line; a request comes back only when there is none.
 */
export function parseRawHttpRequest(bytes: Uint8Array, options: RawHttpOptions = {}): RawHttpParse {
  const errors: RawHttpProblem[] = [];
  const warnings: RawHttpProblem[] = [];
  const lineStarts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineStarts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const failed = (): RawHttpParse => ({ ok: false, errors, warnings });

  // ── Head: lines up to the first empty one ──────────────────────────
  let offset = 0;
  let sawBareLf = false;
  const readLine = (): { text: string; line: number; next: number } | undefined => {
    if (offset >= bytes.length) return undefined;
    const lf = bytes.indexOf(0x0a, offset);
    const end = lf < 0 ? bytes.length : lf;
    const hasCr = end > offset && bytes[end - 1] === 0x0d;
    if (lf >= 0 && !hasCr) sawBareLf = true;
    const text = bytesToBinary(bytes.subarray(offset, hasCr ? end - 1 : end));
    const line = lineAt(offset);
    const next = lf < 0 ? bytes.length : lf + 1;
    return { text, line, next };
  };

  // RFC 9112 §2.2: empty lines before the request line are ignored.
  let first = readLine();
  while (first !== undefined && first.text === "") {
    offset = first.next;
    first = readLine();
  }
  if (first === undefined) {
    errors.push({ line: 1, message: "the file is empty: expected a request line such as POST /v1/messages HTTP/1.1" });
    return failed();
  }
  offset = first.next;
  const requestLine = /^([^ ]+) ([^ ]+) (HTTP\/[0-9](?:\.[0-9])?)$/.exec(first.text);
  if (requestLine === null) {
    errors.push({
      line: first.line,
      message: `not a request line (method SP request-target SP HTTP-version): ${JSON.stringify(first.text.slice(0, 120))}`,
    });
    return failed();
  }
  const [, method = "", target = "", version = ""] = requestLine;
  if (!TOKEN.test(method))
    errors.push({ line: first.line, message: `the method ${JSON.stringify(method)} is not a token` });
  if (version !== "HTTP/1.1") warnings.push({ line: first.line, message: `${version}: read as HTTP/1.1` });

  const headers: [string, string][] = [];
  const headerLines: number[] = [];
  let endOfHead = false;
  for (let l = readLine(); l !== undefined; l = readLine()) {
    offset = l.next;
    if (l.text === "") {
      endOfHead = true;
      break;
    }
    if (/^[ \t]/.test(l.text)) {
      const last = headers.length - 1;
      const previous = headers[last];
      if (previous === undefined) {
        errors.push({ line: l.line, message: "a continuation line (starting with a space) before any header field" });
        continue;
      }
      // RFC 9112 §5.2: obs-fold is replaced by one SP.
      headers[last] = [previous[0], `${previous[1]} ${l.text.trim()}`.trim()];
      warnings.push({
        line: l.line,
        message: `obsolete line folding (obs-fold) in ${previous[0]}: unfolded with one space`,
      });
      continue;
    }
    const colon = l.text.indexOf(":");
    if (colon <= 0) {
      errors.push({
        line: l.line,
        message: `not a header field (name: value): ${JSON.stringify(l.text.slice(0, 120))}`,
      });
      continue;
    }
    const name = l.text.slice(0, colon);
    if (/[ \t]$/.test(name)) {
      errors.push({
        line: l.line,
        message: `whitespace between the field name ${JSON.stringify(name.trimEnd())} and the colon (RFC 9112 §5.1)`,
      });
      continue;
    }
    if (!TOKEN.test(name)) {
      errors.push({ line: l.line, message: `the field name ${JSON.stringify(name)} is not a token` });
      continue;
    }
    const value = l.text.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (/[\0\r\n]/.test(value)) {
      errors.push({ line: l.line, message: `the value of ${name} holds a NUL or a bare CR` });
      continue;
    }
    headers.push([name, value]);
    headerLines.push(l.line);
  }
  if (!endOfHead) {
    errors.push({
      line: lineAt(Math.max(0, bytes.length - 1)),
      message: "the header section does not end with an empty line",
    });
  }
  if (sawBareLf) warnings.push({ line: first.line, message: "lines end with a bare LF instead of CRLF: read anyway" });

  const fieldLine = (name: string): number => {
    const index = headers.findIndex(([n]) => n.toLowerCase() === name);
    return headerLines[index] ?? first.line;
  };
  const values = (name: string): string[] => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  const head: ParsedHead = { errors, warnings, lineAt, fieldLine, values };

  // ── Target URI (RFC 9110 §7.1) ──────────────────────────────────────
  const url = targetUrl(target, first.line, options, head);

  // ── Body (RFC 9112 §6) ──────────────────────────────────────────────
  const bodyLine = lineAt(Math.min(offset, Math.max(0, bytes.length - 1)));
  const rest = bytes.subarray(offset);
  const trailers: [string, string][] = [];
  const body = readBody(rest, offset, bodyLine, head, trailers);

  if (FORBIDDEN_METHODS.has(method.toUpperCase())) {
    errors.push({ line: first.line, message: `${method} requests cannot be represented as a fetch Request` });
  }
  if (errors.length > 0 || url === undefined) return failed();

  const view: HttpMessageView = { method, url, headers };
  let request: Request;
  try {
    const canHaveBody = !["GET", "HEAD"].includes(method.toUpperCase());
    if (!canHaveBody && body.length > 0)
      warnings.push({ line: bodyLine, message: `a ${method} request's body is not passed on` });
    request = new Request(url, {
      method,
      headers: headers.map(([n, v]): [string, string] => [n, v]),
      ...(canHaveBody && body.length > 0 && { body }),
    });
  } catch (error) {
    errors.push({
      line: first.line,
      message: `cannot be made into a fetch Request: ${errorMessage(error)}`,
    });
    return failed();
  }
  return {
    ok: true,
    value: { method, target, version, url, headers, trailers, body, bodyLine, warnings, view, request },
  };
}

/** What the head's reading gathers, and how to find a field's line and values in it. */
interface ParsedHead {
  readonly errors: RawHttpProblem[];
  readonly warnings: RawHttpProblem[];
  /** The line of a byte offset. */
  readonly lineAt: (offset: number) => number;
  /** The line of the first field `name` (lower case), or the request line's. */
  readonly fieldLine: (name: string) => number;
  /** The values of the fields `name` (lower case), in order. */
  readonly values: (name: string) => string[];
}

/** The target URI (RFC 9110 §7.1) of the request target and Host, or undefined (with an error) when there is none. */
function targetUrl(target: string, requestLine: number, options: RawHttpOptions, head: ParsedHead): string | undefined {
  const { errors, warnings, fieldLine, values } = head;
  const hosts = values("host");
  let url: string | undefined;
  if (hosts.length > 1) errors.push({ line: fieldLine("host"), message: "more than one Host field (RFC 9112 §3.2)" });
  const authority = hosts[0] ?? options.defaultAuthority;
  if (target.startsWith("/")) {
    if (authority === undefined) {
      errors.push({
        line: requestLine,
        message: "no Host field, so the target URI is unknown (RFC 9112 §3.2); add one",
      });
    } else {
      const raw = `${options.scheme ?? "https"}://${authority}${target}`;
      url = tryUrl(raw) === undefined ? undefined : raw;
      if (url === undefined)
        errors.push({
          line: hosts.length > 0 ? fieldLine("host") : requestLine,
          message: `Host ${JSON.stringify(authority)} and target ${JSON.stringify(target)} do not form a URI`,
        });
    }
  } else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(target)) {
    url = tryUrl(target) === undefined ? undefined : target;
    if (url === undefined)
      errors.push({ line: requestLine, message: `the absolute target ${JSON.stringify(target)} is not a URI` });
    else if (authority !== undefined && new URL(url).host !== authority.toLowerCase()) {
      warnings.push({
        line: fieldLine("host"),
        message: `Host ${authority} differs from the target's authority; the target wins (RFC 9112 §3.2.2)`,
      });
    }
  } else {
    errors.push({
      line: requestLine,
      message: `the request target ${JSON.stringify(target)} is neither a path (/…) nor an absolute URI`,
    });
  }
  return url;
}

/**
 * The body (RFC 9112 §6) of the bytes `rest` after the head (at `offset`), by Transfer-Encoding (chunked, its
 * trailers into `trailers`) or Content-Length; without either, none.
 */
function readBody(
  rest: Uint8Array,
  offset: number,
  bodyLine: number,
  head: ParsedHead,
  trailers: [string, string][],
): Uint8Array<ArrayBuffer> {
  const { errors, warnings, lineAt, fieldLine, values } = head;
  let body: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  const te = values("transfer-encoding");
  const cl = values("content-length");
  if (te.length > 0) {
    const codings = te
      .join(",")
      .split(",")
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c !== "");
    if (cl.length > 0)
      warnings.push({
        line: fieldLine("content-length"),
        message: "both Transfer-Encoding and Content-Length: Transfer-Encoding wins (RFC 9112 §6.3)",
      });
    if (codings[codings.length - 1] !== "chunked") {
      errors.push({
        line: fieldLine("transfer-encoding"),
        message: `Transfer-Encoding ${te.join(", ")} does not end in chunked, so the body has no length (RFC 9112 §6.3)`,
      });
    } else if (codings.length > 1) {
      errors.push({
        line: fieldLine("transfer-encoding"),
        message: `only chunked can be decoded here, not ${codings.slice(0, -1).join(", ")}`,
      });
    } else {
      const decoded = decodeChunked(rest, offset, lineAt, trailers);
      if (decoded.error !== undefined) errors.push(decoded.error);
      else {
        body = decoded.body;
        noteTrailing(rest.subarray(decoded.consumed), offset + decoded.consumed, lineAt, warnings);
      }
    }
  } else if (cl.length > 0) {
    const parts = cl
      .join(",")
      .split(",")
      .map((p) => p.trim());
    const line = fieldLine("content-length");
    if (!parts.every((p) => /^[0-9]+$/.test(p))) {
      errors.push({ line, message: `Content-Length ${JSON.stringify(cl.join(", "))} is not a number` });
    } else if (new Set(parts.map(Number)).size > 1) {
      errors.push({ line, message: `Content-Length has different values: ${parts.join(", ")}` });
    } else {
      const length = Number(parts[0]);
      if (rest.length < length) {
        errors.push({
          line,
          message: `Content-Length is ${length} but only ${rest.length} bytes follow the header section (line ${bodyLine} on)`,
        });
      } else {
        body = rest.slice(0, length);
        noteTrailing(rest.subarray(length), offset + length, lineAt, warnings);
      }
    }
  } else if (rest.length > 0) {
    if (isOnlyNewlines(rest)) {
      warnings.push({ line: bodyLine, message: "newlines after the header section ignored: the request has no body" });
    } else {
      warnings.push({
        line: bodyLine,
        message: `${rest.length} bytes after the header section are ignored: without Content-Length or Transfer-Encoding a request has no body (RFC 9112 §6.3)`,
      });
    }
  }
  return body;
}

/** `file:line: message` for each problem. */
export function formatRawHttpProblems(file: string, problems: readonly RawHttpProblem[]): string[] {
  return problems.map((p) => `${file}:${p.line}: ${p.message}`);
}

/**
 * A web Request as raw HTTP/1.1 bytes, the form {@link parseRawHttpRequest}
 * reads: origin-form target, Host from the URL, the headers (names in
 * Title-Case), Content-Length, CRLF line ends, the body. Reads the body.
 */
export async function serializeHttpRequest(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  const url = new URL(request.url);
  const body = new Uint8Array(await request.arrayBuffer());
  const lines = [`${request.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [name, value] of request.headers) {
    if (name === "host" || name === "content-length" || name === "transfer-encoding") continue;
    lines.push(`${name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())}: ${value}`);
  }
  if (body.length > 0 || !["GET", "HEAD"].includes(request.method)) lines.push(`Content-Length: ${body.length}`);
  const head = `${lines.join("\r\n")}\r\n\r\n`;
  const out = new Uint8Array(head.length + body.length);
  for (let i = 0; i < head.length; i++) out[i] = head.charCodeAt(i) & 0xff;
  out.set(body, head.length);
  return out;
}

function decodeChunked(
  data: Uint8Array,
  base: number,
  lineAt: (offset: number) => number,
  trailers: [string, string][],
): { body: Uint8Array<ArrayBuffer>; consumed: number; error?: undefined } | { error: RawHttpProblem } {
  const chunks: Uint8Array[] = [];
  let at = 0;
  const line = (): { text: string; next: number } | undefined => {
    const lf = data.indexOf(0x0a, at);
    if (lf < 0) return undefined;
    const end = lf > at && data[lf - 1] === 0x0d ? lf - 1 : lf;
    return { text: bytesToBinary(data.subarray(at, end)), next: lf + 1 };
  };
  for (;;) {
    const sizeLine = line();
    if (sizeLine === undefined)
      return { error: { line: lineAt(base + at), message: "the chunked body ends before its last chunk (0)" } };
    const match = /^([0-9A-Fa-f]+)[ \t]*(?:;.*)?$/.exec(sizeLine.text);
    if (match === null)
      return {
        error: {
          line: lineAt(base + at),
          message: `not a chunk size line: ${JSON.stringify(sizeLine.text.slice(0, 60))}`,
        },
      };
    const size = parseInt(match[1] ?? "0", 16);
    at = sizeLine.next;
    if (size === 0) break;
    if (at + size > data.length) {
      return {
        error: {
          line: lineAt(base + at),
          message: `a chunk of ${size} bytes, but only ${data.length - at} bytes are left`,
        },
      };
    }
    chunks.push(data.subarray(at, at + size));
    at += size;
    if (data[at] === 0x0d && data[at + 1] === 0x0a) at += 2;
    else if (data[at] === 0x0a) at += 1;
    else return { error: { line: lineAt(base + at), message: "a chunk's data is not followed by a line end" } };
  }
  // Trailer section, up to an empty line (or the end of the file).
  for (let t = line(); t !== undefined; t = line()) {
    at = t.next;
    if (t.text === "") break;
    const colon = t.text.indexOf(":");
    if (colon <= 0)
      return {
        error: { line: lineAt(base + at - 1), message: `not a trailer field: ${JSON.stringify(t.text.slice(0, 60))}` },
      };
    trailers.push([t.text.slice(0, colon), t.text.slice(colon + 1).trim()]);
  }
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const body = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    body.set(c, o);
    o += c.length;
  }
  return { body, consumed: at };
}

function noteTrailing(
  extra: Uint8Array,
  offset: number,
  lineAt: (offset: number) => number,
  warnings: RawHttpProblem[],
): void {
  if (extra.length === 0) return;
  warnings.push({
    line: lineAt(offset),
    message: isOnlyNewlines(extra)
      ? "a newline after the body is ignored (it is not counted in the body)"
      : `${extra.length} bytes after the body are ignored (a second request?)`,
  });
}

function isOnlyNewlines(bytes: Uint8Array): boolean {
  return bytes.every((b) => b === 0x0d || b === 0x0a);
}

function tryUrl(text: string): string | undefined {
  try {
    return new URL(text).href;
  } catch {
    return undefined;
  }
}
