/**
 * A receiver with switchable misbehaviours, for the probe's own tests: the
 * real receiver (`createReceiver`) behind a wrapper that breaks one rule of
 * the spec at a time — results out of order, a replay with a new body, a
 * stale signature taken, a capabilities document with max_message_size 1000
 * … Each misbehaviour lists the probe cases that must catch it; every other
 * case must come out as against the receiver that follows the spec.
 *
 * Misbehaviours that accept a bad signature do it the way a careless receiver
 * would look from outside: the wrapper signs the request again, properly,
 * with the key the receiver trusts, before the real receiver sees it.
 *
 * Pure core code, no test framework (like app/receiver/testing.ts).
 */
import type { Clock } from "../ports.ts";
import { asBufferSource } from "../protocol/base64.ts";
import { createContentDigest, verifyContentDigest } from "../protocol/digest.ts";
import { PROFILE_COMPONENTS, PROFILE_LABEL } from "../protocol/profile.ts";
import { parseSignatureInput, signRequest, verifyRequestSignature } from "../protocol/signature.ts";
import type { ReceiverHandler } from "../receiver/receiver.ts";
import { createReceiverHarness, TEST_PROBLEM_BASE, type ReceiverHarness } from "../receiver/testing.ts";
import { createSeededRandom } from "../sender/testing.ts";
import type { ProbeOptions, ProbePorts } from "./probe.ts";

/** The misbehaviours, each with the probe cases that catch it. */
export const MISBEHAVIOURS = {
  "results-reversed": { breaks: ["results-order"], what: "a 200's results in the reverse order of `to`" },
  "results-first-missing": {
    breaks: ["results-count"],
    what: "a 200 of two or more recipients leaves the first one out",
  },
  "result-status-unknown": { breaks: ["result-fields"], what: "`delivered` instead of `accepted`" },
  "absent-deferred": {
    breaks: ["recipient-not-found"],
    what: "a recipient that does not exist is deferred (temporary_failure), not rejected",
  },
  "all-rejected-400": { breaks: ["all-rejected"], what: "a delivery with no recipient accepted is answered 400" },
  "replay-new-body": { breaks: ["replay"], what: "a replay is answered 200 with a new body" },
  "conflict-as-replay": { breaks: ["idempotency-conflict"], what: "the same key with another body is answered 200" },
  "unknown-field-400": { breaks: ["unknown-envelope-fields"], what: "an envelope with an unknown member is refused" },
  "missing-key-500": { breaks: ["missing-idempotency-key"], what: "no Idempotency-Key is answered 500" },
  "duplicate-to-accepted": { breaks: ["envelope-duplicate-to"], what: "a `to` naming one mailbox twice is taken" },
  "too-many-accepted": { breaks: ["too-many-recipients"], what: "a `to` longer than max_recipients is taken" },
  "stale-accepted": { breaks: ["signature-stale"], what: "200 for a signature created an hour ago" },
  "future-accepted": { breaks: ["signature-future"], what: "200 for a signature created an hour ahead" },
  "no-created-accepted": { breaks: ["signature-no-created"], what: "200 for a signature without created" },
  "untrusted-key-accepted": { breaks: ["signature-untrusted-key"], what: "200 for a signature by an unknown key" },
  "component-missing-accepted": {
    breaks: ["signature-component-missing"],
    what: "200 for a signature not covering @target-uri",
  },
  "digest-not-covered-accepted": {
    breaks: ["signature-digest-not-covered"],
    what: "200 for a signature not covering Content-Digest",
  },
  "body-changed-accepted": { breaks: ["body-changed"], what: "200 for a body that does not match its digest" },
  "too-large-accepted": { breaks: ["too-large"], what: "200 for a body over max_message_size, read to its end" },
  "capabilities-max-size-1000": {
    breaks: ["capabilities-max-message-size-bound"],
    what: "a capabilities document with max_message_size 1000",
  },
  "capabilities-max-age-60": { breaks: ["capabilities-max-age"], what: "Cache-Control: max-age=60" },
  "capabilities-no-cache-control": {
    breaks: ["capabilities-cache-control", "capabilities-max-age"],
    what: "no Cache-Control on the capabilities document (breaks GET-3 and GET-5)",
  },
  "capabilities-no-pin": { breaks: ["capabilities-pin-advertised"], what: "no discovery_pin_max_age" },
  "capabilities-versions-repeated": { breaks: ["capabilities-versions"], what: 'versions ["v1", "v1"]' },
  "capabilities-bad-abuse-contact": {
    breaks: ["capabilities-abuse-contact"],
    what: "abuse_contact with a header field (?subject=)",
  },
  "unsupported-version-without-versions": {
    breaks: ["unsupported-version-versions"],
    what: "an unsupported_version problem without versions",
  },
  "unsupported-version-post-401": {
    breaks: ["unsupported-version-post"],
    what: "a POST under an unserved version answered 401",
  },
  "problems-as-json": { breaks: ["problem-media-type"], what: "problems served as application/json" },
  "problem-other-base": {
    breaks: ["problem-type"],
    what: "invalid_signature problems under another {problem_base} than the rest",
  },
  "versions-in-every-problem": { breaks: ["problem-versions"], what: "a versions member in every problem" },
  "first-capabilities-503-without-retry-after": {
    breaks: ["retry-after"],
    what: "the first capabilities request answered 503 without Retry-After",
  },
} as const satisfies Record<string, { breaks: readonly string[]; what: string }>;

