/**
 * Shrinking (docs/explore.md "Shrinking"): a world that violates a
 * property, made smaller while the same property still fails — fewer
 * domains, messages, recipients, faults and settings, shorter fault windows,
 * earlier times, default readings — until no single step keeps the
 * violation (a local minimum, as delta debugging finds) or the run budget is
 * spent.
 *
 * Each step is a change to the scenario as data; a change that makes an
 * invalid scenario is dropped without a run. The steps go from the largest
 * to the smallest, and after each kept step the list starts again from the
 * top. Deterministic: the same world, property and budget shrink to the same
 * scenario in the same number of runs.
 */
import type { ScenarioInput } from "../sim/scenario.ts";
import { scenarioSchema } from "../sim/scenario.ts";
import { formatDuration, worldSize } from "./generate.ts";

/** Whether a candidate world still violates the property: one run each. */
export type StillFails = (scenario: ScenarioInput) => Promise<boolean>;

/** The outcome of {@link shrinkWorld}. */
export interface Shrunk {
  readonly scenario: ScenarioInput;
  /** Runs it took (each candidate that was valid and run). */
  readonly runs: number;
  /** Steps kept. */
  readonly steps: number;
  /** The budget ran out before no step was left. */
  readonly exhausted: boolean;
}

type Faults = NonNullable<ScenarioInput["faults"]>;
type Domains = ScenarioInput["domains"];
type Messages = NonNullable<ScenarioInput["messages"]>;
type Message = Messages[number];

const clone = <T>(value: T): T => structuredClone(value);

/** The most pieces a list of recipients is cut into for one size of delta debugging. */
const MAX_CHUNKS = 32;

function recipients(m: Message): string[] {
  return typeof m.to === "string" ? [m.to] : [...m.to];
}

function withRecipients(m: Message, to: readonly string[]): Message | undefined {
  if (to.length === 0) return undefined;
  return { ...m, to: to.length === 1 ? (to[0] as string) : [...to] };
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}

function msOf(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value !== "string") return undefined;
  let total = 0;
  let any = false;
  for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    any = true;
    total += Number(n) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as "ms"] ?? 0);
  }
  return any ? total : undefined;
}

/** The scenario without `domain`: its messages, recipients, faults and references go with it. */
function withoutDomain(s: ScenarioInput, domain: string): ScenarioInput {
  const domains: Domains = {};
  for (const [name, d] of Object.entries(s.domains)) {
    if (name === domain) continue;
    const policy = d.policy === undefined ? undefined : { ...d.policy };
    if (policy?.refusedDomains !== undefined) {
      policy.refusedDomains = policy.refusedDomains.filter((x) => x !== domain);
      if (policy.refusedDomains.length === 0) delete policy.refusedDomains;
    }
    domains[name] = { ...d, ...(policy !== undefined && { policy }) };
  }
  const messages: Messages = [];
  for (const m of s.messages ?? []) {
    const sender = m.via ?? m.sender ?? (m.from === null ? undefined : domainOf(m.from));
    if (sender === domain || (m.from !== null && domainOf(m.from) === domain)) continue;
    const kept = withRecipients(
      m,
      recipients(m).filter((r) => domainOf(r) !== domain),
    );
    if (kept !== undefined) messages.push(kept);
  }
  const mentions = (value: unknown): boolean => JSON.stringify(value ?? null).includes(domain);
  const faults = s.faults ?? {};
  return {
    ...s,
    domains,
    messages,
    faults: {
      network: (faults.network ?? []).filter((f) => !mentions(f)),
      dns: (faults.dns ?? []).filter((f) => !mentions(f)),
      dnsChanges: (faults.dnsChanges ?? []).filter((f) => !mentions(f)),
    },
  };
}

function withFaults(s: ScenarioInput, change: (faults: Required<Faults>) => void): ScenarioInput {
  const faults: Required<Faults> = {
    network: clone(s.faults?.network ?? []),
    dns: clone(s.faults?.dns ?? []),
    dnsChanges: clone(s.faults?.dnsChanges ?? []),
  };
  change(faults);
  return { ...s, faults };
}

