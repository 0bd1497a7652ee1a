/**
 * The requests a receiver must refuse: each bad request (a header, the body's
 * parts, the envelope or a Mailbox wrong one way, ERR-*, ENV-*, MBX-*), a
 * `to` longer than max_recipients, each signature attack (AUTH-5, POST-5) and
 * a body one byte over max_message_size (POST-7). Each names `--mailbox`, or
 * an address nobody can have, so that a receiver that takes it stores
 * nothing for a stranger.
 */
import { indexOfBytes, MESSAGE_PART_TYPE } from "../protocol/multipart.ts";
import { PROFILE_COMPONENTS, generateSigningKey } from "../protocol/profile.ts";
import { MIN_MAX_MESSAGE_SIZE } from "../protocol/resources.ts";
import { expectProblem, type Alternative } from "./answers.ts";
import { runs } from "./context.ts";
import { encoder, nowS, oversized, post, type DeliverySpec, type Delivering } from "./deliveries.ts";
import { send } from "./exchange.ts";
import { record, skip } from "./verdicts.ts";

/** How far `created` is moved for the stale and future signatures: far past any tolerance a receiver could choose (G3). */
const SKEW_S = 3600;
/** Where a recipient nobody can have lives (RFC 2606). */
const NOWHERE = "probe.invalid";
const BAD_REQUEST = 400;

/** A request that must be refused: its delivery, the problem expected (default 400 invalid_request), and what a gap also allows. */
interface BadRequest {
  readonly id: string;
  readonly spec: DeliverySpec;
  readonly status?: number;
  readonly identifier?: string;
  readonly alternatives?: readonly Alternative[];
}

/** The profile's components but `name`. */
const without = (name: string): string[] => PROFILE_COMPONENTS.filter((c) => c !== name);

/** A request without a piece the signature would cover may be refused for its signature first: the order of a receiver's checks is not in the spec (G10). */
const G10: readonly Alternative[] = [
  {
    status: 401,
    identifier: "invalid_signature",
    note: "refused as 401 invalid_signature: the order of a receiver's checks is not in the spec (G10)",
  },
];

/** The bad requests, in catalogue order. */
function badRequests(p: Delivering): readonly BadRequest[] {
  const { from, mailbox0 } = p;
  const domain = p.ctx.domain ?? NOWHERE;
  return [
    {
      id: "missing-idempotency-key",
      spec: { caseId: "missing-idempotency-key", key: null, signature: { components: without("idempotency-key") } },
      alternatives: G10,
    },
    { id: "idempotency-key-too-long", spec: { caseId: "idempotency-key-too-long", key: "k".repeat(129) } },
    { id: "idempotency-key-characters", spec: { caseId: "idempotency-key-characters", key: "probe key!" } },
    {
      id: "missing-content-digest",
      spec: { caseId: "missing-content-digest", digest: false, signature: { components: without("content-digest") } },
      alternatives: G10,
    },
    { id: "missing-signature", spec: { caseId: "missing-signature", signature: null }, alternatives: G10 },
    { id: "content-type", spec: { caseId: "content-type", contentType: "text/plain" } },
    {
      id: "part-order",
      spec: {
        caseId: "part-order",
        parts: (envelope, msg) => [
          { contentType: MESSAGE_PART_TYPE, bytes: msg },
          { contentType: "application/json", bytes: envelope },
        ],
      },
    },
    {
      id: "part-types",
      spec: {
        caseId: "part-types",
        parts: (envelope, msg) => [
          { contentType: "application/json", bytes: envelope },
          { contentType: "text/plain", bytes: msg },
        ],
      },
    },
    { id: "envelope-not-json", spec: { caseId: "envelope-not-json", envelope: `{"from": "${from}", "to": [` } },
    { id: "envelope-missing-to", spec: { caseId: "envelope-missing-to", envelope: { from } } },
    { id: "envelope-empty-to", spec: { caseId: "envelope-empty-to", envelope: { from, to: [] } } },
    { id: "envelope-duplicate-to", spec: { caseId: "envelope-duplicate-to", to: [mailbox0, mailbox0] } },
    { id: "envelope-two-domains", spec: { caseId: "envelope-two-domains", to: [mailbox0, `probe@${NOWHERE}`] } },
    {
      id: "envelope-from-domain",
      spec: { caseId: "envelope-from-domain", envelope: { from: `probe@${NOWHERE}`, to: [mailbox0] } },
      status: 401,
      identifier: "invalid_signature",
      alternatives: [
        { status: 403, identifier: "policy_rejected", note: "refused as 403 policy_rejected, a reading G19 allows" },
      ],
    },
    { id: "mailbox-syntax", spec: { caseId: "mailbox-syntax", to: [`probe-not-a-mailbox.${domain}`] } },
    {
      id: "mailbox-local-part-length",
      spec: { caseId: "mailbox-local-part-length", to: [`${"p".repeat(65)}@${domain}`] },
    },
    { id: "mailbox-minimal-quoting", spec: { caseId: "mailbox-minimal-quoting", to: [quoted(mailbox0)] } },
  ];
}

