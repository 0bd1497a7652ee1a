/**
 * The fleet run (issue 5): the simulator's own cost on a large scenario.
 *
 * A scenario generated from a seed — 100 domains, each with a receiver and a
 * few mailboxes; 10,000 messages of a few KB submitted over the first days,
 * to random recipients across the domains (some to several, some to
 * mailboxes that do not exist, so DSNs travel too); random faults: outages
 * (refused, timeouts), 503s, 429s, extra latency, DNS failures — is run
 * through the world (`runLoadedScenario`: build, run to the end, invariants)
 * and timed: wall time, events, events per second, peak memory, and the
 * WebCrypto operations actually done.
 *
 * Then, in the same process, the floor: for every POST the simulator made,
 * one Ed25519 signature and one verification of that POST's signature base
 * and two SHA-256 digests of a body of its size (the sender's Content-Digest
 * and the receiver's check), one after another. The ratio total / floor says
 * what the simulator adds on top of the protocol's unavoidable cryptography.
 * Target: ≤ 1.5 (overhead below 50 % of it).
 *
 * It runs twice: with the core's crypto on WebCrypto (a browser Worker, the
 * desktop app) against a floor through `crypto.subtle`, and with the Node
 * provider (app/node/nodeCrypto.ts, what `mailscope run|check` install)
 * against a floor of the same node:crypto calls on this thread. Each floor is
 * done the way its run does crypto, so neither ratio is flattered by a slower
 * floor.
 *
 * `node bench/fleet.bench.ts [messages]` runs it alone (a smaller fleet is
 * labelled as such in every row).
 */
import { hash, KeyObject, sign as signInPlace, verify as verifyInPlace } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { assign, createActor, createMachine, type AnyMachineSnapshot } from "xstate";
import { nodeCryptoProvider } from "../app/node/nodeCrypto.ts";
import { useCryptoProvider, type CryptoProvider } from "../app/protocol/webCrypto.ts";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { startRunThread } from "../app/node/runThread.ts";
import { createRandom, type SeededRandom } from "../app/sim/random.ts";
import type { ScenarioInput } from "../app/sim/scenario.ts";
import type { DeliveryMachineDeps } from "../app/sender/deliveryContext.ts";
import type { Bench, BenchResult } from "./types.ts";

const DOMAINS = 100;
const MESSAGES = 10_000;
const SEED = 20260105;
const DAY_MS = 86_400_000;
/** Messages are submitted, and faults happen, over the first five virtual days. */
const SPAN_MS = 5 * DAY_MS;
const MiB = 1024 * 1024;
/** The floor is measured this many times over the same POSTs; the median counts. */
const FLOOR_ROUNDS = 3;
/** Issue 25's targets: the run within 2.5 × its bare crypto, ≥ 7,000 events/s, peak RSS ≤ 400 MiB. */
const RATIO_TARGET = 2.5;
const EVENTS_PER_S_TARGET = 7_000;
const PEAK_MIB_TARGET = 400;
/** Messages of the unmeasured fleet that warms each process's JIT first. */
const WARM_UP_MESSAGES = 200;

const domainName = (i: number): string => `d${String(i).padStart(2, "0")}.example`;
const MAILBOXES = ["alice", "bob", "carol", "dave", "erin"];

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  return items[random.int(0, items.length)] as T;
}

/** A window [from, until) inside the first `spanMs` of the run, `minMs`…`maxMs` long, as scenario times (ms). */
function windowOf(random: SeededRandom, spanMs: number, minMs: number, maxMs: number): { from: number; until: number } {
  const from = random.int(0, spanMs);
  return { from, until: from + random.int(minMs, maxMs) };
}

