/**
 * Swarm generation (docs/explore.md "What a world is made of"):
 * from a run's seed ({@link Genome}) and the options, a small world and its
 * faults, as a scenario — the same data a person writes in a scenario file,
 * so a generated world can be written as YAML, opened in the app, edited and
 * run by `mailscope run`.
 *
 * Each part is drawn from its own stream (genome.ts): the swarm first (which
 * features are on in this run, and each count's cap), then the domains, the
 * messages, the receivers' policies per mailbox and per domain, the faults,
 * and the simulation's seed and gap readings. Nothing here reads the clock.
 */
import type * as z from "zod";
import { stringify } from "yaml";
import { bytesToBase64 } from "../protocol/base64.ts";
import { maxOf } from "../protocol/lists.ts";
import type { policyConfigSchema } from "../receiver/config.ts";
import type { dnsChangeSchema, dnsFaultSchema } from "../sim/dnsZone.ts";
import type { networkFaultSchema } from "../sim/network.ts";
import { createRandom, type SeededRandom } from "../sim/random.ts";
import {
  DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS,
  DEFAULT_MAX_MESSAGE_SIZE,
  DEFAULT_PROBLEM_BASE,
  ENUM_READINGS,
  SWITCHABLE_GAPS,
  type domainSchema,
  type messageSchema,
  type ScenarioInput,
} from "../sim/scenario.ts";
import { formatGenome, type Genome, type Part } from "./genome.ts";
import { FEATURE_NAMES, type ExploreOptions, type Feature, type Range } from "./options.ts";

type DomainInput = z.input<typeof domainSchema>;
type MessageInput = z.input<typeof messageSchema>;
type PolicyInput = z.input<typeof policyConfigSchema>;
type NetworkFaultInput = z.input<typeof networkFaultSchema>;
type DnsFaultInput = z.input<typeof dnsFaultSchema>;
type DnsChangeInput = z.input<typeof dnsChangeSchema>;

/** The domains of a world, in order: the first always has a receiver and sends most messages. */
export const DOMAIN_NAMES = [
  "a.example",
  "b.example",
  "c.example",
  "d.example",
  "e.example",
  "f.example",
  "g.example",
  "h.example",
];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * How long a generated world may run after its last message: a scenario's default
 * ({@link DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS}: that message's give-up, the give-up of the DSN that reports
 * it, and two days to spare), written into the world so that its YAML says when it stops.
 */
export const WORLD_HORIZON_AFTER_LAST_MS = DEFAULT_HORIZON_AFTER_LAST_MESSAGE_MS;

/** What one run's swarm draw decided: the features on, and each count's cap. */
export interface Swarm {
  readonly features: ReadonlySet<Feature>;
  readonly caps: {
    readonly domains: number;
    readonly messages: number;
    readonly recipients: number;
    readonly networkFaults: number;
    readonly dnsFaults: number;
    readonly dnsChanges: number;
  };
  /** The chance a mailbox does something other than accept. */
  readonly mailboxTrouble: number;
  /** The chance a receiver has each receiver-level policy that is on. */
  readonly receiverTrouble: number;
}

/** The stream a part of the genome is drawn from. */
export function partRandom(genome: Genome, part: Part): SeededRandom {
  return createRandom(genome.overrides[part] ?? genome.base).fork(part);
}

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  return items[random.int(0, items.length)] as T;
}

/** A count in [min, max], both included. */
function between(random: SeededRandom, min: number, max: number): number {
  return max <= min ? min : random.int(min, max + 1);
}

/** Draws the run's swarm: each feature on with its chance (options.features), each count's cap within its range. */
export function drawSwarm(genome: Genome, options: ExploreOptions): Swarm {
  const random = partRandom(genome, "swarm");
  const features = new Set<Feature>();
  // One draw per feature whatever its chance, so that changing one chance leaves the other features as they were.
  for (const feature of FEATURE_NAMES) if (random.chance(options.features[feature])) features.add(feature);
  const cap = (r: Range): number => between(random, r.min, r.max);
  return {
    features,
    caps: {
      domains: cap(options.domains),
      messages: cap(options.messages),
      recipients: cap(options.recipients),
      networkFaults: cap(options.networkFaults),
      dnsFaults: cap(options.dnsFaults),
      dnsChanges: cap(options.dnsChanges),
    },
    mailboxTrouble: pick(random, [0.05, 0.15, 0.4]),
    receiverTrouble: pick(random, [0.2, 0.5]),
  };
}

