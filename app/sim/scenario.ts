/**
 * Scenario files: what a simulation run is made of, as YAML (or JSON) a
 * person writes and an editor checks (docs/scenario-format.md).
 *
 * A scenario names its domains (each with a sender, a receiver or none,
 * mailboxes, keys, DNS records and an SMTP relay), the messages submitted at
 * virtual times, the faults on the network and in DNS, the readings of the
 * switchable gaps (docs/gaps.md), and what the author expects to happen. The
 * zod schema below is the single definition: `scripts/gen-scenario-schema.ts`
 * writes it out as JSON Schema (`schemas/scenario.schema.json`) for editors,
 * and {@link parseScenarioText} reports every problem with the file, line,
 * column and field it concerns.
 *
 * The parts that other modules already define are reused, not copied: the
 * receiver's capabilities and policy (`receiver/config.ts`), network faults
 * (`network.ts`), DNS faults, changes and record sets (`dnsZone.ts`), times
 * and latencies (`faultScope.ts`).
 */
import * as z from "zod";
import { gapById, gaps } from "../protocol/gaps.ts";
import { READING_NAMES, type SwitchableGapId } from "../protocol/readingNames.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import { MAX_MESSAGE_BYTES } from "../protocol/resources.ts";
import { DEFAULT_TOLERANCE_S } from "../protocol/profile.ts";
import { parseSvcbPresentation } from "../protocol/svcb.ts";
import { capabilitiesConfigSchema, mailboxConfigSchema, policyConfigSchema } from "../receiver/config.ts";
import { DEFAULT_FALLBACK_WINDOW_S, MAX_FALLBACK_WINDOW_S, MIN_FALLBACK_WINDOW_S } from "../sender/retrySchedule.ts";
import { looksLikeKnob, SPEC_CONSTANTS, SPEC_KNOBS, specKnob, type SpecConstants } from "../protocol/specConstants.ts";
import { applyConstant, constantsProblem, knobNames, knobRangeText } from "./constants.ts";
import { dnsChangeSchema, dnsFaultSchema, dnsRecordSetSchema, svcbRecordSchema, ttlSecondsSchema } from "./dnsZone.ts";
import {
  boundedMs,
  durationAtMost,
  durationStringAtMost,
  DURATION_PATTERN,
  DURATION_PATTERN_BODY,
  formatBoundMs,
  latencySchema,
  MAX_LATENCY_MS,
  MAX_LATENCY_WHY,
  MAX_VIRTUAL_MS,
  parseDurationMs,
  resolveTimeMs,
  timeOffsetSchema,
} from "./faultScope.ts";
import { DEFAULT_START_MS } from "./scheduler.ts";
import { networkFaultSchema, problemBaseSchema } from "./network.ts";
import { closestEventName, isTraceEventName, traceEventNames } from "../trace/events.ts";
import {
  fieldName,
  formatFileError,
  parseYamlWith,
  positionOf,
  type FileError,
  type UnknownKeyHint,
} from "./yamlPosition.ts";
import { errorMessage } from "../errorMessage.ts";
import { bytesToBinary } from "../protocol/base64.ts";
import { MAX_SPAN_S, MAX_SPAN_WHY } from "../protocol/resources.ts";

/** The smallest `max_message_size` a receiver may advertise (CAP-7), and the default of a scenario's receivers. */
export const DEFAULT_MAX_MESSAGE_SIZE = 26_214_400;
/** The `{problem_base}` of every receiver, sender and fault of a run unless the scenario gives one. */
export const DEFAULT_PROBLEM_BASE = "https://mailscope.example/problems";
/** The largest message a scenario makes (`size`) or reads (`eml`): app/protocol/resources.ts's. */
export { MAX_MESSAGE_BYTES };
/** Why {@link MAX_MESSAGE_BYTES}: written after the bound in errors and schema descriptions. */
const MAX_MESSAGE_WHY =
  "a resource limit: 100 MiB, four times the smallest max_message_size (26214400, CAP-7), to go over any usual limit";
/** The most messages a scenario submits. */
export const MAX_MESSAGES = 100_000;
/** The most recipients of one message of a scenario (a receiver's max_recipients is at least 100). */
export const MAX_RECIPIENTS_PER_MESSAGE = 10_000;
/** Why the counts of a scenario ({@link MAX_MESSAGES}, {@link MAX_RECIPIENTS}, {@link MAX_MAILBOXES}) stop where they do. */
const COUNT_WHY = "a resource limit: each costs events, memory and time in every run (the spec names no such number)";
/** Why {@link MAX_RECIPIENTS_PER_MESSAGE}. */
const RECIPIENTS_PER_MESSAGE_WHY =
  "a resource limit: 100 times the smallest max_recipients (100, CAP-8), to go over any usual limit";
/**
 * The most recipients of a scenario, all messages together: as many as
 * {@link MAX_MESSAGES}, so a scenario may have the most messages of one
 * recipient each, or ten of the most recipients each. Each recipient costs
 * an outcome, events and perhaps a DSN; JSON Schema cannot state a sum, so
 * only the parser checks it.
 */
export const MAX_RECIPIENTS = 100_000;
/** The most mailboxes a domain of a scenario lists. */
export const MAX_MAILBOXES = 100_000;
/** The longest time in seconds a scenario gives (max-age, Retry-After): {@link MAX_SPAN_S}, as {@link MAX_VIRTUAL_MS}. */
export const MAX_SECONDS = MAX_SPAN_S;

/**
 * How long a run lasts at most after the last message is submitted, unless the scenario says: that
 * message's give-up (5 days, STATE-7), the give-up of the DSN that reports its bounce (5 more: the DSN is a
 * delivery of its own, EVT-3), and two days to spare for a failure after acceptance and slow exchanges.
 * Shorter, a run whose last message bounces stops with its DSN pending, and `terminal-outcome` fails for a
 * sender that did nothing wrong (decision note 0120).
 */
export const DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS = 12 * 86_400_000;

// ---------------------------------------------------------------------------
// Small value schemas

/** Whether `name` is a host name in A-labels (MBX-3's syntax, borrowed through a dummy local part). */
export function isDomainName(name: string): boolean {
  return parseMailbox(`x@${name.replace(/\.$/, "")}`).ok;
}

/** A host name in A-labels, as a JSON Schema pattern body: labels of letters, digits and inner hyphens (MBX-3, G41). */
const DOMAIN_PATTERN_BODY =
  "(?=.{1,253}\\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*";
/**
 * A mailbox as a JSON Schema pattern: a local part (a quoted string, or no
 * space, `@` or quote) and a domain in A-labels. Coarser than the parser
 * (MBX-*), which has the last word; editors flag the plainly malformed.
 */
export const MAILBOX_PATTERN = `^(?:"(?:[^"\\\\]|\\\\.)*"|[^\\s@"]+)@${DOMAIN_PATTERN_BODY}$`;

const domainName = z
  .string()
  .refine(isDomainName, { message: "not a host name in A-labels (letters, digits, hyphens, dots)" })
  .meta({ description: "A domain name in A-labels, e.g. b.example.", pattern: `^${DOMAIN_PATTERN_BODY}\\.?$` });

/** A mailbox string: the parser checks it (MBX-*); the JSON Schema has {@link MAILBOX_PATTERN}. */
const mailboxString = z
  .string()
  .min(1)
  .meta({ pattern: MAILBOX_PATTERN, maxLength: 320, description: "A mailbox; at most 320 characters (MBX-8, LIM-7)." });

/** A duration: ms as a number, or a string such as `90s`, `2h`, `5d1h`. */
export const durationSchema = z
  .union([
    boundedMs(MAX_VIRTUAL_MS, "a duration", MAX_SPAN_WHY),
    z
      .string()
      .refine((text) => parseDurationMs(text) !== undefined, {
        message: 'a duration is a number of ms or a string such as "90s", "2h", "1h30m", "5d"',
      })
      .refine((text) => durationAtMost(text, MAX_VIRTUAL_MS), {
        error: durationStringAtMost(MAX_VIRTUAL_MS, "a duration", MAX_SPAN_WHY),
      })
      .meta({ pattern: DURATION_PATTERN }),
  ])
  .meta({
    description: `Ms, or a duration string: "90s", "2h", "1h30m", "5d"; at most ${formatBoundMs(MAX_VIRTUAL_MS)}: ${MAX_SPAN_WHY}.`,
  });