/** The fleet scenario of `seed`: `messages` messages across {@link DOMAINS} domains, with random faults. */
export function fleetScenario(seed: number, messages: number): ScenarioInput {
  const random = createRandom(seed);
  const names = Array.from({ length: DOMAINS }, (_, i) => domainName(i));
  const domains: NonNullable<ScenarioInput["domains"]> = {};
  for (const name of names) domains[name] = { mailboxes: [...MAILBOXES] };

  const mail = random.fork("messages");
  const list: NonNullable<ScenarioInput["messages"]> = [];
  for (let i = 0; i < messages; i++) {
    const from = `${pick(mail, MAILBOXES)}@${pick(mail, names)}`;
    const count = mail.chance(0.8) ? 1 : mail.int(2, 5);
    const to = new Set<string>();
    while (to.size < count) {
      // One recipient in 50 does not exist: rejected, and a DSN goes back.
      const local = mail.chance(0.02) ? "nobody" : pick(mail, MAILBOXES);
      to.add(`${local}@${pick(mail, names)}`);
    }
    list.push({
      id: `m${i + 1}`,
      at: mail.int(0, SPAN_MS),
      from,
      to: [...to],
      size: mail.int(1_000, 8_000),
    });
  }
  list.sort((a, b) => Number(a.at) - Number(b.at));

  const f = random.fork("faults");
  const host = (): string => `mx.${pick(f, names)}`;
  const network: NonNullable<NonNullable<ScenarioInput["faults"]>["network"]> = [];
  const H = 3_600_000;
  // Outages: a receiver refuses connections, or never answers; some outlast the 2 h fallback window.
  for (let i = 0; i < 20; i++) {
    const kind = f.chance(0.7) ? "connection-refused" : "timeout";
    network.push({ id: `outage${i}`, kind, host: host(), ...windowOf(f, SPAN_MS, H, 6 * H) });
  }
  // Overloaded receivers: some POSTs answered 503 or 429 with a Retry-After, for hours.
  for (let i = 0; i < 20; i++) {
    network.push({
      id: `503-${i}`,
      kind: "unavailable",
      host: host(),
      path: "/v1/messages",
      probability: 0.3,
      retryAfterS: f.int(30, 300),
      ...windowOf(f, SPAN_MS, 6 * H, 24 * H),
    });
  }
  for (let i = 0; i < 15; i++) {
    network.push({
      id: `429-${i}`,
      kind: "rate-limited",
      host: host(),
      path: "/v1/messages",
      probability: 0.3,
      retryAfterS: f.int(60, 600),
      ...windowOf(f, SPAN_MS, 6 * H, 24 * H),
    });
  }
  for (let i = 0; i < 10; i++) {
    network.push({
      id: `slow${i}`,
      kind: "latency",
      host: host(),
      latency: { distribution: "uniform", minMs: 100, maxMs: 3_000 },
      ...windowOf(f, SPAN_MS, 12 * H, 48 * H),
    });
  }
  // DNS: a domain's SVCB lookups fail (SERVFAIL), or its key record lookups time out.
  const dns: NonNullable<NonNullable<ScenarioInput["faults"]>["dns"]> = [];
  for (let i = 0; i < 10; i++) {
    dns.push({
      id: `servfail${i}`,
      kind: "servfail",
      name: `_svc.${pick(f, names)}`,
      probability: 0.3,
      ...windowOf(f, SPAN_MS, 2 * H, 12 * H),
    });
  }
  for (let i = 0; i < 5; i++) {
    dns.push({
      id: `keytimeout${i}`,
      kind: "timeout",
      name: `*._svckey.${pick(f, names)}`,
      probability: 0.3,
      ...windowOf(f, SPAN_MS, 2 * H, 12 * H),
    });
  }

  return {
    name: `fleet-${DOMAINS}-domains-${messages}-messages`,
    description: "Generated by bench/fleet.bench.ts: a fleet of domains under random faults.",
    seed,
    network: { latency: { distribution: "uniform", minMs: 5, maxMs: 80 } },
    dns: { latency: { distribution: "exponential", meanMs: 3 } },
    domains,
    messages: list,
    faults: { network, dns },
  };
}

// ── Counting what the core's crypto really did ───────────────────────

const COUNTED = ["sign", "verify", "digest", "importKey", "exportKey"] as const;
type Counted = (typeof COUNTED)[number];

/**
 * Installs `base` (WebCrypto itself when empty) wrapped so that each call of
 * the core's crypto is counted, until the returned function is called.
 */
