/**
 * The receiver: one function from Request to Response that serves
 * GET /v1/capabilities and POST /v1/messages for the domains of its
 * configuration, the same in the simulator and behind the real HTTPS server.
 *
 * POST runs the checks of `checks.ts` in G10's order; the first that fails
 * decides the answer. Every answer is a Response: bad input never throws out
 * of the handler, and an unexpected failure inside it is a 503
 * `temporary_failure` (the sender retries, ERR-10) rather than a dropped
 * connection.
 */
import { bytesToHex } from "../protocol/base64.ts";
import { bodyBytesOf, responseWithBody } from "../protocol/bodies.ts";
import {
  checkContentDigest,
  DIGEST_ALGORITHMS,
  digestBytes,
  incrementalDigester,
  parseContentDigest,
} from "../protocol/digest.ts";
import type { DigestAlgorithm, Digester } from "../protocol/digest.ts";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import { parseContentType, parseMultipartBody } from "../protocol/multipart.ts";
import { verifyDelivery } from "../protocol/profile.ts";
import type { KeyRecordLookup } from "../protocol/profile.ts";
import { createProblem, parseEnvelope, parseJson, problemJson, PROBLEM_MEDIA_TYPE } from "../protocol/resources.ts";
import type { Envelope, Problem } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import type { WorkMeter } from "../protocol/work.ts";
import { fromRequest, parseSignatureFields } from "../protocol/signature.ts";
import type { ParsedSignatureFields } from "../protocol/signature.ts";
import { parseVersionPath } from "../protocol/versions.ts";
import type { Clock, MailSpool, MailStore, Resolver, TraceSink } from "../ports.ts";
import { noTrace, StorageError } from "../ports.ts";
import type { TraceEventName } from "../trace/events.ts";
import { buildFailureDsn, headerBlock } from "./afterAcceptance.ts";
import type { FailedRecipient, Outbound } from "./afterAcceptance.ts";
import { declaredLength, discardBody, readBodyWithLimit } from "./body.ts";
import { receiverConfigSchema } from "./config.ts";
import { createBodySpooler, SPOOL_MIN_BYTES, type BodySpooler } from "./spool.ts";
import type { FailAfterAcceptanceRule, ReceiverConfig, ReceiverConfigInput } from "./config.ts";
import { createMemoryIdempotencyStore } from "./idempotencyStore.ts";
import type { DeliveryIntent, IdempotencyStore, StoredResponse } from "./idempotencyStore.ts";
import { createPolicyState } from "./policy.ts";
import { createLocks } from "./locks.ts";
import { createReceiverKeys } from "./keyLookup.ts";
import { errorMessage } from "../errorMessage.ts";
import { pushAll } from "../protocol/lists.ts";

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
   * with Retry-After, its body unread (issue 16). Default: no limit (the simulator); `serve` sets one.
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

/** The trace of one request's handling: each event carries the request's exchange. */
interface RequestTrace {
  emit(name: TraceEventName, data: Record<string, unknown>): void;
  /** Facts learned on the way (the verified signing domain), for `receiver.response`. */
  note(facts: Record<string, unknown>): void;
  /** The host's per-recipient faults for this request, if any. */
  readonly faults?: RecipientFaults;
}

/** POST-2, LIM-5: 1 to 128 characters of A-Z a-z 0-9 . _ ~ - */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._~-]{1,128}$/;
const JSON_MEDIA_TYPE = "application/json";
const utf8 = new TextDecoder("utf-8");
/** At most this many violations are spelled out in a problem's detail; the rest are counted. */
const DETAIL_VIOLATIONS = 20;

const TITLES: Readonly<Record<ProblemIdentifier, string>> = {
  invalid_request: "Invalid request",
  invalid_signature: "Invalid signature",
  policy_rejected: "Rejected by policy",
  recipient_not_found: "Recipient not found",
  unsupported_version: "Unsupported version",
  idempotency_conflict: "Idempotency key conflict",
  message_too_large: "Message too large",
  rate_limited: "Rate limited",
  mailbox_full: "Mailbox full",
  temporary_failure: "Temporary failure",
};

/** An answer before it becomes a Response: bytes, so that it can be stored and replayed byte for byte. */
interface Answer {
  readonly response: StoredResponse;
  /** For the trace: the problem identifier of a problem answer. */
  readonly problem?: ProblemIdentifier;
  /** For the trace: the recipients' results of a 200. */
  readonly recipients?: readonly { recipient: string; status: string; problem?: ProblemIdentifier }[];
}

/** One recipient's entry of the DeliveryResult being built. */
interface Outcome {
  readonly recipient: string;
  readonly status: "accepted" | "rejected" | "deferred";
  readonly problem?: ProblemIdentifier;
  readonly detail?: string;
  readonly retryAfterS?: number;
}

/**
 * Creates the receiver's handler. `config` is validated with
 * {@link receiverConfigSchema} (a ZodError is thrown for a bad one: a mistake
 * of the caller, not input from the network).
 */
