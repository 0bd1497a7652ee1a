/**
 * The receiver's checks of POST /v1/messages as a whole, one function per check of `checks.ts`, keyed by
 * its ID: the handler walks them in G10's order (`checkOrder("R")`), and the first that answers decides
 * the answer. A step passes by returning nothing (having added what it learned to the {@link Delivery}),
 * answers with an {@link Answer}, or, for `idempotency`, returns what to do with the answer of the steps
 * after it (remember it for replays).
 *
 * `version-path` also routes: it answers GET /v1/capabilities and every request that is not a POST to
 * /v1/messages, so the steps after it see only deliveries.
 */
import { bytesToHex } from "../protocol/base64.ts";
import { bodyBytesOf } from "../protocol/bodies.ts";
import {
  checkContentDigest,
  DIGEST_ALGORITHMS,
  digestBytes,
  incrementalDigester,
  parseContentDigest,
} from "../protocol/digest.ts";
import type { DigestAlgorithm, Digester, ParsedContentDigest } from "../protocol/digest.ts";
import { parseContentType } from "../protocol/multipart.ts";
import type { MultipartContentType } from "../protocol/multipart.ts";
import { hashesOnThisThread } from "../protocol/webCrypto.ts";
import { verifyDelivery } from "../protocol/profile.ts";
import type { Violation } from "../protocol/result.ts";
import { fromRequest, headerValue, parseSignatureFields } from "../protocol/signature.ts";
import type { HttpMessageView, ParsedSignatureFields } from "../protocol/signature.ts";
import { pushAll } from "../protocol/lists.ts";
import { errorMessage } from "../errorMessage.ts";
import type { MailSpool } from "../ports.ts";
import { isRemembered, storeFailed, violationsDetail } from "./answers.ts";
import type { Answer } from "./answers.ts";
import { declaredLength, readBodyAtHand, readBodyWithLimit } from "./body.ts";
import type { RequestCheckId } from "./checks.ts";
import type { DeliveryIntent } from "./idempotencyStore.ts";
import type { Delivery, Receiving, RequestTrace } from "./receiving.ts";
import {
  firstLabelViolation,
  fromDomainAnswer,
  fromDomainMismatch,
  idempotencyKeyViolation,
  parseBody,
  versionPathVerdict,
} from "./requestChecks.ts";
import type { ParsedBody } from "./requestChecks.ts";
import { createBodySpooler, SPOOL_MIN_BYTES, type BodySpooler } from "./spool.ts";

/** What a step gives back: nothing (passed), the answer, or (`idempotency`) what to do with the rest's answer. */
export type StepResult = Answer | undefined | AroundRest;

/** Takes the answer of the steps after this one (already running) and gives the request's answer. */
export type AroundRest = (rest: Promise<Answer>) => Promise<Answer>;

/** One check of the request as a whole. Synchronous where the check is, so the walk adds no waiting of its own. */
export type RequestStep = (r: Receiving, d: Delivery) => StepResult | Promise<StepResult>;

export const EMPTY_BODY = new Uint8Array(0);

/** VER-1, VER-7, GET-10, ERR-14, ERR-15, POST-16: the path is under a version served, the resource and method exist. */
function versionPath(r: Receiving, d: Delivery): Answer | undefined {
  const { path, request } = d;
  const versions = r.cfg.capabilities.versions;
  const verdict = versionPathVerdict(request.method, path, versions);
  switch (verdict.kind) {
    case "delivery":
      return undefined;
    case "unversioned":
      return r.problem("invalid_request", 404, `${path} is not a path of the service; its resources are under /v1/`);
    case "capabilities":
      if (!verdict.allowed) {
        return r.problem("invalid_request", 405, `${request.method} is not allowed on ${path}`, {
          allow: "GET, HEAD",
        });
      }
      return r.capabilitiesAnswer;
    case "unsupported":
      return r.problem(
        "unsupported_version",
        404,
        `${verdict.segment} is not served here; served: ${versions.join(", ")}`,
      );
    case "unimplemented":
      return r.problem(
        "invalid_request",
        404,
        `Mailscope's receiver advertises ${verdict.segment} but implements only v1`,
      );
    case "no-resource":
      return r.problem("invalid_request", 404, `${path} is not a resource of v1 (/v1/messages, /v1/capabilities)`);
    case "method":
      return r.problem("invalid_request", 405, `${request.method} is not allowed on ${path}`, { allow: "POST" });
  }
}

