/**
 * HTTP Message Signatures (RFC 9421), independent of Mailscope's profile:
 * component values, the signature base, the Signature-Input and Signature
 * fields, and signing and verifying through WebCrypto. The profile the
 * service uses on top (which components, which algorithm, where keys live)
 * is in `profile.ts`.
 *
 * What is not covered: trailers (`tr`), and request targets in absolute,
 * authority or asterisk form (`@request-target` is always path + query, the
 * origin form every request to the service uses).
 */
import {
  parseItem,
  parseList,
  serializeDictionary,
  serializeInnerList,
  serializeItem,
  serializeList,
} from "structured-headers";
import type { BareItem, Dictionary, InnerList, Item, List, Parameters } from "structured-headers";
import { asBufferSource, bytesToBase64, fromArrayBuffer } from "./base64.ts";
import { keptAnswers } from "./memo.ts";
import { parseDictionary, serializeByteSequences } from "./structuredFields.ts";
import { ProtocolError, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import { subtle } from "./webCrypto.ts";
import { errorMessage } from "../errorMessage.ts";
import { pushAll } from "./lists.ts";
import { isAscii } from "./ascii.ts";

// Rule IDs from the catalogue (rules.ts).
/** AUTH-1: every request to /v1/messages carries an RFC 9421 signature. */
const RULE_SIGNED = "AUTH-1" satisfies RuleId;
/** AUTH-5: a failed signature check (a covered component missing, unknown key, bad signature…) yields 401. */
const RULE_CHECK = "AUTH-5" satisfies RuleId;
/** POST-3 / POST-4: the Signature and Signature-Input request headers and their RFC 9421 shape. */
const RULE_SIGNATURE_HEADER = "POST-3" satisfies RuleId;
const RULE_SIGNATURE_INPUT_HEADER = "POST-4" satisfies RuleId;

const SIGNATURE_INPUT = "Signature-Input";
const SIGNATURE = "Signature";

/**
 * The parts of an HTTP message a signature can cover, as plain data, so that
 * a message can be built in a test or read from a trace without a `Request`.
 * A request has `method` and `url` (the absolute target URI); a response has
 * `status`, and `request` when components with the `req` flag are signed.
 * `headers` keeps every field line, in order, with names in any case.
 */
export interface HttpMessageView {
  readonly method?: string;
  readonly url?: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly status?: number;
  readonly request?: HttpMessageView;
}

/**
 * A view of a fetch `Request`. Fetch has already combined repeated fields
 * with ", " (RFC 9110 §5.2), which is also how RFC 9421 §2.1 combines them,
 * so nothing is lost for signing. The body is not read. `url` is the request's, when the caller has read it
 * already (a Request serializes its URL anew on every read).
 */
export function fromRequest(request: Request, url: string = request.url): HttpMessageView {
  return { method: request.method, url, headers: [...request.headers] };
}

/** A view of a fetch `Response`, with the request it answers for `req` components. */
export function fromResponse(response: Response, request?: Request | HttpMessageView): HttpMessageView {
  const view: HttpMessageView = { status: response.status, headers: [...response.headers] };
  if (request === undefined) return view;
  return { ...view, request: request instanceof Request ? fromRequest(request) : request };
}

/**
 * A covered component: a derived component (`@method`) or a lowercase field
 * name, with its parameters in the order they are serialized: booleans for
 * `sf`, `bs`, `req`, `tr`; strings for `key` and `name`.
 */
export interface ComponentIdentifier {
  readonly name: string;
  readonly params?: Readonly<Record<string, string | boolean>>;
}

/** A component as the caller may write it: `"@method"` is `{ name: "@method" }`. */
export type ComponentInput = string | ComponentIdentifier;

/** The signature parameters RFC 9421 §2.3 registers. Serialized in the order of the object's keys. */
export interface SignatureParams {
  readonly created?: number;
  readonly expires?: number;
  readonly nonce?: string;
  readonly alg?: string;
  readonly keyid?: string;
  readonly tag?: string;
}

/** The algorithms of RFC 9421 §3.3 that WebCrypto can run. */
export type SignatureAlgorithm =
  "ed25519" | "ecdsa-p256-sha256" | "ecdsa-p384-sha384" | "rsa-pss-sha512" | "rsa-v1_5-sha256" | "hmac-sha256";

/**
 * Fields whose Structured Fields type this library knows, for the `sf`
 * parameter (RFC 9421 §2.1.1 needs the type to re-serialize). `key` always
 * treats the field as a Dictionary.
 */
export const STRUCTURED_FIELD_TYPES: Readonly<Record<string, "item" | "list" | "dictionary">> = {
  "content-digest": "dictionary",
  "repr-digest": "dictionary",
  "want-content-digest": "dictionary",
  "want-repr-digest": "dictionary",
  signature: "dictionary",
  "signature-input": "dictionary",
  priority: "dictionary",
  "example-dict": "dictionary",
  "accept-ch": "list",
  "cache-status": "list",
  "proxy-status": "list",
  "client-cert-chain": "list",
  "client-cert": "item",
};

// ---------------------------------------------------------------------------
// Signature base (RFC 9421 §2.5)

type BaseFailure = {
  readonly ok: false;
  readonly kind: "missing" | "invalid";
  readonly violations: readonly Violation[];
};
type BaseResult = { readonly ok: true; readonly base: string; readonly signatureParams: string } | BaseFailure;

/**
 * The signature base of RFC 9421 §2.5 for `components` of `message` with
 * `params`: one line per component, then the `@signature-params` line, joined
 * with LF and without a trailing newline. `signatureParams` is the value that
 * goes after `label=` in Signature-Input.
 *
 * Fails (never throws) when a component is not in the message, when an
 * identifier is not valid (unknown derived component, uppercase field name,
 * repeated identifier, wrong parameters), or when a value cannot be put in a
 * base (a line break, or a character that is not an HTTP field octet).
 */
export function createSignatureBase(
  message: HttpMessageView,
  components: readonly ComponentInput[],
  params: SignatureParams,
): Parsed<{ base: string; signatureParams: string }> {
  const sfParams: Parameters = new Map();
  for (const [key, value] of Object.entries(params) as [string, BareItem | undefined][]) {
    if (value !== undefined) sfParams.set(key, value);
  }
  const problems = checkKnownParams(sfParams, "parameters");
  if (problems.length > 0) return failWith(problems);
  const result = buildSignatureBase(message, components.map(toIdentifier), sfParams);
  return result.ok ? ok({ base: result.base, signatureParams: result.signatureParams }) : failWith(result.violations);
}

const baseEncoder = new TextEncoder();

/** The bytes that are signed: the base's characters as octets (they are HTTP field octets, ASCII in practice). */
export function signatureBaseBytes(base: string): Uint8Array<ArrayBuffer> {
  // ASCII (the usual base) is the same bytes in UTF-8, which the native encoder writes at once.
  if (isAscii(base)) return baseEncoder.encode(base);
  const out = new Uint8Array(base.length);
  for (let i = 0; i < base.length; i++) out[i] = base.charCodeAt(i) & 0xff;
  return out;
}

/** Where {@link signedBytes} writes a base: one buffer for the process, reused by every signature. */
const BASE_SCRATCH = new Uint8Array(8192);

/**
 * {@link signatureBaseBytes} for a base handed straight to `subtle.sign` or `subtle.verify`, which take a copy of
 * the bytes when called (WebCrypto's "get a copy of the bytes held by", and the Node provider's one-shot calls): an
 * ASCII base is written into one reused buffer, not into a buffer of its own outside V8's heap per signature (two
 * per POST, decision 0255). The view is good only until the next call.
 */
function signedBytes(base: string): Uint8Array<ArrayBuffer> {
  if (base.length > BASE_SCRATCH.length || !isAscii(base)) return signatureBaseBytes(base);
  return BASE_SCRATCH.subarray(0, baseEncoder.encodeInto(base, BASE_SCRATCH).written);
}

function toIdentifier(component: ComponentInput): ComponentIdentifier {
  return typeof component === "string" ? { name: component } : component;
}

/**
 * The signature base of `components` of `message` with `sfParams`. `signatureParams`, when given, is the
 * inner list of these very components and parameters as serialized already (a parsed Signature-Input
 * member's {@link SignatureInputMember.signatureParams}, made by the same serialization from the same
 * items): the `@signature-params` line takes it rather than serializing them again.
 */
function buildSignatureBase(
  message: HttpMessageView,
  components: readonly ComponentIdentifier[],
  sfParams: ReadonlyMap<string, BareItem>,
  signatureParams?: string,
): BaseResult {
  const invalid: Violation[] = [];
  const missing: Violation[] = [];
  const lines: string[] = [];
  const items: Item[] = [];
  const seen = new Set<string>();
  for (const component of components) {
    const params: Parameters =
      component.params === undefined ? NO_PARAMETERS : new Map(Object.entries(component.params));
    let serialized: string;
    try {
      serialized =
        (params.size === 0 ? plainIdentifier(component.name) : undefined) ??
        fastSerializeItem(component.name, params) ??
        serializeItem(component.name, params);
    } catch (error) {
      invalid.push(
        inputViolation(`component ${JSON.stringify(component.name)} cannot be serialized: ${errorMessage(error)}`),
      );
      continue;
    }
    // Equality ignores the order of parameters (RFC 9421 §2), so compare a sorted form.
    const identity =
      params.size === 0
        ? serialized
        : serializeItem(component.name, new Map([...params].sort(([a], [b]) => (a < b ? -1 : 1))));
    if (seen.has(identity)) {
      invalid.push(inputViolation(`component ${serialized} is listed twice (RFC 9421 §2)`));
      continue;
    }
    seen.add(identity);
    const value = componentValue(message, component, serialized);
    if (!value.ok) {
      pushAll(value.kind === "missing" ? missing : invalid, value.violations);
      continue;
    }
    lines.push(`${serialized}: ${value.value}`);
    items.push([component.name, params]);
  }
  if (invalid.length > 0) return { ok: false, kind: "invalid", violations: [...invalid, ...missing] };
  if (missing.length > 0) return { ok: false, kind: "missing", violations: missing };
  let serializedParams: string;
  try {
    serializedParams =
      signatureParams ??
      fastSerializeInnerList(items, sfParams) ??
      // The library only reads the parameters it is given.
      serializeInnerList([items, sfParams as Parameters]);
  } catch (error) {
    return {
      ok: false,
      kind: "invalid",
      violations: [inputViolation(`signature parameters cannot be serialized: ${errorMessage(error)}`)],
    };
  }
  lines.push(`"@signature-params": ${serializedParams}`);
  return { ok: true, base: lines.join("\n"), signatureParams: serializedParams };
}

type ValueResult = { readonly ok: true; readonly value: string } | BaseFailure;

function componentValue(message: HttpMessageView, component: ComponentIdentifier, serialized: string): ValueResult {
  const name = component.name;
  const params = component.params ?? {};
  const bad = (text: string): ValueResult => ({
    ok: false,
    kind: "invalid",
    violations: [inputViolation(`${serialized}: ${text}`)],
  });
  const absent = (text: string): ValueResult => ({
    ok: false,
    kind: "missing",
    violations: [missingViolation(`${serialized}: ${text}`)],
  });

  for (const [key, value] of component.params === undefined ? [] : Object.entries(params)) {
    const allowed = name.startsWith("@")
      ? key === "req" || (key === "name" && name === "@query-param")
      : ["sf", "key", "bs", "req", "tr"].includes(key);
    if (!allowed) return bad(`parameter "${key}" is not defined for this component (RFC 9421 §6.5)`);
    const wantsString = key === "key" || key === "name";
    if (wantsString ? typeof value !== "string" : value !== true) {
      return bad(`parameter "${key}" must be ${wantsString ? "a string" : "a bare flag"}`);
    }
  }

  let target = message;
  if (params["req"] === true) {
    if (message.status === undefined) return bad("the req flag applies only to a response (RFC 9421 §2.4)");
    if (message.request === undefined) return absent("the request this response answers is not available");
    target = message.request;
  }

  if (name.startsWith("@")) return derivedValue(target, name, params, bad, absent);

  if (name !== name.toLowerCase()) return bad("field names must be lowercase (RFC 9421 §2.1)");
  if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name)) return bad("not a field name (RFC 9110 §5.1)");
  if (params["tr"] === true) return bad("trailer fields are not supported");
  if (params["bs"] === true && (params["sf"] === true || params["key"] !== undefined)) {
    return bad("bs cannot be combined with sf or key (RFC 9421 §2.1)");
  }
  const values = fieldValues(target, name);
  if (values.length === 0) return absent(`the message has no ${name} field`);
  // The common case: one line of visible ASCII, signed as it is (no sf, key or bs), only trimmed.
  if (values.length === 1 && component.params === undefined && PLAIN_FIELD_VALUE.test(values[0] as string)) {
    return { ok: true, value: (values[0] as string).trim() };
  }
  // RFC 9421 §2.1: strip surrounding whitespace and replace obsolete line folding with one space.
  const cleaned = values.map((v) => v.replace(/[ \t]*\r?\n[ \t]+/g, " ").trim());
  for (const v of cleaned) {
    if (/[\r\n]/.test(v)) return bad("the field value holds a line break");
    if (/[\u0100-\u{10ffff}]/u.test(v)) return bad("the field value holds a character that is not an octet");
  }
  if (params["bs"] === true) {
    const list: List = cleaned.map((v) => [signatureBaseBytes(v), new Map()]);
    return { ok: true, value: serializeList(list) };
  }
  const combined = cleaned.join(", ");
  const key = params["key"];
  if (typeof key === "string") {
    let dict: Dictionary;
    try {
      dict = parseDictionary(combined);
    } catch (error) {
      return bad(`the field is not a Structured Fields Dictionary (${errorMessage(error)})`);
    }
    const member = dict.get(key);
    if (member === undefined) return absent(`the dictionary has no member "${key}"`);
    return { ok: true, value: isInnerList(member) ? serializeInnerList(member) : serializeItem(member) };
  }
  if (params["sf"] === true) {
    const type = STRUCTURED_FIELD_TYPES[name];
    if (type === undefined) return bad("the Structured Fields type of this field is not known, so sf cannot apply");
    try {
      if (type === "dictionary") return { ok: true, value: serializeDictionary(parseDictionary(combined)) };
      if (type === "list") return { ok: true, value: serializeList(parseList(combined)) };
      return { ok: true, value: serializeItem(parseItem(combined)) };
    } catch (error) {
      return bad(`the field is not a valid Structured Fields ${type} (${errorMessage(error)})`);
    }
  }
  return { ok: true, value: combined };
}

