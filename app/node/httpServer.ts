/**
 * Serves a web handler, `(Request) => Promise<Response>`, over node:https with
 * TLS 1.3 only (SVC-6, AUTH-8): the real-network edge of the receiver.
 *
 * Bodies stream both ways. The request body reaches the handler as a
 * `ReadableStream` fed from the socket with backpressure, so a receiver can
 * stop reading at `max_message_size` and answer 413 without the rest ever
 * being held in memory. When the handler answers before the body is read to
 * its end, the answer is sent first and the rest of the body is then read and
 * discarded, up to a limit in bytes and time, so that the client, still busy
 * writing, gets to read the answer instead of a connection reset; past the
 * limit the connection is destroyed.
 *
 * Shutdown is graceful: stop accepting, let requests in flight finish (a
 * message the receiver has accepted is answered, never cut off), close idle
 * connections, and only after a grace period cut whatever is left.
 */
import { X509Certificate } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { FileTooLargeError, readBoundedText } from "./boundedRead.ts";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isIP } from "node:net";
import { join } from "node:path";
import { generate } from "selfsigned";
import { signingDomainOfKeyid } from "../protocol/profile.ts";
import { errorMessage } from "../errorMessage.ts";

/** What is served: the receiver's `(Request) => Promise<Response>`, or any other. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** One line of the request log. */
export interface RequestLogEntry {
  /** When the request arrived, ms since the epoch. */
  readonly timeMs: number;
  readonly method: string;
  /** Path and query as received. */
  readonly target: string;
  readonly status: number;
  /** The domain after `._svckey.` in the keyid of the first signature (G4), when there is one. */
  readonly signingDomain?: string;
  readonly idempotencyKey?: string;
  /** For a 200 DeliveryResult: each recipient with its status, in order. */
  readonly recipients?: readonly { readonly recipient: string; readonly status: string }[];
  /** For a problem answer: its `type`. */
  readonly problemType?: string;
  /** Request body bytes read from the socket while the request was handled. */
  readonly bodyBytes: number;
  readonly durationMs: number;
  /** Remote address and port. */
  readonly remote?: string;
  /** Set when the handler threw or the response could not be written. */
  readonly error?: string;
}

/** What {@link startHttpsServer} needs. */
export interface HttpsServerOptions {
  readonly handler: FetchHandler;
  /** PEM certificate (chain) and private key. */
  readonly cert: string | Uint8Array;
  readonly key: string | Uint8Array;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port, read it from the result. */
  readonly port?: number;
  /** Called once per request, after its answer was sent (or failed). */
  readonly onRequest?: (entry: RequestLogEntry) => void;
  /** Connection-level trouble the log should show (TLS handshakes refused, sockets failing). */
  readonly onConnectionError?: (error: Error) => void;
  /** After an early answer, at most this many unread body bytes are discarded before the connection is cut. Default 128 MiB. */
  readonly drainLimitBytes?: number;
  /** …and for at most this long. Default 30 s. */
  readonly drainTimeoutMs?: number;
  /** How long {@link RunningHttpsServer.close} waits for requests in flight before cutting them. Default 30 s. */
  readonly shutdownGraceMs?: number;
  /** Node's `requestTimeout` (whole request, body included): past it, 408 and the connection closes. Default 300 s. */
  readonly requestTimeoutMs?: number;
  /**
   * Node's `headersTimeout`: a connection that has not sent a whole request head this long after it
   * began (a slow or silent client) is answered 408 and closed. Default 30 s.
   */
  readonly headersTimeoutMs?: number;
  /**
   * While the handler waits for more of the body, the client must send some within this long; else the
   * answer is 408 and the connection closes (a client that stalls mid-body holds nothing longer). Default 30 s.
   */
  readonly bodyTimeoutMs?: number;
  /** At most this many connections at once (TLS handshakes included); more are closed as they come. Default 512. */
  readonly maxConnections?: number;
  /** The clock of the log; default `Date.now`. */
  readonly now?: () => number;
  /**
   * @internal How long a connection whose last answer cannot be written (a client that reads nothing) is kept
   * before it is cut; default 2 s. A test sets it long, to see that a written answer frees it at once.
   */
  readonly lingerMs?: number;
}

