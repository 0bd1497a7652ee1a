/**
 * The receiver: one function from Request to Response that serves
 * GET /v1/capabilities and POST /v1/messages for the domains of its
 * configuration, the same in the simulator and behind the real HTTPS server.
 *
 * Every request walks the steps of `requestSteps.ts` (one function per check
 * of `checks.ts`, keyed by its ID) in G10's order; the first that answers
 * decides the answer, and a delivery that passes them all walks the
 * per-recipient steps of `recipientSteps.ts` for each recipient. Every answer is a Response: bad input never throws out
 * of the handler, and an unexpected failure inside it is a 503
 * `temporary_failure` (the sender retries, ERR-10) rather than a dropped
 * connection.
 */
import type { ProblemIdentifier } from "../protocol/errors.ts";
import type { KeyRecordLookup } from "../protocol/profile.ts";
import type { WorkMeter } from "../protocol/work.ts";
import { keptAnswers } from "../protocol/memo.ts";
import type { Clock, MailStore, Resolver, TraceSink } from "../ports.ts";
import { noTrace, traceEvent } from "../ports.ts";
import { errorMessage } from "../errorMessage.ts";
import type { Outbound } from "./afterAcceptance.ts";
import { JSON_MEDIA_TYPE, problemAnswer, toResponse } from "./answers.ts";
import type { Answer } from "./answers.ts";
import { discardBody } from "./body.ts";
import { checkOrder } from "./checks.ts";
import { receiverConfigSchema } from "./config.ts";
import type { FailAfterAcceptanceRule, ReceiverConfig, ReceiverConfigInput } from "./config.ts";
import { createMemoryIdempotencyStore } from "./idempotencyStore.ts";
import type { IdempotencyStore } from "./idempotencyStore.ts";
import { createReceiverKeys } from "./keyLookup.ts";
import { createLocks } from "./locks.ts";
import { createPolicyState } from "./policy.ts";
import { deliverToRecipients } from "./recipientSteps.ts";
import type { Delivery, Receiving, RequestTrace } from "./receiving.ts";
import { IDEMPOTENCY_KEY } from "./requestChecks.ts";
import { EMPTY_BODY, normalizeHost, requestSteps } from "./requestSteps.ts";
import type { RequestStep } from "./requestSteps.ts";

export type { Outbound, OutboundSubmission } from "./afterAcceptance.ts";

/** What the receiver talks to (ARCHITECTURE.md "Ports"), and the code-shaped parts of its configuration. */
export interface ReceiverPorts {
  readonly clock: Clock;
  /** For the sender's key TXT record at the keyid name (G4). */
  readonly resolver: Resolver;
  readonly mailStore: MailStore;
  readonly trace?: TraceSink;
  /** Default: an in-memory store. */
  readonly idempotencyStore?: IdempotencyStore;
  /** Replaces the key lookup (configured `keyRecords`, then DNS TXT at the keyid) entirely. */
  readonly keyLookup?: (keyid: string) => Promise<KeyRecordLookup>;
  /** The receiver domain's own sending side, for DSNs after acceptance (G17). Without it no DSN is sent. */
  readonly outbound?: Outbound;
  /** Counts the steps of work done per recipient (the envelope's, then one per recipient checked): tests bound it. */
  readonly work?: WorkMeter;
  /**
   * At most this many request bodies are read at once before they are authenticated (their signature
   * verified from the headers, their Content-Digest not yet checked); a request past it is answered 503
   * with Retry-After, its body unread, so bodies no signature vouches for cannot fill the memory. Default:
   * no limit (the simulator); `serve` sets one.
   */
  readonly maxUnauthenticatedBodies?: number;
  /**
   * G48: the host names this receiver answers at (its certificate's names: `serve` passes them). A POST
   * whose target URI (signed as `@target-uri`, and the Host it was sent with) names another host is
   * answered 401 before its signature is even checked: it was signed for another receiver. The served
   * domains and their subdomains are always names of the receiver. Without this, any host is taken (the
   * simulator, whose network routes a request only to the receiver at its host).
   */
  readonly hostnames?: readonly string[];
  /**
   * Whether `mailbox` already holds the message of `deliveryId` (the .eml store: its file name says so).
   * Asked only for a delivery resumed after a crash (see {@link DeliveryIntent}), so none is stored twice.
   */
  readonly holdsDelivery?: (mailbox: string, deliveryId: string) => Promise<boolean>;
}

