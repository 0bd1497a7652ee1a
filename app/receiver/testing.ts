/**
 * Helpers for tests of the receiver and of what talks to it (the sender, the
 * simulator): a manual clock, an in-test DNS resolver, deterministic sender
 * keys published the G4 way, RFC 5322 messages, really signed deliveries, and
 * a harness that wires a receiver to all of them.
 *
 * Pure core code: no test framework is imported here, so the file
 * type-checks with the core and the simulator may use it too.
 */
import { requestWithBody } from "../protocol/bodies.ts";
import { digestBytes } from "../protocol/digest.ts";
import { createContentDigest } from "../protocol/digest.ts";
import type { DigestAlgorithm } from "../protocol/digest.ts";
import { buildMultipartBody } from "../protocol/multipart.ts";
import {
  buildKeyRecord,
  exportPublicKeyRaw,
  importSigningKeyFromSeed,
  keyidFor,
  signDelivery,
} from "../protocol/profile.ts";
import { signRequest } from "../protocol/signature.ts";
import type { ComponentInput, SignatureAlgorithm } from "../protocol/signature.ts";
import type { Clock, DnsAnswer, Resolver, SvcbRecord, TraceSink, UntypedTraceEvent } from "../ports.ts";
import type { Outbound, OutboundSubmission } from "./afterAcceptance.ts";
import type { ReceiverConfigInput } from "./config.ts";
import { createMemoryIdempotencyStore } from "./idempotencyStore.ts";
import type { MemoryIdempotencyStore } from "./idempotencyStore.ts";
import { createMemoryMailStore } from "./memoryMailStore.ts";
import type { MemoryMailStore } from "./memoryMailStore.ts";
import { createReceiver } from "./receiver.ts";
import type { ReceiverHandler, ReceiverPorts } from "./receiver.ts";

const encoder = new TextEncoder();

// ── Clock ─────────────────────────────────────────────────────────────

/** A clock that moves only when told to, running due timers in order. */
export interface ManualClock extends Clock {
  /** Seconds since the epoch, as signatures' `created` counts. */
  nowS(): number;
  /** Moves time forward by `ms`, running each due timer at its time and waiting for a promise it returns. */
  advance(ms: number): Promise<void>;
  /** Timers set and not yet run or cleared. */
  pending(): number;
}

export function createManualClock(startMs = Date.UTC(2026, 0, 15, 9, 0, 0)): ManualClock {
  let nowMs = startMs;
  let sequence = 0;
  const timers = new Map<number, { atMs: number; seq: number; fn: (...args: unknown[]) => unknown }>();
  return {
    now: () => nowMs,
    nowS: () => Math.floor(nowMs / 1000),
    setTimeout(fn, timeoutMs) {
      sequence += 1;
      timers.set(sequence, { atMs: nowMs + Math.max(0, timeoutMs), seq: sequence, fn });
      return sequence;
    },
    clearTimeout(id) {
      if (typeof id === "number") timers.delete(id);
    },
    async advance(ms) {
      const target = nowMs + ms;
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, t]) => t.atMs <= target)
          .sort(([, a], [, b]) => a.atMs - b.atMs || a.seq - b.seq)[0];
        if (due === undefined) break;
        const [id, timer] = due;
        timers.delete(id);
        nowMs = timer.atMs;
        await timer.fn();
      }
      nowMs = target;
    },
    pending: () => timers.size,
  };
}

// ── DNS ───────────────────────────────────────────────────────────────

/** An in-test resolver: TXT records and failures set by name; every question is recorded. */
export interface TestResolver extends Resolver {
  setTxt(name: string, records: readonly string[]): void;
  /** Answers `name` with this outcome instead of records. */
  setOutcome(name: string, kind: "nxdomain" | "nodata" | "servfail" | "timeout"): void;
  /** The TXT names asked, in order. */
  readonly txtQueries: readonly string[];
}