export function createReceiver(config: ReceiverConfigInput | ReceiverConfig, ports: ReceiverPorts): ReceiverHandler {
  const cfg: ReceiverConfig = receiverConfigSchema.parse(config);
  const { clock, mailStore } = ports;
  const trace = ports.trace ?? noTrace;
  /** Without a trace sink, the events' data (a URL parsed, a Message-ID looked up) is not even built. */
  const tracing = trace !== noTrace;
  const idempotency = ports.idempotencyStore ?? createMemoryIdempotencyStore();
  const policy = createPolicyState(cfg.policy);
  const traceDomain = cfg.domains[0];
  const served = new Set(cfg.domains);
  const mailboxes = new Map(cfg.mailboxes.map((m) => [m.address, m]));
  const maxSize = cfg.capabilities.max_message_size;
  const versions = cfg.capabilities.versions;
  /** Deliveries past the idempotency step and not yet answered, by `[signingDomain, key]` as JSON (no two pairs spell the same). */
  const inFlight = new Map<string, { digest: string; answer: Promise<Answer> }>();
  const locks = createLocks();
  const maxUnauthenticatedBodies = ports.maxUnauthenticatedBodies ?? Number.POSITIVE_INFINITY;
  /** Bodies being read whose Content-Digest is not checked yet. */
  let unauthenticatedBodies = 0;
  const hostnames = ports.hostnames === undefined ? undefined : new Set(ports.hostnames.map(normalizeHost));
  const { resolveKey, knownKey, importKey } = createReceiverKeys(cfg.keyRecords, ports);

  const capabilitiesBody = new TextEncoder().encode(
    JSON.stringify({
      versions,
      max_message_size: maxSize,
      max_recipients: cfg.capabilities.max_recipients,
      ...(cfg.capabilities.discovery_pin_max_age !== null && {
        discovery_pin_max_age: cfg.capabilities.discovery_pin_max_age,
      }),
      ...(cfg.capabilities.abuse_contact !== undefined && { abuse_contact: cfg.capabilities.abuse_contact }),
    }),
  );

  function emit(name: TraceEventName, data: Record<string, unknown>): void {
    if (!tracing) return;
    trace.emit({
      name,
      timeMs: clock.now(),
      ...(traceDomain !== undefined && { domain: traceDomain }),
      data,
    });
  }

  // ── Answers ─────────────────────────────────────────────────────────

  function problemAnswer(
    identifier: ProblemIdentifier,
    status: number,
    detail: string,
    options: { retryAfterS?: number; allow?: string } = {},
  ): Answer {
    const problem: Problem =
      identifier === "unsupported_version"
        ? createProblem("unsupported_version", {
            problemBase: cfg.problem_base,
            title: TITLES[identifier],
            detail,
            versions,
          })
        : createProblem(identifier, { problemBase: cfg.problem_base, title: TITLES[identifier], detail });
    const headers: [string, string][] = [["content-type", PROBLEM_MEDIA_TYPE]];
    // G21: the receiver sends delta-seconds.
    if (options.retryAfterS !== undefined) headers.push(["retry-after", String(options.retryAfterS)]);
    if (options.allow !== undefined) headers.push(["allow", options.allow]);
    const body = new TextEncoder().encode(JSON.stringify({ ...problemJson(problem), status }));
    return {
      response: { status, headers, body },
      problem: identifier,
    };
  }

  function violationsDetail(violations: readonly Violation[]): string {
    // Bad input can hold a violation per line or per recipient: the answer spells out the first few.
    const shown = violations.slice(0, DETAIL_VIOLATIONS).map((v) => `${v.path}: ${v.message} [${v.rule}]`);
    const more = violations.length - shown.length;
    return more > 0 ? `${shown.join("; ")}; and ${more} more` : shown.join("; ");
  }

  function toResponse(answer: Answer, method: string): Response {
    const { status, headers, body } = answer.response;
    // No copy here: a Response takes a copy of the bytes it is given (Fetch "extract a body"), and a reader
    // in this process given the bytes themselves (app/protocol/bodies.ts) only reads them, so a stored answer
    // replayed later stays as it was.
    return responseWithBody(method === "HEAD" ? null : body, {
      status,
      headers: headers.map(([n, v]): [string, string] => [n, v]),
    });
  }

  // ── Routing ─────────────────────────────────────────────────────────

  return async (request: Request, context?: ReceiverRequestContext): Promise<Response> => {
    const arrivalMs = clock.now();
    const exchangeId = context?.exchangeId;
    const facts: Record<string, unknown> = {};
    const traced: RequestTrace = {
      emit: (name, data) => {
        emit(name, exchangeId === undefined ? data : { exchangeId, ...data });
      },
      note: (more) => Object.assign(facts, more),
      ...(context?.recipientFaults !== undefined && { faults: context.recipientFaults }),
    };
    // Traced on arrival, before any work: what comes later (the key's DNS lookup) happens later in time.
    if (tracing) {
      const key = request.headers.get("idempotency-key");
      traced.emit("receiver.request", {
        method: request.method,
        path: pathOf(request.url),
        ...(key !== null && IDEMPOTENCY_KEY.test(key) && { idempotencyKey: key }),
      });
    }
    let answer: Answer;
    try {
      answer = await route(request, traced, arrivalMs);
    } catch (error) {
      discardBody(request.body);
      answer = problemAnswer(
        "temporary_failure",
        503,
        `the receiver failed while handling the request: ${errorMessage(error)}`,
        { retryAfterS: cfg.retryAfterS },
      );
    }
    traced.emit("receiver.response", {
      status: answer.response.status,
      ...facts,
      ...(answer.problem !== undefined && { problem: answer.problem }),
      ...(answer.recipients !== undefined && { recipients: answer.recipients }),
    });
    return toResponse(answer, request.method);
  };

  async function route(request: Request, traced: RequestTrace, arrivalMs: number): Promise<Answer> {
    const path = pathOf(request.url);
    const version = parseVersionPath(path);
    if (!version.versioned) {
      discardBody(request.body);
      return problemAnswer(
        "invalid_request",
        404,
        `${path} is not a path of the service; its resources are under /v1/`,
      );
    }
    // The capabilities document is where a sender learns the versions, so it is served under /v1 even when v1 is not.
    if (version.segment === "v1" && version.rest === "/capabilities") {
      discardBody(request.body);
      if (request.method !== "GET" && request.method !== "HEAD") {
        return problemAnswer("invalid_request", 405, `${request.method} is not allowed on ${path}`, {
          allow: "GET, HEAD",
        });
      }
      return {
        response: {
          status: 200,
          headers: [
            ["content-type", JSON_MEDIA_TYPE],
            ["cache-control", `max-age=${cfg.capabilitiesMaxAgeS}`],
          ],
          body: capabilitiesBody,
        },
      };
    }
    if (!versions.includes(version.segment)) {
      discardBody(request.body);
      return problemAnswer(
        "unsupported_version",
        404,
        `${version.segment} is not served here; served: ${versions.join(", ")}`,
      );
    }
    if (version.segment !== "v1") {
      discardBody(request.body);
      return problemAnswer(
        "invalid_request",
        404,
        `Mailscope's receiver advertises ${version.segment} but implements only v1`,
      );
    }
    if (version.rest !== "/messages") {
      discardBody(request.body);
      return problemAnswer("invalid_request", 404, `${path} is not a resource of v1 (/v1/messages, /v1/capabilities)`);
    }
    if (request.method !== "POST") {
      discardBody(request.body);
      return problemAnswer("invalid_request", 405, `${request.method} is not allowed on ${path}`, { allow: "POST" });
    }
    return deliver(request, traced, arrivalMs);
  }

  // ── POST /v1/messages ───────────────────────────────────────────────

  async function deliver(request: Request, traced: RequestTrace, arrivalMs: number): Promise<Answer> {
    const headers = request.headers;
    const idempotencyKey = headers.get("idempotency-key");
    const wellFormedKey = idempotencyKey !== null && IDEMPOTENCY_KEY.test(idempotencyKey) ? idempotencyKey : undefined;

    // availability (not in G10: a receiver that is down says so first).
    const unavailable = policy.takeUnavailable();
    if (unavailable !== undefined) {
      discardBody(request.body);
      return problemAnswer("temporary_failure", 503, "the receiver is not accepting deliveries now", {
        retryAfterS: unavailable.retryAfterS,
      });
    }

    // headers (400): every problem with the request headers at once, so a sender fixes them in one go.
    const { problems: headerProblems, signatureFields } = headerViolations(headers);
    if (headerProblems.length > 0) {
      discardBody(request.body);
      return problemAnswer("invalid_request", 400, violationsDetail(headerProblems));
    }
    const contentType = headers.get("content-type") ?? "";

    // size (413): Content-Length first, then the bytes as they arrive.
    const declared = declaredLength(headers.get("content-length"));
    if (declared !== undefined && declared > maxSize) {
      discardBody(request.body);
      return problemAnswer("message_too_large", 413, `Content-Length ${declared} is over max_message_size ${maxSize}`);
    }
    // target host (401, G48): a request signed for another receiver's URI is not for this one.
    if (hostnames !== undefined) {
      const host = hostOf(request.url);
      if (!servesHost(host)) {
        discardBody(request.body);
        return problemAnswer(
          "invalid_signature",
          401,
          `target: the request is for ${host}, which is not a name of this receiver (served: ${cfg.domains.join(", ")}); its @target-uri was signed for another receiver [AUTH-5] (G48)`,
        );
      }
    }
    let spooler: ReturnType<typeof spoolerFor>;
    let reading = false;
    try {
      // digest and signature (401; a DNS failure of the key lookup is 503), in two steps (issue 16). The
      // signature's inputs are the headers, Content-Digest among them, so it is verified first, key lookup
      // included, before a byte of the body is read: a request whose signature fails is answered without
      // its body being read or held. Only then is the body read and checked against its Content-Digest.
      // Both failures are 401 invalid_signature; G10's order decides only which reason is reported, and
      // the reason of a request wrong in both ways is now the signature's (docs/gaps.md, G10).
      const httpView = fromRequest(request);
      const claimedDigests = claimedDigestsOf(headers);
      const verdict = await verifyDelivery(httpView, EMPTY_BODY, {
        nowS: Math.floor(clock.now() / 1000),
        toleranceS: cfg.readings.G3.toleranceS,
        resolveKey,
        knownKey,
        importKey,
        // The digest step compares the header with itself here: the body is checked below, once read.
        bodyDigest: (algorithm: DigestAlgorithm) => Promise.resolve(claimedDigests.get(algorithm) ?? EMPTY_BODY),
        ...(signatureFields !== undefined && { signatureFields }),
      });
      if (!verdict.ok) {
        discardBody(request.body);
        const detail = `${verdict.check}: ${verdict.detail} [${verdict.rule}]`;
        if (verdict.problem === "temporary_failure") {
          return problemAnswer("temporary_failure", 503, detail, { retryAfterS: cfg.retryAfterS });
        }
        return verdict.problem === "invalid_request"
          ? problemAnswer("invalid_request", 400, detail)
          : problemAnswer("invalid_signature", 401, detail);
      }
      // A body read before its digest is checked is not yet authenticated (a signature's headers can be
      // replayed with another body): at most `maxUnauthenticatedBodies` are read at once (issue 16).
      if (unauthenticatedBodies >= maxUnauthenticatedBodies) {
        discardBody(request.body);
        return problemAnswer(
          "temporary_failure",
          503,
          `${unauthenticatedBodies} request bodies are being read and checked already; try again later`,
          { retryAfterS: cfg.retryAfterS },
        );
      }
      unauthenticatedBodies += 1;
      reading = true;
      // A large body is written to the store as it arrives (when the store can), so the disk keeps pace
      // with the network; used only if the parsed message turns out to be exactly the spooled bytes.
      // Likewise hashed as it arrives, with each algorithm it is hashed with (its SHA-256, which the
      // idempotency record keeps, and sha-512 when its Content-Digest has it), when the crypto in use can
      // hash in pieces (node:crypto under `mailscope`; WebCrypto alone cannot). A body of unknown length
      // (chunked) counts as large.
      const large = declared === undefined || declared >= SPOOL_MIN_BYTES;
      const algorithms = bodyDigestAlgorithms(claimedDigests);
      const hashing = new Map<DigestAlgorithm, Digester>();
      for (const algorithm of large ? algorithms : []) {
        const digester = incrementalDigester(algorithm);
        if (digester !== undefined) hashing.set(algorithm, digester);
      }
      // Not yet authenticated, a large body is not held in memory when the spool can give it back and
      // every digest it is checked with is hashed as it arrives: the spool holds all but its first bytes
      // until the digest matches; a body whose digest does not match is never read back (issue 16).
      const holding = hashing.size === algorithms.length && mailStore.spool !== undefined;
      spooler =
        large && mailStore.spool !== undefined && (declared !== undefined || holding)
          ? spoolerFor(contentType, mailStore.spool.bind(mailStore), holding)
          : undefined;
      const holdsBody = spooler?.holdsBody === true;
      let received = 0;
      const onBytes =
        spooler === undefined && hashing.size === 0
          ? undefined
          : (bytes: Uint8Array, offset: number): void => {
              received = offset + bytes.length;
              for (const digester of hashing.values()) digester.update(bytes);
              spooler?.onBytes(bytes, offset);
            };
      const read = await readBodyWithLimit(bodyBytesOf(request) ?? request.body, maxSize, {
        ...(declared !== undefined && { expectedLength: declared }),
        ...(onBytes !== undefined && { onBytes }),
        ...(holdsBody && { keep: false }),
      });
      if (read.kind === "too-large") {
        return problemAnswer(
          "message_too_large",
          413,
          `the body passed max_message_size ${maxSize} (stopped reading after ${read.bytesRead} bytes)`,
        );
      }
      if (read.kind === "error") return problemAnswer("invalid_request", 400, read.detail);
      /** The body in memory; while it is held in the spool, empty until its digest matches. */
      let body = read.body;

      // The body is hashed once per algorithm: its SHA-256 serves the digest check and the idempotency
      // record alike. A body held in the spool has a digester for each algorithm asked for here.
      const digests = new Map<DigestAlgorithm, Promise<Uint8Array>>();
      const bodyDigest = (algorithm: DigestAlgorithm): Promise<Uint8Array> => {
        let digest = digests.get(algorithm);
        if (digest === undefined) {
          digest = hashing.get(algorithm)?.finish() ?? digestBytes(algorithm, body);
          digests.set(algorithm, digest);
        }
        return digest;
      };
      const digest = await checkContentDigest(claimedDigests, body, bodyDigest);
      unauthenticatedBodies -= 1;
      reading = false;
      if (!digest.ok) {
        // A body held in the spool is let go unread (the spool file is removed in `finally`).
        return problemAnswer(
          "invalid_signature",
          401,
          `digest: ${digest.violation.message} [${digest.violation.rule}]`,
        );
      }
      if (holdsBody && spooler !== undefined) {
        // Authenticated: read back once, into one buffer; the spool then stores the message, as for any large one.
        try {
          body = await spooler.body(received);
        } catch (error) {
          return problemAnswer("temporary_failure", 503, `the body's spool failed: ${errorMessage(error)}`, {
            retryAfterS: cfg.retryAfterS,
          });
        }
      }
      const signingDomain = verdict.signingDomain;
      const key = wellFormedKey ?? "";
      traced.note({ signingDomain });
      // Authenticated: the body is parsed now, max_recipients checked before anything per recipient.
      const parsed = parseBody(body, contentType);

      // from-domain (401, or 403 under G19's other reading). Needs `from`, from the body parsed above.
      const claimedFrom = parsed.fromDomain;
      if (claimedFrom !== undefined && claimedFrom !== signingDomain) {
        const detail = `the envelope from is in ${claimedFrom}, but the signature is by ${signingDomain} [AUTH-4] (G19)`;
        return cfg.readings.G19 === "403"
          ? problemAnswer("policy_rejected", 403, detail)
          : problemAnswer("invalid_signature", 401, detail);
      }

      // idempotency (replay, or 409): G11 compares the digest of the whole body.
      const contentDigest = `sha-256:${bytesToHex(await bodyDigest("sha-256"))}`;
      const scope = JSON.stringify([signingDomain, key]);
      // A request with this key still being handled: the same content gets its answer, other content 409.
      // Synchronous when nothing is in flight, so this request registers itself before any other can look.
      const joinInFlight = (): Promise<Answer> | undefined => {
        const running = inFlight.get(scope);
        if (running === undefined) return undefined;
        if (running.digest !== contentDigest) return Promise.resolve(conflict(signingDomain, key, traced));
        return running.answer.then((first) => {
          traced.emit("idempotency.replay", { signingDomain, key, ...replayedRecipients(parsed) });
          return first;
        });
      };
      const joined = joinInFlight();
      if (joined !== undefined) return await joined;
      let known;
      /** A delivery with this key and no record yet that a crash cut off after it began storing mail (issue 16). */
      let resumed: DeliveryIntent | undefined;
      try {
        known = await idempotency.get(signingDomain, key, clock.now());
        if (known === undefined && idempotency.intent !== undefined) {
          resumed = await idempotency.intent(signingDomain, key, clock.now());
        }
      } catch (error) {
        return problemAnswer("temporary_failure", 503, storeFailed("idempotency store", error), {
          retryAfterS: cfg.retryAfterS,
        });
      }
      // Checked again: another request with this key may have started while the store answered.
      const raced = joinInFlight();
      if (raced !== undefined) return await raced;
      if (known !== undefined) {
        if (known.contentDigest !== contentDigest) return conflict(signingDomain, key, traced);
        traced.emit("idempotency.replay", { signingDomain, key, ...replayedRecipients(parsed) });
        return { response: known.response };
      }
      if (resumed !== undefined && resumed.contentDigest !== contentDigest) return conflict(signingDomain, key, traced);

      const spooled = parsed.ok ? spooler?.storeFor(body, parsed.message) : undefined;
      // A durable store is told before the first message is stored, so that a crash between storing and
      // answering leaves a trace the retry finds (then resumed: no mailbox gets the message twice).
      const begin = idempotency.begin?.bind(idempotency);
      let begun: Promise<void> | undefined;
      const nowMs = clock.now();
      const deliveryId = resumed?.deliveryId ?? `${signingDomain}/${key}@${arrivalMs}`;
      const recovery: Recovery = {
        deliveryId,
        beforeStore:
          resumed !== undefined || begin === undefined
            ? undefined
            : () =>
                (begun ??= begin(signingDomain, key, {
                  contentDigest,
                  deliveryId,
                  startedAtMs: nowMs,
                  expiresAtMs: nowMs + cfg.idempotencyRetentionS * 1000,
                })),
        ...(resumed !== undefined &&
          ports.holdsDelivery !== undefined && {
            storedBefore: (mailbox: string) => ports.holdsDelivery?.(mailbox, deliveryId) ?? Promise.resolve(false),
          }),
      };
      const answer = afterIdempotency(parsed, signingDomain, key, arrivalMs, traced, spooled, recovery);
      inFlight.set(scope, { digest: contentDigest, answer });
      try {
        const done = await answer;
        if (isRemembered(done)) {
          const nowMs = clock.now();
          await idempotency
            .put(signingDomain, key, {
              contentDigest,
              response: done.response,
              storedAtMs: nowMs,
              expiresAtMs: nowMs + cfg.idempotencyRetentionS * 1000,
            })
            // A store that cannot write costs only the replay; the answer stands.
            .catch(() => {});
        }
        return done;
      } finally {
        inFlight.delete(scope);
      }
    } finally {
      if (reading) unauthenticatedBodies -= 1;
      spooler?.close();
    }
  }

  function conflict(signingDomain: string, key: string, traced: RequestTrace): Answer {
    traced.emit("idempotency.conflict", { signingDomain, key });
    return problemAnswer(
      "idempotency_conflict",
      409,
      `Idempotency-Key ${key} of ${signingDomain} was used with another body (G11 compares the body's digest)`,
    );
  }

  /** The steps after idempotency: envelope, recipients' domain, rate limit, policy, per-recipient checks. */
  async function afterIdempotency(
    parsed: ParsedBody,
    signingDomain: string,
    key: string,
    arrivalMs: number,
    traced: RequestTrace,
    spooled?: SpooledStore,
    recovery?: Recovery,
  ): Promise<Answer> {
    if (!parsed.ok) return problemAnswer("invalid_request", 400, violationsDetail(parsed.violations));
    const { envelope, message } = parsed;
    const domain = envelope.to[0]?.domain ?? "";
    if (!served.has(domain)) {
      return problemAnswer(
        "invalid_request",
        400,
        `the recipients are in ${domain}, which this receiver does not serve (served: ${cfg.domains.join(", ")})`,
      );
    }
    const nowMs = clock.now();
    const waitS = policy.takeSigningDomainSlot(signingDomain, nowMs);
    if (waitS > 0) {
      return problemAnswer("rate_limited", 429, `${signingDomain} is over its rate limit`, {
        retryAfterS: waitS,
      });
    }
    const from = envelope.from?.address ?? null;
    if (policy.refusesSender(from, signingDomain)) {
      const retryAfterS = cfg.policy.refusedRetryAfterS;
      return problemAnswer(
        "policy_rejected",
        403,
        `deliveries from ${from ?? signingDomain} are refused by local policy`,
        {
          ...(retryAfterS !== undefined && { retryAfterS }),
        },
      );
    }

    const deliveryId = recovery?.deliveryId ?? `${signingDomain}/${key}@${arrivalMs}`;
    const recipients = envelope.to.map((m) => m.address);
    const outcomes = await locks.with(recipients, async () => {
      const list: Outcome[] = [];
      for (const recipient of recipients) {
        ports.work?.(1);
        list.push(await checkRecipient(recipient, from, signingDomain, message, deliveryId, traced, spooled, recovery));
      }
      return list;
    });

    const results = outcomes.map((o) => ({
      recipient: o.recipient,
      status: o.status,
      ...(o.problem !== undefined && {
        problem: problemJson(
          createProblem(o.problem, {
            problemBase: cfg.problem_base,
            title: TITLES[o.problem],
            ...(o.detail !== undefined && { detail: o.detail }),
          }),
        ),
      }),
      ...(o.retryAfterS !== undefined && { retry_after: o.retryAfterS }),
    }));
    scheduleFailures(outcomes, envelope, message, deliveryId, arrivalMs, traced.faults);
    return {
      response: {
        status: 200,
        headers: [["content-type", JSON_MEDIA_TYPE]],
        body: new TextEncoder().encode(JSON.stringify({ results })),
      },
      recipients: outcomes.map((o) => ({
        recipient: o.recipient,
        status: o.status,
        ...(o.problem !== undefined && { problem: o.problem }),
      })),
    };
  }

  /** The per-recipient checks, in `receiverChecks` order; the last step stores the message. */
  async function checkRecipient(
    recipient: string,
    from: string | null,
    signingDomain: string,
    message: Uint8Array,
    deliveryId: string,
    traced: RequestTrace,
    spooled?: SpooledStore,
    recovery?: Recovery,
  ): Promise<Outcome> {
    // Resumed after a crash: a mailbox the cut-off delivery stored the message in was accepted then.
    try {
      if (recovery?.storedBefore !== undefined && (await recovery.storedBefore(recipient))) {
        return { recipient, status: "accepted" };
      }
    } catch (error) {
      return deferredByStore(recipient, "mail store", error);
    }
    const mailbox = mailboxes.get(recipient);
    if (mailbox === undefined && !cfg.catchAll) {
      return {
        recipient,
        status: "rejected",
        problem: "recipient_not_found",
        detail: `${recipient} does not exist here`,
      };
    }
    const faulted = traced.faults?.answer(recipient);
    if (faulted !== undefined) return { recipient, ...faulted };
    if (policy.recipientRefuses(recipient, from, signingDomain)) {
      return {
        recipient,
        status: "rejected",
        problem: "policy_rejected",
        detail: `${recipient} does not take mail from ${from ?? signingDomain}`,
      };
    }
    const planned = policy.takeTemporaryFailure(recipient);
    if (planned !== undefined) {
      return {
        recipient,
        status: "deferred",
        problem: "temporary_failure",
        detail: `${recipient} cannot take mail now`,
        ...(planned.retryAfterS !== undefined && { retryAfterS: planned.retryAfterS }),
      };
    }
    const nowMs = clock.now();
    const waitS = policy.recipientWaitS(recipient, nowMs);
    if (waitS > 0) {
      return {
        recipient,
        status: "deferred",
        problem: "rate_limited",
        detail: `${recipient} is over its rate limit`,
        retryAfterS: waitS,
      };
    }
    const quota = mailbox?.quota;
    if (quota !== undefined) {
      let usage;
      try {
        usage = await mailStore.usage(recipient);
      } catch (error) {
        return deferredByStore(recipient, "mail store", error);
      }
      if (
        (quota.messages !== undefined && usage.messages + 1 > quota.messages) ||
        (quota.bytes !== undefined && usage.bytes + message.length > quota.bytes)
      ) {
        return {
          recipient,
          status: "deferred",
          problem: "mailbox_full",
          detail: `${recipient} has no room for ${message.length} more bytes`,
        };
      }
    }
    try {
      await recovery?.beforeStore?.();
    } catch (error) {
      // The delivery's intent is written to the idempotency store before any mail is (issue 23: a full disk
      // there is that store's failure, not the mail store's).
      return deferredByStore(recipient, "idempotency store", error);
    }
    try {
      const meta = { deliveryId, receivedAtMs: nowMs };
      // The spooled copy when there is one that is ready; from memory when there is none or it could not be finished.
      if (spooled === undefined || !(await spooled(recipient, meta))) await mailStore.deliver(recipient, message, meta);
    } catch (error) {
      return deferredByStore(recipient, "mail store", error);
    }
    policy.recordRecipientDelivery(recipient, nowMs);
    if (tracing) {
      const messageId = messageIdOf(message);
      traced.emit("mailbox.delivered", {
        mailbox: recipient,
        ...(messageId !== undefined && { messageId }),
        size: message.length,
      });
    }
    return { recipient, status: "accepted" };
  }

  /** G17: schedules the failures after acceptance of this delivery's accepted recipients, one DSN per delay. */
  function scheduleFailures(
    outcomes: readonly Outcome[],
    envelope: Envelope,
    message: Uint8Array,
    deliveryId: string,
    arrivalMs: number,
    faults?: RecipientFaults,
  ): void {
    const byDelay = new Map<number, FailAfterAcceptanceRule[]>();
    for (const outcome of outcomes) {
      if (outcome.status !== "accepted") continue;
      const rule =
        cfg.policy.failAfterAcceptance.find((r) => r.mailbox === outcome.recipient) ??
        faults?.failAfterAcceptance(outcome.recipient);
      if (rule === undefined) continue;
      byDelay.set(rule.delayMs, [...(byDelay.get(rule.delayMs) ?? []), rule]);
    }
    const reportingDomain = envelope.to[0]?.domain ?? traceDomain ?? "";
    for (const [delayMs, rules] of byDelay) {
      const recipients: FailedRecipient[] = rules.map((r) => ({
        mailbox: r.mailbox,
        status: r.status,
        diagnostic: r.diagnostic,
      }));
      // The callback returns its promise so a test clock can wait for it; the Clock port ignores it.
      clock.setTimeout(
        () => failAfterAcceptance(recipients, envelope, message, deliveryId, arrivalMs, reportingDomain),
        delayMs,
      );
    }
  }

  async function failAfterAcceptance(
    recipients: readonly FailedRecipient[],
    envelope: Envelope,
    message: Uint8Array,
    deliveryId: string,
    arrivalMs: number,
    reportingDomain: string,
  ): Promise<void> {
    for (const r of recipients) emit("failure.after-acceptance", { mailbox: r.mailbox, status: r.status });
    // No DSN to the null reverse-path (ENV-3, G17), and none without an outbound side to send it.
    if (envelope.from === null || ports.outbound === undefined) return;
    try {
      const dsn = await buildFailureDsn({
        reportingDomain,
        to: envelope.from.address,
        recipients,
        message,
        arrivalMs,
        nowMs: clock.now(),
        deliveryId,
      });
      await ports.outbound.submit({
        from: null,
        to: [envelope.from.address],
        message: dsn,
        about: { deliveryId, recipients },
      });
    } catch {
      // The DSN is best effort: the 200 has long been sent, and no one is left to answer.
    }
  }

  // ── Helpers that need the configuration ─────────────────────────────

  /** G48: a served domain, a subdomain of one, or one of the configured host names. */
  function servesHost(host: string): boolean {
    if (hostnames === undefined || hostnames.has(host)) return true;
    return cfg.domains.some((domain) => host === domain || host.endsWith(`.${domain}`));
  }

  function parseBody(body: Uint8Array, contentType: string): ParsedBody {
    const multipart = parseMultipartBody(body, contentType);
    if (!multipart.ok) return { ok: false, violations: multipart.violations };
    const json = parseJson(multipart.value.envelopeJson, "$", "POST-8");
    if (!json.ok) return { ok: false, violations: json.violations };
    const fromDomain = fromDomainOf(json.value);
    const envelope = parseEnvelope(json.value, {
      maxRecipients: cfg.capabilities.max_recipients,
      ...(ports.work !== undefined && { work: ports.work }),
    });
    if (!envelope.ok)
      return { ok: false, violations: envelope.violations, ...(fromDomain !== undefined && { fromDomain }) };
    return {
      ok: true,
      envelope: envelope.value,
      message: multipart.value.message,
      ...(fromDomain !== undefined && { fromDomain }),
    };
  }
}