function countCrypto(base: CryptoProvider): { counts: Record<Counted, number>; stop: () => void } {
  const counts = { sign: 0, verify: 0, digest: 0, importKey: 0, exportKey: 0 };
  const real = globalThis.crypto.subtle;
  // The provider's other members (its digests in pieces) are kept as they are: the run does what the CLI's does.
  const counting: Record<string, unknown> = { ...base };
  for (const name of COUNTED) {
    const own = base[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    const fallback = (real[name] as (...args: unknown[]) => Promise<unknown>).bind(real);
    counting[name] = (...args: unknown[]) => {
      counts[name]++;
      return (own ?? fallback)(...args);
    };
  }
  return { counts, stop: useCryptoProvider(counting as CryptoProvider) };
}

// ── Memory ────────────────────────────────────────────────────────────

function sampleMemory(): { peakRss: number; peakHeap: number; stop: () => void } {
  const peak = { peakRss: 0, peakHeap: 0 };
  const sample = (): void => {
    const m = process.memoryUsage();
    peak.peakRss = Math.max(peak.peakRss, m.rss);
    peak.peakHeap = Math.max(peak.peakHeap, m.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    get peakRss() {
      return peak.peakRss;
    },
    get peakHeap() {
      return peak.peakHeap;
    },
    stop: () => {
      clearInterval(timer);
      sample();
    },
  };
}

// ── The floor: the same POSTs' cryptography, bare ─────────────────────

interface Post {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly bodySize: number;
  readonly base: Uint8Array<ArrayBuffer>;
}

const encoder = new TextEncoder();

/** The RFC 9421 signature base of a traced POST, rebuilt from its recorded headers. */
function signatureBaseOf(url: string, headers: Readonly<Record<string, string>>): Uint8Array<ArrayBuffer> {
  const input = headers["signature-input"] ?? "";
  const params = input.replace(/^[^=]*=/, "");
  const components = [...(/^\(([^)]*)\)/.exec(params)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "");
  const lines = components.map((c) => {
    const value = c === "@method" ? "POST" : c === "@target-uri" ? url : (headers[c] ?? "");
    return `"${c}": ${value}`;
  });
  lines.push(`"@signature-params": ${params}`);
  return encoder.encode(lines.join("\n"));
}

/** Seconds of wall time and of CPU time (every thread of the process: the crypto's thread pool too). */
interface Took {
  readonly wallS: number;
  readonly cpuS: number;
}

function stopwatch(): () => Took {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wallS: (performance.now() - wall) / 1000, cpuS: (used.user + used.system) / 1e6 };
  };
}

/** What each of `rounds` rounds of `one` over every POST took, after a warm-up over the first 200. */
async function timedRounds(
  posts: readonly Post[],
  rounds: number,
  one: (post: Post) => Promise<void>,
): Promise<Took[]> {
  for (const post of posts.slice(0, 200)) await one(post); // warm-up
  const took: Took[] = [];
  for (let round = 0; round < rounds; round++) {
    const stop = stopwatch();
    for (const post of posts) await one(post);
    took.push(stop());
  }
  return took;
}

/** How the core's crypto runs: WebCrypto (a browser, a Worker, the desktop app) or the Node provider (the CLI). */
type CryptoMode = "webcrypto" | "node";

/**
 * What each round of the floor took, over every POST in turn: the same
 * operations the way `mode` does them — through `crypto.subtle`, or with
 * node:crypto's one-shot calls on this thread, as the Node provider does.
 */
async function bareCrypto(posts: readonly Post[], rounds: number, mode: CryptoMode): Promise<Took[]> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const privateKey = KeyObject.from(pair.privateKey);
  const publicKey = KeyObject.from(pair.publicKey);
  const largest = posts.reduce((n, p) => Math.max(n, p.bodySize), 0);
  const body = new Uint8Array(largest);
  for (let i = 0; i < body.length; i++) body[i] = 32 + (i % 90);
  const viaWebCrypto = async (post: Post): Promise<void> => {
    const view = body.subarray(0, post.bodySize);
    await crypto.subtle.digest("SHA-256", view); // the sender's Content-Digest
    const signature = await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, post.base);
    const valid = await crypto.subtle.verify({ name: "Ed25519" }, pair.publicKey, signature, post.base);
    if (!valid) throw new Error("bare verify failed");
    await crypto.subtle.digest("SHA-256", view); // the receiver's check
  };
  const inPlace = (post: Post): void => {
    const view = body.subarray(0, post.bodySize);
    hash("sha256", view, "buffer");
    const signature = signInPlace(null, post.base, privateKey);
    if (!verifyInPlace(null, post.base, publicKey, signature)) throw new Error("bare verify failed");
    hash("sha256", view, "buffer");
  };
  const one = mode === "webcrypto" ? viaWebCrypto : (post: Post) => Promise.resolve(inPlace(post));
  return timedRounds(posts, rounds, one);
}

