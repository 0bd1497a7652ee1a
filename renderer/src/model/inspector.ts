/**
 * The exchange inspector's data: one HTTP exchange of a trace (`x3`) — the
 * request line and headers, the Signature-Input parsed, the Content-Digest,
 * the envelope, the response with its problem document or per-recipient
 * results, and the receiver's checks in order (`lintChecks`, with the key
 * records the trace's DNS answers hold, at the time the request arrived) —
 * and the copies: curl, raw HTTP (what `mailscope lint-request` reads) and
 * the problem JSON.
 */
import { lintChecks, lintedRequestOfTraceEvent, type LintLine } from "../../../app/receiver/lintChecks.ts";
import { combineKeys, txtRecordKeys } from "../../../app/receiver/lintKeys.ts";
import { createSignatureBase, parseSignatureInput } from "../../../app/protocol/signature.ts";
import type { ReceiverOfRun } from "../../../app/sim/sessionProtocol.ts";
import { dataOf } from "../../../app/trace/eventReader.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { numberOf, textOf } from "../../../app/trace/values.ts";
import { formatOffset } from "./time.ts";

type Data = Readonly<Record<string, unknown>>;

export interface SignatureInputView {
  readonly label: string;
  readonly components: readonly string[];
  readonly created: number | undefined;
  readonly keyid: string | undefined;
  readonly alg: string | undefined;
}

export interface ExchangeView {
  readonly exchangeId: string;
  readonly at: string;
  readonly method: string;
  readonly url: string;
  readonly requestLine: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | undefined;
  readonly bodySize: number | undefined;
  readonly signatureInput: readonly SignatureInputView[];
  readonly signatureInputError: string | undefined;
  /** The signature base (RFC 9421 §2.5) of the first signature, rebuilt from the recorded request. */
  readonly signatureBase: string | undefined;
  readonly contentDigest: string | undefined;
  /** The envelope (the body's JSON part), as JSON text. */
  readonly envelope: string | undefined;
  readonly response:
    | {
        readonly status: number | undefined;
        readonly headers: readonly (readonly [string, string])[];
        readonly body: string | undefined;
        readonly fault: string | undefined;
      }
    | undefined;
  readonly failure: { readonly kind: string; readonly message: string; readonly fault: string | undefined } | undefined;
  /** The problem document, pretty-printed, when the response is one. */
  readonly problem: string | undefined;
  /** Per-recipient results from a results document. */
  readonly results: readonly { readonly recipient: string; readonly status: string; readonly detail: string }[];
  /** Seqs of the exchange's events, for the log. */
  readonly seqs: readonly number[];
  /** The message the POST carried (its message/rfc822 part), when the run kept bodies. */
  readonly message: MessageView | undefined;
  /**
   * The DNS answers in force when the request was made: the service record of its host, the signing key
   * (answered before the request, or to the receiver while it handled it; never one recorded later).
   */
  readonly dns: readonly DnsInForce[];
  /** The capabilities the sender held for the request's origin when it was made. */
  readonly capabilities: CapabilitiesInForce | undefined;
}

export interface MessageView {
  readonly headers: readonly (readonly [string, string])[];
  /** The text of the body, its first lines. */
  readonly preview: string;
  /** Lines left out of the preview. */
  readonly moreLines: number;
  /** The whole message as sent. */
  readonly raw: string;
}

export interface DnsInForce {
  readonly name: string;
  readonly type: string;
  /** `answer`, `nxdomain`, `nodata`, `servfail`, `timeout`. */
  readonly kind: string;
  /** The records as text: `1 mx.b.example:443`, a TXT string. */
  readonly records: readonly string[];
  readonly ttlS: number | undefined;
  /** When it was answered. */
  readonly at: string;
  readonly seq: number;
}

export interface CapabilitiesInForce {
  readonly origin: string;
  /** `fetched` at `at`, or `cached` (age at `at`). */
  readonly how: "fetched" | "cached";
  readonly at: string;
  readonly maxAgeS: number | undefined;
  readonly ageS: number | undefined;
  /** The document, pretty-printed (a cached one is the last fetched). */
  readonly document: string | undefined;
  readonly seq: number;
}

const headerList = (v: unknown): [string, string][] =>
  v && typeof v === "object" && !Array.isArray(v)
    ? Object.entries(v as Data).filter((e): e is [string, string] => typeof e[1] === "string")
    : [];

