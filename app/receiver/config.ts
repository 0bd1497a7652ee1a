/**
 * The receiver's configuration: which domains it serves, what it advertises
 * in its capabilities document, its mailboxes and quotas, its local policy
 * (SVC-10: reputation and filtering are receiver-local) and the readings of
 * the switchable gaps that concern it (G3, G19).
 *
 * It is data, validated by a zod schema, so that a YAML file (the `serve`
 * command) or a scenario can be checked with a path for every error. Names
 * the spec gives keep its spelling (`problem_base`, the capabilities
 * members, which go on the wire as they are); Mailscope's own knobs are
 * camelCase with the unit last (`retryAfterS`, `delayMs`).
 *
 * Code that cannot be data (the key lookup override, the outbound side that
 * sends DSNs) is passed in with the ports, see `receiver.ts`.
 */
import * as z from "zod";
import { STATUS_PATTERN } from "../protocol/dsn.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import { DEFAULT_TOLERANCE_S, parseKeyRecord, signingDomainOfKeyid } from "../protocol/profile.ts";
import { READING_GAPS, type ReadingName } from "../protocol/readingNames.ts";
import {
  DEFAULT_MAX_RECIPIENTS,
  MAX_PIN_AGE_S,
  MAX_SPAN_S,
  MAX_SPAN_WHY,
  MIN_MAX_MESSAGE_SIZE,
  MIN_MAX_RECIPIENTS,
} from "../protocol/resources.ts";
import { VERSION_PATTERN } from "../protocol/versions.ts";

/** POST-25, LIM-6: keys are remembered for at least 7 days. */
export const MIN_IDEMPOTENCY_RETENTION_S = 7 * 24 * 3600;
/** CAP-12: what receivers SHOULD advertise as `discovery_pin_max_age`. */
export const RECOMMENDED_PIN_MAX_AGE_S = 604800;
/** GET-5: what receivers SHOULD send as the capabilities' `max-age`. */
export const RECOMMENDED_CAPABILITIES_MAX_AGE_S = 3600;

/** A domain name in host-name syntax (A-labels), lowercased, a trailing dot dropped (G22). */
const domainName = z
  .string()
  .transform((value, ctx) => {
    const bare = value.replace(/\.$/, "");
    // The mailbox parser owns host-name syntax (MBX-3); a dummy local part borrows it.
    const parsed = parseMailbox(`x@${bare}`);
    if (!parsed.ok) {
      ctx.addIssue({ code: "custom", message: `"${value}" is not a host name in A-labels` });
      return z.NEVER;
    }
    return parsed.value.domain;
  })
  .meta({ description: "A host name in A-labels; compared without case." });

/** A mailbox (MBX rules), in the form the receiver compares: domain lowercased (G22). */
const mailboxAddress = z
  .string()
  .transform((value, ctx) => {
    const parsed = parseMailbox(value);
    if (!parsed.ok) {
      for (const v of parsed.violations) ctx.addIssue({ code: "custom", message: `${v.message} [${v.rule}]` });
      return z.NEVER;
    }
    return parsed.value.address;
  })
  .meta({ description: "local-part@domain" });

/** A sender mailbox or a whole domain: `spam@bad.example` or `bad.example`. */
const senderPattern = z
  .string()
  .transform((value, ctx) => {
    const parsed = value.includes("@") ? parseMailbox(value) : parseMailbox(`x@${value.replace(/\.$/, "")}`);
    if (!parsed.ok) {
      ctx.addIssue({ code: "custom", message: `"${value}" is neither a mailbox nor a domain` });
      return z.NEVER;
    }
    return value.includes("@") ? parsed.value.address : parsed.value.domain;
  })
  .meta({ description: "A sender mailbox (spam@bad.example) or a domain (bad.example)." });

const count = z.int().min(1);
const seconds = z.int().min(0);
/**
 * The longest Retry-After, rate-limit window and delay, in seconds: {@link MAX_SPAN_S}, 2 years (bad input
 * must not schedule past it; a scenario reaches past the spec's longest time with it).
 */
