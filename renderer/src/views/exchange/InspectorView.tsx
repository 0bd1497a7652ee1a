import { useEffect, useMemo, useState } from "react";
import type { LintLine } from "../../../../app/receiver/lintChecks.ts";
import type { ReceiverOfRun } from "../../../../app/sim/sessionProtocol.ts";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { curlOf, exchangeChecks, exchangeView, rawHttpOf, type ExchangeView } from "../../model/inspector.ts";
import "./inspector.css";
import { Table } from "../../components/Table.tsx";

export interface InspectorViewProps {
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  /** The exchanges of the selected mark (`x3`); the last is shown first. */
  readonly exchangeIds: readonly string[];
  /** The run's receivers (the session's summary), whose configurations the checks read. */
  readonly receivers: readonly ReceiverOfRun[];
  readonly onRule: (rule: string) => void;
  /** Key records the trace holds besides its DNS answers (a probe's own), by keyid. */
  readonly keyRecords?: Readonly<Record<string, string>>;
}

async function copy(text: string, setNote: (note: string) => void, what: string) {
  try {
    await navigator.clipboard.writeText(text);
    setNote(`${what} copied`);
  } catch {
    setNote(`${what}: the clipboard is not available here`);
  }
}

/** One HTTP exchange: request, signature, digest, envelope, response, the receiver's checks; copies. */
export function InspectorView({ events, startMs, exchangeIds, receivers, onRule, keyRecords }: InspectorViewProps) {
  const [chosen, setChosen] = useState<string | undefined>();
  const exchangeId = chosen !== undefined && exchangeIds.includes(chosen) ? chosen : exchangeIds.at(-1);
  const x = useMemo(
    () => (exchangeId ? exchangeView(events, exchangeId, startMs) : undefined),
    [events, exchangeId, startMs],
  );
  const [checks, setChecks] = useState<{ id: string; lines: readonly LintLine[] | undefined; error?: string }>();
  const [note, setNote] = useState("");

  useEffect(() => {
    if (!exchangeId || !x || x.method !== "POST") return;
    let live = true;
    exchangeChecks(events, exchangeId, receivers, keyRecords).then(
      (lines) => live && setChecks({ id: exchangeId, lines }),
      (e: unknown) => live && setChecks({ id: exchangeId, lines: undefined, error: String(e) }),
    );
    return () => {
      live = false;
    };
  }, [events, exchangeId, x, receivers, keyRecords]);

  return (
    <section aria-labelledby="inspector-heading" className="panel inspector">
      <h3 id="inspector-heading">Exchange inspector</h3>
      {!x ? (
        <p className="muted">
          {exchangeIds.length === 0
            ? "Select an attempt on the timeline, or an arrow of the sequence diagram, to see its HTTP exchange."
            : "This exchange is not in the trace."}
        </p>
      ) : (
        <>
          {exchangeIds.length > 1 && (
            <div role="group" aria-label="Exchanges of the selected attempt" className="exchange-tabs">
              {exchangeIds.map((id) => (
                <button key={id} aria-pressed={id === exchangeId} onClick={() => setChosen(id)}>
                  {id}
                </button>
              ))}
            </div>
          )}
          <p className="exchange-title" data-testid="exchange-title">
            <strong>{x.exchangeId}</strong> at {x.at}: <code>{x.requestLine}</code> to {x.url}
          </p>
          <div className="copy-bar" role="group" aria-label="Copy">
            <button onClick={() => void copy(curlOf(x), setNote, "curl")}>Copy as curl</button>
            <button onClick={() => void copy(rawHttpOf(x), setNote, "Raw HTTP")}>Copy as raw HTTP</button>
            {x.problem && (
              <button onClick={() => void copy(x.problem ?? "", setNote, "Problem JSON")}>Copy problem JSON</button>
            )}
            <span role="status" className="muted">
              {note}
            </span>
          </div>
          <div className="inspector-grid">
            <RequestPart x={x} />
            <ResponsePart x={x} />
          </div>
          <InForce x={x} />
          {x.method === "POST" && (
            <section aria-labelledby="checks-heading-x">
              <h4 id="checks-heading-x">The receiver's checks, in order</h4>
              {checks === undefined || checks.id !== exchangeId ? (
                <p className="muted">Checking…</p>
              ) : checks.error ? (
                <p className="fail-text">{checks.error}</p>
              ) : !checks.lines ? (
                <p className="muted">Not checked: the run did not keep this request's body.</p>
              ) : (
                <ol className="lint-lines" data-testid="receiver-checks">
                  {checks.lines.map((c, i) => (
                    <li key={`${c.check}-${i}`} className={c.status} data-status={c.status}>
                      <span className={`lint-status ${c.status}`}>{c.status}</span> <strong>{c.check}</strong>{" "}
                      <button className="link" onClick={() => onRule(c.rule)}>
                        {c.rule}
                      </button>{" "}
                      <span className="muted">{c.detail}</span>
                    </li>
                  ))}
                </ol>
              )}
            </section>
          )}
        </>
      )}
    </section>
  );
}

