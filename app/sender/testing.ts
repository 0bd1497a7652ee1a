/**
 * Helpers for tests of the sender (and of what drives it): a stepping clock
 * that tells when its next timer is due, a seeded Random, an SVCB/TXT zone, an
 * SMTP relay that records hand-offs, a scripted receiver that answers with
 * real protocol documents, and a loop that runs a sender through virtual time
 * until it is quiet. Nothing here waits in real time.
 *
 * Pure core code: no test framework is imported, so the simulator may use it too.
 */
import type {
  Clock,
  DnsAnswer,
  Fetch,
  Random,
  Resolver,
  SmtpHandOff,
  SmtpRelay,
  SvcbRecord,
  UntypedTraceEvent,
  TraceSink,
} from "../ports.ts";
import { TransportError } from "../ports.ts";
import type { TransportFailureKind } from "../ports.ts";
import { parseMultipartBody } from "../protocol/multipart.ts";
import { createProblem, problemResponse } from "../protocol/resources.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import { createTestSender } from "../receiver/testing.ts";
import { initialDeliveryContext, type DeliveryContext, type DeliveryMachineDeps } from "./deliveryContext.ts";
import { defaultReadings } from "./readings.ts";
import type { SenderReadings } from "./readings.ts";
import { createSender } from "./sender.ts";
import type { Sender } from "./sender.ts";
import { pushAll } from "../protocol/lists.ts";

const decoder = new TextDecoder();

// ── Time ──────────────────────────────────────────────────────────────

/** A clock that moves only when told to, and says when its next timer is due. */
export interface SteppingClock extends Clock {
  /** When the earliest pending timer is due, or undefined when none is pending. */
  nextTimerAtMs(): number | undefined;
  /** Moves to `atMs`, running every timer due by then in (time, order of setting). */
  advanceTo(atMs: number): void;
  pending(): number;
  /** Resolves when every promise a timer callback returned has settled (a receiver's DSN after acceptance, say). */
  settled(): Promise<void>;
}

/** 2026-01-15 09:00:00 UTC, the start of every test run. */
export const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);

export function createSteppingClock(startMs = T0): SteppingClock {
  let nowMs = startMs;
  let sequence = 0;
  const timers = new Map<number, { atMs: number; seq: number; fn: (...args: unknown[]) => unknown }>();
  let work: Promise<unknown>[] = [];
  const earliest = () => [...timers.entries()].sort(([, a], [, b]) => a.atMs - b.atMs || a.seq - b.seq)[0];
  return {
    now: () => nowMs,
    setTimeout(fn, timeoutMs) {
      sequence += 1;
      timers.set(sequence, { atMs: nowMs + Math.max(0, timeoutMs), seq: sequence, fn });
      return sequence;
    },
    clearTimeout(id) {
      if (typeof id === "number") timers.delete(id);
    },
    nextTimerAtMs: () => earliest()?.[1].atMs,
    advanceTo(atMs) {
      for (;;) {
        const due = earliest();
        if (due === undefined || due[1].atMs > atMs) break;
        timers.delete(due[0]);
        nowMs = Math.max(nowMs, due[1].atMs);
        const result = due[1].fn();
        if (result instanceof Promise) work.push(result);
      }
      nowMs = Math.max(nowMs, atMs);
    },
    pending: () => timers.size,
    async settled() {
      while (work.length > 0) {
        const current = work;
        work = [];
        await Promise.allSettled(current);
      }
    },
  };
}

/**
 * Runs `senders` through virtual time: waits until each is idle, then moves the
 * clock to the next timer, again and again, until no timer is due by `untilMs`
 * (default: until none is pending at all). Returns the time reached.
 */
export async function runUntilQuiet(
  clock: SteppingClock,
  senders: readonly Pick<Sender, "whenIdle">[],
  untilMs = Number.POSITIVE_INFINITY,
): Promise<number> {
  const settle = async () => {
    // A sender's DSN may start work in another, a receiver's timer may submit one: settle until a round changes nothing.
    for (let round = 0; round < 3; round++) {
      await clock.settled();
      for (const s of senders) await s.whenIdle();
    }
  };
  await settle();
  for (;;) {
    const next = clock.nextTimerAtMs();
    if (next === undefined || next > untilMs) break;
    clock.advanceTo(next);
    await settle();
  }
  return clock.now();
}

// ── Randomness ────────────────────────────────────────────────────────

