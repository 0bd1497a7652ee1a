/**
 * SVCB records (RFC 9460) as the service's discovery uses them (GAPS G5): the
 * RDATA wire format, decoded and encoded, and the zone-file presentation
 * format, so that a scenario can write a record as `1 . alpn=h2 port=8443`.
 *
 * One validation path: the presentation parser and the encoder both build
 * wire bytes and hand them to {@link decodeSvcbRdata}, so a record is refused
 * for the same reasons whichever way it came in. RFC 9460 §2.2 says a client
 * MUST treat an RR as malformed when the RDATA ends inside a SvcParam, the
 * keys are not in strictly increasing order, or a value has the wrong format;
 * the self-consistency rules of §2.4.3 (every `mandatory` key present,
 * `no-default-alpn` only with `alpn`, §8 and §7.1.1) are enforced too.
 *
 * In a {@link SvcbRecord}, `port`, `alpn`, `ipv4hint` and `ipv6hint` are
 * typed; every other key goes into `other`, keyed by its presentation name:
 * `mandatory` as a comma-separated list of key names, `no-default-alpn` as
 * `""`, `ech` as base64 (its presentation form, RFC 9460 §9), and a key
 * without a name (`keyNNNNN`) as the lowercase hex of its value bytes.
 * ALPN identifiers are octet strings; they are carried as latin-1 strings (one
 * character per octet), so any identifier round-trips.
 */