/** Each bad request that runs, then too-many-recipients (`max_recipients + 1` addresses made of `--absent`). */
export async function badRequestCases(p: Delivering, maxRecipients: number): Promise<void> {
  const { ctx } = p;
  for (const b of badRequests(p)) {
    if (!runs(ctx, b.id)) continue;
    const sent = await post(p, b.spec);
    record(
      ctx,
      b.id,
      expectProblem(sent.answer, b.status ?? BAD_REQUEST, b.identifier ?? "invalid_request", b.alternatives),
      [sent],
    );
  }
  const absent = ctx.absent;
  if (runs(ctx, "too-many-recipients") && absent !== undefined) {
    const to = Array.from({ length: maxRecipients + 1 }, (_, i) => absent.replace("{n}", String(i + 1)));
    const sent = await post(p, { caseId: "too-many-recipients", to });
    record(ctx, "too-many-recipients", expectProblem(sent.answer, BAD_REQUEST, "invalid_request"), [sent], []);
  }
}

/** The signature attacks, each a delivery whose signature is wrong one way; made when it is sent. */
function attacks(p: Delivering): readonly { id: string; spec: () => Promise<DeliverySpec> }[] {
  const { ctx } = p;
  return [
    {
      id: "signature-untrusted-key",
      spec: async () => ({
        caseId: "signature-untrusted-key",
        signature: { privateKey: (await generateSigningKey()).privateKey },
      }),
    },
    {
      id: "signature-stale",
      spec: () => Promise.resolve({ caseId: "signature-stale", signature: { createdS: nowS(ctx) - SKEW_S } }),
    },
    {
      id: "signature-future",
      spec: () => Promise.resolve({ caseId: "signature-future", signature: { createdS: nowS(ctx) + SKEW_S } }),
    },
    {
      id: "signature-no-created",
      spec: () => Promise.resolve({ caseId: "signature-no-created", signature: { createdS: null } }),
    },
    {
      id: "signature-component-missing",
      spec: () =>
        Promise.resolve({ caseId: "signature-component-missing", signature: { components: without("@target-uri") } }),
    },
    {
      id: "signature-digest-not-covered",
      spec: () =>
        Promise.resolve({
          caseId: "signature-digest-not-covered",
          signature: { components: without("content-digest") },
        }),
    },
    {
      id: "body-changed",
      spec: () =>
        Promise.resolve({
          caseId: "body-changed",
          afterSigning: (body: Uint8Array) => {
            // One letter of the message text changed: the digest no longer matches (POST-5).
            const copy = body.slice();
            const at = indexOfBytes(copy, encoder.encode("It may be deleted."), 0);
            if (at >= 0) copy[at] = 0x69; // "I" → "i"
            return copy;
          },
        }),
    },
  ];
}

/** Each signature attack that runs: answered 401 invalid_signature. */
export async function signatureCases(p: Delivering): Promise<void> {
  for (const attack of attacks(p)) {
    if (!runs(p.ctx, attack.id)) continue;
    const sent = await post(p, await attack.spec());
    record(p.ctx, attack.id, expectProblem(sent.answer, 401, "invalid_signature"), [sent]);
  }
}

/** too-large: a body one byte over max_message_size (the spec's floor at least) is answered 413. */
export async function sizeCase(p: Delivering, maxMessageSize: number | undefined): Promise<void> {
  const { ctx } = p;
  if (!runs(ctx, "too-large")) return;
  if (maxMessageSize === undefined) {
    skip(ctx, ["too-large"], "no usable max_message_size in the capabilities document");
    return;
  }
  // One byte over the limit; over the spec's floor at least, so that a document advertising less than the
  // floor (capabilities-max-message-size-bound's business) is not also blamed here.
  const total = Math.max(maxMessageSize, MIN_MAX_MESSAGE_SIZE) + 1;
  const sent = await send(ctx, ["too-large"], () => oversized(p, total), false);
  const a = sent.answer;
  const judged = expectProblem(a, 413, "message_too_large");
  const stopped =
    a.kind === "response" && a.sentBytes !== undefined
      ? a.sentBytes < total
        ? `; answered after ${a.sentBytes} of ${total} bytes, the rest not sent`
        : `; answered after the whole body`
      : "";
  record(ctx, "too-large", { ...judged, actual: `${judged.actual}${stopped}` }, [sent]);
}

/** `"bob"@b.example` for `bob@b.example`: the same mailbox, quoted where a dot-string does (MBX-7). */
function quoted(mailbox: string): string {
  const at = mailbox.lastIndexOf("@");
  return `"${mailbox.slice(0, at)}"${mailbox.slice(at)}`;
}