/** A server that listens. */
export interface RunningHttpsServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** `https://host:port`, IPv6 hosts in brackets. */
  readonly origin: string;
  /** Requests being handled now. */
  inFlight(): number;
  /**
   * Graceful shutdown: stop accepting, let requests in flight finish and be
   * answered, then resolve. Connections still open after the grace period are
   * destroyed. Calling it again returns the same promise.
   */
  close(): Promise<void>;
  /** Cuts every connection at once (a second Ctrl-C). */
  forceClose(): void;
}

const MiB = 1024 * 1024;
/** Defaults of the limits on slow and many clients; `serve` has an option for each. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_CONNECTIONS = 512;

/** Starts an HTTPS server on `host:port` that accepts TLS 1.3 only and serves `handler`. */
export async function startHttpsServer(options: HttpsServerOptions): Promise<RunningHttpsServer> {
  const now = options.now ?? Date.now;
  const drainLimitBytes = options.drainLimitBytes ?? 128 * MiB;
  const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
  const graceMs = options.shutdownGraceMs ?? 30_000;
  const host = options.host ?? "127.0.0.1";
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;

  const server = createServer({
    cert: toPem(options.cert),
    key: toPem(options.key),
    minVersion: "TLSv1.3",
    ALPNProtocols: ["http/1.1"],
    // Node refuses a headers timeout longer than the request timeout: a long --headers-timeout lengthens both.
    requestTimeout: Math.max(options.requestTimeoutMs ?? 300_000, headersTimeoutMs),
    headersTimeout: headersTimeoutMs,
    // Node looks for connections past their headers or request timeout this often (default 30 s).
    connectionsCheckingInterval: Math.max(5, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    // A connection that has not finished its TLS handshake within the headers timeout is cut:
    // the handshake is the first part of "sending the request head".
    handshakeTimeout: headersTimeoutMs,
  });
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  const sockets = new Set<Socket>();
  let active = 0;
  let closing: Promise<void> | undefined;
  let idleWaiters: (() => void)[] = [];

  /** TLS sockets whose handshake finished: only these may be answered in HTTP. */
  const secured = new WeakSet<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("secureConnection", (socket: Socket) => secured.add(socket));
  server.on("tlsClientError", (error: Error & { reason?: string }, socket: Socket) => {
    const from = socket.remoteAddress === undefined ? "" : ` from ${socket.remoteAddress}`;
    const code = (error as NodeJS.ErrnoException).code;
    const reason = error.reason ?? error.message;
    const hint = /unsupported protocol|version/i.test(reason) ? " (the client offered no TLS 1.3)" : "";
    const reported =
      code === "ERR_TLS_HANDSHAKE_TIMEOUT"
        ? new Error(`TLS handshake not finished within ${headersTimeoutMs} ms${from}: connection closed`)
        : new Error(`TLS handshake refused${from}: ${reason}${hint}`);
    options.onConnectionError?.(Object.assign(reported, { code }));
  });
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
    if (!secured.has(socket)) {
      // The TLS handshake failed or timed out (tlsClientError reported it): there is no HTTP to answer in,
      // so the connection is freed at once.
      socket.destroy();
      return;
    }
    options.onConnectionError?.(error);
    // Node's headers or request timeout (a client too slow to send its request): 408, as RFC 9110 §15.5.9 has it.
    const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
    endThenDestroy(socket, `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, options.lingerMs);
  });

  let defaultAuthority = host;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    active += 1;
    void serveOne(req, res, {
      handler: options.handler,
      defaultAuthority,
      now,
      drainLimitBytes,
      drainTimeoutMs,
      bodyTimeoutMs,
      closing: () => closing !== undefined,
    })
      .then((entry) => {
        try {
          options.onRequest?.(entry);
        } catch {
          // A failing log must not take the server down.
        }
      })
      .finally(() => {
        active -= 1;
        if (closing !== undefined) server.closeIdleConnections();
        if (active === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const wake of waiters) wake();
        }
      });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : (options.port ?? 0);
  const hostPart = host.includes(":") ? `[${host}]` : host;
  defaultAuthority = `${hostPart}:${port}`;

  const forceClose = (): void => {
    server.closeAllConnections();
    for (const socket of sockets) socket.destroy();
  };

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      // Requests in flight get their answer; then their connections close too (Connection: close).
      const idle = active === 0 ? Promise.resolve() : new Promise<void>((wake) => idleWaiters.push(wake));
      const grace = setTimeout(forceClose, graceMs);
      grace.unref();
      void idle
        .then(() => {
          // A connection still in its TLS handshake is not an idle HTTP connection: the grace timer cuts it.
          server.closeIdleConnections();
          return closed;
        })
        .then(() => {
          clearTimeout(grace);
          resolve();
        });
    });
    return closing;
  };

  return { server, host, port, origin: `https://${defaultAuthority}`, inFlight: () => active, close, forceClose };
}

/** How long a connection whose last answer could not be handed to the kernel (a client that reads nothing) is kept. */
const LINGER_MS = 2_000;

/**
 * Ends a connection with its last words and frees it as soon as they are written: a client that
 * neither reads nor closes must not hold the socket, which `end()` alone would leave half-open until the
 * peer's FIN. When even the write cannot finish (the client's window is full), the socket goes after
 * `lingerMs` ({@link LINGER_MS}).
 */
function endThenDestroy(socket: Socket, last?: string, lingerMs = LINGER_MS): void {
  if (socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const linger = setTimeout(() => socket.destroy(), lingerMs);
  linger.unref();
  socket.once("close", () => clearTimeout(linger));
  const destroy = (): void => {
    socket.destroy();
  };
  if (last === undefined) socket.end(destroy);
  else socket.end(last, destroy);
}

interface ServeContext {
  readonly handler: FetchHandler;
  readonly defaultAuthority: string;
  readonly now: () => number;
  readonly drainLimitBytes: number;
  readonly drainTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly closing: () => boolean;
}

async function serveOne(req: IncomingMessage, res: ServerResponse, context: ServeContext): Promise<RequestLogEntry> {
  const started = context.now();
  const base = {
    timeMs: started,
    method: req.method ?? "GET",
    target: req.url ?? "/",
    ...(req.socket.remoteAddress !== undefined && {
      remote: `${req.socket.remoteAddress}:${req.socket.remotePort ?? 0}`,
    }),
  };
  const body = new BodyState(req, context.bodyTimeoutMs);
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the client closed the connection before the answer was sent"));
  });

  let request: Request | undefined;
  let response: Response;
  let error: string | undefined;
  try {
    request = toWebRequest(req, { defaultAuthority: context.defaultAuthority, body, signal: abort.signal });
  } catch (cause) {
    error = errorMessage(cause);
  }
  const extra = request === undefined ? {} : requestFacts(request);
  if (request === undefined) {
    response = plainProblem(400, "Bad Request", `the request cannot be read: ${error ?? "unknown error"}`);
  } else {
    try {
      response = await context.handler(request);
    } catch (cause) {
      error = `the handler failed: ${errorMessage(cause)}`;
      response = plainProblem(500, "Internal Server Error", "the receiver failed while handling the request");
    }
  }

  if (response.type === "error") {
    // The handler's network error (fetch's Response.error()): the connection closes without an answer, as
    // `serve --faults` plays a refused or dropped connection.
    req.socket.destroy();
    return {
      ...base,
      status: 0,
      ...extra,
      bodyBytes: body.bytesRead,
      durationMs: context.now() - started,
      error: "closed without an answer",
    };
  }

  if (body.timedOut) {
    // The client stalled mid-body: whatever the handler made of the cut body, the answer is 408 and the
    // connection closes once it is out.
    response = plainProblem(
      408,
      "Request Timeout",
      `the client sent no more of the body for ${context.bodyTimeoutMs} ms`,
    );
    error = `body timeout: nothing for ${context.bodyTimeoutMs} ms`;
    const facts = await writeWebResponse(res, response, { close: true }).catch(() => ({}));
    endThenDestroy(req.socket);
    return {
      ...base,
      status: res.statusCode,
      ...extra,
      ...facts,
      bodyBytes: body.bytesRead,
      durationMs: context.now() - started,
      error,
    };
  }

  let facts: ResponseFacts = {};
  // The body is not read to its end and the connection will close after the answer (the client asked
  // for it, or the server is shutting down): Node would destroy the socket as soon as the answer is out,
  // and a client still writing would see a reset instead of the answer. So read and drop the rest first.
  if (!body.ended && !req.destroyed && (!res.shouldKeepAlive || context.closing())) {
    await body.discardRest(context.drainLimitBytes, context.drainTimeoutMs);
  }
  try {
    facts = await writeWebResponse(res, response, {
      head: req.method === "HEAD",
      close: context.closing(),
    });
  } catch (cause) {
    error ??= `the answer could not be sent: ${errorMessage(cause)}`;
    res.destroy();
  }
  // The handler answered without reading the whole body and the connection stays open: the answer is
  // out, so a client that can stop early may; read and drop the rest, bounded, so the next request parses.
  if (!body.ended && !req.destroyed) void body.discardRest(context.drainLimitBytes, context.drainTimeoutMs);

  return {
    ...base,
    status: res.statusCode,
    ...extra,
    ...facts,
    bodyBytes: body.bytesRead,
    durationMs: context.now() - started,
    ...(error !== undefined && { error }),
  };
}

/**
 * The request body as a web stream over an IncomingMessage, with
 * backpressure: the socket is paused while the stream's queue is full and
 * resumed when the reader pulls. Cancelling the stream (a receiver that stops
 * at its size limit) leaves the connection alone; {@link discardRest} decides
 * what becomes of the unread bytes once the answer is out.
 */
class BodyState {
  bytesRead = 0;
  ended = false;
  /** Set when the client sent nothing for `timeoutMs` while the handler waited for the body. */
  timedOut = false;
  private abandoned = false;
  private readonly req: IncomingMessage;
  private readonly timeoutMs: number;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private onTimeout: (() => void) | undefined;

  constructor(req: IncomingMessage, timeoutMs = DEFAULT_BODY_TIMEOUT_MS) {
    this.req = req;
    this.timeoutMs = timeoutMs;
    // Paused first, so that data flows only when a reader pulls (or the rest is discarded).
    req.pause();
    req.on("data", (chunk: Buffer) => {
      this.bytesRead += chunk.byteLength;
    });
    req.once("end", () => {
      this.ended = true;
      this.disarm();
    });
    req.once("close", () => this.disarm());
  }

  /** The handler waits for body bytes: the client has `timeoutMs` to send some. */
  private arm(): void {
    if (this.ended || this.abandoned || this.timedOut) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      this.timedOut = true;
      this.onTimeout?.();
    }, this.timeoutMs);
    this.idle.unref();
  }

  private disarm(): void {
    clearTimeout(this.idle);
    this.idle = undefined;
  }

  /** Whether the request carries a body at all (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
  get present(): boolean {
    const length = this.req.headers["content-length"];
    return this.req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  }

  stream(): ReadableStream<Uint8Array> {
    const req = this.req;
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let done = false;
    const finish = (action: () => void): void => {
      if (done || this.abandoned) return;
      done = true;
      try {
        action();
      } catch {
        // The stream was already closed or errored by its reader.
      }
    };
    req.on("data", (chunk: Buffer) => {
      if (done || this.abandoned || controller === undefined) return;
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if ((controller.desiredSize ?? 0) <= 0) {
        // Full: the wait is ours now, not the client's.
        this.disarm();
        req.pause();
      } else this.arm();
    });
    this.onTimeout = () =>
      finish(() => controller?.error(new Error(`the client sent no more of the body for ${this.timeoutMs} ms`)));
    req.once("end", () => finish(() => controller?.close()));
    req.once("error", (error: Error) => finish(() => controller?.error(error)));
    req.once("close", () => {
      if (!this.ended)
        finish(() => controller?.error(new Error("the client closed the connection before the body was complete")));
    });
    return new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
        },
        pull: () => {
          this.arm();
          req.resume();
        },
        cancel: () => {
          done = true;
          this.disarm();
          req.pause();
        },
      },
      { highWaterMark: 256 * 1024, size: (chunk) => chunk.byteLength },
    );
  }

  /**
   * Reads and drops the rest of the body, up to `limitBytes` more and for at
   * most `timeoutMs`; past either, destroys the connection. Resolves true when
   * the body ended, false when the connection was cut or closed. Once called,
   * the handler's stream gets no more data.
   */
  discardRest(limitBytes: number, timeoutMs: number): Promise<boolean> {
    this.abandoned = true;
    this.disarm();
    const req = this.req;
    if (this.ended) return Promise.resolve(true);
    const start = this.bytesRead;
    return new Promise<boolean>((resolve) => {
      const settle = (ended: boolean): void => {
        clearTimeout(timer);
        req.off("data", onData);
        resolve(ended);
      };
      const cut = (): void => {
        settle(false);
        req.socket.destroy();
      };
      const timer = setTimeout(cut, timeoutMs);
      timer.unref();
      const onData = (): void => {
        if (this.bytesRead - start > limitBytes) cut();
      };
      req.on("data", onData);
      req.once("end", () => settle(true));
      req.once("close", () => settle(this.ended));
      req.resume();
    });
  }
}

