/**
 * The JSON resources of SPEC.md ("Resources and their fields"): Envelope,
 * DeliveryResult, RecipientResult, Capabilities and Problem.
 *
 * Each resource has a zod schema of its wire form (the source of the JSON
 * Schemas in `schemas/protocol/`) and a parse function that returns the value
 * or violations, each with a JSONPath and a rule ID. Unknown members are
 * dropped (ENV-9, DLR-4, CAP-17, PRB-7, VER-3). Mailbox fields are checked by
 * `parseMailbox`, so their violations carry MBX rules.
 *
 * Some breaches are tolerated by the spec or a gap reading rather than fatal:
 * a result entry without `problem` (G15), a DeliveryResult that does not
 * follow `to` (G25), a problem member of the wrong type (RFC 9457 §3.1). A
 * lenient parse (the default: the sender's reading) keeps them as `notes` on
 * the value; `{ strict: true }` (conformance checks) turns them into
 * violations.
 */
import { SPEC_CONSTANTS } from "./specConstants.ts";
import * as z from "zod";
import { MAILBOX_PATTERN, parseMailbox, sameMailbox } from "./mailbox.ts";
import type { Mailbox } from "./mailbox.ts";
import { childPath, fail, failWith, ok } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";
import type { RuleId } from "./rules.ts";
import type { ProblemIdentifier } from "./errors.ts";
import { noWork } from "./work.ts";
import type { WorkMeter } from "./work.ts";
import { errorMessage } from "../errorMessage.ts";
import { pushAll } from "./lists.ts";
import { keptAnswers } from "./memo.ts";

// ── Values ────────────────────────────────────────────────────────────────

/** The envelope of one delivery (part 1 of the POST body). */
export interface Envelope {
  /** `null` is the null reverse-path, used for DSNs (ENV-3). */
  readonly from: Mailbox | null;
  readonly to: readonly Mailbox[];
}

export type RecipientStatus = "accepted" | "rejected" | "deferred";

/** One entry of a DeliveryResult. */
export interface RecipientResult {
  readonly recipient: Mailbox;
  /** The status as the sender must read it: an unknown value reads as `deferred` (RCP-3). */
  readonly status: RecipientStatus;
  /** The status string exactly as the receiver sent it. */
  readonly statusAsSent: string;
  readonly problem?: Problem;
  /** Seconds, as sent; only meaningful with `deferred` (RCP-6). */
  readonly retry_after?: number;
  /** Tolerated breaches, e.g. RCP-4 when a non-accepted entry has no problem (read per G15). */
  readonly notes: readonly Violation[];
}

/** The 200 answer to a POST. */
export interface DeliveryResult {
  readonly results: readonly RecipientResult[];
  /** Tolerated breaches of this document and its entries (DLR-2/DLR-3 per G25, RCP-4 per G15, PRB-3). */
  readonly notes: readonly Violation[];
}

/** A receiver's capabilities document, with the spec's defaults applied. */
export interface Capabilities {
  /** Default `["v1"]` (CAP-4). */
  readonly versions: readonly string[];
  readonly max_message_size: number;
  /** Default 100 (CAP-9). */
  readonly max_recipients: number;
  /** As advertised; use {@link effectivePinMaxAgeS} for the value a sender applies. */
  readonly discovery_pin_max_age?: number;
  readonly abuse_contact?: string;
}

/** An RFC 9457 problem details object with the members SPEC.md names. */
export interface Problem {
  readonly type: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly instance?: string;
  readonly versions?: readonly string[];
  /** Members of the wrong type, ignored per RFC 9457 §3.1 (PRB-3). */
  readonly notes: readonly Violation[];
}

export interface ParseOptions {
  /** Report tolerated breaches as violations instead of notes (for conformance checks). */
  readonly strict?: boolean;
}

export interface EnvelopeOptions {
  /** The receiver's advertised `max_recipients`; default 100 (ENV-8, CAP-9). */
  readonly maxRecipients?: number;
  /** When given, a non-null `from` must be in this domain (ENV-2, AUTH-4). */
  readonly signingDomain?: string;
  /** Counts the steps of work done on the input (tests bound them per byte). */
  readonly work?: WorkMeter;
}

// ── Constants ─────────────────────────────────────────────────────────────

export const DEFAULT_VERSIONS: readonly string[] = ["v1"];
export const DEFAULT_MAX_RECIPIENTS = 100;
export const MIN_MAX_RECIPIENTS = 100;
export const MIN_MAX_MESSAGE_SIZE = 26214400;
/**
 * The largest message Mailscope makes or reads: a scenario's `size` or `eml`,
 * what `mailscope send` sends and a bundle carries. 100 MiB, four times the
 * smallest `max_message_size` (CAP-7), so that a scenario can go over any
 * usual limit. Mailscope's bound, not the spec's.
 */
export const MAX_MESSAGE_BYTES = 4 * MIN_MAX_MESSAGE_SIZE;
/** Senders treat larger `discovery_pin_max_age` values as this (CAP-13). */
export const MAX_PIN_AGE_S = SPEC_CONSTANTS.pinMaxAgeS;
/**
 * The longest time Mailscope takes from a scenario or a receiver's configuration (a time after the start,
 * a duration, a Retry-After, a window, a delay): 2 years. The longest time the spec names is a discovery
 * pin of 31557600 s (CAP-13, LIM-11), and a delivery gives up 5 days after its first attempt (RETRY-6); a
 * scenario reaches past both with room (a message after an expired one-year pin must still be accepted).
 */