/** What a delivery needs to survive a crash between storing and answering (issue 16). */
interface Recovery {
  readonly deliveryId: string;
  /** Before the first message is stored: the intent made durable (once; later calls share it). */
  readonly beforeStore?: () => Promise<void>;
  /** For a delivery resumed after a crash: whether the mailbox already holds its message. */
  readonly storedBefore?: (mailbox: string) => Promise<boolean>;
}

/** Stores the spooled message for one mailbox: true when done, false when the spool could not be finished (store from memory). */
type SpooledStore = (
  mailbox: string,
  meta: { readonly deliveryId: string; readonly receivedAtMs: number },
) => Promise<boolean>;

/**
 * A spooler for a body of `contentType` (already checked by the header step), or none when its boundary
 * cannot be read. With `holding`, it holds the body (not its reader) when the store's spool can be read back.
 */
function spoolerFor(
  contentType: string,
  spool: () => MailSpool,
  holding: boolean,
): (BodySpooler & { readonly holdsBody: boolean }) | undefined {
  const type = parseContentType(contentType);
  if (!type.ok) return undefined;
  const made = spool();
  const holdsBody = holding && made.read !== undefined;
  return { ...createBodySpooler(type.value.boundary, made, { holdsBody }), holdsBody };
}

const EMPTY_BODY = new Uint8Array(0);

