import { X509Certificate, createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request as httpsRequest } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as netConnect, type Socket } from "node:net";
import { connect, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatLogLine,
  loadOrCreateCertificate,
  onShutdownSignals,
  startHttpsServer,
  type FetchHandler,
  type RequestLogEntry,
  type RunningHttpsServer,
  type TlsIdentity,
} from "./httpServer.ts";

let dir: string;
let tls: TlsIdentity;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-https-"));
  tls = await loadOrCreateCertificate({ stateDir: join(dir, "tls"), hostnames: ["mx.example.net"] });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface ClientAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Whether the request went over a kept-alive connection. */
  readonly reused: boolean;
}

/** One HTTPS request with the test certificate as the only CA. */
function send(
  server: RunningHttpsServer,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: Uint8Array; agent?: Agent } = {},
): Promise<ClientAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port: server.port,
        method: options.method ?? "GET",
        path: options.path ?? "/",
        headers: options.headers ?? {},
        ca: tls.cert,
        servername: "localhost",
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        // Resolved once the answer is read and the body written, so a kept-alive socket is back in the pool.
        const written = new Promise<void>((done) => (req.writableFinished ? done() : req.once("finish", done)));
        res.on("end", () => {
          void written.then(() =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
              reused: req.reusedSocket,
            }),
          );
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body === undefined ? undefined : Buffer.from(options.body));
  });
}

async function withServer(
  handler: FetchHandler,
  run: (server: RunningHttpsServer, log: RequestLogEntry[]) => Promise<void>,
  extra: {
    drainLimitBytes?: number;
    headersTimeoutMs?: number;
    bodyTimeoutMs?: number;
    maxConnections?: number;
    onConnectionError?: (error: Error) => void;
    lingerMs?: number;
  } = {},
): Promise<void> {
  const log: RequestLogEntry[] = [];
  const server = await startHttpsServer({
    handler,
    cert: tls.cert,
    key: tls.key,
    onRequest: (entry) => log.push(entry),
    shutdownGraceMs: 5_000,
    ...extra,
  });
  try {
    await run(server, log);
  } finally {
    await server.close();
  }
}

const echo: FetchHandler = async (request) => {
  const bytes = new Uint8Array(await request.arrayBuffer());
  return Response.json({
    method: request.method,
    url: request.url,
    length: bytes.byteLength,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    streamed: request.body === null ? null : request.body instanceof ReadableStream,
  });
};

describe("TLS (SVC-6, AUTH-8: TLS 1.3 is mandatory)", () => {
  it("SVC-6 AUTH-8: a TLS 1.2 client is refused at the handshake", async () => {
    await withServer(echo, async (server) => {
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect({
          host: "127.0.0.1",
          port: server.port,
          maxVersion: "TLSv1.2",
          ca: tls.cert,
          servername: "localhost",
        });
        socket.once("secureConnect", () => {
          socket.destroy();
          resolve("connected");
        });
        socket.once("error", (error: Error & { code?: string }) => resolve(`refused: ${error.code ?? error.message}`));
      });
      expect(outcome).toMatch(/^refused/);
    });
  });

  it("SVC-6 AUTH-8: a TLS 1.3 client connects and negotiates TLSv1.3", async () => {
    await withServer(echo, async (server) => {
      const protocol = await new Promise<string | null>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port: server.port, ca: tls.cert, servername: "localhost" });
        socket.once("secureConnect", () => {
          const version = socket.getProtocol();
          socket.destroy();
          resolve(version);
        });
        socket.once("error", reject);
      });
      expect(protocol).toBe("TLSv1.3");
    });
  });
});

