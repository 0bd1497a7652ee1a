/**
 * The probe's deliveries: a short message naming its case, the multipart
 * body (made once: a retry or a replay sends the same bytes), the delivery
 * signed as the profile says and then bent one way per case, and the
 * oversized body streamed one byte past max_message_size. Built with the
 * sender's own pieces; mail goes only to `--mailbox` and `--absent`.
 */
import { asBufferSource, bytesToBase64, bytesToHex } from "../protocol/base64.ts";
import { createContentDigest, createDigester } from "../protocol/digest.ts";
import { buildMultipartBody, chooseBoundary, multipartBytes } from "../protocol/multipart.ts";
import { PROFILE_COMPONENTS, PROFILE_LABEL } from "../protocol/profile.ts";
import { signRequest } from "../protocol/signature.ts";
import type { Sent } from "./answers.ts";
import type { ProbeContext } from "./context.ts";
import { send, type Built } from "./exchange.ts";
import type { ProbeIdentity } from "./probe.ts";

export const encoder = new TextEncoder();

/** The probe's context while it delivers: the origin, who it signs as, and where it POSTs. */
export interface Delivering {
  readonly ctx: ProbeContext;
  readonly origin: string;
  readonly signer: ProbeIdentity;
  /** The envelope `from`. */
  readonly from: string;
  /** `{origin}/v1/messages`. */
  readonly url: string;
  /** The first `--mailbox`. */
  readonly mailbox0: string;
}

/** Delivering from `ctx` to `origin`, signing as `signer`. */
export function deliveringOf(ctx: ProbeContext, origin: string, signer: ProbeIdentity): Delivering {
  return {
    ctx,
    origin,
    signer,
    from: signer.from,
    url: `${origin}/v1/messages`,
    mailbox0: ctx.options.mailboxes[0] ?? "",
  };
}

/** A delivery as a case bends it. */
export interface DeliverySpec {
  readonly caseId: string;
  readonly to?: readonly string[];
  /** The envelope: an object (JSON) or the JSON text itself; default `{ from, to }`. */
  readonly envelope?: unknown;
  /** Another shape of body: the parts, given the envelope's and the message's bytes. */
  readonly parts?: (envelope: Uint8Array, message: Uint8Array) => { contentType: string; bytes: Uint8Array }[];
  readonly contentType?: string;
  /** The Idempotency-Key; null: none. Default a fresh one. */
  readonly key?: string | null;
  readonly digest?: boolean;
  /** The signature: null for none; else the components (default the profile's), `created` (null: left out), the key. */
  readonly signature?: null | {
    readonly components?: readonly string[];
    readonly createdS?: number | null;
    readonly privateKey?: CryptoKey;
  };
  /** Changes the body after it was signed. */
  readonly afterSigning?: (body: Uint8Array) => Uint8Array;
  readonly message?: Uint8Array;
}

/** A body and its Content-Type. */
export interface BodyShape {
  readonly body: Uint8Array;
  readonly contentType: string;
}