/** The derived components of a request (RFC 9421 §2.2), other than `@status` and `@signature-params`. */
const REQUEST_COMPONENTS: ReadonlySet<string> = new Set([
  "@method",
  "@target-uri",
  "@authority",
  "@scheme",
  "@request-target",
  "@path",
  "@query",
  "@query-param",
]);

/**
 * Whether a target URI parses as an absolute URI, remembered: a sender signs, and a receiver verifies, the same
 * few target URIs on every request (URL.canParse was ~0.4 % of a fleet's CPU, decision 0235).
 */
const isAbsoluteUri = keptAnswers((url: string) => URL.canParse(url), 256, 2048);

function derivedValue(
  message: HttpMessageView,
  name: string,
  params: Readonly<Record<string, string | boolean>>,
  bad: (text: string) => ValueResult,
  absent: (text: string) => ValueResult,
): ValueResult {
  const isResponse = message.status !== undefined;
  if (name === "@status") {
    if (!isResponse) return bad("@status applies only to a response");
    const status = message.status ?? 0;
    if (!Number.isInteger(status) || status < 100 || status > 999) return bad("the status is not a three-digit code");
    return { ok: true, value: String(status) };
  }
  if (name === "@signature-params") return bad("@signature-params cannot be a covered component (RFC 9421 §2.3)");
  if (!REQUEST_COMPONENTS.has(name)) return bad("unknown derived component (RFC 9421 §2.2)");
  if (isResponse) return bad(`${name} applies to a request; use the req flag to cover it from a response`);
  if (name === "@method") {
    if (message.method === undefined || message.method === "") return absent("the message has no method");
    return { ok: true, value: message.method };
  }
  if (message.url === undefined) return absent("the message has no target URI");
  // The target URI is signed as it is; it only has to be an absolute URI, which needs no URL object.
  if (name === "@target-uri") {
    return isAbsoluteUri(message.url)
      ? { ok: true, value: message.url }
      : bad(`the target URI ${JSON.stringify(message.url)} is not an absolute URI`);
  }
  const target = targetOf(message);
  if (target === undefined) return bad(`the target URI ${JSON.stringify(message.url)} is not an absolute URI`);
  const url = target.url;
  switch (name) {
    case "@target-uri":
      return { ok: true, value: message.url };
    case "@authority":
      // WHATWG URL has already lowercased the host and dropped a default port (RFC 9110 §4.2.3).
      return { ok: true, value: url.host };
    case "@scheme":
      return { ok: true, value: url.protocol.slice(0, -1) };
    case "@request-target":
      return { ok: true, value: (url.pathname || "/") + url.search };
    case "@path":
      return { ok: true, value: url.pathname || "/" };
    case "@query":
      // An absent (or empty) query is the "?" alone (RFC 9421 §2.2.7).
      return { ok: true, value: url.search === "" ? "?" : url.search };
    default: {
      const wanted = params["name"];
      if (typeof wanted !== "string") return bad("@query-param needs a name parameter (RFC 9421 §2.2.8)");
      const matches = queryParams(target).get(wanted) ?? [];
      if (matches.length === 0) return absent(`the query has no parameter named ${JSON.stringify(wanted)}`);
      if (matches.length > 1) {
        return bad(
          `the query parameter ${JSON.stringify(wanted)} occurs more than once and must not be signed this way (RFC 9421 §2.2.8)`,
        );
      }
      return { ok: true, value: formEncode(matches[0] ?? "") };
    }
  }
}

