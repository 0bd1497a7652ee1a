import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { generate } from "selfsigned";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TransportError } from "../ports.ts";
import { createSenderNetwork } from "../cli/senderPorts.ts";
import { createTlsFetch, parseHostPort, transportErrorOf, withContentLength } from "./tlsFetch.ts";

interface Identity {
  readonly cert: string;
  readonly key: string;
}

/** A self-signed certificate for `names` (and 127.0.0.1), as a test receiver would have. */
async function selfSigned(names: readonly string[]): Promise<Identity> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const pems = await generate([{ name: "commonName", value: names[0] ?? "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 24 * 3600 * 1000),
    extensions: [
      {
        name: "subjectAltName",
        altNames: [...names.map((value) => ({ type: 2 as const, value })), { type: 7 as const, ip: "127.0.0.1" }],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

let identity: Identity;
beforeAll(async () => {
  identity = await selfSigned(["b.example"]);
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(server: HttpsServer | NetServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

async function httpsServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  tls: { minVersion?: "TLSv1.2" | "TLSv1.3"; maxVersion?: "TLSv1.2" | "TLSv1.3" } = {},
): Promise<number> {
  const server = createHttpsServer(
    {
      cert: identity.cert,
      key: identity.key,
      minVersion: tls.minVersion ?? "TLSv1.2",
      ...(tls.maxVersion ? { maxVersion: tls.maxVersion } : {}),
    },
    handler,
  );
  server.on("tlsClientError", () => {});
  return listen(server);
}

async function rejection(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TransportError) return error;
    throw error;
  }
  throw new Error("expected the fetch to fail");
}

describe("TLS 1.3 fetch (SVC-6, AUTH-8)", () => {
  it("connects by --resolve, keeps SNI and Host as the URL's name, and streams both bodies", async () => {
    const seen: { host?: string; servername?: string | false | null; protocol?: string | null; path?: string } = {};
    const port = await httpsServer((req, res) => {
      const socket = req.socket as TLSSocket;
      seen.host = req.headers.host;
      seen.servername = socket.servername;
      seen.protocol = socket.getProtocol();
      seen.path = req.url;
      res.writeHead(200, { "content-type": "text/plain", "x-test": "yes" });
      // Echo each request chunk as it arrives, before the request body has ended.
      req.on("data", (chunk: Buffer) => res.write(chunk));
      req.on("end", () => res.end("|end"));
    });
    const fetch = createTlsFetch({ ca: identity.cert, resolve: new Map([["b.example", `127.0.0.1:${port}`]]) });

    let push: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = controller;
        controller.enqueue(new TextEncoder().encode("one"));
      },
    });
    const response = await fetch(
      new Request(`https://b.example:${port}/v1/messages?x=1`, { method: "POST", body, duplex: "half" } as RequestInit),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-test")).toBe("yes");
    expect(seen).toEqual({
      host: `b.example:${port}`,
      servername: "b.example",
      protocol: "TLSv1.3",
      path: "/v1/messages?x=1",
    });

    // The response is readable while the request body is still open: both directions stream.
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("one");
    push?.enqueue(new TextEncoder().encode("two"));
    push?.close();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("two|end");
  });

  it("sends a plain GET without a body and gives the answer whatever its status (G30: no redirects followed)", async () => {
    const port = await httpsServer((req, res) => {
      res.writeHead(302, { location: "https://elsewhere.example/" });
      res.end(req.method);
    });
    const fetch = createTlsFetch({ ca: identity.cert, resolve: new Map([[`b.example:${port}`, `127.0.0.1:${port}`]]) });
    const response = await fetch(new Request(`https://b.example:${port}/v1/capabilities`, { redirect: "manual" }));
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("https://elsewhere.example/");
    expect(await response.text()).toBe("GET");
  });

  it("a body in hand goes out with Content-Length, not chunked (withContentLength); a stream without one stays chunked", async () => {
    const seen: { length?: string; chunked?: string; body: string }[] = [];
    const port = await httpsServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        seen.push({
          ...(req.headers["content-length"] !== undefined && { length: req.headers["content-length"] }),
          ...(req.headers["transfer-encoding"] !== undefined && { chunked: req.headers["transfer-encoding"] }),
          body,
        });
        res.end("ok");
      });
    });
    const fetch = createTlsFetch({ ca: identity.cert });
    const post = (): Request =>
      new Request(`https://127.0.0.1:${port}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: new TextEncoder().encode("hello"),
      });
    expect((await fetch(await withContentLength(post()))).status).toBe(200);
    expect(seen.at(-1)).toEqual({ length: "5", body: "hello" });
    const asIs = await withContentLength(
      new Request(`https://127.0.0.1:${port}/`, { method: "POST", headers: { "content-length": "2" }, body: "hi" }),
    );
    expect(asIs.headers.get("content-length")).toBe("2");
    const get = new Request(`https://127.0.0.1:${port}/`);
    expect(await withContentLength(get)).toBe(get);
    expect((await fetch(post())).status).toBe(200);
    expect(seen.at(-1)).toEqual({ chunked: "chunked", body: "hello" });
  });

  it("send's and serve's sender network posts with Content-Length (createSenderNetwork)", async () => {
    const seen: (string | undefined)[] = [];
    const port = await httpsServer((req, res) => {
      seen.push(req.headers["content-length"] ?? req.headers["transfer-encoding"]);
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    const network = createSenderNetwork({
      resolve: [{ domain: "b.example", host: "127.0.0.1", port }],
      ca: Buffer.from(identity.cert),
      fallback: { svcb: () => Promise.resolve({ kind: "nxdomain" }), txt: () => Promise.resolve({ kind: "nxdomain" }) },
    });
    const response = await network.fetch(
      new Request(`https://b.example:${port}/v1/messages`, { method: "POST", body: new Uint8Array(546) }),
    );
    expect(response.status).toBe(200);
    expect(seen).toEqual(["546"]);
  });

  it("send --nameserver: an endpoint's address from the same resolver as SVCB, the SVCB hints when it has none", async () => {
    const port = await httpsServer((_req, res) => res.end("ok"));
    const asked: string[] = [];
    const fromDns = {
      addresses: (name: string, family: 4 | 6) => {
        asked.push(`${name} ${family}`);
        return Promise.resolve(
          name === "b.example" && family === 4
            ? { kind: "answer" as const, records: ["127.0.0.1"], ttlS: 60 }
            : { kind: "nodata" as const },
        );
      },
    };
    const svcb = {
      svcb: () =>
        Promise.resolve({
          kind: "answer" as const,
          records: [{ priority: 1, target: "hinted.b.example.", port, ipv4hint: ["127.0.0.1"] }],
          ttlS: 60,
        }),
      txt: () => Promise.resolve({ kind: "nxdomain" as const }),
    };
    const network = createSenderNetwork({
      resolve: [],
      ca: Buffer.from(identity.cert),
      fallback: svcb,
      addresses: fromDns,
    });
    // A record through the resolver: no --resolve, no system DNS.
    expect((await network.fetch(new Request(`https://b.example:${port}/v1/capabilities`))).status).toBe(200);
    expect(asked).toEqual(["b.example 4", "b.example 6"]);
    // No A/AAAA for the target: the ipv4hint of the SVCB record it was found by. (The certificate names b.example only.)
    await network.resolver.svcb("_svc.b.example");
    const hinted = await network.fetch(new Request(`https://hinted.b.example:${port}/`)).catch((e: unknown) => e);
    expect(hinted).toBeInstanceOf(TransportError);
    expect((hinted as TransportError).kind).toBe("tls");
    // Neither: no address at all is a dns failure.
    const none = await network.fetch(new Request(`https://none.b.example:${port}/`)).catch((e: unknown) => e);
    expect((none as TransportError).kind).toBe("dns");
  });

  it("answers 204 with an empty body", async () => {
    const port = await httpsServer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await createTlsFetch({ ca: identity.cert })(new Request(`https://127.0.0.1:${port}/`));
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });
});

describe("failures without an HTTP answer are TransportErrors (Errors rule 3, ERR-21)", () => {
  it("a TLS 1.2-only server fails the handshake: tls (SVC-6)", async () => {
    const port = await httpsServer(
      (_req, res) => {
        res.end("should not be reached");
      },
      { maxVersion: "TLSv1.2" },
    );
    const error = await rejection(createTlsFetch({ ca: identity.cert })(new Request(`https://127.0.0.1:${port}/`)));
    expect(error.kind).toBe("tls");
    expect(error.message).toMatch(/protocol version/);
  });

  it("a certificate nobody vouches for: tls", async () => {
    const port = await httpsServer((_req, res) => res.end("x"));
    const error = await rejection(createTlsFetch()(new Request(`https://127.0.0.1:${port}/`)));
    expect(error.kind).toBe("tls");
    expect(error.message).toMatch(/SELF_SIGNED|self-signed/i);
  });

  it("a certificate for another name: tls", async () => {
    const port = await httpsServer((_req, res) => res.end("x"));
    const fetch = createTlsFetch({ ca: identity.cert, resolve: new Map([["c.example", `127.0.0.1:${port}`]]) });
    const error = await rejection(fetch(new Request(`https://c.example:${port}/`)));
    expect(error.kind).toBe("tls");
    expect(error.message).toMatch(/c\.example/);
  });

  it("a port nobody listens on: connection-refused", async () => {
    const server = createNetServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
    );
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await rejection(createTlsFetch()(new Request(`https://127.0.0.1:${port}/`)));
    expect(error.kind).toBe("connection-refused");
  });

  it("a server that drops the connection after the handshake: connection-reset", async () => {
    const port = await httpsServer((req) => req.socket.destroy());
    const error = await rejection(createTlsFetch({ ca: identity.cert })(new Request(`https://127.0.0.1:${port}/`)));
    expect(error.kind).toBe("connection-reset");
  });

  it("a server that accepts TCP and says nothing: timeout", async () => {
    const sockets: Socket[] = [];
    const server = createNetServer((socket) => sockets.push(socket));
    const port = await listen(server);
    closers.push(async () => sockets.forEach((s) => s.destroy()));
    const error = await rejection(createTlsFetch({ timeoutMs: 20 })(new Request(`https://127.0.0.1:${port}/`)));
    expect(error.kind).toBe("timeout");
  });

  it("plain http is refused before any connection (SVC-6)", async () => {
    const error = await rejection(createTlsFetch()(new Request("http://b.example/v1/capabilities")));
    expect(error.kind).toBe("tls");
    expect(error.message).toMatch(/TLS 1\.3 is mandatory/);
  });

  it("a body cut off by the server errors the response stream with a TransportError", async () => {
    const port = await httpsServer((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial", () => res.socket?.destroy());
    });
    const response = await createTlsFetch({ ca: identity.cert })(new Request(`https://127.0.0.1:${port}/`));
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toBeInstanceOf(TransportError);
  });
});