/**
 * What the receiver's host may tell it about a request besides the request: the simulated network passes
 * the id it gave the exchange, so that the receiver's events line up with the `http.request` and
 * `http.response` of the same exchange. Nothing here changes the answer.
 */
export interface ReceiverRequestContext {
  /** The host's id of the HTTP exchange (the simulated network's `exchangeId`), put on every event of the request. */
  readonly exchangeId?: string;
  /**
   * Per-recipient answers a fault layer in front of the receiver plays on real traffic (`mailscope serve
   * --faults`): asked for each recipient that exists, before its own checks, and for a failure after acceptance
   * beside the policy's (G17). The only thing here that changes an answer, and only when a host gives it.
   */
  readonly recipientFaults?: RecipientFaults;
}

/** A recipient's result a fault stands in for: a deferral or a rejection with its problem. */
export interface RecipientFaultAnswer {
  readonly status: "rejected" | "deferred";
  readonly problem: ProblemIdentifier;
  readonly detail: string;
  readonly retryAfterS?: number;
}

/** See {@link ReceiverRequestContext.recipientFaults}. */
export interface RecipientFaults {
  /** The result to give `mailbox` instead of checking it, or undefined to check it as usual. */
  answer(mailbox: string): RecipientFaultAnswer | undefined;
  /** A failure after acceptance for `mailbox` once it is accepted, when the policy has none for it. */
  failAfterAcceptance(mailbox: string): FailAfterAcceptanceRule | undefined;
}

/** The receiver's request handler. */
export type ReceiverHandler = (request: Request, context?: ReceiverRequestContext) => Promise<Response>;

/** The request-level steps in G10's order. */
const REQUEST_WALK: readonly RequestStep[] = checkOrder("R").map((id) => requestSteps[id]);

/**
 * Creates the receiver's handler. `config` is validated with
 * {@link receiverConfigSchema} (a ZodError is thrown for a bad one: a mistake
 * of the caller, not input from the network).
 */
export function createReceiver(config: ReceiverConfigInput | ReceiverConfig, ports: ReceiverPorts): ReceiverHandler {
  const r = createReceiving(receiverConfigSchema.parse(config), ports);
  const { clock } = r;

  return async (request: Request, context?: ReceiverRequestContext): Promise<Response> => {
    const arrivalMs = clock.now();
    const exchangeId = context?.exchangeId;
    const url = request.url;
    const path = pathOf(url);
    const facts: Record<string, unknown> = {};
    const traced: RequestTrace = {
      emit: (name, data) => {
        r.emit(name, exchangeId === undefined ? data : { exchangeId, ...data });
      },
      note: (more) => Object.assign(facts, more),
      ...(context?.recipientFaults !== undefined && { faults: context.recipientFaults }),
    };
    // Traced on arrival, before any work: what comes later (the key's DNS lookup) happens later in time.
    if (r.tracing) {
      const key = request.headers.get("idempotency-key");
      traced.emit("receiver.request", {
        method: request.method,
        path,
        ...(key !== null && IDEMPOTENCY_KEY.test(key) && { idempotencyKey: key }),
      });
    }
    let answer: Answer;
    try {
      answer = await handle(r, { request, url, path }, traced, arrivalMs);
    } catch (error) {
      discardBody(request.body);
      answer = r.problem(
        "temporary_failure",
        503,
        `the receiver failed while handling the request: ${errorMessage(error)}`,
        { retryAfterS: r.cfg.retryAfterS },
      );
    }
    // Built only for a trace: without one, the event would be made and dropped on every request.
    if (r.tracing) {
      traced.emit("receiver.response", {
        status: answer.response.status,
        ...facts,
        ...(answer.problem !== undefined && { problem: answer.problem }),
        ...(answer.recipients !== undefined && { recipients: answer.recipients }),
      });
    }
    return toResponse(answer, request.method);
  };
}

