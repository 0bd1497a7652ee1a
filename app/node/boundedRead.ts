/**
 * Reading a file with a limit: every command that reads a file a person names
 * (a scenario, the `.eml` it names, `send --message`/`--key`/`--ca`,
 * `lint-request`'s request, keys and configuration, a trace the app opens)
 * reads it through {@link readBounded}, which reads the file piece by piece
 * and stops one byte past the limit. `/dev/zero`, a FIFO or a huge file is
 * refused with `file: larger than N bytes (the limit for keys)` after reading
 * at most N + 1 bytes, instead of filling the memory.
 *
 * The limits ({@link READ_LIMITS}) are documented in README.md ("Limits on
 * input").
 */
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { MAX_MESSAGE_BYTES } from "../sim/scenario.ts";
import { errorMessage } from "../errorMessage.ts";

/** What a file holds, for the limit and the message that names it. */
export type ReadKind = keyof typeof READ_LIMITS;

/** The most bytes read of each kind of file. */
export const READ_LIMITS = {
  /** A raw RFC 5322 message (`eml:`, `send --message`): the largest message Mailscope makes or sends. */
  messages: MAX_MESSAGE_BYTES,
  /** A raw HTTP request (`lint-request`): a message and room for the envelope and headers. */
  requests: MAX_MESSAGE_BYTES + 1_048_576,
  /** A JWK or a JWKS (`send --key`, `lint-request --keys`): a key is a few hundred bytes. */
  keys: 65_536,
  /** PEM certificates (`--ca`). */
  certificates: 1_048_576,
  /** A receiver configuration (`--config`), keyRecords included. */
  configurations: 4_194_304,
  /** A scenario file (YAML or JSON); a generated one with 100,000 messages is ~10 MB. */
  scenarios: 33_554_432,
  /** A trace the app opens (a 100,000-event trace is ~60 MB). */
  traces: 268_435_456,
} as const;

/** A file larger than its limit. */
export class FileTooLargeError extends Error {
  readonly code = "EFBIG";
  readonly file: string;
  readonly limit: number;
  readonly kind: string;
  constructor(file: string, limit: number, kind: string) {
    super(`${file}: larger than ${limit} bytes (the limit for ${kind})`);
    this.name = "FileTooLargeError";
    this.file = file;
    this.limit = limit;
    this.kind = kind;
  }
}

/** The most bytes read in one go. */
const CHUNK = 1_048_576;

/**
 * The bytes of `file`, read incrementally; works for regular files, devices
 * and FIFOs (a FIFO waits for its writer, as any read of it does).
 *
 * @throws FileTooLargeError when the file holds more than `limit` bytes
 *   (`kind` names the limit: a key of {@link READ_LIMITS}, or any words);
 *   the file system's errors (ENOENT, EISDIR…) as they are.
 */
export async function readBounded(file: string, kind: ReadKind | string, limit?: number): Promise<Buffer> {
  const max = limit ?? (READ_LIMITS as Record<string, number>)[kind];
  if (max === undefined) throw new RangeError(`no read limit for ${kind}`);
  const handle = await open(file, "r");
  try {
    return await readHandle(handle, await handle.stat(), file, kind, max);
  } finally {
    await handle.close();
  }
}

/** A file that is not a regular file (a FIFO, a device, a socket, a folder), refused by {@link readBoundedRegular}. */
export class NotRegularFileError extends Error {
  readonly code = "ENOTREG";
  readonly file: string;
  /** What it is instead: `a folder`, `a FIFO`, `a device`, `a socket`. */
  readonly what: string;
  constructor(file: string, what: string) {
    super(`${file}: not a regular file (it is ${what})`);
    this.name = "NotRegularFileError";
    this.file = file;
    this.what = what;
  }
}

/**
 * As {@link readBounded}, for regular files only: a FIFO, a device, a socket
 * or a folder is refused ({@link NotRegularFileError}) before a byte of it is
 * read. The file is opened non-blocking, so a FIFO with no writer does not
 * hold the open (a blocking open of one waits for a writer); a regular file
 * reads the same either way. For files a document names, which the reader
 * did not choose (the desktop app reading a scenario's `eml:` files).
 */
export async function readBoundedRegular(file: string, kind: ReadKind | string, limit?: number): Promise<Buffer> {
  const max = limit ?? (READ_LIMITS as Record<string, number>)[kind];
  if (max === undefined) throw new RangeError(`no read limit for ${kind}`);
  // O_NONBLOCK is POSIX; Windows has no FIFOs to open this way and no such flag (undefined there).
  const handle = await open(file, constants.O_RDONLY | ((constants as { O_NONBLOCK?: number }).O_NONBLOCK ?? 0));
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      const what = stat.isDirectory()
        ? "a folder"
        : stat.isFIFO()
          ? "a FIFO"
          : stat.isSocket()
            ? "a socket"
            : stat.isCharacterDevice() || stat.isBlockDevice()
              ? "a device"
              : "not a file";
      throw new NotRegularFileError(file, what);
    }
    return await readHandle(handle, stat, file, kind, max);
  } finally {
    await handle.close();
  }
}

/** Reads an open file piece by piece, at most `max` bytes (one more tells that there were more). */
async function readHandle(handle: FileHandle, stat: Stats, file: string, kind: string, max: number): Promise<Buffer> {
  if (stat.isFile() && stat.size > max) throw new FileTooLargeError(file, max, kind);
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte past the limit tells a file of exactly `max` bytes from a larger one.
    const want = Math.min(CHUNK, max + 1 - total);
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buffer, 0, want, null);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === want ? buffer : buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) throw new FileTooLargeError(file, max, kind);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/** {@link readBounded} as UTF-8 text. */
export async function readBoundedText(file: string, kind: ReadKind | string, limit?: number): Promise<string> {
  return (await readBounded(file, kind, limit)).toString("utf8");
}

/**
 * Why a read failed, in words, without the file's name: `no such file`, `it
 * is a folder`, `larger than 65536 bytes (the limit for keys)`, else the
 * system's message.
 */
export function readErrorReason(error: unknown): string {
  if (error instanceof FileTooLargeError) return `larger than ${error.limit} bytes (the limit for ${error.kind})`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "it is a folder";
  if (code === "EACCES") return "permission denied";
  if (error instanceof NotRegularFileError) return `not a regular file (it is ${error.what})`;
  return errorMessage(error);
}
