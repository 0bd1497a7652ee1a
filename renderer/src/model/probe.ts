/**
 * A probe's report from its trace alone (`mailscope probe --trace`, or the
 * trace inside `--json`'s report): the target and plan (`probe.started`), each
 * case's verdict (`probe.case`) with the exchanges it read, and what the
 * sequence diagram and the inspector need for a case — its events, and the
 * receiver as the probe found it (its domain and capabilities document) with
 * the probe's own key record, so the inspector's checks can run.
 */
import { lintReceiverConfigSchema } from "../../../app/receiver/config.ts";
import type { ReceiverOfRun } from "../../../app/sim/sessionProtocol.ts";
import { dataOf, readEvent } from "../../../app/trace/eventReader.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";

export type ProbeResult = "PASS" | "FAIL" | "SKIP";
export type ProbeGrade = "MUST" | "SHOULD" | "MAY";

/** One case, as the report's table draws it. */
export interface ProbeCaseRow {
  readonly id: string;
  readonly rule: string;
  readonly rules: readonly string[];
  readonly grade: ProbeGrade;
  readonly title: string;
  readonly expected: string;
  readonly actual: string;
  readonly result: ProbeResult;
  readonly why: string | undefined;
  /** HTTP exchanges (`x3`) in order. */
  readonly exchanges: readonly string[];
  /** Seqs of the events the verdict rests on. */
  readonly evidence: readonly number[];
  /** The seq of its `probe.case` event. */
  readonly seq: number;
}

/** The whole report. */
export interface ProbeReportView {
  readonly target: string;
  readonly origin: string | undefined;
  readonly domain: string | undefined;
  readonly from: string | undefined;
  readonly keyid: string | undefined;
  /** What `probe.started` said the probe would do; undefined when that event gives no whole plan (an edited or older trace). */
  readonly plan:
    | {
        readonly cases: number;
        readonly requests: number;
        readonly messages: number;
        readonly messagesAtMost: number;
        readonly mailboxes: readonly string[];
      }
    | undefined;
  /** The seq of `probe.started`, the event the plan is read from. */
  readonly startedSeq: number;
  readonly rows: readonly ProbeCaseRow[];
  /** Counts by grade and result, as the CLI's summary line gives them. */
  readonly counts: Readonly<Record<ProbeGrade, Readonly<Record<ProbeResult, number>>>>;
  /** The receiver's answers the inspector's checks read: its origin, domain and advertised capabilities. */
  readonly receivers: readonly ReceiverOfRun[];
  /** The probe's own key record by keyid, for the inspector's signature checks. */
  readonly keyRecords: Readonly<Record<string, string>>;
  readonly startMs: number;
}

/** Whether the events are a probe's (its first event says so). */
export function isProbeTrace(events: readonly RecordedEvent[]): boolean {
  return events[0]?.name === "probe.started";
}