// ── The plumbing floor: what the architecture mandates per POST, no protocol work ──

/** A delivery actor's bare bones: the transitions one accepted POST takes (submit, send, results, done). */
const plumbingMachine = createMachine({
  id: "plumbing",
  initial: "queued",
  context: { attempts: 0 },
  states: {
    queued: { on: { SEND: "sending" } },
    sending: {
      on: { ANSWER: { target: "answered", actions: assign({ attempts: ({ context }) => context.attempts + 1 }) } },
    },
    answered: { on: { DONE: "done" } },
    done: { type: "final" },
  },
});

/**
 * What each round of the plumbing floor took, over every POST in turn: the
 * pieces ARCHITECTURE.md and the issue mandate, with no protocol work in them
 * — a fetch `Request` with the POST's recorded headers and a body of its
 * size, its body read as the receiver reads it, a `Response` with a JSON
 * results document read back as the sender reads it, and an XState actor
 * driven through the transitions of an accepted delivery. No MSW (the fleet
 * skips it when no fault is in scope), no multipart, no signature base, no
 * trace: the least a fetch-and-XState simulator pays per POST.
 */
async function barePlumbing(posts: readonly Post[], rounds: number): Promise<Took[]> {
  const largest = posts.reduce((n, p) => Math.max(n, p.bodySize), 0);
  const body = new Uint8Array(largest).fill(0x41);
  const answer = JSON.stringify({ results: [{ recipient: "alice@d00.example", status: "accepted" }] });
  const one = async (post: Post): Promise<void> => {
    const actor = createActor(plumbingMachine).start();
    actor.send({ type: "SEND" });
    const request = new Request(post.url, {
      method: "POST",
      headers: post.headers,
      body: body.slice(0, post.bodySize),
    });
    const received = new Uint8Array(await request.arrayBuffer());
    if (received.length !== post.bodySize) throw new Error("bare plumbing lost bytes");
    const response = new Response(answer, { status: 200, headers: { "content-type": "application/json" } });
    await response.json();
    actor.send({ type: "ANSWER" });
    actor.send({ type: "DONE" });
    if (actor.getSnapshot().status !== "done") throw new Error("bare plumbing actor did not finish");
  };
  return timedRounds(posts, rounds, one);
}

// ── The delivery machine floor: the card's XState machine per POST, its ports answering at once ──

/**
 * What each round of the machine floor took, over every POST in turn: the
 * real delivery machine (app/sender/deliveryMachine.ts) through one accepted
 * attempt — discovery, the POST, judging, finished: its actions, its invoked
 * actors, its trace events and its microsteps read as the sender reads them
 * (`machine.transition`) into a recorder — with ports that answer at once
 * (discovery finds the endpoint, the POST's one recipient is accepted). No
 * crypto, no web objects, no network, no protocol parsing: what the machine
 * the card asks for costs per POST by itself (decision 0150).
 */