export const MAX_SPAN_S = 2 * 365 * 86_400;
/** Why {@link MAX_SPAN_S}: written after the bound in errors and in schema descriptions. */
export const MAX_SPAN_WHY =
  "2 years: past the longest time the spec names, a discovery pin of 31557600 s (CAP-13), and the 5-day give-up after it (RETRY-6)";
export const PROBLEM_MEDIA_TYPE = "application/problem+json";

const VERSION_RE = /^v[1-9][0-9]*$/;
const ABUSE_CONTACT_RE = /^mailto:[^?]+$/;

// ── Schemas (wire form) ───────────────────────────────────────────────────

/** A custom zod issue that names its rule; the mapper prefers it over the location table. */
function issue(input: unknown, rule: RuleId, message: string, path: PropertyKey[] = []) {
  return { code: "custom" as const, input, message, path, params: { rule } };
}

/** A JSON integer with no upper bound (z.int() stops at 2^53 - 1, and `max_message_size` has no upper limit). */
function integer() {
  return z
    .number()
    .check((ctx) => {
      if (!Number.isInteger(ctx.value))
        ctx.issues.push({ code: "custom", input: ctx.value, message: "not an integer", params: { integer: true } });
    })
    .meta({ type: "integer" });
}

/** Each repeated item is an issue naming the item it repeats; found in a map, so linear in the items. */
function uniqueItems(rule: RuleId) {
  return (ctx: { value: readonly string[]; issues: unknown[] }) => {
    const firstIndex = new Map<string, number>();
    ctx.value.forEach((item, index) => {
      const first = firstIndex.get(item);
      if (first === undefined) firstIndex.set(item, index);
      else ctx.issues.push(issue(item, rule, `"${item}" repeats item ${first}; items must be unique`, [index]));
    });
  };
}

/** A Mailbox string; the pattern is for JSON Schema only, `parseMailbox` does the checking. */
export const mailboxSchema = z
  .string()
  .meta({
    pattern: MAILBOX_PATTERN,
    maxLength: 320,
    description:
      "Mailbox: <local-part>@<domain>, split at the last @; at most 320 characters, local part at most 64 octets, minimal quoting.",
  })
  .check((ctx) => {
    const parsed = parseMailbox(ctx.value);
    if (!parsed.ok) for (const v of parsed.violations) ctx.issues.push(issue(ctx.value, v.rule as RuleId, v.message));
  });

/** The list and item rules come from the location tables; only uniqueness needs its rule here. */
const versionsSchema = (uniqueRule: RuleId) =>
  z.array(z.string().regex(VERSION_RE)).min(1).meta({ uniqueItems: true }).check(uniqueItems(uniqueRule));

export const envelopeSchema = z
  .object({
    from: mailboxSchema
      .nullable()
      .meta({ description: "Domain MUST equal the signing domain; null is the null reverse-path (DSNs)." }),
    to: z
      .array(mailboxSchema)
      .min(1)
      .meta({ uniqueItems: true, description: "At least 1, unique, all in one domain, at most max_recipients." }),
  })
  .meta({ title: "Envelope", description: "Part 1 of the POST /v1/messages body. Unknown fields are ignored." });