/**
 * The "percent-encode after encoding" of a query name or value with the
 * application/x-www-form-urlencoded percent-encode set, spaces as %20 (the
 * RFC 9421 §2.2.8 examples show `this%20is%20a%20big%0Avalue`).
 */
function formEncode(text: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9*\-._]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Signature-Input and Signature fields (RFC 9421 §4)

/** One member of Signature-Input. */
export interface SignatureInputMember {
  readonly label: string;
  readonly components: readonly ComponentIdentifier[];
  /** The registered parameters, typed. */
  readonly params: SignatureParams;
  /** Every parameter as received, unknown ones included, in order: what the signature base serializes. */
  readonly rawParams: ReadonlyMap<string, BareItem>;
  /** The member value re-serialized, i.e. the `@signature-params` value. */
  readonly signatureParams: string;
}

/**
 * Parses a Signature-Input field value: a Dictionary whose members are Inner
 * Lists of component identifiers (Strings) with signature parameters.
 * Registered parameters must have their registered types (`created` and
 * `expires` Integers, the others Strings).
 */
export function parseSignatureInput(header: string): Parsed<Map<string, SignatureInputMember>> {
  let dict: Dictionary;
  try {
    dict = parseDictionary(header);
  } catch (error) {
    return fail(inputViolation(`not a Structured Fields Dictionary (${errorMessage(error)})`));
  }
  if (dict.size === 0) return fail(inputViolation("has no signature"));
  const out = new Map<string, SignatureInputMember>();
  const problems: Violation[] = [];
  for (const [label, member] of dict) {
    if (!isInnerList(member)) {
      problems.push(inputViolation(`member "${label}" is not an inner list of components`));
      continue;
    }
    const [items, rawParams] = member;
    const components: ComponentIdentifier[] = [];
    for (const [value, itemParams] of items) {
      if (typeof value !== "string") {
        problems.push(inputViolation(`member "${label}": a component identifier must be a string`));
        continue;
      }
      const record: Record<string, string | boolean> = {};
      for (const [key, paramValue] of itemParams) {
        if (typeof paramValue !== "string" && typeof paramValue !== "boolean") {
          problems.push(
            inputViolation(`member "${label}": parameter "${key}" of "${value}" must be a string or a flag`),
          );
          continue;
        }
        record[key] = paramValue;
      }
      components.push(itemParams.size === 0 ? { name: value } : { name: value, params: record });
    }
    const paramProblems = checkKnownParams(rawParams, label);
    pushAll(problems, paramProblems);
    if (paramProblems.length > 0) continue;
    out.set(label, {
      label,
      components,
      params: typedParams(rawParams),
      rawParams,
      signatureParams: fastSerializeInnerList(items, rawParams) ?? serializeInnerList(member),
    });
  }
  return problems.length > 0 ? failWith(problems) : ok(out);
}