/** ERR-10, POST-20 (G21): a receiver that is down (policy `unavailable`) says so before it looks at anything. */
function availability(r: Receiving): Answer | undefined {
  const unavailable = r.policy.takeUnavailable();
  if (unavailable === undefined) return undefined;
  return r.problem("temporary_failure", 503, "the receiver is not accepting deliveries now", {
    retryAfterS: unavailable.retryAfterS,
  });
}

/** POST-2 to POST-6, LIM-5, POST-13 (400): every problem with the request headers at once, so a sender fixes them in one go. */
function headers(r: Receiving, d: Delivery): Answer | undefined {
  // The fields listed once: each check below reads them here rather than asking the Headers again.
  const view = fromRequest(d.request, d.url);
  d.view = view;
  const { problems, signatureFields, contentDigest, contentType } = headerViolations(view);
  if (problems.length > 0) return r.problem("invalid_request", 400, violationsDetail(problems));
  d.key = fieldOf(view, "idempotency-key") ?? "";
  d.contentType = fieldOf(view, "content-type") ?? "";
  if (contentType !== undefined) d.multipartType = contentType;
  if (signatureFields !== undefined) d.signatureFields = signatureFields;
  if (contentDigest?.parsed.ok === true) {
    d.contentDigest = contentDigest;
    d.claimedDigests = contentDigest.parsed.value;
  }
  return undefined;
}

/** ERR-12, LIM-2 (413): Content-Length here; the bytes as they arrive are counted by `digest`, which reads them. */
function size(r: Receiving, d: Delivery): Answer | undefined {
  const field = d.view === undefined ? d.request.headers.get("content-length") : fieldOf(d.view, "content-length");
  const declared = declaredLength(field);
  if (declared !== undefined && declared > r.maxSize) {
    return r.problem("message_too_large", 413, `Content-Length ${declared} is over max_message_size ${r.maxSize}`);
  }
  if (declared !== undefined) d.declared = declared;
  return undefined;
}

/** AUTH-5 (401, G48): a request signed for another receiver's URI is not for this one. */
function targetHost(r: Receiving, d: Delivery): Answer | undefined {
  if (r.hostnames === undefined) return undefined;
  const host = hostOf(d.url);
  if (servesHost(r, host)) return undefined;
  return r.problem(
    "invalid_signature",
    401,
    `target: the request is for ${host}, which is not a name of this receiver (served: ${r.cfg.domains.join(", ")}); its @target-uri was signed for another receiver [AUTH-5] (G48)`,
  );
}

/**
 * AUTH-1, AUTH-3, AUTH-5, AUTH-9 (401; a DNS failure of the key lookup is 503): the signature, verified from
 * the headers alone. Its inputs are the headers, Content-Digest among them, so it is verified, key lookup
 * included, before a byte of the body is read: a request whose signature fails is answered without its
 * body being read or held. `digest` then reads the body and checks it against its Content-Digest. Both
 * failures are 401 invalid_signature; G10's order decides only which reason is reported, and the reason of
 * a request wrong in both ways is the signature's (docs/gaps.md, G10).
 */