export const problemSchema = z
  .object({
    type: z
      .string()
      .meta({ format: "uri", description: "{problem_base}/<identifier>" })
      .check((ctx) => {
        if (!URL.canParse(ctx.value))
          ctx.issues.push(issue(ctx.value, "PRB-2", `"type" must be an absolute URI; "${ctx.value}" is not one`));
      }),
    title: z.string().optional(),
    status: integer().optional(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    versions: versionsSchema("PRB-6")
      .optional()
      .meta({ description: "Required in unsupported_version problems, absent otherwise." }),
  })
  .meta({
    title: "Problem",
    description: "RFC 9457 problem details (application/problem+json). Unknown fields are ignored.",
  });

export const recipientResultSchema = z
  .object({
    recipient: mailboxSchema,
    status: z.string().meta({
      description: "accepted, rejected or deferred; senders treat any unknown value as deferred.",
      examples: ["accepted", "rejected", "deferred"],
    }),
    problem: problemSchema.optional().meta({ description: "Required unless status is accepted." }),
    retry_after: integer().min(0).optional().meta({ description: "Seconds; only meaningful with deferred." }),
  })
  .meta({ title: "RecipientResult" });

export const deliveryResultSchema = z
  .object({
    results: z
      .array(recipientResultSchema)
      .meta({ description: "One entry per envelope recipient, in the order of to." }),
  })
  .meta({ title: "DeliveryResult", description: "The 200 answer to POST /v1/messages. Unknown fields are ignored." });

export const capabilitiesSchema = z
  .object({
    versions: versionsSchema("CAP-2")
      .default([...DEFAULT_VERSIONS])
      .meta({ description: "All major versions served, as URL path segments." }),
    max_message_size: integer().min(MIN_MAX_MESSAGE_SIZE).meta({ description: "Bytes; no upper limit." }),
    max_recipients: integer().min(MIN_MAX_RECIPIENTS).default(DEFAULT_MAX_RECIPIENTS),
    discovery_pin_max_age: integer()
      .min(0)
      .optional()
      .meta({ description: "Seconds; 0 or absent removes the pin; senders treat values above 31557600 as 31557600." }),
    abuse_contact: z
      .string()
      .regex(ABUSE_CONTACT_RE)
      .optional()
      .meta({ description: "One mailto: URI without header fields." }),
  })
  .meta({ title: "Capabilities", description: "GET /v1/capabilities. Unknown members are ignored." });

type WireForm = "envelope" | "capabilities" | "delivery-result" | "problem";
const wireSchemas: Readonly<Record<WireForm, z.ZodType>> = {
  envelope: envelopeSchema,
  capabilities: capabilitiesSchema,
  "delivery-result": deliveryResultSchema,
  problem: problemSchema,
};
const madeJsonSchemas = new Map<WireForm, object>();
const jsonSchemaOf = (form: WireForm): object => {
  let made = madeJsonSchemas.get(form);
  if (made === undefined) madeJsonSchemas.set(form, (made = z.toJSONSchema(wireSchemas[form], { io: "input" })));
  return made;
};

/**
 * JSON Schemas (draft 2020-12) of the wire forms, as published in `schemas/protocol/`. Each is made
 * when first read, not when this module loads: every command and every worker loads this module,
 * and only the schema generator and the tests read them.
 */
export const jsonSchemas: Readonly<Record<WireForm, object>> = {
  get envelope() {
    return jsonSchemaOf("envelope");
  },
  get capabilities() {
    return jsonSchemaOf("capabilities");
  },
  get "delivery-result"() {
    return jsonSchemaOf("delivery-result");
  },
  get problem() {
    return jsonSchemaOf("problem");
  },
};

/** The wire forms, as written and read as JSON. */
export type EnvelopeJson = z.input<typeof envelopeSchema>;
export type ProblemJson = z.input<typeof problemSchema>;
export type RecipientResultJson = z.input<typeof recipientResultSchema>;
export type DeliveryResultJson = z.input<typeof deliveryResultSchema>;
export type CapabilitiesJson = z.input<typeof capabilitiesSchema>;

// ── Issue → Violation ─────────────────────────────────────────────────────

/** Where in a resource a zod issue happened, and the rule it breaks there. */
interface Location {
  readonly rule: RuleId;
  /** What the value should be, for "must be …" messages. */
  readonly what: string;
}

/**
 * Schema location → rule. Keys are paths with array indexes written `[]`
 * (`results[].problem.type`); a key `path:code` refines one issue code
 * (`to:too_small` is ENV-5, any other issue at `to` ENV-4).
 */
type LocationTable = Readonly<Record<string, Location>>;
/** A resource's table: `""` is the resource itself, the fallback for any issue not placed more precisely. */
type ResourceTable = LocationTable & { readonly "": Location };

function nest(prefix: string, table: LocationTable): LocationTable {
  return Object.fromEntries(
    Object.entries(table).map(([key, loc]) => [
      key.startsWith(":") || key === "" ? `${prefix}${key}` : `${prefix}.${key}`,
      loc,
    ]),
  );
}

const problemFields: LocationTable = {
  type: { rule: "PRB-2", what: "a URI string" },
  title: { rule: "PRB-3", what: "a string" },
  status: { rule: "PRB-3", what: "an integer" },
  detail: { rule: "PRB-3", what: "a string" },
  instance: { rule: "PRB-3", what: "a string" },
  versions: { rule: "PRB-6", what: "a non-empty array of version strings" },
  "versions[]": { rule: "PRB-6", what: "a version string matching ^v[1-9][0-9]*$" },
};
const problemTable: ResourceTable = { "": { rule: "PRB-1", what: "a problem details object" }, ...problemFields };

const recipientFields: LocationTable = {
  recipient: { rule: "RCP-1", what: "a Mailbox string" },
  status: { rule: "RCP-2", what: "a string" },
  problem: { rule: "RCP-4", what: "a problem details object" },
  retry_after: { rule: "RCP-5", what: "an integer of at least 0" },
  ...nest("problem", problemFields),
};
const recipientTable: ResourceTable = { "": { rule: "DLR-1", what: "a RecipientResult object" }, ...recipientFields };

const deliveryTable: ResourceTable = {
  "": { rule: "DLR-1", what: "a JSON object" },
  results: { rule: "DLR-1", what: "an array of RecipientResult objects" },
  "results[]": { rule: "DLR-1", what: "a RecipientResult object" },
  ...nest("results[]", recipientFields),
};

const envelopeTable: ResourceTable = {
  "": { rule: "ENV-1", what: "a JSON object" },
  from: { rule: "ENV-1", what: "a Mailbox string or null" },
  to: { rule: "ENV-4", what: "an array of Mailbox strings" },
  "to:too_small": { rule: "ENV-5", what: "at least 1 item" },
  "to[]": { rule: "MBX-1", what: "a Mailbox string" },
};

const capabilitiesTable: ResourceTable = {
  "": { rule: "GET-3", what: "a JSON object" },
  versions: { rule: "CAP-1", what: "a non-empty array of version strings" },
  "versions[]": { rule: "CAP-3", what: "a version string matching ^v[1-9][0-9]*$" },
  max_message_size: { rule: "CAP-6", what: "an integer number of bytes" },
  "max_message_size:too_small": { rule: "CAP-7", what: `at least ${MIN_MAX_MESSAGE_SIZE}` },
  max_recipients: { rule: "CAP-8", what: "an integer of at least 100" },
  discovery_pin_max_age: { rule: "CAP-10", what: "an integer number of seconds, at least 0" },
  abuse_contact: { rule: "CAP-14", what: "one mailto: URI without header fields (^mailto:[^?]+$)" },
};

function tableKey(path: readonly PropertyKey[]): string {
  let key = "";
  for (const segment of path) {
    if (typeof segment === "number") key += "[]";
    else key += key === "" ? String(segment) : `.${String(segment)}`;
  }
  return key;
}

function jsonPath(base: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (p, segment) => childPath(p, typeof segment === "number" ? segment : String(segment)),
    base,
  );
}