/** Serializes members into a Signature-Input field value, in order. */
export function serializeSignatureInput(
  members: readonly {
    readonly label: string;
    readonly components: readonly ComponentInput[];
    readonly params: SignatureParams;
  }[],
): Parsed<string> {
  const dict: Dictionary = new Map();
  for (const member of members) {
    const items: Item[] = member.components
      .map(toIdentifier)
      .map((c) => [c.name, new Map(Object.entries(c.params ?? {}))]);
    const params: Parameters = new Map();
    for (const [key, value] of Object.entries(member.params) as [string, BareItem | undefined][]) {
      if (value !== undefined) params.set(key, value);
    }
    const problems = checkKnownParams(params, member.label);
    if (problems.length > 0) return failWith(problems);
    dict.set(member.label, [items, params]);
  }
  try {
    return ok(serializeDictionary(dict));
  } catch (error) {
    return fail(inputViolation(`cannot be serialized: ${errorMessage(error)}`));
  }
}

/** Parses a Signature field value: a Dictionary of Byte Sequences, one per label. */
export function parseSignature(header: string): Parsed<Map<string, Uint8Array>> {
  let dict: Dictionary;
  try {
    dict = parseDictionary(header);
  } catch (error) {
    return fail(signatureViolation(`not a Structured Fields Dictionary (${errorMessage(error)})`));
  }
  if (dict.size === 0) return fail(signatureViolation("has no signature"));
  const out = new Map<string, Uint8Array>();
  const problems: Violation[] = [];
  for (const [label, member] of dict) {
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) {
      problems.push(signatureViolation(`member "${label}" is not a byte sequence (:base64:)`));
      continue;
    }
    out.set(label, fromArrayBuffer(value));
  }
  return problems.length > 0 ? failWith(problems) : ok(out);
}