/** The ms of a value {@link durationSchema} accepted. */
export function durationMs(value: number | string): number {
  return typeof value === "number" ? value : (parseDurationMs(value) ?? 0);
}

/**
 * {@link parseSizeBytes}'s grammar as a JSON Schema pattern, with the digits
 * each unit may have under {@link MAX_MESSAGE_BYTES} (at most 9 digits of
 * bytes, 6 of KB, 3 of MB, under 1 GB): an editor flags `2GiB`; the exact
 * bound is the parser's.
 */
const SIZE_PATTERN =
  "^\\s*(?:\\d{1,9}(?:\\.\\d+)?\\s*[Bb]?|\\d{1,6}(?:\\.\\d+)?\\s*[Kk][Ii]?[Bb]|\\d{1,3}(?:\\.\\d+)?\\s*[Mm][Ii]?[Bb]|0?\\.\\d+\\s*[Gg][Ii]?[Bb])\\s*$";

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1_000_000,
  mib: 1_048_576,
  gb: 1_000_000_000,
  gib: 1_073_741_824,
};

/** Bytes of a size: a number, or `<number><unit>` with units B, KB, KiB, MB, MiB, GB, GiB. `undefined` when it is not one. */
export function parseSizeBytes(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(value);
  if (match === null) return undefined;
  const unit = SIZE_UNITS[(match[2] ?? "").toLowerCase() || "b"];
  if (unit === undefined) return undefined;
  return Math.round(Number(match[1]) * unit);
}

const sizeTooLarge = `a message is at most ${MAX_MESSAGE_BYTES} bytes: ${MAX_MESSAGE_WHY}`;

const sizeSchema = z
  .union([
    z
      .int()
      .min(0)
      .max(MAX_MESSAGE_BYTES, { error: (issue) => `is ${String(issue.input)} bytes; ${sizeTooLarge}` })
      .meta({ description: `Bytes; at most ${MAX_MESSAGE_BYTES}: ${MAX_MESSAGE_WHY}.` }),
    z
      .string()
      .refine((text) => parseSizeBytes(text) !== undefined, {
        message: 'a size is a number of bytes or a string such as "2KB", "30MiB"',
      })
      .refine((text) => (parseSizeBytes(text) ?? 0) <= MAX_MESSAGE_BYTES, {
        error: (issue) => `is ${String(issue.input)}; ${sizeTooLarge}`,
      })
      .meta({ pattern: SIZE_PATTERN }),
  ])
  .meta({
    description: `Bytes, or a string with a unit: "512B", "2KB", "30MiB" (KB = 1000 bytes, KiB = 1024); at most 100 MiB: ${MAX_MESSAGE_WHY}.`,
  });

/** A seed: a safe non-negative integer, or any string (the number 7 and the string "7" are different seeds). */
export const seedSchema = z
  .union([z.int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().min(1)])
  .meta({ description: "The seed of the run: a non-negative integer or a string. --seed overrides it." });

const isoTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, "an ISO 8601 time with a zone")
  .meta({ description: "An ISO 8601 time with a zone, e.g. 2026-01-01T00:00:00Z." });

const port = z
  .int()
  .min(1)
  .max(65535, { error: "a port is at most 65535: a 16-bit TCP port (RFC 9293)" })
  .meta({ description: "A TCP port, 1 to 65535 (RFC 9293: 16 bits)." });

const countRange = z
  .union([
    z.int().min(0),
    z
      .strictObject({ min: z.int().min(0).optional(), max: z.int().min(0).optional() })
      .refine((range) => range.min === undefined || range.max === undefined || range.min <= range.max, {
        message: "min is at most max",
      }),
  ])
  .meta({ description: "An exact count, or { min, max } (either may be left out)." });

// ---------------------------------------------------------------------------
// Readings of the switchable gaps

/**
 * The readings of every switchable gap, as a run uses them (docs/gaps.md), each under the name
 * app/protocol/readingNames.ts gives its gap; a scenario, `--set` and the trace write them by gap ID.
 */
export interface ScenarioReadings {
  /** G3: how far `created` may be from the receiver's clock, seconds. */
  readonly signatureTolerance: { readonly toleranceS: number };
  /** G7: whether a valid discovery pin turns a missing record or a failed DNS answer into a temporary failure. */
  readonly discoveryPin: "enforced" | "ignored";
  /** G8: a failed DNS lookup without a pin: a temporary failure, or SMTP at once. */
  readonly dnsFailureWithoutPin: "temporary-failure" | "smtp";
  /** G12: more recipients than `max_recipients`: split into batches, or one POST. */
  readonly overMaxRecipients: "split" | "send-whole";
  /** G13: a body over `max_message_size`: refused before sending, or sent. */
  readonly overMaxMessageSize: "pre-check" | "send";
  /** G16: jitter on or off, and the fallback window (1 to 4 hours, RETRY-5). */
  readonly retryTiming: { readonly jitter: boolean; readonly fallbackWindowS: number };
  /** G18: whether the SMTP relays accept hand-offs; a domain's own `G18` wins over this one. */
  readonly smtpRelay: "accept" | "fail";
  /** G19: the receiver's answer when the `from` domain is not the signing domain. */
  readonly fromDomainMismatch: "401" | "403";
  /** G26: a request-level `policy_rejected` with Retry-After: permanent, or retried. */
  readonly policyRejectedRetryAfter: "permanent" | "retry";
  /** G46: a 4xx answer to the capabilities request: fallback-eligible, or the endpoint is alive and never falls back. */
  readonly capabilities4xx: "fallback-eligible" | "alive";
  /** G47: a Retry-After on a failed capabilities answer: ignored, or a lower bound. */
  readonly capabilitiesRetryAfter: "ignored" | "lower-bound";
}

/** The default reading of every switchable gap, as docs/gaps.md gives it. */
export const defaultScenarioReadings: ScenarioReadings = {
  signatureTolerance: { toleranceS: DEFAULT_TOLERANCE_S },
  discoveryPin: "enforced",
  dnsFailureWithoutPin: "temporary-failure",
  overMaxRecipients: "split",
  overMaxMessageSize: "pre-check",
  retryTiming: { jitter: true, fallbackWindowS: DEFAULT_FALLBACK_WINDOW_S },
  smtpRelay: "accept",
  fromDomainMismatch: "401",
  policyRejectedRetryAfter: "permanent",
  capabilities4xx: "fallback-eligible",
  capabilitiesRetryAfter: "ignored",
};

/** The IDs of the gaps a scenario or `--set` can switch, in order. */
export const SWITCHABLE_GAPS = [
  "G3",
  "G7",
  "G8",
  "G12",
  "G13",
  "G16",
  "G18",
  "G19",
  "G26",
  "G46",
  "G47",
] as const satisfies readonly SwitchableGapId[];
type SwitchableGap = (typeof SWITCHABLE_GAPS)[number];

/** The named readings of each switchable gap that has a list of them (G3 and G16 take parameters). */
export const ENUM_READINGS: Readonly<Record<string, readonly string[]>> = {
  G7: ["enforced", "ignored"],
  G8: ["temporary-failure", "smtp"],
  G12: ["split", "send-whole"],
  G13: ["pre-check", "send"],
  G18: ["accept", "fail"],
  G19: ["401", "403"],
  G26: ["permanent", "retry"],
  G46: ["fallback-eligible", "alive"],
  G47: ["ignored", "lower-bound"],
};

/** The outcome of reading one setting. */
export type ReadingResult =
  { readonly ok: true; readonly readings: ScenarioReadings } | { readonly ok: false; readonly message: string };

/**
 * Applies one reading in the notation of docs/gaps.md (`ignored`,
 * `jitter=off, fallback-window=3h`, `tolerance-seconds=60`) to `base`.
 * Parameters left out of a parameterised reading keep their value in `base`.
 * G16's window is checked against RETRY-5's bounds in `constants`. Never throws: an unknown gap, a gap that is not switchable or a name the gap
 * does not know is a message saying so.
 */