/** What {@link toWebRequest} needs. */
export interface ToWebRequestOptions {
  /** `host:port` to use when the request has no Host header. */
  readonly defaultAuthority: string;
  readonly signal?: AbortSignal;
  /** @internal */
  readonly body?: BodyState;
}

/**
 * A web `Request` for an IncomingMessage: `https://` + Host + the target,
 * every header field line in order (repeated fields combined by `Headers`),
 * and the body as a stream read from the socket on demand.
 *
 * @throws Error when the target or Host cannot form a URL, or a header value
 * is not one `Headers` accepts: the caller answers 400.
 */
export function toWebRequest(req: IncomingMessage, options: ToWebRequestOptions): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? "", raw[i + 1] ?? "");
  const target = req.url ?? "/";
  let url: URL;
  if (target.startsWith("/")) {
    const authority = headers.get("host") ?? options.defaultAuthority;
    if (!/^[A-Za-z0-9._~!$&'()*+,;=:[\]%-]+$/.test(authority))
      throw new Error(`Host ${JSON.stringify(authority)} is not a valid authority`);
    url = new URL(`https://${authority}${target}`);
  } else if (/^https?:\/\//i.test(target)) {
    url = new URL(target);
  } else {
    throw new Error(`request target ${JSON.stringify(target)} is neither a path nor an absolute URI`);
  }
  const method = req.method ?? "GET";
  const body = options.body ?? new BodyState(req);
  const hasBody = method !== "GET" && method !== "HEAD" && body.present;
  const init: RequestInit & { duplex?: "half" } = {
    method,
    headers,
    ...(options.signal !== undefined && { signal: options.signal }),
    ...(hasBody && { body: body.stream(), duplex: "half" as const }),
  };
  // The URL as text: given a URL object, Request would serialize it and parse it again (~10 µs a request).
  return new Request(url.href, init);
}

interface ResponseFacts {
  readonly recipients?: readonly { readonly recipient: string; readonly status: string }[];
  readonly problemType?: string;
}

/** JSON answers up to this size are read whole: sent with a Content-Length and read for the log. */
const SMALL_JSON = 1 * MiB;

/**
 * Writes a web `Response` to a ServerResponse, streaming its body with
 * backpressure. A small JSON answer (a DeliveryResult, a problem) is read
 * whole first, so it goes out with a Content-Length and the log can name the
 * recipients and the problem. Resolves when the answer is handed to the
 * socket; rejects when the client went away first.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  options: { readonly head?: boolean; readonly close?: boolean } = {},
): Promise<ResponseFacts> {
  const headers: Record<string, string | string[]> = {};
  let hasCookies = false;
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
    else hasCookies = true;
  });
  if (hasCookies) headers["set-cookie"] = response.headers.getSetCookie();
  if (options.close === true) headers["connection"] = "close";

  const type = response.headers.get("content-type") ?? "";
  const length = Number(response.headers.get("content-length") ?? "NaN");
  let facts: ResponseFacts = {};
  const reader = response.body?.getReader();
  let head: Uint8Array[] = [];
  let rest = reader !== undefined;
  if (reader !== undefined && /json/i.test(type) && !(length > SMALL_JSON)) {
    const read = await readUpTo(reader, SMALL_JSON);
    head = read.chunks;
    rest = !read.done;
    if (read.done) {
      const bytes = head.length === 1 && head[0] !== undefined ? head[0] : Buffer.concat(head);
      headers["content-length"] = String(bytes.byteLength);
      facts = responseFacts(response.status, type, bytes);
      // Headers and body in one write.
      res.writeHead(response.status, headers);
      await endResponse(res, options.head === true ? undefined : bytes);
      return facts;
    }
  }
  res.writeHead(response.status, headers);
  if (options.head === true || reader === undefined) {
    await reader?.cancel().catch(() => {});
    await endResponse(res);
    return facts;
  }
  const onClose = (): void => {
    void reader.cancel().catch(() => {});
  };
  res.once("close", onClose);
  try {
    for (const chunk of head) if (!(await write(res, chunk))) return facts;
    while (rest) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!(await write(res, value))) return facts;
    }
    await endResponse(res);
  } finally {
    res.off("close", onClose);
  }
  return facts;
}

async function readUpTo(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
): Promise<{ chunks: Uint8Array[]; done: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size <= limit) {
    const { done, value } = await reader.read();
    if (done) return { chunks, done: true };
    chunks.push(value);
    size += value.byteLength;
  }
  return { chunks, done: false };
}

/** Writes one chunk, waiting for 'drain' when the socket buffer is full; false when the client went away. */
async function write(res: ServerResponse, chunk: Uint8Array): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
  return !res.destroyed;
}

