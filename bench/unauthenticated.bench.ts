/**
 * What unauthenticated clients can make `serve` hold (issue 16, item 4):
 * {@link CLIENTS} clients at once each POST a {@link BODY_MIB} MiB body
 * (under max_message_size, declared in Content-Length), to a `serve` in a
 * child process (bench/lib/httpsChild.ts) whose peak RSS is sampled from a
 * mark after a collection.
 *
 * 1. A fake signature: the signature is verified from the headers before
 *    the body is read, so no body is held (it is read and dropped by the
 *    HTTP layer after the 401, bounded by its drain limit).
 * 2. A real signature replayed with another body (the digest does not
 *    match): the bodies are read before the digest can be checked, at most
 *    `--max-unauthenticated-bodies` at once (default 16); the rest are 503.
 *    Each body goes to a spool file while it is hashed, not to memory
 *    (issue 16), and is deleted on the mismatch. Side by side, the same
 *    round against a `serve` that holds the bodies in memory as before (its
 *    crypto without the incremental digests, which the spool needs), and
 *    the ratio of the two peaks.
 *
 * Printed, not asserted: the peak RSS above the mark in MiB, and as a share
 * of what holding every body would take ({@link CLIENTS} × {@link BODY_MIB}
 * MiB; the issue measured 988 MiB for 32 × 25 MiB before the change).
 */
import { fork } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadOrCreateCertificate } from "../app/node/httpServer.ts";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { useCryptoProvider } from "../app/protocol/webCrypto.ts";
import { createTestSender, receiverConfigYaml, signedDelivery, textMessage } from "../app/receiver/testing.ts";
import { postHttps } from "./lib/harness.ts";
import type { Bench, BenchResult } from "./types.ts";

const MiB = 1024 * 1024;
const CLIENTS = 32;
const BODY_MIB = 16;

interface Peak {
  readonly baselineRss: number;
  readonly peakRss: number;
}