export function applyReading(
  base: ScenarioReadings,
  id: string,
  raw: string | number,
  constants: SpecConstants = SPEC_CONSTANTS,
): ReadingResult {
  const gap = gapById(id);
  if (gap === undefined)
    return { ok: false, message: `there is no gap ${id} (docs/gaps.md lists G1 to ${gaps.at(-1)?.id ?? "G1"})` };
  if (!gap.switchable || !(SWITCHABLE_GAPS as readonly string[]).includes(id)) {
    return {
      ok: false,
      message: `${id} (${gap.title}) is not switchable; its reading is fixed: ${gap.defaultReading}`,
    };
  }
  const value = String(raw).trim();
  const gapId = id as SwitchableGap;
  const names = ENUM_READINGS[gapId];
  if (names !== undefined) {
    if (!names.includes(value)) {
      return { ok: false, message: `${id} reads ${names.map((n) => `"${n}"`).join(" or ")}, not "${value}"` };
    }
    return { ok: true, readings: { ...base, [READING_NAMES[gapId]]: value } };
  }
  const params = parseParams(value);
  if (gapId === "G3") {
    if (/^\d+$/.test(value))
      return { ok: true, readings: { ...base, signatureTolerance: { toleranceS: Number(value) } } };
    const text = params.get("tolerance-seconds");
    const unknown = [...params.keys()].filter((k) => k !== "tolerance-seconds");
    if (text === undefined || unknown.length > 0 || !/^\d+$/.test(text)) {
      return {
        ok: false,
        message: `G3 reads "tolerance-seconds=<n>" with n a whole number of seconds, not "${value}"`,
      };
    }
    return { ok: true, readings: { ...base, signatureTolerance: { toleranceS: Number(text) } } };
  }
  // G16
  let { jitter, fallbackWindowS } = base.retryTiming;
  if (params.size === 0) {
    return { ok: false, message: `G16 reads "jitter=on|off" and/or "fallback-window=<1h..4h>", not "${value}"` };
  }
  for (const [key, v] of params) {
    if (key === "jitter") {
      if (v !== "on" && v !== "off") return { ok: false, message: `G16: jitter is on or off, not "${v}"` };
      jitter = v === "on";
    } else if (key === "fallback-window") {
      const ms = parseDurationMs(v);
      if (ms === undefined)
        return { ok: false, message: `G16: fallback-window is a duration such as 2h or 90m, not "${v}"` };
      const seconds = ms / 1000;
      const { fallbackWindowMinS: min, fallbackWindowMaxS: max } = constants;
      if (seconds < min || seconds > max) {
        const spec = min === MIN_FALLBACK_WINDOW_S && max === MAX_FALLBACK_WINDOW_S;
        return {
          ok: false,
          message: `G16: fallback-window is ${formatWindow(seconds)}; it must be within ${formatWindow(min)} and ${formatWindow(max)} (RETRY-5${spec ? "" : ", as RETRY-5.min and RETRY-5.max set it"})`,
        };
      }
      fallbackWindowS = seconds;
    } else {
      return { ok: false, message: `G16 has the parameters jitter and fallback-window, not "${key}"` };
    }
  }
  return { ok: true, readings: { ...base, retryTiming: { jitter, fallbackWindowS } } };
}

/** `a=1, b=2` → Map; a part without `=` is kept with an empty value so it is reported. */
function parseParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of value.split(",")) {
    const text = part.trim();
    if (text === "") continue;
    const eq = text.indexOf("=");
    if (eq < 0) out.set(text, "");
    else out.set(text.slice(0, eq).trim(), text.slice(eq + 1).trim());
  }
  return out;
}

