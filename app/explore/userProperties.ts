/**
 * A user's own properties of a run, in a small declarative file
 * (`mailscope explore --properties FILE`, docs/explore.md "Your own
 * properties"), over the trace's events and the recipients' outcomes:
 *
 * ```yaml
 * properties:
 *   - id: no-smtp-after-429
 *     description: no recipient goes to SMTP after a 429
 *     never: smtp.handoff
 *     after: { event: attempt.ended, status: 429 }
 *     same: actor
 *   - id: bounce-at-5-days
 *     every: delivery.bounced
 *     since: message.submitted
 *     same: message
 *     is: 5d
 *     tolerance: 1m
 *   - id: few-posts
 *     count: attempt.started
 *     per: delivery
 *     atMost: 3
 * ```
 *
 * A selector is an event name, or `{ event, <field>: value | [values] }`
 * matching the event's data fields (`domain` is the emitting domain; a
 * problem type matches by its identifier, `problem: rate_limited`);
 * `{ outcome: bounced }` is short for `{ event: recipient.outcome, outcome:
 * bounced }`. Scopes relate events: `run` (default), `message`, `actor`
 * (message → recipient domain), `delivery`, `recipient`.
 *
 * A file that does not parse, or a property that does not make sense, is an
 * error at its line and column, as scenario errors are.
 */
import * as z from "zod";
import { parseDurationMs } from "../sim/faultScope.ts";
import { normalizeAddress } from "../protocol/mailbox.ts";
import type { FileError } from "../sim/yamlPosition.ts";
import { messageOfActor } from "../trace/deliveryIds.ts";
import { closestEventName, traceEventNames } from "../trace/events.ts";
import { formatOffset } from "../trace/offset.ts";
import type { CheckResult } from "../trace/schema.ts";
import { textOf, textsOf } from "../trace/values.ts";
import type { JudgedEvent } from "./properties.ts";
import { readYamlFile } from "./yamlFile.ts";

const SCOPES = ["run", "message", "actor", "delivery", "recipient"] as const;
/** How a property relates events to each other. */
export type Scope = (typeof SCOPES)[number];

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const EVENT_NAMES = Object.keys(traceEventNames);

/** What an unknown event name is: the closest name when there is one, else the list. */
function unknownEvent(name: string): string {
  const closest = closestEventName(name);
  return closest !== undefined
    ? `unknown event "${name}" (did you mean ${closest}?)`
    : `unknown event "${name}"; the events are ${EVENT_NAMES.join(", ")}`;
}

const eventName = z.string().refine((name) => Object.hasOwn(traceEventNames, name), {
  error: (issue) => unknownEvent(String(issue.input)),
});

/** An event name, or an event and the values its fields must have. */
const selectorSchema = z.union([
  eventName,
  z
    .looseObject({ event: eventName.optional(), outcome: z.union([scalar, z.array(scalar)]).optional() })
    .superRefine((value, ctx) => {
      if (value.event === undefined && value.outcome === undefined) {
        ctx.addIssue({ code: "custom", message: "a selector names an event (event: attempt.ended) or an outcome" });
      }
      for (const [key, v] of Object.entries(value)) {
        if (key === "event") continue;
        const ok = Array.isArray(v) ? v.every((x) => scalar.safeParse(x).success) : scalar.safeParse(v).success;
        if (!ok)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "a field's value is a string, number, boolean or a list of them",
          });
      }
    }),
]);

const durationSchema = z.union([z.number().min(0), z.string()]).transform((value, ctx) => {
  const ms = typeof value === "number" ? value : parseDurationMs(value);
  if (ms === undefined) {
    ctx.addIssue({ code: "custom", message: `"${String(value)}" is not a duration (ms, or "90s", "5m", "5d")` });
    return z.NEVER;
  }
  return ms;
});

const propertySchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "an id is letters, digits, dots, underscores and hyphens"),
    description: z.string().optional(),
    never: selectorSchema.optional(),
    after: selectorSchema.optional(),
    every: selectorSchema.optional(),
    followedBy: selectorSchema.optional(),
    since: selectorSchema.optional(),
    count: selectorSchema.optional(),
    same: z.enum(SCOPES).optional(),
    per: z.enum(SCOPES).optional(),
    within: durationSchema.optional(),
    atLeast: z.union([z.int().min(0), durationSchema]).optional(),
    atMost: z.int().min(0).optional(),
    is: durationSchema.optional(),
    tolerance: durationSchema.optional(),
  })
  .superRefine((p, ctx) => {
    const add = (path: string, message: string): void => void ctx.addIssue({ code: "custom", path: [path], message });
    const forms = (["never", "every", "count"] as const).filter((k) => p[k] !== undefined);
    if (forms.length !== 1) {
      add(forms[1] ?? "id", "a property says one of never, every or count");
      return;
    }
    const only = (fields: readonly (keyof typeof p)[], form: string): void => {
      for (const f of [
        "after",
        "followedBy",
        "since",
        "per",
        "same",
        "within",
        "atLeast",
        "atMost",
        "is",
        "tolerance",
      ] as const) {
        if (p[f] !== undefined && !fields.includes(f)) add(f, `${f} does not go with ${form}`);
      }
    };
    if (p.never !== undefined) only(["after", "same"], "never");
    if (p.count !== undefined) {
      only(["per", "atLeast", "atMost"], "count");
      if (p.atLeast === undefined && p.atMost === undefined) add("count", "count needs atLeast or atMost");
    }
    if (p.every !== undefined) {
      if (p.followedBy === undefined && p.since === undefined) add("every", "every needs followedBy or since");
      if (p.followedBy !== undefined && p.since !== undefined) add("since", "give followedBy or since, not both");
      if (p.followedBy !== undefined) only(["followedBy", "same", "within"], "every … followedBy");
      if (p.since !== undefined) {
        only(["since", "same", "within", "atLeast", "is", "tolerance"], "every … since");
        const bounds = (["within", "atLeast", "is"] as const).filter((k) => p[k] !== undefined);
        if (bounds.length === 0) add("since", "since needs within, atLeast or is");
        if (p.is !== undefined && bounds.length > 1) add("is", "is goes alone (with tolerance)");
      }
      if (p.tolerance !== undefined && p.is === undefined) add("tolerance", "tolerance goes with is");
    }
  });

const fileSchema = z.strictObject({ properties: z.array(propertySchema).min(1) });

/** A selector, as parsed. */
type Selector = z.output<typeof selectorSchema>;
/** A user's property, as parsed. */
export type UserProperty = z.output<typeof propertySchema>;

/** The outcome of {@link parseUserProperties}. */
export type UserPropertiesParse =
  | { readonly ok: true; readonly properties: readonly UserProperty[] }
  | { readonly ok: false; readonly errors: readonly FileError[] };

/**
 * Reads a properties file; every problem comes back at its line and column.
 * `reserved` are ids already taken (the built-in properties'): a user's
 * property may not take one. Never throws.
 */