/** A host name as compared (G48, G22): lower case, without a trailing dot or an IPv6 literal's brackets. */
function normalizeHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[(.*)\]$/, "$1");
}

/** The normalized host of a request URL; "" when it has none. */
function hostOf(url: string): string {
  try {
    return normalizeHost(new URL(url).hostname);
  } catch {
    return "";
  }
}

/**
 * The algorithms a body is hashed with: those of its Content-Digest that are checked (RFC 9530's active
 * ones, POST-5) and SHA-256 in any case, the digest the idempotency record keeps (G11).
 */
function bodyDigestAlgorithms(claimedDigests: ReadonlyMap<string, Uint8Array>): DigestAlgorithm[] {
  return DIGEST_ALGORITHMS.filter((algorithm) => algorithm === "sha-256" || claimedDigests.has(algorithm));
}

/** The Content-Digest's digests by algorithm; the header step has checked that it parses. */
function claimedDigestsOf(headers: Headers): ReadonlyMap<string, Uint8Array> {
  const parsed = parseContentDigest(headers.get("content-digest") ?? "");
  return parsed.ok ? parsed.value : new Map();
}

/** The recipients of a replayed request, for idempotency.replay: its envelope's `to`, when the body parsed. */
function replayedRecipients(parsed: ParsedBody): { recipients?: string[] } {
  return parsed.ok ? { recipients: parsed.envelope.to.map((m) => m.address) } : {};
}

