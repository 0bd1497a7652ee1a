/**
 * Mailbox: the string form `<local-part>@<domain>` that names a sender or a
 * recipient (SPEC.md, "Mailbox (string)").
 *
 * Readings taken where the table is short (see docs/decisions):
 * - The domain is at most 253 characters: the longest name DNS can carry
 *   (RFC 1035 §3.1: 255 octets in wire form are 253 characters in text form
 *   without the root dot). RFC 5321's "255 octets" counts the same wire form.
 *   So `64 + 1 + 253 = 318` and the 320-character limit can never bind on its
 *   own; it is still checked first, as the spec lists it.
 * - "Host-name syntax" includes RFC 1123 §2.1: the last label is not
 *   all-numeric, so `1.2.3.4` written as a domain is refused. Address literals
 *   (`[1.2.3.4]`) are not host names and are refused too.
 * - "IDNA A-labels": a label starting with `xn--` must decode as Punycode
 *   (RFC 3492) to a non-ASCII, NFC string that encodes back to the same label.
 *   This is not a full IDNA2008 check (no code point tables, Bidi or ContextJ).
 *   Other labels with `--` in positions 3–4 are plain host-name labels.
 * - "Minimal" quoting means one spelling per local part: a dot-string where one
 *   will do, otherwise a quoted-string whose only backslash escapes are the
 *   ones needed (before `"` and `\`). Two spellings of one mailbox would
 *   otherwise compare as different recipients.
 * - "Characters" in the 320 limit are Unicode code points; the 64 limit is in
 *   UTF-8 octets, as the spec says.
 */
import { fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import { minOf } from "./lists.ts";

/** A mailbox as read from the wire. */
export interface Mailbox {
  /** The local part exactly as written (a quoted-string keeps its quotes and escapes). */
  readonly localPart: string;
  /** The domain, lowercased; ASCII only (A-labels). */
  readonly domain: string;
  /** `localPart@domain` with the lowercased domain: the form to compare and to send. */
  readonly address: string;
}

/** The Mailbox rules of the catalogue that a violation can name. */
const RULE = {
  form: "MBX-1",
  domain: "MBX-3",
  localPart: "MBX-4",
  nonAscii: "MBX-5",
  localPartLength: "MBX-6",
  quoting: "MBX-7",
  wholeLength: "MBX-8",
} as const satisfies Record<string, RuleId>;

export const MAX_MAILBOX_CHARACTERS = 320;
export const MAX_LOCAL_PART_OCTETS = 64;
export const MAX_DOMAIN_CHARACTERS = 253;
export const MAX_LABEL_CHARACTERS = 63;

const utf8 = new TextEncoder();

/**
 * atext of RFC 5321 with RFC 6531's UTF-8 extension, limited by the spec to
 * characters from U+00A0 upward: everything except controls, space, the
 * specials `"(),.:;<>@[\]`, DEL and the C1 controls.
 */
const ATEXT = String.raw`[^\x00-\x20"(),.:;<>@\[\\\]\x7F-\x9F]`;
/** qtextSMTP (RFC 5321 §4.1.2, RFC 6531 §3.3): printable ASCII but `"` and `\`, plus U+00A0 upward. */
const QTEXT = String.raw`[^\x00-\x1F"\\\x7F-\x9F]`;
/** quoted-pairSMTP: a backslash before printable ASCII only (RFC 6531 does not extend it). */
const QUOTED_PAIR = String.raw`\\[\x20-\x7E]`;
const DOT_STRING = `${ATEXT}+(?:\\.${ATEXT}+)*`;
const QUOTED_STRING = `"(?:${QTEXT}|${QUOTED_PAIR})*"`;
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

const DOT_STRING_RE = new RegExp(`^${DOT_STRING}$`, "u");
const QUOTED_STRING_RE = new RegExp(`^${QUOTED_STRING}$`, "u");
const ATEXT_RE = new RegExp(`^${ATEXT}$`, "u");
const QTEXT_RE = new RegExp(`^${QTEXT}$`, "u");
const LABEL_RE = /^[A-Za-z0-9-]+$/;
const NON_ASCII_RE = /[\u0080-\u{10FFFF}]/u;

/**
 * The character pattern of a mailbox, for JSON Schema. Like the spec's own
 * pattern it cannot see the octet limit, minimal quoting, A-label validity
 * or the numeric last label; {@link parseMailbox} checks those.
 */
export const MAILBOX_PATTERN = `^(?:${DOT_STRING}|${QUOTED_STRING})@${LABEL}(?:\\.${LABEL})*$`;

/**
 * Reads a mailbox. Splits at the last `@`, checks the local part (dot-string
 * or quoted-string, at most 64 octets, minimal quoting), the domain (host-name
 * syntax in A-labels) and the whole length. Every violation names its MBX rule.
 */
export function parseMailbox(input: unknown, path = "$"): Parsed<Mailbox> {
  // A valid mailbox parses the same wherever it stands (only violations carry the path), and a
  // delivery reads the same addresses more than once: valid ones are remembered, a bounded few.
  if (typeof input === "string") {
    const known = validMailboxes.get(input);
    if (known !== undefined) return known;
  }
  const parsed = parseMailboxUncached(input, path);
  if (parsed.ok && typeof input === "string") {
    if (validMailboxes.size >= VALID_MAILBOXES_KEPT) validMailboxes.clear();
    validMailboxes.set(input, parsed);
  }
  return parsed;
}

const VALID_MAILBOXES_KEPT = 1024;
const validMailboxes = new Map<string, Parsed<Mailbox>>();

function parseMailboxUncached(input: unknown, path: string): Parsed<Mailbox> {
  if (typeof input !== "string") {
    return fail({ path, rule: RULE.form, message: `a mailbox is a string, not ${describe(input)}` });
  }
  const violations: Violation[] = [];
  const characters = [...input].length;
  if (characters > MAX_MAILBOX_CHARACTERS) {
    violations.push({
      path,
      rule: RULE.wholeLength,
      message: `the mailbox is ${characters} characters long; at most ${MAX_MAILBOX_CHARACTERS} are allowed`,
    });
  }
  if (!input.isWellFormed()) {
    // A lone surrogate has no UTF-8 form, so it cannot travel in JSON text at all.
    violations.push({
      path,
      rule: RULE.form,
      message: "the mailbox contains a lone UTF-16 surrogate, which has no UTF-8 form",
    });
    return failWith(violations);
  }
  const at = input.lastIndexOf("@");
  if (at < 0) {
    violations.push({
      path,
      rule: RULE.form,
      message: 'a mailbox has the form <local-part>@<domain>; there is no "@"',
    });
    return failWith(violations);
  }
  const localPart = input.slice(0, at);
  const domain = input.slice(at + 1);
  for (const message of localPartProblems(localPart)) violations.push({ path, ...message });
  for (const message of domainProblems(domain)) violations.push({ path, rule: RULE.domain, message });
  if (violations.length > 0) return failWith(violations);
  const lower = domain.toLowerCase();
  return ok({ localPart, domain: lower, address: `${localPart}@${lower}` });
}

/**
 * The minimal form of a local part: the dot-string when the content is one,
 * otherwise a quoted-string that escapes only `"` and `\`. The input is read as
 * written when it is a quoted-string, otherwise as the bare content. Content a
 * local part cannot hold (controls, C1 characters, non-ASCII after a needed
 * escape cannot occur) comes back quoted and still fails {@link parseMailbox}.
 */
export function minimalLocalPart(localPart: string): string {
  const content = QUOTED_STRING_RE.test(localPart) ? unquote(localPart) : localPart;
  if (DOT_STRING_RE.test(content)) return content;
  return `"${content.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** `local@domain` with the local part in its minimal form and the domain lowercased. */
export function formatMailbox(localPart: string, domain: string): string {
  return `${minimalLocalPart(localPart)}@${domain.toLowerCase()}`;
}

/** The lowercased domain of a mailbox, or `undefined` when the string is not a valid mailbox. */
export function mailboxDomain(address: string): string | undefined {
  const parsed = parseMailbox(address);
  return parsed.ok ? parsed.value.domain : undefined;
}

/** Two mailboxes name the same recipient: domains compare without case (DNS), local parts exactly (RFC 5321 §2.4). */
export function sameMailbox(a: Mailbox, b: Mailbox): boolean {
  return a.domain === b.domain && a.localPart === b.localPart;
}

/** The content of a quoted-string: quotes removed, each quoted-pair replaced by its character. */
function unquote(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\([\x20-\x7E])/g, "$1");
}

function localPartProblems(localPart: string): Finding[] {
  const problems: Finding[] = [];
  const octets = utf8.encode(localPart).length;
  if (octets > MAX_LOCAL_PART_OCTETS) {
    problems.push({
      rule: RULE.localPartLength,
      message: `the local part is ${octets} octets long in UTF-8; at most ${MAX_LOCAL_PART_OCTETS} are allowed`,
    });
  }
  if (localPart.startsWith('"')) {
    if (!QUOTED_STRING_RE.test(localPart)) {
      problems.push(quotedStringError(localPart));
      return problems;
    }
    const minimal = minimalLocalPart(localPart);
    if (minimal !== localPart) {
      problems.push({
        rule: RULE.quoting,
        message: `the local part ${localPart} is not in its minimal form; write it as ${minimal}`,
      });
    }
    return problems;
  }
  if (!DOT_STRING_RE.test(localPart)) {
    problems.push(dotStringError(localPart));
  }
  return problems;
}

type Finding = { rule: RuleId; message: string };

/** A character below U+00A0 that is not ASCII breaks MBX-5; anything else breaks the grammar, MBX-4. */
function badCharacter(ch: string, where: string): Finding {
  const code = ch.codePointAt(0) ?? 0;
  if (code >= 0x80 && code < 0xa0) {
    return {
      rule: RULE.nonAscii,
      message: `${where} contains ${showChar(ch)}; non-ASCII characters are allowed only from U+00A0 upward`,
    };
  }
  return { rule: RULE.localPart, message: `${where} contains ${showChar(ch)}, which is not allowed there` };
}

function dotStringError(localPart: string): Finding {
  const grammar = (message: string): Finding => ({ rule: RULE.localPart, message });
  if (localPart === "") return grammar("the local part is empty");
  if (localPart.startsWith(".")) return grammar("the local part starts with a dot");
  if (localPart.endsWith(".")) return grammar("the local part ends with a dot");
  if (localPart.includes("..")) return grammar("the local part has two dots in a row");
  for (const ch of localPart) {
    if (ch !== "." && !ATEXT_RE.test(ch)) return badCharacter(ch, "the local part (not quoted)");
  }
  return grammar("the local part is not a dot-string");
}

function quotedStringError(localPart: string): Finding {
  const grammar = (message: string): Finding => ({ rule: RULE.localPart, message });
  const chars = [...localPart.slice(1)];
  let index = 0;
  while (index < chars.length) {
    const ch = chars[index] ?? "";
    if (ch === '"') {
      return grammar(
        index === chars.length - 1
          ? "the quoted-string is not valid"
          : "the local part goes on after its closing quote; a local part is one dot-string or one quoted-string",
      );
    }
    if (ch === "\\") {
      const next = chars[index + 1];
      if (next === undefined) return grammar("the quoted-string ends in a lone backslash");
      if (!/^[\x20-\x7E]$/.test(next))
        return grammar(`a backslash may only escape printable ASCII, not ${showChar(next)}`);
      index += 2;
      continue;
    }
    if (!QTEXT_RE.test(ch)) return badCharacter(ch, "the quoted-string");
    index += 1;
  }
  return grammar("the quoted-string has no closing quote");
}

function domainProblems(domain: string): string[] {
  if (domain === "") return ["the domain is empty"];
  if (domain.startsWith("[")) {
    return ["address literals such as [192.0.2.1] are not allowed; the domain must be a host name"];
  }
  if (NON_ASCII_RE.test(domain)) {
    return ["the domain contains non-ASCII characters; write internationalized labels as A-labels (xn--…)"];
  }
  const problems: string[] = [];
  if (domain.length > MAX_DOMAIN_CHARACTERS) {
    problems.push(`the domain is ${domain.length} characters long; at most ${MAX_DOMAIN_CHARACTERS} are allowed`);
  }
  const labels = domain.split(".");
  labels.forEach((label, index) => {
    const problem = labelProblem(label, index, labels.length);
    if (problem !== undefined) problems.push(problem);
  });
  const last = labels[labels.length - 1] ?? "";
  if (problems.length === 0 && /^[0-9]+$/.test(last)) {
    problems.push(
      `the last label "${last}" is all digits; a host name's top-level label is not numeric (RFC 1123 §2.1)`,
    );
  }
  return problems;
}

