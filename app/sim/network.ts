/**
 * The simulated network: each domain's Fetch resolves a Request through msw
 * request handlers, without patching any global (msw's `getResponse`).
 *
 * An exchange goes, in order, through:
 *
 * 1. the baseline latency (a virtual wait);
 * 2. the faults, in the order given, each an msw handler scoped by host, path,
 *    method, requesting domain, time window and probability: a matching fault
 *    either answers (a 503, a 429, an invalid capabilities document, …),
 *    throws a {@link TransportError} (refused, reset, TLS, timeout,
 *    partition), waits on the virtual clock and falls through (latency), or
 *    marks the exchange for what happens to the response (reset after the
 *    receiver handled the request, a slow body);
 * 3. the receiver mounted at its origin `https://<host>:<port>`, the last
 *    handler.
 *
 * Only the faults that could act on the exchange are in its list: those whose
 * host, path, method and source match and whose window is not over (see
 * `dispatch`); the others would let it through without a random draw, so the
 * run is the same, and a fleet of domains under many faults does not pay for
 * every fault on every request. With no fault left, the receiver is called
 * directly, as msw would call it; when the first fault left refuses the
 * connection for certain (no probability, in its window), it fails the
 * exchange directly too, as its handler would: no HTTP handler sees a
 * connection that was never made.
 *
 * A request nothing answers is refused, as a closed port would be.
 *
 * Every exchange is traced: `http.request` when sent, then `http.response` or
 * `http.failure`, with headers, body size and SHA-256 digest, and the whole
 * bodies when the recorder asks for them (`recordBodies`); the receiver is
 * handed the exchange's id with the request, and puts it on its own events.
 * Time only passes on
 * the virtual clock; host work (body reads, digests) goes through
 * `scheduler.track`. Probabilities and latency samples come from PRNG streams
 * forked per fault (by `id`, else by position), so adding a fault at the end
 * leaves every other stream as it was. Each fault is traced as a `fault.window`
 * when it is added (when the world is built, for a scenario's faults).
 */
import "./mswGuard.ts"; // before msw: msw needs localStorage when it loads in a Web Worker
import { getResponse, http, type RequestHandler } from "msw";
import * as z from "zod";
import { noTrace, traceEvent, TransportError, type Fetch, type TraceSink } from "../ports.ts";
import type { EmitData } from "../trace/events.ts";
import {
  boundedMs,
  faultScopeShape,
  faultWindowData,
  inWindow,
  latencySchema,
  matchGlob,
  MAX_LATENCY_MS,
  MAX_LATENCY_WHY,
  normalizeName,
  resolveWindow,
  sampleLatencyMs,
  type LatencySpec,
  type TimeWindow,
} from "./faultScope.ts";
import type { SeededRandom } from "./random.ts";
import type { Scheduler } from "./scheduler.ts";
import {
  bodyFields,
  headersObject,
  INLINE_DIGEST_MAX_BYTES,
  sha256Field,
  sha256FieldInline,
} from "../trace/httpFields.ts";
import { bodyBytesOf, bodySha256FieldOf, requestWithBody, responseWithBody } from "../protocol/bodies.ts";
import { errorMessage } from "../errorMessage.ts";
import { MAX_SPAN_S, MAX_SPAN_WHY } from "../protocol/resources.ts";
import { keptAnswers } from "../protocol/memo.ts";

export {
  EMPTY_SHA256_FIELD,
  headersObject,
  INLINE_DIGEST_MAX_BYTES,
  sha256Field,
  sha256FieldInline,
} from "../trace/httpFields.ts";

/** The capabilities path (GET-1); capabilities faults apply to it unless given another `path`. */
export const CAPABILITIES_PATH = "/v1/capabilities";
/** How long a timeout or a partition keeps the sender waiting, unless the fault says. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export const requestScope = {
  ...faultScopeShape,
  /** Glob over the host name (`mx.b.example`, `*.b.example`). */
  host: z.string().optional(),
  /** Glob over the path (`/v1/messages`, `/v1/*`). */
  path: z.string().optional(),
  method: z.string().optional(),
  /** Only requests made by this domain. */
  source: z.string().optional(),
};

/** A Retry-After in seconds: at most {@link MAX_SPAN_S}, 2 years. */
const retryAfterSeconds = z
  .int()
  .min(0)
  .max(MAX_SPAN_S, { error: `a Retry-After is at most ${MAX_SPAN_S} seconds: ${MAX_SPAN_WHY}` })
  .meta({ description: `Seconds; at most ${MAX_SPAN_S}: ${MAX_SPAN_WHY}.` });
/** A timeout: at most an hour. */
const timeoutMs = boundedMs(MAX_LATENCY_MS, "a timeout", MAX_LATENCY_WHY);