/** Serializes label → signature bytes into a Signature field value. */
export function serializeSignature(signatures: ReadonlyMap<string, Uint8Array>): string {
  return serializeByteSequences(signatures);
}

function checkKnownParams(params: Parameters, where: string): Violation[] {
  const problems: Violation[] = [];
  for (const [key, value] of params) {
    if (key === "created" || key === "expires") {
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
        problems.push(inputViolation(`${where}: ${key} must be a non-negative integer (RFC 9421 §2.3)`));
      }
    } else if (["nonce", "alg", "keyid", "tag"].includes(key) && typeof value !== "string") {
      problems.push(inputViolation(`${where}: ${key} must be a string (RFC 9421 §2.3)`));
    }
  }
  return problems;
}

function typedParams(params: ReadonlyMap<string, BareItem>): SignatureParams {
  const out: { -readonly [K in keyof SignatureParams]: SignatureParams[K] } = {};
  for (const [key, value] of params) {
    if ((key === "created" || key === "expires") && typeof value === "number") out[key] = value;
    if ((key === "nonce" || key === "alg" || key === "keyid" || key === "tag") && typeof value === "string")
      out[key] = value;
  }
  return out;
}

function isInnerList(member: Item | InnerList): member is InnerList {
  return Array.isArray(member[0]);
}

// ---------------------------------------------------------------------------
// Algorithms (RFC 9421 §3.3) on WebCrypto

interface WebCryptoAlgorithm {
  readonly alg: SignatureAlgorithm;
  readonly params: AlgorithmIdentifier | EcdsaParams | RsaPssParams;
}

/**
 * The RFC 9421 algorithm a WebCrypto key implies, and the parameters to sign
 * or verify with it; `undefined` for a key no registered algorithm fits
 * (for example RSA-PSS with SHA-256, or ECDSA on P-521).
 */
export function signatureAlgorithmOfKey(key: CryptoKey): SignatureAlgorithm | undefined {
  return webCryptoAlgorithm(key)?.alg;
}

