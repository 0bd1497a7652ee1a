/**
 * The HTTP exchanges of a trace as a HAR 1.2 log, to open in a browser's
 * network panel (Chrome and Firefox dev tools import HAR).
 *
 * One entry per `http.request`, paired by `exchangeId` with its
 * `http.response` or `http.failure`. Times are virtual: `startedDateTime` is
 * the request's virtual time, `timings.wait` the virtual time until the
 * answer (latency and whatever the receiver waited for), `timings.receive`
 * the time a slow body took. An exchange without an answer has status 0 and
 * the failure in `_error`, as Chrome writes failed requests; custom fields
 * start with `_`, as HAR allows.
 *
 * Message bodies go in only with `full` (the app's "with message bodies", the
 * CLI's `--full`), as in the trace export; private keys never. What the file
 * leaves out is said in the log's comment, and at each body left out (its
 * `comment`: HAR 1.2 has one on postData and content).
 */
import { CHUNK_CHARS, leftOut, redactEvent } from "./exportJson.ts";
import { eventsOf } from "./store.ts";
import type { RecordedEvent, Trace } from "./schema.ts";
import { numberOf, textOf } from "./values.ts";

/** A HAR name/value pair. */
export interface HarNameValue {
  readonly name: string;
  readonly value: string;
}

/** One HAR entry (HAR 1.2 §entries), with the fields Mailscope fills. */
export interface HarEntry {
  readonly startedDateTime: string;
  readonly time: number;
  readonly request: {
    readonly method: string;
    readonly url: string;
    readonly httpVersion: string;
    readonly cookies: readonly HarNameValue[];
    readonly headers: readonly HarNameValue[];
    readonly queryString: readonly HarNameValue[];
    readonly postData?: {
      readonly mimeType: string;
      readonly text: string;
      readonly params?: readonly HarNameValue[];
      readonly comment?: string;
      /** `base64` when `text` is the body in base64 (not UTF-8): HAR 1.2 has `encoding` on content only. */
      readonly _encoding?: string;
    };
    readonly headersSize: number;
    readonly bodySize: number;
  };
  readonly response: {
    readonly status: number;
    readonly statusText: string;
    readonly httpVersion: string;
    readonly cookies: readonly HarNameValue[];
    readonly headers: readonly HarNameValue[];
    readonly content: {
      readonly size: number;
      readonly mimeType: string;
      readonly text?: string;
      readonly encoding?: string;
      readonly comment?: string;
    };
    readonly redirectURL: string;
    readonly headersSize: number;
    readonly bodySize: number;
    readonly _error?: string;
  };
  readonly cache: Record<string, never>;
  readonly timings: {
    readonly blocked: number;
    readonly dns: number;
    readonly connect: number;
    readonly ssl: number;
    readonly send: number;
    readonly wait: number;
    readonly receive: number;
  };
  readonly _exchangeId: string;
  readonly _domain?: string;
  readonly _fault?: string;
  readonly _bodyDigest?: { readonly request?: string; readonly response?: string };
}

/** A HAR 1.2 document. */
export interface Har {
  readonly log: {
    readonly version: "1.2";
    readonly creator: { readonly name: string; readonly version: string };
    readonly comment?: string;
    readonly entries: readonly HarEntry[];
  };
}

/**
 * The protocol version of an exchange: the event's own `httpVersion` when it
 * has one, else HTTP/1.1, which is what the simulator's network, `serve` and
 * `send` speak.
 */
const HTTP_VERSION = "HTTP/1.1";

function httpVersionOf(event: RecordedEvent | undefined): string {
  return textOf(event?.data?.["httpVersion"]) ?? HTTP_VERSION;
}

/** Options of {@link exportHar}. */
export interface ExportHarOptions {
  /** Keep the message bodies the run recorded. Default false. Private keys are left out regardless. */
  readonly full?: boolean;
}

/** What a body left out of an export says in its place. */
const BODY_LEFT_OUT = "body left out: exported without message bodies";

/** The HAR log of the trace's HTTP exchanges, in request order. */
export function exportHar(trace: Trace, options: ExportHarOptions = {}): Har {
  const full = options.full === true;
  return harLog(trace, full, [...harEntries(trace, full)]);
}

/**
 * `JSON.stringify(exportHar(trace, options), null, 2)` and a newline, the file `--har` writes, in pieces: one
 * entry at a time, never the whole log (decision 0225). Joined, the pieces are that text, byte for byte.
 */
export function* exportHarChunks(trace: Trace, options: ExportHarOptions = {}): Generator<string> {
  const full = options.full === true;
  const marker = "\u0000entries\u0000";
  const text = JSON.stringify(harLog(trace, full, marker as unknown as HarEntry[]), null, 2);
  const quoted = JSON.stringify(marker);
  const at = text.indexOf(quoted);
  const inner = " ".repeat(6); // an entry sits three levels in: log, entries, the entry
  let piece = `${text.slice(0, at)}[`;
  let count = 0;
  for (const entry of harEntries(trace, full)) {
    piece += `${count++ > 0 ? "," : ""}\n${inner}${JSON.stringify(entry, null, 2).replaceAll("\n", `\n${inner}`)}`;
    if (piece.length >= CHUNK_CHARS) {
      yield piece;
      piece = "";
    }
  }
  yield `${piece}${count > 0 ? `\n${" ".repeat(4)}]` : "]"}${text.slice(at + quoted.length)}\n`;
}

function harLog(trace: Trace, full: boolean, entries: readonly HarEntry[]): Har {
  return {
    log: {
      version: "1.2",
      creator: { name: "Mailscope", version: trace.mailscope },
      comment: `Scenario ${trace.scenario.name}, seed ${trace.seed}; times are virtual. ${leftOut("har", trace, full)}`,
      entries,
    },
  };
}

