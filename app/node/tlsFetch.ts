/**
 * The Fetch port over node:https, TLS 1.3 only (SVC-6, AUTH-8): what the
 * sender uses on the real network.
 *
 * - `minVersion: "TLSv1.3"`: a server that cannot speak TLS 1.3 fails the
 *   handshake, which is a `tls` failure (Errors rule 3 makes it
 *   `temporary_failure`). Plain `http:` URLs are refused the same way.
 * - The certificate is checked against the URL's host name, with the system's
 *   roots or `ca` (a self-signed test receiver's certificate, say).
 * - `resolve` works like curl's `--resolve`: the connection goes to another
 *   address while SNI, the certificate check and `Host` keep the URL's name.
 * - Bodies stream both ways: the request body is written as it is read, with
 *   backpressure; the response resolves as soon as the head arrives and its
 *   body is a stream fed from the socket. A request body goes out with the
 *   request's Content-Length when it has one, else chunked:
 *   {@link withContentLength} gives a body in hand its length first.
 * - Redirects are not followed (G30). Every failure without an HTTP answer is
 *   a {@link TransportError}; a failure while the body streams errors the
 *   body's stream with one.
 */
import { request as httpsRequest } from "node:https";
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { Readable, pipeline } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { TransportError } from "../ports.ts";
import type { Fetch, TransportFailureKind } from "../ports.ts";

/** Default idle time, per socket, before a request counts as timed out. */
export const DEFAULT_TLS_FETCH_TIMEOUT_MS = 30_000;

/** Where a connection goes instead of the URL's own host. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** What {@link createTlsFetch} may be told. */
export interface TlsFetchOptions {
  /** Trusted CA certificates (PEM) instead of the system's roots. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /**
   * curl's `--resolve`: `host` or `host:port` (as in the URL) → `address:port`
   * to connect to. `host:port` wins over `host`.
   */
  readonly resolve?: ReadonlyMap<string, string>;
  /** How long a socket may stay idle (connecting, handshaking, waiting, streaming). Default 30 s. */
  readonly timeoutMs?: number;
  /**
   * The addresses of a host name, instead of the system's resolver (`send
   * --nameserver`): none found is a `dns` failure. Not asked for a `resolve`
   * target or an address in the URL.
   */
  readonly lookup?: (hostname: string) => Promise<readonly { readonly address: string; readonly family: 4 | 6 }[]>;
}

/** `host:port`, `[v6]:port` → the parts; undefined when it is not of that form. */
export function parseHostPort(text: string): HostPort | undefined {
  const match = /^\[([^\]]+)\]:([0-9]{1,5})$/.exec(text) ?? /^([^:[\]\s]+):([0-9]{1,5})$/.exec(text);
  if (match === null) return undefined;
  const [, host, portText] = match;
  const port = Number(portText);
  if (host === undefined || host === "" || port < 1 || port > 65535) return undefined;
  if (match[0].startsWith("[") && isIP(host) !== 6) return undefined;
  return { host, port };
}

/** Codes of TLS failures that do not carry an `ERR_SSL_`/`ERR_TLS_` prefix: OpenSSL's certificate verification results. */
const CERTIFICATE_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
]);

/** Where a connection had got to when it failed. */
export type ConnectionPhase = "connecting" | "handshake" | "established";

/**
 * The {@link TransportError} for a socket or TLS error: ECONNREFUSED (and
 * unreachable hosts or networks) → `connection-refused`; ECONNRESET, EPIPE and
 * premature closes → `connection-reset`, except during the TLS handshake,
 * where a reset is the server refusing the handshake → `tls`; TLS alerts
 * (EPROTO), version and certificate errors → `tls`; ETIMEDOUT → `timeout`; failed name
 * lookups → `dns`. Anything else is a `connection-reset`.
 */