type ParsedBody =
  | { readonly ok: true; readonly envelope: Envelope; readonly message: Uint8Array; readonly fromDomain?: string }
  | { readonly ok: false; readonly violations: readonly Violation[]; readonly fromDomain?: string };

/**
 * Whether an answer is remembered for replays. 200 and the permanent answers
 * after the idempotency step (400, and 403 without Retry-After) are: the
 * sender never retries them. 429 and 503, and a 403 that invites a retry
 * (G26), are not: a retry with the same key (POST-24) must get a new chance.
 */
function isRemembered(answer: Answer): boolean {
  const { status, headers } = answer.response;
  if (status === 200 || status === 400) return true;
  return status === 403 && !headers.some(([name]) => name === "retry-after");
}

/**
 * The header-shape violations of a POST (G10 "headers present and well-formed"),
 * and Signature-Input and Signature as parsed here, so the signature check
 * does not parse them again.
 */
function headerViolations(headers: Headers): { problems: Violation[]; signatureFields?: ParsedSignatureFields } {
  const problems: Violation[] = [];
  let signatureFields: ParsedSignatureFields | undefined;
  const key = headers.get("idempotency-key");
  if (key === null) {
    problems.push({
      path: "headers.Idempotency-Key",
      rule: "POST-2",
      message: "the Idempotency-Key header is missing",
    });
  } else if (key.length < 1 || key.length > 128) {
    problems.push({
      path: "headers.Idempotency-Key",
      rule: "LIM-5",
      message: `the Idempotency-Key has ${key.length} characters; 1 to 128 are allowed`,
    });
  } else if (!IDEMPOTENCY_KEY.test(key)) {
    problems.push({
      path: "headers.Idempotency-Key",
      rule: "POST-2",
      message: "the Idempotency-Key may hold only A-Z a-z 0-9 . _ ~ -",
    });
  }
  const input = headers.get("signature-input");
  const signature = headers.get("signature");
  if (input === null)
    problems.push({
      path: "headers.Signature-Input",
      rule: "POST-4",
      message: "the Signature-Input header is missing",
    });
  if (signature === null)
    problems.push({ path: "headers.Signature", rule: "POST-3", message: "the Signature header is missing" });
  if (input !== null && signature !== null) {
    signatureFields = parseSignatureFields(input, signature);
    const { inputs, signatures } = signatureFields;
    if (!inputs.ok)
      pushAll(
        problems,
        inputs.violations.map((v) => ({ ...v, path: "headers.Signature-Input" })),
      );
    if (!signatures.ok)
      pushAll(
        problems,
        signatures.violations.map((v) => ({ ...v, path: "headers.Signature" })),
      );
    if (inputs.ok && signatures.ok) {
      // The profile reads the first signature; its label must be in both fields.
      const first = [...inputs.value.keys()][0];
      if (first !== undefined && !signatures.value.has(first)) {
        problems.push({
          path: "headers.Signature",
          rule: "POST-3",
          message: `Signature has no member "${first}", which Signature-Input names first`,
        });
      }
    }
  }
  const digest = headers.get("content-digest");
  if (digest === null) {
    problems.push({ path: "headers.Content-Digest", rule: "POST-5", message: "the Content-Digest header is missing" });
  } else {
    const parsed = parseContentDigest(digest);
    if (!parsed.ok)
      pushAll(
        problems,
        parsed.violations.map((v) => ({ ...v, path: "headers.Content-Digest" })),
      );
  }
  const contentType = parseContentType(headers.get("content-type"));
  if (!contentType.ok) pushAll(problems, contentType.violations);
  return { problems, ...(signatureFields !== undefined && { signatureFields }) };
}