/**
 * The log's entries in request order, one at a time. The events are read from a recorder's store when it
 * holds them (decision 0225), each HTTP event redacted as it is read (redactTrace's way): of the answers, only
 * each exchange's place in the trace is kept, and the answer read again by it for its request's entry.
 */
function* harEntries(trace: Trace, full: boolean): Generator<HarEntry> {
  const events = eventsOf(trace);
  const answers = new Map<string, number>();
  let index = 0;
  for (const recorded of events) {
    const at = index++;
    if (recorded.name !== "http.response" && recorded.name !== "http.failure") continue;
    const id = textOf(redactEvent(recorded, !full).data?.["exchangeId"]);
    if (id !== undefined && !answers.has(id)) answers.set(id, at);
  }
  for (const recorded of events) {
    if (recorded.name !== "http.request") continue;
    const event = redactEvent(recorded, !full);
    const id = textOf(event.data?.["exchangeId"]);
    if (id === undefined) continue;
    const at = answers.get(id);
    const answer = at === undefined ? undefined : events.at(at);
    yield entry(event, id, answer === undefined ? undefined : redactEvent(answer, !full));
  }
}

function entry(request: RecordedEvent, id: string, answer: RecordedEvent | undefined): HarEntry {
  const data = request.data ?? {};
  const url = String(data["url"] ?? "");
  const method = String(data["method"] ?? "GET").toUpperCase();
  const requestHeaders = headerList(data["headers"]);
  const requestBody = bodyOf(data);
  const requestSize = numberOf(request.data?.["bodySize"]) ?? 0;
  const waitMs = answer === undefined ? 0 : Math.max(0, answer.timeMs - request.timeMs);
  const receiveMs = answer?.name === "http.response" ? (numberOf(answer.data?.["bodyDurationMs"]) ?? 0) : 0;
  const answerData = answer?.data ?? {};
  const failed = answer === undefined || answer.name === "http.failure";
  const responseHeaders = failed ? [] : headerList(answerData["headers"]);
  const responseBody = failed ? undefined : bodyOf(answerData);
  const responseSize = failed ? 0 : (numberOf(answer?.data?.["bodySize"]) ?? 0);
  const contentType = (list: readonly HarNameValue[]): string =>
    list.find((h) => h.name.toLowerCase() === "content-type")?.value ?? "";
  const fault = answer === undefined ? undefined : textOf(answer.data?.["fault"]);
  const requestDigest = textOf(request.data?.["bodyDigest"]);
  const responseDigest = failed || answer === undefined ? undefined : textOf(answer.data?.["bodyDigest"]);
  return {
    startedDateTime: new Date(request.timeMs).toISOString(),
    time: waitMs + receiveMs,
    request: {
      method,
      url,
      httpVersion: httpVersionOf(request),
      cookies: [],
      headers: requestHeaders,
      queryString: queryOf(url),
      // A GET or HEAD has no body to post; an empty body recorded with --full is none either.
      ...(method !== "GET" && method !== "HEAD" && (requestSize > 0 || (requestBody?.text ?? "") !== "")
        ? {
            postData: {
              mimeType: contentType(requestHeaders),
              text: requestBody?.text ?? "",
              ...(data["bodyRedacted"] === true && { comment: BODY_LEFT_OUT }),
              ...(requestBody?.encoding !== undefined ? { _encoding: requestBody.encoding } : {}),
            },
          }
        : {}),
      headersSize: -1,
      bodySize: requestSize,
    },
    response: {
      status: failed ? 0 : (numberOf(answer?.data?.["status"]) ?? 0),
      statusText: failed ? "" : (textOf(answer?.data?.["statusText"]) ?? ""),
      httpVersion: failed ? "" : httpVersionOf(answer),
      cookies: [],
      headers: responseHeaders,
      content: {
        size: responseSize,
        mimeType: contentType(responseHeaders),
        ...(responseBody !== undefined ? { text: responseBody.text } : {}),
        ...(responseBody?.encoding !== undefined ? { encoding: responseBody.encoding } : {}),
        ...(!failed && answerData["bodyRedacted"] === true && { comment: BODY_LEFT_OUT }),
      },
      redirectURL: "",
      headersSize: -1,
      bodySize: failed ? -1 : responseSize,
      ...(failed
        ? { _error: answer === undefined ? "no answer recorded" : (textOf(answer.data?.["kind"]) ?? "failure") }
        : {}),
    },
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: waitMs, receive: receiveMs },
    _exchangeId: id,
    ...(request.domain !== undefined ? { _domain: request.domain } : {}),
    ...(fault !== undefined ? { _fault: fault } : {}),
    ...(requestDigest !== undefined || responseDigest !== undefined
      ? {
          _bodyDigest: {
            ...(requestDigest !== undefined ? { request: requestDigest } : {}),
            ...(responseDigest !== undefined ? { response: responseDigest } : {}),
          },
        }
      : {}),
  };
}

function headerList(headers: unknown): HarNameValue[] {
  if (typeof headers !== "object" || headers === null) return [];
  return Object.entries(headers as Record<string, unknown>).map(([name, value]) => ({ name, value: String(value) }));
}

function queryOf(url: string): HarNameValue[] {
  if (!URL.canParse(url)) return [];
  return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
}

function bodyOf(data: Readonly<Record<string, unknown>>): { text: string; encoding?: string } | undefined {
  const body = textOf(data["body"]);
  if (body !== undefined) return { text: body };
  const base64 = textOf(data["bodyBase64"]);
  return base64 === undefined ? undefined : { text: base64, encoding: "base64" };
}
