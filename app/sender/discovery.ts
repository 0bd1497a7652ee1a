/**
 * Discovery of a receiving domain's endpoint, before each attempt: the SVCB
 * lookup at `_svc.<domain>` (SVC-5, G5), the discovery pin (G7), the
 * capabilities document (GET-1 … GET-9, G27, G28) and the version (VER-5,
 * VER-6). The outcome tells the delivery machine where to POST, or why not.
 *
 * - SVCB (G5): AliasMode followed (at most {@link MAX_ALIAS_HOPS} hops),
 *   ServiceMode records tried in priority order, `port` honoured, target `.`
 *   meaning the record's owner name; AliasMode to `.` means "no service".
 * - No record (G6): the domain does not offer the service: plain SMTP, unless a
 *   valid pin turns it into a request-level temporary failure (G7 `enforced`).
 * - DNS failure: with a valid pin (G7 `enforced`) a temporary failure; without
 *   one per G8 (`temporary-failure`, fallback-eligible; or `smtp` at once).
 * - Capabilities: fetched unsigned from the first endpoint that answers, unless
 *   a fresh copy from one of the discovered endpoints is cached; a document that
 *   cannot be fetched or is invalid is a temporary failure (GET-9); each
 *   successful fetch sets, refreshes or removes the pin (GET-8). Where the
 *   spec pulls two ways, the readings decide: a 4xx answer is fallback-eligible
 *   or shows the endpoint alive (G46), a Retry-After on a failed answer is
 *   ignored or a lower bound (G47).
 * - Version: the highest common major version (VER-5), read from the document,
 *   never probed (VER-6); none in common is SMTP at once, pin or not (STATE-4).
 */
import type { Clock, DnsAnswer, Fetch, Resolver, SvcbRecord, TraceSink } from "../ports.ts";
import { traceEvent } from "../ports.ts";
import type { Emit, EmitData } from "../trace/events.ts";
import { noCommonVersion, parseRetryAfter, transportFailure } from "../protocol/errors.ts";
import type { RequestLevelReading } from "../protocol/errors.ts";
import { parseCapabilitiesBody, problemIdentifier } from "../protocol/resources.ts";
import type { Capabilities } from "../protocol/resources.ts";
import type { Violation } from "../protocol/result.ts";
import { negotiateVersion, versionPath } from "../protocol/versions.ts";
import { freshnessOf } from "./capabilitiesCache.ts";
import { SPEC_CONSTANTS } from "../protocol/specConstants.ts";
import type { SpecConstants } from "../protocol/specConstants.ts";
import { keptAnswers } from "../protocol/memo.ts";
import type { CapabilitiesCache } from "./capabilitiesCache.ts";
import { exchange, problemInBody } from "./http.ts";
import type { SenderReadings } from "./readings.ts";

/** The service label prefixed to the recipient domain (SVC-5). */
export const SERVICE_LABEL = "_svc";
/** How many AliasMode records are followed before the chain counts as broken (RFC 9460 §3 asks for a limit). */
export const MAX_ALIAS_HOPS = 8;
/** SvcParamKeys this sender understands; a record whose `mandatory` names another is skipped (RFC 9460 §8). */
const UNDERSTOOD_KEYS = new Set(["mandatory", "alpn", "no-default-alpn", "port", "ipv4hint", "ipv6hint"]);

/** One endpoint of a ServiceMode record. */
export interface SvcbEndpoint {
  /** `https://host[:port]`. */
  readonly origin: string;
  readonly priority: number;
  /** The name the record was found at (the owner name). */
  readonly owner: string;
}

/** What the SVCB lookup found. */
export type SvcbOutcome =
  | { readonly kind: "endpoints"; readonly endpoints: readonly SvcbEndpoint[]; readonly aliases: readonly string[] }
  | {
      readonly kind: "no-record";
      readonly answer: "nxdomain" | "nodata" | "alias-to-root" | "no-usable-record";
      readonly aliases: readonly string[];
    }
  | {
      readonly kind: "dns-failure";
      readonly answer: "servfail" | "timeout" | "alias-loop";
      readonly aliases: readonly string[];
    };

function originOf(host: string, port: number | undefined): string {
  return port === undefined || port === 443 ? `https://${host}` : `https://${host}:${port}`;
}

function usable(record: SvcbRecord): boolean {
  const mandatory = record.other?.["mandatory"];
  if (mandatory === undefined) return true;
  return mandatory.split(",").every((k) => UNDERSTOOD_KEYS.has(k.trim()));
}

