/**
 * The simulated DNS: record sets built from data, records that change at
 * given times, faults, and a Resolver port over them that answers after a
 * virtual latency and traces `dns.query` / `dns.answer`.
 *
 * One zone holds every name of a run: each domain's SVCB records at
 * `_svc.<domain>` (G5), given as records or as RFC 9460 presentation strings,
 * and its key records, TXT at `<selector>._svckey.<domain>` (G4).
 *
 * A name with no record set answers NXDOMAIN; a name with a record set but no
 * records of the type asked answers NODATA. Faults — NXDOMAIN, SERVFAIL, a
 * timeout (`{ kind: "timeout" }` after a virtual delay) — are scoped by a
 * name glob, the record type, the asking domain, a time window and a
 * probability drawn from the fault's own PRNG stream.
 *
 * The trace shows each fault's window (`fault.window`, when the fault is
 * added) and each change of records (`dns.changed`, at the time it takes
 * effect). A change is in force by its time alone, with no event of the
 * scheduler (so a change after the last delivery does not keep a run going);
 * its `dns.changed` is traced when the trace first reaches its time — the
 * world calls {@link DnsZone.traceChangesUntil} before each trace event and
 * at the end of a run.
 */
import * as z from "zod";
import { noTrace, traceEvent, type DnsAnswer, type Resolver, type SvcbRecord, type TraceSink } from "../ports.ts";
import type { Parsed } from "../protocol/result.ts";
import type { EmitData } from "../trace/events.ts";
import {
  boundedMs,
  faultScopeShape,
  faultWindowData,
  inWindow,
  latencySchema,
  matchGlob,
  MAX_LATENCY_MS,
  MAX_LATENCY_WHY,
  normalizeName,
  resolveTimeMs,
  resolveWindow,
  sampleLatencyMs,
  timeOffsetSchema,
  type LatencySpec,
  type TimeWindow,
} from "./faultScope.ts";
import type { SeededRandom } from "./random.ts";
import type { Scheduler } from "./scheduler.ts";

/** The record types the service looks up. */
export type DnsRecordType = "SVCB" | "TXT";

/** The owner name of a domain's SVCB records (SVC-5, G5). */
export function svcbOwner(domain: string): string {
  return `_svc.${normalizeName(domain)}`;
}

/** An SVCB record's 16-bit fields: SvcPriority and the port SvcParam (RFC 9460 §2.2, §7.2). */
const uint16 = (what: string) =>
  z
    .int()
    .min(0)
    .max(65535, { error: `${what} is at most 65535: a 16-bit field of the SVCB record (RFC 9460)` })
    .meta({ description: `At most 65535: a 16-bit field of the SVCB record (RFC 9460).` });

/** Zod schema of an SVCB record given as data (the port's {@link SvcbRecord}). */
export const svcbRecordSchema = z.strictObject({
  priority: uint16("SvcPriority"),
  target: z.string().min(1),
  port: uint16("a port").optional(),
  alpn: z.array(z.string()).optional(),
  ipv4hint: z.array(z.string()).optional(),
  ipv6hint: z.array(z.string()).optional(),
  other: z.record(z.string(), z.string()).optional(),
});

/** The longest TTL, seconds: 2^31 - 1 (RFC 2181 section 8). */
export const MAX_TTL_S = 2_147_483_647;
/** The error of a TTL over {@link MAX_TTL_S}. */
export const TTL_TOO_LONG = `a TTL is at most ${MAX_TTL_S} seconds (RFC 2181 §8)`;
/** A TTL in seconds, at most {@link MAX_TTL_S}. */
export const ttlSecondsSchema = z
  .int()
  .min(0)
  .max(MAX_TTL_S, { error: TTL_TOO_LONG })
  .meta({ description: `Seconds; at most ${MAX_TTL_S} (RFC 2181 §8).` });

/** Zod schema of the records at one name. */
export const dnsRecordSetSchema = z.strictObject({
  /** SVCB records, as data or as presentation strings (`1 mx.b.example. alpn=h2 port=8443`). */
  svcb: z.array(z.union([z.string(), svcbRecordSchema])).optional(),
  /** TXT records, each one string (the record's strings joined). */
  txt: z.array(z.string()).optional(),
  ttlS: ttlSecondsSchema.optional(),
});

