/**
 * One POST of one delivery, from the envelope to a typed outcome: build the
 * two-part body (POST-7, G9), digest it (POST-5), sign it with a fresh
 * `created` and the delivery's Idempotency-Key (POST-24, G1–G4), send it to
 * `{origin}/v{n}/messages`, and read the answer by the errors table:
 *
 * - 200: one verdict per recipient, matched by recipient (G25): `accepted`,
 *   `rejected` or `deferred`; an unknown status is `deferred` (RCP-3), an entry
 *   without `problem` or a missing entry is `deferred` with
 *   `temporary_failure` (G15, G25); a body that does not parse is a
 *   request-level temporary failure (G15).
 * - Anything else: a request-level reading (`interpretRequestLevel`), with
 *   Retry-After read as a lower bound (RETRY-7, G21) and G26 applied to a
 *   `policy_rejected` that carries one.
 * - No answer: `temporary_failure`, fallback-eligible (ERR-21).
 * - G13 `pre-check`: a body over `max_message_size` is not sent at all.
 *
 * The body is the same bytes on every retry of a delivery (same boundary, same
 * envelope), so a replay matches the receiver's stored Content-Digest (G11).
 */
import type { Clock, Fetch, TraceSink } from "../ports.ts";
import { traceEvent } from "../ports.ts";
import type { Emit, EmitData } from "../trace/events.ts";
import { requestWithBody } from "../protocol/bodies.ts";
import { createContentDigest } from "../protocol/digest.ts";
import {
  interpretRecipientResult,
  interpretRequestLevel,
  parseRetryAfter,
  transportFailure,
} from "../protocol/errors.ts";
import type { RecipientReading, RequestLevelReading } from "../protocol/errors.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import type { Mailbox } from "../protocol/mailbox.ts";
import { buildMultipartBody } from "../protocol/multipart.ts";
import { deliverySignature } from "../protocol/profile.ts";
import { matchResults, parseDeliveryResult, parseJson } from "../protocol/resources.ts";
import type { Envelope, Problem } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import { versionPath } from "../protocol/versions.ts";
import type { Endpoint } from "./discovery.ts";
import { exchange, problemInBody, problemType } from "./http.ts";
import type { ProblemSummary } from "./http.ts";
import type { PlantedBug } from "./plantedBugs.ts";
import type { SenderReadings } from "./readings.ts";

/** One delivery: a set of recipients sent under one Idempotency-Key (POST-23). */
export interface OpenDelivery {
  readonly deliveryId: string;
  readonly idempotencyKey: string;
  readonly recipients: readonly string[];
  /** Chosen once, so every retry sends the same bytes (G11). */
  readonly boundary: string;
}

/** The sender's verdict on one recipient of a 200 answer. */
export interface RecipientVerdict {
  readonly recipient: string;
  readonly outcome: "accepted" | "rejected" | "deferred";
  readonly problem?: ProblemSummary;
  /** Lower bound for the retry, seconds (RETRY-7); only with `deferred`. */
  readonly retryAfterS?: number;
  readonly rule: string;
  readonly gaps: readonly string[];
}

/** How one POST ended. */
export type AttemptOutcome =
  | {
      readonly kind: "results";
      readonly deliveryId: string;
      readonly status: number;
      readonly verdicts: readonly RecipientVerdict[];
      /** Tolerated breaches of the answer (G15, G25, RCP-3 …), for the trace. */
      readonly notes: readonly Violation[];
      /** When this POST's answer was read: a `retry_after` counts from it (RETRY-7), not from the attempt's end. */
      readonly answeredAtMs?: number;
    }
  | {
      readonly kind: "request-level";
      readonly deliveryId: string;
      readonly reading: RequestLevelReading;
      /** The HTTP status; absent when there was no answer or nothing was sent. */
      readonly status?: number;
      readonly problem: ProblemSummary;
      /** Retry-After in seconds (RETRY-7), when the answer carried a usable one. */
      readonly retryAfterS?: number;
      /** A Retry-After the answer carried but that does not count (a permanent answer, G26; unparsable, G21), as sent. */
      readonly retryAfterIgnored?: string;
      /** Why there was no answer (connection, TLS, timeout), when there was none. */
      readonly failure?: string;
      /** False when G13's pre-check kept the body from being sent. */
      readonly sent: boolean;
      /** The problem document as sent (for `unsupported_version`'s `versions`). */
      readonly versions?: readonly string[];
      /** When this POST's answer (or its failure) was read: a Retry-After counts from it (RETRY-7). */
      readonly answeredAtMs?: number;
    };