function labelProblem(label: string, index: number, count: number): string | undefined {
  if (label === "") {
    if (index === 0) return "the domain starts with a dot";
    if (index === count - 1) return "the domain ends with a dot";
    return "the domain has two dots in a row";
  }
  if (!LABEL_RE.test(label)) {
    const bad = [...label].find((ch) => !/[A-Za-z0-9-]/.test(ch)) ?? "";
    return `the domain label "${label}" contains ${showChar(bad)}; only letters, digits and hyphens are allowed`;
  }
  if (label.length > MAX_LABEL_CHARACTERS) {
    return `the domain label "${label}" is ${label.length} characters long; at most ${MAX_LABEL_CHARACTERS} are allowed`;
  }
  if (label.startsWith("-") || label.endsWith("-")) {
    return `the domain label "${label}" starts or ends with a hyphen`;
  }
  if (/^xn--/i.test(label) && !isALabel(label.toLowerCase())) {
    return `the domain label "${label}" starts with "xn--" but is not a valid A-label`;
  }
  return undefined;
}

/** An `xn--` label that decodes to a non-ASCII NFC string and encodes back to itself. */
function isALabel(label: string): boolean {
  const decoded = punycodeDecode(label.slice(4));
  if (decoded === undefined) return false;
  const ulabel = decoded.map((c) => String.fromCodePoint(c)).join("");
  if (!NON_ASCII_RE.test(ulabel)) return false;
  if (/[^a-z0-9\-\u00A0-\u{10FFFF}]/u.test(ulabel)) return false;
  if (ulabel.normalize("NFC") !== ulabel) return false;
  if (ulabel.startsWith("-") || ulabel.endsWith("-")) return false;
  return punycodeEncode(decoded) === label.slice(4);
}