/** Seconds as the gaps table writes a window: `2h`, `90m`, `5400s`. */
function formatWindow(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * Every switchable gap's reading in the notation of docs/gaps.md, for the
 * trace (`{ G16: "jitter=on, fallback-window=2h" }`): the same notation as
 * the gaps' default values, so that a reproduce command leaves out what is
 * the default.
 */
export function readingsNotation(readings: ScenarioReadings): Record<string, string> {
  return {
    G3: `tolerance-seconds=${readings.signatureTolerance.toleranceS}`,
    G7: readings.discoveryPin,
    G8: readings.dnsFailureWithoutPin,
    G12: readings.overMaxRecipients,
    G13: readings.overMaxMessageSize,
    G16: `jitter=${readings.retryTiming.jitter ? "on" : "off"}, fallback-window=${formatWindow(readings.retryTiming.fallbackWindowS)}`,
    G18: readings.smtpRelay,
    G19: readings.fromDomainMismatch,
    G26: readings.policyRejectedRetryAfter,
    G46: readings.capabilities4xx,
    G47: readings.capabilitiesRetryAfter,
  };
}

/**
 * Applies settings in order (the scenario's, then `--set`'s): gap readings
 * (`["G7", "ignored"]`) and the draft's numbers (`["RETRY-2.cap", "30m"]`,
 * app/sim/constants.ts). The numbers are applied first, whatever the order,
 * since G16's window is checked against RETRY-5's bounds in force. The first
 * bad setting is the error, with its gap or knob.
 */
export function resolveReadings(
  settings: readonly (readonly [string, string | number])[],
  base: ScenarioReadings = defaultScenarioReadings,
):
  | { readonly ok: true; readonly readings: ScenarioReadings; readonly constants: SpecConstants }
  | { readonly ok: false; readonly id: string; readonly message: string } {
  let constants = SPEC_CONSTANTS;
  for (const [id, value] of settings) {
    if (!isKnobSetting(id)) continue;
    const applied = applyConstant(constants, id, value);
    if (!applied.ok) return { ok: false, id, message: applied.message };
    constants = applied.constants;
  }
  const crossed = constantsProblem(constants);
  if (crossed !== undefined) return { ok: false, id: crossed.name, message: crossed.message };
  let readings = base;
  for (const [id, value] of settings) {
    if (isKnobSetting(id)) continue;
    const applied = applyReading(readings, id, value, constants);
    if (!applied.ok) return { ok: false, id, message: applied.message };
    readings = applied.readings;
  }
  // The window in force (perhaps the default) within the bounds in force.
  const windowS = readings.retryTiming.fallbackWindowS;
  if (windowS < constants.fallbackWindowMinS || windowS > constants.fallbackWindowMaxS) {
    return {
      ok: false,
      id: "RETRY-5",
      message: `the fallback window in force (G16 ${formatWindow(windowS)}) is outside RETRY-5's bounds in force (${formatWindow(constants.fallbackWindowMinS)} to ${formatWindow(constants.fallbackWindowMaxS)}); set G16.fallback-window too`,
    };
  }
  return { ok: true, readings, constants };
}

/** Whether a setting's name is one of the draft's numbers (`RETRY-2.cap`) rather than a gap (`G16`). */
export function isKnobSetting(id: string): boolean {
  return !/^G\d+$/i.test(id.trim());
}

/**
 * A `--set` argument → its pair: `G7=ignored` → `["G7", "ignored"]`;
 * `G16=fallback-window=3h` and `G16.fallback-window=3h` → `["G16",
 * "fallback-window=3h"]`; `RETRY-2.cap=30m` → `["RETRY-2.cap", "30m"]`.
 *
 * @throws RangeError when there is no `=`, or neither a gap nor a knob before it.
 */
export function parseSetArgument(text: string): [string, string] {
  const eq = text.indexOf("=");
  const name = eq < 0 ? "" : text.slice(0, eq).trim();
  const value = text.slice(eq + 1);
  const gap = /^(G\d+)(?:\.([a-z][a-z-]*))?$/i.exec(name);
  if (eq >= 0 && gap !== null) {
    const id = (gap[1] ?? "").toUpperCase();
    return gap[2] !== undefined ? [id, `${gap[2].toLowerCase()}=${value}`] : [id, value];
  }
  const knob = specKnob(name);
  if (eq >= 0 && knob !== undefined) return [knob.name, value];
  throw new RangeError(
    eq >= 0 && looksLikeKnob(name)
      ? `--set ${name}: there is no such knob; the draft's numbers a run can change are ${knobNames()}`
      : `--set takes <gap>=<reading> or <knob>=<value>, e.g. G7=ignored, G16.fallback-window=3h or RETRY-2.cap=30m; not "${text}"`,
  );
}

// ---------------------------------------------------------------------------
// Domains

const mailboxEntrySchema = z
  .union([
    z.string().min(1),
    z.strictObject({
      address: z.string().min(1).meta({ description: "A local part (bob) or a whole mailbox (bob@b.example)." }),
      quota: mailboxConfigSchema.shape.quota,
    }),
  ])
  .meta({ description: "A local part (bob), a mailbox (bob@b.example), or { address, quota: { messages, bytes } }." });

const endpointSchema = z
  .union([
    z.string().min(1).meta({ description: "host or host:port" }),
    z.strictObject({ host: z.string().min(1).optional(), port: port.optional() }),
  ])
  .meta({ description: "Where the receiver listens: default mx.<domain> on port 443." });

/** Zod schema of one domain of a scenario. */
export const domainSchema = z
  .strictObject({
    description: z.string().optional(),
    receiver: z
      .literal("none")
      .optional()
      .meta({ description: "none: an SMTP-only domain, with no receiver and (unless `svcb` says) no SVCB record." }),
    endpoint: endpointSchema.optional(),
    svcb: z
      .array(z.union([z.string(), svcbRecordSchema]))
      .nullable()
      .optional()
      .meta({
        description:
          'The records at _svc.<domain>, replacing the default "1 <host>. port=<port>": RFC 9460 presentation strings or objects; [] answers NODATA, null NXDOMAIN.',
      }),
    capabilities: capabilitiesConfigSchema
      .extend({ max_message_size: capabilitiesConfigSchema.shape.max_message_size.default(DEFAULT_MAX_MESSAGE_SIZE) })
      .optional()
      .meta({ description: "The receiver's capabilities document (CAP-*): versions, max_message_size, …" }),
    capabilitiesMaxAgeS: z
      .int()
      .min(0)
      .max(MAX_SECONDS, { error: `max-age is at most ${MAX_SECONDS} seconds: ${MAX_SPAN_WHY}` })
      .optional()
      .meta({
        description: `The capabilities' Cache-Control max-age (GET-5); default 3600; at most ${MAX_SECONDS} seconds: ${MAX_SPAN_WHY}.`,
      }),
    mailboxes: z
      .array(mailboxEntrySchema)
      .max(MAX_MAILBOXES, { error: `a domain lists at most ${MAX_MAILBOXES} mailboxes: ${COUNT_WHY}` })
      .default([])
      .meta({ description: `At most ${MAX_MAILBOXES} mailboxes: ${COUNT_WHY}.` }),
    catchAll: z.boolean().optional().meta({ description: "Every local part of the domain exists." }),
    policy: policyConfigSchema
      .optional()
      .meta({ description: "The receiver's local policy: refusals, rate limits, planned failures (receiver config)." }),
    keys: z
      .strictObject({
        selector: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/, "a selector is one DNS label")
          .default("s1"),
        publish: z
          .boolean()
          .default(true)
          .meta({ description: "false: no TXT record, so receivers cannot verify (G4)." }),
      })
      .default({ selector: "s1", publish: true })
      .meta({
        description: "The domain's Ed25519 key, derived from the seed, published at <selector>._svckey.<domain> (G4).",
      }),
    G18: z
      .enum(["accept", "fail"])
      .optional()
      .meta({ description: "G18 for this domain's SMTP relay: accept (default) or fail." }),
    senderMisbehaviour: z
      .strictObject({
        reuseIdempotencyKey: z.boolean().optional().meta({
          description:
            "true: a deferred recipient's new delivery keeps the previous delivery's Idempotency-Key (breaks STATE-6, POST-27), so the receiver answers 409 idempotency_conflict.",
        }),
        dsnFromPostmaster: z.boolean().optional().meta({
          description:
            "true: the DSNs this sender sends come from postmaster@<domain> instead of the null reverse-path (breaks ENV-3). A DSN that fails would be reported by another DSN without end; the sender stops at the first (dsn.suppressed).",
        }),
      })
      .optional()
      .meta({
        description:
          "Deliberate mistakes of this domain's sender, for teaching; none by default (a correct sender). The trace's delivery.created records them.",
      }),
  })
  .meta({ title: "Domain" });

// ---------------------------------------------------------------------------
// Messages

/** Zod schema of one message a scenario submits. */
export const messageSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "an id is letters, digits, dots, underscores and hyphens")
      .optional()
      .meta({ description: "How expectations and the trace name the message; default m1, m2, … by position." }),
    at: timeOffsetSchema.default(0),
    from: mailboxString
      .nullable()
      .meta({ description: "The envelope sender, or null for the null reverse-path (then give `sender`)." }),
    sender: domainName
      .optional()
      .meta({ description: "The domain whose sender submits it; default the domain of `from`." }),
    via: domainName.optional().meta({
      description:
        "A forwarder: the domain whose sender delivers and signs the message although `from` is in another domain (breaks AUTH-4 on purpose, G19). Not with `sender` or a null `from`.",
    }),
    to: z.union([
      mailboxString,
      z
        .array(mailboxString)
        .min(1)
        .max(MAX_RECIPIENTS_PER_MESSAGE, {
          error: `a message has at most ${MAX_RECIPIENTS_PER_MESSAGE} recipients in a scenario: ${RECIPIENTS_PER_MESSAGE_WHY}`,
        })
        .meta({
          description: `At least 1 recipient (ENV-5), at most ${MAX_RECIPIENTS_PER_MESSAGE}: ${RECIPIENTS_PER_MESSAGE_WHY}.`,
        }),
    ]),
    subject: z.string().optional(),
    size: sizeSchema.optional(),
    eml: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "A raw RFC 5322 message, sent byte for byte: a file path relative to the scenario." }),
    text: z
      .string()
      .optional()
      .meta({ description: "A raw RFC 5322 message written inline; bare LF line breaks become CRLF." }),
  })
  .meta({ title: "Message" });

// ---------------------------------------------------------------------------
// Expectations

/** The final outcomes an expectation can name. `dsn-received`: a DSN about the recipient reached the envelope sender. */
export const EXPECTED_OUTCOMES = ["accepted", "rejected", "smtp", "bounced", "dsn-received"] as const;
export type ExpectedOutcome = (typeof EXPECTED_OUTCOMES)[number];

/** Zod schema of one expectation. */
export const expectationSchema = z
  .strictObject({
    id: z.string().min(1).optional().meta({ description: "A name for reports; default from the fields." }),
    message: z
      .string()
      .optional()
      .meta({ description: "A message id; default every message of the scenario (with this recipient)." }),
    recipient: mailboxString
      .optional()
      .meta({ description: "A recipient; default every recipient of the message(s). At most 320 characters (MBX-8)." }),
    outcome: z.enum(EXPECTED_OUTCOMES).optional(),
    reason: z
      .enum(["no-service", "fallback", "no-common-version"])
      .optional()
      .meta({ description: "With outcome smtp: why it was handed to SMTP." }),
    rule: z.string().optional().meta({ description: "The rule ID the outcome was decided by (STATE-7, …)." }),
    problem: z.string().min(1).optional().meta({
      description:
        "The problem the outcome was decided by: an errors-table identifier (invalid_signature) or a whole problem type URI.",
    }),
    relay: z
      .enum(["accepted", "refused"])
      .optional()
      .meta({ description: "With outcome smtp: whether the SMTP relay accepted the hand-off (G18)." }),
    within: durationSchema
      .optional()
      .meta({ description: "The outcome comes at most this long after the message was submitted." }),
    after: durationSchema
      .optional()
      .meta({ description: "The outcome comes at least this long after the message was submitted." }),
    attempts: countRange
      .optional()
      .meta({ description: "Attempts of the delivery to the recipient's domain (G16 counts them)." }),
    posts: countRange.optional().meta({ description: "POSTs that carried the recipient." }),
    never: z
      .array(z.enum(EXPECTED_OUTCOMES))
      .min(1)
      .optional()
      .meta({ description: "Outcomes that must not happen, e.g. [smtp]." }),
  })
  .meta({ title: "Expectation" });