async function bareMachine(posts: readonly Post[], rounds: number): Promise<Took[]> {
  const [{ deliveryMachine }, { createRecorder }, { statePath, initialStatePath }, { defaultReadings }] =
    await Promise.all([
      import("../app/sender/deliveryMachine.ts"),
      import("../app/trace/recorder.ts"),
      import("../app/sender/statePath.ts"),
      import("../app/sender/readings.ts"),
    ]);
  let nowMs = Date.UTC(2026, 0, 1);
  const clock = {
    now: () => nowMs,
    setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
    clearTimeout: (id: unknown): void => clearTimeout(id as ReturnType<typeof setTimeout>),
  };
  const recorder = createRecorder();
  const capabilities = { versions: ["v1"], max_message_size: 26_214_400, max_recipients: 100 };
  const endpoint = { origin: "https://mx.d00.example", version: "v1", capabilities };
  const deps: DeliveryMachineDeps = {
    clock,
    random: createRandom(SEED),
    trace: recorder,
    readings: defaultReadings,
    senderDomain: "d01.example",
    problemBase: "https://d01.example/problems",
    discover: () => Promise.resolve({ kind: "endpoint", endpoint }),
    attempt: ({ delivery }) =>
      Promise.resolve({
        kind: "results",
        deliveryId: delivery.deliveryId,
        status: 200,
        verdicts: delivery.recipients.map((recipient) => ({ recipient, outcome: "accepted", rule: "RCP-2", gaps: [] })),
        notes: [],
        answeredAtMs: nowMs,
      }),
    handOff: () => Promise.resolve({ accepted: false }),
    reportFailures: () => undefined,
  };
  const largest = posts.reduce((n, p) => Math.max(n, p.bodySize), 0);
  const message = new Uint8Array(largest).fill(0x41);
  let n = 0;
  const one = async (post: Post): Promise<void> => {
    const id = `m${++n}@d01.example→d00.example`;
    nowMs += 1000;
    let current = initialStatePath(deliveryMachine);
    const actor = createActor(deliveryMachine, {
      id,
      input: {
        deps,
        messageId: `m${n}@d01.example`,
        domain: "d00.example",
        from: "alice@d01.example",
        message: message.subarray(0, post.bodySize),
        recipients: ["bob@d00.example"],
        submittedAtMs: nowMs,
      },
      clock,
      // As the sender's tracer (app/sender/sender.ts): each microstep's transitions as machine.transition.
      inspect: (event) => {
        if (event.type !== "@xstate.microstep") return;
        const from = current;
        const to = statePath((event.snapshot as AnyMachineSnapshot).value);
        current = to;
        for (const transition of event._transitions) {
          if (transition.target === undefined || transition.target.length === 0) continue;
          const meta = transition.meta as { name: string; rules: readonly string[] } | undefined;
          recorder.emit({
            name: "machine.transition",
            timeMs: nowMs,
            data: { deliveryActor: id, from, to, event: event.event.type, transition: meta?.name, rules: meta?.rules },
          });
        }
      },
    });
    const done = new Promise<void>((resolve, reject) =>
      actor.subscribe({
        next: (snapshot) => {
          if (snapshot.status === "done") resolve();
        },
        error: reject,
      }),
    );
    actor.start();
    await done;
    if (actor.getSnapshot().context.outcomes[0]?.outcome !== "accepted") throw new Error("bare machine: not accepted");
  };
  return timedRounds(posts, rounds, one);
}

/** A full garbage collection, so that one run's garbage is not collected during the next measure. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as (() => void) | undefined;
  gc?.();
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

// ── The run ───────────────────────────────────────────────────────────

/** What the fleet run did, read from its trace; the run itself is let go before the floor is measured. */
interface FleetRun {
  readonly totalS: number;
  readonly cpuS: number;
  readonly events: number;
  readonly traceEvents: number;
  readonly virtualDays: number;
  readonly posts: readonly Post[];
  readonly requests: number;
  readonly faulted: number;
  readonly dnsFailures: number;
  readonly outcomes: ReadonlyMap<string, number>;
  /** The process's peak RSS up to the end of the run (and its check). */
  readonly peakRss: number;
  /** The process's peak RSS once the bench has also read the run's trace for the floor's POSTs. */
  readonly scanRss: number;
  readonly peakHeap: number;
  readonly crypto: Readonly<Record<Counted, number>>;
}

