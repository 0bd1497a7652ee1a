/**
 * Spooling a large message while its request body arrives, through the Mail
 * store's optional `spool` (ports.ts). The receiver still reads the whole
 * body into memory and parses and checks it exactly as always; the spooler
 * only hands the store, as they come, the bytes that will be the message
 * (everything after the second part's header block), so the store's disk
 * work overlaps the network's instead of starting after it. For a 25 MiB
 * message that is most of the time a durable write takes.
 *
 * Whether the spooled bytes are the message is decided afterwards, against
 * the real parse: the spool is used only when the parsed message starts at
 * the very byte the spool started at (then the spool holds the message and
 * whatever followed it, which the store cuts off); otherwise it is let go and
 * the message is stored from memory as always. So the scan here may be
 * simple: a wrong guess costs a wasted write, never a wrong message.
 */
import type { MailSpool } from "../ports.ts";
import { indexOfBytes } from "../protocol/multipart.ts";

/** Bodies at least this large are spooled (smaller ones are written in one step faster than a spool is set up). */
export const SPOOL_MIN_BYTES = 1024 * 1024;
/** Bytes gathered before they are handed to the store in one write (fewer, larger writes). */
const WRITE_BYTES = 1024 * 1024;
/** The message must start within this many bytes of the body (the envelope part is far smaller); else no spool. */
const PREFIX_MAX = 256 * 1024;

const CRLF = Uint8Array.of(13, 10);
const CRLFCRLF = Uint8Array.of(13, 10, 13, 10);

/** What the receiver's body reading and store step see of a spool. */
export interface BodySpooler {
  /** Body bytes `[offset, offset + bytes.length)`, in order, unchanged afterwards. */
  onBytes(bytes: Uint8Array, offset: number): void;
  /**
   * The store step for `message` (parsed out of `body`) when the spool holds
   * it, else undefined (store it from memory). The first call of the step
   * finishes the spool; each stores it for one more mailbox and resolves
   * true, or false when the spool could not be finished (nothing was stored:
   * store it from memory). A rejection is the store's failure to deliver.
   */
  storeFor(
    body: Uint8Array,
    message: Uint8Array,
  ):
    | ((mailbox: string, meta: { readonly deliveryId: string; readonly receivedAtMs: number }) => Promise<boolean>)
    | undefined;
  /**
   * For a spooler made with `holdsBody`: the whole body, `size`
   * bytes, once the read is done: its first bytes from memory, the rest read
   * back from the spool. Rejects when the spool failed (the body is lost:
   * a temporary failure).
   */
  body(size: number): Promise<Uint8Array>;
  /** Lets the spool go; safe to call more than once. */
  close(): void;
}

/** What {@link createBodySpooler} may be told. */
export interface BodySpoolerOptions {
  /**
   * The body is not kept in memory by its reader (it is not authenticated
   * yet): the spool holds every byte after the first few (up to
   * the message's start, or the first {@link PREFIX_MAX} bytes when no start
   * is found there), copied as they come into writes of 1 MiB, and
   * {@link BodySpooler.body} gives the body back. Needs the spool's `read`.
   */
  readonly holdsBody?: boolean;
}

/**
 * A spooler for a `multipart/mixed` body with `boundary` (POST-2: the
 * envelope part, then the message part), writing into `spool`.
 */