async function signature(r: Receiving, d: Delivery): Promise<Answer | undefined> {
  const httpView = d.view ?? fromRequest(d.request, d.url);
  const claimedDigests = d.claimedDigests;
  const verifying = verifyDelivery(httpView, EMPTY_BODY, {
    nowS: Math.floor(r.clock.now() / 1000),
    toleranceS: r.cfg.readings.signatureTolerance.toleranceS,
    resolveKey: r.keys.resolveKey,
    knownKey: r.keys.knownKey,
    importKey: r.keys.importKey,
    // The digest step compares the header with itself here: the body is checked by `digest`, once read.
    bodyDigest: (algorithm: DigestAlgorithm) => Promise.resolve(claimedDigests.get(algorithm) ?? EMPTY_BODY),
    ...(d.signatureFields !== undefined && { signatureFields: d.signatureFields }),
    ...(d.contentDigest !== undefined && { contentDigest: d.contentDigest }),
  });
  // Started once the verification has (the longer job), so that the two run side by side.
  startDigestsAtHand(r, d);
  const verdict = await verifying;
  if (!verdict.ok) {
    const detail = `${verdict.check}: ${verdict.detail} [${verdict.rule}]`;
    if (verdict.problem === "temporary_failure") {
      return r.problem("temporary_failure", 503, detail, { retryAfterS: r.cfg.retryAfterS });
    }
    return verdict.problem === "invalid_request"
      ? r.problem("invalid_request", 400, detail)
      : r.problem("invalid_signature", 401, detail);
  }
  d.signingDomain = verdict.signingDomain;
  return undefined;
}

/**
 * POST-5, AUTH-2 (401): the body, read now, is the one its Content-Digest names. Reading it also finishes
 * `size` (413 once more than max_message_size bytes arrive). A body read before its digest is checked is not
 * yet authenticated (a signature's headers can be replayed with another body): at most
 * `maxUnauthenticatedBodies` are read at once, and one past it is answered 503 with its body unread.
 */
async function digest(r: Receiving, d: Delivery): Promise<Answer | undefined> {
  if (r.unauthenticatedBodies >= r.maxUnauthenticatedBodies) {
    return r.problem(
      "temporary_failure",
      503,
      `${r.unauthenticatedBodies} request bodies are being read and checked already; try again later`,
      { retryAfterS: r.cfg.retryAfterS },
    );
  }
  r.unauthenticatedBodies += 1;
  d.reading = true;
  d.bodyTaken = true;
  const atHand = bodyBytesOf(d.request);
  const reading = bodyReading(r, d, atHand?.length);
  // A body at hand is read at once; only a stream is waited for.
  const read =
    atHand !== undefined
      ? readBodyAtHand(atHand, r.maxSize, reading.options)
      : await readBodyWithLimit(d.request.body, r.maxSize, reading.options);
  if (read.kind === "too-large") {
    return r.problem(
      "message_too_large",
      413,
      `the body passed max_message_size ${r.maxSize} (stopped reading after ${read.bytesRead} bytes)`,
    );
  }
  if (read.kind === "error") return r.problem("invalid_request", 400, read.detail);
  d.body = read.body;
  // The body is hashed once per algorithm: its SHA-256 serves the digest check and the idempotency
  // record alike. A body held in the spool has a digester for each algorithm asked for here.
  const digests = new Map<DigestAlgorithm, Promise<Uint8Array>>(
    d.digestsAtHand?.bytes === d.body ? d.digestsAtHand.digests : [],
  );
  d.bodyDigest = (algorithm: DigestAlgorithm): Promise<Uint8Array> => {
    let digest = digests.get(algorithm);
    if (digest === undefined) {
      digest = reading.hashing.get(algorithm)?.finish() ?? digestBytes(algorithm, d.body);
      digests.set(algorithm, digest);
    }
    return digest;
  };
  const checked = await checkContentDigest(d.claimedDigests, d.body, d.bodyDigest);
  r.unauthenticatedBodies -= 1;
  d.reading = false;
  if (!checked.ok) {
    // A body held in the spool is let go unread (the spool file is removed when the request ends).
    return r.problem("invalid_signature", 401, `digest: ${checked.violation.message} [${checked.violation.rule}]`);
  }
  if (d.spooler?.holdsBody === true) {
    // Authenticated: read back once, into one buffer; the spool then stores the message, as for any large one.
    try {
      d.body = await d.spooler.body(reading.received());
    } catch (error) {
      return r.problem("temporary_failure", 503, `the body's spool failed: ${errorMessage(error)}`, {
        retryAfterS: r.cfg.retryAfterS,
      });
    }
  }
  d.traced.note({ signingDomain: d.signingDomain });
  return undefined;
}