async function runFleet(messages: number, mode: CryptoMode): Promise<FleetRun> {
  // The engine is loaded where the run runs (its thread), not by the process's main thread, as in `mailscope run`.
  const [{ runLoadedScenario }, { scenarioSchema }] = await Promise.all([
    import("../app/sim/runScenario.ts"),
    import("../app/sim/scenario.ts"),
  ]);
  const input = fleetScenario(SEED, messages);
  const scenario = scenarioSchema.parse(input);
  const source = JSON.stringify(input);

  collectGarbage();
  const memory = sampleMemory();
  const counting = countCrypto(mode === "node" ? nodeCryptoProvider() : {});
  const stop = stopwatch();
  let run: Awaited<ReturnType<typeof runLoadedScenario>>;
  try {
    run = await runLoadedScenario({ scenario, source, emls: new Map() }, { mailscope: "bench" });
  } finally {
    counting.stop();
    memory.stop();
  }
  const { wallS: totalS, cpuS } = stop();
  // The run's peak: up to its end. The scan below, the bench's own (the floor's POSTs, decoded from the run's
  // trace while the run is still held), is not the run's; it used to raise the row by ~11 MiB (decision 0220).
  const peakRss = Math.max(memory.peakRss, process.resourceUsage().maxRSS * 1024);
  if (!run.passed) {
    const failed = [...run.invariants, ...run.expectations].filter((c) => !c.passed);
    throw new Error(`the fleet run failed: ${run.error ?? failed.map((c) => `${c.id}: ${c.detail ?? ""}`).join("; ")}`);
  }
  if (!run.complete) throw new Error("the fleet run stopped at the horizon with events left");

  const posts: Post[] = [];
  let requests = 0;
  let faulted = 0;
  let dnsFailures = 0;
  for (const e of run.world.recorder.iterate()) {
    const d = e.data ?? {};
    if (e.name === "http.failure" || (e.name === "http.response" && d["fault"] !== undefined)) faulted++;
    if (e.name === "dns.answer" && d["kind"] !== "answer") dnsFailures++;
    if (e.name !== "http.request") continue;
    requests++;
    if (d["method"] !== "POST") continue;
    const headers = (d["headers"] ?? {}) as Record<string, string>;
    posts.push({
      url: String(d["url"]),
      headers,
      bodySize: Number(d["bodySize"]),
      base: signatureBaseOf(String(d["url"]), headers),
    });
  }
  const outcomes = new Map<string, number>();
  for (const row of run.outcomes) outcomes.set(row.outcome, (outcomes.get(row.outcome) ?? 0) + 1);
  return {
    totalS,
    cpuS,
    events: run.world.scheduler.executedEvents,
    traceEvents: run.world.recorder.length,
    virtualDays: (run.endMs - run.world.startMs) / DAY_MS,
    posts,
    requests,
    faulted,
    dnsFailures,
    outcomes,
    peakRss,
    scanRss: process.resourceUsage().maxRSS * 1024,
    peakHeap: memory.peakHeap,
    crypto: counting.counts,
  };
}

const MODE_LABEL: Record<CryptoMode, string> = {
  webcrypto: "WebCrypto",
  node: "Node provider",
};

/** What the fleet's thread is given. */
interface FleetThreadData {
  readonly fleetThread: true;
  readonly messages: number;
  readonly mode: CryptoMode;
}

/**
 * {@link runFleet} hosted as `mailscope run` hosts a run (app/node/runThread.ts,
 * decision 0130): in a worker thread with the same bounded young generation,
 * after a small fleet, not measured, in the same thread (its JIT warmed as in
 * a long-lived process, and as the floor is). The thread ends before the floor.
 */
async function runFleetInThread(messages: number, mode: CryptoMode): Promise<FleetRun> {
  const data: FleetThreadData = { fleetThread: true, messages, mode };
  const thread = startRunThread(new URL(import.meta.url), data);
  return new Promise((resolve, reject) => {
    thread.once("message", (run: FleetRun) => {
      resolve(run);
      void thread.terminate();
    });
    thread.once("error", reject);
    thread.once("exit", (code) => reject(new Error(`the fleet's thread stopped with exit code ${code}`)));
  });
}