function endResponse(res: ServerResponse, last?: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    if (res.destroyed) {
      reject(new Error("the connection closed before the answer was complete"));
      return;
    }
    if (last === undefined) res.end(() => resolve());
    else res.end(last, () => resolve());
    res.once("close", () => {
      if (!res.writableFinished) reject(new Error("the connection closed before the answer was complete"));
    });
  });
}

function responseFacts(status: number, type: string, bytes: Uint8Array): ResponseFacts {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    return {};
  }
  if (typeof json !== "object" || json === null) return {};
  const record = json as Record<string, unknown>;
  if (/problem\+json/i.test(type) && typeof record["type"] === "string") return { problemType: record["type"] };
  if (status === 200 && Array.isArray(record["results"])) {
    const recipients = record["results"].flatMap((entry: unknown) => {
      if (typeof entry !== "object" || entry === null) return [];
      const { recipient, status: recipientStatus } = entry as Record<string, unknown>;
      return typeof recipient === "string"
        ? [{ recipient, status: typeof recipientStatus === "string" ? recipientStatus : "?" }]
        : [];
    });
    return { recipients };
  }
  return {};
}

/**
 * Signing domain and Idempotency-Key of a request, for the log; never fails.
 * The keyid is read with a pattern rather than a Structured Fields parser:
 * the log runs on every request, and the receiver does the real parsing.
 */