/** Zod schema of a DNS fault. */
export const dnsFaultSchema = z.strictObject({
  kind: z.enum(["nxdomain", "servfail", "timeout"]),
  ...faultScopeShape,
  /** Glob over the queried name (`_svc.b.example`, `*._svckey.a.example`). */
  name: z.string().optional(),
  type: z.enum(["SVCB", "TXT"]).optional(),
  /** Only queries asked by this domain's resolver. */
  source: z.string().optional(),
  /** For `timeout`: when the resolver gives up, virtual ms. Default: the zone's `timeoutMs`. */
  afterMs: boundedMs(MAX_LATENCY_MS, "a DNS timeout", MAX_LATENCY_WHY).optional(),
});

/** Zod schema of a change: from `at` on, `name` holds `records` (`null`: the name is gone). */
export const dnsChangeSchema = z.strictObject({
  at: timeOffsetSchema,
  name: z.string(),
  records: dnsRecordSetSchema.nullable(),
});

/** Zod schema of a whole zone. */
export const dnsZoneSchema = z.strictObject({
  records: z.record(z.string(), dnsRecordSetSchema).default({}),
  changes: z.array(dnsChangeSchema).default([]),
  faults: z.array(dnsFaultSchema).default([]),
  /** How long an answer takes, virtual ms. */
  latency: latencySchema.default(0),
  /** When a timed-out query gives up, virtual ms. */
  timeoutMs: boundedMs(MAX_LATENCY_MS, "a DNS timeout", MAX_LATENCY_WHY).default(5000),
  /** TTL of a record set that does not give one. */
  defaultTtlS: ttlSecondsSchema.default(300),
});

export type DnsRecordSetInput = z.input<typeof dnsRecordSetSchema>;
export type DnsFaultInput = z.input<typeof dnsFaultSchema>;
export type DnsZoneInput = z.input<typeof dnsZoneSchema>;
export type DnsFault = z.output<typeof dnsFaultSchema>;

/** Parses one SVCB presentation string; app/protocol/svcb.ts's `parseSvcbPresentation` fits. */
export type SvcbPresentationParser = (text: string) => Parsed<SvcbRecord>;

/** What {@link createDnsZone} needs. */
export interface DnsZoneOptions {
  readonly scheduler: Scheduler;
  /** The zone's stream; the latency and each fault fork their own. */
  readonly random: SeededRandom;
  readonly trace?: TraceSink;
  /** Needed only when records are given as presentation strings. */
  readonly parseSvcb?: SvcbPresentationParser;
}

/** Records at one name, parsed. */
interface RecordSet {
  readonly svcb: readonly SvcbRecord[];
  readonly txt: readonly string[];
  readonly ttlS: number;
}

/** The simulated DNS of one run. */
export interface DnsZone {
  /** A Resolver for `domain` (its queries are traced as that domain's, and `source`-scoped faults see it). */
  resolver(domain?: string): Resolver;
  /** What the zone holds at `timeMs` (default now), without faults or latency: for inspection and invariants. */
  lookup(name: string, type: DnsRecordType, timeMs?: number): DnsAnswer<SvcbRecord | string>;
  /** Replaces the records at `name` from now on (`null` removes the name); traced as `dns.changed` at once. */
  set(name: string, records: DnsRecordSetInput | null): void;
  /**
   * Traces `dns.changed` for each of the zone's scheduled changes in force by
   * `timeMs` that has not been traced yet, in time order, each at its own time
   * (not before the start of the run).
   */
  traceChangesUntil(timeMs: number): void;
  /** Adds a fault after the others. */
  addFault(fault: DnsFaultInput): DnsFault;
}

/** The members of a DNS fault that say which queries it concerns (`fault.window`'s `scope`). */
const DNS_SCOPE_KEYS = ["name", "type", "source"];