export interface AttemptDeps {
  readonly fetch: Fetch;
  readonly clock: Pick<Clock, "now">;
  /** Where a signature's `created` is read (default `clock`): the wall clock when `clock` runs the schedule faster. */
  readonly signingClock?: Pick<Clock, "now">;
  readonly trace: TraceSink;
  readonly privateKey: CryptoKey;
  /** `<selector>._svckey.<signing-domain>` (G4). */
  readonly keyid: string;
  readonly problemBase: string;
  readonly readings: Pick<SenderReadings, "overMaxMessageSize" | "policyRejectedRetryAfter">;
  /** The sending domain, for the trace. */
  readonly senderDomain: string;
  /** A bug planted by a test harness (plantedBugs.ts); never set by a scenario. */
  readonly plantedBug?: PlantedBug;
}

export interface AttemptInput {
  readonly delivery: OpenDelivery;
  /** Envelope sender; null for the null reverse-path (ENV-3). */
  readonly from: string | null;
  readonly message: Uint8Array;
  readonly endpoint: Endpoint;
  /** The number of this attempt of the message to this domain (1 for the first), for the trace. */
  readonly attempt: number;
}

function summaryOf(
  reading: RequestLevelReading,
  problemBase: string,
  status: number | undefined,
  problem: Problem | undefined,
  detail?: string,
): ProblemSummary {
  const type = problem?.type ?? problemType(problemBase, reading.identifier ?? "temporary_failure");
  const text = problem?.detail ?? detail;
  return {
    type,
    ...(reading.identifier !== undefined && { identifier: reading.identifier }),
    ...(status !== undefined && { status }),
    ...(text !== undefined && { detail: text }),
  };
}

function recipientProblem(
  problem: Problem | undefined,
  reading: RecipientReading,
  problemBase: string,
): ProblemSummary | undefined {
  if (reading.outcome === "accepted") return undefined;
  if (problem === undefined)
    return {
      type: problemType(problemBase, reading.problem ?? "temporary_failure"),
      identifier: reading.problem ?? "temporary_failure",
    };
  return {
    type: problem.type,
    ...(reading.problem !== undefined && { identifier: reading.problem }),
    ...(problem.detail !== undefined && { detail: problem.detail }),
  };
}

/** The envelope of a delivery, with the recipients as mailboxes (they were checked at submission). */
function envelopeOf(from: string | null, recipients: readonly string[]): Envelope {
  const mailbox = (address: string): Mailbox => {
    const parsed = parseMailbox(address);
    if (parsed.ok) return parsed.value;
    const at = address.lastIndexOf("@");
    return { localPart: address.slice(0, at), domain: address.slice(at + 1).toLowerCase(), address };
  };
  return { from: from === null ? null : mailbox(from), to: recipients.map(mailbox) };
}

/** Reads a 200 answer into per-recipient verdicts, or a request-level reading when the body does not parse (G15). */
function readResults(
  body: Uint8Array,
  envelope: Envelope,
  problemBase: string,
): { verdicts: RecipientVerdict[]; notes: readonly Violation[] } | { unreadable: readonly Violation[] } {
  const json = parseJson(body, "$", "DLR-1");
  if (!json.ok) return { unreadable: json.violations };
  const parsed = parseDeliveryResult(json.value, envelope);
  if (!parsed.ok) return { unreadable: parsed.violations };
  const { matched } = matchResults(envelope, parsed.value);
  const verdicts = matched.map(({ recipient, result }): RecipientVerdict => {
    if (result === undefined) {
      // G25: no entry answers this recipient; read like an entry without a problem (G15).
      return {
        recipient: recipient.address,
        outcome: "deferred",
        problem: { type: problemType(problemBase, "temporary_failure"), identifier: "temporary_failure" },
        rule: "DLR-2",
        gaps: ["G25", "G15"],
      };
    }
    const reading = interpretRecipientResult(result, problemBase);
    const problem = recipientProblem(result.problem, reading, problemBase);
    return {
      recipient: recipient.address,
      outcome: reading.outcome,
      ...(problem !== undefined && { problem }),
      ...(reading.retryAfterS !== undefined && { retryAfterS: reading.retryAfterS }),
      rule: reading.rule,
      gaps: reading.gaps,
    };
  });
  return { verdicts, notes: parsed.value.notes };
}