/** A seeded Random (mulberry32): the same seed gives the same draws. */
export function createSeededRandom(seed = 1): Random & { readonly draws: () => number } {
  let state = seed >>> 0;
  let draws = 0;
  const next = (): number => {
    draws += 1;
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    bytes: (length) => Uint8Array.from({ length }, () => Math.floor(next() * 256)),
    draws: () => draws,
  };
}

/** A Random that always draws `value` (0 → jitter factor 0.8, 0.999… → 1.2). */
export function constantRandom(value: number): Random {
  return { next: () => value, bytes: (length) => new Uint8Array(length).fill(Math.floor(value * 256)) };
}

// ── DNS ───────────────────────────────────────────────────────────────

type Outcome = "nxdomain" | "nodata" | "servfail" | "timeout";

/** An in-test zone: SVCB and TXT records, or failures, by name; every SVCB question is recorded. */
export interface TestZone extends Resolver {
  setSvcb(name: string, records: readonly SvcbRecord[]): void;
  setTxt(name: string, records: readonly string[]): void;
  setOutcome(name: string, kind: Outcome): void;
  /** Removes whatever `name` had: it answers NXDOMAIN. */
  clear(name: string): void;
  readonly svcbQueries: string[];
}

export function createTestZone(): TestZone {
  const svcb = new Map<string, readonly SvcbRecord[]>();
  const txt = new Map<string, readonly string[]>();
  const outcomes = new Map<string, Outcome>();
  const svcbQueries: string[] = [];
  const key = (name: string) => name.toLowerCase().replace(/\.$/, "");
  function answer<T>(name: string, records: readonly T[] | undefined): Promise<DnsAnswer<T>> {
    const outcome = outcomes.get(key(name));
    if (outcome !== undefined) return Promise.resolve({ kind: outcome });
    return Promise.resolve(records === undefined ? { kind: "nxdomain" } : { kind: "answer", records, ttlS: 300 });
  }
  return {
    setSvcb: (name, records) => {
      outcomes.delete(key(name));
      svcb.set(key(name), records);
    },
    setTxt: (name, records) => {
      outcomes.delete(key(name));
      txt.set(key(name), records);
    },
    setOutcome: (name, kind) => outcomes.set(key(name), kind),
    clear: (name) => {
      outcomes.delete(key(name));
      svcb.delete(key(name));
      txt.delete(key(name));
    },
    svcbQueries,
    svcb(name) {
      svcbQueries.push(name);
      return answer(name, svcb.get(key(name)));
    },
    txt: (name) => answer(name, txt.get(key(name))),
  };
}

/** `_svc.<domain>` → one ServiceMode record for `mx.<domain>`. */
export function publishService(zone: TestZone, domain: string, target = `mx.${domain}`, port?: number): void {
  zone.setSvcb(`_svc.${domain}`, [{ priority: 1, target, ...(port !== undefined && { port }) }]);
}

// ── SMTP ──────────────────────────────────────────────────────────────

export interface SmtpRecorder extends SmtpRelay {
  readonly handOffs: SmtpHandOff[];
}

/** An SMTP relay that records each hand-off and accepts it (G18 `accept`), or refuses every one. */
export function createSmtpRecorder(accept = true): SmtpRecorder {
  const handOffs: SmtpHandOff[] = [];
  return {
    handOffs,
    handOff(handOff) {
      handOffs.push(handOff);
      return Promise.resolve(accept ? { accepted: true } : { accepted: false, detail: "refused by the test relay" });
    },
  };
}

// ── Trace ─────────────────────────────────────────────────────────────

export interface TraceLog extends TraceSink {
  readonly events: UntypedTraceEvent[];
  named(name: string): UntypedTraceEvent[];
  /** The `data` of each event with this name. */
  data(name: string): Record<string, unknown>[];
}

export function createTraceLog(): TraceLog {
  const events: UntypedTraceEvent[] = [];
  return {
    events,
    emit: (event) => events.push(event),
    named: (name) => events.filter((e) => e.name === name),
    data: (name) => events.filter((e) => e.name === name).map((e) => ({ ...e.data })),
  };
}

// ── A scripted receiver ───────────────────────────────────────────────

/** The problem base of the scripted receiver (the receiver harness uses the same). */
export const PROBLEM_BASE = "https://mailscope.example/problems";

/** One POST the scripted receiver saw. */
export interface SeenPost {
  readonly atMs: number;
  readonly url: string;
  readonly idempotencyKey: string | null;
  readonly signatureInput: string | null;
  readonly contentDigest: string | null;
  readonly envelope: { from: string | null; to: string[] };
  readonly message: Uint8Array;
  readonly bodySize: number;
}