describe("Request and Response conversion", () => {
  it("POST-1: the handler gets https:// + Host + target, the headers, and the body as a stream", async () => {
    await withServer(echo, async (server) => {
      const body = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
      const answer = await send(server, {
        method: "POST",
        path: "/v1/messages?x=1",
        headers: { "content-type": "multipart/mixed; boundary=b", "idempotency-key": "k-1" },
        body,
      });
      expect(answer.status).toBe(200);
      expect(answer.headers["content-length"]).toBe(String(answer.body.byteLength));
      const seen = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
      expect(seen).toEqual({
        method: "POST",
        url: `https://127.0.0.1:${server.port}/v1/messages?x=1`,
        length: body.byteLength,
        sha256: createHash("sha256").update(body).digest("hex"),
        streamed: true,
      });
    });
  });

  it("GET-2: a GET has no body", async () => {
    await withServer(echo, async (server) => {
      const answer = await send(server, { path: "/v1/capabilities" });
      expect(JSON.parse(answer.body.toString("utf8"))).toMatchObject({ method: "GET", length: 0, streamed: null });
    });
  });

  it("POST-11: a streamed response body arrives whole", async () => {
    const size = 5 * 1024 * 1024;
    const handler: FetchHandler = () => {
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const n = Math.min(64 * 1024, size - sent);
          controller.enqueue(new Uint8Array(n).fill(sent % 256));
          sent += n;
          if (sent >= size) controller.close();
        },
      });
      return Promise.resolve(new Response(stream, { headers: { "content-type": "application/octet-stream" } }));
    };
    await withServer(handler, async (server) => {
      const answer = await send(server);
      expect(answer.status).toBe(200);
      expect(answer.body.byteLength).toBe(size);
    });
  });

  it("ERR-21: a handler that throws gives a 500 problem, and the server keeps serving", async () => {
    let calls = 0;
    const handler: FetchHandler = () => {
      calls += 1;
      if (calls === 1) return Promise.reject(new Error("boom"));
      return Promise.resolve(new Response("ok"));
    };
    await withServer(handler, async (server, log) => {
      const first = await send(server);
      expect(first.status).toBe(500);
      expect(first.headers["content-type"]).toBe("application/problem+json");
      expect(log[0]?.error).toContain("boom");
      const second = await send(server);
      expect(second.status).toBe(200);
      expect(second.body.toString()).toBe("ok");
    });
  });

  it("POST-13: a Host that cannot form a URL is answered 400 without calling the handler", async () => {
    let called = false;
    await withServer(
      () => {
        called = true;
        return Promise.resolve(new Response("no"));
      },
      async (server) => {
        const answer = await send(server, { headers: { host: "bad host/x" } });
        expect(answer.status).toBe(400);
        expect(called).toBe(false);
      },
    );
  });
});

describe("Early answers and the unread rest of the body (ERR-12, LIM-2)", () => {
  /** Reads at most `limit` bytes, then cancels the stream and answers 413, as a receiver does at max_message_size. */
  const stopAt =
    (limit: number): FetchHandler =>
    async (request) => {
      const reader = request.body?.getReader();
      let read = 0;
      while (reader !== undefined && read <= limit) {
        const { done, value } = await reader.read();
        if (done) break;
        read += value.byteLength;
      }
      await reader?.cancel();
      return Response.json({ read }, { status: 413 });
    };

  it("ERR-12 LIM-2: the client still writing gets the 413, the rest is drained, and the connection is reused", async () => {
    await withServer(stopAt(1024 * 1024), async (server, log) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: tls.cert });
      try {
        const body = new Uint8Array(24 * 1024 * 1024);
        const answer = await send(server, { method: "POST", path: "/v1/messages", body, agent });
        expect(answer.status).toBe(413);
        const read = (JSON.parse(answer.body.toString()) as { read: number }).read;
        // The handler stopped early: it read about 1 MiB of 24, not the whole body.
        expect(read).toBeLessThan(4 * 1024 * 1024);
        const next = await send(server, { path: "/next", agent });
        expect(next.status).toBe(413);
        expect(next.reused).toBe(true);
        expect(log[0]?.bodyBytes).toBeLessThanOrEqual(body.byteLength);
      } finally {
        agent.destroy();
      }
    });
  });

  it("ERR-12: a handler that answers from the headers alone never reads the body", async () => {
    const handler: FetchHandler = (request) =>
      Promise.resolve(Response.json({ length: request.headers.get("content-length") }, { status: 413 }));
    await withServer(handler, async (server) => {
      const answer = await send(server, { method: "POST", body: new Uint8Array(8 * 1024 * 1024) });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body.toString())).toEqual({ length: String(8 * 1024 * 1024) });
    });
  });

  it("LIM-2: past the drain limit the connection is cut, and the server keeps serving", async () => {
    await withServer(
      stopAt(64 * 1024),
      async (server, log) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: tls.cert });
        try {
          const outcome = await send(server, { method: "POST", body: new Uint8Array(32 * 1024 * 1024), agent }).then(
            (a) => `status ${a.status}`,
            (e: Error & { code?: string }) => `error ${e.code ?? e.message}`,
          );
          // The client either read the 413 before the cut or saw the connection reset; either way nothing hangs.
          expect(outcome).toMatch(/^(status 413|error E[A-Z]+)$/);
          const next = await send(server, { path: "/after", agent });
          expect(next.status).toBe(413);
          // The cut connection is not the one the next request used.
          expect(next.reused).toBe(false);
          expect(log[0]?.bodyBytes ?? 0).toBeLessThan(32 * 1024 * 1024);
        } finally {
          agent.destroy();
        }
      },
      { drainLimitBytes: 1024 * 1024 },
    );
  });
});

