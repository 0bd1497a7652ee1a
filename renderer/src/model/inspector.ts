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
import { txtRecordKeys } from "../../../app/receiver/lintKeys.ts";
import { createSignatureBase, parseSignatureInput } from "../../../app/protocol/signature.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { exchangeEvents, runIndexOf } from "./runIndex.ts";
import { offsetText } from "./timeline.ts";

type Data = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

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
  // Only the exchange's events (the run's index finds them).
  for (const e of exchangeEvents(runIndexOf(events), exchangeId)) {
    const d = e.data as Data;
    if (d["exchangeId"] !== exchangeId) continue;
    seqs.push(e.seq);
    if (e.name === "http.request") request = e;
    else if (e.name === "http.response") response = e;
    else if (e.name === "http.failure") failure = e;
  }
  if (!request) return undefined;
  const d = request.data as Data;
  const method = str(d["method"]) ?? "";
  const url = str(d["url"]) ?? "";
  const headers = headerList(d["headers"]);
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
  const body = str(d["body"]);
  const envelope = body ? envelopeOf(body) : undefined;
  const rd = response?.data as Data | undefined;
  const responseBody = str(rd?.["body"]);
  const contentType = headerList(rd?.["headers"]).find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
  const json = responseBody ? parseJson(responseBody) : undefined;
  const problem =
    json && (contentType.includes("problem+json") || typeof json["type"] === "string")
      ? JSON.stringify(json, null, 2)
      : undefined;
  const list = json?.["results"] ?? json?.["recipients"];
  const results = Array.isArray(list)
    ? (list as Data[]).map((r) => ({
        recipient: str(r["recipient"]) ?? str(r["address"]) ?? "?",
        status: str(r["status"]) ?? "?",
        detail: [
          str(r["type"])?.replace(/^.*\//, ""),
          str(r["detail"]),
          num(r["retry_after"]) !== undefined ? `retry_after ${num(r["retry_after"])} s` : undefined,
        ]
          .filter((x) => x !== undefined)
          .join(" — "),
      }))
    : [];
  const fd = failure?.data as Data | undefined;
  return {
    exchangeId,
    at: offsetText(request.timeMs, startMs),
    method,
    url,
    requestLine,
    headers,
    body,
    bodySize: num(d["bodySize"]),
    signatureInput,
    signatureInputError,
    signatureBase,
    contentDigest: get("content-digest"),
    envelope,
    response: response
      ? {
          status: num(rd?.["status"]),
          headers: headerList(rd?.["headers"]),
          body: responseBody,
          fault: str(rd?.["fault"]),
        }
      : undefined,
    failure: failure
      ? { kind: str(fd?.["kind"]) ?? "failure", message: str(fd?.["message"]) ?? "", fault: str(fd?.["fault"]) }
      : undefined,
    problem,
    results,
    seqs,
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
 * records the trace's DNS answered (TXT at the keyid) and the receiver's
 * clock at the request's arrival. Undefined when the body was not kept.
 */
export async function exchangeChecks(
  events: readonly RecordedEvent[],
  exchangeId: string,
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
    const name = str(d["name"]);
    const records = (d["records"] as unknown[]).filter((r): r is string => typeof r === "string");
    if (!name || records.length === 0) continue;
    if (e.timeMs <= arrived) before.set(name, records);
    else if (!after.has(name)) after.set(name, records);
  }
  const txt = (keyid: string) => before.get(keyid) ?? after.get(keyid) ?? [];
  return lintChecks(linted, {
    nowS: Math.floor(arrived / 1000),
    keys: txtRecordKeys(txt, "the trace's DNS answers"),
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
