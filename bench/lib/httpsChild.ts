/**
 * A server in its own process, for the HTTPS benches: `serve` (the receiver
 * behind `startServe`, exactly as `mailscope serve` runs it), `floor` (a bare
 * server that also does what no receiver can skip: one Ed25519 verification,
 * the body's SHA-256, the durable .eml write; with `store: "none"` only the
 * verification and the digest), or `bare`, a node:https server
 * that only reads the body and answers a fixed 200.
 * Run with `fork(file, [mode, optionsJson], { execArgv: ["--expose-gc"] })`.
 *
 * It answers on the IPC channel: `mark` (collect garbage, then sample its own
 * memory every few milliseconds from here), `peak` (the peak RSS and
 * ArrayBuffer memory since the mark; sampling stops), `rss` (its RSS and
 * heap now, then the heap after a full collection), `stop`.
 */
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";

interface ChildOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** serve only */
  readonly config?: string;
  readonly maildir?: string;
  readonly state?: string;
  /** serve and floor: "false" for --no-fsync */
  readonly fsync?: string;
  /** floor only: "none" leaves out the .eml write (verification and digest only) */
  readonly store?: string;
  /**
   * serve only: "true" leaves the incremental digests out of the crypto provider, so a large body is
   * hashed after it is read and therefore held in memory before its digest is checked, as before the
   * spool before authentication (issue 16): the bench's side-by-side "before".
   */
  readonly bodiesInMemory?: string;
}

type Inbound =
  { readonly type: "mark" } | { readonly type: "peak" } | { readonly type: "rss" } | { readonly type: "stop" };

const [mode, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson ?? "{}") as ChildOptions;
const send = (message: unknown): void => {
  process.send?.(message);
};

// Memory is sampled only between a `mark` and its `peak` (the 25 MiB rounds): a sampler running every 2 ms
// costs both servers the same per second, which would weigh more on the slower one during throughput rounds.
let baselineRss = process.memoryUsage.rss();
let peakRss = baselineRss;
let baselineAb = process.memoryUsage().arrayBuffers;
let peakAb = baselineAb;
let samplers: NodeJS.Timeout[] = [];
const stopSampling = (): void => {
  for (const timer of samplers) clearInterval(timer);
  samplers = [];
};
const startSampling = (): void => {
  stopSampling();
  samplers = [
    setInterval(() => {
      const rss = process.memoryUsage.rss();
      if (rss > peakRss) peakRss = rss;
    }, 2),
    setInterval(() => {
      const ab = process.memoryUsage().arrayBuffers;
      if (ab > peakAb) peakAb = ab;
    }, 10),
  ];
};

let close: () => Promise<void>;
let port: number;

/** The fixed answer of the floor and bare servers. */
const ANSWER = Buffer.from(JSON.stringify({ results: [{ recipient: "bob@b.example", status: "accepted" }] }));

/** A node:https server (TLS 1.3, the bench's certificate) on a free loopback port, serving `handler`. */
async function listenTls(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ port: number; close: () => Promise<void> }> {
  const [cert, key] = await Promise.all([readFile(options.certFile, "utf8"), readFile(options.keyFile, "utf8")]);
  const server = createServer({ cert, key, minVersion: "TLSv1.3" }, handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

if (mode === "serve") {
  const { startServe } = await import("../../app/cli/serve.ts");
  // As `mailscope serve` runs (app/cli/main.ts installs it for every command).
  const { nodeCryptoProvider } = await import("../../app/node/nodeCrypto.ts");
  const { useCryptoProvider } = await import("../../app/protocol/webCrypto.ts");
  const { incrementalDigest, ...withoutIncremental } = nodeCryptoProvider();
  useCryptoProvider(
    options.bodiesInMemory === "true" ? withoutIncremental : { ...withoutIncremental, incrementalDigest },
  );
  const running = await startServe(
    {
      config: options.config ?? "",
      cert: options.certFile,
      key: options.keyFile,
      port: "0",
      host: "127.0.0.1",
      ...(options.maildir !== undefined && { maildir: options.maildir }),
      ...(options.state !== undefined && { state: options.state }),
      dns: false,
      fsync: options.fsync !== "false",
    },
    { out: () => {}, err: (line) => process.stderr.write(`${line}\n`) },
  );
  port = running.server.port;
  close = running.close;
} else if (mode === "floor") {
  // The bare server plus only what the spec makes unavoidable for each message: an Ed25519
  // verification (of a fixed signature base of a typical size), the SHA-256 of the body, and the
  // message stored durably through the same .eml store as serve. No parsing, no checks, no web objects:
  // what any receiver on this machine would at least pay.
  const { createEmlStore } = await import("../../app/node/emlStore.ts");
  const { generateKeyPairSync, hash, sign, verify } = await import("node:crypto");
  const store =
    options.store === "none"
      ? undefined
      : createEmlStore(options.maildir ?? "mail-floor", { fsync: options.fsync !== "false" });
  const pair = generateKeyPairSync("ed25519");
  const base = Buffer.alloc(420, "x");
  const signature = sign(null, base, pair.privateKey);
  let n = 0;
  ({ port, close } = await listenTls((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const ok = verify(null, base, pair.publicKey, signature);
      hash("sha256", body, "buffer");
      n += 1;
      const reply = (status: number): void => {
        res.writeHead(status, { "content-type": "application/json", "content-length": ANSWER.byteLength });
        res.end(ANSWER);
      };
      if (!ok) return reply(500);
      if (store === undefined) return reply(200);
      store.deliver(`user${n % 64}@b.example`, body, { deliveryId: `floor-${n}`, receivedAtMs: Date.now() }).then(
        () => reply(200),
        () => reply(500),
      );
    });
  }));
} else if (mode === "bare") {
  ({ port, close } = await listenTls((req, res) => {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
    });
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": ANSWER.byteLength,
        "x-body-bytes": bytes,
      });
      res.end(ANSWER);
    });
  }));
} else {
  throw new Error(`unknown mode ${String(mode)} (serve | floor | bare)`);
}

process.on("message", (message: Inbound) => {
  if (message.type === "mark") {
    (globalThis as { gc?: () => void }).gc?.();
    setTimeout(() => {
      baselineRss = process.memoryUsage.rss();
      peakRss = baselineRss;
      baselineAb = process.memoryUsage().arrayBuffers;
      peakAb = baselineAb;
      startSampling();
      send({ type: "marked", baselineRss });
    }, 20);
  } else if (message.type === "peak") {
    // One last sample, so a peak at the very end counts.
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    peakAb = Math.max(peakAb, process.memoryUsage().arrayBuffers);
    stopSampling();
    send({ type: "peak", baselineRss, peakRss, baselineAb, peakAb });
  } else if (message.type === "rss") {
    const { rss, heapUsed } = process.memoryUsage();
    // The heap again after a full collection: what is really kept (the RSS above is taken before it).
    (globalThis as { gc?: () => void }).gc?.();
    const after = process.memoryUsage();
    send({
      type: "rss",
      rss,
      heapUsed,
      heapKept: after.heapUsed,
      heapTotal: after.heapTotal,
      external: after.external,
      arrayBuffers: after.arrayBuffers,
    });
  } else if (message.type === "stop") {
    stopSampling();
    void close().then(() => process.exit(0));
  }
});

send({ type: "ready", port });