// ---------------------------------------------------------------------------
// Lessons: the "Start here" path and annotations (lesson.ts)

/** The most annotations a scenario has, and the longest note. */
export const MAX_ANNOTATIONS = 100;
export const MAX_NOTE_CHARS = 400;
/** Why a lesson's texts and counts stop where they do (every bound says what it follows from). */
const LESSON_WHY = "a resource limit: the library and the run view show every one of them whole";

const lessonSchema = z
  .strictObject({
    order: z
      .number()
      .positive()
      .meta({ description: 'Its place in the library\'s "Start here" path: lessons are taken in this order.' }),
    watchFor: z
      .array(
        z
          .string()
          .min(1)
          .max(MAX_NOTE_CHARS, { error: `a point is at most ${MAX_NOTE_CHARS} characters: ${LESSON_WHY}` })
          .meta({ description: `One point, at most ${MAX_NOTE_CHARS} characters: ${LESSON_WHY}.` }),
      )
      .min(1)
      .max(12, { error: `a lesson has at most 12 points to watch for: ${LESSON_WHY}` })
      .meta({
        description: `What a learner should watch for in the run, one point each; at most 12: ${LESSON_WHY}.`,
      }),
  })
  .meta({
    title: "Lesson",
    description:
      'Makes the scenario a lesson of the library\'s "Start here" path: its place and what to watch for; the run view offers the next lesson at the end.',
  });

const eventKinds = Object.keys(traceEventNames);

/** Zod schema of one annotation: a note about a time of the run or an event kind. */
export const annotationSchema = z
  .strictObject({
    at: timeOffsetSchema
      .optional()
      .meta({ description: "The time the note is about: ms or a duration after the start (2h3m), or an ISO time." }),
    on: z
      .string()
      .refine(isTraceEventName, {
        error: (issue) => {
          const close = closestEventName(String(issue.input));
          return `is ${JSON.stringify(issue.input)}, not an event kind of the trace${close !== undefined ? ` (did you mean ${JSON.stringify(close)}?)` : ""}; the kinds are in docs/trace-format.md`;
        },
      })
      .optional()
      // The kinds as an enum in the JSON Schema (editors check and complete them); the parser's error names the closest.
      .meta({
        enum: eventKinds,
        description: "Or the event kind the note is about (smtp.handoff): its first event, or the nth.",
      }),
    nth: z
      .int()
      .min(1)
      .optional()
      .meta({ description: "With on: which event of that kind (1, the first, by default)." }),
    note: z
      .string()
      .min(1)
      .max(MAX_NOTE_CHARS, { error: `a note is at most ${MAX_NOTE_CHARS} characters: ${LESSON_WHY}` })
      .meta({
        description: `The note: a sentence or two, shown on the timeline and in the lesson panel; at most ${MAX_NOTE_CHARS} characters: ${LESSON_WHY}.`,
      }),
    pause: z
      .boolean()
      .default(true)
      .meta({ description: "Played as a lesson, the run pauses at the note (default true)." }),
  })
  .meta({
    title: "Annotation",
    description: "A note about a time of the run (at) or an event kind (on).",
    // at or on, not both and not neither; nth only with on (as `not` and `dependentRequired`, which editors
    // check, while the completion reads the properties above).
    not: { anyOf: [{ required: ["at", "on"] }, { not: { anyOf: [{ required: ["at"] }, { required: ["on"] }] } }] },
    dependentRequired: { nth: ["on"] },
  });

// ---------------------------------------------------------------------------
// The scenario

const gapIdSchema = z.string().regex(/^G[1-9][0-9]*$/, "a gap ID such as G7");

/**
 * What JSON Schema can say of `readings` (the parser, {@link applyReading},
 * has the last word): only switchable gaps, each with its reading names, G3 a
 * number of seconds, G16 its parameters. The 1h–4h bounds of G16's window are
 * the parser's alone.
 */
function readingsJsonSchema(): Record<string, unknown> {
  const g16Part = `(?:jitter\\s*=\\s*(?:on|off)|fallback-window\\s*=\\s*${DURATION_PATTERN_BODY})`;
  const properties: Record<string, unknown> = {
    G3: {
      anyOf: [
        { type: "integer", minimum: 0 },
        { type: "string", pattern: "^\\s*(?:tolerance-seconds\\s*=\\s*)?\\d+\\s*$" },
      ],
    },
    G16: { type: "string", pattern: `^\\s*${g16Part}(?:\\s*,\\s*${g16Part})*\\s*,?\\s*$` },
    G19: { enum: ["401", "403", 401, 403] },
  };
  for (const [id, names] of Object.entries(ENUM_READINGS))
    if (id !== "G19") properties[id] = { type: "string", enum: names };
  return { propertyNames: { enum: [...SWITCHABLE_GAPS] }, properties };
}

/**
 * What JSON Schema can say of `constants` (the parser, app/sim/constants.ts,
 * has the last word): the knobs' names, a duration string with a unit for
 * the durations, a number for the factor and the jitter.
 */
function constantsJsonSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const knob of SPEC_KNOBS) {
    properties[knob.name] =
      knob.kind === "number"
        ? {
            type: "number",
            minimum: knob.min,
            ...(knob.maxExclusive === true ? { exclusiveMaximum: knob.max } : { maximum: knob.max }),
            description: `${knob.title} [${knob.rules.join(", ")}]: ${knobRangeText(knob)}`,
          }
        : {
            type: "string",
            pattern: `^\\s*(?:\\d{1,11}(?:\\.\\d+)?(?:ms|s|m|h|d|w))+\\s*$`,
            description: `${knob.title} [${knob.rules.join(", ")}]: ${knobRangeText(knob)}`,
          };
  }
  return { propertyNames: { enum: SPEC_KNOBS.map((k) => k.name) }, properties };
}

const scenarioObject = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(""),
  title: z
    .string()
    .min(1)
    .max(120, { error: `a title is at most 120 characters: ${LESSON_WHY}` })
    .optional()
    .meta({
      description: `A human title for the library and the run view (Receiver down past the fallback window); default the name. At most 120 characters: ${LESSON_WHY}.`,
    }),
  lesson: lessonSchema.optional(),
  annotations: z
    .array(annotationSchema)
    .max(MAX_ANNOTATIONS, { error: `a scenario has at most ${MAX_ANNOTATIONS} annotations: ${LESSON_WHY}` })
    .default([])
    .meta({
      description: `Notes about times or events of the run, for a learner (docs/scenario-format.md, Lessons); at most ${MAX_ANNOTATIONS}: ${LESSON_WHY}.`,
    }),
  seed: seedSchema.default(1),
  start: isoTime.optional().meta({ description: "Virtual time at the start; default 2026-01-01T00:00:00Z." }),
  horizon: durationSchema.optional().meta({
    description: "Stop the run this long after the start at the latest; default 12 days after the last message.",
  }),
  problemBase: problemBaseSchema
    .optional()
    .meta({ description: `The {problem_base} of every receiver; default ${DEFAULT_PROBLEM_BASE}.` }),
  readings: z
    .record(gapIdSchema, z.union([z.string(), z.number()]))
    .default({})
    .meta({
      description: 'Readings of switchable gaps in the notation of docs/gaps.md: { G7: ignored, G16: "jitter=off" }.',
      ...readingsJsonSchema(),
    }),
  constants: z
    .record(z.string(), z.union([z.string(), z.number()]))
    .default({})
    .meta({
      description: `The draft's own numbers for this run, each named after its rule ID, when they are not SPEC.md's: { RETRY-2.cap: 30m, RETRY-6: 3d }. The knobs: ${knobNames()}. A run that departs from SPEC.md says so in its trace and report.`,
      ...constantsJsonSchema(),
    }),
  network: z
    .strictObject({ latency: latencySchema.default(0) })
    .default({ latency: 0 })
    .meta({ description: "The baseline latency of every HTTP exchange." }),
  dns: z
    .strictObject({
      latency: latencySchema.default(0),
      timeoutMs: boundedMs(MAX_LATENCY_MS, "a DNS timeout", MAX_LATENCY_WHY).default(5000),
      defaultTtlS: ttlSecondsSchema.default(300),
      records: z
        .record(z.string(), dnsRecordSetSchema)
        .default({})
        .meta({ description: "More record sets by name; a name the world publishes itself is replaced." }),
    })
    .default({ latency: 0, timeoutMs: 5000, defaultTtlS: 300, records: {} }),
  domains: z
    .record(domainName, domainSchema)
    .refine((domains) => Object.keys(domains).length > 0, { message: "a scenario has at least one domain" })
    .meta({ minProperties: 1 }),
  messages: z
    .array(messageSchema)
    .max(MAX_MESSAGES, { error: `a scenario submits at most ${MAX_MESSAGES} messages: ${COUNT_WHY}` })
    .default([])
    .meta({ description: `At most ${MAX_MESSAGES} messages: ${COUNT_WHY}.` }),
  faults: z
    .strictObject({
      network: z.array(networkFaultSchema).default([]),
      dns: z.array(dnsFaultSchema).default([]),
      dnsChanges: z.array(dnsChangeSchema).default([]),
    })
    .default({ network: [], dns: [], dnsChanges: [] }),
  expectations: z.array(expectationSchema).default([]),
});

