/**
 * Trace events in words: the one describer behind the timeline of
 * `mailscope run` and the progress lines of `mailscope send` and of the
 * outbound side of `mailscope serve`. An event reads the same everywhere; the
 * flavour says only which events get a line and the few things that really
 * differ:
 *
 * - `timeline` (`run`): every domain's events, the receivers' included. The
 *   routine steps (an endpoint found, capabilities fetched or cached, a pin
 *   set, a version agreed), the wire (DNS, HTTP, the receiver's requests) and
 *   the state machine only with `full`. Time is the line's virtual offset, so
 *   a retry says only how far off it is; a hand-off to SMTP went to the
 *   simulated relay, which accepted or refused it.
 * - `progress` (`send`, `serve`): the sender's view, step by step. A retry
 *   also says when, on the wall clock; there is no SMTP client, so a hand-off
 *   to SMTP is only recorded, and the line names the command that has none.
 *   The outcomes are left to the command's summary.
 */
import type { UntypedTraceEvent } from "../ports.ts";
import type { TraceEventName } from "./events.ts";
import { formatOffset } from "./offset.ts";
import { textOf, textsOf } from "./values.ts";

/** A line of `run`'s timeline. */
export interface TimelineFlavour {
  readonly flavour: "timeline";
  /** Every event: the routine steps, the wire and the state machine too. */
  readonly full: boolean;
  /**
   * The run's start: a time in the words (a pin's expiry, a fault's window) is then an offset from it
   * (`until +7d 0:00:00`), as the line's own time is; without it, ISO 8601.
   */
  readonly startMs?: number;
}

/** A progress line of a command that runs a sender for real. */
export interface ProgressFlavour {
  readonly flavour: "progress";
  /** The command (`send`, `serve`), named where it has no SMTP client. */
  readonly command: string;
}

export type DescribeFlavour = TimelineFlavour | ProgressFlavour;

/** The events a progress line is printed for: the sender's steps, not its outcomes (the summary prints those). */
const PROGRESS: ReadonlySet<string> = new Set<TraceEventName>([
  "message.submitted",
  "discovery.resolved",
  "capabilities.fetched",
  "capabilities.invalid",
  "version.negotiated",
  "attempt.started",
  "attempt.ended",
  "recipient.result",
  "timer.set",
  "timer.fired",
  "smtp.handoff",
  "delivery.bounced",
  "dsn.sent",
  "dsn.suppressed",
]);

/** Never a line of their own: the run prints its checks after the timeline. */
const CHECKS: ReadonlySet<string> = new Set<TraceEventName>(["invariant.checked", "expectation.checked"]);

/** `not sent, mailscope send has no SMTP client`: what becomes of a hand-off to SMTP outside the simulator. */
export function noSmtpClient(command: string): string {
  return `not sent, mailscope ${command} has no SMTP client`;
}

/** The last path segment of a problem type URI: its identifier under any problem base. */
export function shortProblem(type: unknown): string | undefined {
  if (typeof type !== "string" || type === "") return undefined;
  return type.replace(/\/+$/, "").split("/").pop() ?? type;
}

/** Why a capabilities document could not be used, from a capabilities.invalid event. */
export function capabilitiesFailure(d: Readonly<Record<string, unknown>>): string {
  const failure = textOf(d["failure"]);
  if (failure !== undefined) return failure;
  if (Array.isArray(d["violations"]))
    return d["violations"].map((v) => String((v as { message?: unknown }).message)).join("; ");
  return "unknown";
}

/**
 * Which reading decided a failed capabilities answer, from a
 * capabilities.invalid event: ` (G46 alive: …; G47 ignored: …)`; empty when
 * no reading was involved.
 */
export function capabilitiesReadingNotes(d: Readonly<Record<string, unknown>>): string {
  const notes: string[] = [];
  if (d["G46"] === "alive")
    notes.push("G46 alive: a 4xx shows the endpoint alive, so it is retried and never falls back to SMTP");
  else if (d["G46"] === "fallback-eligible")
    notes.push("G46 fallback-eligible: an unfetchable document, so SMTP after the fallback window");
  if (d["G47"] === "ignored") notes.push(`G47 ignored: its Retry-After ${String(d["retryAfterS"])}s is ignored`);
  else if (d["G47"] === "lower-bound")
    notes.push(`G47 lower-bound: no retry before its Retry-After ${String(d["retryAfterS"])}s`);
  return notes.length > 0 ? ` (${notes.join("; ")})` : "";
}

