/**
 * What the durable idempotency store costs, and that `serve`'s memory stays
 * flat with it (issue 16, items 2 and 3; decision note 0013).
 *
 * 1. The store alone, in process: one delivery's work on it (a `get` that
 *    misses, then a `put` of a typical response), many in flight, through
 *    the in-memory store (the simulator's) and the SQLite store (serve's),
 *    with and without the WAL's flush. Event-loop time per delivery (what
 *    the rest of the server cannot use meanwhile), from the loop's
 *    utilisation; the flush itself waits in libuv's pool.
 * 2. The receiver in process (`createReceiver`, memory mail store, Node
 *    crypto provider), 10 KB messages with many in flight, over the
 *    in-memory store and over the SQLite store with its flush, in
 *    alternating rounds of one run: deliveries/s of each, and the ratio.
 * 3. `serve` (a child process, .eml store and idempotency store with fsync)
 *    under a bounded signed load on loopback (at most {@link RSS_IN_FLIGHT}
 *    requests in flight, each signed as it is sent): a {@link RSS_WARMUP_S} s
 *    warm-up as fast as it answers, then {@link RSS_RUN_S} s at a steady
 *    half of that rate (on a shared machine a closed loop's rate swings with
 *    the neighbours' load, and V8 resizes its young generation, by tens of
 *    MiB of RSS, with the allocation rate), its RSS sampled every second, each
 *    sample followed by a full collection (so what grows is what is kept,
 *    not garbage a lazy collector has not reached yet): the mean RSS of the
 *    last 10 s against the mean of the first 10 s, target within 10 %; and
 *    the heap kept after collection, its growth per delivery in between,
 *    target ≤ 200 bytes (the memory store kept ~1.8 KB per delivery).
 *
 * `MAILSCOPE_BENCH_RSS_S` and `MAILSCOPE_BENCH_WARMUP_S`
 * shorten part 3 for a quick look (not for the table);
 * `MAILSCOPE_BENCH_DEBUG=1` prints each sample.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { loadOrCreateCertificate } from "../app/node/httpServer.ts";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { openSqliteIdempotencyStore } from "../app/node/sqliteIdempotencyStore.ts";
import { createSystemClock } from "../app/node/systemPorts.ts";
import { chooseBoundary } from "../app/protocol/multipart.ts";
import { useCryptoProvider } from "../app/protocol/webCrypto.ts";
import { createMemoryIdempotencyStore, type IdempotencyStore } from "../app/receiver/idempotencyStore.ts";
import { createMemoryMailStore } from "../app/receiver/memoryMailStore.ts";
import { createReceiver } from "../app/receiver/receiver.ts";
import { createTestSender, receiverConfigYaml, signedDelivery, type TestSender } from "../app/receiver/testing.ts";
import { aliceToBob, messageOf, noDns, postHttps, receiverConfig } from "./lib/harness.ts";
import type { Bench, BenchResult } from "./types.ts";

const MiB = 1024 * 1024;
const STORE_N = 4000;
const STORE_IN_FLIGHT = 16;
const RECEIVER_ROUND = 400;
const RECEIVER_ROUNDS = 5;
const RECEIVER_IN_FLIGHT = 16;
const RSS_WARMUP_S = Number(process.env["MAILSCOPE_BENCH_WARMUP_S"] ?? 20);
const RSS_RUN_S = Number(process.env["MAILSCOPE_BENCH_RSS_S"] ?? 60);
const RSS_IN_FLIGHT = 8;
/** The measured run goes at this share of the rate the warm-up reached. */
const RSS_PACE_SHARE = 0.5;
const RETENTION_MS = 7 * 24 * 3600 * 1000;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** Runs `n` jobs with `inFlight` at a time. */
async function pool(n: number, inFlight: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await job(next++);
    }),
  );
}

/** A response like the receiver's 200 for one recipient. */
const RESPONSE = {
  status: 200,
  headers: [["content-type", "application/json"]] as [string, string][],
  body: new TextEncoder().encode(JSON.stringify({ results: [{ recipient: "bob@b.example", status: "accepted" }] })),
};

// ── 1. The store alone ────────────────────────────────────────────────