/** AUTH-4 (401, or 403 under G19's other reading): the envelope's `from` is in the signing domain. Parses the body, now authenticated. */
function fromDomain(r: Receiving, d: Delivery): Answer | undefined {
  // max_recipients is checked here before anything per recipient.
  const parsed = parseBody(d.body, d.multipartType ?? d.contentType, {
    maxRecipients: r.cfg.capabilities.max_recipients,
    work: r.ports.work,
  });
  d.parsed = parsed;
  const claimedFrom = parsed.fromDomain;
  if (claimedFrom === undefined || claimedFrom === d.signingDomain) return undefined;
  const answer = fromDomainAnswer(r.cfg.readings.fromDomainMismatch);
  return r.problem(answer.problem, answer.status, `${fromDomainMismatch(claimedFrom, d.signingDomain)} [AUTH-4] (G19)`);
}

/**
 * POST-12, POST-23, POST-25, ERR-13 (G11): a known (signing domain, Idempotency-Key) with the same body
 * digest is replayed, with another digest it conflicts (409). Otherwise the delivery registers itself as in
 * flight (a request with this key arriving meanwhile joins it) and remembers the answer the steps after it give.
 */
async function idempotency(r: Receiving, d: Delivery): Promise<StepResult> {
  const { signingDomain, key, traced } = d;
  const contentDigest = `sha-256:${bytesToHex(await d.bodyDigest("sha-256"))}`;
  const scope = JSON.stringify([signingDomain, key]);
  // A request with this key still being handled: the same content gets its answer, other content 409.
  // Synchronous when nothing is in flight, so this request registers itself before any other can look.
  const joinInFlight = (): Promise<Answer> | undefined => {
    const running = r.inFlight.get(scope);
    if (running === undefined) return undefined;
    if (running.digest !== contentDigest) return Promise.resolve(conflict(r, signingDomain, key, traced));
    return running.answer.then((first) => {
      traced.emit("idempotency.replay", { signingDomain, key, ...replayedRecipients(d.parsed) });
      return first;
    });
  };
  const joined = joinInFlight();
  if (joined !== undefined) return await joined;
  let known;
  /** A delivery with this key and no record yet that a crash cut off after it began storing mail. */
  let resumed: DeliveryIntent | undefined;
  try {
    known = await r.idempotency.get(signingDomain, key, r.clock.now());
    if (known === undefined && r.idempotency.intent !== undefined) {
      resumed = await r.idempotency.intent(signingDomain, key, r.clock.now());
    }
  } catch (error) {
    return r.problem("temporary_failure", 503, storeFailed("idempotency store", error), {
      retryAfterS: r.cfg.retryAfterS,
    });
  }
  // Checked again: another request with this key may have started while the store answered.
  const raced = joinInFlight();
  if (raced !== undefined) return await raced;
  if (known !== undefined) {
    if (known.contentDigest !== contentDigest) return conflict(r, signingDomain, key, traced);
    traced.emit("idempotency.replay", { signingDomain, key, ...replayedRecipients(d.parsed) });
    return { response: known.response };
  }
  if (resumed !== undefined && resumed.contentDigest !== contentDigest) {
    return conflict(r, signingDomain, key, traced);
  }
  prepareStore(r, d, contentDigest, resumed);
  // Registered now, in the same step as the look above: no other request with this key can slip between.
  const settle = Promise.withResolvers<Answer>();
  const answer = settle.promise;
  // A failure is told to the requests that joined this one; without them, no one is left to tell.
  answer.catch(() => {});
  r.inFlight.set(scope, { digest: contentDigest, answer });
  return async (rest) => {
    try {
      const done = await rest;
      settle.resolve(done);
      if (isRemembered(done)) {
        const nowMs = r.clock.now();
        await r.idempotency
          .put(signingDomain, key, {
            contentDigest,
            response: done.response,
            storedAtMs: nowMs,
            expiresAtMs: nowMs + r.cfg.idempotencyRetentionS * 1000,
          })
          // A store that cannot write costs only the replay; the answer stands.
          .catch(() => {});
      }
      return done;
    } catch (error) {
      settle.reject(error);
      throw error;
    } finally {
      r.inFlight.delete(scope);
    }
  };
}

