/**
 * Every knob of `mailscope explore` in one options object (docs/explore.md "Options"): the ranges a generated world is drawn from,
 * the behaviours it may contain, and the search's own settings.
 *
 * Swarm testing (after TigerBeetle's VOPR `options_swarm`): each run first
 * draws its own distribution of every knob — which features are on (each
 * with `featureChance`), and for each count a cap between the range's ends —
 * then draws its world from that. So one run has three fault kinds and many
 * recipients, the next one kind and one recipient, and rare combinations
 * come up instead of being averaged away.
 *
 * Options come as YAML or JSON (`--options FILE`, the app's Explore view); a
 * field left out keeps its default, and a bad value is a located error.
 */
import * as z from "zod";
import { parseDurationMs } from "../sim/faultScope.ts";
import type { FileError } from "../sim/yamlPosition.ts";
import { readYamlFile } from "./yamlFile.ts";

/**
 * The behaviours a world may contain, each a switch of the options
 * (`features: { partition: false }`) and, per run, on with `featureChance`.
 */
export const FEATURES = {
  // What a receiver answers for a recipient (the receiver's policy, per mailbox).
  "recipient-not-found": "a recipient whose mailbox does not exist: rejected, recipient_not_found",
  "recipient-refused": "a mailbox that refuses the sender: rejected, policy_rejected (per recipient)",
  "recipient-deferred": "a mailbox answering deferred (temporary_failure) a few times, or every time",
  "recipient-retry-after": "a deferred answer with retry_after",
  "recipient-rate-limited": "a mailbox that takes one message per window: deferred rate_limited with retry_after",
  "mailbox-full": "a mailbox over its quota: deferred mailbox_full",
  "failure-after-acceptance": "a mailbox that accepts, then fails: a DSN after acceptance (G17)",
  // What a receiver answers for a whole request (its policy, per domain).
  "receiver-unavailable": "a receiver answering 503 temporary_failure to its first deliveries",
  "receiver-rate-limited": "a receiver limiting deliveries per signing domain: 429 rate_limited",
  "sender-refused": "a receiver refusing a sending domain: 403 policy_rejected, with or without Retry-After (G26)",
  // Network faults.
  "connection-refused": "connections refused",
  timeout: "requests that time out",
  "connection-reset": "connections reset, before or after the receiver handled the request",
  "tls-failure": "TLS handshakes that fail",
  latency: "slow exchanges (up to minutes: the signature's created can go stale, G3)",
  "unavailable-503": "503 answers with a problem document, with or without Retry-After",
  "bare-503": "503 answers without a problem document",
  "rate-limited-429": "429 rate_limited answers, with a Retry-After in seconds, as a date, or malformed (G21)",
  "forbidden-403": "403 policy_rejected answers from a front end",
  "server-error": "other 5xx answers without a problem document",
  "client-error": "4xx problem answers: 400, 401, 404 unsupported_version, 409, 413",
  "unknown-problem": "problem documents of a type the table does not know, as 4xx or 5xx",
  "unreadable-200": "a 200 whose body is not a delivery result (G15)",
  "capabilities-invalid": "an invalid capabilities document",
  "capabilities-unfetchable": "a capabilities document that cannot be fetched (404, 500, 503)",
  partition: "two domains that cannot reach each other",
  "slow-body": "answers whose body trickles in",
  // DNS.
  servfail: "SVCB or key lookups answered SERVFAIL",
  nxdomain: "SVCB or key lookups answered NXDOMAIN",
  "dns-timeout": "SVCB or key lookups that time out",
  "svcb-changes": "SVCB records that vanish, go empty, move to another port, and come back",
  "key-changes": "a key record that changes to a key the sender does not sign with",
  "short-pins": "capabilities with a short or no discovery pin and a short max-age, so pins expire",
  // The world itself.
  "smtp-only-domain": "a domain without a receiver (no SVCB record: plain SMTP, G6/G8)",
  "no-common-version": "a receiver advertising only versions the sender does not speak",
  "many-recipients": "messages with more recipients than a receiver's max_recipients (G12)",
  "size-near-limit": "messages around max_message_size (G13, G24), 25 MiB each",
  "late-submission": "messages submitted days after the start, and faults late in the 5-day window",
  "null-sender": "messages with the null reverse-path (from: null)",
  forwarded: "messages a forwarder signs for another domain (via; AUTH-4, G19)",
  "unpublished-key": "a domain that publishes no key record",
  readings: "non-default readings of the switchable gaps (G3 … G47), each on at random",
  "schedule-aligned-window":
    "fallback windows that end exactly on a scheduled attempt (63m, 123m, 183m) with jitter off",
} as const;