/** Event-loop milliseconds per delivery (a missed get and a put), and deliveries/s, for one store. */
async function storeCost(store: IdempotencyStore, tag: string): Promise<{ loopUs: number; perS: number }> {
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  await pool(STORE_N, STORE_IN_FLIGHT, async (i) => {
    const key = `${tag}-${i}`;
    const now = Date.now();
    if ((await store.get("a.example", key, now)) !== undefined) throw new Error(`${key} was known`);
    await store.put("a.example", key, {
      contentDigest: `sha-256:${i.toString(16).padStart(64, "0")}`,
      response: RESPONSE,
      storedAtMs: now,
      expiresAtMs: now + RETENTION_MS,
    });
  });
  const seconds = (performance.now() - started) / 1000;
  const used = performance.eventLoopUtilization(elu);
  return { loopUs: (used.active * 1000) / STORE_N, perS: STORE_N / seconds };
}

async function storeAlone(dir: string): Promise<BenchResult[]> {
  const memory = createMemoryIdempotencyStore();
  const durable = openSqliteIdempotencyStore(join(dir, "alone.sqlite"));
  const noFlush = openSqliteIdempotencyStore(join(dir, "alone-noflush.sqlite"), { fsync: false });
  try {
    await storeCost(memory, "warm");
    await storeCost(durable, "warm");
    await storeCost(noFlush, "warm");
    const m = await storeCost(memory, "run");
    const d = await storeCost(durable, "run");
    const n = await storeCost(noFlush, "run");
    const how = `${STORE_N} deliveries (get + put), ${STORE_IN_FLIGHT} in flight`;
    return [
      { name: "idempotency store: memory", value: m.loopUs, unit: "µs loop/delivery", note: how },
      {
        name: "idempotency store: SQLite, WAL flushed",
        value: d.loopUs,
        unit: "µs loop/delivery",
        note: `${Math.round(d.perS)} deliveries/s (group commit: flushes shared by the puts in flight)`,
      },
      {
        name: "idempotency store: SQLite, no flush",
        value: n.loopUs,
        unit: "µs loop/delivery",
        note: "the statements alone",
      },
    ];
  } finally {
    await durable.close();
    await noFlush.close();
  }
}

// ── 2. The receiver over each store ───────────────────────────────────

async function receiverOver(sender: TestSender, dir: string): Promise<BenchResult[]> {
  const clock = createSystemClock({ unref: true });
  const durable = openSqliteIdempotencyStore(join(dir, "receiver.sqlite"));
  const receivers = {
    memory: createReceiver(receiverConfig(sender), {
      clock,
      resolver: noDns,
      mailStore: createMemoryMailStore(),
      idempotencyStore: createMemoryIdempotencyStore(),
    }),
    sqlite: createReceiver(receiverConfig(sender), {
      clock,
      resolver: noDns,
      mailStore: createMemoryMailStore(),
      idempotencyStore: durable,
    }),
  };
  const message = messageOf(10 * 1024);
  const build = (i: number, tag: string): Promise<Request> =>
    aliceToBob(sender, message, Math.floor(clock.now() / 1000), `${tag}-${i}`);
  const round = async (which: "memory" | "sqlite", tag: string, n: number): Promise<number> => {
    const requests = await Promise.all(Array.from({ length: n }, (_, i) => build(i, tag)));
    const receiver = receivers[which];
    let accepted = 0;
    const started = performance.now();
    await pool(n, RECEIVER_IN_FLIGHT, async (i) => {
      const response = await receiver(requests[i] as Request);
      await response.arrayBuffer();
      if (response.status === 200) accepted += 1;
    });
    const seconds = (performance.now() - started) / 1000;
    if (accepted !== n) throw new Error(`${which}: only ${accepted} of ${n} deliveries were accepted`);
    return n / seconds;
  };
  try {
    await round("memory", "warm-m", 200);
    await round("sqlite", "warm-s", 200);
    const rates = { memory: [] as number[], sqlite: [] as number[] };
    for (let r = 0; r < RECEIVER_ROUNDS; r++) {
      rates.memory.push(await round("memory", `m${r}`, RECEIVER_ROUND));
      rates.sqlite.push(await round("sqlite", `s${r}`, RECEIVER_ROUND));
    }
    const memory = median(rates.memory);
    const sqlite = median(rates.sqlite);
    const how = `median of ${RECEIVER_ROUNDS} alternating rounds of ${RECEIVER_ROUND}, ${RECEIVER_IN_FLIGHT} in flight, 10 KB, memory mail store`;
    return [
      { name: "receiver over the memory idempotency store", value: memory, unit: "deliveries/s", note: how },
      {
        name: "receiver over the SQLite idempotency store",
        value: sqlite,
        unit: "deliveries/s",
        note: "the same, the WAL flushed before each answer",
      },
      {
        name: "receiver, SQLite vs memory idempotency store",
        value: sqlite / memory,
        unit: "ratio",
        note: "what durable keys cost a delivery, in the same run",
      },
    ];
  } finally {
    await durable.close();
  }
}