import type { SvcbRecord } from "../ports.ts";
import { base64ToBytes, bytesToBase64, bytesToBinary, bytesToHex, hexToBytes } from "./base64.ts";
import { pushAll } from "./lists.ts";
import { ProtocolError, childPath, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";

/** The RR type number of SVCB (RFC 9460 §2, §14.1). */
export const SVCB_RR_TYPE = 64;

const G5 = "G5";

/** The SvcParamKeys RFC 9460 defines (§14.3.2), by number. */
const KEY_NAMES = ["mandatory", "alpn", "no-default-alpn", "port", "ipv4hint", "ech", "ipv6hint"] as const;
const MANDATORY = 0;
const ALPN = 1;
const NO_DEFAULT_ALPN = 2;
const PORT = 3;
const IPV4HINT = 4;
const ECH = 5;
const IPV6HINT = 6;
/** Key 65535 is reserved as the "Invalid key" (RFC 9460 §14.3.2). */
const INVALID_KEY = 65535;
/** RFC 1035 §3.1: a name is at most 255 octets on the wire, a label at most 63. */
const MAX_NAME_OCTETS = 255;
const MAX_LABEL_OCTETS = 63;

/** The presentation name of a SvcParamKey: its registered name, else `keyNNNNN` (RFC 9460 §2.1). */
export function svcParamKeyName(key: number): string {
  return KEY_NAMES[key] ?? `key${key}`;
}

/**
 * The number of a SvcParamKey written by name or as `keyNNNNN` (no leading
 * zeros); `undefined` for anything else, including the reserved key65535.
 */
export function svcParamKeyNumber(name: string): number | undefined {
  const known = (KEY_NAMES as readonly string[]).indexOf(name);
  if (known >= 0) return known;
  const match = /^key(0|[1-9][0-9]{0,4})$/.exec(name);
  if (match === null) return undefined;
  const key = Number(match[1]);
  return key < INVALID_KEY ? key : undefined;
}

// ---------------------------------------------------------------------------
// Wire format (RFC 9460 §2.2)

type WireParams = ReadonlyArray<readonly [key: number, value: Uint8Array]>;

interface Framed {
  readonly priority: number;
  readonly labels: readonly Uint8Array[];
  readonly params: WireParams;
}

function violation(path: string, message: string): Violation {
  return { path, rule: G5, message };
}

function u16(bytes: Uint8Array, at: number): number {
  return ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
}

/** Splits RDATA into priority, target labels and raw SvcParams; refuses what cannot be framed. */
function frame(bytes: Uint8Array): Parsed<Framed> {
  if (bytes.length < 3) {
    return fail(
      violation("$", `SVCB RDATA of ${bytes.length} bytes is too short for SvcPriority and TargetName (RFC 9460 §2.2)`),
    );
  }
  const priority = u16(bytes, 0);
  const labels: Uint8Array[] = [];
  let at = 2;
  let nameOctets = 0;
  for (;;) {
    const length = bytes[at];
    if (length === undefined) {
      return fail(violation("$.target", "the RDATA ends inside TargetName (RFC 9460 §2.2)"));
    }
    if ((length & 0xc0) === 0xc0) {
      return fail(violation("$.target", "TargetName is compressed; RFC 9460 §2.2 requires it uncompressed"));
    }
    if ((length & 0xc0) !== 0) {
      return fail(
        violation("$.target", `TargetName has a label of unknown type 0x${length.toString(16)} (RFC 1035 §4.1.4)`),
      );
    }
    nameOctets += length + 1;
    if (nameOctets > MAX_NAME_OCTETS) {
      return fail(violation("$.target", `TargetName is longer than ${MAX_NAME_OCTETS} octets (RFC 1035 §3.1)`));
    }
    at += 1;
    if (length === 0) break;
    if (at + length > bytes.length) {
      return fail(violation("$.target", "the RDATA ends inside a label of TargetName (RFC 9460 §2.2)"));
    }
    labels.push(bytes.subarray(at, at + length));
    at += length;
  }
  const params: Array<readonly [number, Uint8Array]> = [];
  let previous = -1;
  while (at < bytes.length) {
    if (at + 4 > bytes.length) {
      return fail(violation("$.params", "the RDATA ends inside a SvcParam's key or length (RFC 9460 §2.2)"));
    }
    const key = u16(bytes, at);
    const length = u16(bytes, at + 2);
    const path = childPath("$.params", svcParamKeyName(key));
    if (at + 4 + length > bytes.length) {
      return fail(
        violation(
          path,
          `the RDATA ends inside the value of ${svcParamKeyName(key)}: ${length} bytes announced, ${bytes.length - at - 4} left (RFC 9460 §2.2)`,
        ),
      );
    }
    if (key === previous) {
      return fail(violation(path, `SvcParamKey ${svcParamKeyName(key)} appears more than once (RFC 9460 §2.2)`));
    }
    if (key < previous) {
      return fail(
        violation(
          path,
          `SvcParamKey ${svcParamKeyName(key)} follows ${svcParamKeyName(previous)}: keys must be in strictly increasing order (RFC 9460 §2.2)`,
        ),
      );
    }
    params.push([key, bytes.subarray(at + 4, at + 4 + length)]);
    previous = key;
    at += 4 + length;
  }
  return ok({ priority, labels, params });
}

/** Mutable while a record is assembled. */
interface RecordFields {
  port?: number;
  alpn?: string[];
  ipv4hint?: string[];
  ipv6hint?: string[];
  other?: Record<string, string>;
}

/** Checks every SvcParam's value (RFC 9460 §7, §8, §2.4.3) and turns it into the record's fields. */
function interpret(params: WireParams): { readonly fields: RecordFields; readonly violations: readonly Violation[] } {
  const violations: Violation[] = [];
  const fields: RecordFields = {};
  const present = new Set(params.map(([key]) => key));
  const setOther = (name: string, value: string): void => {
    fields.other = { ...fields.other, [name]: value };
  };
  for (const [key, value] of params) {
    const name = svcParamKeyName(key);
    const path = childPath("$.params", name);
    const bad = (message: string): void => {
      violations.push(violation(path, message));
    };
    switch (key) {
      case MANDATORY: {
        if (value.length === 0 || value.length % 2 !== 0) {
          bad(`mandatory must list one or more keys, 2 bytes each; it has ${value.length} bytes (RFC 9460 §8)`);
          break;
        }
        const keys: number[] = [];
        for (let i = 0; i < value.length; i += 2) keys.push(u16(value, i));
        keys.forEach((listed, i) => {
          const prior = keys[i - 1];
          if (listed === MANDATORY) bad("mandatory must not list itself (RFC 9460 §8)");
          else if (prior !== undefined && listed === prior)
            bad(`mandatory lists ${svcParamKeyName(listed)} more than once (RFC 9460 §8)`);
          else if (prior !== undefined && listed < prior)
            bad(
              `mandatory lists ${svcParamKeyName(listed)} after ${svcParamKeyName(prior)}: keys must be in increasing order (RFC 9460 §8)`,
            );
          else if (!present.has(listed))
            bad(`mandatory lists ${svcParamKeyName(listed)}, which the record does not have (RFC 9460 §8)`);
        });
        setOther(name, keys.map(svcParamKeyName).join(","));
        break;
      }
      case ALPN: {
        if (value.length === 0) {
          bad("alpn must list at least one protocol identifier (RFC 9460 §7.1.1)");
          break;
        }
        const ids: string[] = [];
        let at = 0;
        while (at < value.length) {
          const length = value[at] ?? 0;
          if (length === 0) {
            bad("alpn has an empty protocol identifier (RFC 9460 §7.1.1: 1 to 255 octets)");
            break;
          }
          if (at + 1 + length > value.length) {
            bad("alpn's identifiers do not exactly fill its value (RFC 9460 §7.1.1)");
            break;
          }
          ids.push(bytesToBinary(value.subarray(at + 1, at + 1 + length)));
          at += 1 + length;
        }
        if (at === value.length) fields.alpn = ids;
        break;
      }
      case NO_DEFAULT_ALPN:
        if (value.length !== 0)
          bad(`no-default-alpn must have an empty value; it has ${value.length} bytes (RFC 9460 §7.1.1)`);
        else if (!present.has(ALPN))
          bad("no-default-alpn without alpn leaves the record no protocol (RFC 9460 §7.1.1, §2.4.3)");
        else setOther(name, "");
        break;
      case PORT:
        if (value.length !== 2) bad(`port must be 2 bytes; it has ${value.length} (RFC 9460 §7.2)`);
        else fields.port = u16(value, 0);
        break;
      case IPV4HINT:
        if (value.length === 0 || value.length % 4 !== 0) {
          bad(`ipv4hint must hold one or more 4-byte addresses; it has ${value.length} bytes (RFC 9460 §7.3)`);
        } else {
          fields.ipv4hint = chunks(value, 4).map(formatIpv4);
        }
        break;
      case ECH:
        setOther(name, bytesToBase64(value));
        break;
      case IPV6HINT:
        if (value.length === 0 || value.length % 16 !== 0) {
          bad(`ipv6hint must hold one or more 16-byte addresses; it has ${value.length} bytes (RFC 9460 §7.3)`);
        } else {
          fields.ipv6hint = chunks(value, 16).map(formatIpv6);
        }
        break;
      default:
        if (key === INVALID_KEY) bad("key65535 is reserved as the Invalid key (RFC 9460 §14.3.2)");
        else setOther(name, bytesToHex(value));
    }
  }
  return { fields, violations };
}

function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/**
 * Decodes SVCB (or HTTPS, which shares the format) RDATA (RFC 9460 §2.2). The
 * target comes back without its trailing dot, `"."` for the root (G5: the
 * owner name in ServiceMode, "no service" in AliasMode). A malformed record
 * (RFC 9460 §2.2, §2.4.3, §7, §8) is refused with every violation found; per
 * §2.2 the caller then rejects the whole RRset. SvcParams of an AliasMode
 * record are checked and kept, though RFC 9460 §2.4.2 tells the client to
 * ignore them.
 */
export function decodeSvcbRdata(bytes: Uint8Array): Parsed<SvcbRecord> {
  const framed = frame(bytes);
  if (!framed.ok) return framed;
  const { fields, violations } = interpret(framed.value.params);
  if (violations.length > 0) return failWith(violations);
  return ok({ priority: framed.value.priority, target: labelsToName(framed.value.labels), ...fields });
}

/**
 * The RDATA of a record (RFC 9460 §2.2): the target uncompressed, the params
 * sorted by key. The inverse of {@link decodeSvcbRdata}: decoding the result
 * gives the record back.
 *
 * @throws ProtocolError when the record cannot be a valid SVCB record (a bad
 * name, a port out of range, an `other` entry that is not in the form
 * described above, a `mandatory` key missing, …), with every violation.
 */
export function encodeSvcbRdata(record: SvcbRecord): Uint8Array {
  const violations: Violation[] = [];
  if (!Number.isInteger(record.priority) || record.priority < 0 || record.priority > 65535) {
    violations.push(
      violation("$.priority", `SvcPriority ${String(record.priority)} is not an integer from 0 to 65535`),
    );
  }
  const labels = nameToLabels(record.target, "$.target", violations);
  const params = new Map<number, Uint8Array>();
  if (record.port !== undefined) {
    if (!Number.isInteger(record.port) || record.port < 0 || record.port > 65535) {
      violations.push(violation("$.port", `port ${String(record.port)} is not an integer from 0 to 65535`));
    } else {
      params.set(PORT, new Uint8Array([record.port >> 8, record.port & 0xff]));
    }
  }
  if (record.alpn !== undefined) {
    const encoded = encodeAlpn(record.alpn.map(latin1Bytes), "$.alpn", violations);
    if (encoded !== undefined) params.set(ALPN, encoded);
  }
  for (const [field, key, parse, family] of [
    ["ipv4hint", IPV4HINT, parseIpv4, "IPv4"],
    ["ipv6hint", IPV6HINT, parseIpv6, "IPv6"],
  ] as const) {
    const list = record[field];
    if (list === undefined) continue;
    const addresses = list.map((text, i) => {
      const address = parse(text);
      if (address === undefined)
        violations.push(violation(childPath(`$.${field}`, i), `${JSON.stringify(text)} is not an ${family} address`));
      return address ?? new Uint8Array();
    });
    params.set(key, concat(addresses));
  }
  for (const [name, text] of Object.entries(record.other ?? {})) {
    const path = childPath("$.other", name);
    const key = svcParamKeyNumber(name);
    if (key === undefined) {
      violations.push(violation(path, `${JSON.stringify(name)} is not a SvcParamKey name or keyNNNNN`));
      continue;
    }
    if (key === PORT || key === ALPN || key === IPV4HINT || key === IPV6HINT) {
      violations.push(
        violation(path, `${svcParamKeyName(key)} belongs in the record's ${svcParamKeyName(key)} field, not in other`),
      );
      continue;
    }
    const value = otherValue(key, text, path, violations);
    if (value !== undefined) params.set(key, value);
  }
  if (violations.length > 0) throw new ProtocolError(violations);
  const bytes = assemble(record.priority, labels, params);
  const check = decodeSvcbRdata(bytes);
  if (!check.ok) throw new ProtocolError(check.violations);
  return bytes;
}

/** The wire value of an `other` entry, from the form described in the module comment. */
function otherValue(key: number, text: string, path: string, violations: Violation[]): Uint8Array | undefined {
  const bad = (message: string): undefined => {
    violations.push(violation(path, message));
    return undefined;
  };
  switch (key) {
    case MANDATORY: {
      const keys: number[] = [];
      for (const name of text.split(",")) {
        const listed = svcParamKeyNumber(name.trim());
        if (listed === undefined) return bad(`mandatory lists ${JSON.stringify(name)}, which is not a SvcParamKey`);
        keys.push(listed);
      }
      keys.sort((a, b) => a - b);
      return concat(keys.map((k) => new Uint8Array([k >> 8, k & 0xff])));
    }
    case NO_DEFAULT_ALPN:
      return text === "" ? new Uint8Array() : bad("no-default-alpn must have an empty value (RFC 9460 §7.1.1)");
    case ECH:
      return base64ToBytes(text) ?? bad("ech must be standard base64 (RFC 9460 §9)");
    default:
      return hexToBytes(text) ?? bad(`the value of ${svcParamKeyName(key)} must be hex (the bytes of the value)`);
  }
}

function encodeAlpn(
  ids: readonly (Uint8Array | undefined)[],
  path: string,
  violations: Violation[],
): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  let good = true;
  ids.forEach((id, i) => {
    if (id === undefined || id.length === 0 || id.length > 255) {
      violations.push(violation(childPath(path, i), "an ALPN identifier is 1 to 255 octets (RFC 9460 §7.1.1)"));
      good = false;
      return;
    }
    parts.push(new Uint8Array([id.length]), id);
  });
  return good ? concat(parts) : undefined;
}