/** A short text message for `to`, naming the case, from the probe. */
export function message(p: Delivering, caseId: string, to: readonly string[], note = ""): Uint8Array {
  const { ports, fromDomain } = p.ctx;
  const id = `probe.${bytesToHex(ports.random.bytes(8))}@${fromDomain ?? "probe"}`;
  return encoder.encode(
    [
      `From: ${p.from}`,
      `To: ${to.join(", ")}`,
      `Subject: mailscope probe: ${caseId}`,
      `Date: ${new Date(ports.clock.now()).toUTCString()}`,
      `Message-ID: <${id}>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      `This message was sent by mailscope probe while testing the receiver at ${p.origin}`,
      `(case ${caseId}${note}). It may be deleted.`,
      "",
    ].join("\r\n"),
  );
}

/** A fresh Idempotency-Key naming the case. */
export function freshKey(ctx: ProbeContext, caseId: string): string {
  return `probe-${caseId}-${bytesToHex(ctx.ports.random.bytes(8))}`;
}

/** The current time in whole seconds, as `created` says it. */
export function nowS(ctx: ProbeContext): number {
  return Math.floor(ctx.ports.clock.now() / 1000);
}

/** The body of a delivery, made once: a retry or a replay sends the same bytes (POST-12, POST-24). */
export function bodyOf(p: Delivering, spec: DeliverySpec): BodyShape {
  const to = spec.to ?? [p.mailbox0];
  const msg = spec.message ?? message(p, spec.caseId, to);
  const envelope = spec.envelope ?? { from: p.from, to };
  const boundary = chooseBoundary(p.ctx.ports.random.bytes(24), msg);
  if (spec.parts === undefined) return buildMultipartBody(envelope, msg, boundary);
  const envelopeBytes = encoder.encode(typeof envelope === "string" ? envelope : JSON.stringify(envelope));
  return multipartBytes(spec.parts(envelopeBytes, msg), boundary);
}

/** The delivery of `spec` with `shape`'s body, signed now (a retry is signed afresh, POST-24). */
export async function delivery(
  p: Delivering,
  spec: DeliverySpec,
  key: string | null,
  shape: BodyShape,
): Promise<Built> {
  const { body, contentType } = shape;
  const headers = new Headers({ "content-type": spec.contentType ?? contentType });
  if (spec.digest !== false) headers.set("content-digest", await createContentDigest(body));
  if (key !== null) headers.set("idempotency-key", key);
  const sig = spec.signature === undefined ? {} : spec.signature;
  let signedHeaders = headers;
  if (sig !== null) {
    const signed = await signRequest(
      { method: "POST", url: p.url, headers: [...headers] },
      {
        key: sig.privateKey ?? p.signer.privateKey,
        keyid: p.signer.keyid,
        label: PROFILE_LABEL,
        components: sig.components ?? PROFILE_COMPONENTS,
        created: sig.createdS === null ? undefined : (sig.createdS ?? nowS(p.ctx)),
      },
    );
    signedHeaders = signed.headers;
  }
  const sentBody = spec.afterSigning?.(body) ?? body;
  return {
    request: new Request(p.url, {
      method: "POST",
      headers: signedHeaders,
      body: asBufferSource(sentBody),
      redirect: "manual",
    }),
    body: sentBody,
    bodySize: sentBody.length,
  };
}

/** Sends a delivery; a fresh key per case unless `spec.key` says, built again for a retry (re-signed). */
export function post(
  p: Delivering,
  spec: DeliverySpec,
  caseIds: readonly string[] = [spec.caseId],
  shape: BodyShape = bodyOf(p, spec),
): Promise<Sent> {
  const key = spec.key === undefined ? freshKey(p.ctx, spec.caseId) : spec.key;
  const idempotent = key !== null && /^[A-Za-z0-9._~-]{1,128}$/.test(key);
  return send(p.ctx, caseIds, () => delivery(p, spec, key, shape), idempotent);
}

/** A delivery to --mailbox whose body is `total` bytes, streamed with its Content-Length. */
export async function oversized(p: Delivering, total: number): Promise<Built> {
  const to = [p.mailbox0];
  const head = message(p, "too-large", to, `, a body of ${total} bytes`);
  const boundary = chooseBoundary(p.ctx.ports.random.bytes(24), head);
  const { body: frame, contentType } = buildMultipartBody({ from: p.from, to }, head, boundary);
  // The frame is the body with a short message; the message is padded, inside its part, to make `total`.
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const prefix = frame.subarray(0, frame.length - tail.length);
  const padding = total - frame.length;
  const line = encoder.encode(`${"x".repeat(76)}\r\n`);
  const pieces = function* (): Generator<Uint8Array> {
    yield prefix;
    const chunk = new Uint8Array(64 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = line[i % line.length] ?? 0x78;
    for (let left = padding; left > 0; left -= chunk.length)
      yield left >= chunk.length ? chunk : chunk.subarray(0, left);
    yield tail;
  };
  const digester = createDigester("sha-256");
  for (const piece of pieces()) digester.update(piece);
  const digestBytes = await digester.finish();
  const headers = new Headers({
    "content-type": contentType,
    "content-digest": `sha-256=:${bytesToBase64(digestBytes)}:`,
    "idempotency-key": freshKey(p.ctx, "too-large"),
    "content-length": String(total),
  });
  const signed = await signRequest(
    { method: "POST", url: p.url, headers: [...headers] },
    {
      key: p.signer.privateKey,
      keyid: p.signer.keyid,
      label: PROFILE_LABEL,
      components: PROFILE_COMPONENTS,
      created: nowS(p.ctx),
    },
  );
  const { stream, streamed } = streamedBody(pieces());
  return {
    request: new Request(p.url, {
      method: "POST",
      headers: signed.headers,
      body: stream,
      redirect: "manual",
      duplex: "half",
    } as RequestInit),
    bodySize: total,
    bodyDigest: `sha-256=:${bytesToBase64(digestBytes)}:`,
    streamed,
  };
}

/** A body streamed from `source`, counting the bytes handed on, with a stop once answered. */
function streamedBody(source: Iterator<Uint8Array>): {
  stream: ReadableStream<Uint8Array>;
  streamed: NonNullable<Built["streamed"]>;
} {
  let sent = 0;
  let done = false;
  let pipe: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      pipe = controller;
    },
    pull(controller) {
      const next = source.next();
      if (next.done === true) {
        done = true;
        controller.close();
      } else {
        sent += next.value.length;
        controller.enqueue(next.value.slice());
      }
    },
  });
  // Once answered, the rest is not sent: the body errors, which cuts the request and closes its connection,
  // even when the receiver has stopped reading and the body waits on its backpressure.
  const stop = (): void => {
    if (done) return;
    done = true;
    pipe?.error(new Error("the probe stopped sending: the receiver has answered"));
  };
  return { stream, streamed: { sent: () => sent, stop } };
}
