/**
 * Sending: one exchange at the rate the probe was given, recorded as
 * `http.request` and `http.response` (or `http.failure`); an idempotent
 * request answered 429 or 503 sent once more after its Retry-After; a
 * receiver that stopped answering ends the run ({@link Silent}).
 */
import { TransportError } from "../ports.ts";
import { parseRetryAfter } from "../protocol/errors.ts";
import { errorMessage } from "../errorMessage.ts";
import { bodyFields, headersObject, sha256FieldInline } from "../trace/httpFields.ts";
import { decoder, mediaTypeOf, problemOf, type Answer, type Answered, type Sent } from "./answers.ts";
import { emit, type ProbeContext } from "./context.ts";

/** Answer bodies are kept up to this size; the rest is read and dropped. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Request bodies up to this size go into the trace whole. */
const MAX_RECORDED_BODY = 1024 * 1024;
/** Requests in a row without an answer after which the probe stops: a receiver that hangs costs at most this many timeouts. */
export const MAX_SILENT = 3;

/** Thrown to end the run when the receiver has stopped answering. */
export class Silent extends Error {}

/** A request ready to go, with what the trace says of its body. */
export interface Built {
  readonly request: Request;
  readonly bodySize: number;
  /** The bytes, when they are in hand (all but the oversized body). */
  readonly body?: Uint8Array;
  readonly bodyDigest?: string;
  /** For a streamed body: bytes handed to the connection so far, and a stop once answered. */
  readonly streamed?: { sent(): number; stop(): void };
}

/** One exchange, after the wait the rate asks; throws {@link Silent} once the receiver has stopped answering. */
async function exchangeOnce(
  ctx: ProbeContext,
  caseIds: readonly string[],
  built: Built,
): Promise<{ answer: Answer; id: string; seqs: number[] }> {
  const { ports, sending } = ctx;
  if (sending.silent >= MAX_SILENT)
    throw new Silent(
      `not sent: the receiver stopped answering (${MAX_SILENT} requests in a row got no answer), so the probe stopped`,
    );
  const wait = sending.lastRequestAtMs + sending.intervalMs - ports.clock.now();
  if (wait > 0) await ports.sleep(wait);
  sending.lastRequestAtMs = ports.clock.now();
  const id = `x${++sending.exchanges}`;
  const req = built.request;
  const seqs = [
    emit(ctx, "http.request", {
      exchangeId: id,
      method: req.method,
      url: req.url,
      headers: headersObject(req.headers),
      bodySize: built.bodySize,
      ...(built.bodyDigest !== undefined
        ? { bodyDigest: built.bodyDigest }
        : built.body !== undefined
          ? { bodyDigest: sha256FieldInline(built.body) }
          : {}),
      ...(built.body !== undefined && built.body.length <= MAX_RECORDED_BODY ? bodyFields(built.body) : {}),
      probeCases: caseIds,
    }),
  ];
  let answer: Answer;
  try {
    answer = await responseOf(ctx, caseIds, built, id, seqs);
    sending.silent = 0;
  } catch (error) {
    const kind = error instanceof TransportError ? error.kind : "error";
    const message = errorMessage(error);
    answer = { kind: "failure", failure: kind, message };
    sending.silent += 1;
    seqs.push(emit(ctx, "http.failure", { exchangeId: id, kind, message, probeCases: caseIds }));
  } finally {
    // A body cut short (answered before it was all sent) goes no further; its connection is not used again.
    built.streamed?.stop();
  }
  return { answer, id, seqs };
}

/** Fetches `built` and reads its answer, recorded as `http.response` (its seq pushed on `seqs`). */
async function responseOf(
  ctx: ProbeContext,
  caseIds: readonly string[],
  built: Built,
  id: string,
  seqs: number[],
): Promise<Answer> {
  const response = await ctx.ports.fetch(built.request);
  const body = await readCapped(response);
  const text = decoder.decode(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const problem = problemOf(json);
  const answer: Answered = {
    kind: "response",
    status: response.status,
    headers: response.headers,
    body,
    mediaType: mediaTypeOf(response.headers),
    json,
    ...(problem !== undefined && { problem }),
    ...(built.streamed !== undefined && { sentBytes: built.streamed.sent() }),
  };
  seqs.push(
    emit(ctx, "http.response", {
      exchangeId: id,
      status: response.status,
      ...(response.statusText !== "" && { statusText: response.statusText }),
      headers: headersObject(response.headers),
      bodySize: body.length,
      bodyDigest: sha256FieldInline(body),
      ...bodyFields(body),
      ...(built.streamed !== undefined && { requestBodySentBytes: built.streamed.sent() }),
      probeCases: caseIds,
    }),
  );
  ctx.responses.push({ exchangeId: id, evidence: seqs, answer });
  return answer;
}

/**
 * Sends what `build` makes; an idempotent request answered 429 or 503 is
 * built again (re-signed, POST-24) and sent once more after its
 * Retry-After, when that is at most `retryWaitMaxMs`.
 */
export async function send(
  ctx: ProbeContext,
  caseIds: readonly string[],
  build: () => Promise<Built>,
  idempotent: boolean,
): Promise<Sent> {
  const { ports } = ctx;
  const first = await exchangeOnce(ctx, caseIds, await build());
  const a = first.answer;
  if (!idempotent || a.kind !== "response" || (a.status !== 429 && a.status !== 503))
    return { answer: a, exchanges: [first.id], evidence: first.seqs };
  const waitS = parseRetryAfter(a.headers.get("retry-after"), ports.clock.now()) ?? 1;
  if (waitS * 1000 > ctx.sending.retryWaitMaxMs) return { answer: a, exchanges: [first.id], evidence: first.seqs };
  await ports.sleep(Math.max(waitS * 1000, 0));
  const second = await exchangeOnce(ctx, caseIds, await build());
  return { answer: second.answer, exchanges: [first.id, second.id], evidence: [...first.seqs, ...second.seqs] };
}

/** A GET or an empty POST with no headers of its own. */
export function plainRequest(method: "GET" | "POST", url: string): Built {
  return {
    request: new Request(url, {
      method,
      redirect: "manual",
      ...(method === "POST" && { headers: { "content-length": "0" } }),
    }),
    body: new Uint8Array(0),
    bodySize: 0,
  };
}

/** The answer's body, at most {@link MAX_ANSWER_BYTES} of it (the rest read and dropped). */
async function readCapped(response: Response): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size < MAX_ANSWER_BYTES) chunks.push(value.subarray(0, MAX_ANSWER_BYTES - size));
    size += value.length;
  }
  const out = new Uint8Array(Math.min(size, MAX_ANSWER_BYTES));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