/** `5400000` → `1h30m`; whole seconds as `s`, the rest as `ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let rest = Math.round(ms);
  let out = "";
  for (const [unit, size] of [
    ["d", DAY],
    ["h", HOUR],
    ["m", MINUTE],
    ["s", 1000],
    ["ms", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}

/** A domain of the world as the generator keeps it while drawing. */
interface DrawnDomain {
  readonly name: string;
  readonly receiver: boolean;
  readonly input: DomainInput;
}

/** The world a genome makes, with what decided it. */
export interface GeneratedWorld {
  readonly genome: Genome;
  readonly swarm: Swarm;
  readonly scenario: ScenarioInput;
}

/** Builds the world of `genome` under `options`. Pure: the same genome and options give the same scenario. */
export function generateWorld(genome: Genome, options: ExploreOptions): GeneratedWorld {
  const swarm = drawSwarm(genome, options);
  const on = (f: Feature): boolean => swarm.features.has(f);
  const domains = drawDomains(partRandom(genome, "domains"), options, swarm, on);
  const messages = drawMessages(partRandom(genome, "messages"), options, swarm, on, domains);
  drawPolicies(partRandom(genome, "policies"), swarm, on, domains, messages);
  const faults = drawFaults(partRandom(genome, "faults"), swarm, on, domains, messages);
  const sim = partRandom(genome, "sim");
  const seed = sim.uint32();
  const readings = drawReadings(sim, on);
  const seedText = formatGenome(genome);
  // A world runs until the last message's bounce and its DSN's could both be over.
  const horizon = formatDuration(
    maxOf(
      messages.map((m) => parseAt(m.at)),
      0,
    ) + WORLD_HORIZON_AFTER_LAST_MS,
  );
  const scenario: ScenarioInput = {
    name: `explore-${seedText.replace(/[^A-Za-z0-9.-]+/g, "-")}`,
    description: `A world mailscope explore drew from the run seed ${seedText}. Features on: ${[...swarm.features].join(", ") || "none"}.`,
    seed,
    horizon,
    ...(Object.keys(readings).length > 0 && { readings }),
    domains: Object.fromEntries(domains.map((d) => [d.name, d.input])),
    messages,
    faults,
  };
  return { genome, swarm, scenario };
}

function drawDomains(
  random: SeededRandom,
  options: ExploreOptions,
  swarm: Swarm,
  on: (f: Feature) => boolean,
): DrawnDomain[] {
  const count = between(random, options.domains.min, swarm.caps.domains);
  const out: DrawnDomain[] = [];
  for (let i = 0; i < count; i++) {
    const name = DOMAIN_NAMES[i] as string;
    // Every draw is made whatever the features say, so turning one off leaves the rest of the world as it was.
    const smtpOnly = random.chance(0.35) && i > 0 && on("smtp-only-domain");
    const versionsDraw = random.next();
    const pinDraw = pick(random, [0, 60, 600, null] as const);
    const maxAgeDraw = pick(random, [0, 30, 300]);
    const shortPins = random.chance(0.6) && on("short-pins");
    const unpublished = random.chance(0.35) && on("unpublished-key");
    const relayFails = random.chance(0.2) && on("readings");
    const input: DomainInput = {};
    if (!smtpOnly) {
      const versions =
        versionsDraw < 0.35 && i > 0 && on("no-common-version")
          ? ["v2"]
          : versionsDraw > 0.9
            ? ["v1", "v2"]
            : undefined;
      if (versions !== undefined || shortPins) {
        input.capabilities = {
          max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
          ...(versions !== undefined && { versions }),
          ...(shortPins && { discovery_pin_max_age: pinDraw }),
        };
      }
      if (shortPins) input.capabilitiesMaxAgeS = maxAgeDraw;
    } else {
      input.receiver = "none";
    }
    if (unpublished) input.keys = { selector: "s1", publish: false };
    if (relayFails) input.G18 = "fail";
    out.push({ name, receiver: !smtpOnly, input });
  }
  return out;
}

/** The local parts senders use: each domain's own users, always mailboxes of its receiver. */
const SENDERS = ["s1", "s2"];