// Punycode (RFC 3492 §5 parameters and §6 algorithms).
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;
const MAX_INT = 0x7fffffff;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

function threshold(k: number, bias: number): number {
  return k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
}

function digitValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 22;
  if (code >= 0x61 && code <= 0x7a) return code - 0x61;
  return BASE;
}

function digitChar(d: number): string {
  return String.fromCharCode(d < 26 ? 0x61 + d : d + 22);
}

function punycodeDecode(input: string): number[] | undefined {
  const output: number[] = [];
  const delimiter = input.lastIndexOf("-");
  const basicEnd = delimiter < 0 ? 0 : delimiter;
  for (let j = 0; j < basicEnd; j += 1) output.push(input.charCodeAt(j));
  let n = INITIAL_N;
  let i = 0;
  let bias = INITIAL_BIAS;
  let index = basicEnd > 0 ? basicEnd + 1 : 0;
  while (index < input.length) {
    const oldI = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (index >= input.length) return undefined;
      const digit = digitValue(input.charCodeAt(index));
      index += 1;
      if (digit >= BASE || digit > Math.floor((MAX_INT - i) / w)) return undefined;
      i += digit * w;
      const t = threshold(k, bias);
      if (digit < t) break;
      if (w > Math.floor(MAX_INT / (BASE - t))) return undefined;
      w *= BASE - t;
    }
    const points = output.length + 1;
    bias = adapt(i - oldI, points, oldI === 0);
    if (Math.floor(i / points) > MAX_INT - n) return undefined;
    n += Math.floor(i / points);
    i %= points;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    output.splice(i, 0, n);
    i += 1;
  }
  return output;
}

function punycodeEncode(codePoints: readonly number[]): string {
  let output = codePoints
    .filter((c) => c < 0x80)
    .map((c) => String.fromCharCode(c))
    .join("");
  const basic = output.length;
  let handled = basic;
  if (basic > 0) output += "-";
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < codePoints.length) {
    const m = minOf(codePoints.filter((c) => c >= n));
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of codePoints) {
      if (c < n) delta += 1;
      if (c === n) {
        let q = delta;
        for (let k = BASE; ; k += BASE) {
          const t = threshold(k, bias);
          if (q < t) break;
          output += digitChar(t + ((q - t) % (BASE - t)));
          q = Math.floor((q - t) / (BASE - t));
        }
        output += digitChar(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled += 1;
      }
    }
    delta += 1;
    n += 1;
  }
  return output;
}

function showChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  return code > 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0) ? `"${ch}" (U+${hex})` : `U+${hex}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