async function ask(resolver: Resolver, name: string): Promise<DnsAnswer<SvcbRecord>> {
  try {
    return await resolver.svcb(name);
  } catch {
    // A resolver that throws gave no answer: the same as SERVFAIL.
    return { kind: "servfail" };
  }
}

/**
 * The SVCB lookup at `_svc.<domain>` (G5): AliasMode records followed (the
 * first one, ignoring ServiceMode records beside it, RFC 9460 §2.4.2),
 * ServiceMode records sorted by priority, `.` as the owner name.
 */
export async function lookupSvcb(resolver: Resolver, domain: string): Promise<SvcbOutcome> {
  let name = `${SERVICE_LABEL}.${domain.replace(/\.$/, "")}`;
  const aliases: string[] = [];
  for (let hop = 0; hop <= MAX_ALIAS_HOPS; hop++) {
    const answer = await ask(resolver, name);
    if (answer.kind === "nxdomain" || answer.kind === "nodata")
      return { kind: "no-record", answer: answer.kind, aliases };
    if (answer.kind === "servfail" || answer.kind === "timeout")
      return { kind: "dns-failure", answer: answer.kind, aliases };
    const alias = answer.records.find((r) => r.priority === 0);
    if (alias !== undefined) {
      // RFC 9460 §2.5.1: an AliasMode record with target "." says the service does not exist.
      if (alias.target === "." || alias.target === "") return { kind: "no-record", answer: "alias-to-root", aliases };
      name = alias.target.replace(/\.$/, "");
      aliases.push(name);
      continue;
    }
    const endpoints = answer.records
      .filter((r) => r.priority > 0 && usable(r))
      .map((r, index) => ({ r, index }))
      .sort((a, b) => a.r.priority - b.r.priority || a.index - b.index)
      .map(({ r }) => ({
        origin: originOf(r.target === "." || r.target === "" ? name : r.target.replace(/\.$/, ""), r.port),
        priority: r.priority,
        owner: name,
      }));
    if (endpoints.length === 0) return { kind: "no-record", answer: "no-usable-record", aliases };
    return { kind: "endpoints", endpoints, aliases };
  }
  return { kind: "dns-failure", answer: "alias-loop", aliases };
}

/** Where and how to deliver: the chosen endpoint, its capabilities and the version. */
export interface Endpoint {
  readonly origin: string;
  /** The negotiated major version, e.g. `v1`. */
  readonly version: string;
  readonly capabilities: Capabilities;
}

/**
 * The step of discovery where an attempt ended before any POST: the SVCB
 * lookup and the pin (`discovery`), the capabilities document
 * (`capabilities`), or the version (`version`).
 */
export type DiscoveryStage = "discovery" | "capabilities" | "version";

/** The outcome of discovery for one attempt. */
export type DiscoveryOutcome =
  | { readonly kind: "endpoint"; readonly endpoint: Endpoint }
  /** The domain does not offer the service (G6), or DNS failed and G8 reads `smtp`: plain SMTP. */
  | {
      readonly kind: "no-service";
      readonly stage: "discovery";
      readonly rule: string;
      readonly gaps: readonly string[];
      readonly detail: string;
    }
  /** No major version in common (STATE-4, ERR-26): SMTP at once, even with a valid pin. */
  | {
      readonly kind: "no-common-version";
      readonly stage: "version";
      readonly reading: RequestLevelReading;
      readonly ours: readonly string[];
      readonly theirs: readonly string[];
    }
  /** A request-level temporary failure before any POST: DNS with a pin or per G8, capabilities (GET-9). */
  | {
      readonly kind: "temporary-failure";
      readonly stage: "discovery" | "capabilities";
      readonly reading: RequestLevelReading;
      readonly detail: string;
      readonly status?: number;
      /** G47 `lower-bound`: when the Retry-After of a failed capabilities answer ends (RETRY-7). */
      readonly lowerBoundMs?: number;
    };

export interface DiscoveryDeps {
  readonly resolver: Resolver;
  readonly fetch: Fetch;
  readonly clock: Pick<Clock, "now">;
  readonly cache: CapabilitiesCache;
  readonly trace: TraceSink;
  readonly readings: Pick<SenderReadings, "discoveryPin" | "dnsFailureWithoutPin"> &
    Partial<Pick<SenderReadings, "capabilities4xx" | "capabilitiesRetryAfter">>;
  /** The draft's numbers in force (GET-6, GET-7); default SPEC.md's. */
  readonly constants?: SpecConstants;
  /** The versions this sender speaks, e.g. `["v1"]`. */
  readonly versions: readonly string[];
  readonly problemBase: string;
  /** The sending domain, for the trace. */
  readonly senderDomain: string;
}