// ── 3. serve's memory under load ──────────────────────────────────────

interface Sample {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapKept: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

interface Child {
  readonly process: ChildProcess;
  readonly port: number;
  rss(): Promise<Sample>;
  stop(): Promise<void>;
}

async function startServeChild(options: Record<string, string>): Promise<Child> {
  const file = fileURLToPath(new URL("./lib/httpsChild.ts", import.meta.url));
  const child = fork(file, ["serve", JSON.stringify(options)], {
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = <T>(type: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: { type?: string }): void => {
        if (message.type !== type) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(message as T);
      };
      const onExit = (code: number | null): void => reject(new Error(`serve exited (${code ?? "signal"})`));
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  const ready = await next<{ port: number }>("ready");
  return {
    process: child,
    port: ready.port,
    rss: () => {
      const answer = next<Sample>("rss");
      child.send({ type: "rss" });
      return answer;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.send({ type: "stop" });
        setTimeout(() => child.kill(), 10_000).unref();
      }),
  };
}

async function serveMemory(sender: TestSender, dir: string): Promise<BenchResult[]> {
  const tls = await loadOrCreateCertificate({ stateDir: join(dir, "tls") });
  const config = join(dir, "receiver.yaml");
  await writeFile(config, receiverConfigYaml(sender, "catchAll"));
  const state = join(dir, "serve-state");
  const child = await startServeChild({
    certFile: tls.certFile,
    keyFile: tls.keyFile,
    config,
    maildir: join(dir, "serve-mail"),
    state,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: RSS_IN_FLIGHT });
  const message = messageOf(2 * 1024);
  let sent = 0;
  let notOk = 0;
  let stopping = false;
  /** 0 while warming up (as fast as the server answers); then the interval between requests. */
  let paceMs = 0;
  let nextAt = 0;
  const load = Promise.all(
    Array.from({ length: RSS_IN_FLIGHT }, async () => {
      while (!stopping) {
        if (paceMs > 0) {
          // One request every paceMs, never more than RSS_IN_FLIGHT at once; no burst to catch up after a stall.
          const now = performance.now();
          nextAt = Math.max(nextAt, now) + paceMs;
          await new Promise((resume) => setTimeout(resume, nextAt - paceMs - now));
          if (stopping) break;
        }
        const i = sent++;
        const to = `user${i % 64}@b.example`;
        const request = await signedDelivery({
          from: "alice@a.example",
          to: [to],
          message,
          key: sender.privateKey,
          keyid: sender.keyid,
          createdS: Math.floor(Date.now() / 1000),
          idempotencyKey: `load-${i}`,
          url: `https://localhost:${child.port}/v1/messages`,
          boundary: chooseBoundary(crypto.getRandomValues(new Uint8Array(24)), message),
        });
        const headers: Record<string, string> = {};
        request.headers.forEach((v, k) => {
          headers[k] = v;
        });
        const status = await postHttps(
          agent,
          tls.cert,
          child.port,
          headers,
          new Uint8Array(await request.arrayBuffer()),
        );
        if (status !== 200) notOk += 1;
      }
    }),
  );
  const samples: Sample[] = [];
  let startedAt = 0;
  let deliveredBefore: number | undefined;
  try {
    await new Promise((resume) => setTimeout(resume, RSS_WARMUP_S * 1000));
    // The run goes at half the rate the warm-up reached: a steady load, with room left when the machine gets busier.
    paceMs = 1000 / ((sent / RSS_WARMUP_S) * RSS_PACE_SHARE);
    deliveredBefore = sent;
    startedAt = performance.now();
    for (let s = 1; s <= RSS_RUN_S; s++) {
      await new Promise((resume) => setTimeout(resume, startedAt + s * 1000 - performance.now()));
      samples.push(await child.rss());
      if (process.env["MAILSCOPE_BENCH_DEBUG"] !== undefined) {
        const last = samples.at(-1);
        if (last !== undefined)
          console.error(
            `${s} s: ${sent} sent, rss ${(last.rss / MiB).toFixed(1)} heap ${(last.heapUsed / MiB).toFixed(1)} kept ${(last.heapKept / MiB).toFixed(1)} total ${(last.heapTotal / MiB).toFixed(1)} external ${(last.external / MiB).toFixed(1)} ab ${(last.arrayBuffers / MiB).toFixed(1)} MiB`,
          );
      }
    }
  } finally {
    stopping = true;
    await load.catch(() => {});
    agent.destroy();
    await child.stop();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const delivered = sent - (deliveredBefore ?? sent);
  if (notOk > 0) throw new Error(`${notOk} of ${sent} requests under load were not answered 200`);
  const window = Math.min(10, Math.floor(samples.length / 2));
  const first = mean(samples.slice(0, window).map((s) => s.rss));
  const last = mean(samples.slice(-window).map((s) => s.rss));
  const firstKept = mean(samples.slice(0, window).map((s) => s.heapKept));
  const lastKept = mean(samples.slice(-window).map((s) => s.heapKept));
  const between = (samples.length - window) * (delivered / Math.max(1, samples.length));
  // The keys are all there: the file, read after serve closed it.
  const db = new DatabaseSync(join(state, "idempotency.sqlite"), { readOnly: true });
  const kept = Number((db.prepare("SELECT count(*) AS n FROM idempotency").get() as { n: number }).n);
  db.close();
  return [
    {
      name: `serve under load, ${RSS_RUN_S} s`,
      value: delivered / seconds,
      unit: "deliveries/s",
      note: `paced at half the warm-up's rate, ≤ ${RSS_IN_FLIGHT} in flight, 2 KB, signed as sent, after ${RSS_WARMUP_S} s of warm-up at full speed; ${kept} keys in the file at the end`,
    },
    {
      name: `serve RSS, last ${window} s vs first ${window} s`,
      value: last / first,
      unit: "ratio",
      target: { op: "<=", value: 1.1, label: "≤ 1.1 (flat)" },
      note: `${(first / MiB).toFixed(1)} → ${(last / MiB).toFixed(1)} MiB; sampled each second, each sample followed by a full GC`,
    },
    {
      name: "serve heap kept after GC, growth per delivery",
      value: Math.max(0, lastKept - firstKept) / between,
      unit: "bytes/delivery",
      target: { op: "<=", value: 200, label: "≤ 200 (memory store: ~1,800)" },
      note: `${(firstKept / MiB).toFixed(1)} → ${(lastKept / MiB).toFixed(1)} MiB over ~${Math.round(between)} deliveries`,
    },
  ];
}

export const bench: Bench = {
  name: "idempotency",
  description: "the durable (SQLite) idempotency store against the in-memory one, and serve's RSS under a 60 s load",
  run: () => runParts(["store", "serve"]),
};

/** `store`: parts 1 and 2; `serve`: part 3. */
async function runParts(parts: readonly ("store" | "serve")[]): Promise<BenchResult[]> {
  const restore = useCryptoProvider(nodeCryptoProvider());
  const dir = await mkdtemp(join(tmpdir(), "mailscope-bench-idem-"));
  try {
    const sender = await createTestSender("a.example");
    return [
      ...(parts.includes("store") ? [...(await storeAlone(dir)), ...(await receiverOver(sender, dir))] : []),
      ...(parts.includes("serve") ? await serveMemory(sender, dir) : []),
    ];
  } finally {
    restore();
    await rm(dir, { recursive: true, force: true });
  }
}

/** `node bench/idempotency.bench.ts [store|serve]`: this bench alone (or one side), printed as `npm run bench` prints it. */
if (import.meta.main) {
  const part = process.argv[2];
  if (part !== undefined && part !== "store" && part !== "serve") {
    console.error(`usage: node bench/idempotency.bench.ts [store|serve] (not ${part})`);
    process.exit(2);
  }
  const { formatTable } = await import("./run.ts");
  const results = await runParts(part === undefined ? ["store", "serve"] : [part]);
  console.log(formatTable(results.map((result) => ({ bench: "idempotency", result }))));
}