/** Zod schema of a whole scenario. */
export const scenarioSchema = scenarioObject
  .superRefine((scenario, ctx) => checkScenario(scenario, ctx))
  .meta({
    title: "Mailscope scenario",
    description:
      "A simulation of the Inter-Domain Mail Delivery Service: domains, messages, faults, gap readings and expected outcomes (docs/scenario-format.md).",
  });

/** A scenario as written (defaults may be left out). */
export type ScenarioInput = z.input<typeof scenarioSchema>;
/** A scenario with its defaults applied. */
export type Scenario = z.output<typeof scenarioSchema>;
export type ScenarioDomain = Scenario["domains"][string];
export type ScenarioMessage = Scenario["messages"][number];
export type ScenarioExpectation = Scenario["expectations"][number];

/** The id of the message at `index`: its own, or m1, m2, … */
export function messageIdOf(message: Pick<ScenarioMessage, "id">, index: number): string {
  return message.id ?? `m${index + 1}`;
}

/** The recipients of a message as a list. */
export function recipientsOf(message: Pick<ScenarioMessage, "to">): string[] {
  return typeof message.to === "string" ? [message.to] : [...message.to];
}

/** The domain whose sender submits the message. */
export function senderDomainOf(message: Pick<ScenarioMessage, "from" | "sender" | "via">): string | undefined {
  if (message.via !== undefined) return normalizeDomain(message.via);
  if (message.sender !== undefined) return normalizeDomain(message.sender);
  if (message.from === null) return undefined;
  const parsed = parseMailbox(message.from);
  return parsed.ok ? parsed.value.domain : undefined;
}

/** A mailbox entry of a domain as a whole address. */
export function mailboxAddressOf(entry: string, domain: string): string {
  return entry.includes("@") ? entry : `${entry}@${domain}`;
}

function normalizeDomain(domain: string): string {
  return domain.toLowerCase().replace(/\.$/, "");
}

/** Adds an issue at `path` (a field of the scenario). */
type AddIssue = (path: (string | number)[], message: string) => void;

/** Checks across fields: references between messages, domains and expectations, and the readings. */
function checkScenario(s: z.output<typeof scenarioObject>, ctx: z.RefinementCtx): void {
  const add: AddIssue = (path, message) => ctx.addIssue({ code: "custom", path, message });
  checkConstantsAndReadings(s, add);
  checkDomains(s, add);
  checkTimesAndCounts(s, add);
  const { messageIds, recipientsById } = checkMessages(s, add);
  checkExpectations(s, add, messageIds, recipientsById);
}

/** The constants and gap readings: each applies, and together they do not cross (RETRY-5). */
function checkConstantsAndReadings(s: z.output<typeof scenarioObject>, add: AddIssue): void {
  let constants = SPEC_CONSTANTS;
  for (const [name, value] of Object.entries(s.constants)) {
    const applied = applyConstant(constants, name, value);
    if (!applied.ok) add(["constants", name], applied.message);
    else constants = applied.constants;
  }
  const crossed = constantsProblem(constants);
  if (crossed !== undefined) {
    const at = Object.keys(s.constants).find((k) => specKnob(k)?.name === crossed.name) ?? Object.keys(s.constants)[0];
    if (at !== undefined) add(["constants", at], crossed.message);
  }
  for (const [id, value] of Object.entries(s.readings)) {
    const applied = applyReading(defaultScenarioReadings, id, value, constants);
    if (!applied.ok) add(["readings", id], applied.message);
  }
  const inForce = resolveReadings([...Object.entries(s.constants), ...Object.entries(s.readings)]);
  if (!inForce.ok && inForce.id === "RETRY-5") {
    add(
      Object.hasOwn(s.readings, "G16") ? ["readings", "G16"] : ["constants", Object.keys(s.constants)[0] ?? ""],
      inForce.message,
    );
  }
}

/** Each domain: what a domain without a receiver cannot have, its mailboxes, policy lists, SVCB records, endpoint. */
function checkDomains(s: z.output<typeof scenarioObject>, add: AddIssue): void {
  for (const [name, d] of Object.entries(s.domains)) {
    const key = normalizeDomain(name);
    if (d.receiver === "none") {
      for (const field of ["capabilities", "capabilitiesMaxAgeS", "policy", "endpoint", "catchAll"] as const) {
        if (d[field] !== undefined)
          add(["domains", name, field], `${name} has no receiver (receiver: none), so ${field} means nothing`);
      }
      if (d.mailboxes.length > 0)
        add(["domains", name, "mailboxes"], `${name} has no receiver (receiver: none), so it has no mailboxes`);
    }
    const seen = new Set<string>();
    d.mailboxes.forEach((entry, i) => {
      const address = mailboxAddressOf(typeof entry === "string" ? entry : entry.address, key);
      const path =
        typeof entry === "string" ? ["domains", name, "mailboxes", i] : ["domains", name, "mailboxes", i, "address"];
      const parsed = parseMailbox(address);
      if (!parsed.ok) {
        add(
          path,
          `"${address}" is not a mailbox: ${parsed.violations.map((v) => `${v.message} [${v.rule}]`).join("; ")}`,
        );
        return;
      }
      if (parsed.value.domain !== key) add(path, `${address} is not in ${name}`);
      if (seen.has(parsed.value.address)) add(path, `${address} is listed twice`);
      seen.add(parsed.value.address);
    });
    if (d.policy !== undefined) {
      for (const list of [
        "recipientRefusals",
        "recipientRateLimits",
        "temporaryFailures",
        "failAfterAcceptance",
      ] as const) {
        d.policy[list].forEach((rule, i) => {
          if (parsed(rule.mailbox)?.domain !== key)
            add(["domains", name, "policy", list, i, "mailbox"], `${rule.mailbox} is not in ${name}`);
        });
      }
    }
    (d.svcb ?? []).forEach((record, i) => {
      const problem = svcbProblem(record);
      if (problem !== undefined) add(["domains", name, "svcb", i], problem);
    });
    if (typeof d.endpoint === "string" && !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(d.endpoint)) {
      add(["domains", name, "endpoint"], `"${d.endpoint}" is not host or host:port`);
    }
    const host = typeof d.endpoint === "string" ? d.endpoint.split(":")[0] : d.endpoint?.host;
    if (host !== undefined && host !== "" && !isDomainName(host))
      add(["domains", name, "endpoint"], `"${host}" is not a host name`);
  }
}