export const MAX_POLICY_SECONDS = MAX_SPAN_S;
const policyBound = `at most ${MAX_POLICY_SECONDS} seconds: ${MAX_SPAN_WHY}`;
const policySeconds = seconds
  .max(MAX_POLICY_SECONDS, { error: policyBound })
  .meta({ description: `Seconds; ${policyBound}.` });
const windowSeconds = count
  .max(MAX_POLICY_SECONDS, { error: policyBound })
  .meta({ description: `Seconds; ${policyBound}.` });

export const capabilitiesConfigSchema = z.strictObject({
  versions: z
    .array(z.string().regex(VERSION_PATTERN, "a version is v followed by a number without leading zero (CAP-3)"))
    .min(1)
    .refine((list) => new Set(list).size === list.length, "versions must be unique (CAP-2)")
    .meta({ uniqueItems: true })
    .default(["v1"])
    .meta({ description: "CAP-1..CAP-5: the major versions advertised. Mailscope implements v1 only." }),
  max_message_size: z
    .int()
    .min(MIN_MAX_MESSAGE_SIZE, `max_message_size is at least ${MIN_MAX_MESSAGE_SIZE} (CAP-7)`)
    .meta({ description: "Bytes of the request body (G24)." }),
  max_recipients: z
    .int()
    .min(MIN_MAX_RECIPIENTS, `max_recipients is at least ${MIN_MAX_RECIPIENTS} (CAP-8)`)
    .default(DEFAULT_MAX_RECIPIENTS)
    .meta({ description: `At least ${MIN_MAX_RECIPIENTS} (CAP-8); no upper bound.` }),
  discovery_pin_max_age: seconds
    .nullable()
    .default(RECOMMENDED_PIN_MAX_AGE_S)
    .meta({
      description: `Seconds (CAP-10, CAP-12); null leaves the member out of the document. No upper bound: senders read more than ${MAX_PIN_AGE_S} as ${MAX_PIN_AGE_S} (CAP-13).`,
    }),
  abuse_contact: z
    .string()
    .regex(/^mailto:[^?]+$/, "abuse_contact is one mailto: URI without header fields (CAP-14)")
    .optional(),
});

export const mailboxConfigSchema = z.strictObject({
  address: mailboxAddress,
  /** Over quota, a recipient is `deferred` with `mailbox_full` (ERR-9). */
  quota: z
    .strictObject({
      messages: z.int().min(0).optional(),
      bytes: z.int().min(0).optional(),
    })
    .optional(),
});

export const policyConfigSchema = z.strictObject({
  /** Request-level 403 `policy_rejected` when the envelope `from` is one of these (ERR-3, POST-15). */
  refusedSenders: z.array(mailboxAddress).default([]),
  /** Request-level 403 `policy_rejected` when the signing domain is one of these. */
  refusedDomains: z.array(domainName).default([]),
  /** A Retry-After on those 403 answers (ERR-27; the sender's reading is G26). */
  refusedRetryAfterS: policySeconds.optional(),
  /** Request-level 429 `rate_limited`: at most `max` deliveries per `windowS` per signing domain (`*`: each domain). */
  rateLimits: z
    .array(
      z.strictObject({
        signingDomain: z.union([z.literal("*"), domainName]),
        max: count,
        windowS: windowSeconds,
      }),
    )
    .default([]),
  /** Request-level 503 `temporary_failure` for the first `times` deliveries (all of them when absent). */
  unavailable: z.strictObject({ times: count.optional(), retryAfterS: policySeconds.default(60) }).optional(),
  /** Per-recipient `policy_rejected` (rejected): the mailbox refuses these senders, or everyone when `senders` is absent. */
  recipientRefusals: z
    .array(z.strictObject({ mailbox: mailboxAddress, senders: z.array(senderPattern).optional() }))
    .default([]),
  /** Per-recipient `rate_limited` (deferred, with `retry_after`): at most `max` accepted deliveries per `windowS`. */
  recipientRateLimits: z
    .array(z.strictObject({ mailbox: mailboxAddress, max: count, windowS: windowSeconds }))
    .default([]),
  /** Per-recipient `temporary_failure` (deferred) for the first `times` deliveries (all when absent). */
  temporaryFailures: z
    .array(z.strictObject({ mailbox: mailboxAddress, times: count.optional(), retryAfterS: policySeconds.optional() }))
    .default([]),
  /**
   * Failure after acceptance (G17, STATE-8): after the 200, a DSN with this
   * RFC 3463 status and diagnostic goes to the envelope sender, `delayMs`
   * later on the Clock. `diagnostic` is `type; text` (RFC 3464
   * diagnostic-type), or plain text read as an `smtp` diagnostic.
   */
  failAfterAcceptance: z
    .array(
      z.strictObject({
        mailbox: mailboxAddress,
        status: z.string().regex(STATUS_PATTERN, "an RFC 3463 status code such as 5.2.1"),
        diagnostic: z
          .string()
          .min(1)
          .refine((text) => !/[\r\n]/.test(text), "one line")
          .meta({ pattern: "^[^\\r\\n]*$" }),
        delayMs: z
          .int()
          .min(0)
          .max(MAX_POLICY_SECONDS * 1000, { error: `at most ${MAX_POLICY_SECONDS * 1000} ms: ${MAX_SPAN_WHY}` })
          .meta({ description: `Ms; at most ${MAX_POLICY_SECONDS * 1000}: ${MAX_SPAN_WHY}.` })
          .default(0),
      }),
    )
    .default([]),
});

