/**
 * RFC 8941 Dictionaries, parsed quickly in the common case.
 *
 * Every signed delivery carries three Dictionary fields (Signature-Input,
 * Signature, Content-Digest), and the receiver parses each on every request.
 * `structured-headers` parses them correctly but a character at a time, with a
 * regular expression per character, which made parsing cost as much as a tenth
 * of the Ed25519 verification it precedes. {@link parseDictionary} here walks
 * the same grammar by character codes for the members these fields hold —
 * Integers, Strings, Booleans and Byte Sequences, as Items or in Inner Lists,
 * with Parameters — and hands anything else (a Decimal, a Token, a Date, a
 * Display String) and every input it finds malformed to the library, which
 * then gives its own answer or its own error. So the result is always the
 * library's: `structuredFields.test.ts` checks that on generated and broken
 * inputs. Two of those fields, a Content-Digest and a Signature, are written
 * by {@link serializeByteSequences} with the library's text, sooner.
 */
import {
  parseDictionary as libraryParseDictionary,
  serializeDictionary as librarySerializeDictionary,
} from "structured-headers";
import type { BareItem, Dictionary, InnerList, Item, Parameters } from "structured-headers";
import { asBufferSource, bytesToBase64 } from "./base64.ts";

/**
 * Parses a Dictionary field value (RFC 8941 §4.2.2), with the result and the
 * errors of `structured-headers`' `parseDictionary`.
 *
 * @throws the library's ParseError for a malformed value.
 */
export function parseDictionary(text: string): Dictionary {
  return fastDictionary(text) ?? libraryParseDictionary(text);
}

/** RFC 8941 §3.2's keys, as the library checks them. */
const KEY = /^[a-z*][*\-_.a-z0-9]*$/;

/**
 * Serializes a Dictionary of Byte Sequences without Parameters (RFC 8941
 * §4.1.2, §4.1.8) — a Content-Digest, a Signature — as `structured-headers`'
 * `serializeDictionary` does: `key=:base64:`, members joined by `, `. The
 * library builds each member's base64 a character at a time; a sender writes
 * two such fields per POST. A key the library refuses goes to the library,
 * which throws its own error.
 */
export function serializeByteSequences(members: ReadonlyMap<string, Uint8Array>): string {
  let out = "";
  for (const [key, bytes] of members) {
    if (!KEY.test(key)) {
      const dict: Dictionary = new Map();
      for (const [k, b] of members) dict.set(k, [asBufferSource(b), new Map()]);
      return librarySerializeDictionary(dict);
    }
    out += `${out === "" ? "" : ", "}${key}=:${bytesToBase64(bytes)}:`;
  }
  return out;
}

const SP = 0x20;
const HTAB = 0x09;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const SEMICOLON = 0x3b;
const OPEN = 0x28;
const CLOSE = 0x29;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const QUESTION = 0x3f;
const MINUS = 0x2d;
const STAR = 0x2a;

/** What the fast parser does not take on: the library decides. */
const DECLINE = Symbol("decline");
type Declined = typeof DECLINE;

/** Base64 characters and `=`, as the library accepts inside a Byte Sequence. */
const BASE64_CONTENT = /^[A-Za-z0-9+/=]*$/;

/** The Dictionary, or `undefined` when the library must parse it (a type not handled here, or malformed input). */
export function fastDictionary(text: string): Dictionary | undefined {
  const parser = new FastParser(text);
  const result = parser.dictionary();
  return result === DECLINE ? undefined : result;
}

class FastParser {
  readonly #text: string;
  #pos = 0;

  constructor(text: string) {
    this.#text = text;
  }