/**
 * The largest chunk of a slow-body fault, bytes: 100 MiB, the largest body a
 * scenario makes (scenario.ts's `MAX_MESSAGE_BYTES`); a chunk as large as the
 * answer's body delivers it in one piece, so a larger one means nothing.
 */
export const MAX_CHUNK_BYTES = 104_857_600;
/** Why {@link MAX_CHUNK_BYTES}. */
const MAX_CHUNK_WHY = "a resource limit: the largest message a scenario makes, 100 MiB, in one chunk";

const retryAfterShape = {
  /** A Retry-After header in seconds. */
  retryAfterS: retryAfterSeconds.optional(),
  /** A Retry-After header verbatim (an HTTP-date, or something malformed, for G21). Wins over `retryAfterS`. */
  retryAfter: z.string().optional(),
};

/**
 * A `{problem_base}`: an absolute URI (PRB-2), as `new URL` reads it. JSON Schema's `format: uri` is only an
 * annotation in draft 2020-12, so the schema also has a pattern, a scheme and a colon: coarser than the
 * parser, but an editor flags what is no URI at all.
 */
export const problemBaseSchema = z
  .url({ message: "is not an absolute URI (PRB-2)" })
  .meta({ pattern: "^\\s*[A-Za-z][A-Za-z0-9+.-]*:" });

const problemBase = problemBaseSchema.optional();

/** An HTTP status of the classes a fault may answer with (RFC 9110 §15: 1xx to 5xx; 1xx is no final answer). */
function httpStatus(min: number, max: number, what: string): z.ZodInt {
  const words = `${what} HTTP status, ${min} to ${max} (RFC 9110 §15)`;
  return z
    .int()
    .min(min, { error: `is not ${words}` })
    .max(max, { error: `is not ${words}` })
    .meta({ description: `${words[0]?.toUpperCase() ?? ""}${words.slice(1)}.` });
}

/** Zod schema of a network fault, as scenario files describe them. */
export const networkFaultSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("connection-refused"), ...requestScope }),
  z.strictObject({
    kind: z.literal("connection-reset"),
    ...requestScope,
    /** `request`: before the receiver sees it; `response`: the receiver handled it, the answer is lost. */
    phase: z.enum(["request", "response"]).default("request"),
  }),
  z.strictObject({ kind: z.literal("tls-failure"), ...requestScope }),
  z.strictObject({
    kind: z.literal("timeout"),
    ...requestScope,
    afterMs: timeoutMs.default(DEFAULT_TIMEOUT_MS),
  }),
  z.strictObject({ kind: z.literal("latency"), ...requestScope, latency: latencySchema }),
  z.strictObject({
    kind: z.literal("unavailable"),
    ...requestScope,
    ...retryAfterShape,
    /** A `temporary_failure` problem document (default), or a bare 503. */
    problem: z.boolean().default(true),
    problemBase,
  }),
  z.strictObject({
    kind: z.literal("server-error"),
    ...requestScope,
    status: httpStatus(500, 599, "a 5xx").default(500),
    body: z.string().default("Internal Server Error"),
  }),
  z.strictObject({
    kind: z.literal("rate-limited"),
    ...requestScope,
    retryAfterS: retryAfterSeconds.default(60),
    retryAfter: retryAfterShape.retryAfter,
    problemBase,
  }),
  z.strictObject({ kind: z.literal("forbidden"), ...requestScope, ...retryAfterShape, problemBase }),
  z.strictObject({
    kind: z.literal("capabilities-invalid"),
    ...requestScope,
    /** The document served: a string verbatim, or an object as JSON. Default: one with a too-small `max_message_size`. */
    body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
    contentType: z.string().default("application/json"),
  }),
  z.strictObject({
    kind: z.literal("capabilities-unfetchable"),
    ...requestScope,
    status: httpStatus(400, 599, "a 4xx or 5xx").default(404),
    body: z.string().default("Not Found"),
  }),
  z.strictObject({
    kind: z.literal("respond"),
    ...requestScope,
    /** Any answer a receiver or a front end could give: the status, the headers and the body, as written. */
    status: httpStatus(200, 599, "a 2xx to 5xx"),
    headers: z.record(z.string(), z.string()).default({}),
    /** A string verbatim, or an object or array as JSON (content-type application/json unless `headers` say). */
    body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  }),
  z.strictObject({
    kind: z.literal("partition"),
    ...faultScopeShape,
    /** Two domains that cannot reach each other, either way. */
    between: z.tuple([z.string(), z.string()]),
    failure: z.enum(["timeout", "connection-refused"]).default("timeout"),
    afterMs: timeoutMs.default(DEFAULT_TIMEOUT_MS),
  }),
  z.strictObject({
    kind: z.literal("slow-body"),
    ...requestScope,
    chunkBytes: z
      .int()
      .min(1)
      .max(MAX_CHUNK_BYTES, {
        error: (issue) =>
          `is ${String(issue.input)} bytes; a chunk is at most ${MAX_CHUNK_BYTES} bytes: ${MAX_CHUNK_WHY}`,
      })
      .meta({ description: `Bytes; at most ${MAX_CHUNK_BYTES}: ${MAX_CHUNK_WHY}.` })
      .default(1024),
    intervalMs: boundedMs(MAX_LATENCY_MS, "an interval", MAX_LATENCY_WHY).default(1000),
  }),
]);