function requestFacts(request: Request): { signingDomain?: string; idempotencyKey?: string } {
  const key = request.headers.get("idempotency-key");
  const input = request.headers.get("signature-input");
  let signingDomain: string | undefined;
  const keyid = input === null ? undefined : /;\s*keyid="((?:[^"\\]|\\.)*)"/.exec(input)?.[1];
  if (keyid !== undefined) {
    const domain = signingDomainOfKeyid(keyid);
    signingDomain = domain.ok ? domain.value : `?${keyid}`;
  }
  return { ...(signingDomain !== undefined && { signingDomain }), ...(key !== null && { idempotencyKey: key }) };
}

/** An RFC 9457 problem with type `about:blank`, for answers the server gives itself (the handler never saw the request). */
function plainProblem(status: number, title: string, detail: string): Response {
  return new Response(JSON.stringify({ type: "about:blank", title, status, detail }), {
    status,
    headers: { "content-type": "application/problem+json" },
  });
}

/**
 * One log line: time, method and target, status, signing domain,
 * Idempotency-Key, recipients with their status (or the problem), body size,
 * duration.
 *
 * `2025-05-01T10:00:00.000Z POST /v1/messages 200 from=example.org key=k1 to=bob@example.net:accepted 1834B 12ms`
 */
export function formatLogLine(entry: RequestLogEntry): string {
  const parts = [new Date(entry.timeMs).toISOString(), entry.method, entry.target, String(entry.status)];
  if (entry.signingDomain !== undefined) parts.push(`from=${entry.signingDomain}`);
  if (entry.idempotencyKey !== undefined) parts.push(`key=${entry.idempotencyKey}`);
  if (entry.recipients !== undefined) {
    parts.push(`to=${entry.recipients.map((r) => `${r.recipient}:${r.status}`).join(",") || "-"}`);
  }
  if (entry.problemType !== undefined) parts.push(`problem=${entry.problemType}`);
  parts.push(`${entry.bodyBytes}B`, `${entry.durationMs}ms`);
  if (entry.error !== undefined) parts.push(`error=${JSON.stringify(entry.error)}`);
  return parts.join(" ");
}