/** The receiver's state and what it is built from. */
function createReceiving(cfg: ReceiverConfig, ports: ReceiverPorts): Receiving {
  const { clock } = ports;
  const trace = ports.trace ?? noTrace;
  const tracing = trace !== noTrace;
  const traceDomain = cfg.domains[0];
  const capabilitiesBody = new TextEncoder().encode(
    JSON.stringify({
      versions: cfg.capabilities.versions,
      max_message_size: cfg.capabilities.max_message_size,
      max_recipients: cfg.capabilities.max_recipients,
      ...(cfg.capabilities.discovery_pin_max_age !== null && {
        discovery_pin_max_age: cfg.capabilities.discovery_pin_max_age,
      }),
      ...(cfg.capabilities.abuse_contact !== undefined && { abuse_contact: cfg.capabilities.abuse_contact }),
    }),
  );
  return {
    cfg,
    ports,
    clock,
    mailStore: ports.mailStore,
    idempotency: ports.idempotencyStore ?? createMemoryIdempotencyStore(),
    policy: createPolicyState(cfg.policy),
    keys: createReceiverKeys(cfg.keyRecords, ports),
    tracing,
    served: new Set(cfg.domains),
    mailboxes: new Map(cfg.mailboxes.map((m) => [m.address, m])),
    maxSize: cfg.capabilities.max_message_size,
    hostnames: ports.hostnames === undefined ? undefined : new Set(ports.hostnames.map(normalizeHost)),
    inFlight: new Map(),
    locks: createLocks(),
    unauthenticatedBodies: 0,
    maxUnauthenticatedBodies: ports.maxUnauthenticatedBodies ?? Number.POSITIVE_INFINITY,
    capabilitiesAnswer: {
      response: {
        status: 200,
        headers: [
          ["content-type", JSON_MEDIA_TYPE],
          ["cache-control", `max-age=${cfg.capabilitiesMaxAgeS}`],
        ],
        body: capabilitiesBody,
      },
    },
    traceDomain,
    emit(name, data) {
      if (!tracing) return;
      trace.emit(traceEvent(name, clock.now(), data, traceDomain));
    },
    problem: (identifier, status, detail, options) => problemAnswer(cfg, identifier, status, detail, options),
  };
}

/**
 * One request: the steps walked in G10's order until one answers; a delivery that passes them all is
 * checked recipient by recipient. A request answered before its body is read has its body discarded.
 */
async function handle(
  r: Receiving,
  { request, url, path }: Pick<Delivery, "request" | "url" | "path">,
  traced: RequestTrace,
  arrivalMs: number,
): Promise<Answer> {
  const d: Delivery = {
    request,
    url,
    path,
    traced,
    arrivalMs,
    key: "",
    contentType: "",
    claimedDigests: new Map(),
    signingDomain: "",
    bodyTaken: false,
    reading: false,
    body: EMPTY_BODY,
    bodyDigest: () => Promise.resolve(EMPTY_BODY),
  };
  try {
    const answer = await walk(r, d, 0);
    if (!d.bodyTaken) discardBody(request.body);
    return answer;
  } finally {
    if (d.reading) r.unauthenticatedBodies -= 1;
    d.spooler?.close();
  }
}

/** The steps from `from` on; a step that wraps the rest (`idempotency`) is given the rest's answer. */
async function walk(r: Receiving, d: Delivery, from: number): Promise<Answer> {
  for (let i = from; i < REQUEST_WALK.length; i += 1) {
    const step = REQUEST_WALK[i];
    if (step === undefined) break;
    const result = step(r, d);
    const verdict = result instanceof Promise ? await result : result;
    if (typeof verdict === "function") return verdict(walk(r, d, i + 1));
    if (verdict !== undefined) return verdict;
  }
  return deliverToRecipients(r, d);
}

/** A request URL's path (the URL itself when it does not parse), remembered: a receiver sees the same few. */
const pathOf = keptAnswers(
  (url: string): string => {
    try {
      return new URL(url).pathname;
    } catch {
      return url;
    }
  },
  256,
  2048,
);