function assemble(
  priority: number,
  labels: readonly Uint8Array[],
  params: ReadonlyMap<number, Uint8Array>,
): Uint8Array {
  const parts: Uint8Array[] = [new Uint8Array([priority >> 8, priority & 0xff])];
  for (const label of labels) parts.push(new Uint8Array([label.length]), label);
  parts.push(new Uint8Array([0]));
  for (const key of [...params.keys()].sort((a, b) => a - b)) {
    const value = params.get(key) ?? new Uint8Array();
    parts.push(new Uint8Array([key >> 8, key & 0xff, value.length >> 8, value.length & 0xff]), value);
  }
  return concat(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Latin-1 bytes of a string, or undefined when a character is above U+00FF. */
function latin1Bytes(text: string): Uint8Array | undefined {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) return undefined;
    out[i] = code;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Names (RFC 1035 §3.1 on the wire, §5.1 in presentation)

/** Characters of a label written as `\c` in presentation (RFC 1035 §5.1). */
const NAME_SPECIALS = new Set([".", "\\", '"', "(", ")", ";", "@", "$"]);

function labelsToName(labels: readonly Uint8Array[]): string {
  if (labels.length === 0) return ".";
  return labels
    .map((label) =>
      [...label]
        .map((b) => {
          const c = String.fromCharCode(b);
          if (b <= 0x20 || b >= 0x7f) return `\\${b.toString().padStart(3, "0")}`;
          return NAME_SPECIALS.has(c) ? `\\${c}` : c;
        })
        .join(""),
    )
    .join(".");
}

/**
 * The labels of a name in presentation form (escapes `\c` and `\DDD`), absolute
 * with or without its trailing dot; `"."` (or `""`) is the root.
 */
function nameToLabels(text: string, path: string, violations: Violation[]): Uint8Array[] {
  const bad = (message: string): Uint8Array[] => {
    violations.push(violation(path, `name ${JSON.stringify(text)} ${message}`));
    return [];
  };
  if (text === "." || text === "") return [];
  const labels: Uint8Array[] = [];
  let current: number[] = [];
  let i = 0;
  const endLabel = (): boolean => {
    if (current.length === 0) return false;
    labels.push(new Uint8Array(current));
    current = [];
    return true;
  };
  while (i < text.length) {
    const c = text[i] ?? "";
    if (c === "\\") {
      const digits = /^[0-9]{3}/.exec(text.slice(i + 1));
      if (digits !== null) {
        const value = Number(digits[0]);
        if (value > 255) return bad(`has the escape \\${digits[0]}, above 255`);
        current.push(value);
        i += 4;
        continue;
      }
      const next = text[i + 1];
      if (next === undefined) return bad("ends in a lone backslash");
      const code = next.charCodeAt(0);
      if (code > 0x7f) return bad("has a non-ASCII character; write IDNs as A-labels (xn--…)");
      current.push(code);
      i += 2;
      continue;
    }
    if (c === ".") {
      if (!endLabel()) return bad("has an empty label");
      i += 1;
      continue;
    }
    const code = c.charCodeAt(0);
    if (code > 0x7f) return bad("has a non-ASCII character; write IDNs as A-labels (xn--…)");
    current.push(code);
    i += 1;
  }
  endLabel();
  if (labels.some((l) => l.length > MAX_LABEL_OCTETS))
    return bad(`has a label longer than ${MAX_LABEL_OCTETS} octets (RFC 1035 §3.1)`);
  if (labels.reduce((n, l) => n + l.length + 1, 1) > MAX_NAME_OCTETS)
    return bad(`is longer than ${MAX_NAME_OCTETS} octets (RFC 1035 §3.1)`);
  return labels;
}

// ---------------------------------------------------------------------------
// IP addresses (RFC 9460 §7.3: "standard textual format", RFC 5952)

function formatIpv4(bytes: Uint8Array): string {
  return [...bytes].join(".");
}

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;

/** The 4 bytes of a dotted-quad IPv4 address (no leading zeros), or undefined. */
export function parseIpv4(text: string): Uint8Array | undefined {
  if (!IPV4.test(text)) return undefined;
  return new Uint8Array(text.split(".").map(Number));
}

/** The 16 bytes of an IPv6 address in any RFC 4291 §2.2 text form (no zone), or undefined. */
export function parseIpv6(text: string): Uint8Array | undefined {
  let head = text;
  let v4: Uint8Array | undefined;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split("::");
  if (halves.length > 2) return undefined;
  const group = /^[0-9A-Fa-f]{1,4}$/;
  const parse = (part: string): number[] | undefined => {
    if (part === "") return [];
    const groups = part.split(":");
    return groups.every((g) => group.test(g)) ? groups.map((g) => parseInt(g, 16)) : undefined;
  };
  const left = parse(halves[0] ?? "");
  const right = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if (left === undefined || right === undefined) return undefined;
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...left, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...right];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  if (v4 !== undefined) out.set(v4, 12);
  return out;
}

/** RFC 5952 §4 text of 16 address bytes: lowercase, no leading zeros, the longest zero run as `::`. */
export function formatIpv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(u16(bytes, i));
  // RFC 5952 §5: IPv4-mapped addresses keep the dotted quad.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatIpv4(bytes.subarray(12, 16))}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]): string => list.map((g) => g.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

// ---------------------------------------------------------------------------
// Presentation format (RFC 9460 §2.1, Appendix A; RFC 1035 §5.1)

/** Options of {@link parseSvcbPresentation}. */
export interface SvcbPresentationOptions {
  /** The origin a relative target (no trailing dot, or `@`) is completed with, as in a zone file. */
  readonly origin?: string;
}

/**
 * Parses a record in zone-file presentation form (RFC 9460 §2.1): the RDATA
 * alone (`1 . alpn=h2 port=8443`) or a whole line whose type is SVCB or HTTPS
 * (`_svc.example.com. 300 IN SVCB 1 . port=8443`). Quoted values, `\DDD` and
 * `\c` escapes, parentheses and `;` comments are understood; list values are
 * split by the value-list algorithm of Appendix A.1. Params may come in any
 * order but not twice. A target without trailing dot is completed with
 * `options.origin` when given, else read as absolute.
 */
export function parseSvcbPresentation(text: string, options: SvcbPresentationOptions = {}): Parsed<SvcbRecord> {
  const tokens = tokenize(text);
  if (!tokens.ok) return tokens;
  let rdata = tokens.value;
  // A whole zone line: the RDATA follows the type, and starts with a number.
  const typeAt = rdata
    .slice(0, 4)
    .findIndex((t, i) => /^(svcb|https|type64)$/i.test(t) && /^[0-9]+$/.test(rdata[i + 1] ?? ""));
  if (typeAt >= 0) rdata = rdata.slice(typeAt + 1);
  const [priorityText, targetText, ...paramTexts] = rdata;
  if (priorityText === undefined || targetText === undefined) {
    return fail(
      violation("$", `${JSON.stringify(text)} has no SvcPriority and TargetName (expected e.g. "1 . port=8443")`),
    );
  }
  const violations: Violation[] = [];
  const priority = /^[0-9]{1,5}$/.test(priorityText) ? Number(priorityText) : Number.NaN;
  if (!(priority <= 65535))
    violations.push(
      violation("$.priority", `SvcPriority ${JSON.stringify(priorityText)} is not a number from 0 to 65535`),
    );
  const labels = nameToLabels(absoluteName(targetText, options.origin, violations), "$.target", violations);
  const params = new Map<number, Uint8Array>();
  for (const paramText of paramTexts) {
    const eq = paramText.indexOf("=");
    const name = eq < 0 ? paramText : paramText.slice(0, eq);
    const key = svcParamKeyNumber(name);
    const path = childPath("$.params", name);
    if (key === undefined) {
      violations.push(
        violation(path, `${JSON.stringify(name)} is not a SvcParamKey (a registered name or keyNNNNN; RFC 9460 §2.1)`),
      );
      continue;
    }
    if (params.has(key)) {
      violations.push(violation(path, `SvcParamKey ${svcParamKeyName(key)} appears more than once (RFC 9460 §2.1)`));
      continue;
    }
    const raw = eq < 0 ? undefined : paramText.slice(eq + 1);
    const decoded = raw === undefined ? new Uint8Array() : decodeCharString(raw);
    if (decoded === undefined) {
      violations.push(violation(path, `the value ${raw ?? ""} is not a valid character-string (RFC 9460 Appendix A)`));
      continue;
    }
    const value = presentationValue(key, decoded, path, violations);
    if (value !== undefined) params.set(key, value);
  }
  if (violations.length > 0) return failWith(violations);
  return decodeSvcbRdata(assemble(priority, labels, params));
}

function absoluteName(text: string, origin: string | undefined, violations: Violation[]): string {
  if (text === "@") {
    if (origin !== undefined) return origin;
    violations.push(violation("$.target", "the target @ needs an origin"));
    return ".";
  }
  if (text.endsWith(".") && !text.endsWith("\\.")) return text;
  if (origin === undefined || origin === "." || origin === "") return text;
  return `${text}.${origin}`;
}

/** SvcParam keys whose value must not be empty in presentation (RFC 9460 Appendix D.3, "Missing SvcParamValues that must be nonempty"). */
const NEEDS_VALUE = new Set([MANDATORY, ALPN, PORT, IPV4HINT, IPV6HINT]);

function presentationValue(
  key: number,
  value: Uint8Array,
  path: string,
  violations: Violation[],
): Uint8Array | undefined {
  const bad = (message: string): undefined => {
    violations.push(violation(path, message));
    return undefined;
  };
  const name = svcParamKeyName(key);
  if (NEEDS_VALUE.has(key) && value.length === 0) return bad(`${name} needs a value (RFC 9460 §7, §8)`);
  const ascii = bytesToBinary(value);
  switch (key) {
    case MANDATORY: {
      const items = decodeValueList(value);
      if (items === undefined) return bad("mandatory is not a comma-separated list of keys (RFC 9460 Appendix A.1)");
      const keys: number[] = [];
      for (const item of items) {
        const listed = svcParamKeyNumber(bytesToBinary(item));
        if (listed === undefined)
          return bad(
            `mandatory lists ${JSON.stringify(bytesToBinary(item))}, which is not a SvcParamKey (RFC 9460 §8)`,
          );
        keys.push(listed);
      }
      // Any order in presentation, ascending on the wire (§8); duplicates stay adjacent and are refused by the decoder.
      keys.sort((a, b) => a - b);
      return concat(keys.map((k) => new Uint8Array([k >> 8, k & 0xff])));
    }
    case ALPN: {
      const items = decodeValueList(value);
      if (items === undefined)
        return bad("alpn is not a comma-separated list of protocol identifiers (RFC 9460 Appendix A.1)");
      return encodeAlpn(items, path, violations);
    }
    case PORT:
      if (!/^[0-9]{1,5}$/.test(ascii) || Number(ascii) > 65535)
        return bad(`port ${JSON.stringify(ascii)} is not a number from 0 to 65535 (RFC 9460 §7.2)`);
      return new Uint8Array([Number(ascii) >> 8, Number(ascii) & 0xff]);
    case IPV4HINT:
    case IPV6HINT: {
      const parse = key === IPV4HINT ? parseIpv4 : parseIpv6;
      const items = decodeValueList(value);
      const addresses = items?.map((item) => parse(bytesToBinary(item)));
      if (addresses === undefined || addresses.some((a) => a === undefined)) {
        return bad(
          `${name} ${JSON.stringify(ascii)} is not a comma-separated list of ${key === IPV4HINT ? "IPv4" : "IPv6"} addresses (RFC 9460 §7.3)`,
        );
      }
      return concat(addresses.filter((a) => a !== undefined));
    }
    case ECH:
      return base64ToBytes(ascii) ?? bad("ech must be standard base64 (RFC 9460 §9)");
    default:
      // no-default-alpn and keyNNNNN: the decoded value is the wire value (§2.1); the decoder checks no-default-alpn is empty.
      return value;
  }
}

/**
 * Splits a zone-file string into tokens (RFC 1035 §5.1): whitespace separates,
 * `"…"` quotes (kept in the token), `\` escapes the next character (kept),
 * `(` `)` group lines and `;` starts a comment.
 */
function tokenize(text: string): Parsed<string[]> {
  const tokens: string[] = [];
  let current = "";
  let inQuote = false;
  let depth = 0;
  const flush = (): void => {
    if (current !== "") tokens.push(current);
    current = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === "\\") {
      current += c + (text[i + 1] ?? "");
      i++;
      continue;
    }
    if (inQuote) {
      current += c;
      if (c === '"') inQuote = false;
      continue;
    }
    if (c === '"') {
      inQuote = true;
      current += c;
    } else if (c === ";") {
      flush();
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "(" || c === ")") {
      flush();
      depth += c === "(" ? 1 : -1;
      if (depth < 0) return fail(violation("$", "a closing parenthesis has no opening one (RFC 1035 §5.1)"));
    } else if (/\s/.test(c)) {
      flush();
    } else {
      current += c;
    }
  }
  if (inQuote) return fail(violation("$", "a quoted string is not closed (RFC 1035 §5.1)"));
  if (depth !== 0) return fail(violation("$", "a parenthesis is not closed (RFC 1035 §5.1)"));
  flush();
  return ok(tokens);
}

