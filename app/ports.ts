/**
 * The ports through which the core talks to the world (ARCHITECTURE.md
 * "Ports"). The simulator hands the sender and the receiver simulated ones
 * (virtual clock, seeded PRNG, DNS zone, MSW network, recorders); the real
 * network hands them real ones (system clock, crypto, DNS, fetch over TLS 1.3,
 * a folder of .eml files). The core never reaches past these.
 */
import { errorMessage } from "./errorMessage.ts";
import type { EmitData, TraceEventName } from "./trace/events.ts";

/** Time and timers. Shaped so it can be given to XState as its `clock`. */
export interface Clock {
  /** Milliseconds since the Unix epoch, on this clock. */
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, timeoutMs: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Randomness: seeded in the simulator, cryptographic on the real network. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** `length` random bytes. */
  bytes(length: number): Uint8Array;
}

/** One SVCB record (RFC 9460) as the sender needs it (GAPS G5). */
export interface SvcbRecord {
  /** 0 = AliasMode, ≥ 1 = ServiceMode priority. */
  readonly priority: number;
  /** Target name without the trailing dot; "." stays "." (the owner name, G5). */
  readonly target: string;
  readonly port?: number;
  readonly alpn?: readonly string[];
  readonly ipv4hint?: readonly string[];
  readonly ipv6hint?: readonly string[];
  /** Other keys as presentation strings, so nothing is lost for the trace. */
  readonly other?: Readonly<Record<string, string>>;
}

/** The outcome of one DNS question. */
export type DnsAnswer<T> =
  | { readonly kind: "answer"; readonly records: readonly T[]; readonly ttlS: number }
  | { readonly kind: "nxdomain" }
  | { readonly kind: "nodata" }
  | { readonly kind: "servfail" }
  | { readonly kind: "timeout" };

export interface Resolver {
  /** SVCB (type 64) records at `name` (e.g. `_svc.example.org`). */
  svcb(name: string): Promise<DnsAnswer<SvcbRecord>>;
  /** TXT records at `name`, each record's strings joined. */
  txt(name: string): Promise<DnsAnswer<string>>;
}

/** Why a request got no HTTP answer. Errors rule 3 treats each as `temporary_failure`. */
export type TransportFailureKind = "connection-refused" | "connection-reset" | "tls" | "timeout" | "dns";

/**
 * Thrown by a {@link Fetch} when no HTTP answer came back. It is an outcome the
 * sender reads (Errors rule 3), not a fault of the code, so it carries no stack
 * trace: capturing one (where the engine does, V8's `Error.stackTraceLimit`)
 * cost more than the rest of a simulated refused connection.
 */
export class TransportError extends Error {
  readonly kind: TransportFailureKind;
  constructor(kind: TransportFailureKind, message: string) {
    const engine = Error as { stackTraceLimit?: number };
    const limit = engine.stackTraceLimit;
    if (limit !== undefined) engine.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      if (limit !== undefined) engine.stackTraceLimit = limit;
    }
    this.name = "TransportError";
    this.kind = kind;
  }
}

/** An HTTP exchange: resolves with any HTTP answer, rejects with {@link TransportError} when none came. */
export type Fetch = (request: Request) => Promise<Response>;

/** A message handed to SMTP: final for the service (GAPS G18). */
export interface SmtpHandOff {
  readonly messageId: string;
  /** Envelope sender; null for the null reverse-path. */
  readonly from: string | null;
  readonly to: readonly string[];
  readonly message: Uint8Array;
  /** Why the service handed it over: plain SMTP (no SVCB record), fallback, or no common version. */
  readonly reason: "no-service" | "fallback" | "no-common-version";
}

export interface SmtpRelay {
  handOff(handOff: SmtpHandOff): Promise<{ readonly accepted: boolean; readonly detail?: string }>;
}

/**
 * A store's failure, naming the store and the path that failed: `idempotency store
 * /srv/state/idempotency.sqlite: database or disk is full`, `mail store /srv/mail/bob@b.example: ENOSPC: …`.
 * The stores on disk (app/node) throw it, so that an answer or a log line says which store and where, not
 * the words of the operating system alone; the system's `code` (ENOSPC, EACCES) is kept.
 */
export class StorageError extends Error {
  readonly store: string;
  readonly path: string;
  /** What went wrong, without the store and the path. */
  readonly reason: string;
  readonly code?: string;

