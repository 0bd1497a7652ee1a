import { useEffect, useMemo, useRef, useState } from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import {
  caseEvents,
  caseRange,
  filterRows,
  probeReportOf,
  summaryText,
  type ProbeCaseRow,
  type ProbeReportView,
  type ProbeFilter,
} from "../../model/probe.ts";
import { InspectorView } from "../exchange/InspectorView.tsx";
import { SequenceView } from "../sequence/SequenceView.tsx";
import "./probe.css";
import { Table } from "../../components/Table.tsx";

export interface ProbeViewProps {
  /** The probe's trace (opened as a trace, or from a probe's JSON report). */
  readonly events: readonly RecordedEvent[];
  /** The file it came from. */
  readonly file: string;
  readonly onRule: (rule: string) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
}

const NO_LABELS: ReadonlyMap<string, string> = new Map();
const FILTERS: readonly [ProbeFilter, string][] = [
  ["all", "All cases"],
  ["failed", "Failed"],
  ["not-passed", "Failed and skipped"],
];

/**
 * A probe's report (`mailscope probe`): its cases, MUST / SHOULD / MAY, beside
 * the sequence diagram and the inspector of the selected case's exchanges.
 */
export function ProbeView({ events, file, onRule, onSave }: ProbeViewProps) {
  const report = useMemo(() => probeReportOf(events), [events]);
  const [filter, setFilter] = useState<ProbeFilter>("all");
  const firstFailed = report?.rows.find((r) => r.result === "FAIL") ?? report?.rows[0];
  const [selectedId, setSelectedId] = useState<string | undefined>(firstFailed?.id);
  const [exchange, setExchange] = useState<string | undefined>();
  const box = useRef<HTMLDivElement>(null);
  // On open, the case shown (the first failed one) is scrolled into the table's own box, not the page.
  useEffect(() => {
    const container = box.current;
    const row = container?.querySelector<HTMLElement>('tr[aria-selected="true"]');
    if (container && row) container.scrollTop = Math.max(0, row.offsetTop - container.clientHeight / 3);
    // Only when the report changes: later selections are made in view.
  }, [report]);
  const selected = report?.rows.find((r) => r.id === selectedId);
  const shownEvents = useMemo(() => (selected ? caseEvents(events, selected) : undefined), [events, selected]);
  const range = shownEvents ? caseRange(shownEvents) : undefined;
  if (!report) return <p role="alert">{file} is not a probe's trace.</p>;
  const rows = filterRows(report.rows, filter);
  const select = (row: ProbeCaseRow, x?: string) => {
    setSelectedId(row.id);
    setExchange(x);
  };

  return (
    <section aria-labelledby="probe-title" className="probe">
      <header className="run-head">
        <h2 id="probe-title">Probe of {report.origin ?? report.target}</h2>
        <span className="badge">probe report</span>
        <p className="description">
          {file}
          {report.domain ? ` · recipient domain ${report.domain}` : ""}
          {report.from ? ` · signed for ${report.from} (${report.keyid ?? "?"})` : ""}
        </p>
      </header>
      <ProbeSummary report={report} />
      <div className="probe-layout">
        <section aria-labelledby="probe-cases-heading" className="panel probe-cases">
          <div className="panel-head">
            <h3 id="probe-cases-heading">Cases</h3>
            <div role="radiogroup" aria-label="Show" className="probe-filter">
              {FILTERS.map(([value, label]) => (
                <label key={value}>
                  <input
                    type="radio"
                    name="probe-filter"
                    checked={filter === value}
                    onChange={() => setFilter(value)}
                  />{" "}
                  {label}
                </label>
              ))}
            </div>
          </div>
          <div className="probe-cases-scroll" ref={box}>
            <Table
              className="outcomes"
              label="Cases"
              colgroup={
                <colgroup>
                  <col className="probe-col-result" />
                  <col />
                  <col className="probe-col-rule" />
                  <col className="probe-col-exchanges" />
                </colgroup>
              }
              columns={["Result", "Case and what came", "Rule, grade", "Exchanges"]}
            >
              {rows.map((r) => (
                <tr
                  key={r.id}
                  className={r.id === selected?.id ? "selected" : undefined}
                  aria-selected={r.id === selected?.id}
                  data-result={r.result}
                  data-case={r.id}
                >
                  <td>
                    <span className={`probe-result ${r.result.toLowerCase()}`}>{r.result}</span>
                  </td>
                  <td>
                    <button className="link probe-case-id" onClick={() => select(r)} title={r.title}>
                      {r.id}
                    </button>
                    <span className="probe-actual">{r.actual}</span>
                  </td>
                  <td>
                    <button className="link" onClick={() => onRule(r.rule)} title={`Open ${r.rule} in the rules`}>
                      {r.rule}
                    </button>
                    <span className="probe-grade">{r.grade}</span>
                  </td>
                  <td>
                    {r.exchanges.map((x) => (
                      <button
                        key={x}
                        className="link probe-exchange"
                        onClick={() => select(r, x)}
                        aria-label={`Exchange ${x} of ${r.id}`}
                      >
                        {x}
                      </button>
                    ))}
                  </td>
                </tr>
              ))}
            </Table>
          </div>
          {rows.length === 0 && (
            <p className="muted">No case is {filter === "failed" ? "failed" : "failed or skipped"}.</p>
          )}
        </section>
        <div className="probe-detail">
          {selected && <CaseDetail row={selected} onRule={onRule} />}
          {shownEvents && range && (
            <SequenceView
              key={`sequence ${selected?.id ?? ""}`}
              events={shownEvents}
              startMs={report.startMs}
              labels={NO_LABELS}
              messageId={undefined}
              onMessage={() => {}}
              range={range}
              exchangeId={exchange ?? selected?.exchanges.at(-1)}
              onExchange={setExchange}
              onSave={onSave}
            />
          )}
          {selected && selected.exchanges.length > 0 && (
            <InspectorView
              key={`inspector ${selected.id}`}
              events={events}
              startMs={report.startMs}
              exchangeIds={exchange !== undefined ? [exchange] : selected.exchanges}
              receivers={report.receivers}
              keyRecords={report.keyRecords}
              onRule={onRule}
            />
          )}
        </div>
      </div>
    </section>
  );
}