export function createTestResolver(): TestResolver {
  const txt = new Map<string, readonly string[]>();
  const outcomes = new Map<string, "nxdomain" | "nodata" | "servfail" | "timeout">();
  const txtQueries: string[] = [];
  return {
    setTxt: (name, records) => {
      outcomes.delete(name.toLowerCase());
      txt.set(name.toLowerCase(), records);
    },
    setOutcome: (name, kind) => outcomes.set(name.toLowerCase(), kind),
    txtQueries,
    svcb(): Promise<DnsAnswer<SvcbRecord>> {
      return Promise.resolve({ kind: "nxdomain" });
    },
    txt(name): Promise<DnsAnswer<string>> {
      txtQueries.push(name);
      const outcome = outcomes.get(name.toLowerCase());
      if (outcome !== undefined) return Promise.resolve({ kind: outcome });
      const records = txt.get(name.toLowerCase());
      return Promise.resolve(records === undefined ? { kind: "nxdomain" } : { kind: "answer", records, ttlS: 300 });
    },
  };
}

// ── Senders, keys and messages ────────────────────────────────────────

/** A sending domain's key, published the G4 way. */
export interface TestSender {
  readonly domain: string;
  readonly keyid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** `v=svc1; k=ed25519; p=…`, to put at `keyid` in DNS. */
  readonly keyRecord: string;
}

/** A sender whose Ed25519 key derives from its domain and selector, so every run has the same keys. */
export async function createTestSender(domain: string, selector = "s1"): Promise<TestSender> {
  const seed = await digestBytes("sha-256", encoder.encode(`mailscope test key ${selector} ${domain}`));
  const { privateKey, publicKey } = await importSigningKeyFromSeed(seed);
  return {
    domain,
    keyid: keyidFor(selector, domain),
    privateKey,
    publicKey,
    keyRecord: buildKeyRecord(await exportPublicKeyRaw(publicKey)),
  };
}

/** A small RFC 5322 message with CRLF line breaks. */
export function textMessage(options: {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject?: string;
  readonly messageId?: string;
  readonly body?: string;
  readonly dateMs?: number;
}): Uint8Array {
  const lines = [
    `From: <${options.from}>`,
    `To: ${options.to.map((t) => `<${t}>`).join(", ")}`,
    `Subject: ${options.subject ?? "Hello"}`,
    `Message-ID: <${options.messageId ?? `m1.${options.from.replace(/[^A-Za-z0-9.]/g, "")}`}@mailscope.test>`,
    `Date: ${new Date(options.dateMs ?? Date.UTC(2026, 0, 15, 9, 0, 0)).toUTCString().replace("GMT", "+0000")}`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "DKIM-Signature: v=1; a=rsa-sha256; d=a.example; s=sel; bh=untouched; b=kept-as-is",
    "",
    options.body ?? "Hi there.",
    "",
  ];
  return encoder.encode(lines.join("\r\n"));
}

/** What {@link signedDelivery} builds; every override exists to build a broken request on purpose. */
export interface SignedDeliveryOptions {
  /** Envelope sender; `null` is the null reverse-path. */
  readonly from: string | null;
  readonly to: readonly string[];
  readonly message: Uint8Array | string;
  /** The private key that signs. */
  readonly key: CryptoKey;
  readonly keyid: string;
  /** `created`, seconds since the epoch. */
  readonly createdS: number;
  readonly idempotencyKey: string;
  /** Default `https://mx.<first recipient's domain>/v1/messages`. */
  readonly url?: string;
  readonly method?: string;
  /** Replaces the envelope `{ from, to }`; a string is taken as the JSON text itself. */
  readonly envelope?: unknown;
  readonly boundary?: string;
  /** Replaces the whole body (the digest is computed over it unless `contentDigest` is given). */
  readonly body?: Uint8Array;
  /** Replaces the Content-Type header (before signing). */
  readonly contentType?: string;
  /** Replaces the Content-Digest header (before signing, so the signature covers the wrong value). */
  readonly contentDigest?: string;
  /** The algorithms of the Content-Digest computed over the body (default sha-256 alone). */
  readonly digestAlgorithms?: readonly DigestAlgorithm[];
  /** Signs these components instead of the profile's (G2). */
  readonly components?: readonly ComponentInput[];
  /** With `components`, writes an `alg` parameter. */
  readonly alg?: SignatureAlgorithm;
  /** Sets (string) or removes (null) headers after signing. */
  readonly headers?: Readonly<Record<string, string | null>>;
  /** Sends this body instead of the signed one, keeping the signed headers (a swapped body). */
  readonly bodyAfterSigning?: Uint8Array;
  /** Sends the body as this stream instead (for streaming tests); headers as signed. */
  readonly stream?: ReadableStream<Uint8Array>;
}