function webCryptoAlgorithm(key: CryptoKey): WebCryptoAlgorithm | undefined {
  const algorithm = key.algorithm as KeyAlgorithm & { namedCurve?: string; hash?: { name?: string } };
  const hash = algorithm.hash?.name;
  switch (algorithm.name) {
    case "Ed25519":
      return { alg: "ed25519", params: { name: "Ed25519" } };
    case "ECDSA":
      if (algorithm.namedCurve === "P-256")
        return { alg: "ecdsa-p256-sha256", params: { name: "ECDSA", hash: "SHA-256" } };
      if (algorithm.namedCurve === "P-384")
        return { alg: "ecdsa-p384-sha384", params: { name: "ECDSA", hash: "SHA-384" } };
      return undefined;
    case "RSA-PSS":
      // RFC 9421 §3.3.1: SHA-512, MGF1 with SHA-512, salt length 64.
      return hash === "SHA-512" ? { alg: "rsa-pss-sha512", params: { name: "RSA-PSS", saltLength: 64 } } : undefined;
    case "RSASSA-PKCS1-v1_5":
      return hash === "SHA-256" ? { alg: "rsa-v1_5-sha256", params: { name: "RSASSA-PKCS1-v1_5" } } : undefined;
    case "HMAC":
      return hash === "SHA-256" ? { alg: "hmac-sha256", params: { name: "HMAC" } } : undefined;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Signing

/** What {@link signRequest} needs. `created` is seconds since the epoch, passed in (the core reads no clock). */
export interface SignOptions {
  readonly key: CryptoKey;
  readonly keyid: string;
  readonly label?: string;
  readonly components: readonly ComponentInput[];
  /** Left out of the parameters when undefined (the profile requires it, G2: for testing a receiver that must refuse). */
  readonly created: number | undefined;
  readonly expires?: number;
  readonly nonce?: string;
  readonly alg?: SignatureAlgorithm;
  readonly tag?: string;
}

/** The result of {@link signRequest}. */
export interface SignedFields {
  /** This signature's Signature-Input member, `label=(…);created=…`. */
  readonly signatureInput: string;
  /** This signature's Signature member, `label=:…:`. */
  readonly signature: string;
  /** The message's headers with both members added (after any signatures already there). */
  readonly headers: Headers;
}

/**
 * Signs `request` (RFC 9421 §3.1). Parameters are written in the order
 * created, expires, keyid, alg, nonce, tag, which reproduces the RFC's
 * examples. The algorithm is the one the key implies; `alg` is written only
 * when given, and must agree with the key.
 *
 * @throws ProtocolError when the request cannot be signed as asked (a covered
 * component is missing, the label is taken, the key fits no algorithm): these
 * are mistakes of the signer's own code, not bad input from a peer.
 */
export async function signRequest(request: Request | HttpMessageView, options: SignOptions): Promise<SignedFields> {
  const view = request instanceof Request ? fromRequest(request) : request;
  const { signatureInput, signature } = await signatureFields(view, options);
  const headers = new Headers(view.headers as [string, string][]);
  headers.append(SIGNATURE_INPUT, signatureInput);
  headers.append(SIGNATURE, signature);
  return { signatureInput, signature, headers };
}

/**
 * {@link signRequest} without the Headers: this signature's Signature-Input
 * and Signature members, for a caller that puts them on its message itself
 * (the sender, on the one Request it sends).
 *
 * @throws ProtocolError as {@link signRequest}.
 */
export async function signatureFields(
  view: HttpMessageView,
  options: SignOptions,
): Promise<{ readonly signatureInput: string; readonly signature: string }> {
  const label = options.label ?? "sig1";
  const algorithm = webCryptoAlgorithm(options.key);
  if (algorithm === undefined)
    throw new ProtocolError([checkViolation(`the key (${options.key.algorithm.name}) fits no RFC 9421 algorithm`)]);
  if (options.alg !== undefined && options.alg !== algorithm.alg) {
    throw new ProtocolError([checkViolation(`alg "${options.alg}" does not match the key, which is ${algorithm.alg}`)]);
  }
  const params: SignatureParams = {
    ...(options.created !== undefined ? { created: options.created } : {}),
    ...(options.expires !== undefined ? { expires: options.expires } : {}),
    keyid: options.keyid,
    ...(options.alg !== undefined ? { alg: options.alg } : {}),
    ...(options.nonce !== undefined ? { nonce: options.nonce } : {}),
    ...(options.tag !== undefined ? { tag: options.tag } : {}),
  };
  const existing = fieldValues(view, "signature-input");
  if (existing.length > 0) {
    // Fetch combines repeated fields with ", ", as Headers would have.
    const parsed = parseSignatureInput(existing.map((v) => v.trim()).join(", "));
    if (parsed.ok && parsed.value.has(label)) {
      throw new ProtocolError([inputViolation(`the label "${label}" is already used in Signature-Input`)]);
    }
  }
  const base = createSignatureBase(view, options.components, params);
  if (!base.ok) throw new ProtocolError(base.violations);
  const signatureBytes = fromArrayBuffer(
    await subtle.sign(algorithm.params, options.key, signedBytes(base.value.base)),
  );
  const signatureInput = `${label}=${base.value.signatureParams}`;
  const signature = serializeSignature(new Map([[label, signatureBytes]]));
  return { signatureInput, signature };
}

// ---------------------------------------------------------------------------
// Verifying

/** Why a signature did not verify. */
export type VerificationFailure =
  | "no-signature"
  | "malformed"
  | "label-not-found"
  | "missing-component"
  | "expired"
  | "unknown-key"
  | "unsupported-key"
  | "algorithm-mismatch"
  | "algorithm-not-allowed"
  | "bad-signature";

/** The verdict of {@link verifyRequestSignature}, with what the signature claimed. */
export type VerificationResult =
  | {
      readonly ok: true;
      readonly label: string;
      readonly components: readonly ComponentIdentifier[];
      readonly params: SignatureParams;
      readonly algorithm: SignatureAlgorithm;
      /** The signature base that verified, for a trace or an inspector. */
      readonly base: string;
    }
  | {
      readonly ok: false;
      readonly reason: VerificationFailure;
      readonly label?: string;
      readonly components?: readonly ComponentIdentifier[];
      readonly params?: SignatureParams;
      readonly base?: string;
      readonly violations: readonly Violation[];
    };

/** What {@link verifyRequestSignature} needs. */
export interface VerifyOptions {
  /** The signature to check; default: the first member of Signature-Input. */
  readonly label?: string;
  /**
   * The key for a keyid (and the alg parameter when present); `undefined` if
   * none is known. A key at hand may be returned as it is, without a promise:
   * the verification then starts before this function first yields.
   */
  readonly keyLookup: (
    keyid: string | undefined,
    alg?: string,
  ) => Promise<CryptoKey | undefined> | CryptoKey | undefined;
  /** Algorithms the verifier accepts; default: all of {@link SignatureAlgorithm}. */
  readonly algorithms?: readonly SignatureAlgorithm[];
  /** The verifier's clock in seconds since the epoch, to reject an `expires` in the past (RFC 9421 §3.2 step 6). */
  readonly nowS?: number;
  /**
   * Signature-Input and Signature as a caller already parsed them
   * ({@link parseSignatureFields}); used when they were parsed from the very
   * field values this message has, so they are not parsed again.
   */
  readonly parsedFields?: ParsedSignatureFields;
}

/** Signature-Input and Signature field values with what their parsers made of them. */
export interface ParsedSignatureFields {
  readonly input: string;
  readonly signature: string;
  readonly inputs: Parsed<Map<string, SignatureInputMember>>;
  readonly signatures: Parsed<Map<string, Uint8Array>>;
}

/** Parses a Signature-Input and a Signature field value once, for every check that needs them. */
export function parseSignatureFields(input: string, signature: string): ParsedSignatureFields {
  return { input, signature, inputs: parseSignatureInput(input), signatures: parseSignature(signature) };
}

/** The parsed fields when they were parsed from exactly these values; otherwise they are parsed now. */
export function signatureFieldsFor(
  input: string,
  signature: string,
  known: ParsedSignatureFields | undefined,
): ParsedSignatureFields {
  return known !== undefined && known.input === input && known.signature === signature
    ? known
    : parseSignatureFields(input, signature);
}

/**
 * Verifies one signature of a request or response (RFC 9421 §3.2): picks the
 * label, rebuilds the signature base from the message and the member's
 * components and parameters, looks up the key, checks that the key, the `alg`
 * parameter and the accepted algorithms agree, and verifies. Never throws on
 * bad input; the verdict says which step failed.
 */
export async function verifyRequestSignature(
  message: Request | Response | HttpMessageView,
  options: VerifyOptions,
): Promise<VerificationResult> {
  const view =
    message instanceof Request ? fromRequest(message) : message instanceof Response ? fromResponse(message) : message;
  const inputHeader = headerValue(view, SIGNATURE_INPUT);
  const signatureHeader = headerValue(view, SIGNATURE);
  if (inputHeader === undefined && signatureHeader === undefined) {
    return {
      ok: false,
      reason: "no-signature",
      violations: [checkViolation("the message carries no Signature-Input and no Signature", RULE_SIGNED)],
    };
  }
  if (inputHeader === undefined) return { ok: false, reason: "malformed", violations: [inputViolation("is missing")] };
  if (signatureHeader === undefined)
    return { ok: false, reason: "malformed", violations: [signatureViolation("is missing")] };
  const { inputs, signatures } = signatureFieldsFor(inputHeader, signatureHeader, options.parsedFields);
  if (!inputs.ok || !signatures.ok) {
    return {
      ok: false,
      reason: "malformed",
      violations: [...(inputs.ok ? [] : inputs.violations), ...(signatures.ok ? [] : signatures.violations)],
    };
  }
  const label = options.label ?? [...inputs.value.keys()][0] ?? "";
  const member = inputs.value.get(label);
  if (member === undefined) {
    return {
      ok: false,
      reason: "label-not-found",
      label,
      violations: [inputViolation(`has no signature labelled "${label}"`)],
    };
  }
  const claimed = { label, components: member.components, params: member.params };
  const signature = signatures.value.get(label);
  if (signature === undefined) {
    return {
      ok: false,
      reason: "malformed",
      ...claimed,
      violations: [signatureViolation(`has no member "${label}", which Signature-Input names`)],
    };
  }
  // The member's components and parameters were serialized when Signature-Input was parsed: not again here.
  const built = buildSignatureBase(view, member.components, member.rawParams, member.signatureParams);
  if (!built.ok) {
    return {
      ok: false,
      reason: built.kind === "missing" ? "missing-component" : "malformed",
      ...claimed,
      violations: built.violations,
    };
  }
  const withBase = { ...claimed, base: built.base };
  const expires = member.params.expires;
  if (options.nowS !== undefined && expires !== undefined && expires < options.nowS) {
    return {
      ok: false,
      reason: "expired",
      ...withBase,
      violations: [checkViolation(`the signature expired at ${expires}, before ${options.nowS}`)],
    };
  }
  const lookedUp = options.keyLookup(member.params.keyid, member.params.alg);
  const key = isPromiseLike(lookedUp) ? await lookedUp : lookedUp;
  if (key === undefined) {
    return {
      ok: false,
      reason: "unknown-key",
      ...withBase,
      violations: [checkViolation(`no key is known for keyid ${JSON.stringify(member.params.keyid ?? null)}`)],
    };
  }
  const algorithm = webCryptoAlgorithm(key);
  if (algorithm === undefined) {
    return {
      ok: false,
      reason: "unsupported-key",
      ...withBase,
      violations: [checkViolation(`the key (${key.algorithm.name}) fits no RFC 9421 algorithm`)],
    };
  }
  if (member.params.alg !== undefined && member.params.alg !== algorithm.alg) {
    return {
      ok: false,
      reason: "algorithm-mismatch",
      ...withBase,
      violations: [
        checkViolation(
          `alg "${member.params.alg}" does not match the key, which is ${algorithm.alg} (RFC 9421 §3.2 step 7)`,
        ),
      ],
    };
  }
  if (options.algorithms !== undefined && !options.algorithms.includes(algorithm.alg)) {
    return {
      ok: false,
      reason: "algorithm-not-allowed",
      ...withBase,
      violations: [
        checkViolation(`${algorithm.alg} is not accepted here (accepted: ${options.algorithms.join(", ")})`),
      ],
    };
  }
  let valid: boolean;
  try {
    valid = await subtle.verify(algorithm.params, key, asBufferSource(signature), signedBytes(built.base));
  } catch {
    // A key without the "verify" usage, or a signature WebCrypto cannot even read: not valid either way.
    valid = false;
  }
  if (!valid) {
    return {
      ok: false,
      reason: "bad-signature",
      ...withBase,
      violations: [
        checkViolation(
          `the ${algorithm.alg} signature ${bytesToBase64(signature).slice(0, 16)}… does not verify over the signature base`,
        ),
      ],
    };
  }
  return { ok: true, ...withBase, algorithm: algorithm.alg };
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

/**
 * The value of the field `name` (any case) in `view`: its lines' values
 * trimmed and combined with ", " (RFC 9110 §5.2); `undefined` when absent.
 */
export function headerValue(view: HttpMessageView, name: string): string | undefined {
  const lowerName = name.toLowerCase();
  const fields = view.headers;
  if (fields.length <= FIELDS_WALKED) {
    // The usual message: its few fields walked for the one line of the field, no list made for it.
    let only: string | undefined;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] as readonly [string, string];
      if (!sameFieldName(field[0], lowerName)) continue;
      if (only !== undefined) return combinedValue(fieldValues(view, lowerName));
      only = field[1];
    }
    return only?.trim();
  }
  const values = fieldValues(view, lowerName);
  return values.length === 0 ? undefined : combinedValue(values);
}

/** A field's lines trimmed and combined with ", " (RFC 9110 §5.2). */
function combinedValue(values: readonly string[]): string {
  return values.length === 1 ? (values[0] as string).trim() : values.map((v) => v.trim()).join(", ");
}

/** Whether the field name `name` (any case) is `lowerName` (lowercase). */
function sameFieldName(name: string, lowerName: string): boolean {
  return name.length === lowerName.length && (name === lowerName || name.toLowerCase() === lowerName);
}

/**
 * The values of the field `lowerName` (lowercase) in `view`, in order, as the
 * lines have them. One pass over the lines, without copies of the list.
 */
function fieldValues(view: HttpMessageView, lowerName: string): readonly string[] {
  if (view.headers.length > FIELDS_WALKED) return fieldIndex(view).get(lowerName) ?? [];
  const out: string[] = [];
  for (const [name, value] of view.headers) {
    if (sameFieldName(name, lowerName)) out.push(value);
  }
  return out;
}

/**
 * Up to this many header fields, a component's values are found by walking them; past it, in an index
 * built once per message, so that many components over many fields cost linear time.
 */
const FIELDS_WALKED = 16;

/** What the components of one message share, computed once for all of them: one signature may cover thousands. */
interface MessageIndex {
  /** The target URI parsed, or `null` when it is not an absolute URI. */
  target?: Target | null;
  fields?: ReadonlyMap<string, readonly string[]>;
}

interface Target {
  readonly url: URL;
  /** The query's parameters by form-encoded name (RFC 9421 §2.2.8), their values as decoded. */
  query?: ReadonlyMap<string, readonly string[]>;
}

const messageIndexes = new WeakMap<HttpMessageView, MessageIndex>();

function messageIndexOf(view: HttpMessageView): MessageIndex {
  let index = messageIndexes.get(view);
  if (index === undefined) {
    index = {};
    messageIndexes.set(view, index);
  }
  return index;
}

function fieldIndex(view: HttpMessageView): ReadonlyMap<string, readonly string[]> {
  const index = messageIndexOf(view);
  if (index.fields === undefined) {
    const fields = new Map<string, string[]>();
    for (const [name, value] of view.headers) {
      const lower = name.toLowerCase();
      const values = fields.get(lower);
      if (values === undefined) fields.set(lower, [value]);
      else values.push(value);
    }
    index.fields = fields;
  }
  return index.fields;
}

/** The message's target URI as a URL, parsed once; `undefined` when it is not an absolute URI. */
function targetOf(view: HttpMessageView): Target | undefined {
  const index = messageIndexOf(view);
  if (index.target === undefined) {
    try {
      index.target = { url: new URL(view.url ?? "") };
    } catch {
      index.target = null;
    }
  }
  return index.target ?? undefined;
}

/** RFC 9421 §2.2.8: the query parsed as application/x-www-form-urlencoded, by the name percent-encoded again. */
function queryParams(target: Target): ReadonlyMap<string, readonly string[]> {
  if (target.query === undefined) {
    const query = new Map<string, string[]>();
    for (const [name, value] of new URLSearchParams(target.url.search)) {
      const key = formEncode(name);
      const values = query.get(key);
      if (values === undefined) query.set(key, [value]);
      else values.push(value);
    }
    target.query = query;
  }
  return target.query;
}

/** A field value of visible ASCII, spaces and tabs only: nothing for RFC 9421 §2.1 to unfold or refuse. */
const PLAIN_FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/** Parameters of a component that has none, shared (never written). */
const NO_PARAMETERS: Parameters = new Map();

/**
 * The serialized identifier of a component `name` without parameters
 * (`"content-type"`), when it is a String of plain characters; kept, since
 * the same few names recur.
 */
const plainIdentifier = keptAnswers((name: string) => fastBareItem(name), 256);

// ---------------------------------------------------------------------------

function inputViolation(message: string): Violation {
  return { path: SIGNATURE_INPUT, rule: RULE_SIGNATURE_INPUT_HEADER, message: `Signature-Input ${message}` };
}

function signatureViolation(message: string): Violation {
  return { path: SIGNATURE, rule: RULE_SIGNATURE_HEADER, message: `Signature ${message}` };
}

function missingViolation(message: string): Violation {
  return { path: SIGNATURE_INPUT, rule: RULE_CHECK, message: `covered component not in the message: ${message}` };
}

function checkViolation(message: string, rule: string = RULE_CHECK): Violation {
  return { path: SIGNATURE, rule, message };
}

const SF_ASCII = /^[\x20-\x7E]*$/;
const SF_KEY = /^[a-z*][*\-_.a-z0-9]*$/;
/** What a String item escapes (RFC 8941 §4.1.6); most hold neither, and are quoted as they are. */
const QUOTE_OR_BACKSLASH = /["\\]/;

/**
 * RFC 8941 serialization of the common inner list (string items; string, integer
 * and boolean parameters), exactly as structured-headers writes it; `undefined`
 * for anything else, which the library serializes (or rejects). Exported for
 * the test that pins it to the library.
 */
export function fastSerializeInnerList(
  items: readonly Item[],
  params: ReadonlyMap<string, BareItem>,
): string | undefined {
  let out = "(";
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    const name = typeof item[0] === "string" ? plainIdentifier(item[0]) : fastBareItem(item[0]);
    const itemParams = fastParameters(item[1]);
    if (name === undefined || itemParams === undefined) return undefined;
    out += i === 0 ? name + itemParams : ` ${name}${itemParams}`;
  }
  const listParams = fastParameters(params);
  return listParams === undefined ? undefined : `${out})${listParams}`;
}

function fastParameters(params: ReadonlyMap<string, BareItem>): string | undefined {
  let out = "";
  for (const [key, value] of params) {
    if (!SF_KEY.test(key)) return undefined;
    if (value === true) {
      out += `;${key}`;
      continue;
    }
    const bare = fastBareItem(value);
    if (bare === undefined) return undefined;
    out += `;${key}=${bare}`;
  }
  return out;
}

function fastBareItem(value: BareItem): string | undefined {
  if (typeof value === "string") {
    if (!SF_ASCII.test(value)) return undefined;
    return QUOTE_OR_BACKSLASH.test(value) ? `"${value.replace(/("|\\)/g, (v) => `\\${v}`)}"` : `"${value}"`;
  }
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= -999999999999999 && value <= 999999999999999
      ? value.toString()
      : undefined;
  }
  if (value === false) return "?0";
  if (value === true) return "?1";
  return undefined;
}

function fastSerializeItem(value: BareItem, params: Parameters): string | undefined {
  const bare = fastBareItem(value);
  const serializedParams = bare === undefined ? undefined : fastParameters(params);
  return serializedParams === undefined ? undefined : `${bare}${serializedParams}`;
}