/** One fleet run with the core's crypto done as `mode` does it, against the floor done the same way. */
async function fleetWith(messages: number, mode: CryptoMode, label: string): Promise<BenchResult[]> {
  const how = MODE_LABEL[mode];
  const run = await runFleetInThread(messages, mode);
  const { totalS, events, posts } = run;
  // The run and its trace are garbage now: collected here, not during the floor.
  collectGarbage();
  const rounds = await bareCrypto(posts, FLOOR_ROUNDS, mode);
  const bareS = median(rounds.map((r) => r.wallS));
  const bareCpuS = median(rounds.map((r) => r.cpuS));
  const ratio = totalS / bareS;
  const plumbing = await barePlumbing(posts, FLOOR_ROUNDS);
  const plumbingS = median(plumbing.map((r) => r.wallS));
  const machine = await bareMachine(posts, FLOOR_ROUNDS);
  const machineS = median(machine.map((r) => r.wallS));
  const machineCpuS = median(machine.map((r) => r.cpuS));
  const c = run.crypto;
  const outcomeNote = [...run.outcomes].map(([k, v]) => `${v} ${k}`).join(", ");
  const floorHow =
    mode === "webcrypto"
      ? "crypto.subtle, one after another"
      : "node:crypto one-shot sign/verify/hash on this thread, as the Node provider does them";

  return [
    {
      name: `fleet wall time, ${how}${label}`,
      value: totalS,
      unit: "s",
      note: `${DOMAINS} domains, ${messages} messages, ${run.virtualDays.toFixed(2)} virtual days; build, run, invariants`,
    },
    {
      name: `fleet events executed, ${how}${label}`,
      value: events,
      unit: "events",
      note: `${run.traceEvents} trace events`,
    },
    {
      name: `fleet events per second, ${how}${label}`,
      value: events / totalS,
      unit: "events/s",
      target: { op: ">=", value: EVENTS_PER_S_TARGET, label: `≥ ${EVENTS_PER_S_TARGET.toLocaleString("en-US")}` },
      note: `scheduler events; ${Math.round(run.traceEvents / totalS).toLocaleString("en-US")} trace events/s; the wall ratio's target on this machine's floor (${RATIO_TARGET} × ${bareS.toFixed(2)} s) is ${Math.round(events / (RATIO_TARGET * bareS)).toLocaleString("en-US")} events/s (${EVENTS_PER_S_TARGET.toLocaleString("en-US")} is it on the floor of the machine the target was set on, ~3.65 s: decision 0290)`,
    },
    {
      name: `fleet peak memory, ${how}${label}`,
      value: run.peakRss / MiB,
      unit: "MiB RSS",
      target: { op: "<=", value: PEAK_MIB_TARGET, label: `≤ ${PEAK_MIB_TARGET}` },
      note: `a process of its own, the run in a thread with a bounded young generation as mailscope run runs it (Node, the TypeScript loader and a 200-message warm-up run in that thread included); peak heap used ${(run.peakHeap / MiB).toFixed(0)} MiB (memoryUsage sampled every 50 ms); up to the run's end, not the bench's scan of its trace afterwards (${(run.scanRss / MiB).toFixed(0)} MiB with it)`,
    },
    {
      name: `fleet HTTP POSTs, ${how}${label}`,
      value: posts.length,
      unit: "POSTs",
      note: `${run.requests} requests, ${run.faulted} hit by a fault, ${run.dnsFailures} DNS failures; recipients: ${outcomeNote}`,
    },
    {
      name: `fleet crypto operations, ${how}${label}`,
      value: c.sign + c.verify + c.digest + c.importKey + c.exportKey,
      unit: "ops",
      note: `${c.sign} sign, ${c.verify} verify, ${c.digest} digest, ${c.importKey} importKey, ${c.exportKey} exportKey`,
    },
    {
      name: `bare crypto of the same POSTs, ${how}${label}`,
      value: bareS,
      unit: "s",
      note: `${posts.length} × (Ed25519 sign + verify, 2 × SHA-256 of the body), ${floorHow}; median of ${FLOOR_ROUNDS} rounds (${rounds.map((r) => r.wallS.toFixed(2)).join(", ")} s)`,
    },
    {
      name: `fleet total vs bare crypto, ${how}${label}`,
      value: ratio,
      unit: "ratio",
      target: { op: "<=", value: RATIO_TARGET, label: `≤ ${RATIO_TARGET}` },
      note: `wall time; simulator overhead ${((ratio - 1) * 100).toFixed(0)} % of the crypto cost`,
    },
    {
      name: `bare plumbing of the same POSTs${label}`,
      value: plumbingS,
      unit: "s",
      note: `${posts.length} × (fetch Request with the POST's headers and body, body read, JSON Response read, XState actor through 3 transitions); no protocol work; median of ${FLOOR_ROUNDS} rounds`,
    },
    {
      name: `bare plumbing vs bare crypto, ${how}${label}`,
      value: plumbingS / bareS,
      unit: "ratio",
      note: "the mandated web objects and actor alone, against the crypto floor: above 0.5, ≤ 1.5 is out of reach before any protocol work",
    },
    {
      name: `bare delivery machine vs bare crypto, ${how}${label}`,
      value: machineS / bareS,
      unit: "ratio",
      note: `${posts.length} × the real XState delivery machine through one accepted attempt, ports answering at once, its transitions traced (${machineS.toFixed(2)} s; CPU ${(machineCpuS / bareCpuS).toFixed(2)} × the floor's): with the floor, what the card's machine leaves of the ${RATIO_TARGET} × target for everything else`,
    },
    {
      name: `fleet CPU time vs bare crypto's, ${how}${label}`,
      value: run.cpuS / bareCpuS,
      unit: "ratio",
      note: `${run.cpuS.toFixed(1)} s against ${bareCpuS.toFixed(2)} s of CPU, all threads; less sensitive to a busy machine`,
    },
  ];
}