function valueAt(root: unknown, path: readonly PropertyKey[]): { present: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment))
      return { present: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return { present: true, value: current };
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "the document";
  const last = path[path.length - 1];
  if (typeof last === "number") return `item ${last} of "${String(path[path.length - 2] ?? "")}"`;
  return `"${String(last)}"`;
}

function toViolations(
  issues: readonly z.core.$ZodIssue[],
  root: unknown,
  base: string,
  table: ResourceTable,
): Violation[] {
  return issues.map((i) => {
    const key = tableKey(i.path);
    const location = table[`${key}:${i.code}`] ?? table[key] ?? table[""];
    const path = jsonPath(base, i.path);
    const params = i.code === "custom" ? (i.params ?? {}) : {};
    const named = typeof params["rule"] === "string" ? (params["rule"] as RuleId) : undefined;
    return {
      path,
      rule: named ?? location.rule,
      message: named === undefined ? describeIssue(i, root, location) : i.message,
    };
  });
}

function describeIssue(i: z.core.$ZodIssue, root: unknown, location: Location): string {
  const field = fieldName(i.path);
  const { present, value } = valueAt(root, i.path);
  switch (i.code) {
    case "invalid_type":
      return present ? `${field} must be ${location.what}, not ${kindOf(value)}` : `${field} is required`;
    case "too_small":
      return i.origin === "array"
        ? `${field} must have at least ${String(i.minimum)} item${i.minimum === 1 ? "" : "s"}`
        : `${field} must be at least ${String(i.minimum)}; it is ${String(value)}`;
    case "too_big":
      return i.origin === "array"
        ? `${field} must have at most ${String(i.maximum)} items`
        : `${field} must be at most ${String(i.maximum)}`;
    case "invalid_format":
      return `${field} must be ${location.what}; ${JSON.stringify(value)} is not`;
    case "custom":
      return `${field} must be ${location.what}; ${JSON.stringify(value)} is not`;
    default:
      return `${field}: ${i.message}`;
  }
}

function safeParse<T>(schema: z.ZodType<T>, json: unknown, base: string, table: ResourceTable): Parsed<T> {
  const result = schema.safeParse(json);
  return result.success ? ok(result.data) : failWith(toViolations(result.error.issues, json, base, table));
}

function mailboxOf(address: string): Mailbox {
  const parsed = parseMailbox(address);
  if (!parsed.ok) throw new Error(`unreachable: the schema accepted an invalid mailbox ${address}`);
  return parsed.value;
}

function finish<T extends { readonly notes: readonly Violation[] }>(
  value: T,
  options: ParseOptions | undefined,
): Parsed<T> {
  return options?.strict === true && value.notes.length > 0 ? failWith(value.notes) : ok(value);
}

// ── JSON text ─────────────────────────────────────────────────────────────

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses JSON text (a string, or UTF-8 bytes). Malformed UTF-8 or JSON becomes
 * one violation at `path`, naming `rule`: the rule of the resource expected
 * there (default POST-8, part 1 of a POST; DLR-1 for a 200 body, GET-3 for
 * capabilities, PRB-1 for a problem).
 */
export function parseJson(text: string | Uint8Array, path = "$", rule: RuleId = "POST-8"): Parsed<unknown> {
  let source: string;
  if (typeof text === "string") {
    source = text;
  } else {
    try {
      source = utf8Decoder.decode(text);
    } catch {
      return fail({ path, rule, message: "the body is not valid UTF-8, so it cannot be JSON" });
    }
  }
  try {
    return ok(JSON.parse(source) as unknown);
  } catch (error) {
    const detail = errorMessage(error);
    return fail({ path, rule, message: `the body is not valid JSON: ${detail}` });
  }
}

// ── Envelope ──────────────────────────────────────────────────────────────

/**
 * Reads an Envelope (ENV-1..ENV-9): `from` a Mailbox or null, in the signing
 * domain when one is given; `to` 1 to `maxRecipients` unique Mailboxes of one
 * domain. Items are the same when their domains match without case and their
 * local parts match exactly (G22): RFC 5321 §2.4 leaves local parts
 * case-sensitive, and minimal quoting (MBX-7) leaves one spelling per local part.
 *
 * The work is linear in the input, and bounded by `maxRecipients` before any
 * of it is done per recipient: a `to` longer than that is refused on its
 * length alone (ENV-8), with only `from` read besides, so a request of a
 * million recipients costs no more than one of a hundred. Otherwise each item
 * is read once, and repeats are found by the address in a map (the
 * comparison of every item with every other held a receiver for minutes).
 * `options.work` counts the steps (see {@link WorkMeter}).
 */