export function transportErrorOf(error: unknown, phase: ConnectionPhase = "established"): TransportError {
  if (error instanceof TransportError) return error;
  const err = error as { code?: unknown; message?: unknown; library?: unknown } | null;
  const code = typeof err?.code === "string" ? err.code : "";
  const message = typeof err?.message === "string" ? err.message : String(error);
  const make = (kind: TransportFailureKind, what: string): TransportError =>
    new TransportError(kind, `${what}${code ? ` (${code})` : ""}: ${message}`);
  if (code === "ECONNREFUSED") return make("connection-refused", "the connection was refused");
  if (["EHOSTUNREACH", "ENETUNREACH", "ENETDOWN", "EADDRNOTAVAIL"].includes(code))
    return make("connection-refused", "the host cannot be reached");
  if (code === "ETIMEDOUT") return make("timeout", "the connection timed out");
  if (["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA"].includes(code))
    return make("dns", "the host name could not be resolved");
  // A TLS alert from the server (a version it will not speak, say) comes as EPROTO with OpenSSL's text.
  const openssl = code === "EPROTO" || err?.library === "SSL routines" || /SSL routines|SSL alert/.test(message);
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || CERTIFICATE_CODES.has(code) || openssl) {
    return make("tls", "TLS failed");
  }
  if (phase === "handshake" && ["ECONNRESET", "EPIPE", "ECONNABORTED", ""].includes(code)) {
    return make("tls", "the server broke off the TLS handshake");
  }
  return make("connection-reset", phase === "connecting" ? "the connection failed" : "the connection broke off");
}

/**
 * The request with a Content-Length, when it has a body and none: the body is
 * read first, so {@link createTlsFetch} sends it whole rather than with
 * `Transfer-Encoding: chunked` (a front end that insists on a length answers
 * 411, which the sender would take for a permanent 4xx). For bodies the caller
 * holds in memory anyway, as the sender's are; a request that has a length,
 * or no body, is returned as it is.
 */
export async function withContentLength(request: Request): Promise<Request> {
  if (request.body === null || request.headers.has("content-length")) return request;
  const bytes = new Uint8Array(await request.arrayBuffer());
  const headers = new Headers(request.headers);
  headers.set("content-length", String(bytes.length));
  return new Request(request.url, {
    method: request.method,
    headers,
    body: bytes,
    signal: request.signal,
    redirect: request.redirect,
  });
}

