/**
 * The recorder: a TraceSink that keeps every event of a run, numbered in the
 * order emitted, with its data turned into plain JSON on the way in — so that
 * the trace, its exports and its hash mean the same thing on every machine,
 * and a component may emit a Uint8Array, a Map or Headers without thinking
 * about it.
 *
 * It also decides whether whole HTTP bodies are recorded (`recordBodies`);
 * the network reads that setting when the world is built.
 */
import type { TraceEvent, TraceSink } from "../ports.ts";
import { isTraceEventName } from "./events.ts";
import { TRACE_FORMAT, TRACE_VERSION, type CheckResult, type RecordedEvent, type Trace } from "./schema.ts";
import { bytesToBase64 } from "../protocol/base64.ts";
import { eventsNamed, holdEvents, recordedEvent, releaseEvents, TraceStore, type NamedEvents } from "./store.ts";

/** What {@link createRecorder} may be told. */
export interface RecorderOptions {
  /** Record whole HTTP bodies (the network puts them in http.request / http.response). Default false. */
  readonly recordBodies?: boolean;
  /** Throw on an event name that app/trace/events.ts does not list. Default true. */
  readonly strict?: boolean;
}

/** What a trace says about its run, besides the events. */
export interface TraceMeta {
  /** The Mailscope version (package.json). */
  readonly mailscope: string;
  readonly scenario: { readonly name: string; readonly file?: string; readonly source?: string };
  readonly seed: number | string;
  readonly readings: Readonly<Record<string, string>>;
  /** The draft's numbers that depart from SPEC.md (`{ "RETRY-2.cap": "30m" }`); absent when none does. */
  readonly constants?: Readonly<Record<string, string>>;
  readonly startedAtMs: number;
  readonly invariants?: readonly CheckResult[];
  readonly expectations?: readonly CheckResult[];
}

/**
 * A TraceSink that keeps the run. The events are kept encoded in a
 * {@link TraceStore} (decision 0195): read them with {@link Recorder.iterate},
 * {@link Recorder.at} and {@link Recorder.length}; {@link Recorder.events}
 * builds them all as objects, for the readers that need an array.
 */
export interface Recorder extends TraceSink {
  readonly recordBodies: boolean;
  /**
   * Every event so far, in order, as objects: built from the store when first asked, then kept up to date
   * by every emit (the objects' memory from then on, ~3 × the store's: a fleet-sized run reads
   * {@link iterate} instead).
   */
  readonly events: readonly RecordedEvent[];
  /** The number of events so far. */
  readonly length: number;
  /** The event of `seq`, or `undefined` when there is none. */
  at(seq: number): RecordedEvent | undefined;
  /**
   * The events from seq `from` (default 0) up to, not including, `to` (default: those recorded when called),
   * decoded one at a time; each `for…of` over it starts again from `from` (a pass may read it more than once).
   */
  iterate(from?: number, to?: number): NamedEvents<RecordedEvent>;
  /** Records one event. Throws on an unknown name when strict. */
  emit(event: TraceEvent): void;
  /** Calls `listener` with each event as it is recorded (the UI's live view); returns the unsubscribe. */
  subscribe(listener: (event: RecordedEvent) => void): () => void;
  /**
   * The trace document of the run so far. Its `events` are built as objects when a reader first reads
   * them (then kept by the document), not before: a caller that only hashes, exports or iterates need
   * not hold them all.
   */
  toTrace(meta: TraceMeta): Trace;
}