interface CompiledFault {
  readonly spec: DnsFault;
  readonly label: string;
  readonly window: TimeWindow;
  readonly chance: SeededRandom;
  /** `spec.name` and `spec.source` normalized once, not on every query. */
  readonly name: string | undefined;
  readonly source: string | undefined;
}

/**
 * A zone from data: validated with {@link dnsZoneSchema} (throws a ZodError
 * with paths when invalid) and with presentation strings parsed (throws when
 * one does not parse, naming it).
 */
export function createDnsZone(input: DnsZoneInput, options: DnsZoneOptions): DnsZone {
  const zone = dnsZoneSchema.parse(input);
  const { scheduler } = options;
  const trace = options.trace ?? noTrace;
  const latencyRandom = options.random.fork("latency");
  const latency: LatencySpec = zone.latency;
  /** Per name, the record sets in force from each time on, in time order. */
  const timelines = new Map<string, { readonly fromMs: number; readonly set: RecordSet | null }[]>();
  const faults: CompiledFault[] = [];

  function parseSet(name: string, set: DnsRecordSetInput): RecordSet {
    const svcb = (set.svcb ?? []).map((record, i): SvcbRecord => {
      if (typeof record !== "string") return svcbRecordSchema.parse(record);
      if (options.parseSvcb === undefined) {
        throw new Error(`${name}: SVCB record ${i} is a presentation string, and the zone was given no parseSvcb`);
      }
      const parsed = options.parseSvcb(record);
      if (!parsed.ok) {
        const why = parsed.violations.map((v) => `${v.message} [${v.rule}]`).join("; ");
        throw new Error(`${name}: SVCB record ${i} "${record}" does not parse: ${why}`);
      }
      return parsed.value;
    });
    return { svcb, txt: set.txt ?? [], ttlS: set.ttlS ?? zone.defaultTtlS };
  }

  function setAt(name: string, fromMs: number, set: DnsRecordSetInput | null): RecordSet | null {
    const key = normalizeName(name);
    const timeline = timelines.get(key) ?? [];
    const entry = { fromMs, set: set === null ? null : parseSet(key, set) };
    // Stable insertion: after every entry at or before this time.
    let i = timeline.length;
    while (i > 0 && (timeline[i - 1]?.fromMs ?? 0) > fromMs) i--;
    timeline.splice(i, 0, entry);
    timelines.set(key, timeline);
    return entry.set;
  }

  for (const [name, set] of Object.entries(zone.records)) setAt(name, Number.NEGATIVE_INFINITY, set);
  /** The scheduled changes, in time order (stable), and how many of them the trace has shown. */
  const changes = zone.changes
    .map((change) => {
      const fromMs = resolveTimeMs(change.at, scheduler.startMs);
      return { name: normalizeName(change.name), fromMs, set: setAt(change.name, fromMs, change.records) };
    })
    .sort((a, b) => a.fromMs - b.fromMs);
  let changesTraced = 0;

  function traceChange(name: string, timeMs: number, set: RecordSet | null, cause: "scheduled" | "set"): void {
    trace.emit({
      name: "dns.changed",
      timeMs,
      data: {
        name,
        records: set === null ? null : { svcb: set.svcb, txt: set.txt, ttlS: set.ttlS },
        cause,
      },
    });
  }

  function traceChangesUntil(timeMs: number): void {
    while (changesTraced < changes.length) {
      const change = changes[changesTraced];
      if (change === undefined || change.fromMs > timeMs) return;
      // Counted before it is traced: the trace sink calls back here.
      changesTraced++;
      traceChange(change.name, Math.max(change.fromMs, scheduler.startMs), change.set, "scheduled");
    }
  }

  /** The record set at `name` (normalized) at `timeMs`. */
  function recordsAt(name: string, timeMs: number): RecordSet | null {
    const timeline = timelines.get(name);
    if (timeline === undefined) return null;
    let current: RecordSet | null = null;
    for (let i = 0; i < timeline.length; i++) {
      const entry = timeline[i] as (typeof timeline)[number];
      if (entry.fromMs > timeMs) break;
      current = entry.set;
    }
    return current;
  }

  function lookup(name: string, type: DnsRecordType, timeMs = scheduler.now()): DnsAnswer<SvcbRecord | string> {
    return answerAt(normalizeName(name), type, timeMs);
  }

  /** {@link lookup} of a normalized name (a query's). */
  function answerAt(name: string, type: DnsRecordType, timeMs: number): DnsAnswer<SvcbRecord | string> {
    const set = recordsAt(name, timeMs);
    if (set === null) return { kind: "nxdomain" };
    const records = type === "SVCB" ? set.svcb : set.txt;
    return records.length === 0 ? { kind: "nodata" } : { kind: "answer", records, ttlS: set.ttlS };
  }

  function addFault(input: DnsFaultInput): DnsFault {
    const spec = dnsFaultSchema.parse(input);
    const label = spec.id ?? `${faults.length}:${spec.kind}`;
    const window = resolveWindow(spec, scheduler.startMs);
    faults.push({
      spec,
      label,
      window,
      chance: options.random.fork(`fault:${label}`),
      name: spec.name === undefined ? undefined : normalizeName(spec.name),
      source: spec.source === undefined ? undefined : normalizeName(spec.source),
    });
    trace.emit({
      name: "fault.window",
      timeMs: scheduler.now(),
      data: faultWindowData(
        "dns",
        label,
        spec.kind === "timeout" ? { ...spec, afterMs: spec.afterMs ?? zone.timeoutMs } : spec,
        window,
        scheduler.startMs,
        DNS_SCOPE_KEYS,
      ),
    });
    return spec;
  }
  for (const fault of zone.faults) addFault(fault);

  function faultFor(name: string, type: DnsRecordType, source: string | undefined): CompiledFault | undefined {
    const now = scheduler.now();
    for (const fault of faults) {
      const spec = fault.spec;
      if (!inWindow(fault.window, now)) continue;
      if (fault.name !== undefined && !matchGlob(fault.name, name)) continue;
      if (spec.type !== undefined && spec.type !== type) continue;
      if (fault.source !== undefined && fault.source !== source) continue;
      if (spec.probability !== undefined && !fault.chance.chance(spec.probability)) continue;
      return fault;
    }
    return undefined;
  }

  async function query<T extends SvcbRecord | string>(
    rawName: string,
    type: DnsRecordType,
    source: string | undefined,
  ): Promise<DnsAnswer<T>> {
    const name = normalizeName(rawName);
    trace.emit(traceEvent("dns.query", scheduler.now(), { name, type }, source));
    const fault = faultFor(name, type, source);
    let answer: DnsAnswer<SvcbRecord | string>;
    let delayMs: number;
    if (fault?.spec.kind === "timeout") {
      answer = { kind: "timeout" };
      delayMs = fault.spec.afterMs ?? zone.timeoutMs;
    } else {
      answer = fault === undefined ? answerAt(name, type, scheduler.now()) : { kind: fault.spec.kind };
      delayMs = sampleLatencyMs(latency, latencyRandom);
    }
    if (delayMs > 0) await scheduler.sleep(delayMs, `dns ${type} ${name}`);
    const kind = answer.kind;
    // One literal for each shape the answer's data takes, without a spread.
    const data: EmitData<"dns.answer"> =
      fault !== undefined
        ? kind === "answer"
          ? { name, type, kind, records: answer.records, ttlS: answer.ttlS, fault: fault.label }
          : { name, type, kind, fault: fault.label }
        : kind === "answer"
          ? { name, type, kind, records: answer.records, ttlS: answer.ttlS }
          : { name, type, kind };
    trace.emit(traceEvent("dns.answer", scheduler.now(), data, source));
    return answer as DnsAnswer<T>;
  }

  return {
    resolver(domain) {
      const source = domain === undefined ? undefined : normalizeName(domain);
      return {
        svcb: (name) => query<SvcbRecord>(name, "SVCB", source),
        txt: (name) => query<string>(name, "TXT", source),
      };
    },
    lookup,
    set(name, records) {
      traceChange(normalizeName(name), scheduler.now(), setAt(name, scheduler.now(), records), "set");
    },
    traceChangesUntil,
    addFault,
  };
}