describe("Request log", () => {
  it("POST-2 AUTH-1: one entry per request with signing domain, Idempotency-Key, status and recipients", async () => {
    const handler: FetchHandler = async (request) => {
      await request.arrayBuffer();
      return Response.json({
        results: [
          { recipient: "bob@example.net", status: "accepted" },
          { recipient: "eve@example.net", status: "rejected", problem: { type: "https://p/recipient_not_found" } },
        ],
      });
    };
    await withServer(handler, async (server, log) => {
      await send(server, {
        method: "POST",
        path: "/v1/messages",
        headers: {
          "idempotency-key": "abc-123",
          "signature-input": 'sig1=("@method");created=1;keyid="s1._svckey.Example.ORG"',
        },
        body: new TextEncoder().encode("x".repeat(100)),
      });
      expect(log).toHaveLength(1);
      const entry = log[0];
      expect(entry).toMatchObject({
        method: "POST",
        target: "/v1/messages",
        status: 200,
        signingDomain: "example.org",
        idempotencyKey: "abc-123",
        bodyBytes: 100,
        recipients: [
          { recipient: "bob@example.net", status: "accepted" },
          { recipient: "eve@example.net", status: "rejected" },
        ],
      });
      const line = formatLogLine(entry as RequestLogEntry);
      expect(line).toMatch(
        /^\d{4}-\d\d-\d\dT[\d:.]+Z POST \/v1\/messages 200 from=example\.org key=abc-123 to=bob@example\.net:accepted,eve@example\.net:rejected 100B \d+ms$/,
      );
    });
  });

  it("PRB-1: a problem answer is logged with its type", async () => {
    const handler: FetchHandler = () =>
      Promise.resolve(
        new Response(JSON.stringify({ type: "https://p/unsupported_version", versions: ["v1"] }), {
          status: 404,
          headers: { "content-type": "application/problem+json" },
        }),
      );
    await withServer(handler, async (server, log) => {
      await send(server, { path: "/v2/x" });
      expect(log[0]).toMatchObject({ status: 404, problemType: "https://p/unsupported_version" });
      expect(formatLogLine(log[0] as RequestLogEntry)).toContain(" 404 problem=https://p/unsupported_version ");
    });
  });
});

