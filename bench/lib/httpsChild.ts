/**
 * A server in its own process, for the HTTPS benches: either `serve` (the
 * receiver behind `startServe`, exactly as `mailscope serve` runs it) or a
 * bare node:https server that only reads the body and answers a fixed 200.
 * Run with `fork(file, [mode, optionsJson], { execArgv: ["--expose-gc"] })`.
 *
 * It samples its own memory every few milliseconds and answers on the IPC
 * channel: `mark` (collect garbage, then start a new peak from here), `peak`
 * (the peak RSS and ArrayBuffer memory since the mark), `stop`.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:https";

interface ChildOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** serve only */
  readonly config?: string;
  readonly maildir?: string;
  readonly state?: string;
  /** serve only: "false" for --no-fsync */
  readonly fsync?: string;
}

type Inbound = { readonly type: "mark" } | { readonly type: "peak" } | { readonly type: "stop" };

const [mode, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson ?? "{}") as ChildOptions;
const send = (message: unknown): void => {
  process.send?.(message);
};

let baselineRss = process.memoryUsage.rss();
let peakRss = baselineRss;
let baselineAb = process.memoryUsage().arrayBuffers;
let peakAb = baselineAb;
const fast = setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
}, 2);
const slow = setInterval(() => {
  const ab = process.memoryUsage().arrayBuffers;
  if (ab > peakAb) peakAb = ab;
}, 10);

let close: () => Promise<void>;
let port: number;

if (mode === "serve") {
  const { startServe } = await import("../../app/cli/serve.ts");
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
} else if (mode === "bare") {
  const [cert, key] = await Promise.all([readFile(options.certFile, "utf8"), readFile(options.keyFile, "utf8")]);
  const answer = Buffer.from(JSON.stringify({ results: [{ recipient: "bob@b.example", status: "accepted" }] }));
  const server = createServer({ cert, key, minVersion: "TLSv1.3" }, (req, res) => {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
    });
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": answer.byteLength,
        "x-body-bytes": bytes,
      });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
  close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
} else {
  throw new Error(`unknown mode ${String(mode)} (serve | bare)`);
}

process.on("message", (message: Inbound) => {
  if (message.type === "mark") {
    (globalThis as { gc?: () => void }).gc?.();
    setTimeout(() => {
      baselineRss = process.memoryUsage.rss();
      peakRss = baselineRss;
      baselineAb = process.memoryUsage().arrayBuffers;
      peakAb = baselineAb;
      send({ type: "marked", baselineRss });
    }, 20);
  } else if (message.type === "peak") {
    // One last sample, so a peak at the very end counts.
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    peakAb = Math.max(peakAb, process.memoryUsage().arrayBuffers);
    send({ type: "peak", baselineRss, peakRss, baselineAb, peakAb });
  } else if (message.type === "stop") {
    clearInterval(fast);
    clearInterval(slow);
    void close().then(() => process.exit(0));
  }
});

send({ type: "ready", port });