/** The exchange `exchangeId` of a trace, or undefined when it has no request. */
export function exchangeView(
  events: readonly RecordedEvent[],
  exchangeId: string,
  startMs: number,
): ExchangeView | undefined {
  let request: RecordedEvent | undefined;
  let response: RecordedEvent | undefined;
  let failure: RecordedEvent | undefined;
  const seqs: number[] = [];
  // What was in force before the request: the last DNS answer of each name, the last capabilities of each
  // origin; and the answers the receiver got while it handled this request (the signing key it looked up
  // when the request arrived), between its receiver.request and receiver.response. Nothing recorded later:
  // a request the receiver never saw (a fault answered it) had no key looked up for it.
  const answers = new Map<string, RecordedEvent>();
  const whileHandled = new Map<string, RecordedEvent>();
  let handledBy: string | undefined;
  const fetched = new Map<string, RecordedEvent>();
  const held = new Map<string, RecordedEvent>();
  // A probe (`mailscope probe`) keeps no capabilities cache: what it held is the document its last
  // GET /v1/capabilities before the request was answered with (200), read off that exchange.
  const probe = events[0]?.name === "probe.started";
  const capabilityRequests = new Map<string, string>();
  // The DNS answers and capabilities in force are read off the run up to the request; the exchange's own
  // events are found on the way (one pass, made when an exchange is selected).
  for (const e of events) {
    const d = e.data as Data;
    if (probe && !request) {
      const id = textOf(d["exchangeId"]) ?? "";
      const url = textOf(d["url"]);
      if (e.name === "http.request" && d["method"] === "GET" && url !== undefined && URL.canParse(url)) {
        const u = new URL(url);
        if (u.pathname === "/v1/capabilities") capabilityRequests.set(id, u.origin);
      } else if (e.name === "http.response" && d["status"] === 200 && capabilityRequests.has(id)) {
        const origin = capabilityRequests.get(id) ?? "";
        const document = parseJson(textOf(d["body"]) ?? "");
        const asFetched: RecordedEvent = {
          ...e,
          name: "capabilities.fetched",
          data: { origin, ...(document !== undefined && { capabilities: document }) },
        };
        held.set(origin, asFetched);
        fetched.set(origin, asFetched);
      }
    }
    if (e.name === "dns.answer") {
      const key = `${textOf(d["name"])}|${textOf(d["type"])}`;
      if (!request) answers.set(key, e);
      else if (handledBy !== undefined && e.domain === handledBy && !whileHandled.has(key)) whileHandled.set(key, e);
    } else if (!request && (e.name === "capabilities.fetched" || e.name === "capabilities.cached")) {
      const origin = textOf(d["origin"]) ?? "";
      held.set(origin, e);
      if (e.name === "capabilities.fetched") fetched.set(origin, e);
    }
    if (d["exchangeId"] !== exchangeId) continue;
    seqs.push(e.seq);
    if (e.name === "http.request") request = e;
    else if (e.name === "receiver.request") handledBy = e.domain ?? "";
    else if (e.name === "receiver.response") handledBy = undefined;
    else if (e.name === "http.response") response = e;
    else if (e.name === "http.failure") failure = e;
  }
  if (!request) return undefined;
  const d = dataOf(request, "http.request") ?? {};
  const method = d.method ?? "";
  const url = d.url ?? "";
  const headers = headerList(d.headers);
  const get = (name: string) => headers.find(([k]) => k.toLowerCase() === name)?.[1];
  const target = URL.canParse(url) ? new URL(url) : undefined;
  const requestLine = `${method} ${target ? `${target.pathname}${target.search}` : url} HTTP/1.1`;
  const sigInput = get("signature-input");
  let signatureInput: SignatureInputView[] = [];
  let signatureInputError: string | undefined;
  let signatureBase: string | undefined;
  if (sigInput !== undefined) {
    const parsed = parseSignatureInput(sigInput);
    const member = parsed.ok ? [...parsed.value.values()][0] : undefined;
    if (member) {
      const base = createSignatureBase({ method, url, headers }, member.components, member.params);
      signatureBase = base.ok
        ? base.value.base
        : `cannot be rebuilt: ${base.violations.map((v) => v.message).join("; ")}`;
    }
    if (parsed.ok)
      signatureInput = [...parsed.value.values()].map((m) => ({
        label: m.label,
        components: m.components.map((c) => c.name),
        created: m.params.created,
        keyid: m.params.keyid,
        alg: m.params.alg,
      }));
    else signatureInputError = parsed.violations.map((v) => v.message).join("; ");
  }
  const body = d.body;
  const envelope = body ? envelopeOf(body) : undefined;
  const rd = response === undefined ? undefined : dataOf(response, "http.response");
  const responseBody = rd?.body;
  const contentType = headerList(rd?.headers).find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
  const json = responseBody ? parseJson(responseBody) : undefined;
  const problem =
    json && (contentType.includes("problem+json") || typeof json["type"] === "string")
      ? JSON.stringify(json, null, 2)
      : undefined;
  const list = json?.["results"] ?? json?.["recipients"];
  const results = Array.isArray(list)
    ? (list as Data[]).map((r) => ({
        recipient: textOf(r["recipient"]) ?? textOf(r["address"]) ?? "?",
        status: textOf(r["status"]) ?? "?",
        detail: [
          textOf(r["type"])?.replace(/^.*\//, ""),
          textOf(r["detail"]),
          numberOf(r["retry_after"]) !== undefined ? `retry_after ${numberOf(r["retry_after"])} s` : undefined,
        ]
          .filter((x) => x !== undefined)
          .join(" — "),
      }))
    : [];
  const fd = failure === undefined ? undefined : dataOf(failure, "http.failure");
  // The DNS in force: the service record that named the request's host, and the signing key's TXT.
  const host = target?.hostname.toLowerCase();
  const dns: DnsInForce[] = [];
  for (const e of answers.values()) {
    const ad = e.data as Data;
    const records = Array.isArray(ad["records"]) ? (ad["records"] as unknown[]) : [];
    const names = records.some(
      (r) => typeof r === "object" && r !== null && textOf((r as Data)["target"])?.toLowerCase() === host,
    );
    if (ad["type"] === "SVCB" && (names || textOf(ad["name"]) === `_svc.${host?.replace(/^[^.]+\./, "")}`))
      dns.push(dnsInForce(e, startMs));
  }
  const keyid = sigInput !== undefined ? signatureInput[0]?.keyid : undefined;
  const key = keyid ? (whileHandled.get(`${keyid}|TXT`) ?? answers.get(`${keyid}|TXT`)) : undefined;
  if (key) dns.push(dnsInForce(key, startMs));
  const origin = target?.origin;
  const caps = origin ? held.get(origin) : undefined;
  const capsDoc = origin ? (fetched.get(origin)?.data as Data | undefined)?.["capabilities"] : undefined;
  const cd = caps?.data as Data | undefined;
  return {
    exchangeId,
    at: formatOffset(request.timeMs, startMs),
    method,
    url,
    requestLine,
    headers,
    body,
    bodySize: d.bodySize,
    signatureInput,
    signatureInputError,
    signatureBase,
    contentDigest: get("content-digest"),
    envelope,
    response: response
      ? {
          status: rd?.status,
          headers: headerList(rd?.headers),
          body: responseBody,
          fault: rd?.fault,
        }
      : undefined,
    failure: failure ? { kind: fd?.kind ?? "failure", message: fd?.message ?? "", fault: fd?.fault } : undefined,
    problem,
    results,
    seqs,
    message: body ? messageOf(body) : undefined,
    dns,
    capabilities:
      caps && origin
        ? {
            origin,
            how: caps.name === "capabilities.cached" ? "cached" : "fetched",
            at: formatOffset(caps.timeMs, startMs),
            maxAgeS: numberOf(cd?.["maxAgeS"]),
            ageS: numberOf(cd?.["ageS"]),
            document: capsDoc !== undefined ? JSON.stringify(capsDoc, null, 2) : undefined,
            seq: caps.seq,
          }
        : undefined,
  };
}

function dnsInForce(e: RecordedEvent, startMs: number): DnsInForce {
  const d = dataOf(e, "dns.answer") ?? {};
  const records = d.records ?? [];
  return {
    name: d.name ?? "?",
    type: d.type ?? "?",
    kind: d.kind ?? "answer",
    records: records.map((r) => {
      if (typeof r === "string") return r;
      const o = (r ?? {}) as Data;
      const target = textOf(o["target"]);
      return target !== undefined
        ? `${numberOf(o["priority"]) ?? ""} ${target}${numberOf(o["port"]) !== undefined ? `:${numberOf(o["port"])}` : ""}`.trim()
        : JSON.stringify(r);
    }),
    ttlS: d.ttlS,
    at: formatOffset(e.timeMs, startMs),
    seq: e.seq,
  };
}

const PREVIEW_LINES = 20;

/** The message/rfc822 part of a POST's multipart body: its headers (unfolded) and its text's first lines. */
export function messageOf(body: string): MessageView | undefined {
  const m = /content-type:\s*message\/rfc822[^\r\n]*\r?\n\r?\n/i.exec(body);
  if (!m) return undefined;
  const rest = body.slice(m.index + m[0].length);
  // The part ends at the next boundary line.
  const end = rest.search(/\r?\n--[^\r\n]+(--)?\r?\n?$|\r?\n--mailscope-[^\r\n]*/);
  const raw = end < 0 ? rest : rest.slice(0, end);
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const text = split < 0 ? "" : raw.slice(split).replace(/^\r?\n\r?\n/, "");
  const headers: [string, string][] = [];
  for (const line of head.split(/\r?\n/)) {
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(line) && last) last[1] += ` ${line.trim()}`;
    else {
      const colon = line.indexOf(":");
      if (colon > 0) headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
    }
  }
  const lines = text.replace(/\r\n/g, "\n").replace(/\n+$/, "").split("\n");
  return {
    headers,
    preview: lines.slice(0, PREVIEW_LINES).join("\n"),
    moreLines: Math.max(0, lines.length - PREVIEW_LINES),
    raw: raw.replace(/\r\n/g, "\n"),
  };
}