/** The report of a probe's trace; undefined for a trace that is not a probe's. */
export function probeReportOf(events: readonly RecordedEvent[]): ProbeReportView | undefined {
  const started = events[0];
  if (started === undefined) return undefined;
  const d = dataOf(started, "probe.started");
  if (d === undefined) return undefined;
  const plan = d.plan ?? {};
  const rows: ProbeCaseRow[] = [];
  let capabilities: unknown;
  let capabilitiesOrigin: string | undefined;
  const capabilitiesRequests = new Map<string, string>();
  for (const raw of events) {
    const e = readEvent(raw);
    if (e?.name === "probe.case") {
      const ed = e.data;
      rows.push({
        id: ed.id ?? "?",
        rule: ed.rule ?? "",
        rules: [...(ed.rules ?? [])],
        grade: ed.grade ?? "MUST",
        title: ed.title ?? "",
        expected: ed.expected ?? "",
        actual: ed.actual ?? "",
        result: ed.result ?? "SKIP",
        why: ed.why,
        exchanges: [...(ed.exchanges ?? [])],
        evidence: [...(ed.evidence ?? [])],
        seq: e.seq,
      });
    } else if (e?.name === "http.request" && /\/v1\/capabilities$/.test(e.data.url ?? "")) {
      capabilitiesRequests.set(e.data.exchangeId ?? "", new URL(e.data.url ?? "").origin);
    } else if (e?.name === "http.response" && capabilities === undefined && e.data.status === 200) {
      const origin = capabilitiesRequests.get(e.data.exchangeId ?? "");
      const body = e.data.body;
      if (origin !== undefined && body !== undefined) {
        try {
          capabilities = JSON.parse(body);
          capabilitiesOrigin = origin;
        } catch {
          // Not JSON: the capabilities cases say so; the inspector runs without the receiver's limits.
        }
      }
    }
  }
  const counts = { MUST: zero(), SHOULD: zero(), MAY: zero() };
  for (const r of rows) counts[r.grade][r.result] += 1;
  const domain = d.domain;
  const config =
    domain !== undefined && capabilities !== undefined
      ? lintReceiverConfigSchema.safeParse({ domains: [domain], capabilities })
      : undefined;
  const { keyid, keyRecord } = d;
  return {
    target: d.target ?? "",
    origin: d.origin ?? capabilitiesOrigin,
    domain,
    from: d.from,
    keyid,
    plan:
      plan.cases !== undefined &&
      plan.requests !== undefined &&
      plan.messages !== undefined &&
      plan.messagesAtMost !== undefined
        ? {
            cases: plan.cases,
            requests: plan.requests,
            messages: plan.messages,
            messagesAtMost: plan.messagesAtMost,
            mailboxes: [...(plan.mailboxes ?? [])],
          }
        : undefined,
    startedSeq: started.seq,
    rows,
    counts,
    receivers:
      config?.success === true && capabilitiesOrigin !== undefined
        ? [{ origin: capabilitiesOrigin, config: config.data }]
        : [],
    keyRecords: keyid !== undefined && keyRecord !== undefined ? { [keyid]: keyRecord } : {},
    startMs: started.timeMs,
  };
}

function zero(): Record<ProbeResult, number> {
  return { PASS: 0, FAIL: 0, SKIP: 0 };
}

/** Which rows a filter shows. */
export type ProbeFilter = "all" | "failed" | "not-passed";

export function filterRows(rows: readonly ProbeCaseRow[], filter: ProbeFilter): readonly ProbeCaseRow[] {
  if (filter === "all") return rows;
  return rows.filter((r) => r.result === "FAIL" || (filter === "not-passed" && r.result === "SKIP"));
}

/**
 * The events of a case for the sequence diagram and the inspector: its
 * exchanges' requests, answers and failures, and the TLS handshakes it rests
 * on. Undefined when it has none (a case skipped before anything was sent).
 */
export function caseEvents(events: readonly RecordedEvent[], row: ProbeCaseRow): readonly RecordedEvent[] | undefined {
  const exchanges = new Set(row.exchanges);
  const evidence = new Set(row.evidence);
  const out = events.filter((e) => evidence.has(e.seq) || exchanges.has(String((e.data ?? {})["exchangeId"])));
  return out.length > 0 ? out : undefined;
}

/** The time range the case's events span, for the sequence diagram's range. */
export function caseRange(events: readonly RecordedEvent[]): readonly [number, number] | undefined {
  const first = events[0];
  const last = events.at(-1);
  return first === undefined || last === undefined ? undefined : [first.timeMs, last.timeMs];
}

/** The summary line of the report, as the CLI prints it: `55 cases: 54 PASS, 0 FAIL, 1 SKIP …`. */
export function summaryText(report: ProbeReportView): string {
  const total = (r: ProbeResult): number => report.counts.MUST[r] + report.counts.SHOULD[r] + report.counts.MAY[r];
  const mustFailed = report.counts.MUST.FAIL;
  return `${report.rows.length} cases: ${total("PASS")} PASS, ${total("FAIL")} FAIL, ${total("SKIP")} SKIP; ${
    mustFailed > 0 ? `${mustFailed} MUST case${mustFailed === 1 ? "" : "s"} failed` : "no MUST case failed"
  }`;
}