/**
 * Features whose chance per run is not `featureChance` unless the options
 * say: a 25 MiB message costs a hundred times a small one on every attempt,
 * so worlds with one are made rarely by default.
 */
export const FEATURE_DEFAULT_CHANCE: Readonly<Partial<Record<Feature, number>>> = { "size-near-limit": 0.02 };

/** The name of a feature. */
export type Feature = keyof typeof FEATURES;
/** The features, in order. */
export const FEATURE_NAMES = Object.keys(FEATURES) as Feature[];

/** A count's range, both ends included. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** The options of an exploration (docs/explore.md "Options"). */
export interface ExploreOptions {
  /** Domains of a world (a.example, b.example, …), each with a sender and mostly a receiver. 1–8; default 1–4. */
  readonly domains: Range;
  /** Messages of a world. 1–20; default 1–5. */
  readonly messages: Range;
  /** Recipients of one message. 1–1000; default 1–150. */
  readonly recipients: Range;
  /** Network faults of a world. 0–20; default 0–6. */
  readonly networkFaults: Range;
  /** DNS faults of a world. 0–10; default 0–2. */
  readonly dnsFaults: Range;
  /** DNS changes of a world (records that change, keys that rotate). 0–10; default 0–2. */
  readonly dnsChanges: Range;
  /** The latest submission time, with `late-submission` on: 0–30 days; default 5 days. */
  readonly latestSubmissionMs: number;
  /**
   * Each feature's chance to be on in one run (swarm): `featureChance`
   * unless the options give `true` (that), `false` (never) or a chance of
   * its own; `size-near-limit` defaults to 0.02.
   */
  readonly features: Readonly<Record<Feature, number>>;
  /** The chance that a feature is on in one run, where the options give it no chance of its own. 0–1; default 0.5. */
  readonly featureChance: number;
  /** The chance that a run mutates a corpus entry instead of starting afresh. 0–1; default 0.5. */
  readonly mutateChance: number;
  /** Independent search lanes (the unit of parallel work and of shards). 1–256; default 32. */
  readonly lanes: number;
  /** The most runs the shrinking of one violation may take. 0–10000; default 400. */
  readonly shrinkRuns: number;
}

const range = (lo: number, hi: number, min: number, max: number) =>
  z
    .strictObject({
      min: z.int().min(lo).max(hi).default(min),
      max: z.int().min(lo).max(hi).default(max),
    })
    .default({ min, max })
    .refine((r) => r.min <= r.max, { message: "min is at most max" });

const MAX_LATEST_SUBMISSION_MS = 30 * 86_400_000;

const duration = z.union([z.number().min(0), z.string()]).transform((value, ctx) => {
  const ms = typeof value === "number" ? value : parseDurationMs(value);
  if (ms === undefined) {
    ctx.addIssue({ code: "custom", message: 'a duration is ms or a string such as "90s", "2h", "5d"' });
    return z.NEVER;
  }
  if (ms > MAX_LATEST_SUBMISSION_MS) {
    ctx.addIssue({ code: "custom", message: `is ${String(value)}; at most 30d` });
    return z.NEVER;
  }
  return ms;
});