function drawMessages(
  random: SeededRandom,
  options: ExploreOptions,
  swarm: Swarm,
  on: (f: Feature) => boolean,
  domains: readonly DrawnDomain[],
): MessageInput[] {
  const count = between(random, options.messages.min, swarm.caps.messages);
  const messages: MessageInput[] = [];
  const manyAt = on("many-recipients") && options.recipients.max > 100 ? random.int(0, count) : -1;
  for (let i = 0; i < count; i++) {
    const from = random.chance(0.7) ? 0 : random.int(0, domains.length);
    const sender = domains[from] as DrawnDomain;
    const user = `${pick(random, SENDERS)}@${sender.name}`;
    const nullSender = random.chance(0.25) && on("null-sender");
    const forwardedDraw = random.int(0, domains.length);
    const forwarded = random.chance(0.3) && on("forwarded") && domains.length > 1 && forwardedDraw !== from;
    const lateDraw = random.int(0, Math.max(1, options.latestSubmissionMs));
    const atDraw = pick(random, [0, 0, 5_000, MINUTE, 10 * MINUTE, HOUR]);
    const late = random.chance(0.5) && on("late-submission");
    const atMs = i === 0 && !late ? 0 : late ? lateDraw : atDraw;
    // Recipients: up to the cap, more than a receiver's max_recipients (100) for the one "many" message.
    const upper = i === manyAt ? options.recipients.max : Math.min(swarm.caps.recipients, 100);
    const lower = i === manyAt ? Math.max(options.recipients.min, 101) : Math.min(options.recipients.min, upper);
    const recipients = between(random, lower, Math.max(lower, upper));
    const spread = between(random, 1, Math.min(3, domains.length));
    const targets = Array.from({ length: spread }, () => random.int(0, domains.length));
    const to = new Set<string>();
    const pool = Math.max(3, Math.ceil(recipients * 1.5));
    for (let guard = 0; to.size < recipients && guard < recipients * 20; guard++) {
      const domain = domains[pick(random, targets)] as DrawnDomain;
      to.add(`u${random.int(1, pool + 1)}@${domain.name}`);
    }
    const sizeDraw = pick(random, [-5000, -1500, -600, 0, 1, 3000]);
    const nearLimit = random.chance(0.3) && on("size-near-limit");
    const message: MessageInput = {
      id: `m${i + 1}`,
      at: formatDuration(atMs),
      from: nullSender ? null : user,
      ...(nullSender && { sender: sender.name }),
      ...(forwarded && !nullSender && { via: (domains[forwardedDraw] as DrawnDomain).name }),
      to: to.size === 1 ? [...to][0]! : [...to],
      ...(nearLimit && { size: DEFAULT_MAX_MESSAGE_SIZE + sizeDraw }),
    };
    messages.push(message);
  }
  return messages;
}

function recipientList(message: MessageInput): string[] {
  return typeof message.to === "string" ? [message.to] : [...message.to];
}