export function parseEnvelope(json: unknown, options: EnvelopeOptions = {}): Parsed<Envelope> {
  const count = options.work ?? noWork;
  const max = options.maxRecipients ?? DEFAULT_MAX_RECIPIENTS;
  const raw = json !== null && typeof json === "object" ? (json as Record<string, unknown>) : {};
  const items = Array.isArray(raw["to"]) ? (raw["to"] as unknown[]) : undefined;
  count(1);
  if (items !== undefined && items.length > max) {
    const head = safeParse(envelopeFromSchema, json, "$", envelopeTable);
    const violations: Violation[] = head.ok ? [] : [...head.violations];
    pushAll(violations, fromDomainViolations(raw["from"], options.signingDomain, count));
    violations.push({
      path: "$.to",
      rule: "ENV-8",
      message: `"to" has ${items.length} recipients; this receiver takes at most ${max}`,
    });
    return failWith(violations);
  }

  // The shape (object, `from`, `to` an array of at least one item); the items are read below.
  count(items?.length ?? 0);
  const shape = safeParse(envelopeShapeSchema, json, "$", envelopeTable);
  const violations: Violation[] = shape.ok ? [] : [...shape.violations];
  const to: (Mailbox | undefined)[] = [];
  for (const [index, item] of (items ?? []).entries()) {
    const path = `$.to[${index}]`;
    if (typeof item !== "string") {
      count(1);
      const { rule, what } = envelopeTable["to[]"] ?? envelopeTable[""];
      violations.push({ path, rule, message: `${fieldName(["to", index])} must be ${what}, not ${kindOf(item)}` });
      to.push(undefined);
      continue;
    }
    count(item.length + 1);
    const mailbox = parseMailbox(item);
    if (mailbox.ok) to.push(mailbox.value);
    else {
      for (const v of mailbox.violations) violations.push({ path, rule: v.rule, message: v.message });
      to.push(undefined);
    }
  }
  pushAll(violations, fromDomainViolations(raw["from"], options.signingDomain, count));
  // The checks across items run on every item that is a valid mailbox, so one answer lists all that is wrong.
  const firstIndex = new Map<string, number>();
  let domain: string | undefined;
  to.forEach((mailbox, index) => {
    if (mailbox === undefined) return;
    count(2);
    domain ??= mailbox.domain;
    // `address` is the local part as written, `@`, the lowercased domain: equal exactly when sameMailbox is.
    const first = firstIndex.get(mailbox.address);
    if (first === undefined) firstIndex.set(mailbox.address, index);
    else {
      violations.push({
        path: `$.to[${index}]`,
        rule: "ENV-6",
        message: `${mailbox.address} repeats item ${first} of "to"; recipients must be unique`,
      });
    }
    if (mailbox.domain !== domain) {
      violations.push({
        path: `$.to[${index}]`,
        rule: "ENV-7",
        message: `${mailbox.address} is not in ${domain}; all recipients of one POST share one domain`,
      });
    }
  });
  if (!shape.ok || violations.length > 0) return failWith(violations);
  return ok({
    from: shape.value.from === null ? null : mailboxOf(shape.value.from),
    to: to.filter((m) => m !== undefined),
  });
}

/** The envelope without its recipients: `from` alone, for an envelope refused on the length of `to`. */
const envelopeFromSchema = envelopeSchema.pick({ from: true });
/** The envelope with `to` only an array of at least one item: {@link parseEnvelope} reads the items itself. */
const envelopeShapeSchema = envelopeSchema.extend({ to: z.array(z.unknown()).min(1) });

/** ENV-2: a valid `from` outside the signing domain, when one is given. */
function fromDomainViolations(value: unknown, signingDomain: string | undefined, count: WorkMeter): Violation[] {
  if (signingDomain === undefined) return [];
  const from = validMailbox(value);
  if (typeof value === "string") count(value.length + 1);
  if (from === undefined) return [];
  const signing = normalizeDomain(signingDomain);
  if (from.domain === signing) return [];
  return [
    {
      path: "$.from",
      rule: "ENV-2",
      message: `the domain of "from" is ${from.domain}, but the message was signed for ${signing}`,
    },
  ];
}

function validMailbox(value: unknown): Mailbox | undefined {
  if (typeof value !== "string") return undefined;
  const parsed = parseMailbox(value);
  return parsed.ok ? parsed.value : undefined;
}

/** The wire form of an envelope. */
export function envelopeJson(envelope: Envelope): { from: string | null; to: string[] } {
  return { from: envelope.from?.address ?? null, to: envelope.to.map((m) => m.address) };
}

function normalizeDomain(domain: string): string {
  return domain.toLowerCase().replace(/\.$/, "");
}

// ── Problem ───────────────────────────────────────────────────────────────

const STANDARD_MEMBERS: ReadonlyArray<readonly [string, (v: unknown) => boolean, string]> = [
  ["title", (v) => typeof v === "string", "a string"],
  ["status", (v) => typeof v === "number" && Number.isInteger(v), "an integer"],
  ["detail", (v) => typeof v === "string", "a string"],
  ["instance", (v) => typeof v === "string", "a string"],
];

/**
 * RFC 9457 §3.1: a standard member whose value has the wrong type is ignored
 * as if absent. Returns the object without those members and a note for each.
 */