  dictionary(): Dictionary | Declined {
    const text = this.#text;
    while (text.charCodeAt(this.#pos) === SP) this.#pos++;
    const dictionary: Dictionary = new Map();
    while (this.#pos < text.length) {
      const key = this.#key();
      if (key === DECLINE) return DECLINE;
      let member: Item | InnerList | Declined;
      if (text.charCodeAt(this.#pos) === EQUALS) {
        this.#pos++;
        member = text.charCodeAt(this.#pos) === OPEN ? this.#innerList() : this.#item();
      } else {
        const params = this.#parameters();
        member = params === DECLINE ? DECLINE : [true, params];
      }
      if (member === DECLINE) return DECLINE;
      dictionary.set(key, member);
      this.#skipOws();
      if (this.#pos >= text.length) return dictionary;
      if (text.charCodeAt(this.#pos) !== COMMA) return DECLINE;
      this.#pos++;
      this.#skipOws();
      if (this.#pos >= text.length) return DECLINE; // a trailing comma
    }
    return dictionary;
  }

  #innerList(): InnerList | Declined {
    const text = this.#text;
    this.#pos++; // "("
    const items: Item[] = [];
    while (this.#pos < text.length) {
      while (text.charCodeAt(this.#pos) === SP) this.#pos++;
      if (text.charCodeAt(this.#pos) === CLOSE) {
        this.#pos++;
        const params = this.#parameters();
        return params === DECLINE ? DECLINE : [items, params];
      }
      const item = this.#item();
      if (item === DECLINE) return DECLINE;
      items.push(item);
      const next = text.charCodeAt(this.#pos);
      if (next !== SP && next !== CLOSE) return DECLINE;
    }
    return DECLINE; // no ")"
  }

  #item(): Item | Declined {
    const value = this.#bareItem();
    if (value === DECLINE) return DECLINE;
    const params = this.#parameters();
    return params === DECLINE ? DECLINE : [value, params];
  }

  #parameters(): Parameters | Declined {
    const text = this.#text;
    const params: Parameters = new Map();
    while (text.charCodeAt(this.#pos) === SEMICOLON) {
      this.#pos++;
      while (text.charCodeAt(this.#pos) === SP) this.#pos++;
      const key = this.#key();
      if (key === DECLINE) return DECLINE;
      let value: BareItem | Declined = true;
      if (text.charCodeAt(this.#pos) === EQUALS) {
        this.#pos++;
        value = this.#bareItem();
        if (value === DECLINE) return DECLINE;
      }
      params.set(key, value);
    }
    return params;
  }

  #bareItem(): BareItem | Declined {
    const c = this.#text.charCodeAt(this.#pos);
    if (c === MINUS || isDigit(c)) return this.#integer();
    if (c === DQUOTE) return this.#string();
    if (c === COLON) return this.#byteSequence();
    if (c === QUESTION) return this.#boolean();
    // A Token, a Date, a Display String, or not an item: the library's.
    return DECLINE;
  }

  /** An Integer; a Decimal is declined. */
  #integer(): number | Declined {
    const text = this.#text;
    let sign = 1;
    if (text.charCodeAt(this.#pos) === MINUS) {
      sign = -1;
      this.#pos++;
    }
    const start = this.#pos;
    while (isDigit(text.charCodeAt(this.#pos))) this.#pos++;
    const digits = this.#pos - start;
    if (digits === 0 || digits > 15 || text.charCodeAt(this.#pos) === 0x2e) return DECLINE;
    return parseInt(text.slice(start, this.#pos), 10) * sign;
  }

  #string(): string | Declined {
    const text = this.#text;
    this.#pos++; // the opening quote
    let out = "";
    let from = this.#pos;
    while (this.#pos < text.length) {
      const c = text.charCodeAt(this.#pos);
      if (c === DQUOTE) {
        out += text.slice(from, this.#pos);
        this.#pos++;
        return out;
      }
      if (c === BACKSLASH) {
        const escaped = text.charCodeAt(this.#pos + 1);
        if (escaped !== BACKSLASH && escaped !== DQUOTE) return DECLINE;
        out += text.slice(from, this.#pos);
        this.#pos += 2;
        from = this.#pos - 1; // the escaped character starts the next run
        continue;
      }
      if (c < 0x20 || c > 0x7e) return DECLINE;
      this.#pos++;
    }
    return DECLINE; // no closing quote
  }

  #byteSequence(): ArrayBuffer | Declined {
    const text = this.#text;
    const end = text.indexOf(":", this.#pos + 1);
    if (end === -1) return DECLINE;
    const content = text.slice(this.#pos + 1, end);
    this.#pos = end + 1;
    if (!BASE64_CONTENT.test(content)) return DECLINE;
    let binary: string;
    try {
      binary = atob(content);
    } catch {
      return DECLINE;
    }
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  #boolean(): boolean | Declined {
    const c = this.#text.charCodeAt(this.#pos + 1);
    this.#pos += 2;
    if (c === 0x31) return true;
    if (c === 0x30) return false;
    return DECLINE;
  }

  /** A key: `[a-z*][a-z0-9_\-.*]*`. */
  #key(): string | Declined {
    const text = this.#text;
    const start = this.#pos;
    const first = text.charCodeAt(start);
    if (!(isLowerAlpha(first) || first === STAR)) return DECLINE;
    this.#pos++;
    while (isKeyChar(text.charCodeAt(this.#pos))) this.#pos++;
    return text.slice(start, this.#pos);
  }

  #skipOws(): void {
    const text = this.#text;
    for (let c = text.charCodeAt(this.#pos); c === SP || c === HTAB; c = text.charCodeAt(this.#pos)) this.#pos++;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isLowerAlpha(c: number): boolean {
  return c >= 0x61 && c <= 0x7a;
}

function isKeyChar(c: number): boolean {
  return isLowerAlpha(c) || isDigit(c) || c === 0x5f || c === MINUS || c === 0x2e || c === STAR;
}
