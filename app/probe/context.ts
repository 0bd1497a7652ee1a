/**
 * The probe's context: what one run of `mailscope probe` knows and keeps,
 * made once by {@link createProbeContext} and handed to every step — the
 * options and ports, the cases and what of them can run, the trace being
 * recorded, the verdicts so far, the responses seen (for the cases judged
 * over every answer) and the state of sending (the rate, the silence).
 */
import { traceEvent } from "../ports.ts";
import type { EmitData, TraceEventName } from "../trace/events.ts";
import { signingDomainOfKeyid } from "../protocol/profile.ts";
import { createRecorder, type Recorder } from "../trace/recorder.ts";
import type { Answered } from "./answers.ts";
import { probeCases, type ProbeCase, type ProbeStep } from "./cases.ts";
import { whatRuns, type WhatRuns } from "./plan.ts";
import type { ProbeIdentity, ProbeOptions, ProbePorts, ProbeVerdict } from "./probe.ts";

/** Default longest Retry-After waited for. */
export const DEFAULT_RETRY_WAIT_MAX_MS = 30_000;

/** A response the run got, with the exchange and the trace events it rests on. */
export interface ResponseSeen {
  readonly exchangeId: string;
  readonly evidence: number[];
  readonly answer: Answered;
}

/** Where sending stands: the rate and the receiver's silence. */
export interface Sending {
  readonly intervalMs: number;
  readonly retryWaitMaxMs: number;
  /** Exchanges so far (`x1`, `x2`…). */
  exchanges: number;
  lastRequestAtMs: number;
  /** Requests in a row that got no answer. */
  silent: number;
}

/** One probe run's state, handed to each step. */
export interface ProbeContext extends WhatRuns {
  readonly options: ProbeOptions;
  readonly ports: ProbePorts;
  /** The cases to run, in catalogue order. */
  readonly cases: readonly ProbeCase[];
  readonly selected: ReadonlySet<string>;
  readonly recorder: Recorder;
  readonly identity: ProbeIdentity | undefined;
  /** The signing domain (AUTH-4), else the domain of `from`. */
  readonly fromDomain: string | undefined;
  /** The domain the trace's events are recorded under. */
  readonly traceDomain: string;
  readonly startedAtMs: number;
  /** `options.target`, trimmed. */
  readonly target: string;
  /** Whether the target is an origin (else a recipient domain). */
  readonly isOrigin: boolean;
  /** The recipient domain: the target's, or that of the first mailbox. */
  readonly domain: string | undefined;
  /** `--absent`, and one recipient made of it (`{n}` dropped). */
  readonly absent: string | undefined;
  readonly absentOne: string | undefined;
  readonly verdicts: Map<string, ProbeVerdict>;
  readonly responses: ResponseSeen[];
  readonly sending: Sending;
}

/** The context of a run of `options` over `ports`; reads the clock once, for the run's start. */
export function createProbeContext(options: ProbeOptions, ports: ProbePorts): ProbeContext {
  const cases = options.cases ?? probeCases;
  const identity = options.identity;
  const signing = identity === undefined ? undefined : signingDomainOfKeyid(identity.keyid);
  const fromDomain = signing?.ok === true ? signing.value : identity?.from.replace(/^.*@/, "");
  const startedAtMs = ports.clock.now();
  const target = options.target.trim();
  const isOrigin = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
  const mailboxDomain = options.mailboxes[0]?.replace(/^.*@/, "").toLowerCase();
  return {
    options,
    ports,
    cases,
    selected: new Set(cases.map((c) => c.id)),
    recorder: createRecorder({ recordBodies: true }),
    identity,
    fromDomain,
    traceDomain: fromDomain ?? "probe",
    startedAtMs,
    target,
    isOrigin,
    domain: isOrigin ? mailboxDomain : target.toLowerCase().replace(/\.$/, ""),
    absent: options.absent,
    absentOne: options.absent?.replace("{n}", ""),
    ...whatRuns(options, cases),
    verdicts: new Map(),
    responses: [],
    sending: {
      intervalMs: 1000 / Math.max(0.001, options.requestsPerSecond),
      retryWaitMaxMs: options.retryWaitMaxMs ?? DEFAULT_RETRY_WAIT_MAX_MS,
      exchanges: 0,
      lastRequestAtMs: Number.NEGATIVE_INFINITY,
      silent: 0,
    },
  };
}

/** Records a trace event now, tells `onEvent`, and returns its seq. */
export function emit<N extends TraceEventName>(ctx: ProbeContext, name: N, data: EmitData<N>): number {
  const { recorder } = ctx;
  recorder.emit(traceEvent(name, ctx.ports.clock.now(), data, ctx.traceDomain));
  const seq = recorder.length - 1;
  const event = ctx.options.onEvent === undefined ? undefined : recorder.at(seq);
  if (event !== undefined) ctx.options.onEvent?.(event);
  return seq;
}

/** Whether the case `id` runs (selected, and its needs met). */
export function runs(ctx: ProbeContext, id: string): boolean {
  return ctx.runnable.some((c) => c.id === id);
}

/** The ids of the selected cases that `filter` takes, in catalogue order. */
export function idsOf(ctx: ProbeContext, filter: (c: ProbeCase) => boolean): string[] {
  return ctx.cases.filter(filter).map((c) => c.id);
}

/** The ids of the selected cases of `steps`. */
export function idsOfSteps(ctx: ProbeContext, steps: readonly ProbeStep[]): string[] {
  return idsOf(ctx, (c) => steps.includes(c.step));
}