/** What a scripted answer gives back: a Response, or a failure with no answer. */
export type ScriptedAnswer = Response | { readonly fail: TransportFailureKind };

export interface ScriptedReceiver {
  /** A Fetch serving `origin`; other origins get a connection failure. */
  readonly fetch: (request: Request) => Promise<Response>;
  readonly posts: SeenPost[];
  /** The times of the capabilities fetches. */
  readonly capabilityFetches: number[];
  /** Answers for the next POSTs, in order; when none is left, `otherwise` answers. */
  queue(...answers: ((post: SeenPost) => ScriptedAnswer)[]): void;
  /** The answer to POSTs when the queue is empty (default: every recipient accepted). */
  otherwise(answer: (post: SeenPost) => ScriptedAnswer): void;
  /** The answer to capabilities requests. */
  capabilities(answer: () => ScriptedAnswer): void;
}

/** A capabilities answer: the document, with `Cache-Control` (null leaves the header out). */
export function capabilitiesAnswer(
  document: Record<string, unknown> = { max_message_size: 26214400 },
  cacheControl: string | null = "max-age=3600",
): Response {
  return new Response(JSON.stringify(document), {
    status: 200,
    headers: { "content-type": "application/json", ...(cacheControl !== null && { "cache-control": cacheControl }) },
  });
}

/** A 200 DeliveryResult. */
export function resultsAnswer(results: readonly Record<string, unknown>[]): Response {
  return new Response(JSON.stringify({ results }), { status: 200, headers: { "content-type": "application/json" } });
}

/** A 200 where every recipient of the POST has `status` (and `problem` unless accepted). */
export function allRecipients(
  post: SeenPost,
  status: string,
  problem?: ProblemIdentifier,
  extra: Record<string, unknown> = {},
): Response {
  return resultsAnswer(
    post.envelope.to.map((recipient) => ({
      recipient,
      status,
      ...(problem !== undefined && { problem: { type: `${PROBLEM_BASE}/${problem}` } }),
      ...extra,
    })),
  );
}

/** A request-level problem answer with the identifier's usual status, Retry-After when given. */
export function problemAnswer(
  identifier: ProblemIdentifier,
  status: number,
  options: { retryAfter?: string; versions?: readonly string[] } = {},
): Response {
  const problem =
    identifier === "unsupported_version"
      ? createProblem("unsupported_version", { problemBase: PROBLEM_BASE, versions: options.versions ?? ["v2"] })
      : createProblem(identifier as Exclude<ProblemIdentifier, "unsupported_version">, { problemBase: PROBLEM_BASE });
  return problemResponse(
    problem,
    status,
    options.retryAfter !== undefined ? { "retry-after": options.retryAfter } : undefined,
  );
}

/** A receiver at `origin` whose answers a test scripts, recording every POST. */
export function createScriptedReceiver(origin: string, clock: Pick<Clock, "now">): ScriptedReceiver {
  const posts: SeenPost[] = [];
  const capabilityFetches: number[] = [];
  const queued: ((post: SeenPost) => ScriptedAnswer)[] = [];
  let fallback: (post: SeenPost) => ScriptedAnswer = (post) => allRecipients(post, "accepted");
  let capabilities: () => ScriptedAnswer = () => capabilitiesAnswer();
  const give = (answer: ScriptedAnswer): Promise<Response> =>
    answer instanceof Response
      ? Promise.resolve(answer)
      : Promise.reject(new TransportError(answer.fail, `scripted ${answer.fail}`));
  return {
    posts,
    capabilityFetches,
    queue: (...answers) => {
      pushAll(queued, answers);
    },
    otherwise: (answer) => {
      fallback = answer;
    },
    capabilities: (answer) => {
      capabilities = answer;
    },
    async fetch(request) {
      const url = new URL(request.url);
      if (url.origin !== new URL(origin).origin)
        return Promise.reject(new TransportError("connection-refused", `nothing listens at ${url.origin}`));
      if (request.method === "GET" && url.pathname === "/v1/capabilities") {
        capabilityFetches.push(clock.now());
        return give(capabilities());
      }
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const body = new Uint8Array(await request.arrayBuffer());
      const parsed = parseMultipartBody(body, request.headers.get("content-type") ?? "");
      if (!parsed.ok) throw new Error(`the sender sent an unreadable body: ${JSON.stringify(parsed.violations)}`);
      const post: SeenPost = {
        atMs: clock.now(),
        url: request.url,
        idempotencyKey: request.headers.get("idempotency-key"),
        signatureInput: request.headers.get("signature-input"),
        contentDigest: request.headers.get("content-digest"),
        envelope: JSON.parse(decoder.decode(parsed.value.envelopeJson)) as { from: string | null; to: string[] },
        message: parsed.value.message,
        bodySize: body.length,
      };
      posts.push(post);
      const next = queued.shift() ?? fallback;
      return give(next(post));
    },
  };
}