/**
 * RFC 9460 Appendix A: the bytes of a character-string, quoted or not, with
 * `\DDD` and `\c` escapes; non-ASCII characters as UTF-8. Undefined when malformed.
 */
function decodeCharString(raw: string): Uint8Array | undefined {
  let body = raw;
  if (raw.startsWith('"')) {
    // The closing quote must be the token's last character, not an escaped one.
    let i = 1;
    while (i < raw.length && raw[i] !== '"') i += raw[i] === "\\" ? 2 : 1;
    if (i !== raw.length - 1) return undefined;
    body = raw.slice(1, -1);
  }
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length;) {
    const c = body[i] ?? "";
    if (c === "\\") {
      const digits = /^[0-9]{3}/.exec(body.slice(i + 1));
      if (digits !== null) {
        const value = Number(digits[0]);
        if (value > 255) return undefined;
        out.push(value);
        i += 4;
        continue;
      }
      const next = body.codePointAt(i + 1);
      if (next === undefined) return undefined;
      const ch = String.fromCodePoint(next);
      pushAll(out, encoder.encode(ch));
      i += 1 + ch.length;
      continue;
    }
    if (c === '"') return undefined;
    const ch = String.fromCodePoint(body.codePointAt(i) ?? 0);
    pushAll(out, encoder.encode(ch));
    i += ch.length;
  }
  return new Uint8Array(out);
}