/** A POST /v1/messages request, multipart body, Content-Digest and RFC 9421 signature all real. */
export async function signedDelivery(options: SignedDeliveryOptions): Promise<Request> {
  const message = typeof options.message === "string" ? encoder.encode(options.message) : options.message;
  const domain = options.to[0]?.slice(options.to[0].lastIndexOf("@") + 1) ?? "b.example";
  const url = options.url ?? `https://mx.${domain}/v1/messages`;
  const envelope = options.envelope ?? { from: options.from, to: options.to };
  const built = buildMultipartBody(envelope, message, options.boundary ?? "mailscope-test-boundary-0f3c9a");
  const body = options.body ?? built.body;
  const headers = new Headers({
    "content-type": options.contentType ?? built.contentType,
    "content-digest": options.contentDigest ?? (await createContentDigest(body, options.digestAlgorithms)),
    "idempotency-key": options.idempotencyKey,
  });
  const unsigned = new Request(url, { method: options.method ?? "POST", headers });
  let signedHeaders: Headers;
  if (options.components === undefined && options.alg === undefined) {
    signedHeaders = (
      await signDelivery(unsigned, { privateKey: options.key, keyid: options.keyid, createdS: options.createdS })
    ).headers;
  } else {
    signedHeaders = (
      await signRequest(unsigned, {
        key: options.key,
        keyid: options.keyid,
        label: "sig1",
        components: options.components ?? [
          "@method",
          "@target-uri",
          "content-type",
          "content-digest",
          "idempotency-key",
        ],
        created: options.createdS,
        ...(options.alg !== undefined && { alg: options.alg }),
      })
    ).headers;
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) signedHeaders.delete(name);
    else signedHeaders.set(name, value);
  }
  const sent = options.stream ?? options.bodyAfterSigning ?? body;
  return new Request(url, {
    method: options.method ?? "POST",
    headers: signedHeaders,
    body: sent as BodyInit,
    ...(sent instanceof ReadableStream && { duplex: "half" }),
  } as RequestInit);
}

/** `request` again with its body at hand (app/protocol/bodies.ts), as app/sender/attempt.ts makes a POST. */
export async function withBodyAtHand(request: Request): Promise<Request> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  return requestWithBody(request.url, { method: request.method, headers: request.headers }, bytes);
}

/** A delivery's body to carol that no test request was signed for: sent after signing, a swapped body. */
export function swappedBody(): Uint8Array {
  return buildMultipartBody(
    { from: "alice@a.example", to: ["carol@b.example"] },
    textMessage({ from: "alice@a.example", to: ["carol@b.example"], body: "swapped" }),
    "mailscope-test-boundary-0f3c9a",
  ).body;
}

// ── A receiver wired to all of the above ──────────────────────────────

/** A trace sink that keeps every event. */
export interface TraceRecorder extends TraceSink {
  readonly events: UntypedTraceEvent[];
  named(name: string): UntypedTraceEvent[];
}

export function createTraceRecorder(): TraceRecorder {
  const events: UntypedTraceEvent[] = [];
  return { events, emit: (event) => events.push(event), named: (name) => events.filter((e) => e.name === name) };
}

/** The default configuration of {@link createReceiverHarness}: b.example with bob, carol and a small mailbox. */
export function testReceiverConfig(): ReceiverConfigInput {
  return {
    domains: ["b.example"],
    capabilities: { max_message_size: 26214400, max_recipients: 100, abuse_contact: "mailto:abuse@b.example" },
    problem_base: TEST_PROBLEM_BASE,
    mailboxes: [
      { address: "bob@b.example" },
      { address: "carol@b.example" },
      { address: "dave@b.example", quota: { messages: 1 } },
    ],
  };
}