/** POST-7 to POST-9, ENV-1 to ENV-8 (400): the body is two parts, the first a valid Envelope of at most max_recipients. */
function envelope(r: Receiving, d: Delivery): Answer | undefined {
  if (d.parsed?.ok === true) return undefined;
  return r.problem("invalid_request", 400, violationsDetail(d.parsed?.violations ?? []));
}

/** POST-1, POST-22 (400): the recipients are in a domain this receiver serves. */
function recipientDomain(r: Receiving, d: Delivery): Answer | undefined {
  const domain = (d.parsed?.ok === true ? d.parsed.envelope.to[0]?.domain : undefined) ?? "";
  if (r.served.has(domain)) return undefined;
  return r.problem(
    "invalid_request",
    400,
    `the recipients are in ${domain}, which this receiver does not serve (served: ${r.cfg.domains.join(", ")})`,
  );
}

/** ERR-8, POST-19, LIM-14 (429, G21): the signing domain is within its rate limit (and the delivery is counted). */
function rateLimit(r: Receiving, d: Delivery): Answer | undefined {
  const waitS = r.policy.takeSigningDomainSlot(d.signingDomain, r.clock.now());
  if (waitS <= 0) return undefined;
  return r.problem("rate_limited", 429, `${d.signingDomain} is over its rate limit`, { retryAfterS: waitS });
}

/** ERR-3, POST-15, SVC-10 (403, G26): the sender is not refused by local policy. */
function senderPolicy(r: Receiving, d: Delivery): Answer | undefined {
  const from = d.parsed?.ok === true ? (d.parsed.envelope.from?.address ?? null) : null;
  if (!r.policy.refusesSender(from, d.signingDomain)) return undefined;
  const retryAfterS = r.cfg.policy.refusedRetryAfterS;
  return r.problem("policy_rejected", 403, `deliveries from ${from ?? d.signingDomain} are refused by local policy`, {
    ...(retryAfterS !== undefined && { retryAfterS }),
  });
}

/** The request-level checks by ID; {@link checkOrder} gives their order. */
export const requestSteps: { readonly [id in RequestCheckId]: RequestStep } = {
  "version-path": versionPath,
  availability,
  headers,
  size,
  "target-host": targetHost,
  signature,
  digest,
  "from-domain": fromDomain,
  idempotency,
  envelope,
  "recipient-domain": recipientDomain,
  "rate-limit": rateLimit,
  policy: senderPolicy,
};

// ── What the steps share ───────────────────────────────────────────────

function conflict(r: Receiving, signingDomain: string, key: string, traced: RequestTrace): Answer {
  traced.emit("idempotency.conflict", { signingDomain, key });
  return r.problem(
    "idempotency_conflict",
    409,
    `Idempotency-Key ${key} of ${signingDomain} was used with another body (G11 compares the body's digest)`,
  );
}