describe("Graceful shutdown", () => {
  it("POST-11: close() stops accepting, and a request in flight still gets its answer", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const handler: FetchHandler = async (request) => {
      const body = await request.text();
      entered();
      await gate;
      return Response.json({ results: [{ recipient: body, status: "accepted" }] });
    };
    const server = await startHttpsServer({ handler, cert: tls.cert, key: tls.key, shutdownGraceMs: 5_000 });
    const pending = send(server, {
      method: "POST",
      path: "/v1/messages",
      body: new TextEncoder().encode("bob@example.net"),
    });
    await inside;
    expect(server.inFlight()).toBe(1);
    const closed = server.close();
    // New connections are refused while the old request finishes.
    const refused = await send(server).then(
      () => "served",
      (e: Error & { code?: string }) => e.code ?? e.message,
    );
    expect(refused).toBe("ECONNREFUSED");
    release();
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({
      results: [{ recipient: "bob@example.net", status: "accepted" }],
    });
    expect(answer.headers["connection"]).toBe("close");
    await closed;
    expect(server.inFlight()).toBe(0);
    expect(server.server.listening).toBe(false);
  });

  it("SVC-8: the first signal starts the graceful close, a second one forces it", async () => {
    const calls: string[] = [];
    let finish: () => void = () => {};
    const hook = onShutdownSignals(
      () => {
        calls.push("close");
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
      () => calls.push("force"),
      { signals: ["SIGUSR2"] },
    );
    process.emit("SIGUSR2", "SIGUSR2");
    process.emit("SIGUSR2", "SIGUSR2");
    expect(calls).toEqual(["close", "force"]);
    finish();
    await expect(hook.done).resolves.toBe("SIGUSR2");
    expect(process.listenerCount("SIGUSR2")).toBe(0);
  });
});

describe("Certificate (AUTH-8)", () => {
  it("AUTH-8: a self-signed certificate is generated once with the served domains, localhost and 127.0.0.1, then reused", async () => {
    const stateDir = join(dir, "state-a");
    const first = await loadOrCreateCertificate({ stateDir, hostnames: ["mx.example.org"] });
    expect(first.source).toBe("generated");
    expect(first.altNames).toEqual(
      expect.arrayContaining(["DNS:mx.example.org", "DNS:localhost", "IP Address:127.0.0.1", "IP Address:::1"]),
    );
    expect(await readFile(join(stateDir, "cert.pem"), "utf8")).toBe(first.cert);
    const again = await loadOrCreateCertificate({ stateDir, hostnames: ["mx.example.org"] });
    expect(again.source).toBe("state");
    expect(again.cert).toBe(first.cert);
    const widened = await loadOrCreateCertificate({ stateDir, hostnames: ["mx.example.org", "other.example"] });
    expect(widened.source).toBe("generated");
    expect(new X509Certificate(widened.cert).subjectAltName).toContain("DNS:other.example");
  });

  it("AUTH-8: --cert/--key files are used as given; a missing or non-PEM file is named in the error", async () => {
    const certFile = join(dir, "given-cert.pem");
    const keyFile = join(dir, "given-key.pem");
    await writeFile(certFile, tls.cert);
    await writeFile(keyFile, tls.key);
    const given = await loadOrCreateCertificate({ certFile, keyFile });
    expect(given).toMatchObject({ source: "files", cert: tls.cert, key: tls.key });
    await expect(loadOrCreateCertificate({ certFile: join(dir, "nope.pem"), keyFile })).rejects.toThrow(
      /nope\.pem: cannot be read/,
    );
    await expect(loadOrCreateCertificate({ certFile: keyFile, keyFile })).rejects.toThrow(
      /given-key\.pem: no PEM block "CERTIFICATE"/,
    );
    await expect(loadOrCreateCertificate({ certFile })).rejects.toThrow(/--cert and --key go together/);
  });

  it("an endless --cert or --key (/dev/zero) is refused at its limit, not read to the end", async () => {
    const certFile = join(dir, "given-cert.pem");
    await writeFile(certFile, tls.cert);
    await expect(loadOrCreateCertificate({ certFile: "/dev/zero", keyFile: certFile })).rejects.toThrow(
      "/dev/zero: larger than 1048576 bytes (the limit for certificates)",
    );
    await expect(loadOrCreateCertificate({ certFile, keyFile: "/dev/zero" })).rejects.toThrow(
      "/dev/zero: larger than 65536 bytes (the limit for keys)",
    );
  });
});

