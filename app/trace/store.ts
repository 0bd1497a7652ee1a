/**
 * The trace store (decision 0195): a run's events kept encoded in byte
 * chunks instead of as JavaScript objects, ~3 × smaller (a fleet's: ~70
 * bytes an event and a string table, against ~240 as objects), built one at
 * a time when read: in order by an iterator (the passes at the end of a
 * run), or by seq (the few readers that jump).
 *
 * The encoding keeps every value exactly as JSON writes it, and every
 * object's keys in their order, so an event read back is the event stored
 * (`JSON.stringify` of both gives the same bytes, and so the same trace
 * hashes): each string once in a table (long ones inline as UTF-8), each
 * object's keys as a shape number, integers as varints, other numbers as
 * float64, and a frozen list of primitives (a transition's `rules`) once by
 * identity, read back as the same frozen list.
 *
 * Only what the recorder stores is kept: an event's `seq` (its position),
 * `timeMs`, `name`, `domain` and `data` (plain JSON, as the recorder made it).
 */
import type { RecordedEvent } from "./schema.ts";

/** Bytes of one chunk; an event larger than that gets a chunk of its own. */
const CHUNK_BYTES = 256 * 1024;
/** Strings longer than this are written inline as UTF-8 (mostly unique: signatures, digests), not in the table. */
const INLINE_STRING_CHARS = 40;

// One byte before each value says what it is.
const NULL = 0;
const FALSE = 1;
const TRUE = 2;
/** A non-negative safe integer, as a varint. */
const UINT = 3;
/** A negative safe integer, its opposite as a varint. */
const NEGATIVE = 4;
/** Any other number (fractions, -0, beyond 2^53, NaN, ±Infinity): 8 bytes, little-endian. */
const FLOAT = 5;
/** A string of the table, by its index. */
const STRING = 6;
/** An array: its length, then each item. */
const ARRAY = 7;
/** A plain object: its shape (the keys, in order), then each value. */
const OBJECT = 8;
/** A frozen array of primitives, kept once and read back as itself, by its index. */
const FROZEN = 9;
/** A string inline: its UTF-8 length, then its bytes. */
const TEXT = 10;
/** `undefined` (a member JSON leaves out; the recorder drops them, but a store keeps what it is given). */
const UNDEFINED = 11;

// An event's first byte: which of its optional fields it has.
const HAS_DOMAIN = 1;
const HAS_DATA = 2;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A node of the shape trie: the keys seen so far, the next key, and the shape's number when it ends here. */
interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  id: number;
}

const newNode = (): ShapeNode => ({ next: new Map(), id: -1 });

const isPrimitive = (item: unknown): boolean =>
  item === null || typeof item === "string" || typeof item === "boolean" || typeof item === "number";

/**
 * An event as the recorder makes it and the store reads it back: one object literal per shape, its fields in
 * the order the trace's JSON has them (a literal's fields sit inside the object, where fields added one by one
 * after it need a second block: ~35 bytes more an event).
 */
export function recordedEvent(
  seq: number,
  timeMs: number,
  name: string,
  domain: string | undefined,
  data: Record<string, unknown> | undefined,
): RecordedEvent {
  return domain === undefined
    ? data === undefined
      ? { seq, timeMs, name }
      : { seq, timeMs, name, data }
    : data === undefined
      ? { seq, timeMs, name, domain }
      : { seq, timeMs, name, domain, data };
}

/** A trace's events, encoded; appended in order, read back one at a time. */
export class TraceStore implements Iterable<RecordedEvent> {
  /** The byte chunks, each filled from its start; `#chunkFirst[i]` is the seq of chunk i's first event. */
  readonly #chunks: Uint8Array[] = [];
  readonly #chunkFirst: number[] = [];
  /** The current chunk and how much of it is used. */
  #chunk = new Uint8Array(0);
  #used = 0;
  /** Each event's offset in its chunk, by seq. */
  #offsets = new Uint32Array(1024);
  #length = 0;

  readonly #strings: string[] = [];
  readonly #stringIds = new Map<string, number>();
  readonly #shapes: (readonly string[])[] = [];
  readonly #shapeRoot = newNode();
  readonly #frozen: (readonly unknown[])[] = [];
  readonly #frozenIds = new Map<readonly unknown[], number>();

  /** Where an event is encoded before it is copied into a chunk. */
  #buf = new Uint8Array(4096);
  #pos = 0;
  readonly #float = new Float64Array(1);
  readonly #floatBytes = new Uint8Array(this.#float.buffer);
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();

