/**
 * What the app shows of a scenario before it runs (a session's `ready`, session.ts): its domains, messages,
 * faults with their windows, the readings in force and the horizon, read from the built world.
 */
import { constantsNotation } from "./constants.ts";
import { resolveWindow, type TimeWindow } from "./faultScope.ts";
import { receiversOfRun } from "./receivers.ts";
import { readingsNotation, type LoadedScenario } from "./scenario.ts";
import type { FaultSummary, SessionSummary } from "./sessionProtocol.ts";
import type { World } from "./world.ts";

/**
 * What the app shows of a scenario before it runs (sessionProtocol.ts
 * {@link SessionSummary}): its domains, messages, faults with their windows,
 * the readings in force and the horizon, read from the built world.
 */
export function summarize(world: World, loaded: LoadedScenario): SessionSummary {
  const { scenario, startMs } = world;
  const receivers = receiversOfRun(scenario, world.readings);
  const constants = constantsNotation(world.constants);
  return {
    name: scenario.name,
    description: scenario.description,
    ...(loaded.file !== undefined && { file: loaded.file }),
    seed: world.seed,
    readings: readingsNotation(world.readings),
    ...(constants !== undefined && { constants }),
    startMs,
    horizonMs: world.horizonMs,
    domains: [...world.domains.values()].map((d) => {
      const receiverAt = receivers.get(d.name);
      return { name: d.name, receiver: d.receiver !== undefined, ...(receiverAt !== undefined && { receiverAt }) };
    }),
    messages: world.messages.map((m) => ({
      id: m.id,
      messageId: m.messageId,
      atMs: m.atMs,
      from: m.from,
      to: m.to,
      senderDomain: m.senderDomain,
    })),
    faults: faultSummaries(world),
  };
}

/**
 * The scenario's faults, each with its window (an open start is the start of
 * the run; an open end has no `untilMs`). Ids are the ones the trace cites:
 * the fault's `id`, else `<position>:<kind>` as network.ts and dnsZone.ts name
 * them. DNS faults' kinds are prefixed `dns-` (a DNS `timeout` is not a network
 * one); a DNS change is a fault of kind `dns-change` from its time on.
 */
function faultSummaries(world: World): FaultSummary[] {
  const { faults } = world.scenario;
  const { startMs } = world;
  const windowOf = (w: TimeWindow): { fromMs: number; untilMs?: number } => ({
    fromMs: Math.max(w.fromMs, startMs),
    ...(Number.isFinite(w.untilMs) && { untilMs: w.untilMs }),
  });
  const out: FaultSummary[] = [];
  faults.network.forEach((f, i) => {
    const scope =
      f.kind === "partition"
        ? `${f.between[0]} ↔ ${f.between[1]}`
        : joinScope([f.method, f.host, f.path, f.source !== undefined ? `from ${f.source}` : undefined]);
    out.push({
      id: f.id ?? `${i}:${f.kind}`,
      kind: f.kind,
      scope,
      ...windowOf(resolveWindow(f, startMs)),
      ...(f.probability !== undefined && { probability: f.probability }),
    });
  });
  faults.dns.forEach((f, i) => {
    out.push({
      id: f.id ?? `${i}:${f.kind}`,
      kind: `dns-${f.kind}`,
      scope: joinScope([f.type, f.name, f.source !== undefined ? `from ${f.source}` : undefined]),
      ...windowOf(resolveWindow(f, startMs)),
      ...(f.probability !== undefined && { probability: f.probability }),
    });
  });
  faults.dnsChanges.forEach((c, i) => {
    out.push({
      id: `dnsChanges[${i}]`,
      kind: "dns-change",
      scope: c.name,
      ...windowOf(resolveWindow({ from: c.at }, startMs)),
    });
  });
  return out;
}

function joinScope(parts: readonly (string | undefined)[]): string {
  const given = parts.filter((p): p is string => p !== undefined && p !== "");
  return given.length === 0 ? "*" : given.join(" ");
}