/** A network fault as a scenario file writes it. */
export type NetworkFaultInput = z.input<typeof networkFaultSchema>;
/** A network fault with its defaults filled in. */
export type NetworkFault = z.output<typeof networkFaultSchema>;
/** The kinds of network fault. */
export type NetworkFaultKind = NetworkFault["kind"];

/** What the network tells a receiver about a request: the exchange's id, which the receiver puts on its events. */
export interface ExchangeContext {
  readonly exchangeId: string;
}

/** The members of a network fault that say which exchanges it concerns (`fault.window`'s `scope`). */
const NETWORK_SCOPE_KEYS = ["host", "path", "method", "source", "between"];

/** A receiver: the handler `createReceiver` returns. */
export type HttpHandlerFn = (request: Request, context?: ExchangeContext) => Promise<Response>;

/** What {@link createNetwork} needs. */
export interface NetworkOptions {
  readonly scheduler: Scheduler;
  /** The network's stream; each fault forks its own from it. */
  readonly random: SeededRandom;
  readonly trace?: TraceSink;
  readonly faults?: readonly NetworkFaultInput[];
  /** Latency of every exchange, before the request reaches the receiver. Default 0. */
  readonly latency?: LatencySpec;
  /** Put whole bodies in `http.request` / `http.response` (the recorder asks for them). */
  readonly recordBodies?: boolean;
  /** `{problem_base}` for the problem documents faults answer with, by host. Default `https://<host>/problems`. */
  readonly problemBase?: (host: string) => string;
}

/** The simulated network of one run. */
export interface Network {
  /**
   * Mounts a receiver at `origin` (`https://mx.b.example:8443`). `domain` is
   * the domain it serves, for partitions; default: the host name.
   */
  mount(origin: string, handler: HttpHandlerFn, options?: { readonly domain?: string }): void;
  unmount(origin: string): boolean;
  /** The Fetch port of `sourceDomain`: requests it makes are traced and partitioned as that domain's. */
  fetchFor(sourceDomain: string): Fetch;
  /** Adds a fault after the others (validated; throws a ZodError when invalid). */
  addFault(fault: NetworkFaultInput): NetworkFault;
  readonly faults: readonly NetworkFault[];
}

/**
 * What an exchange reads of its URL, each part read once from the parsed URL: a URL's getters make a new
 * string on every read (decision 0240), and a run sends its requests to a few URLs again and again.
 */
interface ExchangeUrl {
  readonly href: string;
  readonly origin: string;
  readonly host: string;
  readonly hostname: string;
  readonly pathname: string;
}

/** Parsed URLs kept by a network, by the request's URL (a run has a few: each receiver's endpoints). */
const URLS_KEPT = 1024;

/** The parts of a request's URL an exchange reads, parsed once for each URL (a URL that does not parse throws, kept never). */
function urlReader(): (href: string) => ExchangeUrl {
  return keptAnswers((href) => {
    const parsed = new URL(href);
    return {
      href: parsed.href,
      origin: parsed.origin,
      host: parsed.host,
      hostname: parsed.hostname,
      pathname: parsed.pathname,
    };
  }, URLS_KEPT);
}

interface Exchange {
  readonly id: string;
  readonly source: string;
  readonly url: ExchangeUrl;
  /** `url.hostname`. */
  readonly host: string;
  readonly method: string;
  /** Faults that act on the response: reset after handling, slow body. Made by the first (most exchanges meet none). */
  post?: CompiledFault[];
  /** The fault that decided the outcome, for the trace. */
  fault?: string;
}

interface CompiledFault {
  readonly spec: NetworkFault;
  readonly label: string;
  readonly window: TimeWindow;
  readonly chance: SeededRandom;
  readonly latency: SeededRandom;
  /** The msw handler that applies it. */
  readonly handler: RequestHandler;
  /** Its scope by what does not change while an exchange runs, read once from `spec` ({@link staticScopeOf}). */
  readonly scope: StaticScope;
}

/** A fault's path glob, method (uppercase), source and partition, as an exchange is compared with them. */
interface StaticScope {
  readonly path?: string;
  readonly method?: string;
  readonly source?: string;
  /** A partition's two domains, normalized. */
  readonly between?: readonly [string, string];
}