/** RFC 9460 Appendix A.1: a comma-separated list, `\,` and `\\` escaping inside items; undefined when malformed or an item is empty. */
function decodeValueList(value: Uint8Array): Uint8Array[] | undefined {
  const items: Uint8Array[] = [];
  let current: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const b = value[i] ?? 0;
    if (b === 0x5c) {
      const next = value[i + 1];
      if (next !== 0x2c && next !== 0x5c) return undefined;
      current.push(next);
      i++;
    } else if (b === 0x2c) {
      if (current.length === 0) return undefined;
      items.push(new Uint8Array(current));
      current = [];
    } else {
      current.push(b);
    }
  }
  if (current.length === 0) return undefined;
  items.push(new Uint8Array(current));
  return items;
}

/**
 * A record in presentation form, RDATA only (`1 . alpn=h2 port=8443`), that
 * {@link parseSvcbPresentation} reads back to the same record. The target is
 * written absolute, with its trailing dot.
 *
 * @throws ProtocolError when the record is not valid (see {@link encodeSvcbRdata}).
 */
export function formatSvcbPresentation(record: SvcbRecord): string {
  const framed = frame(encodeSvcbRdata(record));
  if (!framed.ok) throw new ProtocolError(framed.violations);
  const { priority, labels, params } = framed.value;
  const target = labels.length === 0 ? "." : `${labelsToName(labels)}.`;
  const parts = [String(priority), target];
  for (const [key, value] of params) {
    const name = svcParamKeyName(key);
    switch (key) {
      case MANDATORY:
        parts.push(`${name}=${record.other?.[name] ?? ""}`);
        break;
      case ALPN:
        parts.push(
          `${name}=${quote((record.alpn ?? []).map((id) => id.replace(/[\\,]/g, (c) => `\\${c}`)).join(","))}`,
        );
        break;
      case NO_DEFAULT_ALPN:
        parts.push(name);
        break;
      case PORT:
        parts.push(`${name}=${String(record.port)}`);
        break;
      case IPV4HINT:
      case IPV6HINT:
        parts.push(`${name}=${(key === IPV4HINT ? record.ipv4hint : record.ipv6hint)?.join(",") ?? ""}`);
        break;
      case ECH:
        parts.push(`${name}=${bytesToBase64(value)}`);
        break;
      default:
        parts.push(value.length === 0 ? name : `${name}=${quote(bytesToBinary(value))}`);
    }
  }
  return parts.join(" ");
}

/** A character-string of latin-1 text: bare when it can be, else quoted with `"` and `\` escaped and octets outside printable ASCII as `\DDD`. */
function quote(text: string): string {
  if (/^[\x21-\x7e]+$/.test(text) && !/["\\;()]/.test(text)) return text;
  let out = '"';
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (code < 0x20 || code >= 0x7f) out += `\\${code.toString().padStart(3, "0")}`;
    else out += c;
  }
  return `${out}"`;
}