/** G3's reading: how far `created` may be from the receiver's clock, either side. */
const signatureToleranceSchema = z.strictObject({ toleranceS: seconds.default(DEFAULT_TOLERANCE_S) });
/** G19's reading: the answer when the `from` domain is not the signing domain. */
const fromDomainMismatchSchema = z.enum(["401", "403"]);

/** The readings a receiver reads (the others are the sender's). */
const RECEIVER_READINGS = ["signatureTolerance", "fromDomainMismatch"] as const satisfies readonly ReadingName[];

/**
 * The receiver's readings: written by gap ID (`readings: { G19: "403" }`, as a scenario writes them), read under
 * the names of app/protocol/readingNames.ts (`readings.fromDomainMismatch`). The names are taken too, so that a
 * configuration parsed once parses again to itself (`createReceiver` validates what `serve` already parsed from
 * its file); a reading given both ways is refused.
 */
export const readingsConfigSchema = z
  .strictObject({
    /** G3: how far `created` may be from the receiver's clock, either side. */
    G3: signatureToleranceSchema.optional(),
    /** G19: the answer when the `from` domain is not the signing domain. */
    G19: fromDomainMismatchSchema.optional(),
    /** G3's reading by its name (a parsed configuration's). */
    signatureTolerance: signatureToleranceSchema.optional(),
    /** G19's reading by its name (a parsed configuration's). */
    fromDomainMismatch: fromDomainMismatchSchema.optional(),
  })
  .superRefine((r, ctx) => {
    for (const name of RECEIVER_READINGS) {
      const id = READING_GAPS[name];
      if (r[id] !== undefined && r[name] !== undefined)
        ctx.addIssue({ code: "custom", path: [name], message: `${id} is ${name}: give one` });
    }
  })
  .transform((r) => ({
    signatureTolerance: r.G3 ?? r.signatureTolerance ?? { toleranceS: DEFAULT_TOLERANCE_S },
    fromDomainMismatch: r.G19 ?? r.fromDomainMismatch ?? "401",
  }));

/**
 * The part of a configuration the offline checks read (`lintChecks`): the
 * served domains, the capabilities and the readings. Other members are
 * dropped unread, so a configuration of many mailboxes costs nothing here.
 */
export const lintReceiverConfigSchema = z.object({
  domains: z.array(domainName).min(1),
  capabilities: capabilitiesConfigSchema,
  readings: readingsConfigSchema.default(() => readingsConfigSchema.parse({})),
});