describe("error mapping and --resolve targets", () => {
  const withCode = (code: string, message = code): Error => Object.assign(new Error(message), { code });

  it("maps socket error codes to TransportError kinds", () => {
    expect(transportErrorOf(withCode("ECONNREFUSED"), "connecting").kind).toBe("connection-refused");
    expect(transportErrorOf(withCode("EHOSTUNREACH"), "connecting").kind).toBe("connection-refused");
    expect(transportErrorOf(withCode("ECONNRESET")).kind).toBe("connection-reset");
    expect(transportErrorOf(withCode("EPIPE")).kind).toBe("connection-reset");
    expect(transportErrorOf(withCode("ECONNRESET"), "handshake").kind).toBe("tls");
    expect(transportErrorOf(withCode("ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION")).kind).toBe("tls");
    expect(transportErrorOf(withCode("EPROTO", "SSL routines:ssl3_read_bytes:tlsv1 alert protocol version")).kind).toBe(
      "tls",
    );
    expect(transportErrorOf(withCode("ERR_TLS_CERT_ALTNAME_INVALID")).kind).toBe("tls");
    expect(transportErrorOf(withCode("DEPTH_ZERO_SELF_SIGNED_CERT")).kind).toBe("tls");
    expect(transportErrorOf(withCode("CERT_HAS_EXPIRED")).kind).toBe("tls");
    expect(transportErrorOf(withCode("ETIMEDOUT")).kind).toBe("timeout");
    expect(transportErrorOf(withCode("ENOTFOUND")).kind).toBe("dns");
    const original = new TransportError("timeout", "kept");
    expect(transportErrorOf(original)).toBe(original);
  });

  it("parses address:port targets and refuses others", () => {
    expect(parseHostPort("127.0.0.1:8443")).toEqual({ host: "127.0.0.1", port: 8443 });
    expect(parseHostPort("[::1]:8443")).toEqual({ host: "::1", port: 8443 });
    expect(parseHostPort("localhost:8443")).toEqual({ host: "localhost", port: 8443 });
    expect(parseHostPort("127.0.0.1")).toBeUndefined();
    expect(parseHostPort("127.0.0.1:0")).toBeUndefined();
    expect(parseHostPort("127.0.0.1:99999")).toBeUndefined();
    expect(parseHostPort("::1:8443")).toBeUndefined();
    expect(() => createTlsFetch({ resolve: new Map([["b.example", "nowhere"]]) })).toThrow(/address:port/);
  });
});