function dropMistypedMembers(json: unknown, path: string, strict: boolean): { json: unknown; notes: Violation[] } {
  if (strict || json === null || typeof json !== "object" || Array.isArray(json)) return { json, notes: [] };
  const copy: Record<string, unknown> = { ...(json as Record<string, unknown>) };
  const notes: Violation[] = [];
  for (const [member, valid, what] of STANDARD_MEMBERS) {
    if (Object.hasOwn(copy, member) && !valid(copy[member])) {
      notes.push({
        path: childPath(path, member),
        rule: "PRB-3",
        message: `"${member}" must be ${what}, not ${kindOf(copy[member])}; ignored as RFC 9457 §3.1 says`,
      });
      delete copy[member];
    }
  }
  return { json: copy, notes };
}

function problemOf(wire: z.output<typeof problemSchema>, notes: Violation[]): Problem {
  return {
    type: wire.type,
    ...(wire.title !== undefined && { title: wire.title }),
    ...(wire.status !== undefined && { status: wire.status }),
    ...(wire.detail !== undefined && { detail: wire.detail }),
    ...(wire.instance !== undefined && { instance: wire.instance }),
    ...(wire.versions !== undefined && { versions: wire.versions }),
    notes,
  };
}

function versionsPresenceViolations(problem: Problem, problemBase: string, path: string): Violation[] {
  const identifier = problemIdentifier(problem, problemBase);
  if (identifier === "unsupported_version" && problem.versions === undefined) {
    return [
      {
        path,
        rule: "PRB-4",
        message: 'an unsupported_version problem must carry "versions", listing every major version served',
      },
    ];
  }
  if (identifier !== "unsupported_version" && problem.versions !== undefined) {
    return [
      {
        path: childPath(path, "versions"),
        rule: "PRB-5",
        message: `"versions" belongs only in unsupported_version problems, not in ${problem.type}`,
      },
    ];
  }
  return [];
}

/**
 * Reads an RFC 9457 problem (PRB-1..PRB-7). `type` must be an absolute URI;
 * any type is accepted, since senders handle unknown ones (ERR-19). With
 * `problemBase`, `versions` must be present exactly in `unsupported_version`
 * problems (PRB-4, PRB-5). Members of the wrong type are ignored (a note), or
 * refused with `{ strict: true }`.
 */
export function parseProblem(json: unknown, problemBase?: string, options?: ParseOptions): Parsed<Problem> {
  return parseProblemAt(json, "$", problemBase, options);
}

function parseProblemAt(
  json: unknown,
  path: string,
  problemBase: string | undefined,
  options: ParseOptions | undefined,
): Parsed<Problem> {
  const cleaned = dropMistypedMembers(json, path, options?.strict === true);
  const parsed = safeParse(problemSchema, cleaned.json, path, problemTable);
  if (!parsed.ok) return parsed;
  const problem = problemOf(parsed.value, cleaned.notes);
  const presence = problemBase === undefined ? [] : versionsPresenceViolations(problem, problemBase, path);
  return presence.length > 0 ? failWith(presence) : ok(problem);
}

/**
 * The identifier of a problem whose `type` is `{problem_base}/<identifier>`
 * (PRB-2), or `undefined` for a type under another base. The comparison is
 * exact; a trailing `/` on `problemBase` is allowed.
 */
export function problemIdentifier(problem: { readonly type: string }, problemBase: string): string | undefined {
  const prefix = `${problemBase.replace(/\/+$/, "")}/`;
  if (!problem.type.startsWith(prefix)) return undefined;
  const identifier = problem.type.slice(prefix.length);
  return /^[A-Za-z0-9_.~-]+$/.test(identifier) ? identifier : undefined;
}

export interface ProblemOptions {
  readonly problemBase: string;
  readonly title?: string;
  readonly detail?: string;
  readonly instance?: string;
  /** Usually left out: {@link problemResponse} writes the response status. */
  readonly status?: number;
}

/**
 * Builds a problem for a receiver to send. `versions` is required for
 * `unsupported_version` (ERR-15, PRB-4) and not allowed otherwise (PRB-5).
 */
export function createProblem<I extends ProblemIdentifier>(
  identifier: I,
  options: ProblemOptions &
    (I extends "unsupported_version" ? { readonly versions: readonly string[] } : { readonly versions?: never }),
): Problem {
  const versions: readonly string[] | undefined = "versions" in options ? options.versions : undefined;
  return {
    type: `${options.problemBase.replace(/\/+$/, "")}/${identifier}`,
    ...(options.title !== undefined && { title: options.title }),
    ...(options.status !== undefined && { status: options.status }),
    ...(options.detail !== undefined && { detail: options.detail }),
    ...(options.instance !== undefined && { instance: options.instance }),
    ...(versions !== undefined && { versions: [...versions] }),
    notes: [],
  };
}

/** The wire form of a problem: the spec's members only, in the RFC's order. */
export function problemJson(problem: Problem): ProblemJson {
  return {
    type: problem.type,
    ...(problem.title !== undefined && { title: problem.title }),
    ...(problem.status !== undefined && { status: problem.status }),
    ...(problem.detail !== undefined && { detail: problem.detail }),
    ...(problem.instance !== undefined && { instance: problem.instance }),
    ...(problem.versions !== undefined && { versions: [...problem.versions] }),
  };
}