/**
 * How `digest` reads the body. A large body is written to the store as it arrives (when the store can), so
 * the disk keeps pace with the network; used only if the parsed message turns out to be exactly the spooled
 * bytes. Likewise hashed as it arrives, with each algorithm it is hashed with (its SHA-256, which the
 * idempotency record keeps, and sha-512 when its Content-Digest has it), when the crypto in use can hash in
 * pieces (node:crypto under `mailscope`; WebCrypto alone cannot). A body of unknown length (chunked) counts
 * as large, unless it is at hand (app/protocol/bodies.ts): then `atHandLength`, its length, is known
 * without a Content-Length, and a small one is hashed in one go once read, as one that declared its length is.
 */
function bodyReading(
  r: Receiving,
  d: Delivery,
  atHandLength: number | undefined,
): {
  readonly options: Parameters<typeof readBodyWithLimit>[2];
  readonly hashing: ReadonlyMap<DigestAlgorithm, Digester>;
  readonly received: () => number;
} {
  const { declared, contentType } = d;
  const { mailStore } = r;
  const length = declared ?? atHandLength;
  const large = length === undefined || length >= SPOOL_MIN_BYTES;
  const algorithms = bodyDigestAlgorithms(d.claimedDigests);
  const hashing = new Map<DigestAlgorithm, Digester>();
  for (const algorithm of large ? algorithms : []) {
    const digester = incrementalDigester(algorithm);
    if (digester !== undefined) hashing.set(algorithm, digester);
  }
  // Not yet authenticated, a large body is not held in memory when the spool can give it back and
  // every digest it is checked with is hashed as it arrives: the spool holds all but its first bytes
  // until the digest matches; a body whose digest does not match is never read back.
  const holding = hashing.size === algorithms.length && mailStore.spool !== undefined;
  const spooler =
    large && mailStore.spool !== undefined && (declared !== undefined || holding)
      ? spoolerFor(contentType, mailStore.spool.bind(mailStore), holding)
      : undefined;
  if (spooler !== undefined) d.spooler = spooler;
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
  return {
    options: {
      ...(declared !== undefined && { expectedLength: declared }),
      ...(onBytes !== undefined && { onBytes }),
      ...(holdsBody && { keep: false }),
    },
    hashing,
    received: () => received,
  };
}

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

/** What `idempotency` leaves for the store step: the delivery's ID, its crash recovery, the spooled message. */
function prepareStore(r: Receiving, d: Delivery, contentDigest: string, resumed: DeliveryIntent | undefined): void {
  const { signingDomain, key, parsed } = d;
  const spooled = parsed?.ok === true ? d.spooler?.storeFor(d.body, parsed.message) : undefined;
  if (spooled !== undefined) d.spooled = spooled;
  // A durable store is told before the first message is stored, so that a crash between storing and
  // answering leaves a trace the retry finds (then resumed: no mailbox gets the message twice).
  const begin = r.idempotency.begin?.bind(r.idempotency);
  let begun: Promise<void> | undefined;
  const nowMs = r.clock.now();
  const deliveryId = resumed?.deliveryId ?? `${signingDomain}/${key}@${d.arrivalMs}`;
  const holdsDelivery = r.ports.holdsDelivery;
  d.recovery = {
    deliveryId,
    ...(resumed === undefined &&
      begin !== undefined && {
        beforeStore: () =>
          (begun ??= begin(signingDomain, key, {
            contentDigest,
            deliveryId,
            startedAtMs: nowMs,
            expiresAtMs: nowMs + r.cfg.idempotencyRetentionS * 1000,
          })),
      }),
    ...(resumed !== undefined &&
      holdsDelivery !== undefined && {
        storedBefore: (mailbox: string) => holdsDelivery(mailbox, deliveryId),
      }),
  };
}

/** G48: a served domain, a subdomain of one, or one of the configured host names. */
function servesHost(r: Receiving, host: string): boolean {
  if (r.hostnames === undefined || r.hostnames.has(host)) return true;
  return r.cfg.domains.some((domain) => host === domain || host.endsWith(`.${domain}`));
}