const featureNameSchema = z.enum(FEATURE_NAMES as [Feature, ...Feature[]]);

/** Zod schema of the options as written (every field optional). */
export const exploreOptionsSchema = z.strictObject({
  domains: range(1, 8, 1, 4),
  messages: range(1, 20, 1, 5),
  recipients: range(1, 1000, 1, 150),
  networkFaults: range(0, 20, 0, 6),
  dnsFaults: range(0, 10, 0, 2),
  dnsChanges: range(0, 10, 0, 2),
  latestSubmission: duration.default(5 * 86_400_000),
  features: z.partialRecord(featureNameSchema, z.union([z.boolean(), z.number().min(0).max(1)])).default({}),
  featureChance: z.number().min(0).max(1).default(0.5),
  mutateChance: z.number().min(0).max(1).default(0.5),
  lanes: z.int().min(1).max(256).default(32),
  shrinkRuns: z.int().min(0).max(10_000).default(400),
});

/** The options as a file or the app gives them: any field may be left out. */
export type ExploreOptionsInput = z.input<typeof exploreOptionsSchema>;

function fromParsed(parsed: z.output<typeof exploreOptionsSchema>): ExploreOptions {
  const chance = (f: Feature): number => {
    const given = parsed.features[f];
    if (typeof given === "number") return given;
    if (given === false) return 0;
    return given === true ? parsed.featureChance : (FEATURE_DEFAULT_CHANCE[f] ?? parsed.featureChance);
  };
  const features = Object.fromEntries(FEATURE_NAMES.map((f) => [f, chance(f)])) as Record<Feature, number>;
  return {
    domains: parsed.domains,
    messages: parsed.messages,
    recipients: parsed.recipients,
    networkFaults: parsed.networkFaults,
    dnsFaults: parsed.dnsFaults,
    dnsChanges: parsed.dnsChanges,
    latestSubmissionMs: parsed.latestSubmission,
    features,
    featureChance: parsed.featureChance,
    mutateChance: parsed.mutateChance,
    lanes: parsed.lanes,
    shrinkRuns: parsed.shrinkRuns,
  };
}

/** The options with every default. */
export const DEFAULT_EXPLORE_OPTIONS: ExploreOptions = fromParsed(exploreOptionsSchema.parse({}));

/**
 * Options from a plain value (the app's form, a test).
 *
 * @throws RangeError with every problem when the value is not valid options.
 */
export function exploreOptions(input: ExploreOptionsInput = {}): ExploreOptions {
  const parsed = exploreOptionsSchema.safeParse(input);
  if (!parsed.success) {
    throw new RangeError(parsed.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; "));
  }
  return fromParsed(parsed.data);
}

/** Options read from a YAML or JSON file, or its errors, each located. */
export function readExploreOptions(
  text: string,
  file: string,
):
  | { readonly ok: true; readonly options: ExploreOptions }
  | { readonly ok: false; readonly errors: readonly FileError[] } {
  const read = readYamlFile(exploreOptionsSchema, text, file, {});
  return read.ok ? { ok: true, options: fromParsed(read.value) } : read;
}

/**
 * The options as they go into a report and a shard file: plain data in a
 * fixed key order, so that two runs with the same options write the same
 * bytes and a merge can say which option differs. {@link exploreOptions}
 * reads it back.
 */
export function optionsRecord(options: ExploreOptions): Record<string, unknown> {
  return {
    domains: { ...options.domains },
    messages: { ...options.messages },
    recipients: { ...options.recipients },
    networkFaults: { ...options.networkFaults },
    dnsFaults: { ...options.dnsFaults },
    dnsChanges: { ...options.dnsChanges },
    latestSubmission: options.latestSubmissionMs,
    features: Object.fromEntries(FEATURE_NAMES.map((f) => [f, options.features[f]])),
    featureChance: options.featureChance,
    mutateChance: options.mutateChance,
    lanes: options.lanes,
    shrinkRuns: options.shrinkRuns,
  };
}