/** Times within the run's span, the recipients' bound, annotations and the SVCB records of DNS and its changes. */
function checkTimesAndCounts(s: z.output<typeof scenarioObject>, add: AddIssue): void {
  // An ISO time is bounded by its distance from the start, as offsets are (MAX_VIRTUAL_MS).
  const startMs = s.start !== undefined ? Date.parse(s.start) : DEFAULT_START_MS;
  const checkTime = (path: (string | number)[], value: number | string | undefined): void => {
    if (typeof value !== "string" || parseDurationMs(value) !== undefined || !Number.isFinite(startMs)) return;
    let afterStart: number;
    try {
      afterStart = resolveTimeMs(value, startMs) - startMs;
    } catch {
      return; // not a time at all: the field's own check says so
    }
    if (!Number.isFinite(afterStart)) add(path, `${value} is not a time`);
    else if (afterStart > MAX_VIRTUAL_MS)
      add(path, `${value} is more than ${formatBoundMs(MAX_VIRTUAL_MS)} after the start of the run: ${MAX_SPAN_WHY}`);
  };
  s.messages.forEach((m, i) => checkTime(["messages", i, "at"], m.at));
  // The recipients of all messages together, reported once, at the message that passes the bound.
  let recipients = 0;
  for (const [i, m] of s.messages.entries()) {
    recipients += typeof m.to === "string" ? 1 : m.to.length;
    if (recipients > MAX_RECIPIENTS) {
      add(
        ["messages", i, "to"],
        `brings the recipients to ${recipients}; a scenario has at most ${MAX_RECIPIENTS} recipients, all messages together: ${COUNT_WHY}`,
      );
      break;
    }
  }
  for (const layer of ["network", "dns"] as const) {
    s.faults[layer].forEach((f, i) => {
      checkTime(["faults", layer, i, "from"], f.from);
      checkTime(["faults", layer, i, "until"], f.until);
    });
  }
  s.faults.dnsChanges.forEach((c, i) => checkTime(["faults", "dnsChanges", i, "at"], c.at));
  s.annotations.forEach((a, i) => {
    if (a.at === undefined && a.on === undefined)
      add(["annotations", i], "an annotation needs at (a time) or on (an event kind)");
    if (a.at !== undefined && a.on !== undefined) add(["annotations", i, "on"], "give at or on, not both");
    if (a.nth !== undefined && a.on === undefined) add(["annotations", i, "nth"], "nth goes with on");
    checkTime(["annotations", i, "at"], a.at);
  });

  for (const [name, set] of Object.entries(s.dns.records)) {
    (set.svcb ?? []).forEach((record, i) => {
      const problem = svcbProblem(record);
      if (problem !== undefined) add(["dns", "records", name, "svcb", i], problem);
    });
  }
  s.faults.dnsChanges.forEach((change, c) => {
    (change.records?.svcb ?? []).forEach((record, i) => {
      const problem = svcbProblem(record);
      if (problem !== undefined) add(["faults", "dnsChanges", c, "records", "svcb", i], problem);
    });
  });
}

/** Each message: a unique id, one body, its sender and recipients in the scenario's domains. */
function checkMessages(
  s: z.output<typeof scenarioObject>,
  add: AddIssue,
): {
  readonly messageIds: ReadonlyMap<string, number>;
  readonly recipientsById: ReadonlyMap<string, ReadonlySet<string>>;
} {
  const domains = new Map(Object.entries(s.domains).map(([name, d]) => [normalizeDomain(name), { name, d }]));
  const messageIds = new Map<string, number>();
  const recipientsById = new Map<string, Set<string>>();
  s.messages.forEach((m, i) => {
    const id = messageIdOf(m, i);
    if (messageIds.has(id))
      add(["messages", i, "id"], `the id ${id} is also the id of messages[${messageIds.get(id)}]`);
    messageIds.set(id, i);
    const bodies = (["size", "eml", "text"] as const).filter((k) => m[k] !== undefined);
    if (bodies.length > 1)
      add(["messages", i, bodies[1] ?? "size"], `give one of size, eml and text, not ${bodies.join(" and ")}`);
    if (m.from === null) {
      if (m.sender === undefined)
        add(
          ["messages", i, "sender"],
          "a message with from: null (a null reverse-path) needs `sender`: the domain that sends it",
        );
    } else {
      const from = parsed(m.from);
      if (from === undefined) add(["messages", i, "from"], mailboxProblem(m.from));
      else if (m.sender !== undefined && normalizeDomain(m.sender) !== from.domain) {
        add(
          ["messages", i, "sender"],
          `the sender domain must be the domain of from (${from.domain}): AUTH-3; for a forwarder that signs for another domain, use via`,
        );
      }
    }
    if (m.via !== undefined) {
      if (m.sender !== undefined) add(["messages", i, "via"], "give sender or via, not both");
      else if (m.from === null)
        add(["messages", i, "via"], "a message with from: null has no domain to differ from; use sender");
    }
    const senderDomain = senderDomainOf(m);
    if (senderDomain !== undefined && !domains.has(senderDomain)) {
      add(
        ["messages", i, m.via !== undefined ? "via" : m.sender !== undefined ? "sender" : "from"],
        `${senderDomain} is not a domain of the scenario; declare it under domains`,
      );
    }
    const recipients = new Set<string>();
    const to = recipientsOf(m);
    to.forEach((address, j) => {
      const path: (string | number)[] = typeof m.to === "string" ? ["messages", i, "to"] : ["messages", i, "to", j];
      const r = parsed(address);
      if (r === undefined) {
        add(path, mailboxProblem(address));
        return;
      }
      recipients.add(r.address);
      if (!domains.has(r.domain)) {
        add(
          path,
          `${r.domain} is not a domain of the scenario; declare it under domains (receiver: none for an SMTP-only domain)`,
        );
      }
    });
    recipientsById.set(id, recipients);
    if (m.size !== undefined && parseSizeBytes(m.size) === undefined) add(["messages", i, "size"], "not a size");
  });
  return { messageIds, recipientsById };
}

/** Each expectation: its message and recipient exist, and its fields go together. */
function checkExpectations(
  s: z.output<typeof scenarioObject>,
  add: AddIssue,
  messageIds: ReadonlyMap<string, number>,
  recipientsById: ReadonlyMap<string, ReadonlySet<string>>,
): void {
  s.expectations.forEach((e, i) => {
    if (e.message !== undefined && !messageIds.has(e.message)) {
      add(
        ["expectations", i, "message"],
        `no message has the id ${e.message} (ids: ${[...messageIds.keys()].join(", ") || "none"})`,
      );
      return;
    }
    if (e.recipient !== undefined) {
      const r = parsed(e.recipient);
      if (r === undefined) {
        add(["expectations", i, "recipient"], mailboxProblem(e.recipient));
        return;
      }
      const among = e.message !== undefined ? [e.message] : [...messageIds.keys()];
      if (!among.some((id) => recipientsById.get(id)?.has(r.address) === true)) {
        add(
          ["expectations", i, "recipient"],
          e.message !== undefined
            ? `${e.recipient} is not a recipient of ${e.message}`
            : `${e.recipient} is not a recipient of any message`,
        );
      }
    }
    if (e.reason !== undefined && e.outcome !== "smtp")
      add(["expectations", i, "reason"], "reason goes with outcome: smtp");
    if (e.relay !== undefined && e.outcome !== "smtp")
      add(["expectations", i, "relay"], "relay goes with outcome: smtp");
    if (e.outcome !== undefined && e.never?.includes(e.outcome) === true) {
      add(["expectations", i, "never"], `${e.outcome} cannot be both the outcome and never`);
    }
  });
}

/** Why an SVCB record given as a presentation string does not parse (RFC 9460), or undefined. */
function svcbProblem(record: unknown): string | undefined {
  if (typeof record !== "string") return undefined;
  const result = parseSvcbPresentation(record);
  return result.ok
    ? undefined
    : `"${record}" is not an SVCB record: ${result.violations.map((v) => `${v.message} [${v.rule}]`).join("; ")}`;
}

function parsed(address: string): { address: string; domain: string } | undefined {
  const result = parseMailbox(address);
  return result.ok ? { address: result.value.address, domain: result.value.domain } : undefined;
}

