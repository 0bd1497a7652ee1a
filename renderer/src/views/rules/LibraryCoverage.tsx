import { useEffect, useRef, useState } from "react";
import "./rules.css";
import type { WorkerReply } from "../../../../app/sim/worker.ts";
import { ruleCounts, ruleCoverage, type CoverageReport } from "../../../../app/trace/ruleEvidence.ts";
import { platform } from "../../platform.ts";
import { createSimulationWorker, type WorkerLike } from "../../session/port.ts";

export interface LibraryCoverageProps {
  /** Called with the coverage once every scenario has run. */
  readonly onCoverage: (coverage: CoverageReport) => void;
  readonly coverage: CoverageReport | undefined;
  readonly uncoveredOnly: boolean;
  readonly onUncoveredOnly: (on: boolean) => void;
}

/**
 * The catalogue's coverage across the scenario library, as `mailscope check
 * --coverage` computes it: every bundled scenario runs in a worker of its own
 * (one-shot runs, one after the other), and the rules its events cite are
 * counted.
 */
export function LibraryCoverage({ onCoverage, coverage, uncoveredOnly, onUncoveredOnly }: LibraryCoverageProps) {
  const [progress, setProgress] = useState<{ done: number; total: number } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const worker = useRef<WorkerLike | undefined>(undefined);
  useEffect(() => () => worker.current?.terminate(), []);

  const compute = async () => {
    setError(undefined);
    const scenarios = await platform.listScenarios();
    setProgress({ done: 0, total: scenarios.length });
    const w = createSimulationWorker();
    worker.current = w;
    const replies = new Map<number, (reply: WorkerReply) => void>();
    w.addEventListener("message", (event) => {
      const reply = event.data as WorkerReply;
      if (typeof reply.id === "number") replies.get(reply.id)?.(reply);
    });
    const runs: { name: string; counts: Record<string, number> }[] = [];
    try {
      for (const [i, s] of scenarios.entries()) {
        const text = await platform.readScenario(s.file);
        const reply = await new Promise<WorkerReply>((resolve) => {
          replies.set(i, resolve);
          w.postMessage({ type: "run", id: i, text, file: `scenarios/${s.file}`, wantTrace: true });
        });
        if (reply.type === "result" && reply.trace) runs.push({ name: s.name, counts: ruleCounts(reply.trace.events) });
        setProgress({ done: i + 1, total: scenarios.length });
      }
      onCoverage(ruleCoverage(runs));
    } catch (e) {
      setError(String(e));
    } finally {
      w.terminate();
      worker.current = undefined;
      setProgress(undefined);
    }
  };

  return (
    <section aria-labelledby="library-coverage-heading" className="library-coverage">
      <h3 id="library-coverage-heading">Coverage across the scenario library</h3>
      {coverage ? (
        <p data-testid="library-coverage">
          {coverage.covered} of {coverage.total} rules are cited by some scenario&apos;s events;{" "}
          {coverage.uncovered.length} by none.{" "}
          <label className="fired-filter">
            <input type="checkbox" checked={uncoveredOnly} onChange={(e) => onUncoveredOnly(e.target.checked)} />{" "}
            Exercised by no scenario
          </label>
        </p>
      ) : progress ? (
        <p role="status">
          Running the library: {progress.done} of {progress.total} scenarios…
        </p>
      ) : (
        <p>
          <button onClick={() => void compute()}>Run every scenario and count the rules they exercise</button>{" "}
          <span className="muted">(as mailscope check --coverage does)</span>
        </p>
      )}
      {error && <p className="error">{error}</p>}
    </section>
  );
}