/** The probe's counts by grade and what its plan said. */
function ProbeSummary({ report }: { readonly report: ProbeReportView }) {
  return (
    <section aria-labelledby="probe-summary-heading" className="panel">
      <h3 id="probe-summary-heading">Summary</h3>
      <p className={report.counts.MUST.FAIL > 0 ? "summary fail" : "summary pass"} data-testid="probe-summary">
        {summaryText(report)}
      </p>
      <Table className="probe-grades" caption="Results by grade" columns={["Grade", "PASS", "FAIL", "SKIP"]}>
        {(["MUST", "SHOULD", "MAY"] as const).map((g) => (
          <tr key={g}>
            <th scope="row">{g}</th>
            <td className="num">{report.counts[g].PASS}</td>
            <td className="num">{report.counts[g].FAIL}</td>
            <td className="num">{report.counts[g].SKIP}</td>
          </tr>
        ))}
      </Table>
      <p className="muted">
        {report.plan === undefined ? (
          <>The trace's probe.started (seq {report.startedSeq}) gives no whole plan.</>
        ) : (
          <>
            The plan said {report.plan.cases} cases, at most {report.plan.requests} requests, {report.plan.messages}{" "}
            message
            {report.plan.messages === 1 ? "" : "s"} stored by a receiver that follows the spec (at most{" "}
            {report.plan.messagesAtMost}), for {report.plan.mailboxes.join(", ") || "no mailbox"}.
          </>
        )}
      </p>
    </section>
  );
}

/** The selected case: what was expected, what came, why, its rules and exchanges. */
function CaseDetail({ row, onRule }: { readonly row: ProbeCaseRow; readonly onRule: (rule: string) => void }) {
  return (
    <section aria-labelledby="probe-case-heading" className="panel" data-testid="probe-case">
      <h3 id="probe-case-heading">
        <span className={`probe-result ${row.result.toLowerCase()}`}>{row.result}</span> {row.id} · {row.grade}
      </h3>
      <p>{row.title}</p>
      <dl className="probe-facts">
        <dt>Expected</dt>
        <dd>{row.expected}</dd>
        <dt>Actual</dt>
        <dd>{row.actual}</dd>
        {row.why && (
          <>
            <dt>{row.result === "PASS" ? "Note" : "Why"}</dt>
            <dd>{row.why}</dd>
          </>
        )}
        <dt>Rules</dt>
        <dd>
          {row.rules.map((rule) => (
            <button key={rule} className="link probe-rule" onClick={() => onRule(rule)}>
              {rule}
            </button>
          ))}
        </dd>
        <dt>Exchanges</dt>
        <dd>{row.exchanges.length > 0 ? row.exchanges.join(", ") : "none: nothing was sent for it"}</dd>
      </dl>
    </section>
  );
}