function mailboxProblem(address: string): string {
  const result = parseMailbox(address);
  return result.ok
    ? ""
    : `"${address}" is not a mailbox: ${result.violations.map((v) => `${v.message} [${v.rule}]`).join("; ")}`;
}

/** The JSON Schema (draft 2020-12) of a scenario file, as written to schemas/scenario.schema.json. */
export function scenarioJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(scenarioSchema, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
  return { $id: "https://mailscope.example/schemas/scenario.schema.json", ...schema };
}

// ---------------------------------------------------------------------------
// Reading a scenario file, with positions

/** One problem of a scenario file: where it is and what is wrong. */
/** A problem in a scenario file: file, line, column, field and what is wrong. */
export type ScenarioError = FileError;

/** `file:line:column: field: message`, the form editors and terminals link. */
export const formatScenarioError: (error: ScenarioError) => string = formatFileError;

/** The outcome of {@link parseScenarioText}. */
export type ScenarioParse =
  | { readonly ok: true; readonly scenario: Scenario; readonly locate: Locator }
  | { readonly ok: false; readonly errors: readonly ScenarioError[] };

/** Turns a path in the scenario into a position in its file, for errors found later (a missing .eml). */
export type Locator = (path: readonly (string | number)[], message: string) => ScenarioError;

/**
 * Parses YAML (or JSON) `text` and validates it as a scenario. Never throws:
 * a syntax error, an empty file and every schema violation come back as
 * errors naming `file`, line, column and field (the value at fault, or the
 * object that lacks a required field).
 */
export function parseScenarioText(text: string, file = "scenario.yaml"): ScenarioParse {
  const parsed = parseYamlWith(
    text,
    file,
    scenarioSchema,
    {
      empty: "the file is empty; a scenario is a mapping with name, domains, messages…",
      notMapping: "a scenario is a mapping of fields (name, domains, messages…)",
    },
    suggestion,
  );
  if (!parsed.ok) return { ok: false, errors: dedupe([...parsed.errors]) };
  const { doc, at } = parsed;
  const locate: Locator = (path, message) => ({ file, ...positionOf(doc, path, at), field: fieldName(path), message });
  return { ok: true, scenario: parsed.value, locate };
}

function dedupe(errors: ScenarioError[]): ScenarioError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = formatScenarioError(e);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const TOP_LEVEL_FIELDS = Object.keys(scenarioSchema.shape);

const suggestion: UnknownKeyHint = (key, _doc, path) => {
  if (path.length !== 0) return "";
  const close = TOP_LEVEL_FIELDS.find(
    (f) => f.toLowerCase() === key.toLowerCase() || f.startsWith(key) || key.startsWith(f),
  );
  return close !== undefined ? ` (did you mean "${close}"?)` : ` (the fields are ${TOP_LEVEL_FIELDS.join(", ")})`;
};

// ---------------------------------------------------------------------------
// Loading: the text, then the .eml files it names

/** A scenario ready to run: validated, with the raw messages it names read. */
export interface LoadedScenario {
  readonly scenario: Scenario;
  /** The scenario's text, for the trace. */
  readonly source: string;
  /** The file as the user named it, for errors, the trace and the reproduce command. */
  readonly file?: string;
  /** The bytes of each `eml` path, as written in the scenario. */
  readonly emls: ReadonlyMap<string, Uint8Array>;
}

/** What {@link loadScenario} may be given. */
export interface LoadScenarioOptions {
  /** The file name for errors and the trace. */
  readonly file?: string;
  /** Reads an `eml` path (relative to the scenario); rejects when it cannot. Without it an `eml` is an error. */
  readonly readFile?: (path: string) => Promise<Uint8Array>;
}

/** The outcome of {@link loadScenario}. */
export type ScenarioLoad =
  | { readonly ok: true; readonly loaded: LoadedScenario }
  | { readonly ok: false; readonly errors: readonly ScenarioError[] };

/**
 * Parses and validates `text`, then reads the `.eml` files its messages name
 * and checks that every message has its own Message-ID (the duplicate-delivery
 * invariant tells messages apart by it). Never throws.
 */
export async function loadScenario(text: string, options: LoadScenarioOptions = {}): Promise<ScenarioLoad> {
  const file = options.file ?? "scenario.yaml";
  const parsedText = parseScenarioText(text, file);
  if (!parsedText.ok) return parsedText;
  const { scenario, locate } = parsedText;
  const emls = new Map<string, Uint8Array>();
  const errors: ScenarioError[] = [];
  for (const [i, m] of scenario.messages.entries()) {
    if (m.eml === undefined || emls.has(m.eml)) continue;
    if (options.readFile === undefined) {
      errors.push(
        locate(["messages", i, "eml"], "raw .eml files can only be read when the scenario is loaded from a file"),
      );
      continue;
    }
    try {
      emls.set(m.eml, await options.readFile(m.eml));
    } catch (error) {
      errors.push(locate(["messages", i, "eml"], `cannot read ${m.eml}: ${errorMessage(error)}`));
    }
  }
  const seen = new Map<string, number>();
  scenario.messages.forEach((m, i) => {
    const raw =
      m.eml !== undefined ? emls.get(m.eml) : m.text !== undefined ? new TextEncoder().encode(m.text) : undefined;
    if (raw === undefined) return;
    const id = headerMessageId(raw);
    if (id === undefined) return;
    const other = seen.get(id);
    if (other !== undefined) {
      errors.push(
        locate(
          ["messages", i, m.eml !== undefined ? "eml" : "text"],
          `its Message-ID <${id}> is also the Message-ID of messages[${other}]; each message of a scenario needs its own`,
        ),
      );
    }
    seen.set(id, i);
  });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    loaded: { scenario, source: text, ...(options.file !== undefined && { file: options.file }), emls },
  };
}

/**
 * A {@link LoadScenarioOptions.readFile} over bytes already at hand (the app's
 * `start` command, a worker's one-shot run, a bug bundle's `emls`), by the
 * path as the scenario writes it. A bare ArrayBuffer (a transferred file) is
 * taken as its bytes. A path not among them rejects, and the load reports it
 * at the message's `eml` field: with `errors[path]` when the shell tried to
 * read it and says why (the desktop app reads a scenario's `eml:` files when
 * it opens it), else {@link EML_NOT_GIVEN} (the browser build reads no file a
 * scenario names: there an `eml:` message ends unless a bug bundle brought
 * its bytes).
 */
export function emlReader(
  emls: Readonly<Record<string, unknown>> | undefined,
  errors?: Readonly<Record<string, string>>,
): (path: string) => Promise<Uint8Array> {
  return (path) => {
    const bytes: unknown = emls !== undefined && Object.hasOwn(emls, path) ? emls[path] : undefined;
    if (bytes instanceof Uint8Array) return Promise.resolve(bytes);
    if (bytes instanceof ArrayBuffer) return Promise.resolve(new Uint8Array(bytes));
    const why = errors !== undefined && Object.hasOwn(errors, path) ? errors[path] : undefined;
    return Promise.reject(new Error(typeof why === "string" ? why : EML_NOT_GIVEN));
  };
}

/** Why {@link emlReader} has no bytes for a path: the app's runs say it at the message's `eml` field. */
export const EML_NOT_GIVEN =
  "its bytes were not given with the scenario: the app does not read eml: files (mailscope run does; a bug bundle it writes with --bundle carries them)";

/** The Message-ID of a raw message's header block, without angle brackets; undefined when it has none. */
export function headerMessageId(message: Uint8Array): string | undefined {
  const head = headerText(message);
  const match = /^message-id:[ \t]*(?:\r?\n[ \t]+)?<?([^<>\s]+)>?/im.exec(head);
  return match?.[1];
}

/** The header block of a message as text (latin1 so any byte maps to one character), up to the first empty line. */
export function headerText(message: Uint8Array): string {
  let end = message.length;
  for (let i = 0; i + 1 < message.length; i++) {
    if (message[i] === 0x0a && (message[i + 1] === 0x0a || (message[i + 1] === 0x0d && message[i + 2] === 0x0a))) {
      end = i;
      break;
    }
  }
  return bytesToBinary(message.subarray(0, end));
}