export interface ReceiverHarness {
  readonly receiver: ReceiverHandler;
  readonly clock: ManualClock;
  readonly resolver: TestResolver;
  readonly store: MemoryMailStore;
  readonly idempotency: MemoryIdempotencyStore;
  readonly trace: TraceRecorder;
  /** The messages handed to the outbound side (DSNs). */
  readonly outbox: OutboundSubmission[];
  /** alice's domain, a.example, with its key published. */
  readonly sender: TestSender;
  /** A signed delivery from `sender` at the clock's time; options override the defaults. */
  request(options?: Partial<SignedDeliveryOptions>): Promise<Request>;
  /** `request` then the receiver. */
  deliver(options?: Partial<SignedDeliveryOptions>): Promise<Response>;
}

/**
 * A receiver for b.example on a manual clock, an in-memory store and a test
 * resolver where a.example's key is published. `configure` edits the default
 * configuration; `ports` replaces ports.
 */
export async function createReceiverHarness(
  configure: (config: ReceiverConfigInput) => ReceiverConfigInput = (c) => c,
  ports: Partial<ReceiverPorts> = {},
): Promise<ReceiverHarness> {
  const clock = createManualClock();
  const resolver = createTestResolver();
  const store = createMemoryMailStore();
  const idempotency = createMemoryIdempotencyStore();
  const trace = createTraceRecorder();
  const outbox: OutboundSubmission[] = [];
  const outbound: Outbound = {
    submit: (m) => {
      outbox.push({ ...m, to: [...m.to] });
      return Promise.resolve();
    },
  };
  const sender = await createTestSender("a.example");
  resolver.setTxt(sender.keyid, [sender.keyRecord]);
  const receiver = createReceiver(configure(testReceiverConfig()), {
    clock,
    resolver,
    mailStore: store,
    idempotencyStore: idempotency,
    trace,
    outbound,
    ...ports,
  });
  let counter = 0;
  const request = (options: Partial<SignedDeliveryOptions> = {}): Promise<Request> => {
    counter += 1;
    const from = options.from === undefined ? "alice@a.example" : options.from;
    const to = options.to ?? ["bob@b.example"];
    return signedDelivery({
      from,
      to,
      message: textMessage({ from: from ?? "mailer-daemon@a.example", to, messageId: `m${counter}` }),
      key: sender.privateKey,
      keyid: sender.keyid,
      createdS: clock.nowS(),
      idempotencyKey: `key-${counter}`,
      ...options,
    });
  };
  return {
    receiver,
    clock,
    resolver,
    store,
    idempotency,
    trace,
    outbox,
    sender,
    request,
    deliver: async (options) => receiver(await request(options)),
  };
}

// ── Reading answers ───────────────────────────────────────────────────

/** The problem base of {@link testReceiverConfig}. */
export const TEST_PROBLEM_BASE = "https://mailscope.example/problems";

/** A problem answer as a test wants to see it. */
export interface ProblemAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly retryAfter: string | null;
  /** The identifier after `{problem_base}/`, or `undefined` when the type is under another base. */
  readonly identifier: string | undefined;
  readonly json: Record<string, unknown>;
}

/** Reads a response as a problem document (it must be JSON). */
export async function readProblem(response: Response, problemBase = TEST_PROBLEM_BASE): Promise<ProblemAnswer> {
  const json = JSON.parse(await response.text()) as Record<string, unknown>;
  const type = typeof json["type"] === "string" ? json["type"] : "";
  const prefix = `${problemBase}/`;
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    retryAfter: response.headers.get("retry-after"),
    identifier: type.startsWith(prefix) ? type.slice(prefix.length) : undefined,
    json,
  };
}

/**
 * A receiver config (YAML, as `mailscope serve --config` reads it) for b.example that trusts
 * `sender`'s key: the mailboxes listed, or every address (`catchAll`).
 */
export function receiverConfigYaml(
  sender: TestSender,
  mailboxes: readonly string[] | "catchAll",
  problemBase = "https://b.example/problems",
): string {
  return [
    "domains: [b.example]",
    "capabilities:",
    "  max_message_size: 26214400",
    `problem_base: ${problemBase}`,
    ...(mailboxes === "catchAll" ? ["catchAll: true"] : ["mailboxes:", ...mailboxes.map((m) => `  - address: ${m}`)]),
    "keyRecords:",
    `  ${sender.keyid}: "${sender.keyRecord}"`,
    "",
  ].join("\n");
}