/** Every one-step change of `s`, largest first. */
function* candidates(s: ScenarioInput): Generator<ScenarioInput> {
  const names = Object.keys(s.domains);
  const messages = s.messages ?? [];
  // Whole domains and messages.
  for (const name of names.slice().reverse()) yield withoutDomain(s, name);
  for (let i = messages.length - 1; i >= 0; i--) yield { ...s, messages: messages.filter((_, j) => j !== i) };
  // Recipients, as delta debugging removes them: each half, then each quarter, eighth … down to one at a time,
  // for each size that cuts the list into at most MAX_CHUNKS pieces (114 recipients can end at the 101 a split needs).
  for (const [i, m] of messages.entries()) {
    const to = recipients(m);
    const put = (kept: readonly string[]): ScenarioInput => ({
      ...s,
      messages: messages.map((x, j) => (j === i ? (withRecipients(x, kept) as Message) : x)),
    });
    for (let size = Math.ceil(to.length / 2); to.length > 1; size = Math.ceil(size / 2)) {
      if (Math.ceil(to.length / size) <= MAX_CHUNKS) {
        for (let start = to.length - size; start > -size; start -= size) {
          yield put([...to.slice(0, Math.max(0, start)), ...to.slice(start + size)]);
        }
      }
      if (size === 1) break;
    }
  }
  // Faults, one at a time.
  const faults = s.faults ?? {};
  for (const layer of ["network", "dns", "dnsChanges"] as const) {
    const list = faults[layer] ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      yield withFaults(s, (f) => {
        f[layer].splice(i, 1);
      });
    }
  }
  // Readings back to their defaults.
  const readings = s.readings ?? {};
  if (Object.keys(readings).length > 0) {
    yield { ...s, readings: {} };
    for (const id of Object.keys(readings)) {
      const rest = { ...readings };
      delete rest[id];
      yield { ...s, readings: rest };
    }
  }
  // Domains' settings.
  for (const name of names) {
    const d = s.domains[name];
    if (d === undefined) continue;
    const set = (next: NonNullable<typeof d>): ScenarioInput => ({ ...s, domains: { ...s.domains, [name]: next } });
    if (d.policy !== undefined) {
      const { policy, ...rest } = d;
      yield set(rest);
      for (const key of Object.keys(policy) as (keyof typeof policy)[]) {
        const value = policy[key];
        if (Array.isArray(value) && value.length > 1) {
          for (let i = value.length - 1; i >= 0; i--) {
            yield set({ ...d, policy: { ...policy, [key]: value.filter((_, j) => j !== i) } });
          }
        }
        const without = { ...policy };
        delete without[key];
        yield set({ ...d, policy: without });
      }
    }
    for (const field of ["capabilities", "capabilitiesMaxAgeS", "keys", "G18", "receiver"] as const) {
      if (d[field] !== undefined) {
        const next = { ...d };
        delete next[field];
        yield set(next);
      }
    }
    const boxes = d.mailboxes ?? [];
    if (boxes.some((b) => typeof b !== "string")) {
      yield set({ ...d, mailboxes: boxes.map((b) => (typeof b === "string" ? b : b.address)) });
    }
  }
  // Messages' details: earlier, plainer.
  for (const [i, m] of messages.entries()) {
    const put = (next: Message): ScenarioInput => ({ ...s, messages: messages.map((x, j) => (j === i ? next : x)) });
    const atMs = msOf(m.at) ?? 0;
    if (atMs > 0) {
      yield put({ ...m, at: "0s" });
      yield put({ ...m, at: formatDuration(Math.floor(atMs / 2000) * 1000) });
    }
    if (m.size !== undefined) {
      const { size: _size, ...rest } = m;
      yield put(rest);
    }
    if (m.via !== undefined) {
      const { via: _via, ...rest } = m;
      yield put(rest);
    }
    if (m.from === null && m.sender !== undefined) {
      const { sender, ...rest } = m;
      yield put({ ...rest, from: `s1@${sender}` });
    }
  }
  // Faults' details: always on, shorter, earlier.
  for (const layer of ["network", "dns"] as const) {
    for (const [i, fault] of (faults[layer] ?? []).entries()) {
      const f = fault as { probability?: number; from?: unknown; until?: unknown };
      const edit = (change: (x: Record<string, unknown>) => void): ScenarioInput =>
        withFaults(s, (all) => change(all[layer][i] as unknown as Record<string, unknown>));
      if (f.probability !== undefined) yield edit((x) => delete x["probability"]);
      const fromMs = msOf(f.from);
      const untilMs = msOf(f.until);
      if (f.until !== undefined) yield edit((x) => delete x["until"]);
      if (f.from !== undefined) yield edit((x) => delete x["from"]);
      if (fromMs !== undefined && untilMs !== undefined && untilMs - fromMs > 2000) {
        yield edit((x) => (x["until"] = formatDuration(fromMs + Math.floor((untilMs - fromMs) / 2000) * 1000)));
      }
      if (fromMs !== undefined && fromMs > 0) {
        const shift = fromMs - Math.floor(fromMs / 2000) * 1000;
        yield edit((x) => {
          x["from"] = formatDuration(fromMs - shift);
          if (untilMs !== undefined) x["until"] = formatDuration(untilMs - shift);
        });
      }
    }
  }
  // Mailboxes no message is addressed to.
  const addressed = new Set(messages.flatMap((m) => recipients(m).map((r) => r.toLowerCase())));
  for (const name of names) {
    const d = s.domains[name];
    const boxes = d?.mailboxes ?? [];
    const kept = boxes.filter((b) => addressed.has(`${typeof b === "string" ? b : b.address}@${name}`.toLowerCase()));
    if (d !== undefined && kept.length < boxes.length)
      yield { ...s, domains: { ...s.domains, [name]: { ...d, mailboxes: kept } } };
  }
}

/**
 * Shrinks `scenario` while `stillFails`, in at most `budget` runs. The
 * result is never larger than what it started from.
 */
export async function shrinkWorld(scenario: ScenarioInput, stillFails: StillFails, budget: number): Promise<Shrunk> {
  let current = clone(scenario);
  let runs = 0;
  let steps = 0;
  let progress = true;
  while (progress && runs < budget) {
    progress = false;
    const size = worldSize(current).total;
    for (const candidate of candidates(current)) {
      if (runs >= budget) break;
      if (worldSize(candidate).total > size || !scenarioSchema.safeParse(candidate).success) continue;
      if (JSON.stringify(candidate) === JSON.stringify(current)) continue;
      runs++;
      if (await stillFails(candidate)) {
        current = candidate;
        steps++;
        progress = true;
        break;
      }
    }
  }
  return { scenario: current, runs, steps, exhausted: progress && runs >= budget };
}