export type Misbehaviour = keyof typeof MISBEHAVIOURS;

/** What the wrapper needs besides the receiver: the key it trusts (to re-sign), the clock, the base of its problems. */
export interface MisbehaviourContext {
  readonly keyid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly clock: Pick<Clock, "now">;
  readonly problemBase: string;
  readonly maxMessageSize: number;
}

const decoder = new TextDecoder();

type Json = Record<string, unknown>;

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function problem(
  base: string,
  identifier: string,
  status: number,
  extra: Json = {},
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ type: `${base}/${identifier}`, status, ...extra }), {
    status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

/** The envelope of a delivery body (its first part's JSON), or undefined when it is not one. */
function envelopeOf(body: Uint8Array): Json | undefined {
  const text = decoder.decode(body);
  const m = /content-type:\s*application\/json\r\n\r\n(\{[^\r\n]*\})/i.exec(text);
  try {
    return m?.[1] === undefined ? undefined : (JSON.parse(m[1]) as Json);
  } catch {
    return undefined;
  }
}

/** The request signed again, properly, by the key the receiver trusts (and its digest made right). */
async function resigned(context: MisbehaviourContext, request: Request, body: Uint8Array): Promise<Request> {
  const headers = new Headers(request.headers);
  headers.delete("signature");
  headers.delete("signature-input");
  if (headers.has("content-digest")) headers.set("content-digest", await createContentDigest(body));
  const signed = await signRequest(
    { method: request.method, url: request.url, headers: [...headers] },
    {
      key: context.privateKey,
      keyid: context.keyid,
      label: PROFILE_LABEL,
      components: PROFILE_COMPONENTS,
      created: Math.floor(context.clock.now() / 1000),
    },
  );
  return new Request(request.url, { method: request.method, headers: signed.headers, body: asBufferSource(body) });
}

/** A 200 DeliveryResult rewritten by `change`; other answers as they are. */
async function results(response: Response, change: (results: Json[]) => Json[] | Response): Promise<Response> {
  if (response.status !== 200 || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const text = await response.text();
  const doc = JSON.parse(text) as { results?: unknown };
  if (!Array.isArray(doc.results)) return new Response(text, { status: 200, headers: response.headers });
  const changed = change(doc.results as Json[]);
  return changed instanceof Response ? changed : jsonResponse(200, { ...doc, results: changed });
}

/** A problem answer rewritten by `change`; other answers as they are. */
async function problems(response: Response, change: (doc: Json, headers: Headers) => Response): Promise<Response> {
  if (!(response.headers.get("content-type") ?? "").includes("problem+json")) return response;
  return change(JSON.parse(await response.text()) as Json, response.headers);
}

/** `handler` with `kind` switched on (`undefined`: as it is). */
export function misbehaving(
  handler: ReceiverHandler,
  kind: Misbehaviour | undefined,
  context: MisbehaviourContext,
): ReceiverHandler {
  if (kind === undefined) return handler;
  const seenKeys = new Map<string, number>();
  let capabilitiesAsked = 0;

  return async (request, ctx) => {
    const path = new URL(request.url).pathname;
    const isPost = request.method === "POST" && path === "/v1/messages";
    const big = Number(request.headers.get("content-length") ?? "0") > context.maxMessageSize;
    let body = new Uint8Array(0);
    if (isPost && !(big && kind !== "too-large-accepted")) body = new Uint8Array(await request.arrayBuffer());
    const pass = (r: Request = request): Promise<Response> =>
      handler(
        isPost && r === request && !big
          ? new Request(request.url, { method: "POST", headers: request.headers, body: asBufferSource(body) })
          : r,
        ctx,
      );
    const envelope = isPost ? envelopeOf(body) : undefined;
    const to = Array.isArray(envelope?.["to"]) ? (envelope["to"] as unknown[]) : [];
    const input = request.headers.get("signature-input");
    const parsedInput = input === null ? undefined : parseSignatureInput(input);
    const member = parsedInput?.ok === true ? [...parsedInput.value.values()][0] : undefined;
    const components = member?.components.map((c) => c.name) ?? [];
    const nowS = Math.floor(context.clock.now() / 1000);
    const created = member?.params.created;
    const acceptAll = (): Response =>
      jsonResponse(200, { results: to.map((r) => ({ recipient: String(r), status: "accepted" })) });

    switch (kind) {
      case "results-reversed":
        return results(await pass(), (list) => [...list].reverse());
      case "results-first-missing":
        return results(await pass(), (list) => (list.length >= 2 ? list.slice(1) : list));
      case "result-status-unknown":
        return results(await pass(), (list) =>
          list.map((r) => (r["status"] === "accepted" ? { ...r, status: "delivered" } : r)),
        );
      case "absent-deferred":
        return results(await pass(), (list) =>
          list.map((r) =>
            r["status"] === "rejected"
              ? { ...r, status: "deferred", problem: { type: `${context.problemBase}/temporary_failure` } }
              : r,
          ),
        );
      case "all-rejected-400":
        return results(await pass(), (list) =>
          list.some((r) => r["status"] === "accepted") ? list : problem(context.problemBase, "invalid_request", 400),
        );
      case "replay-new-body": {
        const key = request.headers.get("idempotency-key") ?? "";
        const seen = seenKeys.get(key) ?? 0;
        seenKeys.set(key, seen + 1);
        const answer = await pass();
        return seen === 0 ? answer : results(answer, (list) => list.map((r) => ({ ...r, replayed: true })));
      }
      case "conflict-as-replay": {
        const answer = await pass();
        return answer.status === 409 ? acceptAll() : answer;
      }
      case "unknown-field-400":
        return envelope !== undefined && Object.keys(envelope).some((k) => k !== "from" && k !== "to")
          ? problem(context.problemBase, "invalid_request", 400)
          : pass();
      case "missing-key-500":
        return isPost && !request.headers.has("idempotency-key")
          ? problem(context.problemBase, "temporary_failure", 500)
          : pass();
      case "duplicate-to-accepted":
        return to.length >= 2 && new Set(to).size < to.length ? acceptAll() : pass();
      case "too-many-accepted":
        return to.length > 100 ? acceptAll() : pass();
      case "stale-accepted":
        return created !== undefined && created < nowS - 300 ? pass(await resigned(context, request, body)) : pass();
      case "future-accepted":
        return created !== undefined && created > nowS + 300 ? pass(await resigned(context, request, body)) : pass();
      case "no-created-accepted":
        return member !== undefined && created === undefined ? pass(await resigned(context, request, body)) : pass();
      case "component-missing-accepted":
        return member !== undefined && !components.includes("@target-uri")
          ? pass(await resigned(context, request, body))
          : pass();
      case "digest-not-covered-accepted":
        return member !== undefined && request.headers.has("content-digest") && !components.includes("content-digest")
          ? pass(await resigned(context, request, body))
          : pass();
      case "body-changed-accepted": {
        const digest = request.headers.get("content-digest");
        if (!isPost || digest === null) return pass();
        const verdict = await verifyContentDigest(body, digest);
        return verdict.ok ? pass() : pass(await resigned(context, request, body));
      }
      case "untrusted-key-accepted": {
        if (!isPost || member === undefined || created === undefined) return pass();
        const verified = await verifyRequestSignature(
          { method: request.method, url: request.url, headers: [...request.headers] },
          { keyLookup: () => context.publicKey },
        );
        return verified.ok ? pass() : pass(await resigned(context, request, body));
      }
      case "too-large-accepted":
        if (!big) return pass();
        await request.arrayBuffer();
        return jsonResponse(200, { results: [] });
      case "capabilities-max-size-1000":
      case "capabilities-max-age-60":
      case "capabilities-no-cache-control":
      case "capabilities-no-pin":
      case "capabilities-versions-repeated":
      case "capabilities-bad-abuse-contact": {
        const answer = await pass();
        if (path !== "/v1/capabilities" || answer.status !== 200) return answer;
        const doc = JSON.parse(await answer.text()) as Json;
        const headers: Record<string, string> = { "cache-control": "max-age=3600" };
        if (kind === "capabilities-max-size-1000") doc["max_message_size"] = 1000;
        if (kind === "capabilities-max-age-60") headers["cache-control"] = "max-age=60";
        if (kind === "capabilities-no-cache-control") delete headers["cache-control"];
        if (kind === "capabilities-no-pin") delete doc["discovery_pin_max_age"];
        if (kind === "capabilities-versions-repeated") doc["versions"] = ["v1", "v1"];
        if (kind === "capabilities-bad-abuse-contact") doc["abuse_contact"] = "mailto:abuse@b.example?subject=spam";
        return jsonResponse(200, doc, headers);
      }
      case "unsupported-version-without-versions":
        return problems(await pass(), (doc, headers) => {
          const { versions: _versions, ...rest } = doc;
          return new Response(JSON.stringify(rest), { status: Number(doc["status"] ?? 404), headers });
        });
      case "unsupported-version-post-401":
        return request.method === "POST" && path !== "/v1/messages"
          ? problem(context.problemBase, "invalid_signature", 401)
          : pass();
      case "problems-as-json":
        return problems(await pass(), (doc, headers) => {
          const h = new Headers(headers);
          h.set("content-type", "application/json");
          return new Response(JSON.stringify(doc), { status: Number(doc["status"]), headers: h });
        });
      case "problem-other-base":
        return problems(
          await pass(),
          (doc, headers) =>
            new Response(
              JSON.stringify(
                String(doc["type"]).endsWith("/invalid_signature")
                  ? { ...doc, type: "https://other.example/problems/invalid_signature" }
                  : doc,
              ),
              { status: Number(doc["status"]), headers },
            ),
        );
      case "versions-in-every-problem":
        return problems(
          await pass(),
          (doc, headers) =>
            new Response(JSON.stringify({ versions: ["v1"], ...doc }), { status: Number(doc["status"]), headers }),
        );
      case "first-capabilities-503-without-retry-after":
        if (path === "/v1/capabilities" && capabilitiesAsked++ === 0)
          return problem(context.problemBase, "temporary_failure", 503);
        return pass();
    }
  };
}

/** A probe's options and ports against a receiver in process (b.example: bob, carol; nobody{n} absent). */
export interface InProcessProbe {
  readonly options: ProbeOptions;
  readonly ports: ProbePorts;
  readonly harness: ReceiverHarness;
}

/**
 * The probe set up against `createReceiverHarness`'s receiver (with `kind`
 * switched on), on its manual clock: TLS is stood in for (1.3 with a valid
 * certificate; 1.2 refused), requests go to the handler directly.
 */
export async function inProcessProbe(
  kind?: Misbehaviour,
  configure: (options: ProbeOptions) => ProbeOptions = (o) => o,
): Promise<InProcessProbe> {
  const harness = await createReceiverHarness();
  const { sender, clock } = harness;
  const handler = misbehaving(harness.receiver, kind, {
    keyid: sender.keyid,
    privateKey: sender.privateKey,
    publicKey: sender.publicKey,
    clock,
    problemBase: TEST_PROBLEM_BASE,
    maxMessageSize: 26214400,
  });
  const random = createSeededRandom(7);
  return {
    harness,
    options: configure({
      target: "https://b.example",
      mailscope: "0.0.0-test",
      identity: {
        from: "alice@a.example",
        keyid: sender.keyid,
        privateKey: sender.privateKey,
        keyRecord: sender.keyRecord,
      },
      mailboxes: ["bob@b.example", "carol@b.example"],
      absent: "nobody{n}@b.example",
      requestsPerSecond: 1000,
    }),
    ports: {
      clock,
      sleep: (ms) => clock.advance(ms),
      random,
      resolver: harness.resolver,
      fetch: (request) => handler(request),
      tls: (_origin, version) =>
        Promise.resolve(
          version === "TLSv1.3"
            ? { outcome: "established", protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", authorized: true }
            : { outcome: "refused", failure: "tls", message: "the server refused TLS 1.2 (protocol version alert)" },
        ),
    },
  };
}