/**
 * How an attempt that got no per-recipient results ended, from an
 * attempt.ended event: `503 temporary_failure`, `no answer (tls)`, or
 * `not sent: message_too_large`.
 */
export function attemptFailure(d: Readonly<Record<string, unknown>>): string {
  const problem = shortProblem(d["problem"]);
  if (d["status"] !== undefined) return `${String(d["status"])} ${problem ?? ""}`.trim();
  if (d["failure"] !== undefined) return `no answer (${String(d["failure"])})`;
  return `not sent${problem !== undefined ? `: ${problem}` : ""}`;
}

/** Why a Retry-After was ignored: ` (G26: policy_rejected is permanent)`, ` (G21: unparsable)`, ` (permanent answer)`. */
function ignoredBy(d: Readonly<Record<string, unknown>>): string {
  const gaps = textsOf(d["gaps"]);
  if (gaps.includes("G26")) return " (G26 permanent)";
  if (d["class"] === "permanent") return " (a permanent answer)";
  return " (G21: not a delay or a date)";
}

/** `57s`, `1m30s`, `2h5m`: compact, so that alike timeline lines keep one shape. */
export function shortDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 > 0 ? `${s % 60}s` : ""}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) > 0 ? `${Math.floor((s % 3600) / 60)}m` : ""}`;
}

/**
 * The attempt a retry timer starts, in attempt.started's numbering: `attempt 2` for the first retry (its
 * `attempt`, else its `retry` + 1, as a trace before the field had it).
 */
function nextAttempt(d: Readonly<Record<string, unknown>>): string {
  const n =
    typeof d["attempt"] === "number" ? d["attempt"] : typeof d["retry"] === "number" ? d["retry"] + 1 : undefined;
  return n === undefined ? "the next attempt" : `attempt ${n}`;
}

/** `1 POST`, `0 POSTs`; a count that is no number as it is. */
function plural(value: unknown, one: string): string {
  return `${String(value)} ${value === 1 ? one : `${one}s`}`;
}

/** A list field's strings, `, `-joined (a lone string as itself). */
function list(value: unknown): string {
  return textsOf(value).join(", ");
}

/** ` [SVC-11, G6]`: the event's rule, then its gap when it has one; empty when neither. */
function tags(d: Readonly<Record<string, unknown>>, withGap = false): string {
  const ids = [textOf(d["rule"]), withGap ? textOf(d["gap"]) : undefined].filter((x) => x !== undefined);
  return ids.length > 0 ? ` [${ids.join(", ")}]` : "";
}

/** delivery.created under a sender misbehaviour: say so, and which key was reused. */
function misbehaviourNote(d: Readonly<Record<string, unknown>>): string {
  if (typeof d["keyReusedFrom"] === "string")
    return `, REUSING the Idempotency-Key of ${d["keyReusedFrom"].replace(/^.*#/, "#")} (sender misbehaviour reuseIdempotencyKey; breaks ${list(d["violates"])})`;
  return d["misbehaviour"] !== undefined ? " (sender misbehaviour reuseIdempotencyKey on)" : "";
}

/** An ISO 8601 time to the second: `2026-01-15T10:57:52Z`. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.[0-9]{3}Z$/, "Z");
}

/** A time field in ISO 8601, to the millisecond or the second; a field that is no time as it is (a describer never throws). */
function time(value: unknown, seconds = false): string {
  if (typeof value !== "number" || !Number.isFinite(value) || Math.abs(value) > 8.64e15) return String(value);
  return seconds ? isoSeconds(value) : new Date(value).toISOString();
}

/** A time field as the line writes it: an offset from the run's start when the flavour has it, else {@link time}. */
function timeIn(how: DescribeFlavour, value: unknown, seconds = false): string {
  return how.flavour === "timeline" && how.startMs !== undefined && typeof value === "number" && Number.isFinite(value)
    ? formatOffset(value, how.startMs)
    : time(value, seconds);
}

/**
 * One event in words, or undefined when the flavour gives it no line: in the
 * timeline the checks, and the routine steps and the wire without `full`; in
 * progress everything but the sender's steps.
 */
export function describeEvent(event: UntypedTraceEvent, how: DescribeFlavour): string | undefined {
  if (CHECKS.has(event.name)) return undefined;
  const d = event.data ?? {};
  if (how.flavour === "progress") return PROGRESS.has(event.name) ? words(event.name, d, how) : undefined;
  if (!how.full && routine(event.name, d)) return undefined;
  return words(event.name, d, how) ?? (how.full ? wire(event.name, d, how) : undefined);
}

/**
 * Whether run's timeline has a line for `event`, without writing it: `plain`
 * (the timeline as printed), `full` (only with `full`: a routine step, the
 * wire, the state machine) or undefined (never: the checks). Exactly when
 * `describeEvent(event, { flavour: "timeline", full })` gives text; the
 * app's log decides its rows with it and writes only the rows it shows.
 */
export function timelineLevel(event: UntypedTraceEvent): "plain" | "full" | undefined {
  if (CHECKS.has(event.name)) return undefined;
  return WORDS.has(event.name) && !routine(event.name, event.data ?? {}) ? "plain" : "full";
}

/** The events {@link words} has words for (its cases). */
const WORDS: ReadonlySet<string> = new Set<TraceEventName>([
  "spec.constants",
  "message.submitted",
  "discovery.resolved",
  "capabilities.fetched",
  "capabilities.cached",
  "capabilities.invalid",
  "pin.set",
  "pin.removed",
  "version.negotiated",
  "delivery.created",
  "attempt.started",
  "attempt.ended",
  "recipient.result",
  "timer.set",
  "timer.fired",
  "smtp.handoff",
  "delivery.bounced",
  "dsn.sent",
  "dsn.suppressed",
  "mailbox.delivered",
  "failure.after-acceptance",
  "recipient.outcome",
  "idempotency.replay",
  "idempotency.conflict",
  "probe.started",
  "probe.tls",
  "probe.case",
]);

/** The steps of a discovery that went well, which the timeline shows only with `full` (as it does the wire). */
function routine(name: string, d: Readonly<Record<string, unknown>>): boolean {
  switch (name) {
    case "discovery.resolved":
      return typeof d["origin"] === "string";
    case "version.negotiated":
      return typeof d["version"] === "string";
    case "capabilities.fetched":
    case "capabilities.cached":
    case "pin.set":
      return true;
    default:
      return false;
  }
}

/** The words for the events of the protocol; undefined for the wire and the state machine. */
function words(name: string, d: Readonly<Record<string, unknown>>, how: DescribeFlavour): string | undefined {
  const rule = tags(d);
  switch (name) {
    case "spec.constants": {
      const list = Array.isArray(d["departures"]) ? (d["departures"] as Record<string, unknown>[]) : [];
      const text = list.map((x) => `${String(x["name"])} ${String(x["value"])} (SPEC.md: ${String(x["spec"])})`);
      return `this run departs from SPEC.md's numbers: ${text.join("; ")}${rule}`;
    }
    case "message.submitted":
      return d["from"] === null
        ? `DSN ${String(d["messageId"])} submitted to ${list(d["to"])}`
        : `message ${String(d["messageId"])} from ${String(d["from"])} to ${list(d["to"])}`;
    case "discovery.resolved":
      if (typeof d["origin"] === "string") return `${String(d["domain"])} is served at ${d["origin"]}`;
      if (d["outcome"] === "no-service")
        return `${String(d["domain"])} has no usable SVCB record (${String(d["answer"])}): plain SMTP${tags(d, true)}`;
      return `SVCB lookup for ${String(d["domain"])} failed (${String(d["answer"])})${d["gap"] === "G7" ? ", and a discovery pin is valid" : ""}${tags(d, true)}`;
    case "capabilities.fetched": {
      const caps = (d["capabilities"] ?? {}) as { versions?: unknown; max_message_size?: unknown };
      return `capabilities of ${String(d["origin"])}: versions ${list(caps.versions ?? ["v1"])}, max_message_size ${String(caps.max_message_size)}, max-age ${String(d["maxAgeS"])}s`;
    }
    case "capabilities.cached":
      return `capabilities of ${String(d["origin"])} from the cache (${String(d["ageS"])}s old)`;
    case "capabilities.invalid":
      return `capabilities of ${String(d["origin"])} unusable: ${capabilitiesFailure(d)}${capabilitiesReadingNotes(d)}${rule}`;
    case "pin.set":
      return `discovery pin for ${String(d["domain"])} until ${timeIn(how, d["expiresAtMs"])}`;
    case "pin.removed":
      return `discovery pin for ${String(d["domain"])} removed (${String(d["reason"])})${rule}`;
    case "version.negotiated":
      return typeof d["version"] === "string"
        ? `version ${d["version"]} with ${String(d["domain"])}`
        : `no common version with ${String(d["domain"])} (ours ${list(d["ours"])}, theirs ${list(d["theirs"])})${rule}`;
    case "delivery.created":
      return `new delivery ${String(d["deliveryId"]).replace(/^.*#/, "#")} to ${list(d["recipients"])}${d["gap"] === "G12" ? ` (batch ${String(d["batch"])} of ${String(d["batches"])}, G12)` : ""}${misbehaviourNote(d)}${rule}`;
    case "attempt.started":
      return d["sent"] === false
        ? `attempt ${String(d["attempt"])}: not sent: size ${String(d["bodySize"])}${d["maxMessageSize"] !== undefined ? ` > max_message_size ${String(d["maxMessageSize"])}` : " is over max_message_size"} [G13]`
        : `attempt ${String(d["attempt"])}: POST ${String(d["url"])} (${String(d["bodySize"])} bytes)`;
    case "attempt.ended": {
      if (d["class"] === "results") return `attempt ${String(d["attempt"])}: ${String(d["status"])}`;
      const eligible = d["fallbackEligible"] === true ? ", fallback-eligible" : "";
      const after =
        d["retryAfterS"] !== undefined
          ? `, Retry-After ${String(d["retryAfterS"])}s`
          : d["retryAfterIgnored"] !== undefined
            ? `, Retry-After ${JSON.stringify(d["retryAfterIgnored"])} ignored${ignoredBy(d)}`
            : "";
      return `attempt ${String(d["attempt"])}: ${attemptFailure(d)} (${String(d["class"])}${eligible}${after})${rule}`;
    }
    case "recipient.result": {
      const problem = shortProblem(d["problem"]);
      return `  ${String(d["recipient"])}: ${String(d["status"])}${problem !== undefined ? ` (${problem})` : ""}${d["retryAfterS"] !== undefined ? `, retry_after ${String(d["retryAfterS"])}s` : ""}`;
    }
    case "timer.set": {
      const at = how.flavour === "progress" ? `, at ${time(d["atMs"], true)}` : "";
      const next = nextAttempt(d);
      if (typeof d["atMs"] === "number" && typeof d["giveUpAtMs"] === "number" && d["atMs"] >= d["giveUpAtMs"]) {
        // The give-up comes first and cancels this attempt (STATE-7): say so, not "attempt n in …".
        const toGiveUp = d["giveUpAtMs"] - (d["atMs"] - Number(d["delayMs"]));
        return `no ${next}: it would come in ${shortDuration(Number(d["delayMs"]))}, after the give-up in ${shortDuration(toGiveUp)} [STATE-7]`;
      }
      const from = d["lowerBoundFrom"] === "retry_after" ? "retry_after" : "Retry-After";
      return `${next} in ${shortDuration(Number(d["delayMs"]))}${at}${d["reason"] === "retry-after" ? ` (${from})` : ""}${rule}`;
    }
    case "timer.fired": {
      const next = nextAttempt(d);
      return next === "the next attempt" ? "retrying" : `retrying (${next})`;
    }
    case "smtp.handoff":
      return how.flavour === "progress"
        ? `would hand ${list(d["recipients"])} to SMTP (${String(d["reason"])}): ${noSmtpClient(how.command)}${rule}`
        : `handed ${list(d["recipients"])} to SMTP (${String(d["reason"])}); the relay ${d["accepted"] === true ? "accepted" : "refused"}${rule}`;
    case "delivery.bounced":
      return `gave up on ${list(d["recipients"])} after ${plural(d["attempts"], "attempt")}: bounced${rule}`;
    case "dsn.sent":
      return `DSN to ${String(d["to"])} about ${list(d["recipients"])} (${String(d["reason"])})${rule}`;
    case "dsn.suppressed":
      return `no DSN about ${String(d["messageId"])}, itself a DSN, for ${list(d["recipients"])}: a DSN never causes a DSN${rule}`;
    case "mailbox.delivered":
      return `stored in ${String(d["mailbox"])} (${String(d["size"])} bytes)`;
    case "failure.after-acceptance":
      return `${String(d["mailbox"])} failed after acceptance (${String(d["status"])})`;
    case "recipient.outcome":
      return `${String(d["recipient"])} of ${String(d["messageId"])}: ${String(d["outcome"]).toUpperCase()}${rule}`;
    case "idempotency.replay":
      return `replayed the stored answer for key ${String(d["key"])}${d["recipients"] !== undefined ? ` to ${list(d["recipients"])}` : ""} [POST-12]`;
    case "idempotency.conflict":
      return `key ${String(d["key"])} reused with another body: 409 [POST-26]`;
    case "probe.started": {
      const plan = (d["plan"] ?? {}) as Readonly<Record<string, unknown>>;
      return `probe of ${String(d["target"])}${typeof d["origin"] === "string" ? ` at ${d["origin"]}` : ""}: ${plural(plan["cases"], "case")}, ${plural(plan["messages"], "message")} to store`;
    }
    case "probe.tls":
      return `TLS handshake offering ${String(d["version"])}: ${String(d["outcome"])}${typeof d["protocol"] === "string" ? ` (${d["protocol"]})` : ""}${typeof d["message"] === "string" ? `: ${d["message"]}` : ""}`;
    case "probe.case":
      return `${String(d["result"])} ${String(d["id"])} (${String(d["grade"])}): ${String(d["actual"])}${rule}`;
    default:
      return undefined;
  }
}

/** ` for host=mx.b.example path=/v1/messages`: a fault's scope; empty when it concerns everything. */
function faultScope(scope: unknown): string {
  if (typeof scope !== "object" || scope === null) return "";
  const parts = Object.entries(scope).map(
    ([key, value]) => `${key}=${Array.isArray(value) ? value.join("↔") : String(value)}`,
  );
  return parts.length > 0 ? ` for ${parts.join(" ")}` : "";
}

/** The wire and the state machine, for the full timeline; any other event as its name and data. */
function wire(name: string, d: Readonly<Record<string, unknown>>, how: DescribeFlavour): string {
  switch (name) {
    case "dns.query":
      return `DNS ${String(d["type"])} ${String(d["name"])}?`;
    case "dns.answer":
      return `DNS ${String(d["type"])} ${String(d["name"])}: ${String(d["kind"])}`;
    case "http.request":
      return `→ ${String(d["method"])} ${String(d["url"])} (${String(d["bodySize"])} bytes)`;
    case "http.response":
      return `← ${String(d["status"])} (${String(d["bodySize"])} bytes)${typeof d["fault"] === "string" ? ` [fault ${d["fault"]}]` : ""}`;
    case "http.failure":
      return `✗ ${String(d["kind"])}: ${String(d["message"])}`;
    case "receiver.request":
      return `receiver: ${String(d["method"])} ${String(d["path"])}`;
    case "receiver.response":
      return `receiver: ${String(d["status"])}${d["problem"] !== undefined ? ` ${String(d["problem"])}` : ""}`;
    case "attempt.judged": {
      const eligible = d["fallbackEligible"] === true ? ", fallback-eligible" : "";
      const window =
        typeof d["fallbackWindowEndMs"] === "number" && typeof d["fallbackWindowStartMs"] === "number"
          ? `; fallback window ${shortDuration(d["fallbackWindowEndMs"] - d["fallbackWindowStartMs"])}${typeof d["giveUpAtMs"] === "number" ? `, give-up after ${shortDuration(d["giveUpAtMs"] - d["fallbackWindowStartMs"])}` : ""}`
          : "";
      return `${String(d["deliveryActor"])}: attempt ${String(d["attempt"])} over at ${String(d["stage"])} (${String(d["class"])}${eligible}, ${plural(d["posts"], "POST")})${window}${tags(d)}`;
    }
    case "machine.started":
      return `${String(d["deliveryActor"])}: started in ${String(d["state"])}`;
    case "machine.transition":
      return `${String(d["deliveryActor"])}: ${String(d["from"])} → ${String(d["to"])}${typeof d["transition"] === "string" ? ` (${d["transition"]})` : ""}${tags(d)}`;
    case "fault.window":
      return `fault ${String(d["id"])}: ${String(d["layer"])} ${String(d["kind"])}${faultScope(d["scope"])}, from ${timeIn(how, d["fromMs"], true)}${typeof d["untilMs"] === "number" ? ` until ${timeIn(how, d["untilMs"], true)}` : " on"}${typeof d["probability"] === "number" && d["probability"] < 1 ? `, probability ${d["probability"]}` : ""}`;
    case "dns.changed": {
      const records = d["records"] as { svcb?: unknown; txt?: unknown } | null | undefined;
      const count = (value: unknown): number => (Array.isArray(value) ? value.length : 0);
      return `DNS ${String(d["name"])} ${records === null || records === undefined ? "removed (NXDOMAIN from now on)" : `now holds ${count(records.svcb)} SVCB and ${count(records.txt)} TXT records`}`;
    }
    default:
      return `${name} ${JSON.stringify(d)}`;
  }
}