function staticScopeOf(spec: NetworkFault): StaticScope {
  if (spec.kind === "partition") {
    return { between: [normalizeName(spec.between[0]), normalizeName(spec.between[1])] };
  }
  const capabilities = spec.kind === "capabilities-invalid" || spec.kind === "capabilities-unfetchable";
  const path = spec.path ?? (capabilities ? CAPABILITIES_PATH : undefined);
  const method = spec.method ?? (capabilities ? "GET" : undefined);
  return {
    ...(path !== undefined && { path }),
    ...(method !== undefined && { method: method.toUpperCase() }),
    ...(spec.source !== undefined && { source: normalizeName(spec.source) }),
  };
}

/**
 * The trace's `bodyDigest` of a body: computed in JavaScript for the bodies
 * of everyday mail (no host task, nothing to wait for), through WebCrypto,
 * as tracked work, for large ones. The same bytes either way.
 */
function traceDigest(scheduler: Scheduler, bytes: Uint8Array, label: string): string | Promise<string> {
  if (bytes.length <= INLINE_DIGEST_MAX_BYTES) return sha256FieldInline(bytes);
  return scheduler.track(sha256Field(bytes), label);
}

/**
 * The trace's digests of bodies at hand, by the bytes themselves, which never change (app/protocol/bodies.ts): a
 * receiver answers every capabilities GET with the same bytes, about one exchange in two of a fleet.
 */
const atHandDigests = new WeakMap<Uint8Array, string>();

/** The `bodyDigest` of a request: the SHA-256 its sender computed of its bytes at hand when it gave it, else computed here. */
function requestDigest(scheduler: Scheduler, request: Request, bytes: Uint8Array): string | Promise<string> {
  return bodySha256FieldOf(request) ?? traceDigest(scheduler, bytes, "http.request digest");
}

/** The `bodyDigest` of an answer: computed once for the same bytes at hand (`atHand`), else every time. */
function responseDigest(
  scheduler: Scheduler,
  atHand: Uint8Array | undefined,
  bytes: Uint8Array,
): string | Promise<string> {
  const known = atHand === undefined ? undefined : atHandDigests.get(atHand);
  if (known !== undefined) return known;
  const digest = traceDigest(scheduler, bytes, "http.response digest");
  if (atHand !== undefined && typeof digest === "string") atHandDigests.set(atHand, digest);
  return digest;
}

/** The `fault.window` data of a network fault: a capabilities fault's scope is the capabilities request unless it says otherwise. */
function networkFaultWindowData(label: string, spec: NetworkFault, window: TimeWindow, startMs: number) {
  return faultWindowData(
    "network",
    label,
    // A capabilities fault's scope is the capabilities request unless it says otherwise.
    spec.kind === "capabilities-invalid" || spec.kind === "capabilities-unfetchable"
      ? { ...spec, path: spec.path ?? CAPABILITIES_PATH, method: spec.method ?? "GET" }
      : spec,
    window,
    startMs,
    NETWORK_SCOPE_KEYS,
  );
}

/**
 * The answer handed to the sender: the receiver's own Response when its body is at hand (`atHand`) and no
 * slow-body fault chunks it; else one made from the bytes read, chunked at the fault's pace when one does.
 */
function answerFor(
  response: Response,
  responseBody: Uint8Array,
  atHand: boolean,
  chunking: Extract<NetworkFault, { kind: "slow-body" }> | undefined,
  scheduler: Scheduler,
): Response {
  // The sender is handed the receiver's own Response when its body is at hand, as the receiver the sender's Request.
  if (chunking === undefined && atHand) return response;
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  if (NULL_BODY_STATUSES.has(response.status)) return new Response(null, init);
  return chunking === undefined
    ? responseWithBody(responseBody, init)
    : new Response(slowBody(scheduler, responseBody, chunking.chunkBytes, chunking.intervalMs), init);
}

/**
 * The msw handler of the receiver at origin `key`. msw hands the resolver the exchange's request, whose body is
 * at hand (see `exchange`); one whose body is not is read as tracked work and handed on as a copy whose body is.
 */
function receiverMsw(
  key: string,
  handler: HttpHandlerFn,
  exchanges: WeakMap<Request, Exchange>,
  scheduler: Scheduler,
): RequestHandler {
  return http.all(
    ({ request }) => new URL(request.url).origin === key,
    async ({ request }) => {
      const exchange = exchanges.get(request);
      const settled = bodyBytesOf(request) !== undefined ? request : await settledRequest(request, scheduler);
      return exchange === undefined ? handler(settled) : handler(settled, { exchangeId: exchange.id });
    },
  );
}

/**
 * Whether a fault in the exchange's static scope acts on it now: its time
 * window when its handler runs (after the latency before it), then its
 * probability, drawn only for requests in scope, from the fault's own stream.
 */
function inScope(fault: CompiledFault, nowMs: number): boolean {
  const spec = fault.spec;
  if (!inWindow(fault.window, nowMs)) return false;
  return spec.probability === undefined || fault.chance.chance(spec.probability);
}