/** The result of one capabilities fetch. */
type Fetched =
  | {
      readonly kind: "ok";
      readonly capabilities: Capabilities;
      readonly maxAgeS: number;
      readonly freshnessRule: string;
    }
  | { readonly kind: "unsupported-version"; readonly versions: readonly string[] }
  | { readonly kind: "invalid"; readonly violations: readonly Violation[] }
  | { readonly kind: "refused"; readonly status: number; readonly retryAfterS?: number }
  | { readonly kind: "no-answer"; readonly detail: string };

/**
 * A capabilities GET's headers, made once: a Request copies the headers it is given, and from a `Headers`
 * it copies its list as it is, where a plain object is converted key by key first (decision 0240).
 */
const CAPABILITIES_REQUEST_HEADERS = new Headers({ accept: "application/json" });

/**
 * {@link freshnessOf} under SPEC.md's constants, kept by the Cache-Control text (see {@link keptAnswers}): a
 * receiver sends the same one with every capabilities answer. Callers share the answers and do not change them.
 */
const specFreshnessOf = keptAnswers((cacheControl: string) => freshnessOf(cacheControl, SPEC_CONSTANTS), 64, 256);

async function fetchCapabilities(deps: DiscoveryDeps, origin: string, version: string): Promise<Fetched> {
  // GET-2, AUTH-7: no parameters, no body, unsigned. G30: redirects are not followed.
  const request = new Request(`${origin}${versionPath(version, "capabilities")}`, {
    method: "GET",
    headers: CAPABILITIES_REQUEST_HEADERS,
    redirect: "manual",
  });
  const answer = await exchange(deps.fetch, request);
  if (answer.kind === "no-answer") return { kind: "no-answer", detail: answer.detail };
  const { response, body } = answer;
  if (response.status === 404) {
    const problem = problemInBody(body, deps.problemBase);
    if (
      problem !== undefined &&
      problemIdentifier(problem, deps.problemBase) === "unsupported_version" &&
      problem.versions !== undefined
    ) {
      return { kind: "unsupported-version", versions: problem.versions };
    }
  }
  if (response.status !== 200) {
    const retryAfterS = parseRetryAfter(response.headers.get("retry-after"), deps.clock.now());
    return { kind: "refused", status: response.status, ...(retryAfterS !== undefined && { retryAfterS }) };
  }
  const parsed = parseCapabilitiesBody(body);
  if (!parsed.ok) return { kind: "invalid", violations: parsed.violations };
  const cacheControl = response.headers.get("cache-control");
  const freshness =
    cacheControl !== null && (deps.constants ?? SPEC_CONSTANTS) === SPEC_CONSTANTS
      ? specFreshnessOf(cacheControl)
      : freshnessOf(cacheControl, deps.constants);
  return { kind: "ok", capabilities: parsed.value, maxAgeS: freshness.maxAgeS, freshnessRule: freshness.rule };
}

/**
 * What the readings make of a failed capabilities answer: G46 for a 4xx
 * (fallback-eligible, or the endpoint alive and never falling back), G47 for
 * its Retry-After (ignored, or a lower bound). `trace` names the gap and the
 * reading that decided, for capabilities.invalid.
 */
export function capabilitiesReadings(
  refused: { readonly status: number; readonly retryAfterS?: number } | undefined,
  readings: Partial<Pick<SenderReadings, "capabilities4xx" | "capabilitiesRetryAfter">>,
): {
  readonly fallbackEligible: boolean;
  readonly retryAfterS?: number;
  readonly gaps: readonly string[];
  readonly trace: Record<string, unknown>;
} {
  if (refused === undefined) return { fallbackEligible: true, gaps: [], trace: {} };
  const gaps: string[] = [];
  const trace: Record<string, unknown> = {};
  let fallbackEligible = true;
  if (refused.status >= 400 && refused.status < 500) {
    const g46 = readings.capabilities4xx ?? "fallback-eligible";
    gaps.push("G46");
    trace["G46"] = g46;
    fallbackEligible = g46 === "fallback-eligible";
    trace["fallbackEligible"] = fallbackEligible;
  }
  let retryAfterS: number | undefined;
  if (refused.retryAfterS !== undefined) {
    const g47 = readings.capabilitiesRetryAfter ?? "ignored";
    gaps.push("G47");
    trace["G47"] = g47;
    if (g47 === "lower-bound") retryAfterS = refused.retryAfterS;
    else trace["retryAfterIgnored"] = true;
  }
  if (gaps.length > 0) trace["gaps"] = gaps;
  return { fallbackEligible, ...(retryAfterS !== undefined && { retryAfterS }), gaps, trace };
}