// ── A sender wired to all of the above ────────────────────────────────

export interface SenderHarness {
  readonly clock: SteppingClock;
  readonly random: Random & { readonly draws: () => number };
  readonly zone: TestZone;
  readonly smtp: SmtpRecorder;
  readonly trace: TraceLog;
  /** The scripted receiver of b.example at https://mx.b.example. */
  readonly receiver: ScriptedReceiver;
  readonly sender: Sender;
  /** Runs the sender until it is quiet (or `untilMs`). */
  run(untilMs?: number): Promise<number>;
  /** A small RFC 5322 message from alice@a.example. */
  message(subject?: string): Uint8Array;
}

export interface SenderHarnessOptions {
  readonly readings?: Partial<SenderReadings>;
  readonly production?: boolean;
  /** Replaces the scripted receiver's Fetch. */
  readonly fetch?: Fetch;
  /** Leave b.example without an SVCB record. */
  readonly unpublished?: boolean;
  readonly smtpAccepts?: boolean;
  readonly seed?: number;
}

/** A sender for a.example (key from the receiver harness's test keys) and a scripted receiver for b.example. */
export async function createSenderHarness(options: SenderHarnessOptions = {}): Promise<SenderHarness> {
  const clock = createSteppingClock();
  const random = createSeededRandom(options.seed ?? 7);
  const zone = createTestZone();
  const smtp = createSmtpRecorder(options.smtpAccepts ?? true);
  const trace = createTraceLog();
  const receiver = createScriptedReceiver("https://mx.b.example", clock);
  if (options.unpublished !== true) publishService(zone, "b.example");
  const key = await createTestSender("a.example");
  zone.setTxt(key.keyid, [key.keyRecord]);
  const sender = createSender(
    {
      domain: "a.example",
      signingKey: key.privateKey,
      keyid: key.keyid,
      problemBase: PROBLEM_BASE,
      ...(options.readings !== undefined && { readings: options.readings }),
      ...(options.production !== undefined && { production: options.production }),
    },
    { clock, random, resolver: zone, fetch: options.fetch ?? receiver.fetch, smtp, trace },
  );
  return {
    clock,
    random,
    zone,
    smtp,
    trace,
    receiver,
    sender,
    run: (untilMs) => runUntilQuiet(clock, [sender], untilMs),
    message: (subject = "Hello") =>
      new TextEncoder().encode(
        `From: <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: ${subject}\r\nMessage-ID: <m1@a.example>\r\n\r\nHi.\r\n`,
      ),
  };
}

// ── The delivery machine's steps ─────────────────────────────────────

/**
 * A delivery context as the machine starts one (a.example's sender, m1@a.example to bob and carol at b.example,
 * jitter off, a seeded Random, a stepping clock at T0), for testing its steps (deliverySteps.ts,
 * deliveryTimes.ts) without running the machine. The I/O ports reject: a step never calls them.
 */
export function testDeliveryContext(): DeliveryContext {
  const notHere = (port: string) => () => Promise.reject(new Error(`${port}: not used by a step`));
  const deps: DeliveryMachineDeps = {
    clock: createSteppingClock(),
    random: createSeededRandom(7),
    trace: createTraceLog(),
    readings: { ...defaultReadings, retryTiming: { jitter: false, fallbackWindowS: 7_200 } },
    senderDomain: "a.example",
    problemBase: PROBLEM_BASE,
    discover: notHere("discover"),
    attempt: notHere("attempt"),
    handOff: notHere("handOff"),
    reportFailures: () => undefined,
  };
  return initialDeliveryContext({
    deps,
    messageId: "m1@a.example",
    domain: "b.example",
    from: "alice@a.example",
    message: new TextEncoder().encode("Subject: Hello\r\n\r\nHi.\r\n"),
    recipients: ["bob@b.example", "carol@b.example"],
    submittedAtMs: T0,
  });
}