/** Whether `host` is `domain`'s (mounted for it, the domain itself, or a name under it). */
function targetIs(host: string, domain: string, hostDomains: ReadonlyMap<string, string>): boolean {
  const d = normalizeName(domain);
  return hostDomains.get(host) === d || host === d || host.endsWith(`.${d}`);
}

/**
 * Whether the exchange is in the fault's scope by what does not change while
 * it runs: host, path, method, source, partition. An exchange's handler
 * list holds only the faults that pass, so a request runs through the few
 * faults that concern it rather than all of them. No random draw here.
 */
function inStaticScope(fault: CompiledFault, exchange: Exchange, hostDomains: ReadonlyMap<string, string>): boolean {
  // The host's glob was matched once for the host (the network's `faultsForHost`), which hands only those faults here.
  const { path, method, source, between } = fault.scope;
  if (between !== undefined) {
    const [a, b] = between;
    const host = exchange.host;
    return (
      (exchange.source === a && targetIs(host, b, hostDomains)) ||
      (exchange.source === b && targetIs(host, a, hostDomains))
    );
  }
  if (path !== undefined && !matchGlob(path, exchange.url.pathname)) return false;
  if (method !== undefined && method !== exchange.method) return false;
  if (source !== undefined && source !== exchange.source) return false;
  return true;
}

/**
 * The faults of `candidates` that may act on `exchange` at `nowMs`, in order; `undefined` when none may (most
 * exchanges). A fault whose window is over stays out (time only moves on); one whose window has not begun
 * stays out too, unless a latency fault before it may make time pass before its turn.
 */
function faultsThatMayAct(
  candidates: readonly CompiledFault[],
  exchange: Exchange,
  hostDomains: ReadonlyMap<string, string>,
  nowMs: number,
): CompiledFault[] | undefined {
  let acting: CompiledFault[] | undefined;
  let mayWait = false;
  for (const fault of candidates) {
    if (!inStaticScope(fault, exchange, hostDomains)) continue;
    if (nowMs >= fault.window.untilMs || (nowMs < fault.window.fromMs && !mayWait)) continue;
    (acting ??= []).push(fault);
    if (fault.spec.kind === "latency") mayWait = true;
  }
  return acting;
}

/**
 * Whether `fault`, first in an exchange's list, certainly fails the connection at `nowMs`: a refusal, a reset
 * before the request is read, a TLS failure or a partition that refuses, in its window, with no probability to
 * draw. Such an exchange never reaches an HTTP handler, so `dispatch` fails it itself ({@link act}) rather than
 * through msw, whose handler would do the same (no draw, no wait) after a clone of the request and an
 * AbortController per run (decision 0315).
 */
function refusesAtOnce(fault: CompiledFault, nowMs: number): boolean {
  const spec = fault.spec;
  if (spec.probability !== undefined || !inWindow(fault.window, nowMs)) return false;
  switch (spec.kind) {
    case "connection-refused":
    case "tls-failure":
      return true;
    case "connection-reset":
      return spec.phase !== "response";
    case "partition":
      return spec.failure === "connection-refused";
    default:
      return false;
  }
}

/** What `fault` does to `exchange`: waits, fails its connection, answers in the receiver's place, or marks it for after. */
async function act(
  fault: CompiledFault,
  exchange: Exchange,
  scheduler: Scheduler,
  baseFor: (host: string, explicit: string | undefined) => string,
): Promise<Response | undefined> {
  const spec = fault.spec;
  const host = exchange.host;
  const decided = (): void => {
    exchange.fault = fault.label;
  };
  switch (spec.kind) {
    case "latency": {
      const delayMs = sampleLatencyMs(spec.latency, fault.latency);
      if (delayMs > 0) await scheduler.sleep(delayMs, `latency fault ${fault.label}`);
      return undefined;
    }
    case "connection-refused":
      decided();
      throw new TransportError("connection-refused", `connection refused by ${exchange.url.host}`);
    case "connection-reset":
      if (spec.phase === "response") {
        (exchange.post ??= []).push(fault);
        return undefined;
      }
      decided();
      throw new TransportError(
        "connection-reset",
        `connection reset by ${exchange.url.host} before the request was read`,
      );
    case "tls-failure":
      decided();
      throw new TransportError("tls", `TLS handshake with ${exchange.url.host} failed`);
    case "timeout":
      await scheduler.sleep(spec.afterMs, `timeout fault ${fault.label}`);
      decided();
      throw new TransportError("timeout", `no answer from ${exchange.url.host} within ${spec.afterMs} ms`);
    case "partition":
      decided();
      if (spec.failure === "connection-refused") {
        throw new TransportError(
          "connection-refused",
          `${exchange.source} cannot reach ${exchange.url.host} (partition)`,
        );
      }
      await scheduler.sleep(spec.afterMs, `partition ${fault.label}`);
      throw new TransportError("timeout", `${exchange.source} cannot reach ${exchange.url.host} (partition)`);
    case "unavailable":
    case "server-error":
    case "rate-limited":
    case "forbidden":
    case "capabilities-invalid":
    case "capabilities-unfetchable":
    case "respond":
      decided();
      return faultAnswer(spec, baseFor(host, "problemBase" in spec ? spec.problemBase : undefined));
    case "slow-body":
      (exchange.post ??= []).push(fault);
      return undefined;
  }
}