/** The request: its head, signature input and base, digest, envelope and message. */
function RequestPart({ x }: { readonly x: ExchangeView }) {
  return (
    <section aria-label="Request">
      <h4>Request</h4>
      <pre tabIndex={0} className="http">
        {x.requestLine}
        {"\n"}
        {x.headers.map(([k, v]) => `${k}: ${v}`).join("\n")}
      </pre>
      {x.signatureInput.length > 0 && (
        <>
          <h4>Signature-Input</h4>
          <dl className="sig" data-testid="signature-input">
            {x.signatureInput.map((s) => (
              <div key={s.label}>
                <dt>label</dt>
                <dd>{s.label}</dd>
                <dt>components</dt>
                <dd>{s.components.join(" ")}</dd>
                <dt>created</dt>
                <dd>
                  {s.created ?? "—"}
                  {s.created !== undefined && ` (${new Date(s.created * 1000).toISOString()})`}
                </dd>
                <dt>keyid</dt>
                <dd>{s.keyid ?? "—"}</dd>
                <dt>alg</dt>
                <dd>{s.alg ?? "— (from the key)"}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      {x.signatureBase && (
        <>
          <h4>Signature base (rebuilt)</h4>
          <pre tabIndex={0} data-testid="signature-base">
            {x.signatureBase}
          </pre>
        </>
      )}
      {x.signatureInputError && <p className="fail-text">Signature-Input: {x.signatureInputError}</p>}
      {x.contentDigest && (
        <p>
          Content-Digest: <code>{x.contentDigest}</code>
        </p>
      )}
      {x.envelope && (
        <>
          <h4>Envelope</h4>
          <pre tabIndex={0} data-testid="envelope">
            {x.envelope}
          </pre>
        </>
      )}
      {x.message && (
        <section aria-label="Message" data-testid="message">
          <h4>Message</h4>
          <table className="message-headers">
            <caption className="visually-hidden">Message headers</caption>
            <tbody>
              {x.message.headers.map(([k, v], i) => (
                <tr key={`${k}-${i}`}>
                  <th scope="row">{k}</th>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <pre tabIndex={0} className="body" data-testid="message-preview" aria-label="Text preview">
            {x.message.preview}
            {x.message.moreLines > 0 ? `\n… ${x.message.moreLines} more lines` : ""}
          </pre>
          <details>
            <summary>The whole message as sent</summary>
            <pre tabIndex={0} className="body">
              {x.message.raw}
            </pre>
          </details>
        </section>
      )}
      {x.body === undefined && x.method === "POST" && (
        <p className="muted">The run did not keep bodies: no message to show, and the checks need the body.</p>
      )}
    </section>
  );
}

/** The response: its head, per-recipient results and problem document, or the failure. */
function ResponsePart({ x }: { readonly x: ExchangeView }) {
  return (
    <section aria-label="Response">
      <h4>Response</h4>
      {x.failure ? (
        <p className="fail-text" data-testid="exchange-failure">
          {x.failure.kind}: {x.failure.message}
          {x.failure.fault ? ` (fault ${x.failure.fault})` : ""}
        </p>
      ) : x.response ? (
        <>
          <pre tabIndex={0} className="http" data-testid="response-head">
            {`HTTP/1.1 ${x.response.status ?? ""}`}
            {x.response.fault ? ` (fault ${x.response.fault})` : ""}
            {"\n"}
            {x.response.headers.map(([k, v]) => `${k}: ${v}`).join("\n")}
          </pre>
          {x.results.length > 0 && (
            <Table
              className="results"
              caption="Per-recipient results"
              captionShown
              columns={["Recipient", "Status", "Detail"]}
            >
              {x.results.map((r) => (
                <tr key={r.recipient}>
                  <td>{r.recipient}</td>
                  <td>{r.status}</td>
                  <td>{r.detail}</td>
                </tr>
              ))}
            </Table>
          )}
          {x.problem && (
            <>
              <h4>Problem document</h4>
              <pre tabIndex={0} data-testid="problem">
                {x.problem}
              </pre>
            </>
          )}
          {!x.problem && x.results.length === 0 && x.response.body && (
            <pre tabIndex={0} className="body">
              {x.response.body.slice(0, 2000)}
            </pre>
          )}
        </>
      ) : (
        <p className="muted">No answer yet.</p>
      )}
    </section>
  );
}

/** What was in force when the request was sent: the DNS answers and capabilities held. */
function InForce({ x }: { readonly x: ExchangeView }) {
  return (
    <section aria-labelledby="in-force-heading" data-testid="in-force">
      <h4 id="in-force-heading">In force when it was sent</h4>
      {x.dns.length === 0 ? (
        <p className="muted">No DNS answer for this request's host in the trace.</p>
      ) : (
        <Table
          className="dns-in-force"
          caption="DNS answers in force"
          columns={["Name", "Type", "Answer", "TTL", "Answered"]}
        >
          {x.dns.map((a) => (
            <tr key={a.seq} data-name={a.name}>
              <td>{a.name}</td>
              <td>{a.type}</td>
              <td className="records">{a.kind === "answer" ? a.records.join("; ") : a.kind}</td>
              <td>{a.ttlS !== undefined ? `${a.ttlS} s` : "—"}</td>
              <td>{a.at}</td>
            </tr>
          ))}
        </Table>
      )}
      {x.capabilities ? (
        <>
          <p data-testid="capabilities-in-force">
            Capabilities of {x.capabilities.origin}: {x.capabilities.how} at {x.capabilities.at}
            {x.capabilities.ageS !== undefined ? `, ${x.capabilities.ageS} s old` : ""}
            {x.capabilities.maxAgeS !== undefined ? `, kept for ${x.capabilities.maxAgeS} s` : ""}
          </p>
          {x.capabilities.document && (
            <pre tabIndex={0} aria-label="Capabilities document">
              {x.capabilities.document}
            </pre>
          )}
        </>
      ) : (
        <p className="muted">No capabilities held for this origin yet.</p>
      )}
    </section>
  );
}