/** What {@link onShutdownSignals} returns. */
export interface ShutdownHook {
  /** Resolves with the signal's name once the shutdown it started has finished. */
  readonly done: Promise<string>;
  /** Removes the signal handlers. */
  dispose(): void;
}

/**
 * On the first SIGINT or SIGTERM, runs `close` (a graceful shutdown); on a
 * second one while it runs, `force`. `done` resolves when `close` has
 * finished, so a command can `await` it and then return its exit code.
 */
export function onShutdownSignals(
  close: () => Promise<void>,
  force: () => void,
  options: {
    readonly signals?: readonly NodeJS.Signals[];
    readonly onSignal?: (signal: string, count: number) => void;
  } = {},
): ShutdownHook {
  const signals = options.signals ?? ["SIGINT", "SIGTERM"];
  let count = 0;
  let resolveDone: (signal: string) => void = () => {};
  const done = new Promise<string>((resolve) => {
    resolveDone = resolve;
  });
  const handler = (signal: NodeJS.Signals): void => {
    count += 1;
    options.onSignal?.(signal, count);
    if (count === 1) {
      void close().then(() => {
        dispose();
        resolveDone(signal);
      });
    } else {
      force();
    }
  };
  const dispose = (): void => {
    for (const signal of signals) process.off(signal, handler);
  };
  for (const signal of signals) process.on(signal, handler);
  return { done, dispose };
}