export function parseUserProperties(text: string, file: string, reserved: readonly string[] = []): UserPropertiesParse {
  const read = readYamlFile(fileSchema, text, file);
  if (!read.ok) return read;
  const errors: FileError[] = [];
  const seen = new Set<string>(reserved);
  read.value.properties.forEach((p, i) => {
    if (seen.has(p.id)) {
      const taken = reserved.includes(p.id);
      errors.push({
        file,
        ...read.locate(["properties", i, "id"]),
        field: `properties[${i}].id`,
        message: taken
          ? `"${p.id}" is a built-in property's id; choose another`
          : `"${p.id}" is the id of another property`,
      });
    }
    seen.add(p.id);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, properties: read.value.properties };
}

// ---------------------------------------------------------------------------
// Judging a run

function matches(selector: Selector, event: JudgedEvent): boolean {
  if (typeof selector === "string") return event.name === selector;
  const name = selector.event ?? "recipient.outcome";
  if (event.name !== name) return false;
  for (const [key, wanted] of Object.entries(selector)) {
    if (key === "event") continue;
    const actual =
      key === "domain" && !(event.data !== undefined && "domain" in event.data) ? event.domain : event.data?.[key];
    const options = Array.isArray(wanted) ? wanted : [wanted];
    if (!options.some((w) => sameValue(actual, w))) return false;
  }
  return true;
}

function sameValue(actual: unknown, wanted: unknown): boolean {
  if (actual === wanted) return true;
  if (Array.isArray(actual)) return actual.some((a) => sameValue(a, wanted));
  // A problem type URI matches its identifier; a number its text.
  if (typeof actual === "string" && typeof wanted === "string")
    return actual.slice(actual.lastIndexOf("/") + 1) === wanted;
  if (typeof actual === "number" && typeof wanted === "string") return String(actual) === wanted;
  return false;
}

/** The keys an event has in a scope (several for an event about several recipients or domains). */
export function scopeKeys(event: JudgedEvent, scope: Scope): string[] {
  if (scope === "run") return [""];
  const d = event.data ?? {};
  const deliveryId = textOf(d["deliveryId"]);
  const actor = textOf(d["deliveryActor"]) ?? (deliveryId !== undefined ? deliveryId.replace(/#\d+$/, "") : undefined);
  const messageId = textOf(d["messageId"]) ?? (actor !== undefined ? messageOfActor(actor) : undefined);
  if (scope === "delivery") return deliveryId !== undefined ? [deliveryId] : [];
  if (messageId === undefined) return [];
  if (scope === "message") return [messageId];
  const recipients = [...textsOf(d["recipient"]), ...textsOf(d["recipients"]), ...textsOf(d["to"])].map(
    normalizeAddress,
  );
  if (scope === "recipient") return [...new Set(recipients.map((r) => `${messageId} ${r}`))];
  if (actor !== undefined) return [actor];
  const domains =
    textOf(d["domain"]) !== undefined
      ? [textOf(d["domain"]) as string]
      : recipients.map((r) => r.slice(r.lastIndexOf("@") + 1));
  return [...new Set(domains.map((domain) => `${messageId}→${domain}`))];
}

/**
 * A span between two events, exact (`0:00:01.500`, `5d 0:02:00`), as a time of the run is written: a check
 * compares it with a bound, which the rounded words of `formatDuration` (`5 d`) could hide.
 */
function span(ms: number): string {
  return formatOffset(Math.abs(ms), 0).slice(1);
}

/** Judges one user property over a run's events. */
export function checkUserProperty(property: UserProperty, events: readonly JudgedEvent[]): CheckResult {
  const violations: { text: string; evidence: number[] }[] = [];
  let checked = "";
  if (property.never !== undefined) {
    const scope = property.same ?? "run";
    const armed = new Map<string, JudgedEvent>();
    let seen = 0;
    for (const e of events) {
      if (matches(property.never, e)) {
        seen++;
        if (property.after === undefined) {
          violations.push({ text: `${e.name} at seq ${e.seq}`, evidence: [e.seq] });
        } else {
          const cause = scopeKeys(e, scope)
            .map((k) => armed.get(k))
            .find((c) => c !== undefined);
          if (cause !== undefined) {
            violations.push({
              text: `${e.name} at seq ${e.seq} after ${cause.name} at seq ${cause.seq}`,
              evidence: [cause.seq, e.seq],
            });
          }
        }
      }
      if (property.after !== undefined && matches(property.after, e)) {
        for (const k of scopeKeys(e, scope)) if (!armed.has(k)) armed.set(k, e);
      }
    }
    checked = `${seen} matching event(s) judged`;
  } else if (property.every !== undefined) {
    const scope = property.same ?? "run";
    const targets = events.filter((e) => matches(property.every as Selector, e));
    for (const e of targets) {
      const keys = new Set(scopeKeys(e, scope));
      const related = (x: JudgedEvent): boolean => scopeKeys(x, scope).some((k) => keys.has(k));
      if (property.followedBy !== undefined) {
        const follower = events.find((x) => x.seq > e.seq && matches(property.followedBy as Selector, x) && related(x));
        if (follower === undefined) {
          violations.push({
            text: `${e.name} at seq ${e.seq} is not followed by ${describe(property.followedBy)}`,
            evidence: [e.seq],
          });
        } else if (property.within !== undefined && follower.timeMs - e.timeMs > property.within) {
          violations.push({
            text: `${e.name} at seq ${e.seq} is followed by ${follower.name} only ${span(follower.timeMs - e.timeMs)} later (within ${span(property.within)})`,
            evidence: [e.seq, follower.seq],
          });
        }
        continue;
      }
      const start = events.find((x) => x.seq < e.seq && matches(property.since as Selector, x) && related(x));
      if (start === undefined) {
        violations.push({
          text: `${e.name} at seq ${e.seq} has no ${describe(property.since as Selector)} before it`,
          evidence: [e.seq],
        });
        continue;
      }
      const elapsed = e.timeMs - start.timeMs;
      const bad =
        (property.within !== undefined && elapsed > property.within) ||
        (typeof property.atLeast === "number" && elapsed < property.atLeast) ||
        (property.is !== undefined && Math.abs(elapsed - property.is) > (property.tolerance ?? 0));
      if (bad) {
        violations.push({
          text: `${e.name} at seq ${e.seq} came ${span(elapsed)} after ${start.name} at seq ${start.seq}`,
          evidence: [start.seq, e.seq],
        });
      }
    }
    checked = `${targets.length} matching event(s), each as it should be`;
  } else if (property.count !== undefined) {
    const scope = property.per ?? "run";
    const counts = new Map<string, { n: number; seqs: number[] }>();
    for (const e of events) {
      for (const k of scopeKeys(e, scope)) if (!counts.has(k)) counts.set(k, { n: 0, seqs: [] });
      if (!matches(property.count, e)) continue;
      for (const k of scopeKeys(e, scope)) {
        const c = counts.get(k) as { n: number; seqs: number[] };
        c.n++;
        c.seqs.push(e.seq);
      }
    }
    for (const [k, c] of counts) {
      const where = scope === "run" ? "the run" : `${scope} ${k}`;
      if (property.atMost !== undefined && c.n > property.atMost) {
        violations.push({ text: `${where} has ${c.n} (at most ${property.atMost})`, evidence: c.seqs });
      } else if (typeof property.atLeast === "number" && c.n < property.atLeast) {
        violations.push({ text: `${where} has ${c.n} (at least ${property.atLeast})`, evidence: c.seqs });
      }
    }
    checked = `${counts.size} ${scope === "run" ? "run" : `${scope}(s)`} counted`;
  }
  if (violations.length === 0) return { id: property.id, passed: true, detail: checked };
  const shown = violations
    .slice(0, 5)
    .map((v) => v.text)
    .join("; ");
  const more = violations.length > 5 ? `; and ${violations.length - 5} more` : "";
  const evidence = [...new Set(violations.flatMap((v) => v.evidence))].sort((a, b) => a - b);
  return {
    id: property.id,
    passed: false,
    detail: `${property.description !== undefined ? `${property.description}: ` : ""}${shown}${more}`,
    evidence,
  };
}

function describe(selector: Selector): string {
  if (typeof selector === "string") return selector;
  const fields = Object.entries(selector)
    .filter(([k]) => k !== "event")
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("|") : String(v)}`);
  return `${selector.event ?? "recipient.outcome"}${fields.length > 0 ? ` (${fields.join(", ")})` : ""}`;
}