/** The receiver's configuration (input form: defaults may be left out). */
export const receiverConfigSchema = z
  .strictObject({
    /** The domains served: recipients of other domains are `invalid_request` (G10). */
    domains: z.array(domainName).min(1),
    capabilities: capabilitiesConfigSchema,
    /** `{problem_base}/<identifier>` is every problem's `type` (PRB-2). */
    problem_base: z
      .url({ message: "problem_base is an absolute URI (PRB-2)" })
      .transform((base) => base.replace(/\/+$/, "")),
    mailboxes: z.array(mailboxConfigSchema).default([]),
    /** Every local part of a served domain exists (for `serve` and benches); quotas of listed mailboxes still apply. */
    catchAll: z.boolean().default(false),
    policy: policyConfigSchema.default(() => policyConfigSchema.parse({})),
    readings: readingsConfigSchema.default(() => readingsConfigSchema.parse({})),
    /** POST-25: at least 7 days. */
    idempotencyRetentionS: z
      .int()
      .min(MIN_IDEMPOTENCY_RETENTION_S, "keys are kept at least 7 days (POST-25)")
      .default(MIN_IDEMPOTENCY_RETENTION_S),
    /** The Retry-After of a request-level 503 the receiver did not plan (a store or DNS failure). */
    retryAfterS: seconds.default(60),
    /** GET-5: the capabilities' `Cache-Control: max-age`. */
    capabilitiesMaxAgeS: seconds.default(RECOMMENDED_CAPABILITIES_MAX_AGE_S),
    /**
     * Key records by keyid, consulted before DNS (G4): for `serve` without a DNS zone. Each keyid is
     * `<selector>._svckey.<domain>` and each record a valid `v=svc1; k=ed25519; p=…` (checked at start);
     * a keyid is a DNS name, so it matches a request's keyid whatever the case.
     */
    keyRecords: z.record(z.string(), z.string()).default({}),
  })
  .superRefine((config, ctx) => {
    const keyids = new Map<string, string>();
    for (const [keyid, record] of Object.entries(config.keyRecords)) {
      const domain = signingDomainOfKeyid(keyid);
      if (!domain.ok) {
        ctx.addIssue({ code: "custom", path: ["keyRecords", keyid], message: domain.violations[0]?.message ?? "" });
      }
      const parsed = parseKeyRecord(record);
      if (!parsed.ok) {
        const reasons = parsed.violations.map((v) => v.message).join("; ");
        ctx.addIssue({ code: "custom", path: ["keyRecords", keyid], message: `not a key record (G4): ${reasons}` });
      }
      const same = keyids.get(keyid.toLowerCase());
      if (same !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["keyRecords", keyid],
          message: `${keyid} is ${same} again (DNS names compare without case)`,
        });
      }
      keyids.set(keyid.toLowerCase(), keyid);
    }
    const served = new Set(config.domains);
    const mailboxes = config.mailboxes.map((m) => m.address);
    config.mailboxes.forEach((m, index) => {
      const domain = m.address.slice(m.address.lastIndexOf("@") + 1);
      if (!served.has(domain))
        ctx.addIssue({
          code: "custom",
          path: ["mailboxes", index, "address"],
          message: `${domain} is not one of the served domains`,
        });
      if (mailboxes.indexOf(m.address) !== index)
        ctx.addIssue({
          code: "custom",
          path: ["mailboxes", index, "address"],
          message: `${m.address} is listed twice`,
        });
    });
    const policyLists = [
      "recipientRefusals",
      "recipientRateLimits",
      "temporaryFailures",
      "failAfterAcceptance",
    ] as const;
    for (const list of policyLists) {
      config.policy[list].forEach((rule, index) => {
        const domain = rule.mailbox.slice(rule.mailbox.lastIndexOf("@") + 1);
        if (!served.has(domain)) {
          ctx.addIssue({
            code: "custom",
            path: ["policy", list, index, "mailbox"],
            message: `${domain} is not one of the served domains`,
          });
        }
      });
    }
  });

/** What a caller writes (defaults may be left out). */
export type ReceiverConfigInput = z.input<typeof receiverConfigSchema>;
/** The configuration with every default applied, as the receiver uses it. */
export type ReceiverConfig = z.output<typeof receiverConfigSchema>;
export type PolicyConfig = ReceiverConfig["policy"];
export type FailAfterAcceptanceRule = PolicyConfig["failAfterAcceptance"][number];