/** A certificate and its key, PEM. */
export interface TlsIdentity {
  readonly cert: string;
  readonly key: string;
  /** Where they came from: the files given, the state folder, or freshly generated there. */
  readonly source: "files" | "state" | "generated";
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate's subject alternative names, as `DNS:x` / `IP Address:y`. */
  readonly altNames: readonly string[];
}

/** What {@link loadOrCreateCertificate} needs. */
export interface CertificateOptions {
  /** PEM files given by the user (`--cert`, `--key`); both or neither. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Where a generated certificate is kept; default `.mailscope/tls`. */
  readonly stateDir?: string;
  /** Host names the certificate must cover besides localhost and 127.0.0.1 (the served domains). */
  readonly hostnames?: readonly string[];
  /** Validity of a generated certificate; default 365 days. */
  readonly validDays?: number;
}

/**
 * The server's certificate: the given `--cert`/`--key` files, or a
 * self-signed one kept in the state folder (`cert.pem`, `key.pem`),
 * generated on first use with the SAN of the served domains, `localhost`,
 * `127.0.0.1` and `::1`. A kept certificate that has expired or no longer
 * covers every name is generated again.
 *
 * @throws Error naming the file when a given file cannot be read or is not PEM.
 */
export async function loadOrCreateCertificate(options: CertificateOptions): Promise<TlsIdentity> {
  if ((options.certFile === undefined) !== (options.keyFile === undefined)) {
    throw new Error("--cert and --key go together: give both files or neither");
  }
  if (options.certFile !== undefined && options.keyFile !== undefined) {
    const cert = await readPem(options.certFile, "CERTIFICATE");
    const key = await readPem(options.keyFile, "PRIVATE KEY");
    return {
      cert,
      key,
      source: "files",
      certFile: options.certFile,
      keyFile: options.keyFile,
      altNames: altNamesOf(cert, options.certFile),
    };
  }
  const dir = options.stateDir ?? join(".mailscope", "tls");
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  const names = certificateNames(options.hostnames ?? []);
  try {
    const [cert, key] = await Promise.all([
      readBoundedText(certFile, "certificates"),
      readBoundedText(keyFile, "keys"),
    ]);
    const x509 = new X509Certificate(cert);
    const have = new Set(altNamesOf(cert, certFile));
    const fresh = Date.parse(x509.validTo) > Date.now() + 24 * 3600 * 1000;
    const covers = names.every((n) => have.has(n.type === 2 ? `DNS:${n.value ?? ""}` : `IP Address:${n.ip ?? ""}`));
    if (fresh && covers) return { cert, key, source: "state", certFile, keyFile, altNames: [...have] };
  } catch {
    // Nothing kept yet, or unreadable: generate a new one below.
  }
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + (options.validDays ?? 365) * 24 * 3600 * 1000);
  const pems = await generate([{ name: "commonName", value: options.hostnames?.[0] ?? "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: names },
    ],
  });
  await mkdir(dir, { recursive: true });
  await writeFile(keyFile, pems.private, { mode: 0o600 });
  await writeFile(certFile, pems.cert);
  return {
    cert: pems.cert,
    key: pems.private,
    source: "generated",
    certFile,
    keyFile,
    altNames: altNamesOf(pems.cert, certFile),
  };
}