export function createBodySpooler(boundary: string, spool: MailSpool, options: BodySpoolerOptions = {}): BodySpooler {
  const holdsBody = options.holdsBody === true;
  const delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
  const dash = delimiter.subarray(2);
  /** The body's first bytes, copied, until the message's start is found in them. */
  let prefix = new Uint8Array(0);
  /** Where the message starts in the body, once found; -1 after giving up. */
  let start: number | undefined;
  /** Bytes gathered for the next write: a view over contiguous bytes of one buffer, and its body offset. */
  let pending: { bytes: Uint8Array; offset: number } | undefined;
  /** Whether the spool was finished (true) or could not be (false), once the first store step asked. */
  let finishing: Promise<boolean> | undefined;
  let closed = false;
  /** With `holdsBody`: the body's bytes before `start`, kept in memory. */
  let head = new Uint8Array(0);
  /** With `holdsBody`: bytes copied for the next write, and the body offset of the first. */
  let stage: { bytes: Uint8Array; length: number; offset: number } | undefined;

  const flush = (): void => {
    if (start === undefined || start < 0) return;
    if (stage !== undefined && stage.length > 0) {
      spool.write(stage.bytes.subarray(0, stage.length), stage.offset - start);
      stage = undefined;
    }
    if (pending === undefined) return;
    spool.write(pending.bytes, pending.offset - start);
    pending = undefined;
  };

  /** With `holdsBody`: the bytes at body offset `offset` copied into writes of {@link WRITE_BYTES} (chunks are small and apart). */
  const stageBytes = (bytes: Uint8Array, offset: number): void => {
    let from = 0;
    while (from < bytes.length) {
      stage ??= { bytes: new Uint8Array(WRITE_BYTES), length: 0, offset: offset + from };
      const n = Math.min(bytes.length - from, WRITE_BYTES - stage.length);
      stage.bytes.set(bytes.subarray(from, from + n), stage.length);
      stage.length += n;
      from += n;
      if (stage.length === WRITE_BYTES) flush();
    }
  };

  /** Hands the bytes at body offset `offset` (all at or after `start`) on, merged with what is pending when contiguous. */
  const gather = (bytes: Uint8Array, offset: number): void => {
    if (bytes.length === 0) return;
    if (holdsBody) {
      stageBytes(bytes, offset);
      return;
    }
    const last = pending;
    if (
      last !== undefined &&
      last.bytes.buffer === bytes.buffer &&
      last.bytes.byteOffset + last.bytes.length === bytes.byteOffset &&
      last.offset + last.bytes.length === offset
    ) {
      pending = {
        bytes: new Uint8Array(bytes.buffer, last.bytes.byteOffset, last.bytes.length + bytes.length),
        offset: last.offset,
      };
    } else {
      flush();
      pending = { bytes, offset };
    }
    if (pending.bytes.length >= WRITE_BYTES) flush();
  };

  return {
    onBytes(bytes, offset) {
      if (closed || start === -1) return;
      if (start !== undefined) {
        const skip = Math.max(0, start - offset);
        if (skip < bytes.length) gather(bytes.subarray(skip), offset + skip);
        return;
      }
      // Still looking: the prefix grows by a copy of these bytes (only the first few KiB of the body).
      if (offset !== prefix.length) {
        start = -1;
        return;
      }
      const grown = new Uint8Array(prefix.length + bytes.length);
      grown.set(prefix);
      grown.set(bytes, prefix.length);
      prefix = grown;
      const found = messageStart(prefix, dash, delimiter);
      if (found === undefined) {
        if (prefix.length > PREFIX_MAX) {
          if (holdsBody) {
            // No message start in sight: the spool holds the rest anyway (the parse will not find the message there).
            start = prefix.length;
            head = prefix;
          } else start = -1;
          prefix = new Uint8Array(0);
        }
        return;
      }
      start = found;
      if (holdsBody) head = prefix.slice(0, found);
      // The message's first bytes are in the prefix (a copy of ours, never changed again).
      gather(prefix.subarray(found), found);
      prefix = new Uint8Array(0);
    },

    storeFor(body, message) {
      if (closed || start === undefined || start < 0) return undefined;
      if (message.buffer !== body.buffer || message.byteOffset - body.byteOffset !== start) return undefined;
      const size = message.length;
      return async (mailbox, meta) => {
        if (finishing === undefined) {
          flush();
          finishing = spool.finish(size).then(
            () => true,
            () => false,
          );
        }
        if (!(await finishing)) return false;
        await spool.deliver(mailbox, meta);
        return true;
      };
    },

    async body(size) {
      if (closed || !holdsBody || start === -1) throw new Error("the body was not spooled whole");
      // The body ended before its message's start was found: all of it is in the prefix.
      if (start === undefined) return prefix;
      flush();
      const read = spool.read?.bind(spool);
      if (read === undefined) throw new Error("the spool cannot be read back");
      const whole = new Uint8Array(size);
      whole.set(head);
      await read(whole.subarray(head.length));
      return whole;
    },

    close() {
      if (closed) return;
      closed = true;
      pending = undefined;
      stage = undefined;
      head = new Uint8Array(0);
      prefix = new Uint8Array(0);
      spool.close();
    },
  };
}

/**
 * Where the second part's content starts in a body's first bytes, as
 * splitMultipart (app/protocol/multipart.ts) would find it: the first
 * dash-boundary (at offset 0 or after a CRLF), the next delimiter, the end of
 * its line, then the part's header block (none when the line after the
 * delimiter line is empty). Undefined until all of that is in `prefix`.
 */
function messageStart(prefix: Uint8Array, dash: Uint8Array, delimiter: Uint8Array): number | undefined {
  let first: number;
  if (startsWith(prefix, dash, 0)) first = 0;
  else {
    const at = indexOfBytes(prefix, delimiter, 0);
    if (at === -1) return undefined;
    first = at + 2;
  }
  const second = indexOfBytes(prefix, delimiter, first + dash.length);
  if (second === -1) return undefined;
  const lineEnd = indexOfBytes(prefix, CRLF, second + delimiter.length);
  if (lineEnd === -1) return undefined;
  const headers = lineEnd + 2;
  if (prefix.length < headers + 2) return undefined;
  if (prefix[headers] === 13 && prefix[headers + 1] === 10) return headers + 2;
  const blank = indexOfBytes(prefix, CRLFCRLF, headers);
  return blank === -1 ? undefined : blank + 4;
}

function startsWith(bytes: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at + needle.length > bytes.length) return false;
  for (let i = 0; i < needle.length; i++) if (bytes[at + i] !== needle[i]) return false;
  return true;
}