describe("Slow and many clients (limits on what an unauthenticated client can hold)", () => {
  /** A TLS connection to the server that has finished its handshake. */
  function open(server: RunningHttpsServer): Promise<TLSSocket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: server.port, ca: tls.cert, servername: "localhost" });
      socket.once("secureConnect", () => resolve(socket));
      socket.once("error", reject);
    });
  }

  /** Everything the server sends until it closes the connection. */
  function readToClose(socket: TLSSocket): Promise<string> {
    return new Promise((resolve) => {
      let text = "";
      socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
      socket.on("error", () => {});
      socket.once("close", () => resolve(text));
    });
  }

  it("a client that sends half a request head and then nothing is answered 408 and disconnected (headersTimeoutMs)", async () => {
    let called = 0;
    const handler: FetchHandler = () => {
      called += 1;
      return Promise.resolve(new Response("ok"));
    };
    await withServer(
      handler,
      async (server) => {
        const socket = await open(server);
        const answer = readToClose(socket);
        socket.write("POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n");
        // …and never the rest: the server must end it.
        expect(await answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(called).toBe(0);
      },
      { headersTimeoutMs: 200 },
    );
  });

  it("a client that stalls in the middle of the body is answered 408 and disconnected (bodyTimeoutMs); the log says so", async () => {
    await withServer(
      echo,
      async (server, log) => {
        const socket = await open(server);
        const answer = readToClose(socket);
        socket.write("POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n0123456789");
        const text = await answer;
        expect(text).toMatch(/^HTTP\/1\.1 408 /);
        expect(text).toMatch(/connection: close/i);
        expect(text).toContain("sent no more of the body for 100 ms");
        expect(log[0]).toMatchObject({ status: 408, bodyBytes: 10, error: "body timeout: nothing for 100 ms" });
      },
      { bodyTimeoutMs: 100 },
    );
  });

  it("a body that keeps coming is not cut by bodyTimeoutMs, however long the whole takes", async () => {
    await withServer(
      echo,
      async (server) => {
        const socket = await open(server);
        const answer = readToClose(socket);
        socket.write("POST /x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 4\r\n\r\n");
        // One byte at a time, each sent only after the server has taken the one before (no clock involved).
        for (const byte of "abcd") {
          await new Promise<void>((done) => socket.write(byte, () => done()));
        }
        expect(await answer).toMatch(/^HTTP\/1\.1 200 /);
      },
      { bodyTimeoutMs: 60_000 },
    );
  });

  it("a client that trickles its TLS handshake a byte at a time is cut when the headers timeout has passed since it connected", async () => {
    const errors: string[] = [];
    await withServer(
      echo,
      async (server) => {
        const socket = netConnect({ host: "127.0.0.1", port: server.port });
        socket.on("error", () => {});
        let closed = false;
        socket.once("close", () => (closed = true));
        // A TLS handshake record that announces 512 bytes, then one byte every 20 ms: each byte would reset an
        // inactivity timer, so only a deadline counted from the connection's start ends it.
        await new Promise<void>((done) => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), () => done()));
        let sent = 0;
        while (!closed && sent < 500) {
          await new Promise((wait) => setTimeout(wait, 20));
          if (!closed) socket.write(Buffer.from([0]));
          sent += 1;
        }
        expect(closed).toBe(true);
        expect(errors.filter((e) => e.startsWith("TLS handshake not finished within 200 ms"))).toHaveLength(1);
        expect(errors).toHaveLength(1);
      },
      { headersTimeoutMs: 200, onConnectionError: (e) => errors.push(e.message) },
    );
  });

  it("clients that hold a half-sent head or never start TLS are freed, and a new client is still served past maxConnections", async () => {
    const errors: string[] = [];
    await withServer(
      echo,
      async (server) => {
        // The server's own sockets, to count: each must be freed while its client still holds its end.
        const serverSide: Socket[] = [];
        let dropped = 0;
        let seen = (): void => {};
        const allSeen = new Promise<void>((done) => (seen = done));
        const count = (): void => {
          if (serverSide.length + dropped === 4) seen();
        };
        server.server.on("connection", (socket: Socket) => {
          serverSide.push(socket);
          count();
        });
        server.server.on("drop", () => {
          dropped += 1;
          count();
        });
        const freed = (socket: Socket): Promise<void> =>
          socket.destroyed ? Promise.resolve() : new Promise((done) => socket.once("close", () => done()));

        // Two clients send half a request head, then neither read nor close (paused: not even the FIN is read).
        const halfOpen = [await open(server), await open(server)];
        for (const socket of halfOpen) {
          socket.write("POST /v1/messages HTTP/1.1\r\nHost: localhost\r\n");
          socket.pause();
        }
        // Two TCP connections never start their TLS handshake; they read what comes but never close.
        const idle = [0, 1].map(() => {
          const socket = netConnect({ host: "127.0.0.1", port: server.port, allowHalfOpen: true });
          const got: Buffer[] = [];
          socket.on("data", (d: Buffer) => got.push(d));
          socket.on("error", () => {});
          return { socket, got };
        });
        // Four clients against a cap of three: one is turned away, the other three are held until freed.
        await allSeen;
        expect({ held: serverSide.length, dropped }).toEqual({ held: 3, dropped: 1 });
        await Promise.all(serverSide.map(freed));
        const connections = await new Promise<number>((resolve, reject) =>
          server.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
        );
        expect(connections).toBe(0);
        // The half-open clients never closed their ends: the server freed those sockets itself.
        for (const socket of halfOpen) expect(socket.destroyed).toBe(false);
        // No plain HTTP written into a connection that never finished its TLS handshake.
        for (const { got } of idle) expect(Buffer.concat(got).toString("latin1")).not.toMatch(/HTTP\//);

        // The log says why each held connection went, once each: the handshakes never finished, the heads timed out.
        const handshakes = errors.filter((e) => e.startsWith("TLS handshake not finished within 200 ms"));
        expect(handshakes.length).toBe(serverSide.length - halfOpen.length);
        expect(errors.length).toBe(serverSide.length);

        const answer = await send(server, { path: "/after" });
        expect(answer.status).toBe(200);
        for (const socket of [...halfOpen, ...idle.map((c) => c.socket)]) socket.destroy();
      },
      // A linger longer than the test's timeout: only a written answer's flush can free the half-open ones.
      { maxConnections: 3, headersTimeoutMs: 200, lingerMs: 600_000, onConnectionError: (e) => errors.push(e.message) },
    );
  });

  it("at most maxConnections connections at once: one more is closed at once; a freed place is taken again", async () => {
    await withServer(
      echo,
      async (server) => {
        const held = [await open(server), await open(server)];
        const refused = await new Promise<string>((resolve) => {
          const socket = connect({ host: "127.0.0.1", port: server.port, ca: tls.cert, servername: "localhost" });
          socket.once("secureConnect", () => {
            socket.destroy();
            resolve("connected");
          });
          socket.once("error", (e: NodeJS.ErrnoException) => resolve(`refused ${e.code ?? e.message}`));
          socket.once("close", () => resolve("refused (closed)"));
        });
        expect(refused).toMatch(/^refused/);
        const gone = new Promise((done) => held[0]?.once("close", done));
        held[0]?.destroy();
        await gone;
        // The server sees the close after the client: try until it has (the count, not a clock, decides).
        let answer: ClientAnswer | undefined;
        while (answer === undefined) {
          answer = await send(server, { path: "/again" }).catch(() => undefined);
        }
        expect(answer.status).toBe(200);
        held[1]?.destroy();
      },
      { maxConnections: 2 },
    );
  });
});