async function run(): Promise<BenchResult[]> {
  const restore = useCryptoProvider(nodeCryptoProvider());
  const dir = await mkdtemp(join(tmpdir(), "mailscope-bench-unauth-"));
  try {
    const sender = await createTestSender("a.example");
    const tls = await loadOrCreateCertificate({ stateDir: join(dir, "tls") });
    const config = join(dir, "receiver.yaml");
    await writeFile(config, receiverConfigYaml(sender, "catchAll"));
    /** A `serve` child; `bodiesInMemory`: without the incremental digests, so bodies are held as before the spool. */
    const startChild = async (bodiesInMemory: boolean) => {
      const tag = bodiesInMemory ? "memory" : "spool";
      const child = fork(
        fileURLToPath(new URL("./lib/httpsChild.ts", import.meta.url)),
        [
          "serve",
          JSON.stringify({
            certFile: tls.certFile,
            keyFile: tls.keyFile,
            config,
            maildir: join(dir, `mail-${tag}`),
            state: join(dir, `state-${tag}`),
            fsync: "false",
            bodiesInMemory: String(bodiesInMemory),
          }),
        ],
        { execArgv: ["--expose-gc"], stdio: ["ignore", "ignore", "inherit", "ipc"] },
      );
      const next = <T>(type: string): Promise<T> =>
        new Promise<T>((resolve) => {
          const on = (m: { type?: string }): void => {
            if (m.type !== type) return;
            child.off("message", on);
            resolve(m as T);
          };
          child.on("message", on);
        });
      const { port } = await next<{ port: number }>("ready");
      const stop = (): Promise<void> =>
        new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.send({ type: "stop" });
          setTimeout(() => child.kill(), 10_000).unref();
        });
      return { child, next, port, stop };
    };
    const results: BenchResult[] = [];
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "x".repeat(BODY_MIB * MiB) });
    const round = async (
      server: Awaited<ReturnType<typeof startChild>>,
      label: string,
      fake: boolean,
      digest: "sha-256" | "sha-512" = "sha-256",
    ): Promise<number> => {
      const { child, next, port } = server;
      const agent = new Agent({ keepAlive: false, maxSockets: CLIENTS });
      try {
        const requests = await Promise.all(
          Array.from({ length: CLIENTS }, async (_, i) => {
            const request = await signedDelivery({
              from: "alice@a.example",
              to: ["bob@b.example"],
              message,
              key: sender.privateKey,
              keyid: sender.keyid,
              createdS: Math.floor(Date.now() / 1000),
              idempotencyKey: `${label.replace(/[^a-z]+/g, "-")}-${i}`,
              url: `https://localhost:${port}/v1/messages`,
              ...(fake && { headers: { signature: "sig1=:AAAA:" } }),
              ...(digest === "sha-512" && { digestAlgorithms: ["sha-512" as const] }),
            });
            const headers: Record<string, string> = {};
            request.headers.forEach((v, n) => (headers[n] = v));
            const body = Buffer.from(await request.arrayBuffer());
            // A replayed signature with another body: one byte changed, the digest no longer matches.
            if (!fake) body[body.length - 10] = 0x79;
            return { headers, body };
          }),
        );
        child.send({ type: "mark" });
        await next("marked");
        const statuses = await Promise.all(
          requests.map((r) =>
            postHttps(agent, tls.cert, port, r.headers, r.body, {
              errorAsZero: true,
              onBody: (status, text) => {
                if (process.env["MAILSCOPE_BENCH_DEBUG"] === "1") console.error(status, text.slice(0, 300));
              },
            }),
          ),
        );
        child.send({ type: "peak" });
        const peak = await next<Peak>("peak");
        const held = (peak.peakRss - peak.baselineRss) / MiB;
        const counts = new Map<number, number>();
        for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
        results.push({
          name: `serve peak RSS, ${CLIENTS} × ${BODY_MIB} MiB bodies, ${label}`,
          value: held,
          unit: "MiB over the mark",
          note: `${((100 * held) / (CLIENTS * BODY_MIB)).toFixed(0)} % of holding every body (${CLIENTS * BODY_MIB} MiB); answers ${[...counts].map(([s, n]) => `${n}×${s}`).join(", ")}`,
        });
        return held;
      } finally {
        agent.destroy();
      }
    };
    // The two servers run one after the other (not at once: each would count the other's load), the same rounds.
    const spooling = await startChild(false);
    let spooled: number;
    try {
      await round(spooling, "fake signature", true);
      spooled = await round(spooling, "real signature, other body, spooled (now)", false);
      // A Content-Digest of sha-512 alone: spooled too since the Node provider hashes it in pieces (0027).
      await round(spooling, "real signature, other body, sha-512 digest, spooled", false, "sha-512");
    } finally {
      await spooling.stop();
    }
    const inMemory = await startChild(true);
    let held: number;
    try {
      held = await round(inMemory, "real signature, other body, held in memory (before)", false);
    } finally {
      await inMemory.stop();
    }
    results.push({
      name: "replayed signature: peak RSS spooled / held in memory",
      value: spooled / held,
      unit: "ratio",
      note: `${spooled.toFixed(0)} MiB against ${held.toFixed(0)} MiB (issue 16: spool rather than buffer before authentication)`,
    });
    return results;
  } finally {
    restore();
    await rm(dir, { recursive: true, force: true });
  }
}

export const bench: Bench = {
  name: "unauthenticated",
  description:
    "serve's peak RSS while 32 clients send large bodies that never authenticate (fake or replayed signatures)",
  run,
};

/** `node bench/unauthenticated.bench.ts`: this bench alone, printed as `npm run bench` prints it. */
if (import.meta.main) {
  const { formatTable } = await import("./run.ts");
  console.log(formatTable((await run()).map((result) => ({ bench: "unauthenticated", result }))));
}