/** A dns.lookup-shaped function over `find`, for net.connect: all addresses or the first, as asked. */
function lookupWith(find: NonNullable<TlsFetchOptions["lookup"]>): LookupFunction {
  return (hostname, options, callback) => {
    find(hostname).then(
      (found) => {
        const wanted =
          options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        const first = wanted[0];
        if (first === undefined) {
          const error = Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND", hostname });
          callback(error, "", 0);
        } else if (options.all === true)
          callback(
            null,
            wanted.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(Object.assign(new Error(String(error)), { code: "EAI_FAIL" }), "", 0),
    );
  };
}

/** The HTTP statuses a Response must not have a body with. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A Fetch over node:https that requires TLS 1.3 (see the module comment).
 *
 * @throws RangeError when a `resolve` entry is not `host[:port] → address:port`.
 */
export function createTlsFetch(options: TlsFetchOptions = {}): Fetch {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TLS_FETCH_TIMEOUT_MS;
  const resolve = new Map<string, HostPort>();
  for (const [from, to] of options.resolve ?? []) {
    const target = parseHostPort(to);
    if (target === undefined || from.trim() === "")
      throw new RangeError(`--resolve ${from}=${to}: the target must be address:port`);
    resolve.set(from.toLowerCase(), target);
  }
  const ca =
    options.ca === undefined
      ? undefined
      : Array.isArray(options.ca)
        ? [...(options.ca as Array<string | Buffer>)]
        : (options.ca as string | Buffer);

  return (input: Request) =>
    new Promise<Response>((settle, reject) => {
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        reject(new TypeError(`not a URL: ${input.url}`));
        return;
      }
      if (url.protocol !== "https:") {
        reject(new TransportError("tls", `refusing ${url.protocol} ${url.host}: TLS 1.3 is mandatory (SVC-6)`));
        return;
      }
      if (input.signal.aborted) {
        reject(input.signal.reason);
        return;
      }
      const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
      const port = url.port === "" ? 443 : Number(url.port);
      const target = resolve.get(`${hostname.toLowerCase()}:${port}`) ?? resolve.get(hostname.toLowerCase());
      const headers: OutgoingHttpHeaders = {};
      input.headers.forEach((value, name) => {
        if (name !== "host" && name !== "connection") headers[name] = value;
      });
      headers["host"] = url.host;

      let phase: ConnectionPhase = "connecting";
      let timedOut = false;
      let answered = false;
      const fail = (error: unknown): void => {
        const transport = timedOut
          ? new TransportError("timeout", `no progress within ${timeoutMs} ms`)
          : transportErrorOf(error, phase);
        if (!answered) reject(transport);
      };

      const req: ClientRequest = httpsRequest({
        host: target?.host ?? hostname,
        port: target?.port ?? port,
        method: input.method,
        path: `${url.pathname}${url.search}`,
        headers,
        // SNI and the certificate check use the URL's name, wherever the connection goes (no SNI for an address).
        ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
        ...(ca === undefined ? {} : { ca }),
        minVersion: "TLSv1.3",
        agent: false,
        ...(options.lookup !== undefined && { lookup: lookupWith(options.lookup) }),
        timeout: timeoutMs,
      });
      req.on("socket", (socket: Socket) => {
        socket.once("connect", () => {
          phase = "handshake";
        });
        socket.once("secureConnect", () => {
          phase = "established";
        });
      });
      req.on("timeout", () => {
        timedOut = true;
        req.destroy(new TransportError("timeout", `no progress within ${timeoutMs} ms (${phase})`));
      });
      req.on("error", fail);
      const onAbort = (): void => {
        req.destroy();
        if (!answered) reject(input.signal.reason);
      };
      input.signal.addEventListener("abort", onAbort, { once: true });

      req.on("response", (res: IncomingMessage) => {
        answered = true;
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(
            new TransportError(
              "connection-reset",
              `the server answered HTTP status ${status}, which no Response can carry`,
            ),
          );
          return;
        }
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          try {
            responseHeaders.append(res.rawHeaders[i] ?? "", res.rawHeaders[i + 1] ?? "");
          } catch {
            // A header Headers cannot hold is dropped; Node's parser already refused anything dangerous.
          }
        }
        const body =
          NULL_BODY_STATUSES.has(status) || input.method === "HEAD" ? null : bodyStream(res, () => timedOut, timeoutMs);
        if (body === null) res.resume();
        res.once("close", () => input.signal.removeEventListener("abort", onAbort));
        try {
          settle(new Response(body, { status, statusText: res.statusMessage ?? "", headers: responseHeaders }));
        } catch {
          settle(new Response(body, { status, headers: responseHeaders }));
        }
      });

      if (input.body === null) {
        req.end();
      } else {
        // Backpressure from the socket reaches the request body's reader; a broken source breaks the request.
        pipeline(Readable.fromWeb(input.body as NodeReadableStream<Uint8Array>), req, (error) => {
          if (error && !answered) fail(error);
        });
      }
    });
}

/** The response body as a web stream, paused while nobody reads, erroring with a TransportError when the socket fails. */
function bodyStream(res: IncomingMessage, timedOut: () => boolean, timeoutMs: number): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      res.on("data", (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) res.pause();
      });
      res.on("end", () => {
        if (finished) return;
        finished = true;
        controller.close();
      });
      const broke = (error?: unknown): void => {
        if (finished) return;
        finished = true;
        controller.error(
          timedOut()
            ? new TransportError("timeout", `the body stalled for ${timeoutMs} ms`)
            : error === undefined
              ? new TransportError("connection-reset", "the connection closed before the body was complete")
              : transportErrorOf(error),
        );
      };
      res.on("error", broke);
      res.on("close", () => {
        if (!res.complete) broke();
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      finished = true;
      res.destroy();
    },
  });
}