/** A host name as compared (G48, G22): lower case, without a trailing dot or an IPv6 literal's brackets. */
export function normalizeHost(host: string): string {
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

/**
 * A body at hand (made in this process: app/protocol/bodies.ts), which WebCrypto's threads will hash: its
 * digests start now, beside the signature's verification, rather than after it. Nothing is read from
 * anyone for it and nothing more is held; `digest` takes them (when the body it reads is these very bytes)
 * and still gives its verdict after the signature's, in G10's order. With a provider that hashes on this
 * thread nothing would run side by side, and the body is hashed by `digest` as before.
 */
function startDigestsAtHand(r: Receiving, d: Delivery): void {
  if (hashesOnThisThread()) return;
  const bytes = bodyBytesOf(d.request);
  if (bytes === undefined || bytes.length === 0 || bytes.length > r.maxSize || bytes.length >= SPOOL_MIN_BYTES) return;
  const digests = new Map<DigestAlgorithm, Promise<Uint8Array>>();
  for (const algorithm of bodyDigestAlgorithms(d.claimedDigests)) {
    const digest = digestBytes(algorithm, bytes);
    // Settled even when the signature fails and nobody awaits it.
    digest.catch(() => {});
    digests.set(algorithm, digest);
  }
  d.digestsAtHand = { bytes, digests };
}

/** The recipients of a replayed request, for idempotency.replay: its envelope's `to`, when the body parsed. */
function replayedRecipients(parsed: ParsedBody | undefined): { recipients?: string[] } {
  return parsed?.ok === true ? { recipients: parsed.envelope.to.map((m) => m.address) } : {};
}

/**
 * The header-shape violations of a POST (G10 "headers present and well-formed"),
 * and Signature-Input, Signature, Content-Digest and Content-Type as parsed here, so the
 * signature, digest and envelope checks do not parse them again.
 */
export function headerViolations(view: HttpMessageView): {
  problems: Violation[];
  signatureFields?: ParsedSignatureFields;
  contentDigest?: ParsedContentDigest;
  contentType?: MultipartContentType;
} {
  const problems: Violation[] = [];
  let signatureFields: ParsedSignatureFields | undefined;
  let contentDigest: ParsedContentDigest | undefined;
  const keyViolation = idempotencyKeyViolation(fieldOf(view, "idempotency-key"));
  if (keyViolation !== undefined) problems.push(keyViolation);
  const input = fieldOf(view, "signature-input");
  const signature = fieldOf(view, "signature");
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
      const label = firstLabelViolation([...inputs.value.values()][0], signatures.value);
      if (label !== undefined) problems.push(label);
    }
  }
  const digest = fieldOf(view, "content-digest");
  if (digest === null) {
    problems.push({ path: "headers.Content-Digest", rule: "POST-5", message: "the Content-Digest header is missing" });
  } else {
    const parsed = parseContentDigest(digest);
    contentDigest = { header: digest, parsed };
    if (!parsed.ok)
      pushAll(
        problems,
        parsed.violations.map((v) => ({ ...v, path: "headers.Content-Digest" })),
      );
  }
  const contentType = parseContentType(fieldOf(view, "content-type"));
  if (!contentType.ok) pushAll(problems, contentType.violations);
  return {
    problems,
    ...(contentType.ok && { contentType: contentType.value }),
    ...(signatureFields !== undefined && { signatureFields }),
    ...(contentDigest !== undefined && { contentDigest }),
  };
}

/**
 * The value of the header field `name` in a view of a fetch Request (`fromRequest`), read by the signature code's
 * {@link headerValue}: a Request's values come trimmed and a repeated field already combined, so this is what
 * `Headers.get` answers; `null` when absent.
 */
function fieldOf(view: HttpMessageView, name: string): string | null {
  return headerValue(view, name) ?? null;
}