/** A recorder with no events. */
export function createRecorder(options: RecorderOptions = {}): Recorder {
  const store = new TraceStore();
  /** The events as objects, once a reader asked for them ({@link Recorder.events}). */
  let materialized: RecordedEvent[] | undefined;
  const listeners = new Set<(event: RecordedEvent) => void>();
  const strict = options.strict ?? true;
  return {
    recordBodies: options.recordBodies ?? false,
    get events(): readonly RecordedEvent[] {
      materialized ??= store.toArray();
      return materialized;
    },
    get length(): number {
      return store.length;
    },
    at(seq) {
      return materialized !== undefined ? materialized[seq] : store.at(seq);
    },
    iterate(from = 0, to = store.length) {
      // The objects when a reader had them built (nothing to decode), else the store.
      return {
        [Symbol.iterator]: () => (materialized !== undefined ? range(materialized, from, to) : store.events(from, to)),
        // A pass that reads a few names decodes only their events (eventsNamed).
        named: (names: ReadonlySet<string>) => ({
          [Symbol.iterator]: () =>
            materialized !== undefined
              ? eventsNamed(range(materialized, from, to), names)[Symbol.iterator]()
              : store.eventsNamed(names, from, to),
        }),
      };
    },
    emit(event) {
      if (strict && !isTraceEventName(event.name)) {
        throw new Error(`unknown trace event "${event.name}": add it to app/trace/events.ts`);
      }
      const raw = event.data;
      if (materialized === undefined && listeners.size === 0 && (raw === undefined || isPlainJson(raw, 0))) {
        // Nobody keeps this event as an object: the store encodes the emitter's data as it is, the bytes its
        // copy would have given, without the copy (decision 0220).
        store.append(recordedEvent(store.length, event.timeMs, event.name, event.domain, raw));
        return;
      }
      const data = raw === undefined ? undefined : (toJsonValue(raw) as Record<string, unknown>);
      const recorded = recordedEvent(store.length, event.timeMs, event.name, event.domain, data);
      store.append(recorded);
      materialized?.push(recorded);
      for (const listener of listeners) listener(recorded);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    toTrace(meta) {
      const count = store.length;
      const events = materialized?.slice(0, count);
      const trace: Trace = {
        format: TRACE_FORMAT,
        version: TRACE_VERSION,
        mailscope: meta.mailscope,
        scenario: { ...meta.scenario },
        seed: meta.seed,
        readings: { ...meta.readings },
        ...(meta.constants !== undefined && { constants: { ...meta.constants } }),
        startedAtMs: meta.startedAtMs,
        // Built on first read, then a plain member in the same place (the document's JSON keeps its order).
        get events(): RecordedEvent[] {
          const built = events ?? store.toArray(0, count);
          releaseEvents(trace);
          Object.defineProperty(trace, "events", {
            value: built,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          return built;
        },
        set events(value: RecordedEvent[]) {
          releaseEvents(trace);
          Object.defineProperty(trace, "events", { value, enumerable: true, writable: true, configurable: true });
        },
        ...(meta.invariants !== undefined ? { invariants: [...meta.invariants] } : {}),
        ...(meta.expectations !== undefined ? { expectations: [...meta.expectations] } : {}),
      };
      // Until then, a hash or an export reads them from the store (eventsOf).
      if (events === undefined) {
        holdEvents(trace, {
          length: count,
          at: (index) => (index >= 0 && index < count ? store.at(index) : undefined),
          [Symbol.iterator]: () => store.events(0, count),
        });
      }
      return trace;
    },
  };
}

/** `list[from]` … `list[to - 1]`, without a copy. */
function* range<T>(list: readonly T[], from: number, to: number): Generator<T, void, undefined> {
  const end = Math.min(to, list.length);
  for (let i = Math.max(0, from); i < end; i++) yield list[i] as T;
}

/**
 * `value` as plain JSON data: bytes become `{ base64 }`, Maps and Headers
 * objects, Sets arrays, Dates ISO strings, URLs strings, Errors
 * `{ name, message }`, bigints strings; `undefined` members are dropped,
 * non-finite numbers become null, a cycle becomes "[circular]".
 */
export function toJsonValue(value: unknown): unknown {
  return convert(value, []);
}

/** `record` without its members whose value is `undefined` (a copy). */
function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in record) if (record[k] !== undefined) out[k] = record[k];
  return out;
}

/**
 * A value JSON writes as it is (a string, a boolean, a finite number). A frozen array of them is kept as
 * it is, not copied: the same list cited by many events (a transition's rules) is then held once, where a
 * copy per event cost ~70 bytes for each of a fleet's 45k transitions (decision 0185).
 */
function isJsonPrimitive(item: unknown): boolean {
  return typeof item === "string" || typeof item === "boolean" || (typeof item === "number" && Number.isFinite(item));
}

/** Deeper than this, {@link isPlainJson} leaves the value to {@link toJsonValue} (which finds a cycle). */
const PLAIN_DEPTH = 32;

/**
 * Whether {@link toJsonValue} would give `value` back unchanged in meaning: strings, booleans, finite numbers,
 * null, arrays and plain objects of them, a frozen list of JSON primitives; no `undefined` member or item, nothing
 * it would convert (bytes, Maps, Headers, Dates, `toJSON`), no cycle. The store can then encode `value` itself:
 * it reads an object's members in the order its copy would have them.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    // A frozen list is kept as it is only when all its items are JSON primitives (convert's rule).
    if (Object.isFrozen(value)) return value.every(isJsonPrimitive);
    for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  if (typeof record["toJSON"] === "function") return false;
  for (const k in record) if (!isPlainJson(record[k], depth + 1)) return false;
  return true;
}

/**
 * {@link toJsonValue} with `path`, the objects being converted around `value`
 * (a cycle leads back to one of them). Every event of a run passes through
 * here, so the common case — plain objects and arrays of strings and numbers —
 * comes first and allocates nothing but the copy.
 */
function convert(value: unknown, path: object[]): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      return value.toString();
    case "object":
      break;
    default:
      return undefined; // functions, symbols, undefined
  }
  if (value === null) return null;
  if (path.includes(value)) return "[circular]";
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    path.push(value);
    // A copy by spread has the original's shape: its fields inside the object, as the emitter's literal
    // had them, where fields added one by one to `{}` past the fourth need a second block (~75 bytes
    // more an event in a fleet, kept for the whole run). Then each value is converted in place.
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    let dropped = false;
    for (const k in out) {
      const item = out[k];
      const json = convert(item, path);
      if (json === undefined) {
        dropped = true;
        out[k] = undefined;
      } else if (json !== item) {
        out[k] = json;
      }
    }
    path.pop();
    return dropped ? withoutUndefined(out) : out;
  }
  if (Array.isArray(value)) {
    if (Object.isFrozen(value) && value.every(isJsonPrimitive)) return value; // nobody can change it: one for all
    path.push(value);
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = convert(value[i], path) ?? null;
    path.pop();
    return out;
  }
  if (value instanceof Uint8Array) return { base64: bytesToBase64(value) };
  if (value instanceof ArrayBuffer) return { base64: bytesToBase64(new Uint8Array(value)) };
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value.toISOString() : null;
  if (value instanceof URL) return value.href;
  if (value instanceof Error) return { name: value.name, message: value.message };
  path.push(value);
  try {
    if (value instanceof Headers) {
      const out: Record<string, string> = {};
      value.forEach((v, k) => {
        out[k] = v;
      });
      return out;
    }
    if (value instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of value) {
        const json = convert(v, path);
        if (json !== undefined) out[String(k)] = json;
      }
      return out;
    }
    if (value instanceof Set) return [...value].map((item) => convert(item, path) ?? null);
    const withToJson = value as { toJSON?: () => unknown };
    if (typeof withToJson.toJSON === "function") return convert(withToJson.toJSON(), path);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const json = convert(v, path);
      if (json !== undefined) out[k] = json;
    }
    return out;
  } finally {
    path.pop();
  }
}
