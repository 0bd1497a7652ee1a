/**
 * What the receiver's check steps (requestSteps.ts, recipientSteps.ts) work on: the receiver's own state,
 * made once per receiver ({@link Receiving}), and one POST being handled ({@link Delivery}), which each
 * step reads and adds to in G10's order.
 */
import type { DigestAlgorithm, ParsedContentDigest } from "../protocol/digest.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import type { MultipartContentType } from "../protocol/multipart.ts";
import type { HttpMessageView, ParsedSignatureFields } from "../protocol/signature.ts";
import type { Clock, MailStore } from "../ports.ts";
import type { Emit } from "../trace/events.ts";
import type { Answer, ProblemOptions } from "./answers.ts";
import type { ReceiverConfig } from "./config.ts";
import type { IdempotencyStore } from "./idempotencyStore.ts";
import type { ReceiverKeys } from "./keyLookup.ts";
import type { Locks } from "./locks.ts";
import type { PolicyState } from "./policy.ts";
import type { ReceiverPorts, RecipientFaults } from "./receiver.ts";
import type { ParsedBody } from "./requestChecks.ts";
import type { BodySpooler } from "./spool.ts";

/** The events a receiver emits. */
export type ReceiverEventName =
  | "receiver.request"
  | "receiver.response"
  | "idempotency.replay"
  | "idempotency.conflict"
  | "mailbox.delivered"
  | "failure.after-acceptance";

/** One receiver's configuration, ports and state, shared by every request it handles. */
export interface Receiving {
  readonly cfg: ReceiverConfig;
  readonly ports: ReceiverPorts;
  readonly clock: Clock;
  readonly mailStore: MailStore;
  readonly idempotency: IdempotencyStore;
  readonly policy: PolicyState;
  readonly keys: ReceiverKeys;
  /** Without a trace sink, the events' data (a URL parsed, a Message-ID looked up) is not even built. */
  readonly tracing: boolean;
  /** The served domains (`recipient-domain`). */
  readonly served: ReadonlySet<string>;
  readonly mailboxes: ReadonlyMap<string, ReceiverConfig["mailboxes"][number]>;
  readonly maxSize: number;
  /** G48: the names this receiver answers at, normalized; undefined takes any host. */
  readonly hostnames: ReadonlySet<string> | undefined;
  /** Deliveries past the idempotency step and not yet answered, by `[signingDomain, key]` as JSON (no two pairs spell the same). */
  readonly inFlight: Map<string, { readonly digest: string; readonly answer: Promise<Answer> }>;
  /** Locks on mailboxes, held by a delivery while it checks and stores for them. */
  readonly locks: Locks;
  /** Bodies being read whose Content-Digest is not checked yet. */
  unauthenticatedBodies: number;
  readonly maxUnauthenticatedBodies: number;
  /** The answer to GET /v1/capabilities: the same bytes and header fields on every request, made once. */
  readonly capabilitiesAnswer: Answer;
  /** The domain put on the receiver's trace events (its first served domain). */
  readonly traceDomain: string | undefined;
  emit: Emit<ReceiverEventName>;
  /** A problem answer of this receiver. */
  problem(identifier: ProblemIdentifier, status: number, detail: string, options?: ProblemOptions): Answer;
}

/** The trace of one request's handling: each event carries the request's exchange. */
export interface RequestTrace {
  emit: Emit<ReceiverEventName>;
  /** Facts learned on the way (the verified signing domain), for `receiver.response`. */
  note(facts: Record<string, unknown>): void;
  /** The host's per-recipient faults for this request, if any. */
  readonly faults?: RecipientFaults;
}

/** What a delivery needs to survive a crash between storing and answering (the idempotency store's intent). */
export interface Recovery {
  readonly deliveryId: string;
  /** Before the first message is stored: the intent made durable (once; later calls share it). */
  readonly beforeStore?: () => Promise<void>;
  /** For a delivery resumed after a crash: whether the mailbox already holds its message. */
  readonly storedBefore?: (mailbox: string) => Promise<boolean>;
}

/** Stores the spooled message for one mailbox: true when done, false when the spool could not be finished (store from memory). */
export type SpooledStore = (
  mailbox: string,
  meta: { readonly deliveryId: string; readonly receivedAtMs: number },
) => Promise<boolean>;

/** One POST /v1/messages being handled: the request, and what the steps learned so far. */
export interface Delivery {
  readonly request: Request;
  /** The request's URL, read once (a fetch Request serializes it anew on every read). */
  readonly url: string;
  readonly path: string;
  /**
   * The request as plain data, its header fields listed once (`headers`): the header checks read their fields
   * here, and `signature` verifies over it.
   */
  view?: HttpMessageView;
  readonly traced: RequestTrace;
  readonly arrivalMs: number;
  /** The Idempotency-Key, well-formed once `headers` passed. */
  key: string;
  /** Signature-Input and Signature as `headers` parsed them, so `signature` does not parse them again. */
  signatureFields?: ParsedSignatureFields;
  contentType: string;
  /** The Content-Type as `headers` parsed it, so that the body's parsing does not parse it again. */
  multipartType?: MultipartContentType;
  /** The Content-Length, when the request has a valid one (`size`). */
  declared?: number;
  /** Content-Digest as `headers` parsed it, so `signature` does not parse it again. */
  contentDigest?: ParsedContentDigest;
  /** The Content-Digest's digests by algorithm (`headers`). */
  claimedDigests: ReadonlyMap<string, Uint8Array>;
  /** The domain of the verified signature (`signature`). */
  signingDomain: string;
  /** Whether the reading of the body began: a request answered before is answered with its body discarded. */
  bodyTaken: boolean;
  /** Whether the body is being read and not yet authenticated (counted in `unauthenticatedBodies`). */
  reading: boolean;
  spooler?: BodySpooler & { readonly holdsBody: boolean };
  /** The digests of a body at hand, started beside the signature's verification (`signature`). */
  digestsAtHand?: {
    readonly bytes: Uint8Array;
    readonly digests: ReadonlyMap<DigestAlgorithm, Promise<Uint8Array>>;
  };
  /** The body in memory; while it is held in the spool, empty until its digest matches. */
  body: Uint8Array;
  /** The body's digest with an algorithm, computed once (`digest` and `idempotency` share its SHA-256). */
  bodyDigest: (algorithm: DigestAlgorithm) => Promise<Uint8Array>;
  parsed?: ParsedBody;
  /** Set by `idempotency`: the delivery's ID (a resumed delivery keeps the first one) and its crash recovery. */
  recovery?: Recovery;
  spooled?: SpooledStore;
}