/**
 * The fleet twice: with WebCrypto, as the core runs in a browser Worker and
 * the desktop app, and with the Node provider, as `mailscope run|check` run;
 * each against the floor computed the same way, so neither ratio flatters.
 * Each runs in a fresh process of its own (`--child`), so that its peak RSS is
 * its own and not the other's, and neither heats or fragments the other's heap.
 */
export async function fleet(messages = MESSAGES): Promise<BenchResult[]> {
  const webCrypto = await fleetInChild(messages, "webcrypto");
  const node = await fleetInChild(messages, "node");
  const label = labelOf(messages);
  const wall = (rows: BenchResult[]): number => rows[0]?.value ?? Number.NaN;
  return [
    ...webCrypto,
    ...node,
    {
      name: `fleet wall time, WebCrypto vs Node provider${label}`,
      value: wall(webCrypto) / wall(node),
      unit: "×",
      note: "how much faster the CLI's runs are than the same run on WebCrypto",
    },
  ];
}

const labelOf = (messages: number): string =>
  messages === MESSAGES ? "" : ` (SMALLER FLEET: ${messages} messages, not ${MESSAGES})`;

/** {@link fleetWith} in a child process: `node bench/fleet.bench.ts --child <mode> <messages>` prints its rows as JSON. */
async function fleetInChild(messages: number, mode: CryptoMode): Promise<BenchResult[]> {
  const { spawn } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", mode, String(messages)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`the ${mode} fleet's process exited ${code}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "[]") as BenchResult[];
}

export const bench: Bench = {
  name: "fleet",
  description: `${MESSAGES} messages across ${DOMAINS} domains with random faults over 5 virtual days, against bare crypto`,
  run: () => fleet(),
};

if (!isMainThread && (workerData as Partial<FleetThreadData> | undefined)?.fleetThread === true) {
  const { messages, mode } = workerData as FleetThreadData;
  await runFleet(WARM_UP_MESSAGES, mode);
  collectGarbage();
  parentPort?.postMessage(await runFleet(messages, mode));
} else if (import.meta.main) {
  const args = process.argv.slice(2);
  const n = args.find((a) => /^\d+$/.test(a));
  const messages = n === undefined ? MESSAGES : Number(n);
  const child = args.indexOf("--child");
  if (child >= 0) {
    const mode = args[child + 1] === "webcrypto" ? "webcrypto" : "node";
    console.log(JSON.stringify(await fleetWith(messages, mode, labelOf(messages))));
  } else {
    const { formatTable } = await import("./run.ts");
    const results = await fleet(messages);
    console.log(formatTable(results.map((result) => ({ bench: "fleet", result }))));
  }
}
