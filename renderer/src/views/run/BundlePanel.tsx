import { useState } from "react";
import { compareReplay, replaySummary, type Bundle, type ReplayComparison } from "../../../../app/trace/bundle.ts";
import type { Trace } from "../../../../app/trace/schema.ts";
import "./bundle.css";
import { errorMessage } from "../../../../app/errorMessage.ts";

export interface BundlePanelProps {
  readonly bundle: Bundle;
  /** The name of the opened file. */
  readonly file: string;
  /** Runs the bundled scenario in a worker session of its own; resolves to its trace. */
  readonly rerun: (bundle: Bundle) => Promise<Trace>;
}

type Verdict =
  | { readonly state: "idle" }
  | { readonly state: "running" }
  | { readonly state: "done"; readonly comparison: ReplayComparison }
  | { readonly state: "failed"; readonly message: string };

/**
 * An opened bug bundle: what it holds — scenario, seed, the
 * Mailscope that wrote it, the trace hash — shown above its run (drawn from
 * the bundled trace, not re-run), and "Re-run and compare": the scenario run
 * again with the same seed and readings, "reproduced" when the new trace
 * has the same hash, else the first event that differs.
 */
export function BundlePanel({ bundle, file, rerun }: BundlePanelProps) {
  const [verdict, setVerdict] = useState<Verdict>({ state: "idle" });
  const start = () => {
    setVerdict({ state: "running" });
    rerun(bundle)
      .then((trace) => compareReplay(bundle, trace))
      .then(
        (comparison) => setVerdict({ state: "done", comparison }),
        (e: unknown) => setVerdict({ state: "failed", message: errorMessage(e) }),
      );
  };
  const lines = verdict.state === "done" ? replaySummary(verdict.comparison) : [];
  return (
    <section aria-labelledby="bundle-heading" className="panel bundle-panel" data-testid="bundle-panel">
      <div className="panel-head">
        <h3 id="bundle-heading">Bug bundle</h3>
        <span className="muted">{file}</span>
        <button onClick={start} disabled={verdict.state === "running"}>
          Re-run and compare
        </button>
      </div>
      <dl className="bundle-facts">
        <dt>Scenario</dt>
        <dd>
          {bundle.scenario.name}
          {bundle.scenario.file !== undefined && <span className="muted"> ({bundle.scenario.file})</span>}
        </dd>
        <dt>Seed</dt>
        <dd>{String(bundle.seed)}</dd>
        <dt>Recorded by</dt>
        <dd>Mailscope {bundle.mailscope}</dd>
        <dt>Checks</dt>
        <dd>{bundle.passed === undefined ? "not recorded" : bundle.passed ? "all passed" : "some failed"}</dd>
        <dt>Trace hash</dt>
        <dd>
          <code title={bundle.traceHash}>{bundle.traceHash.slice(0, 16)}…</code>
        </dd>
      </dl>
      <p className="muted">
        The run below is the bundled trace, as recorded; nothing was re-run. Re-run and compare runs the scenario again
        with the same seed and readings and compares the traces.
      </p>
      <div
        role="status"
        data-testid="replay-verdict"
        data-reproduced={verdict.state === "done" ? String(verdict.comparison.reproduced) : undefined}
      >
        {verdict.state === "running" && <p>Re-running the bundled scenario…</p>}
        {verdict.state === "failed" && <p className="error">Could not re-run: {verdict.message}</p>}
        {verdict.state === "done" &&
          (verdict.comparison.reproduced ? (
            <p className="bundle-reproduced">
              <strong>Reproduced</strong>: the re-run's trace hash is the bundle's (
              <code>{verdict.comparison.hash.slice(0, 16)}…</code>).
            </p>
          ) : (
            <div className="bundle-differs">
              <p>
                <strong>Not reproduced</strong>: {lines[0]?.replace(/^not reproduced: /, "")}
              </p>
              <pre>{lines.slice(1).join("\n")}</pre>
            </div>
          ))}
      </div>
    </section>
  );
}