/**
 * An `http.response`'s data. Most answers have only the fields every answer has: one literal of them, without
 * a spread for each field an answer may lack.
 */
function responseData(
  fields: {
    readonly exchangeId: string;
    readonly status: number;
    readonly statusText: string;
    readonly headers: Record<string, string>;
    readonly bodySize: number;
    readonly bodyDigest: string;
    readonly bodyDurationMs: number;
  },
  fault: string | undefined,
  recordedBody: Uint8Array | undefined,
): EmitData<"http.response"> {
  const { exchangeId, status, statusText, headers, bodySize, bodyDigest, bodyDurationMs } = fields;
  if (statusText === "" && bodyDurationMs === 0 && fault === undefined && recordedBody === undefined) {
    return { exchangeId, status, headers, bodySize, bodyDigest };
  }
  return {
    exchangeId,
    status,
    ...(statusText !== "" ? { statusText } : {}),
    headers,
    bodySize,
    bodyDigest,
    ...(bodyDurationMs > 0 ? { bodyDurationMs } : {}),
    ...(fault !== undefined ? { fault } : {}),
    ...(recordedBody !== undefined ? bodyFields(recordedBody) : {}),
  };
}

/** A network with no receivers yet and the given faults. */
export function createNetwork(options: NetworkOptions): Network {
  const { scheduler } = options;
  const trace = options.trace ?? noTrace;
  const exchanges = new WeakMap<Request, Exchange>();
  const receivers = new Map<string, { readonly handler: HttpHandlerFn; readonly msw: RequestHandler }>();
  const hostDomains = new Map<string, string>();
  const faults: CompiledFault[] = [];
  const baselineRandom = options.random.fork("latency");
  let exchangeCount = 0;
  const urlOf = urlReader();
  /** The faults that may concern a host (its `host` glob matches, or it has none), computed once for each host. */
  const scopes = new Map<string, readonly CompiledFault[]>();

  /** The baseline latency: a virtual wait before anything else happens to the request. */
  async function baselineLatency(): Promise<void> {
    if (options.latency === undefined) return;
    const delayMs = sampleLatencyMs(options.latency, baselineRandom);
    if (delayMs > 0) await scheduler.sleep(delayMs, "network latency");
  }

  /** The faults that may concern the exchange's host; {@link inStaticScope} says which of them do. */
  function faultsForHost(exchange: Exchange): readonly CompiledFault[] {
    const host = exchange.host;
    let candidates = scopes.get(host);
    if (candidates === undefined) {
      candidates = faults.filter(
        (fault) => fault.spec.kind === "partition" || fault.spec.host === undefined || matchGlob(fault.spec.host, host),
      );
      scopes.set(host, candidates);
    }
    return candidates;
  }

  /**
   * What answers an exchange: after the baseline latency, the faults that may
   * act on it as msw handlers in front of the receiver at its origin; with
   * none, the receiver itself, as msw would call it. The faults left out are
   * those that would let the request through without a random draw: out of
   * its static scope, or out of their time window for good. `undefined`:
   * nothing listens there.
   */
  async function dispatch(forwarded: Request, current: Exchange): Promise<Response | undefined> {
    await baselineLatency();
    const now = scheduler.now();
    const acting = faultsThatMayAct(faultsForHost(current), current, hostDomains, now);
    const receiver = receivers.get(current.url.origin);
    if (acting === undefined) return receiver?.handler(forwarded, { exchangeId: current.id });
    const first = acting[0] as CompiledFault;
    if (refusesAtOnce(first, now)) return act(first, current, scheduler, baseFor);
    const handlers = acting.map((fault) => fault.handler);
    if (receiver !== undefined) handlers.push(receiver.msw);
    // msw's handlers find the exchange by its request; only they do.
    exchanges.set(forwarded, current);
    return getResponse(handlers, forwarded);
  }

  function emit<N extends "http.request" | "http.response" | "http.failure">(
    name: N,
    source: string,
    data: EmitData<N>,
  ): void {
    trace.emit(traceEvent(name, scheduler.now(), data, source));
  }

  function baseFor(host: string, explicit: string | undefined): string {
    return (explicit ?? options.problemBase?.(host) ?? `https://${host}/problems`).replace(/\/+$/, "");
  }

  function addFault(input: NetworkFaultInput): NetworkFault {
    const spec = networkFaultSchema.parse(input);
    const index = faults.length;
    const label = spec.id ?? `${index}:${spec.kind}`;
    const stream = options.random.fork(`fault:${label}`);
    const fault: CompiledFault = {
      spec,
      label,
      window: resolveWindow(spec, scheduler.startMs),
      chance: stream.fork("probability"),
      latency: stream.fork("latency"),
      scope: staticScopeOf(spec),
      handler: http.all(
        () => true,
        async ({ request }) => {
          const exchange = exchanges.get(request);
          if (exchange === undefined || !inScope(fault, scheduler.now())) return undefined;
          return act(fault, exchange, scheduler, baseFor);
        },
      ),
    };
    faults.push(fault);
    scopes.clear();
    trace.emit({
      name: "fault.window",
      timeMs: scheduler.now(),
      data: networkFaultWindowData(label, spec, fault.window, scheduler.startMs),
    });
    return spec;
  }

  async function exchange(request: Request, source: string): Promise<Response> {
    const id = `x${++exchangeCount}`;
    const signal = request.signal;
    signal.throwIfAborted();
    const url = urlOf(request.url);
    const method = request.method.toUpperCase();
    const known = bodyBytesOf(request);
    const requestBody = known ?? new Uint8Array(await scheduler.track(request.arrayBuffer(), "http.request body"));
    const requestData = {
      exchangeId: id,
      method,
      url: url.href,
      headers: headersObject(request.headers),
      bodySize: requestBody.length,
      bodyDigest: await requestDigest(scheduler, request, requestBody),
    };
    const recorded = options.recordBodies === true ? { ...requestData, ...bodyFields(requestBody) } : requestData;
    emit("http.request", source, recorded);
    // The receiver is handed the sender's own Request when its body is at hand (app/protocol/bodies.ts):
    // the receiver takes the body as those bytes, so nothing is read through a stream, whose reads a
    // browser may settle through its own task queue, which the scheduler cannot see. A request whose body
    // had to be read (made elsewhere) is handed on as a copy made from the bytes read, at hand in the same
    // way; the copy does not follow the sender's signal (undici ties two signals with listeners and a
    // finalization registry, which costs more than the rest of the Request), and the sender stops waiting
    // at once when its signal aborts (`abortable` below), as a client that closes its connection does.
    const forwarded =
      known !== undefined ? request : requestWithBody(url.href, { method, headers: request.headers }, requestBody);
    const current: Exchange = { id, source, url, host: url.hostname, method };
    try {
      const response = await abortable(dispatch(forwarded, current), signal);
      if (response === undefined) {
        throw new TransportError("connection-refused", `nothing listens at ${url.origin}`);
      }
      if (response.type === "error") {
        throw new TransportError("connection-reset", `${url.host} closed the connection without an answer`);
      }
      const reset = current.post?.find((f) => f.spec.kind === "connection-reset");
      if (reset !== undefined) {
        current.fault = reset.label;
        throw new TransportError("connection-reset", `connection to ${url.host} reset after the request was handled`);
      }
      const answered = bodyBytesOf(response);
      const responseBody =
        answered ?? new Uint8Array(await scheduler.track(response.arrayBuffer(), "http.response body"));
      const slow = current.post?.find((f) => f.spec.kind === "slow-body")?.spec;
      const chunking = slow?.kind === "slow-body" ? slow : undefined;
      const bodyDurationMs =
        chunking === undefined ? 0 : Math.ceil(responseBody.length / chunking.chunkBytes) * chunking.intervalMs;
      const status = response.status;
      const statusText = response.statusText;
      const headers = headersObject(response.headers);
      const bodySize = responseBody.length;
      const bodyDigest = await responseDigest(scheduler, answered, responseBody);
      const fields = { exchangeId: id, status, statusText, headers, bodySize, bodyDigest, bodyDurationMs };
      const body = options.recordBodies === true ? responseBody : undefined;
      emit("http.response", source, responseData(fields, current.fault, body));
      return answerFor(response, responseBody, answered !== undefined, chunking, scheduler);
    } catch (error) {
      emit("http.failure", source, {
        exchangeId: id,
        kind: error instanceof TransportError ? error.kind : isAbort(error) ? "aborted" : "error",
        message: errorMessage(error),
        ...(current.fault !== undefined ? { fault: current.fault } : {}),
      });
      throw error;
    }
  }

  for (const fault of options.faults ?? []) addFault(fault);

  return {
    mount(origin, handler, mountOptions = {}) {
      const parsed = new URL(origin);
      const key = parsed.origin;
      receivers.set(key, {
        handler,
        msw: receiverMsw(key, handler, exchanges, scheduler),
      });
      hostDomains.set(parsed.hostname, normalizeName(mountOptions.domain ?? parsed.hostname));
      scopes.clear();
    },
    unmount(origin) {
      scopes.clear();
      return receivers.delete(new URL(origin).origin);
    },
    fetchFor(sourceDomain) {
      const source = normalizeName(sourceDomain);
      return (request) => exchange(request, source);
    },
    addFault,
    get faults() {
      return faults.map((f) => f.spec);
    },
  };
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The answer a fault gives in the receiver's place (503, 429, 403, a bare
 * 5xx, a bad capabilities document, a `respond`), its problem types under
 * `problemBase`; undefined for the kinds that answer nothing (they fail the
 * connection, wait, or act on the receiver's own answer). What the simulated
 * network answers, and `mailscope serve --faults` on real traffic.
 */
export function faultAnswer(spec: NetworkFault, problemBase: string): Response | undefined {
  switch (spec.kind) {
    case "unavailable":
      return spec.problem
        ? problemResponse(503, "temporary_failure", problemBase, retryAfterHeader(spec))
        : textResponse("Service Unavailable", {
            status: 503,
            headers: { "content-type": "text/plain", ...retryAfterHeader(spec) },
          });
    case "server-error":
      return textResponse(spec.body, { status: spec.status, headers: { "content-type": "text/plain" } });
    case "rate-limited":
      return problemResponse(429, "rate_limited", problemBase, retryAfterHeader(spec));
    case "forbidden":
      return problemResponse(403, "policy_rejected", problemBase, retryAfterHeader(spec));
    case "capabilities-invalid": {
      const body = spec.body ?? { versions: ["v1"], max_message_size: 1024 };
      return textResponse(typeof body === "string" ? body : JSON.stringify(body), {
        status: 200,
        headers: { "content-type": spec.contentType, "cache-control": "max-age=3600" },
      });
    }
    case "capabilities-unfetchable":
      return textResponse(spec.body, { status: spec.status, headers: { "content-type": "text/plain" } });
    case "respond":
      return crafted(spec.status, spec.headers, spec.body);
    default:
      return undefined;
  }
}

/** The answer of a `respond` fault: the status, the headers as written, the body verbatim or as JSON. */
function crafted(status: number, headers: Readonly<Record<string, string>>, body: unknown): Response {
  const out = new Headers(headers);
  const json = body !== undefined && typeof body !== "string";
  if (body !== undefined && !out.has("content-type"))
    out.set("content-type", json ? "application/json" : "text/plain; charset=utf-8");
  const text = body === undefined ? "" : json ? JSON.stringify(body) : (body as string);
  return textResponse(NULL_BODY_STATUSES.has(status) ? null : text, { status, headers: out });
}

const encoder = new TextEncoder();

/**
 * An answer with `text` as its UTF-8 body, at hand for its reader (app/protocol/bodies.ts). The caller
 * gives the content type: a text body does not add one here.
 */
function textResponse(text: string | null, init: ResponseInit): Response {
  return responseWithBody(text === null ? null : encoder.encode(text), init);
}

const PROBLEM_TITLES: Readonly<Record<string, string>> = {
  temporary_failure: "Temporary failure",
  rate_limited: "Rate limited",
  policy_rejected: "Policy rejected",
};

function problemResponse(status: number, identifier: string, base: string, headers: Record<string, string>): Response {
  const problem = { type: `${base}/${identifier}`, title: PROBLEM_TITLES[identifier] ?? identifier, status };
  return textResponse(JSON.stringify(problem), {
    status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

function retryAfterHeader(spec: {
  readonly retryAfter?: string | undefined;
  readonly retryAfterS?: number | undefined;
}): Record<string, string> {
  if (spec.retryAfter !== undefined) return { "retry-after": spec.retryAfter };
  if (spec.retryAfterS !== undefined) return { "retry-after": String(spec.retryAfterS) };
  return {};
}

/** `request` with its body read as tracked host work and handed on as a copy whose body is at hand (bodies.ts). */
async function settledRequest(request: Request, scheduler: Scheduler): Promise<Request> {
  const bytes = new Uint8Array(await scheduler.track(request.arrayBuffer(), "receiver request body"));
  return requestWithBody(request.url, { method: request.method, headers: request.headers }, bytes);
}

/** A body delivered `chunkBytes` at a time, one chunk every `intervalMs` of virtual time. */
function slowBody(
  scheduler: Scheduler,
  bytes: Uint8Array,
  chunkBytes: number,
  intervalMs: number,
): ReadableStream<Uint8Array> {
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const chunks = Math.ceil(bytes.length / chunkBytes);
      if (chunks === 0) controller.close();
      for (let i = 0; i < chunks; i++) {
        scheduler.after(
          (i + 1) * intervalMs,
          () => {
            if (cancelled) return;
            controller.enqueue(bytes.slice(i * chunkBytes, (i + 1) * chunkBytes));
            if (i === chunks - 1) controller.close();
          },
          "slow body chunk",
        );
      }
    },
    cancel() {
      cancelled = true;
    },
  });
}

/** `work`, or the signal's reason as soon as it aborts. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason as Error);
    };
    // A signal aborts once: the listener needs no `once` (an options object read on every exchange).
    signal.addEventListener("abort", onAbort);
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}

function isAbort(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}
