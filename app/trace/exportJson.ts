/**
 * The trace as a JSON file, and the trace's hash.
 *
 * The file has a stable key order, so two exports of the same run are the
 * same bytes and a diff of two runs shows only what changed: the document's
 * members in the order of the schema (the events last), each event as
 * seq, timeMs, name, domain, data, and every object inside sorted by key.
 *
 * By default an export leaves out message bodies (the whole HTTP bodies a
 * recorder with `recordBodies` kept, and any byte blobs) and, always, private
 * keys (JWK `d` members, PEM private key blocks, members named like
 * `privateKey`), so that a trace can be attached to a bug report. `full: true`
 * keeps the bodies; private keys never leave.
 *
 * `traceHash` is SHA-256 over the canonical JSON of the trace as recorded
 * (keys sorted at every level, no whitespace): equal hashes mean equal runs,
 * which is what the determinism tests compare.
 */
import type { RecordedEvent, Trace } from "./schema.ts";
import { startDigest, subtle } from "../protocol/webCrypto.ts";
import { eventsOf, heldEventsOf } from "./store.ts";

/** Options of {@link exportJson}. */
export interface ExportJsonOptions {
  /** Keep message bodies. Default false. Private keys are redacted regardless. */
  readonly full?: boolean;
  /** Indentation; default 2. 0 writes one line. */
  readonly indent?: number;
}

const TOP_LEVEL_ORDER = [
  "format",
  "version",
  "mailscope",
  "redactions",
  "scenario",
  "seed",
  "readings",
  "constants",
  "startedAtMs",
  "invariants",
  "expectations",
  "events",
];
const EVENT_ORDER = ["seq", "timeMs", "name", "domain", "data"];
const SCENARIO_ORDER = ["name", "file", "source"];

/** The trace as a JSON document with a stable key order, redacted unless `full`. */
export function exportJson(trace: Trace, options: ExportJsonOptions = {}): string {
  return [...exportJsonChunks(trace, options)].join("");
}

/** About this many characters of events go into each piece {@link exportJsonChunks} gives. */
export const CHUNK_CHARS = 1 << 16;

/**
 * {@link exportJson}'s text in pieces, one event redacted and written at a
 * time, so that a large trace goes to a file without its whole text (or a
 * redacted copy of all its events) in memory at once: `writeFile(path,
 * exportJsonChunks(trace))`. The pieces joined are exportJson's text, byte
 * for byte: the document is `JSON.stringify`'s, with the events spliced in at
 * their place written the way `JSON.stringify` writes an array at that depth.
 */
export function* exportJsonChunks(trace: Trace, options: ExportJsonOptions = {}): Generator<string> {
  const bodies = options.full !== true;
  const indent = options.indent ?? 2;
  // The document with a marker for the events: small, and JSON.stringify's own layout around them.
  const marker = "\u0000events\u0000";
  const events = eventsOf(trace); // one at a time, from a recorder's store when it holds them
  const doc = ordered(redactTrace({ ...withoutEvents(trace), events: [] }, { bodies })) as Record<string, unknown>;
  doc["events"] = marker; // in the events' place of the key order
  const text = JSON.stringify(doc, null, indent);
  const quoted = JSON.stringify(marker);
  const at = text.indexOf(quoted);
  if (at < 0 || events.length === 0) {
    yield `${text.replace(quoted, "[]")}\n`;
    return;
  }
  const newline = indent > 0 ? "\n" : "";
  const outer = " ".repeat(indent); // the events array sits one level into the document
  const inner = " ".repeat(indent * 2);
  let piece = `${text.slice(0, at)}[${newline}`;
  let i = 0;
  for (const recorded of events) {
    const event = redactEvent(recorded, bodies);
    const json = JSON.stringify(inOrder(event as unknown as Record<string, unknown>, EVENT_ORDER), null, indent);
    piece += `${i++ > 0 ? `,${newline}` : ""}${inner}${indent > 0 ? json.replaceAll("\n", `\n${inner}`) : json}`;
    if (piece.length >= CHUNK_CHARS) {
      yield piece;
      piece = "";
    }
  }
  yield `${piece}${newline}${outer}]${text.slice(at + quoted.length)}\n`;
}

/** `trace`'s members but its events, which are not read (a recorder's document builds them when they are). */
export function withoutEvents(trace: Trace): Omit<Trace, "events"> {
  const doc = trace as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(doc)) if (key !== "events") out[key] = doc[key];
  return out as Omit<Trace, "events">;
}

/** What an export is: each says what it leaves out ({@link leftOut}). */
export type ExportKind = "trace" | "har" | "report" | "bundle" | "image";