function parseJson(text: string): Data | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Data) : undefined;
  } catch {
    return undefined;
  }
}

/** The envelope: the first JSON part of a multipart body. */
function envelopeOf(body: string): string | undefined {
  const m = /content-type:\s*application\/json[^\r\n]*\r?\n\r?\n(\{[^\r\n]*\})/i.exec(body);
  const json = m?.[1] ? parseJson(m[1]) : undefined;
  return json ? JSON.stringify(json, null, 2) : undefined;
}

/**
 * The receiver's checks of the recorded request, in order, with the key
 * records the trace's DNS answered (TXT at the keyid), the receiver's clock
 * at the request's arrival, and the configuration of the run's receiver at
 * the request's origin (`receivers`, from the session's summary: its served
 * domains, limits and readings), without which the recipient-domain check is
 * not run. Undefined when the body was not kept.
 */
export async function exchangeChecks(
  events: readonly RecordedEvent[],
  exchangeId: string,
  receivers: readonly ReceiverOfRun[] = [],
  /** Key records the trace holds besides its DNS answers (a probe's own, in `probe.started`), by keyid. */
  keyRecords: Readonly<Record<string, string>> = {},
): Promise<readonly LintLine[] | undefined> {
  const request = events.find((e) => e.name === "http.request" && (e.data as Data)["exchangeId"] === exchangeId);
  if (!request) return undefined;
  const linted = lintedRequestOfTraceEvent(request);
  if (!linted) return undefined;
  const arrived =
    events.find((e) => e.name === "receiver.request" && (e.data as Data)["exchangeId"] === exchangeId)?.timeMs ??
    request.timeMs;
  // The key records the trace's DNS answered: the latest before the request arrived, else the first
  // after (a request a fault kept from the receiver was never checked, so its key may be looked up later).
  const before = new Map<string, string[]>();
  const after = new Map<string, string[]>();
  for (const e of events) {
    const d = e.data as Data;
    if (e.name !== "dns.answer" || d["type"] !== "TXT" || !Array.isArray(d["records"])) continue;
    const name = textOf(d["name"]);
    const records = (d["records"] as unknown[]).filter((r): r is string => typeof r === "string");
    if (!name || records.length === 0) continue;
    if (e.timeMs <= arrived) before.set(name, records);
    else if (!after.has(name)) after.set(name, records);
  }
  // A key answered only later is still used to run the check, and the check says so.
  const origin = URL.canParse(linted.url) ? new URL(linted.url).origin : undefined;
  const config = receivers.find((r) => r.origin === origin)?.config;
  return lintChecks(linted, {
    nowS: Math.floor(arrived / 1000),
    keys: combineKeys([
      txtRecordKeys((keyid) => before.get(keyid) ?? [], "the trace's DNS answers"),
      txtRecordKeys(
        (keyid) => after.get(keyid) ?? [],
        "a DNS answer the trace recorded after this request (none was looked up for it)",
      ),
      txtRecordKeys((keyid) => (keyRecords[keyid] !== undefined ? [keyRecords[keyid]] : []), "the probe's own record"),
    ]),
    ...(config !== undefined && { config }),
    hints: {
      noConfig:
        receivers.length === 0
          ? " (the run's receivers are not known: the trace carries no scenario text)"
          : ` (no receiver of this run listens at ${origin ?? linted.url})`,
    },
  });
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The request as a curl command line (the body from a file next to it when there is one). */
export function curlOf(x: ExchangeView): string {
  const parts = [`curl -X ${x.method} ${shellQuote(x.url)}`];
  for (const [k, v] of x.headers) parts.push(`-H ${shellQuote(`${k}: ${v}`)}`);
  if (x.body !== undefined && x.body !== "") parts.push(`--data-binary ${shellQuote(x.body)}`);
  return parts.join(" \\\n  ");
}

/** The request as raw HTTP/1.1 (CRLF), as `mailscope lint-request` reads it. */
export function rawHttpOf(x: ExchangeView): string {
  const host = URL.canParse(x.url) ? new URL(x.url).host : "";
  const lines = [x.requestLine, `host: ${host}`, ...x.headers.map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join("\r\n")}\r\n\r\n${x.body ?? ""}`;
}