/**
 * A problem response (`application/problem+json`). The body's `status` is set
 * to the response status, since RFC 9457 §3.1.2 wants the two to agree.
 */
export function problemResponse(
  problem: Problem,
  status: number,
  headers?: ConstructorParameters<typeof Headers>[0],
): Response {
  const responseHeaders = new Headers(headers);
  responseHeaders.set("Content-Type", PROBLEM_MEDIA_TYPE);
  return new Response(JSON.stringify({ ...problemJson(problem), status }), { status, headers: responseHeaders });
}

// ── RecipientResult and DeliveryResult ────────────────────────────────────

const STATUSES: readonly string[] = ["accepted", "rejected", "deferred"];

/**
 * Reads one RecipientResult (RCP-1..RCP-6). An unknown `status` reads as
 * `deferred` and is kept in `statusAsSent` (RCP-3). A non-accepted entry
 * without `problem` breaks RCP-4; it is kept with a note (G15 reads it as
 * `deferred` with `temporary_failure`, see `interpretRecipientResult`) or
 * refused with `{ strict: true }`.
 */
export function parseRecipientResult(json: unknown, options?: ParseOptions): Parsed<RecipientResult> {
  const parsed = parseRecipientResultAt(json, "$", options);
  return parsed.ok ? finish(parsed.value, options) : parsed;
}

function parseRecipientResultAt(
  json: unknown,
  path: string,
  options: ParseOptions | undefined,
): Parsed<RecipientResult> {
  const cleaned = cleanEntryProblem(json, path, options);
  const parsed = safeParse(recipientResultSchema, cleaned.json, path, recipientTable);
  if (!parsed.ok) return parsed;
  return ok(recipientResultOf(parsed.value, path, cleaned.notes));
}

function cleanEntryProblem(
  json: unknown,
  path: string,
  options: ParseOptions | undefined,
): { json: unknown; notes: Violation[] } {
  if (json === null || typeof json !== "object" || Array.isArray(json) || !Object.hasOwn(json, "problem"))
    return { json, notes: [] };
  const entry = json as Record<string, unknown>;
  const cleaned = dropMistypedMembers(entry["problem"], childPath(path, "problem"), options?.strict === true);
  return { json: { ...entry, problem: cleaned.json }, notes: cleaned.notes };
}

function recipientResultOf(
  wire: z.output<typeof recipientResultSchema>,
  path: string,
  problemNotes: Violation[],
): RecipientResult {
  const status: RecipientStatus = STATUSES.includes(wire.status) ? (wire.status as RecipientStatus) : "deferred";
  const notes = [...problemNotes];
  if (wire.status !== "accepted" && wire.problem === undefined) {
    notes.push({
      path,
      rule: "RCP-4",
      message: `the entry has status "${wire.status}" but no "problem"; it is read as deferred with temporary_failure (G15)`,
    });
  }
  return {
    recipient: mailboxOf(wire.recipient),
    status,
    statusAsSent: wire.status,
    ...(wire.problem !== undefined && { problem: problemOf(wire.problem, problemNotes) }),
    ...(wire.retry_after !== undefined && { retry_after: wire.retry_after }),
    notes,
  };
}

/**
 * Reads a DeliveryResult (DLR-1..DLR-4). With the envelope given, the entries
 * should answer `to` one for one, in order (DLR-2, DLR-3); a mismatch is a
 * note, since the sender matches entries by recipient (G25), or a violation
 * with `{ strict: true }`.
 */
export function parseDeliveryResult(
  json: unknown,
  envelope?: Envelope,
  options?: ParseOptions,
): Parsed<DeliveryResult> {
  const cleaned = cleanResultsProblems(json, options);
  const parsed = safeParse(deliveryResultSchema, cleaned.json, "$", deliveryTable);
  if (!parsed.ok) return parsed;
  const results = parsed.value.results.map((wire, index) =>
    recipientResultOf(wire, `$.results[${index}]`, cleaned.notesByEntry[index] ?? []),
  );
  const notes = results.flatMap((r) => r.notes);
  if (envelope !== undefined) for (const note of correspondenceNotes(results, envelope)) notes.push(note);
  return finish({ results, notes }, options);
}

/** The entries' problems without their mistyped members, and the notes of each entry, by its index. */
function cleanResultsProblems(
  json: unknown,
  options: ParseOptions | undefined,
): { json: unknown; notesByEntry: Violation[][] } {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return { json, notesByEntry: [] };
  const body = json as Record<string, unknown>;
  const results = body["results"];
  if (!Array.isArray(results)) return { json, notesByEntry: [] };
  const notesByEntry: Violation[][] = [];
  const cleaned = results.map((entry: unknown, index) => {
    const c = cleanEntryProblem(entry, `$.results[${index}]`, options);
    notesByEntry.push(c.notes);
    return c.json;
  });
  return { json: { ...body, results: cleaned }, notesByEntry };
}

/**
 * DLR-2 and DLR-3 between the entries and `to`. Mailboxes are compared by
 * `address`, which is the same exactly when {@link sameMailbox} says so, in
 * sets: linear in the entries and recipients, however many a receiver sends.
 */