/**
 * Whether the run of a trace recorded whole HTTP bodies: an HTTP event holds
 * one, or says an export left it out. (A run without HTTP events gives the
 * same trace either way.)
 */
export function recordedBodies(trace: Pick<Trace, "events">): boolean {
  // From a recorder's store when it holds the events (decision 0225): up to the first that holds a body.
  for (const e of eventsOf(trace)) {
    if (!e.name.startsWith("http.") || e.data === undefined) continue;
    if ("body" in e.data || "bodyBase64" in e.data || e.data["bodyRedacted"] === true) return true;
  }
  return false;
}

/**
 * What an export of `trace` leaves out, in one sentence — the same in the
 * file where it has room for a note (a HAR's comment, the report's summary)
 * and in the app when it saves it: `Left out: message bodies and private
 * keys.` `full` is "with message bodies": the trace, the HAR and the bundle
 * keep the bodies the run recorded when it is set, and leave them out when
 * not; the report and the images never hold a body (an image holds only
 * what its view draws).
 */
export function leftOut(kind: ExportKind, trace: Pick<Trace, "events">, full: boolean): string {
  switch (kind) {
    case "report":
      return "Left out: message bodies (a report never holds them) and private keys.";
    case "image":
      return "Left out: message bodies and keys.";
    default:
      if (!recordedBodies(trace)) return "Left out: private keys (the run recorded no message bodies).";
      return full ? "Left out: private keys (message bodies kept)." : "Left out: message bodies and private keys.";
  }
}

/** A copy of `trace` without private keys and, when `bodies`, without message bodies. */
export function redactTrace(trace: Trace, what: { readonly bodies: boolean }): Trace {
  const events = trace.events.map((event) => redactEvent(event, what.bodies));
  const redactions = [
    ...new Set([...(trace.redactions ?? []), ...(what.bodies ? ["bodies" as const] : []), "private-keys" as const]),
  ];
  return {
    ...trace,
    redactions,
    scenario: {
      ...trace.scenario,
      ...(trace.scenario.source !== undefined ? { source: redactSource(trace.scenario.source) } : {}),
    },
    events,
  };
}

const BODY_KEYS = new Set(["body", "bodyBase64"]);
const PRIVATE_KEY_NAMES = /^(private[-_]?key|secret[-_]?key|signing[-_]?key[-_]?seed|key[-_]?seed|seed32)$/i;
const PEM_PRIVATE = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
const REDACTED = "[redacted]";

/**
 * `events` each as {@link redactTrace} leaves it, redacted one at a time as they are read (each `for…of`
 * reads them again): an export that reads a recorder's store need not hold a redacted copy of every event.
 */
export function redactedEvents(events: Iterable<RecordedEvent>, bodies: boolean): Iterable<RecordedEvent> {
  return {
    *[Symbol.iterator]() {
      for (const event of events) yield redactEvent(event, bodies);
    },
  };
}

/** `event` as {@link redactTrace} leaves it: without private keys and, when `bodies`, without message bodies. */
export function redactEvent(event: RecordedEvent, bodies: boolean): RecordedEvent {
  if (event.data === undefined) return event;
  const data = redactValue(event.data, bodies) as Record<string, unknown>;
  if (bodies && event.name.startsWith("http.")) {
    let removed = false;
    for (const key of BODY_KEYS) {
      if (key in data) {
        delete data[key];
        removed = true;
      }
    }
    if (removed) data["bodyRedacted"] = true;
  }
  return { ...event, data };
}

function redactValue(value: unknown, bodies: boolean): unknown {
  if (typeof value === "string") return value.replace(PEM_PRIVATE, REDACTED);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, bodies));
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  // Byte blobs ({ base64 } from the recorder) are message content or key material.
  if (bodies && Object.keys(record).length === 1 && typeof record["base64"] === "string") return REDACTED;
  const isJwk = typeof record["kty"] === "string";
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) {
    if (PRIVATE_KEY_NAMES.test(key) || (isJwk && ["d", "p", "q", "dp", "dq", "qi", "k"].includes(key))) {
      out[key] = REDACTED;
    } else {
      out[key] = redactValue(item, bodies);
    }
  }
  return out;
}