  constructor(store: string, path: string, cause: unknown) {
    const reason = errorMessage(cause);
    super(`${store} ${path}: ${reason}`, { cause });
    this.name = "StorageError";
    this.store = store;
    this.path = path;
    this.reason = reason;
    const code = (cause as { code?: unknown } | null)?.code;
    if (typeof code === "string") this.code = code;
  }

  /** `cause` as a StorageError of `store` at `path`; one that is already a StorageError is kept as it is (the innermost knows best). */
  static of(store: string, path: string, cause: unknown): StorageError {
    return cause instanceof StorageError ? cause : new StorageError(store, path, cause);
  }
}

/** Where a receiver keeps accepted messages, byte for byte, per recipient. */
export interface MailStore {
  /**
   * Stores one message for one mailbox. Rejects only when storage itself
   * failed. The bytes are handed over: the caller does not change them
   * afterwards (the receiver's are a view into the request body it read), so
   * a store may keep them as they are instead of copying them.
   */
  deliver(
    mailbox: string,
    message: Uint8Array,
    meta: { readonly deliveryId: string; readonly receivedAtMs: number },
  ): Promise<void>;
  /** How much a mailbox holds now, for quotas. */
  usage(mailbox: string): Promise<{ readonly messages: number; readonly bytes: number }>;
  /**
   * Optional, for stores where writing is slow next to receiving (files on a
   * disk): a message written while its request body still arrives, before
   * the receiver knows whether it will accept it. The receiver uses it for
   * large bodies only, and falls back to `deliver` whenever it cannot.
   */
  spool?(): MailSpool;
}

/** A message being written as it arrives (see {@link MailStore.spool}); byte for byte what `deliver` would store. */
export interface MailSpool {
  /** The message's bytes at `position` (0: its first byte). Queued; the bytes must stay unchanged until `finish` settles. A failure shows at `finish`. */
  write(bytes: Uint8Array, position: number): void;
  /** The message is `size` bytes: waits for the writes, drops anything written past `size`, makes it durable. Rejects when storage failed. */
  finish(size: number): Promise<void>;
  /** Stores the finished message for one mailbox, as `deliver` would have. Rejects when storage failed. */
  deliver(mailbox: string, meta: { readonly deliveryId: string; readonly receivedAtMs: number }): Promise<void>;
  /**
   * Optional: reads back, into `target`, the bytes written at `[0, target.length)`, once the writes
   * queued before it are done; rejects when storage failed or fewer were written. Before `finish`. With
   * it, the receiver keeps a large body in the spool, not in memory, until its digest is checked
   * and reads it back only once it is authenticated.
   */
  read?(target: Uint8Array): Promise<void>;
  /** Lets the spooled bytes go (after the last `deliver`, or when the message is not stored). Never throws; may be called again. */
  close(): void;
}

/**
 * One trace event named `N`, as a producer emits it: a name of the event catalogue (app/trace/events.ts,
 * dotted and lowercase, the same in the trace, the UI and the docs) with that name's data, so that a
 * misspelt name or field does not compile.
 */
export interface TraceEventOf<N extends TraceEventName> {
  readonly name: N;
  /** Time on the Clock, ms since the epoch. */
  readonly timeMs: number;
  /** The domain whose component emitted it. */
  readonly domain?: string;
  readonly data: EmitData<N>;
}

/** Any trace event of the catalogue: the union of {@link TraceEventOf} over the names, narrowed by `name`. */
export type TraceEvent = { [N in TraceEventName]: TraceEventOf<N> }[TraceEventName];

/** A trace event as a reader that takes what comes meets it: any name, any data (a test's list, a file). */
export interface UntypedTraceEvent {
  readonly name: string;
  readonly timeMs: number;
  readonly domain?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface TraceSink {
  emit(event: TraceEvent): void;
}

/**
 * The event named `name` with `data`, as a {@link TraceEvent}: for a producer's own `emit(name, data)`
 * that passes the name through (a literal narrows {@link TraceEvent} by itself; a type parameter
 * `N` does not, so this is where `TraceEventOf<N>` is said to be one member of the union).
 */
export function traceEvent<N extends TraceEventName>(
  name: N,
  timeMs: number,
  data: EmitData<N>,
  domain?: string,
): TraceEvent {
  const event: TraceEventOf<N> = domain === undefined ? { name, timeMs, data } : { name, timeMs, domain, data };
  return event as TraceEvent;
}

/** A sink that drops everything, for callers that do not trace. */
export const noTrace: TraceSink = { emit: () => {} };