/** The mailboxes, quotas and policies of each receiver, drawn per mailbox and per domain. */
function drawPolicies(
  random: SeededRandom,
  swarm: Swarm,
  on: (f: Feature) => boolean,
  domains: readonly DrawnDomain[],
  messages: readonly MessageInput[],
): void {
  const recipientsOf = new Map<string, Set<string>>();
  for (const m of messages) {
    for (const address of recipientList(m)) {
      const [local, domain] = address.split("@") as [string, string];
      const set = recipientsOf.get(domain) ?? new Set<string>();
      set.add(local);
      recipientsOf.set(domain, set);
    }
  }
  const behaviours: Feature[] = [
    "recipient-not-found",
    "recipient-refused",
    "recipient-deferred",
    "recipient-retry-after",
    "recipient-rate-limited",
    "mailbox-full",
    "failure-after-acceptance",
  ];
  const trouble = behaviours.filter(on);
  const sendingDomains = domains.map((d) => d.name);
  for (const domain of domains) {
    if (!domain.receiver) continue;
    const mailboxes: NonNullable<DomainInput["mailboxes"]> = [...SENDERS];
    const policy: PolicyInput = {};
    const locals = [...(recipientsOf.get(domain.name) ?? [])].sort(byNumber);
    for (const local of locals) {
      const address = `${local}@${domain.name}`;
      const troubled = random.chance(swarm.mailboxTrouble);
      const behaviour = pick(random, behaviours);
      const times = random.chance(0.7) ? random.int(1, 4) : undefined;
      const retryAfterS = pick(random, [0, 30, 120, 600, 3600, 7200]);
      const windowS = pick(random, [60, 600, 3600]);
      const failure = pick(random, [
        ["5.2.2", "smtp; 552 5.2.2 mailbox full"],
        ["5.1.1", "smtp; 550 5.1.1 no such user here"],
        ["4.2.2", "smtp; 452 4.2.2 over quota, try later"],
      ] as const);
      const delayMs = pick(random, [0, MINUTE, HOUR]);
      if (!troubled || !trouble.includes(behaviour)) {
        mailboxes.push(local);
        continue;
      }
      switch (behaviour) {
        case "recipient-not-found":
          break;
        case "recipient-refused":
          mailboxes.push(local);
          (policy.recipientRefusals ??= []).push({ mailbox: address });
          break;
        case "recipient-deferred":
          mailboxes.push(local);
          (policy.temporaryFailures ??= []).push({ mailbox: address, ...(times !== undefined && { times }) });
          break;
        case "recipient-retry-after":
          mailboxes.push(local);
          (policy.temporaryFailures ??= []).push({
            mailbox: address,
            ...(times !== undefined && { times }),
            retryAfterS,
          });
          break;
        case "recipient-rate-limited":
          mailboxes.push(local);
          (policy.recipientRateLimits ??= []).push({ mailbox: address, max: 1, windowS });
          break;
        case "mailbox-full":
          mailboxes.push({ address: local, quota: { messages: 0 } });
          break;
        case "failure-after-acceptance":
          mailboxes.push(local);
          (policy.failAfterAcceptance ??= []).push({
            mailbox: address,
            status: failure[0],
            diagnostic: failure[1],
            delayMs,
          });
          break;
        default:
          mailboxes.push(local);
      }
    }
    // Receiver-level policies, each drawn whatever the features say.
    const unavailable = random.chance(swarm.receiverTrouble) && on("receiver-unavailable");
    const unavailableTimes = random.chance(0.6) ? random.int(1, 4) : undefined;
    const unavailableRetryAfter = pick(random, [0, 60, 600]);
    const limited = random.chance(swarm.receiverTrouble) && on("receiver-rate-limited");
    const limit = { max: random.int(1, 3), windowS: pick(random, [60, 600, 3600]) };
    const refused = random.chance(swarm.receiverTrouble) && on("sender-refused");
    const refusedDomain = pick(random, sendingDomains);
    const refusedRetryAfter = random.chance(0.5) ? pick(random, [60, 600]) : undefined;
    if (unavailable)
      policy.unavailable = {
        ...(unavailableTimes !== undefined && { times: unavailableTimes }),
        retryAfterS: unavailableRetryAfter,
      };
    if (limited) policy.rateLimits = [{ signingDomain: "*", ...limit }];
    if (refused && refusedDomain !== domain.name) {
      policy.refusedDomains = [refusedDomain];
      if (refusedRetryAfter !== undefined) policy.refusedRetryAfterS = refusedRetryAfter;
    }
    domain.input.mailboxes = mailboxes;
    if (Object.keys(policy).length > 0) domain.input.policy = policy;
  }
}

function byNumber(a: string, b: string): number {
  return Number(a.slice(1)) - Number(b.slice(1)) || (a < b ? -1 : a > b ? 1 : 0);
}

const NETWORK_FEATURES: readonly Feature[] = [
  "connection-refused",
  "timeout",
  "connection-reset",
  "tls-failure",
  "latency",
  "unavailable-503",
  "bare-503",
  "rate-limited-429",
  "forbidden-403",
  "server-error",
  "client-error",
  "unknown-problem",
  "unreadable-200",
  "capabilities-invalid",
  "capabilities-unfetchable",
  "partition",
  "slow-body",
];
const DNS_FEATURES: readonly Feature[] = ["servfail", "nxdomain", "dns-timeout"];
const CHANGE_FEATURES: readonly Feature[] = ["svcb-changes", "key-changes"];

interface FaultWindow {
  from?: string;
  until?: string;
  probability?: number;
}