/** The scenario text without PEM blocks and without the values of private-key members (YAML or JSON). */
export function redactSource(source: string): string {
  return source
    .replace(PEM_PRIVATE, REDACTED)
    .replace(
      /^(\s*(?:-\s+)?["']?(?:private[-_]?key|secret[-_]?key|signing[-_]?key[-_]?seed|key[-_]?seed|seed32)["']?\s*:\s*)(.+)$/gim,
      `$1${REDACTED}`,
    );
}

/** The document with the export's key order. */
function ordered(trace: Trace): unknown {
  const doc = trace as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of TOP_LEVEL_ORDER) {
    const value = doc[key];
    if (value === undefined) continue;
    if (key === "events")
      out[key] = trace.events.map((e) => inOrder(e as unknown as Record<string, unknown>, EVENT_ORDER));
    else if (key === "scenario") out[key] = inOrder(trace.scenario, SCENARIO_ORDER);
    else if (key === "readings") out[key] = sortKeys(value, naturalCompare);
    else out[key] = sortKeys(value);
  }
  // Members a later minor version adds, after the known ones.
  for (const key of Object.keys(doc).sort()) if (!(key in out) && doc[key] !== undefined) out[key] = sortKeys(doc[key]);
  return out;
}

function inOrder(record: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of order) if (record[key] !== undefined) out[key] = sortKeys(record[key]);
  for (const key of Object.keys(record).sort())
    if (!(key in out) && record[key] !== undefined) out[key] = sortKeys(record[key]);
  return out;
}

/** A copy with every object's keys sorted (arrays keep their order). */
function sortKeys(value: unknown, compare?: (a: string, b: string) => number): unknown {
  if (Array.isArray(value)) return value.map((item) => sortKeys(item));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(compare)) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = sortKeys(item);
  }
  return out;
}

/** G2 before G10. */
function naturalCompare(a: string, b: string): number {
  const split = (s: string): (string | number)[] =>
    s.split(/(\d+)/).map((part, i) => (i % 2 === 1 ? Number(part) : part));
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** Canonical JSON: keys sorted by code unit at every level, no whitespace, `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * {@link canonicalJson} of a trace in pieces, each a whole JSON value or the
 * punctuation between them (no piece ends inside a string, so each may be
 * encoded as UTF-8 alone): the events one at a time, a piece of about
 * {@link CHUNK_CHARS} characters each, never the whole text or a sorted copy
 * of every event at once. Joined, the pieces are canonicalJson's text, byte
 * for byte.
 */
export function* canonicalJsonChunks(trace: Trace): Generator<string> {
  const doc = trace as unknown as Record<string, unknown>;
  // The members in the order JSON.stringify writes a fresh object given them sorted (integer-like keys first).
  const order: Record<string, true> = {};
  for (const key of Object.keys(doc).sort()) order[key] = true;
  let piece = "{";
  let first = true;
  for (const key of Object.keys(order)) {
    // The events one at a time, from a recorder's store when it holds them (not built all as objects).
    const held = key === "events" ? heldEventsOf(trace) : undefined;
    const value = held ?? doc[key];
    if (key === "events" && (held !== undefined || Array.isArray(value))) {
      const events = value as Iterable<unknown>;
      piece += `${first ? "" : ","}${JSON.stringify(key)}:[`;
      let i = 0;
      for (const event of events) {
        // JSON.stringify writes null for an array item it cannot write (as canonicalJson does).
        piece += `${i++ > 0 ? "," : ""}${JSON.stringify(sortKeys(event)) ?? "null"}`;
        if (piece.length >= CHUNK_CHARS) {
          yield piece;
          piece = "";
        }
      }
      piece += "]";
      first = false;
      continue;
    }
    const json = value === undefined ? undefined : (JSON.stringify(sortKeys(value)) as string | undefined);
    if (json === undefined) continue; // a member JSON.stringify leaves out
    piece += `${first ? "" : ","}${JSON.stringify(key)}:${json}`;
    first = false;
  }
  yield `${piece}}`;
}

/**
 * SHA-256 (lowercase hex) of the trace's canonical JSON: equal for equal runs,
 * byte for byte. Hashed in pieces where the crypto provider can (the CLI's
 * Node provider): a fleet's canonical JSON is over 100 MB as one string, twice
 * that as its UTF-8 bytes. WebCrypto alone has no digest in pieces: there the
 * pieces are joined and hashed at once, as before.
 */
export async function traceHash(trace: Trace): Promise<string> {
  const running = startDigest("SHA-256");
  let digest: Uint8Array;
  if (running !== undefined) {
    const encoder = new TextEncoder();
    for (const piece of canonicalJsonChunks(trace)) running.update(encoder.encode(piece));
    digest = running.digest();
  } else {
    const text = [...canonicalJsonChunks(trace)].join("");
    digest = new Uint8Array(await subtle.digest("SHA-256", new TextEncoder().encode(text)));
  }
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}
