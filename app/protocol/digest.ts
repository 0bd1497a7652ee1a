/**
 * Content-Digest (RFC 9530 §2): a Structured Fields Dictionary whose keys are
 * hash algorithm names and whose values are Byte Sequences holding the digest
 * of the message content. SPEC.md Authentication 1 makes it mandatory on every
 * delivery and requires the signature to cover it, so this is what binds the
 * body to the signature.
 */
import { Sha256 } from "./sha256.ts";
import { parseDictionary, serializeByteSequences } from "./structuredFields.ts";
import type { Dictionary } from "structured-headers";
import { asBufferSource, bytesEqual, fromArrayBuffer } from "./base64.ts";
import { fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import { startDigest, subtle } from "./webCrypto.ts";
import type { IncrementalDigest, IncrementalAlgorithm } from "./webCrypto.ts";
import { errorMessage } from "../errorMessage.ts";

/** The algorithms RFC 9530 §7.2 registers as "Active"; the only ones we compute or trust. */
export type DigestAlgorithm = "sha-256" | "sha-512";

/** Supported algorithms, in the order we prefer them when several are present. */
export const DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = ["sha-512", "sha-256"];

const HEADER = "Content-Digest";
/**
 * POST-5: the request header Content-Digest is required, the RFC 9530 digest of
 * the request body. It covers both a field of the wrong shape and a digest that
 * is not the body's; the verdict's `reason` tells them apart.
 */
const RULE = "POST-5" satisfies RuleId;

const WEBCRYPTO_NAME: Record<DigestAlgorithm, IncrementalAlgorithm> = { "sha-256": "SHA-256", "sha-512": "SHA-512" };
const DIGEST_LENGTH: Record<DigestAlgorithm, number> = { "sha-256": 32, "sha-512": 64 };

/** The raw digest of `body` with one algorithm, through WebCrypto. */
export async function digestBytes(algorithm: DigestAlgorithm, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return fromArrayBuffer(await subtle.digest(WEBCRYPTO_NAME[algorithm], asBufferSource(body)));
}

/** Serializes digests already computed (for example by {@link createDigester}) as a Content-Digest value. */
export function serializeContentDigest(digests: ReadonlyMap<string, Uint8Array>): string {
  return serializeByteSequences(digests);
}

/**
 * The Content-Digest field value for `body`, e.g. `sha-256=:X48E9q…BPE=:`.
 * Members appear in the order of `algorithms`; duplicates are dropped.
 */
export async function createContentDigest(
  body: Uint8Array,
  algorithms: readonly DigestAlgorithm[] = ["sha-256"],
): Promise<string> {
  const digests = new Map<string, Uint8Array>();
  for (const algorithm of algorithms) {
    if (!digests.has(algorithm)) digests.set(algorithm, await digestBytes(algorithm, body));
  }
  return serializeContentDigest(digests);
}

/**
 * Parses a Content-Digest field value into algorithm → digest bytes. Keys the
 * registry does not know (or deprecates, like `md5`) are kept, so a caller can
 * report them, but {@link verifyContentDigest} ignores them. Member parameters
 * carry no meaning in RFC 9530 and are dropped.
 *
 * Malformed: not a Structured Fields Dictionary (this includes base64 that
 * `atob` rejects, such as RFC 9530's printed `…FabDg==` typo, whose 45
 * characters are no valid base64), a member that is not a Byte Sequence, or
 * an empty dictionary (a digest field that states no digest is a wrong shape,
 * not a mismatch).
 */
export function parseContentDigest(header: string): Parsed<Map<string, Uint8Array>> {
  let dict: Dictionary;
  try {
    dict = parseDictionary(header);
  } catch (error) {
    return fail(shapeViolation(`not a Structured Fields Dictionary of byte sequences (${errorMessage(error)})`));
  }
  if (dict.size === 0) return fail(shapeViolation("names no digest"));
  const out = new Map<string, Uint8Array>();
  const problems: Violation[] = [];
  for (const [algorithm, member] of dict) {
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) {
      problems.push(shapeViolation(`member "${algorithm}" is not a byte sequence (:base64:)`));
      continue;
    }
    out.set(algorithm, fromArrayBuffer(value));
  }
  return problems.length > 0 ? failWith(problems) : ok(out);
}

/** A Content-Digest field value and what {@link parseContentDigest} made of it, so that it is parsed once. */
export interface ParsedContentDigest {
  readonly header: string;
  readonly parsed: Parsed<Map<string, Uint8Array>>;
}

/** Outcome of checking a Content-Digest field against the body it came with. */
export type DigestVerdict =
  | { readonly ok: true; readonly algorithm: DigestAlgorithm }
  | {
      readonly ok: false;
      readonly reason: "malformed" | "no-supported-algorithm" | "mismatch";
      readonly violation: Violation;
    };

/**
 * Checks `header` against `body`. Every supported algorithm present must match
 * (a single wrong digest is a mismatch even if another one is right, because
 * the sender claimed both); at least one supported algorithm must be present.
 * On success, `algorithm` is the strongest one that matched.
 *
 * `digestOf`, when given, may supply the body's digest with an algorithm (a
 * receiver hashes the body once, for this check and for its idempotency
 * record); where it gives `undefined`, the body is hashed here.
 */
export async function verifyContentDigest(
  body: Uint8Array,
  header: string,
  digestOf?: BodyDigests,
): Promise<DigestVerdict> {
  const parsed = parseContentDigest(header);
  if (!parsed.ok) {
    const first = parsed.violations[0] ?? shapeViolation("malformed");
    return { ok: false, reason: "malformed", violation: first };
  }
  return checkContentDigest(parsed.value, body, digestOf);
}