function certificateNames(hostnames: readonly string[]): { type: 2 | 7; value?: string; ip?: string }[] {
  const out: { type: 2 | 7; value?: string; ip?: string }[] = [];
  const seen = new Set<string>();
  for (const name of [...hostnames, "localhost", "127.0.0.1", "::1"]) {
    const clean = name.toLowerCase().replace(/\.$/, "");
    if (clean === "" || seen.has(clean)) continue;
    seen.add(clean);
    out.push(isIP(clean) === 0 ? { type: 2, value: clean } : { type: 7, ip: clean });
  }
  return out;
}

function altNamesOf(cert: string, file: string): string[] {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`${file}: not a PEM certificate (${errorMessage(error)})`, { cause: error });
  }
  return (x509.subjectAltName ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => (s.startsWith("IP Address:") ? `IP Address:${normalizeIp(s.slice(11))}` : s));
}

function normalizeIp(ip: string): string {
  // Node prints IPv6 SANs expanded (0:0:0:0:0:0:0:1); compare in the short form.
  return ip === "0:0:0:0:0:0:0:1" ? "::1" : ip.toLowerCase();
}

async function readPem(file: string, label: string): Promise<string> {
  let text: string;
  try {
    // A private key is a few hundred bytes, a certificate chain a few kB: read no more than their limits.
    text = await readBoundedText(file, label === "CERTIFICATE" ? "certificates" : "keys");
  } catch (error) {
    if (error instanceof FileTooLargeError) throw error;
    throw new Error(`${file}: cannot be read (${errorMessage(error)})`, { cause: error });
  }
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)) {
    throw new Error(`${file}: no PEM block "${label}" found`);
  }
  return text;
}

function toPem(value: string | Uint8Array): string | Buffer {
  return typeof value === "string" ? value : Buffer.from(value);
}