/**
 * G26 and G21 on a request-level reading: a `policy_rejected` with Retry-After
 * stays permanent (the Retry-After noted) or, under `retry`, becomes a
 * temporary answer that never falls back; a 429 or 503 without a usable
 * Retry-After is noted (the schedule alone decides).
 */
function withRetryAfterReadings(
  reading: RequestLevelReading,
  status: number,
  retryAfterS: number | undefined,
  g26: SenderReadings["policyRejectedRetryAfter"],
): RequestLevelReading {
  if (reading.identifier === "policy_rejected" && retryAfterS !== undefined) {
    if (g26 === "retry")
      return {
        ...reading,
        class: "temporary",
        retry: true,
        fallbackEligible: false,
        smtpFallback: "never",
        rule: "ERR-27",
        gaps: [...reading.gaps, "G26"],
      };
    return { ...reading, gaps: [...reading.gaps, "G26"] };
  }
  if ((status === 429 || status === 503) && retryAfterS === undefined)
    return { ...reading, gaps: [...reading.gaps, "G21"] };
  return reading;
}

/**
 * Makes one POST of `input.delivery` and reads its answer. Emits
 * attempt.started, attempt.ended and one recipient.result per entry. Never
 * throws for anything the network or the receiver does.
 */
export async function attemptDelivery(input: AttemptInput, deps: AttemptDeps): Promise<AttemptOutcome> {
  const { delivery, endpoint } = input;
  const emit: Emit<"attempt.started" | "attempt.ended" | "recipient.result", "deliveryId"> = (name, data) =>
    deps.trace.emit(
      traceEvent(
        name,
        deps.clock.now(),
        { deliveryId: delivery.deliveryId, ...data } as EmitData<typeof name>,
        deps.senderDomain,
      ),
    );
  const ended = (outcome: AttemptOutcome): AttemptOutcome => {
    if (outcome.kind === "results") {
      for (const verdict of outcome.verdicts) {
        emit("recipient.result", {
          recipient: verdict.recipient,
          status: verdict.outcome,
          ...(verdict.problem !== undefined && { problem: verdict.problem.type }),
          ...(verdict.retryAfterS !== undefined && { retryAfterS: verdict.retryAfterS }),
          rule: verdict.rule,
          ...(verdict.gaps.length > 0 && { gaps: verdict.gaps }),
        });
      }
      emit("attempt.ended", {
        attempt: input.attempt,
        status: outcome.status,
        class: "results",
        fallbackEligible: false,
        rule: "POST-11",
        ...(outcome.notes.length > 0 && { notes: outcome.notes.map((n) => `${n.path}: ${n.message} [${n.rule}]`) }),
      });
    } else {
      emit("attempt.ended", {
        attempt: input.attempt,
        ...(outcome.status !== undefined && { status: outcome.status }),
        problem: outcome.problem.type,
        ...(outcome.failure !== undefined && { failure: outcome.failure }),
        ...(outcome.retryAfterS !== undefined && { retryAfterS: outcome.retryAfterS }),
        ...(outcome.retryAfterIgnored !== undefined && { retryAfterIgnored: outcome.retryAfterIgnored }),
        class: outcome.reading.class,
        fallbackEligible: outcome.reading.fallbackEligible,
        rule: outcome.reading.rule,
        ...(outcome.reading.gaps.length > 0 && { gaps: outcome.reading.gaps }),
        ...(!outcome.sent && { sent: false }),
      });
    }
    // RETRY-7: Retry-After is read against this answer's time (an HTTP-date becomes seconds from now); an
    // attempt of several POSTs ends later, so the lower bound must count from here, not from its end.
    return { ...outcome, answeredAtMs: deps.clock.now() };
  };

  const envelope = envelopeOf(input.from, delivery.recipients);
  const { body, contentType } = buildMultipartBody(
    { from: input.from, to: delivery.recipients },
    input.message,
    delivery.boundary,
  );
  const url = `${endpoint.origin}${versionPath(endpoint.version, "messages")}`;

  if (deps.readings.overMaxMessageSize === "pre-check" && body.length > endpoint.capabilities.max_message_size) {
    // G13, G24: the encoded body would pass the advertised limit, so it is not sent; permanent, as a 413 would be.
    const reading: RequestLevelReading = {
      identifier: "message_too_large",
      typeAsSent: undefined,
      known: false,
      class: "permanent",
      retry: false,
      fallbackEligible: false,
      smtpFallback: "never",
      rule: "ERR-12",
      gaps: ["G13", "G24"],
    };
    const detail = `the request body would be ${body.length} bytes; ${endpoint.origin} takes at most ${endpoint.capabilities.max_message_size}`;
    emit("attempt.started", {
      attempt: input.attempt,
      url,
      idempotencyKey: delivery.idempotencyKey,
      recipients: delivery.recipients,
      bodySize: body.length,
      maxMessageSize: endpoint.capabilities.max_message_size,
      sent: false,
    });
    return ended({
      kind: "request-level",
      deliveryId: delivery.deliveryId,
      reading,
      problem: summaryOf(reading, deps.problemBase, undefined, undefined, detail),
      sent: false,
    });
  }

  const digest = await createContentDigest(body);
  const fields: [string, string][] = [
    ["content-type", contentType],
    ["content-digest", digest],
    ["idempotency-key", delivery.idempotencyKey],
  ];
  // One Request, signed in place: its own URL (as fetch serializes it) and fields are what is signed.
  // G30: a redirect would carry a signed request to an origin discovery did not name.
  // The digest is of `body` alone (the one member, as the trace writes a body's SHA-256): the network's trace takes
  // it instead of hashing the same bytes a third time; the receiver hashes them itself to check it.
  const request = requestWithBody(url, { method: "POST", headers: fields, redirect: "manual" }, body, digest);
  // POST-24: a fresh `created` on every attempt, the same key.
  const signed = await deliverySignature(
    { method: "POST", url: request.url, headers: fields },
    {
      privateKey: deps.privateKey,
      keyid: deps.keyid,
      createdS: Math.floor((deps.signingClock ?? deps.clock).now() / 1000),
    },
  );
  request.headers.append("signature-input", signed.signatureInput);
  request.headers.append("signature", signed.signature);
  emit("attempt.started", {
    attempt: input.attempt,
    url,
    idempotencyKey: delivery.idempotencyKey,
    recipients: delivery.recipients,
    bodySize: body.length,
  });

  const answer = await exchange(deps.fetch, request);
  if (answer.kind === "no-answer") {
    const reading = transportFailure(answer.failure);
    return ended({
      kind: "request-level",
      deliveryId: delivery.deliveryId,
      reading,
      problem: summaryOf(reading, deps.problemBase, undefined, undefined, answer.detail),
      failure: answer.failure,
      sent: true,
    });
  }

  const { response } = answer;
  if (response.status === 200) {
    const read = readResults(answer.body, envelope, deps.problemBase);
    if (!("unreadable" in read))
      return ended({
        kind: "results",
        deliveryId: delivery.deliveryId,
        status: 200,
        verdicts: read.verdicts,
        notes: read.notes,
      });
    const reading = interpretRequestLevel(200, undefined, deps.problemBase);
    const detail = read.unreadable.map((v) => `${v.path}: ${v.message} [${v.rule}]`).join("; ");
    return ended({
      kind: "request-level",
      deliveryId: delivery.deliveryId,
      reading,
      status: 200,
      problem: summaryOf(reading, deps.problemBase, 200, undefined, detail),
      sent: true,
    });
  }

  const problem = problemInBody(answer.body, deps.problemBase);
  const retryAfterHeader = response.headers.get("retry-after");
  const retryAfterS = parseRetryAfter(retryAfterHeader, deps.clock.now());
  const read = withRetryAfterReadings(
    interpretRequestLevel(response.status, problem, deps.problemBase),
    response.status,
    retryAfterS,
    deps.readings.policyRejectedRetryAfter,
  );
  const reading =
    deps.plantedBug === "rate-limited-fallback-eligible" && response.status === 429
      ? { ...read, fallbackEligible: true, smtpFallback: "after the fallback window" as const }
      : read;
  return ended({
    kind: "request-level",
    deliveryId: delivery.deliveryId,
    reading,
    status: response.status,
    problem: summaryOf(reading, deps.problemBase, response.status, problem),
    ...(retryAfterS !== undefined && reading.retry && { retryAfterS }),
    ...(retryAfterHeader !== null &&
      (retryAfterS === undefined || !reading.retry) && { retryAfterIgnored: retryAfterHeader }),
    ...(problem?.versions !== undefined && { versions: problem.versions }),
    sent: true,
  });
}