function drawFaults(
  random: SeededRandom,
  swarm: Swarm,
  on: (f: Feature) => boolean,
  domains: readonly DrawnDomain[],
  messages: readonly MessageInput[],
): NonNullable<ScenarioInput["faults"]> {
  const receivers = domains.filter((d) => d.receiver);
  const anchors = messages.map((m) => parseAt(m.at));
  const late = on("late-submission");
  const windowOf = (w: SeededRandom): FaultWindow => {
    const anchor = pick(w, anchors.length > 0 ? anchors : [0]);
    const offset = pick(w, [0, 0, 0, 30_000, 2 * MINUTE, 10 * MINUTE, HOUR, 2 * HOUR]);
    const lateOffset = 4 * DAY + w.int(0, DAY);
    const duration = pick(w, [
      MINUTE,
      5 * MINUTE,
      30 * MINUTE,
      HOUR,
      2 * HOUR,
      3 * HOUR,
      6 * HOUR,
      DAY,
      5 * DAY,
      undefined,
    ]);
    const fromMs = anchor + (w.chance(0.2) && late ? lateOffset : offset);
    const openStart = fromMs === 0 && w.chance(0.5);
    const probability = w.chance(0.6) ? undefined : pick(w, [0.2, 0.5, 0.8]);
    return {
      ...(!openStart && { from: formatDuration(fromMs) }),
      ...(duration !== undefined && { until: formatDuration(fromMs + duration) }),
      ...(probability !== undefined && { probability }),
    };
  };

  /** Up to `cap` faults of a layer (none when no kind of it is on), each drawn from its own stream with its kind. */
  const each = <T>(
    layer: string,
    features: readonly Feature[],
    cap: number,
    make: (f: SeededRandom, kind: Feature, i: number) => T[],
  ): T[] => {
    const kinds = features.filter(on);
    const count = kinds.length === 0 ? 0 : between(random, 0, cap);
    return Array.from({ length: count }, (_, i) => {
      const f = random.fork(`${layer}/${i}`);
      return make(f, pick(f, kinds), i);
    }).flat();
  };

  const network = each(
    "network",
    receivers.length === 0 ? [] : NETWORK_FEATURES,
    swarm.caps.networkFaults,
    (f, kind, i): NetworkFaultInput[] => {
      const target = pick(f, receivers);
      const host = f.chance(0.85) ? `mx.${target.name}` : undefined;
      const posts = f.chance(0.5) ? "/v1/messages" : undefined;
      const scope = { id: `f${i + 1}`, ...(host !== undefined && { host }), ...windowOf(f) };
      return [networkFault(f, kind, scope, posts, domains, target)];
    },
  );

  const dns = each("dns", DNS_FEATURES, swarm.caps.dnsFaults, (f, kind, i): DnsFaultInput[] => {
    const target = pick(f, domains);
    const keys = f.chance(0.3);
    return [
      {
        id: `d${i + 1}`,
        kind: kind === "servfail" ? "servfail" : kind === "nxdomain" ? "nxdomain" : "timeout",
        name: keys ? `*._svckey.${target.name}` : `_svc.${target.name}`,
        type: keys ? "TXT" : "SVCB",
        ...windowOf(f),
      },
    ];
  });

  const dnsChanges = each("change", CHANGE_FEATURES, swarm.caps.dnsChanges, (f, kind): DnsChangeInput[] => {
    const target = pick(f, receivers.length > 0 && kind === "svcb-changes" ? receivers : domains);
    const { from, until } = windowOf(f);
    const at = from ?? "0s";
    if (kind === "key-changes") {
      return [
        {
          at,
          name: `s1._svckey.${target.name}`,
          records: { txt: [`v=svc1; k=ed25519; p=${bytesToBase64(f.bytes(32))}`] },
        },
      ];
    }
    const change = pick(f, ["gone", "empty", "moved"] as const);
    const changes: DnsChangeInput[] = [
      {
        at,
        name: `_svc.${target.name}`,
        records:
          change === "gone" ? null : change === "empty" ? { svcb: [] } : { svcb: [`1 mx.${target.name}. port=8443`] },
      },
    ];
    // The record comes back when the window ends.
    if (until !== undefined)
      changes.push({ at: until, name: `_svc.${target.name}`, records: { svcb: [`1 mx.${target.name}. port=443`] } });
    return changes;
  });
  return { network, dns, dnsChanges };
}