function temporary(reading: RequestLevelReading, rule: string, gaps: readonly string[]): RequestLevelReading {
  return { ...reading, rule: rule as RequestLevelReading["rule"], gaps: [...reading.gaps, ...gaps] };
}

/** The events discovery emits, each naming its `domain` and the `deliveryActor` that asked. */
type DiscoveryEventName =
  | "discovery.resolved"
  | "capabilities.fetched"
  | "capabilities.cached"
  | "capabilities.invalid"
  | "pin.set"
  | "pin.removed"
  | "version.negotiated";

/**
 * Discovery for one attempt to `domain`: SVCB, pin, capabilities (cached or
 * fetched), version. Emits discovery.resolved, capabilities.*, pin.* and
 * version.negotiated, each naming `deliveryActor` when given: the actor whose
 * attempt asked (several actors may discover the same domain at once).
 * Never throws.
 */
export async function discover(domain: string, deps: DiscoveryDeps, deliveryActor?: string): Promise<DiscoveryOutcome> {
  const emit: Emit<DiscoveryEventName, "domain" | "deliveryActor"> = (name, data) =>
    deps.trace.emit(
      traceEvent(
        name,
        deps.clock.now(),
        { domain, ...(deliveryActor !== undefined && { deliveryActor }), ...data } as EmitData<typeof name>,
        deps.senderDomain,
      ),
    );

  const svcb = await lookupSvcb(deps.resolver, domain);
  if (svcb.kind !== "endpoints") {
    const pin = deps.cache.validPin(domain);
    const pinEnforced = pin !== undefined && deps.readings.discoveryPin === "enforced";
    const dnsFailed = svcb.kind === "dns-failure";
    if (pinEnforced) {
      // G7: the pin says the domain offers the service, so a missing record or a failed answer is a downgrade to resist.
      emit("discovery.resolved", {
        outcome: svcb.kind,
        answer: svcb.answer,
        pinExpiresAtMs: pin.expiresAtMs,
        gap: "G7",
        rule: "ERR-25",
      });
      return {
        kind: "temporary-failure",
        stage: "discovery",
        reading: temporary(transportFailure("connection"), "ERR-25", ["G7"]),
        detail: `${dnsFailed ? "the SVCB lookup failed" : "no SVCB record"} for ${domain}, but a discovery pin is valid until ${pin.expiresAtMs}`,
      };
    }
    if (!dnsFailed) {
      emit("discovery.resolved", {
        outcome: "no-service",
        answer: svcb.answer,
        gap: "G6",
        rule: "SVC-11",
        ...(pin !== undefined && { pinIgnored: true, pinGap: "G7" }),
      });
      return {
        kind: "no-service",
        stage: "discovery",
        rule: "SVC-11",
        gaps: pin === undefined ? ["G6"] : ["G6", "G7"],
        detail: `no SVCB record at ${SERVICE_LABEL}.${domain} (${svcb.answer})`,
      };
    }
    if (deps.readings.dnsFailureWithoutPin === "smtp") {
      emit("discovery.resolved", { outcome: "no-service", answer: svcb.answer, gap: "G8", rule: "SVC-11" });
      return {
        kind: "no-service",
        stage: "discovery",
        rule: "SVC-11",
        gaps: ["G8"],
        detail: `the SVCB lookup for ${domain} failed (${svcb.answer}); G8 reads smtp`,
      };
    }
    emit("discovery.resolved", { outcome: "dns-failure", answer: svcb.answer, gap: "G8", rule: "ERR-21" });
    return {
      kind: "temporary-failure",
      stage: "discovery",
      reading: temporary(transportFailure("connection"), "ERR-21", ["G8"]),
      detail: `the SVCB lookup for ${domain} failed (${svcb.answer})`,
    };
  }

  const origins = svcb.endpoints.map((e) => e.origin);
  const cached = deps.cache.fresh(domain);
  let origin: string;
  let capabilities: Capabilities;
  if (cached !== undefined && origins.includes(cached.entry.origin)) {
    origin = cached.entry.origin;
    capabilities = cached.entry.capabilities;
    emit("capabilities.cached", { origin, ageS: cached.ageS, maxAgeS: cached.entry.maxAgeS });
  } else {
    const ours = negotiateVersion(deps.versions, deps.versions);
    const pathVersion = ours.ok ? ours.version : "v1";
    let fetched: Fetched | undefined;
    let fetchedFrom = origins[0] ?? "";
    const unreachable: string[] = [];
    for (const candidate of origins) {
      fetchedFrom = candidate;
      fetched = await fetchCapabilities(deps, candidate, pathVersion);
      // G5: endpoints are tried in priority order; only one that gives no answer at all passes to the next.
      if (fetched.kind !== "no-answer") break;
      unreachable.push(`${candidate}: ${fetched.detail}`);
    }
    if (fetched?.kind === "unsupported-version") {
      // The receiver names what it serves: read from its answer, not probed (VER-6).
      const negotiated = negotiateVersion(deps.versions, fetched.versions);
      if (negotiated.ok && negotiated.version !== pathVersion)
        fetched = await fetchCapabilities(deps, fetchedFrom, negotiated.version);
      else {
        emit("discovery.resolved", { origin: fetchedFrom });
        emit("version.negotiated", { ours: deps.versions, theirs: fetched.versions, rule: "STATE-4", gap: "G32" });
        return {
          kind: "no-common-version",
          stage: "version",
          reading: noCommonVersion(),
          ours: deps.versions,
          theirs: fetched.versions,
        };
      }
    }
    emit("discovery.resolved", { origin: fetchedFrom, ...(unreachable.length > 0 && { unreachable }) });
    if (fetched === undefined || fetched.kind !== "ok") {
      const failure =
        fetched === undefined || fetched.kind === "no-answer"
          ? { failure: unreachable.join("; ") }
          : fetched.kind === "invalid"
            ? { violations: fetched.violations }
            : fetched.kind === "refused"
              ? { failure: `HTTP ${fetched.status}` }
              : { failure: "unsupported_version twice" };
      const refused = fetched?.kind === "refused" ? fetched : undefined;
      const readings = capabilitiesReadings(refused, deps.readings);
      emit("capabilities.invalid", {
        origin: fetchedFrom,
        ...failure,
        ...(refused !== undefined && { status: refused.status }),
        ...(refused?.retryAfterS !== undefined && { retryAfterS: refused.retryAfterS }),
        ...readings.trace,
        rule: "GET-9",
      });
      const base = transportFailure("capabilities");
      return {
        kind: "temporary-failure",
        stage: "capabilities",
        reading: {
          ...base,
          fallbackEligible: base.fallbackEligible && readings.fallbackEligible,
          ...(!readings.fallbackEligible && { smtpFallback: "never" as const }),
          gaps: [...base.gaps, ...readings.gaps],
        },
        detail: `the capabilities document of ${fetchedFrom} ${fetched?.kind === "invalid" ? "is invalid" : "could not be fetched"}`,
        ...(refused !== undefined && { status: refused.status }),
        ...(readings.retryAfterS !== undefined && { lowerBoundMs: deps.clock.now() + readings.retryAfterS * 1000 }),
      };
    }
    origin = fetchedFrom;
    capabilities = fetched.capabilities;
    deps.cache.store(domain, { capabilities, origin, fetchedAtMs: deps.clock.now(), maxAgeS: fetched.maxAgeS });
    emit("capabilities.fetched", { origin, capabilities, maxAgeS: fetched.maxAgeS, rule: fetched.freshnessRule });
    const change = deps.cache.applyPin(domain, capabilities);
    if (change.kind === "set") {
      emit("pin.set", {
        expiresAtMs: change.pin.expiresAtMs,
        maxAgeS: change.pin.maxAgeS,
        refreshed: change.refreshed,
        rule: change.clamped ? "CAP-13" : "GET-8",
        ...(change.clamped && { advertisedS: change.advertisedS }),
      });
    } else if (change.kind === "removed") {
      emit("pin.removed", { reason: change.reason, rule: "CAP-11" });
    }
  }

  const negotiated = negotiateVersion(deps.versions, capabilities.versions);
  if (!negotiated.ok) {
    emit("version.negotiated", { ours: deps.versions, theirs: capabilities.versions, rule: "STATE-4", gap: "G32" });
    return {
      kind: "no-common-version",
      stage: "version",
      reading: noCommonVersion(),
      ours: deps.versions,
      theirs: capabilities.versions,
    };
  }
  emit("version.negotiated", { version: negotiated.version, rule: "VER-5" });
  return { kind: "endpoint", endpoint: { origin, version: negotiated.version, capabilities } };
}
