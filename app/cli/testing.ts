/**
 * Helpers for the tests of `mailscope serve` over real HTTPS (serve.test.ts,
 * serveSpool.test.ts, serveRestart.test.ts and the others next to them): a
 * folder with b.example's receiver config trusting a test sender, the
 * options a test's `serve` starts with, deliveries signed for it, and a
 * client that trusts only its certificate.
 *
 * No test framework is imported here, like app/receiver/testing.ts.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createTestSender,
  receiverConfigYaml,
  signedDelivery,
  textMessage,
  type SignedDeliveryOptions,
  type TestSender,
} from "../receiver/testing.ts";
import type { RunningServe, ServeOptions } from "./serve.ts";

/** A temporary folder holding `receiver.yaml`: b.example with `mailboxes`, trusting a.example's test `sender`. */
export interface ServeFolder {
  readonly dir: string;
  readonly config: string;
  readonly sender: TestSender;
}

/** Makes a {@link ServeFolder} under the system's temporary folder, its name starting with `prefix`. */
export async function createServeFolder(
  prefix: string,
  mailboxes: readonly string[],
  problemBase?: string,
): Promise<ServeFolder> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const sender = await createTestSender("a.example");
  const config = join(dir, "receiver.yaml");
  await writeFile(config, receiverConfigYaml(sender, mailboxes, problemBase));
  return { dir, config, sender };
}

/** `serve` on 127.0.0.1, a port of the system's choice, no DNS, with its mail and state under `folder`. */
export function serveOptions(config: string, folder: string, extra: Partial<ServeOptions> = {}): ServeOptions {
  return {
    config,
    port: "0",
    host: "127.0.0.1",
    maildir: join(folder, "mail"),
    state: join(folder, "state"),
    dns: false,
    ...extra,
  };
}

/** Where a test's `serve` listens, and the certificate a client trusts (its only CA). */
export interface ServeAddress {
  readonly port: number;
  readonly cert: string;
}

/** The address of a `serve` running in this process. */
export function addressOf(running: RunningServe): ServeAddress {
  return { port: running.server.port, cert: running.tls.cert };
}

/** An answer as the client read it. */
export interface HttpsAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * One request over a real HTTPS connection to `to` (SNI and Host `localhost`, unless `headers` has a
 * Host). Bytes are sent whole (Node declares their Content-Length); a stream or other iterable is
 * written piece by piece as it yields, waiting for the socket to drain, so chunked unless `headers`
 * declares a Content-Length.
 */
export function httpsSend(
  to: ServeAddress,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;
  },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port: to.port,
        servername: "localhost",
        method: options.method ?? "GET",
        path: options.path,
        headers: { host: `localhost:${to.port}`, ...options.headers },
        ca: to.cert,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    const body = options.body;
    if (body === undefined || body instanceof Uint8Array) {
      req.end(body === undefined ? undefined : Buffer.from(body));
      return;
    }
    void (async () => {
      for await (const chunk of body) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
      req.end();
    })().catch(reject);
  });
}

/** A request's headers as a plain record (Node's client takes no `Headers`). */
export function headersOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  request.headers.forEach((v, n) => {
    out[n] = v;
  });
  return out;
}

/** Sends a web Request (as the sender builds it) to `to`: its method, path, headers (plus `headers`) and body. */
export async function sendRequest(
  to: ServeAddress,
  request: Request,
  headers: Record<string, string> = {},
): Promise<HttpsAnswer> {
  const url = new URL(request.url);
  return httpsSend(to, {
    method: request.method,
    path: url.pathname + url.search,
    headers: { ...headersOf(request), ...headers },
    body: new Uint8Array(await request.arrayBuffer()),
  });
}

/**
 * A delivery from alice@a.example to bob@b.example signed now by `sender` for the `serve` on `port`
 * (`https://localhost:<port>/v1/messages`), a one-line message unless `options` say otherwise.
 */
export function signedForServe(
  sender: TestSender,
  port: number,
  options: Partial<SignedDeliveryOptions> & { readonly idempotencyKey: string },
): Promise<Request> {
  return signedDelivery({
    from: "alice@a.example",
    to: ["bob@b.example"],
    message: "Subject: x\r\n\r\nx\r\n",
    key: sender.privateKey,
    keyid: sender.keyid,
    createdS: Math.floor(Date.now() / 1000),
    url: `https://localhost:${port}/v1/messages`,
    ...options,
  });
}

/** A message from alice@a.example to bob@b.example of `size` bytes: headers, then lines of text. */
export function largeMessage(size: number): Uint8Array {
  const head = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "" });
  const message = new Uint8Array(size);
  message.set(head);
  for (let i = head.length; i < size; i++) message[i] = i % 76 === 75 ? 10 : 0x30 + (i % 43);
  return message;
}

/** `bytes` in pieces of `size` (default 256 KiB), for a body written as it comes. */
export function* piecesOf(bytes: Uint8Array, size = 256 * 1024): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