function parseAt(at: MessageInput["at"]): number {
  if (typeof at === "number") return at;
  let total = 0;
  for (const [, n, unit] of String(at ?? "0s").matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    total += Number(n) * ({ ms: 1, s: 1000, m: MINUTE, h: HOUR, d: DAY }[unit as "ms"] ?? 0);
  }
  return total;
}

/** A POST answered with a problem document of `identifier` (a front end's answer, whatever the receiver would say). */
function problemAnswer(
  scope: { id: string; host?: string } & FaultWindow,
  status: number,
  identifier: string,
  extra: Record<string, unknown> = {},
): NetworkFaultInput {
  return {
    kind: "respond",
    ...scope,
    path: "/v1/messages",
    status,
    headers: { "content-type": "application/problem+json" },
    body: { type: `${DEFAULT_PROBLEM_BASE}/${identifier}`, status, ...extra },
  };
}

/** One network fault of `kind`, its fields drawn from `f`. */
function networkFault(
  f: SeededRandom,
  kind: Feature,
  scope: { id: string; host?: string } & FaultWindow,
  posts: string | undefined,
  domains: readonly DrawnDomain[],
  target: DrawnDomain,
): NetworkFaultInput {
  const path = posts !== undefined ? { path: posts } : {};
  switch (kind) {
    case "connection-refused":
      return { kind: "connection-refused", ...scope };
    case "timeout":
      return { kind: "timeout", ...scope, ...path, afterMs: pick(f, [1000, 10_000, 30_000]) };
    case "connection-reset":
      return { kind: "connection-reset", ...scope, ...path, phase: pick(f, ["request", "response"] as const) };
    case "tls-failure":
      return { kind: "tls-failure", ...scope };
    case "latency":
      return { kind: "latency", ...scope, latency: pick(f, [200, 5000, 60_000, 400_000]) };
    case "unavailable-503": {
      const retryAfterS = f.chance(0.6) ? pick(f, [0, 30, 300, 3600, 7200]) : undefined;
      return { kind: "unavailable", ...scope, ...path, ...(retryAfterS !== undefined && { retryAfterS }) };
    }
    case "bare-503":
      return { kind: "unavailable", ...scope, ...path, problem: false };
    case "rate-limited-429": {
      const form = pick(f, ["seconds", "seconds", "date", "garbage"] as const);
      return {
        kind: "rate-limited",
        ...scope,
        ...path,
        retryAfterS: pick(f, [0, 60, 600, 3600]),
        ...(form === "date" && { retryAfter: "Thu, 01 Jan 2026 03:00:00 GMT" }),
        ...(form === "garbage" && { retryAfter: "soon" }),
      };
    }
    case "forbidden-403": {
      const retryAfterS = f.chance(0.5) ? pick(f, [60, 600]) : undefined;
      return { kind: "forbidden", ...scope, ...path, ...(retryAfterS !== undefined && { retryAfterS }) };
    }
    case "server-error":
      return { kind: "server-error", ...scope, ...path, status: pick(f, [500, 502, 504, 507, 599]) };
    case "client-error": {
      const [status, id] = pick(f, [
        [400, "invalid_request"],
        [401, "invalid_signature"],
        [404, "unsupported_version"],
        [409, "idempotency_conflict"],
        [413, "message_too_large"],
      ] as const);
      return problemAnswer(scope, status, id, id === "unsupported_version" ? { versions: ["v2"] } : {});
    }
    case "unknown-problem": {
      const status = pick(f, [418, 422, 451, 500, 503, 508]);
      return problemAnswer(scope, status, pick(f, ["brand_new_problem", "quota_exhausted", "greylisted"]));
    }
    case "unreadable-200":
      return {
        kind: "respond",
        ...scope,
        path: "/v1/messages",
        status: 200,
        headers: { "content-type": "application/json" },
        body: pick(f, ['{"results": "none"}', "not json", '{"status": "ok"}']),
      };
    case "capabilities-invalid":
      return f.chance(0.3)
        ? { kind: "capabilities-invalid", ...scope, body: { versions: [], max_message_size: 100 } }
        : { kind: "capabilities-invalid", ...scope };
    case "capabilities-unfetchable":
      return { kind: "capabilities-unfetchable", ...scope, status: pick(f, [404, 500, 503]) };
    case "partition": {
      const other = pick(f, domains);
      return {
        kind: "partition",
        id: scope.id,
        ...(scope.from !== undefined && { from: scope.from }),
        ...(scope.until !== undefined && { until: scope.until }),
        between: [other.name === target.name ? (domains[0] as DrawnDomain).name : other.name, target.name],
        failure: pick(f, ["timeout", "connection-refused"] as const),
      };
    }
    case "slow-body":
    default:
      return { kind: "slow-body", ...scope, chunkBytes: pick(f, [64, 1024]), intervalMs: pick(f, [100, 1000, 60_000]) };
  }
}