  /** The number of events stored. */
  get length(): number {
    return this.#length;
  }

  /** Bytes held by the encoded events, the string table's text not counted (for measures). */
  get encodedBytes(): number {
    let bytes = this.#offsets.byteLength;
    for (const chunk of this.#chunks) bytes += chunk.byteLength;
    return bytes;
  }

  /**
   * Stores `event` as the next one; its `seq` must be its position ({@link length}).
   *
   * @throws Error when the seq is not the next one.
   */
  append(event: RecordedEvent): void {
    if (event.seq !== this.#length) {
      throw new Error(`trace store: event seq ${event.seq} appended at position ${this.#length}`);
    }
    this.#pos = 0;
    const { domain, data } = event;
    this.#ensure(1);
    this.#buf[this.#pos++] = (domain === undefined ? 0 : HAS_DOMAIN) | (data === undefined ? 0 : HAS_DATA);
    this.#varint(this.#stringId(event.name));
    if (domain !== undefined) this.#varint(this.#stringId(domain));
    this.#number(event.timeMs);
    if (data !== undefined) this.#value(data);
    this.#place();
  }

  /** The event of `seq`, decoded; `undefined` outside 0 … length − 1. */
  at(seq: number): RecordedEvent | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.#length) return undefined;
    // The last chunk whose first seq is at most `seq`.
    let lo = 0;
    let hi = this.#chunkFirst.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.#chunkFirst[mid] as number) <= seq) lo = mid;
      else hi = mid - 1;
    }
    return this.#decodeEvent(this.#chunks[lo] as Uint8Array, seq);
  }

  /** The events from seq `from` (default 0) up to, not including, `to` (default: the length when called), in order. */
  events(from = 0, to = this.#length): Generator<RecordedEvent, void, undefined> {
    return this.#walk(from, to, undefined);
  }

  /**
   * The events named one of `names`, from seq `from` up to `to`, in order: an event of another name is passed
   * by its name alone, its data never decoded (a pass that reads a few names of a fleet's 405k events).
   */
  *eventsNamed(names: Iterable<string>, from = 0, to = this.#length): Generator<RecordedEvent, void, undefined> {
    const wanted = new Set<number>();
    for (const name of names) {
      const id = this.#stringIds.get(name);
      if (id !== undefined) wanted.add(id);
    }
    if (wanted.size > 0) yield* this.#walk(from, to, wanted);
  }

  /** The events from `from` up to `to`, in order; with `wanted`, only those whose name's id is in it. */
  *#walk(from: number, to: number, wanted: ReadonlySet<number> | undefined): Generator<RecordedEvent, void, undefined> {
    const end = Math.min(to, this.#length);
    let seq = Math.max(0, from);
    if (seq >= end) return;
    let chunk = 0;
    while (chunk + 1 < this.#chunkFirst.length && (this.#chunkFirst[chunk + 1] as number) <= seq) chunk++;
    for (; seq < end; seq++) {
      if (chunk + 1 < this.#chunkFirst.length && (this.#chunkFirst[chunk + 1] as number) <= seq) chunk++;
      const bytes = this.#chunks[chunk] as Uint8Array;
      if (wanted !== undefined) {
        // The name's id follows the flags byte.
        this.#in = bytes;
        this.#at = (this.#offsets[seq] as number) + 1;
        if (!wanted.has(this.#readVarint())) continue;
      }
      yield this.#decodeEvent(bytes, seq);
    }
  }

  [Symbol.iterator](): Iterator<RecordedEvent> {
    return this.events();
  }

  /** Every event as an array of objects (what a store saves: ask only when a reader needs the whole array). */
  toArray(from = 0, to = this.#length): RecordedEvent[] {
    const out: RecordedEvent[] = [];
    for (const event of this.events(from, to)) out.push(event);
    return out;
  }

  // ── Encoding ──────────────────────────────────────────────────────────

  /** Room for `n` more bytes in the scratch buffer. */
  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#pos));
    this.#buf = grown;
  }

  /** A non-negative safe integer, 7 bits a byte, low bits first. */
  #varint(value: number): void {
    this.#ensure(8);
    const buf = this.#buf;
    let v = value;
    while (v >= 0x80) {
      buf[this.#pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    buf[this.#pos++] = v;
  }

  #number(value: number): void {
    if (Number.isInteger(value) && value <= MAX_SAFE && value >= -MAX_SAFE && !Object.is(value, -0)) {
      this.#ensure(1);
      if (value >= 0) {
        this.#buf[this.#pos++] = UINT;
        this.#varint(value);
      } else {
        this.#buf[this.#pos++] = NEGATIVE;
        this.#varint(-value);
      }
      return;
    }
    this.#ensure(9);
    this.#buf[this.#pos++] = FLOAT;
    this.#float[0] = value;
    this.#buf.set(this.#floatBytes, this.#pos);
    this.#pos += 8;
  }

  #stringId(text: string): number {
    let id = this.#stringIds.get(text);
    if (id === undefined) {
      id = this.#strings.length;
      this.#strings.push(text);
      this.#stringIds.set(text, id);
    }
    return id;
  }

  #string(text: string): void {
    if (text.length > INLINE_STRING_CHARS) {
      // At most 3 bytes of UTF-8 a UTF-16 unit; the length goes before the bytes, in the varint's room.
      this.#ensure(1 + 8 + text.length * 3);
      this.#buf[this.#pos++] = TEXT;
      const at = this.#pos + 8;
      const { written } = this.#encoder.encodeInto(text, this.#buf.subarray(at));
      this.#varint(written);
      this.#buf.copyWithin(this.#pos, at, at + written);
      this.#pos += written;
      return;
    }
    this.#ensure(1);
    this.#buf[this.#pos++] = STRING;
    this.#varint(this.#stringId(text));
  }

  #value(value: unknown): void {
    switch (typeof value) {
      case "string":
        this.#string(value);
        return;
      case "number":
        this.#number(value);
        return;
      case "boolean":
        this.#ensure(1);
        this.#buf[this.#pos++] = value ? TRUE : FALSE;
        return;
      case "undefined":
        this.#ensure(1);
        this.#buf[this.#pos++] = UNDEFINED;
        return;
      case "object":
        break;
      default:
        throw new Error(`trace store: a ${typeof value} is not JSON`);
    }
    if (value === null) {
      this.#ensure(1);
      this.#buf[this.#pos++] = NULL;
      return;
    }
    if (Array.isArray(value)) {
      if (Object.isFrozen(value)) {
        const id = this.#frozenIds.get(value) ?? (value.every(isPrimitive) ? this.#addFrozen(value) : -1);
        if (id >= 0) {
          this.#ensure(1);
          this.#buf[this.#pos++] = FROZEN;
          this.#varint(id);
          return;
        }
      }
      this.#ensure(1);
      this.#buf[this.#pos++] = ARRAY;
      this.#varint(value.length);
      for (let i = 0; i < value.length; i++) this.#value(value[i]);
      return;
    }
    const record = value as Record<string, unknown>;
    let node = this.#shapeRoot;
    for (const key in record) {
      let next = node.next.get(key);
      if (next === undefined) node.next.set(key, (next = newNode()));
      node = next;
    }
    if (node.id < 0) {
      node.id = this.#shapes.length;
      this.#shapes.push(Object.keys(record));
    }
    this.#ensure(1);
    this.#buf[this.#pos++] = OBJECT;
    this.#varint(node.id);
    for (const key in record) this.#value(record[key]);
  }

  #addFrozen(list: readonly unknown[]): number {
    const id = this.#frozen.length;
    this.#frozen.push(list);
    this.#frozenIds.set(list, id);
    return id;
  }

  /** Copies the encoded event into the current chunk (a new one when it does not fit), and notes where. */
  #place(): void {
    const size = this.#pos;
    if (this.#used + size > this.#chunk.length) {
      this.#chunk = new Uint8Array(Math.max(CHUNK_BYTES, size));
      this.#used = 0;
      this.#chunks.push(this.#chunk);
      this.#chunkFirst.push(this.#length);
    }
    this.#chunk.set(this.#buf.subarray(0, size), this.#used);
    if (this.#length === this.#offsets.length) {
      const grown = new Uint32Array(this.#offsets.length * 2);
      grown.set(this.#offsets);
      this.#offsets = grown;
    }
    this.#offsets[this.#length++] = this.#used;
    this.#used += size;
  }

  // ── Decoding ──────────────────────────────────────────────────────────

  #in: Uint8Array = new Uint8Array(0);
  #at = 0;

  #decodeEvent(chunk: Uint8Array, seq: number): RecordedEvent {
    this.#in = chunk;
    this.#at = this.#offsets[seq] as number;
    const flags = chunk[this.#at++] as number;
    const name = this.#strings[this.#readVarint()] as string;
    const domain = (flags & HAS_DOMAIN) !== 0 ? (this.#strings[this.#readVarint()] as string) : undefined;
    const timeMs = this.#readValue() as number;
    const data = (flags & HAS_DATA) !== 0 ? (this.#readValue() as Record<string, unknown>) : undefined;
    return recordedEvent(seq, timeMs, name, domain, data);
  }

  #readVarint(): number {
    const input = this.#in;
    let byte = input[this.#at++] as number;
    if (byte < 0x80) return byte;
    let value = byte & 0x7f;
    let scale = 0x80;
    for (;;) {
      byte = input[this.#at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  #readValue(): unknown {
    const tag = this.#in[this.#at++];
    switch (tag) {
      case NULL:
        return null;
      case FALSE:
        return false;
      case TRUE:
        return true;
      case UINT:
        return this.#readVarint();
      case NEGATIVE:
        return -this.#readVarint();
      case FLOAT: {
        this.#floatBytes.set(this.#in.subarray(this.#at, this.#at + 8));
        this.#at += 8;
        return this.#float[0];
      }
      case STRING:
        return this.#strings[this.#readVarint()];
      case TEXT: {
        const size = this.#readVarint();
        const text = this.#decoder.decode(this.#in.subarray(this.#at, this.#at + size));
        this.#at += size;
        return text;
      }
      case ARRAY: {
        const length = this.#readVarint();
        const out = new Array<unknown>(length);
        for (let i = 0; i < length; i++) out[i] = this.#readValue();
        return out;
      }
      case FROZEN:
        return this.#frozen[this.#readVarint()];
      case OBJECT: {
        const keys = this.#shapes[this.#readVarint()] as readonly string[];
        const out: Record<string, unknown> = {};
        for (const key of keys) {
          const item = this.#readValue();
          // `__proto__` as an own member (JSON.parse makes those), not the object's prototype.
          if (key === "__proto__")
            Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
          else out[key] = item;
        }
        return out;
      }
      case UNDEFINED:
        return undefined;
      default:
        throw new Error(`trace store: unknown tag ${String(tag)} (a corrupt store)`);
    }
  }
}

/** Events that can also be read by name, decoding only those ({@link TraceStore.eventsNamed}): a recorder's `iterate()`. */
export interface NamedEvents<E> extends Iterable<E> {
  named(names: ReadonlySet<string>): Iterable<E>;
}

/**
 * The events of `events` named one of `names`, in order: from a recorder's store without decoding the others,
 * from an array filtered at once (a small run's passes: an array's `filter`, not a generator's step for each
 * of its events, decision 0315), else filtered as they are read. A pass that reads a few names reads them
 * through this.
 */
export function eventsNamed<E extends { readonly name: string }>(
  events: Iterable<E>,
  names: ReadonlySet<string>,
): Iterable<E> {
  const named = (events as Partial<NamedEvents<E>>).named;
  if (typeof named === "function") return named.call(events, names);
  if (Array.isArray(events)) return (events as readonly E[]).filter((e) => names.has(e.name));
  return {
    *[Symbol.iterator]() {
      for (const e of events) if (names.has(e.name)) yield e;
    },
  };
}

/** A trace's events to read in order: an array of them, or a store's not built into one. */
export interface EventSequence extends Iterable<RecordedEvent> {
  readonly length: number;
  /** The event at `index` (0 … length − 1; an array's `at`), decoded from a store when it holds them. */
  at(index: number): RecordedEvent | undefined;
}

/** The documents whose `events` a store holds, not yet built as objects (a recorder's `toTrace`). */
const stored = new WeakMap<object, EventSequence>();

/** Says that `trace`'s events are `events` until its `events` member is read or set ({@link releaseEvents}). */
export function holdEvents(trace: object, events: EventSequence): void {
  stored.set(trace, events);
}

/** `trace`'s events are its `events` member from now on. */
export function releaseEvents(trace: object): void {
  stored.delete(trace);
}

/**
 * The events of `trace` to read once in order — its `events` member, or, for
 * a recorder's document whose events were never read as an array, the
 * recorder's store, one event at a time: a hash or an export of a fleet's
 * run need not build all its events as objects (decision 0195).
 */
export function eventsOf(trace: { readonly events: readonly RecordedEvent[] }): EventSequence {
  return heldEventsOf(trace) ?? trace.events;
}

/** The store's events of `trace` when a store holds them ({@link holdEvents}); `undefined` when its member does. */
export function heldEventsOf(trace: object): EventSequence | undefined {
  return stored.get(trace);
}
