/**
 * The receivers of a scenario's world, as plain data: where each listens and
 * the configuration it runs with. The world (world.ts) mounts its receivers
 * from here; what reads a run afterwards — the session's summary, a trace
 * opened in the app, the exchange inspector's checks, tests — learns from here
 * which domains a receiver serves, its limits and its readings, without
 * building a world (no network, no keys).
 */
import type { ReceiverConfigInput } from "../receiver/config.ts";
import { lintReceiverConfig } from "../receiver/lintChecks.ts";
import { normalizeName } from "./faultScope.ts";
import {
  DEFAULT_MAX_MESSAGE_SIZE,
  DEFAULT_PROBLEM_BASE,
  mailboxAddressOf,
  type Scenario,
  type ScenarioDomain,
  type ScenarioReadings,
} from "./scenario.ts";
import type { ReceiverOfRun } from "./sessionProtocol.ts";

/** The receiver's host, port and origin: `endpoint`, else `mx.<domain>` on 443. */
export function endpointOf(name: string, domain: ScenarioDomain): { host: string; port: number; origin: string } {
  let host = `mx.${name}`;
  let port = 443;
  if (typeof domain.endpoint === "string") {
    const [h, p] = domain.endpoint.split(":");
    if (h !== undefined && h !== "") host = h;
    if (p !== undefined && p !== "") port = Number(p);
  } else if (domain.endpoint !== undefined) {
    host = domain.endpoint.host ?? host;
    port = domain.endpoint.port ?? port;
  }
  host = normalizeName(host);
  return { host, port, origin: port === 443 ? `https://${host}` : `https://${host}:${port}` };
}

/** A receiver of a scenario's world: the domain it serves, where it listens, and the configuration it runs with. */
export interface ScenarioReceiver {
  readonly domain: string;
  /** `https://mx.b.example`, as the network mounts it. */
  readonly origin: string;
  readonly config: ReceiverConfigInput;
}

/**
 * The receivers the world of `scenario` mounts under `readings` (those in
 * force: the scenario's, then any overrides), one per domain that has one,
 * each serving its own domain. The world builds its receivers from here; what
 * reads a run afterwards (the exchange inspector's checks, the tests) learns
 * from here which domains a receiver serves, its limits and its readings,
 * without a world.
 */
export function scenarioReceivers(scenario: Scenario, readings: ScenarioReadings): ScenarioReceiver[] {
  const problemBase = problemBaseOf(scenario);
  return Object.entries(scenario.domains)
    .filter(([, domain]) => domain.receiver !== "none")
    .map(([rawName, domain]) => {
      const name = normalizeName(rawName);
      return {
        domain: name,
        origin: endpointOf(name, domain).origin,
        config: receiverConfig(name, domain, readings, problemBase),
      };
    });
}

/** {@link scenarioReceivers} by domain, as a session's summary gives them: the origin and what the receiver's checks read. */
export function receiversOfRun(scenario: Scenario, readings: ScenarioReadings): ReadonlyMap<string, ReceiverOfRun> {
  return new Map(
    scenarioReceivers(scenario, readings).map((r) => [
      r.domain,
      { origin: r.origin, config: lintReceiverConfig(r.config) },
    ]),
  );
}

/** The `{problem_base}` of every receiver, sender and fault of the scenario's world, without a trailing slash. */
export function problemBaseOf(scenario: Scenario): string {
  return (scenario.problemBase ?? DEFAULT_PROBLEM_BASE).replace(/\/+$/, "");
}

/** The receiver configuration of a domain, as `receiver/config.ts` reads it. */
function receiverConfig(
  name: string,
  domain: ScenarioDomain,
  readings: ScenarioReadings,
  problemBase: string,
): ReceiverConfigInput {
  return {
    domains: [name],
    capabilities: domain.capabilities ?? { max_message_size: DEFAULT_MAX_MESSAGE_SIZE },
    problem_base: problemBase,
    mailboxes: domain.mailboxes.map((entry) =>
      typeof entry === "string"
        ? { address: mailboxAddressOf(entry, name) }
        : { address: mailboxAddressOf(entry.address, name), ...(entry.quota !== undefined && { quota: entry.quota }) },
    ),
    catchAll: domain.catchAll ?? false,
    ...(domain.policy !== undefined && { policy: domain.policy }),
    readings: { G3: { toleranceS: readings.signatureTolerance.toleranceS }, G19: readings.fromDomainMismatch },
    ...(domain.capabilitiesMaxAgeS !== undefined && { capabilitiesMaxAgeS: domain.capabilitiesMaxAgeS }),
  };
}