/** The readings of the switchable gaps: each, with `readings` on, a random non-default value half the time. */
function drawReadings(random: SeededRandom, on: (f: Feature) => boolean): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const gap of SWITCHABLE_GAPS) {
    const chosen = random.chance(0.5);
    const values: readonly (string | number)[] =
      gap === "G3"
        ? [0, 30, 60, 300, 600]
        : gap === "G16"
          ? [
              "jitter=off",
              "fallback-window=1h",
              "fallback-window=90m",
              "jitter=off, fallback-window=3h",
              "fallback-window=4h",
            ]
          : (ENUM_READINGS[gap] ?? []);
    const value = values.length > 0 ? pick(random, values) : undefined;
    if (chosen && on("readings") && value !== undefined) out[gap] = value;
  }
  const aligned = pick(random, ["63m", "123m", "183m"]);
  if (on("schedule-aligned-window")) out["G16"] = `jitter=off, fallback-window=${aligned}`;
  return out;
}

/** How big a world is: what shrinking makes smaller and the gallery keeps the smallest of. */
export interface WorldSize {
  readonly domains: number;
  readonly messages: number;
  readonly recipients: number;
  readonly faults: number;
  /** Mailbox and receiver policies, quotas and non-default readings. */
  readonly settings: number;
  /** All of these together: the order of sizes. */
  readonly total: number;
}

/** The size of a scenario (as written, defaults left out). */
export function worldSize(scenario: ScenarioInput): WorldSize {
  const domains = Object.values(scenario.domains);
  const messages = scenario.messages ?? [];
  const recipients = messages.reduce((n, m) => n + (typeof m.to === "string" ? 1 : m.to.length), 0);
  const faults =
    (scenario.faults?.network?.length ?? 0) +
    (scenario.faults?.dns?.length ?? 0) +
    (scenario.faults?.dnsChanges?.length ?? 0);
  let settings = Object.keys(scenario.readings ?? {}).length;
  for (const d of domains) {
    const p = d.policy;
    if (p !== undefined) {
      settings +=
        (p.recipientRefusals?.length ?? 0) +
        (p.temporaryFailures?.length ?? 0) +
        (p.recipientRateLimits?.length ?? 0) +
        (p.failAfterAcceptance?.length ?? 0) +
        (p.rateLimits?.length ?? 0) +
        (p.refusedDomains?.length ?? 0) +
        (p.unavailable !== undefined ? 1 : 0);
    }
    settings += (d.mailboxes ?? []).filter((m) => typeof m !== "string").length;
    settings +=
      (d.capabilities !== undefined ? 1 : 0) + (d.receiver === "none" ? 1 : 0) + (d.keys !== undefined ? 1 : 0);
    settings += (d.G18 !== undefined ? 1 : 0) + (d.capabilitiesMaxAgeS !== undefined ? 1 : 0);
  }
  for (const m of messages) settings += (m.size !== undefined ? 1 : 0) + (m.via !== undefined ? 1 : 0);
  return {
    domains: domains.length,
    messages: messages.length,
    recipients,
    faults,
    settings,
    total: domains.length * 100 + messages.length * 100 + recipients * 10 + faults * 20 + settings,
  };
}

/** The scenario as YAML, with `comments` (lines without the `#`) above it. */
export function scenarioYaml(scenario: ScenarioInput, comments: readonly string[] = []): string {
  const head = comments.map((c) => (c === "" ? "#" : `# ${c}`)).join("\n");
  return `${head === "" ? "" : `${head}\n`}${stringify(scenario, { lineWidth: 0 })}`;
}