function correspondenceNotes(results: readonly RecipientResult[], envelope: Envelope): Violation[] {
  const notes: Violation[] = [];
  if (results.length !== envelope.to.length) {
    notes.push({
      path: "$.results",
      rule: "DLR-2",
      message: `"results" has ${results.length} entries for ${envelope.to.length} envelope recipients; there must be one per recipient`,
    });
  }
  const answered = new Set(results.map((r) => r.recipient.address));
  const asked = new Set(envelope.to.map((m) => m.address));
  envelope.to.forEach((mailbox, index) => {
    if (!answered.has(mailbox.address)) {
      notes.push({
        path: "$.results",
        rule: "DLR-2",
        message: `no entry answers ${mailbox.address} (item ${index} of "to")`,
      });
    }
  });
  results.forEach((result, index) => {
    const expected = envelope.to[index];
    if (expected !== undefined && !sameMailbox(result.recipient, expected) && asked.has(result.recipient.address)) {
      notes.push({
        path: `$.results[${index}].recipient`,
        rule: "DLR-3",
        message: `entry ${index} answers ${result.recipient.address}, but item ${index} of "to" is ${expected.address}; entries follow the order of "to"`,
      });
    }
    if (!asked.has(result.recipient.address)) {
      notes.push({
        path: `$.results[${index}].recipient`,
        rule: "DLR-2",
        message: `${result.recipient.address} is not a recipient of this envelope`,
      });
    }
  });
  return notes;
}

/** The wire form of a recipient result, as a receiver sends it. */
export function recipientResultJson(
  result: Pick<RecipientResult, "recipient" | "statusAsSent" | "problem" | "retry_after">,
): RecipientResultJson {
  return {
    recipient: result.recipient.address,
    status: result.statusAsSent,
    ...(result.problem !== undefined && { problem: problemJson(result.problem) }),
    ...(result.retry_after !== undefined && { retry_after: result.retry_after }),
  };
}

/** One envelope recipient and the entry that answers it (G25), if any. */
export interface MatchedResult {
  readonly recipient: Mailbox;
  readonly result: RecipientResult | undefined;
}

/**
 * Pairs each recipient of `to` with its entry by recipient, not by position
 * (G25): the first entry for a recipient counts; entries for unknown
 * recipients and repeats are left over in `ignored`.
 */
export function matchResults(
  envelope: Envelope,
  delivery: DeliveryResult,
): { matched: readonly MatchedResult[]; ignored: readonly RecipientResult[] } {
  // The entries of each address, in order, and how many of them are taken: a lookup per recipient, not a search.
  const entries = new Map<string, { readonly indexes: number[]; taken: number }>();
  delivery.results.forEach((r, i) => {
    const known = entries.get(r.recipient.address);
    if (known === undefined) entries.set(r.recipient.address, { indexes: [i], taken: 0 });
    else known.indexes.push(i);
  });
  const used = new Set<number>();
  const matched = envelope.to.map((recipient) => {
    const known = entries.get(recipient.address);
    const index = known?.indexes[known.taken];
    if (known === undefined || index === undefined) return { recipient, result: undefined };
    known.taken += 1;
    used.add(index);
    return { recipient, result: delivery.results[index] };
  });
  return { matched, ignored: delivery.results.filter((_, i) => !used.has(i)) };
}

// ── Capabilities ──────────────────────────────────────────────────────────

/**
 * Reads a capabilities document (CAP-1..CAP-17) and applies the defaults:
 * `versions` `["v1"]` (CAP-4), `max_recipients` 100 (CAP-9). An invalid
 * document is handled as `temporary_failure` by the sender (GET-9).
 */
export function parseCapabilities(json: unknown): Parsed<Capabilities> {
  const parsed = safeParse(capabilitiesSchema, json, "$", capabilitiesTable);
  if (!parsed.ok) return parsed;
  const wire = parsed.value;
  return ok({
    versions: wire.versions,
    max_message_size: wire.max_message_size,
    max_recipients: wire.max_recipients,
    ...(wire.discovery_pin_max_age !== undefined && { discovery_pin_max_age: wire.discovery_pin_max_age }),
    ...(wire.abuse_contact !== undefined && { abuse_contact: wire.abuse_contact }),
  });
}

/**
 * A capabilities answer's body read as {@link parseJson} (GET-3) and
 * {@link parseCapabilities} read it. A receiver answers every GET with the
 * same document, so the reading is kept by the body's text (at most 256
 * texts of up to 4 KiB; see {@link keptAnswers}): callers share it and must
 * not change it.
 */
export function parseCapabilitiesBody(body: Uint8Array): Parsed<Capabilities> {
  let text: string;
  try {
    text = utf8Decoder.decode(body);
  } catch {
    return parseJson(body, "$", "GET-3") as Parsed<never>;
  }
  return capabilitiesOfText(text);
}

const capabilitiesOfText = keptAnswers(
  (text: string): Parsed<Capabilities> => {
    const json = parseJson(text, "$", "GET-3");
    return json.ok ? parseCapabilities(json.value) : json;
  },
  256,
  4096,
);

/**
 * The pin lifetime a sender applies, in seconds: 0 (no pin) when absent or 0
 * (CAP-11), at most 31557600 (CAP-13, LIM-11).
 */
export function effectivePinMaxAgeS(capabilities: Pick<Capabilities, "discovery_pin_max_age">): number {
  return Math.min(capabilities.discovery_pin_max_age ?? 0, MAX_PIN_AGE_S);
}