/** The body's digest with an algorithm when the caller already has it (or has it under way); `undefined` when not. */
export type BodyDigests = (algorithm: DigestAlgorithm) => Promise<Uint8Array> | undefined;

/** {@link verifyContentDigest} on a Content-Digest already parsed by {@link parseContentDigest}. */
export async function checkContentDigest(
  claimedDigests: ReadonlyMap<string, Uint8Array>,
  body: Uint8Array,
  digestOf?: BodyDigests,
): Promise<DigestVerdict> {
  const present = DIGEST_ALGORITHMS.filter((algorithm) => claimedDigests.has(algorithm));
  const best = present[0];
  if (best === undefined) {
    const names = [...claimedDigests.keys()].join(", ");
    return {
      ok: false,
      reason: "no-supported-algorithm",
      violation: {
        path: HEADER,
        rule: RULE,
        message: `no supported digest algorithm (have ${names}; need sha-256 or sha-512)`,
      },
    };
  }
  for (const algorithm of present) {
    const claimed = claimedDigests.get(algorithm);
    const actual = await (digestOf?.(algorithm) ?? digestBytes(algorithm, body));
    if (claimed === undefined || !bytesEqual(claimed, actual)) {
      const lengthNote =
        claimed !== undefined && claimed.length !== DIGEST_LENGTH[algorithm]
          ? ` (the value has ${claimed.length} bytes, a ${algorithm} digest has ${DIGEST_LENGTH[algorithm]})`
          : "";
      return {
        ok: false,
        reason: "mismatch",
        violation: {
          path: HEADER,
          rule: RULE,
          message: `${algorithm} digest does not match the body${lengthNote}`,
        },
      };
    }
  }
  return { ok: true, algorithm: best };
}

/** An incremental digest: feed the body chunk by chunk, then ask for the digest once. */
export interface Digester {
  readonly algorithm: DigestAlgorithm;
  /** Adds the next chunk. The chunk may be reused by the caller afterwards. */
  update(chunk: Uint8Array): void;
  /** The digest of everything fed so far; the digester cannot be used after this. */
  finish(): Promise<Uint8Array>;
}

/**
 * A digester that hashes each chunk as it is fed and keeps none of them, when
 * the crypto provider in use hashes `algorithm` in pieces (node:crypto's
 * SHA-256 and SHA-512 under every `mailscope` command, app/node/nodeCrypto.ts);
 * undefined otherwise, for WebCrypto has no incremental digest. A receiver
 * that must not hold a body it has not authenticated (serve, decision 0017)
 * hashes it with these or holds it.
 */
export function incrementalDigester(algorithm: DigestAlgorithm): Digester | undefined {
  const running = startDigest(WEBCRYPTO_NAME[algorithm]);
  return running === undefined ? undefined : new PiecewiseDigester(algorithm, running);
}

/**
 * An incremental digester for a body that arrives as a stream: the crypto
 * provider's ({@link incrementalDigester}) when it has one for `algorithm`.
 * Else (WebCrypto alone: a browser, a Worker, the simulator) SHA-256 is
 * computed here in plain TypeScript and needs only 64 bytes of buffer, and
 * SHA-512 buffers the chunks and hashes them at `finish()` through WebCrypto,
 * because a 64-bit SHA-512 in 32-bit JavaScript arithmetic is not worth its
 * weight where the body is held anyway (the simulator's mail store keeps it in
 * memory, and the receiver parses the multipart from memory).
 */
export function createDigester(algorithm: DigestAlgorithm): Digester {
  return (
    incrementalDigester(algorithm) ??
    (algorithm === "sha-256" ? new PiecewiseDigester(algorithm, new Sha256()) : new BufferingDigester(algorithm))
  );
}

/** A digest computed as it is fed: the crypto provider's, or the SHA-256 in TypeScript (app/protocol/sha256.ts). */
class PiecewiseDigester implements Digester {
  readonly algorithm: DigestAlgorithm;
  readonly #running: IncrementalDigest;
  #done = false;

  constructor(algorithm: DigestAlgorithm, running: IncrementalDigest) {
    this.algorithm = algorithm;
    this.#running = running;
  }

  update(chunk: Uint8Array): void {
    if (this.#done) throw new Error("digester already finished");
    this.#running.update(chunk);
  }

  finish(): Promise<Uint8Array> {
    if (this.#done) return Promise.reject(new Error("digester already finished"));
    this.#done = true;
    return Promise.resolve(this.#running.digest());
  }
}

class BufferingDigester implements Digester {
  readonly algorithm: DigestAlgorithm;
  private chunks: Uint8Array[] = [];
  private length = 0;
  private done = false;
  constructor(algorithm: DigestAlgorithm) {
    this.algorithm = algorithm;
  }
  update(chunk: Uint8Array): void {
    if (this.done) throw new Error("digester already finished");
    this.chunks.push(chunk.slice());
    this.length += chunk.length;
  }
  async finish(): Promise<Uint8Array> {
    if (this.done) throw new Error("digester already finished");
    this.done = true;
    const all = new Uint8Array(this.length);
    let at = 0;
    for (const chunk of this.chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    this.chunks = [];
    return digestBytes(this.algorithm, all);
  }
}

function shapeViolation(message: string): Violation {
  return { path: HEADER, rule: RULE, message: `Content-Digest ${message}` };
}