/** The domain of the envelope's `from` when it is a valid mailbox; `undefined` for null or anything invalid (left to the envelope check). */
function fromDomainOf(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const from = (json as Record<string, unknown>)["from"];
  if (typeof from !== "string") return undefined;
  const parsed = parseMailbox(from);
  return parsed.ok ? parsed.value.domain : undefined;
}

/** The Message-ID of a message, for the trace; `undefined` when it has none. */
function messageIdOf(message: Uint8Array): string | undefined {
  const text = utf8.decode(headerBlock(message).subarray(0, 64 * 1024));
  const match = /^message-id:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(text);
  const value = match?.[1]?.replace(/\r?\n[ \t]+/g, " ").trim();
  return value === undefined || value === "" ? undefined : value;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/**
 * A store's failure in an answer: the store and the path it names itself ({@link StorageError}, the stores on
 * disk), else the store this step called and its words.
 */
/** A recipient deferred because a store failed: temporary_failure (ERR-21), the store (and its path) named. */
function deferredByStore(recipient: string, store: "mail store" | "idempotency store", error: unknown): Outcome {
  return { recipient, status: "deferred", problem: "temporary_failure", detail: storeFailed(store, error) };
}

function storeFailed(store: "mail store" | "idempotency store", error: unknown): string {
  return error instanceof StorageError
    ? `the ${error.store} failed at ${error.path}: ${error.reason}`
    : `the ${store} failed: ${errorMessage(error)}`;
}
