import { useEffect, useState } from "react";
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { exploreOptions } from "../../../../app/explore/options.ts";
import { sizeWords } from "../../../../app/explore/report.ts";
import { parseUserProperties, type UserProperty } from "../../../../app/explore/userProperties.ts";
import { BUILT_IN_PROPERTIES } from "../../../../app/explore/judge.ts";
import { pushAll } from "../../../../app/protocol/lists.ts";
import { formatFileError } from "../../../../app/sim/yamlPosition.ts";
import {
  galleryList,
  galleryScenario,
  growthPoints,
  progressText,
  violationList,
  violationScenario,
  type ExploreGalleryEntry,
  type ExploreViolation,
} from "../../model/explore.ts";
import { useWidth } from "../../hooks/useWidth.ts";
import type { ExploreConfig } from "../../../../app/explore/search.ts";
import { useExplore } from "./useExplore.ts";
import "./explore.css";
import { Table } from "../../components/Table.tsx";

export interface ExploreViewProps {
  /** The Mailscope version, for the runs' traces. */
  readonly mailscope: string;
  /** Opens a scenario's text in the run view. */
  readonly onOpenRun: (name: string, text: string) => void;
  /** Opens a scenario's text in the editor. */
  readonly onOpenEditor: (name: string, text: string) => void;
}

const CORES = typeof navigator !== "undefined" ? Math.max(1, navigator.hardwareConcurrency || 1) : 1;

/**
 * The Explore view: explore generated worlds in Web Workers,
 * watch the coverage grow, open each violation's shrunk scenario and each
 * path's smallest world in the run view or the editor.
 */
export function ExploreView({ mailscope, onOpenRun, onOpenEditor }: ExploreViewProps) {
  const control = useExplore();
  const { state, config } = control;
  const [seed, setSeed] = useState("1");
  const [runs, setRuns] = useState("200");
  const [workers, setWorkers] = useState(String(Math.min(2, CORES)));
  const [small, setSmall] = useState(true);
  const [propertiesText, setPropertiesText] = useState("");
  const [problems, setProblems] = useState<string[]>([]);
  const [now, setNow] = useState(0);
  const running = state?.phase === "running" || state?.phase === "stopping";

  // The rate is runs over time: the clock moves twice a second while runs go on.
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 500);
    return () => clearInterval(timer);
  }, [running]);

  const start = (e: React.FormEvent) => {
    e.preventDefault();
    const found: string[] = [];
    const runCount = Number(runs);
    if (!/^\d+$/.test(runs.trim()) || runCount < 1 || runCount > 1_000_000)
      found.push("Runs: a whole number from 1 to 1,000,000.");
    const workerCount = Number(workers);
    if (!/^\d+$/.test(workers.trim()) || workerCount < 1 || workerCount > 32)
      found.push("Workers: a whole number from 1 to 32.");
    if (seed.trim() === "") found.push("Seed: a number or a word.");
    let properties: readonly UserProperty[] = [];
    if (propertiesText.trim() !== "") {
      const parsed = parseUserProperties(
        propertiesText,
        "properties.yaml",
        BUILT_IN_PROPERTIES.map((p) => p.id),
      );
      if (parsed.ok) properties = parsed.properties;
      else pushAll(found, parsed.errors.map(formatFileError));
    }
    setProblems(found);
    if (found.length > 0) return;
    setNow(performance.now());
    const text = seed.trim();
    control.start(
      {
        seed: /^\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text,
        runs: runCount,
        options: exploreOptions(small ? { domains: { max: 2 }, messages: { max: 3 } } : {}),
        properties,
        corpus: [],
        mailscope,
      },
      workerCount,
    );
  };

  const elapsed = state === undefined ? 0 : Math.max(0, (control.endedAt ?? now) - control.startedAt);
  const violations = state === undefined ? [] : violationList(state);
  const gallery = state === undefined ? [] : galleryList(state);
  const points = state === undefined ? [] : growthPoints(state.growth);
  const report = state?.report;

  return (
    <section aria-labelledby="explore-heading" className="explore">
      <div className="run-head">
        <h2 id="explore-heading">Explore</h2>
        <p className="description">
          Draw worlds and faults from one seed, hold every run to the invariants and the spec&apos;s whole-run
          guarantees, and shrink each violation to a small scenario — what <code>mailscope explore</code> does, in the
          app&apos;s workers.
        </p>
      </div>
      <form className="panel explore-form" onSubmit={start} aria-label="Exploration">
        <label>
          Seed
          <input value={seed} onChange={(e) => setSeed(e.target.value)} disabled={running} size={10} />
        </label>
        <label>
          Runs
          <input
            value={runs}
            onChange={(e) => setRuns(e.target.value)}
            disabled={running}
            inputMode="numeric"
            size={7}
          />
        </label>
        <label>
          Workers
          <input
            value={workers}
            onChange={(e) => setWorkers(e.target.value)}
            disabled={running}
            inputMode="numeric"
            size={3}
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={small} onChange={(e) => setSmall(e.target.checked)} disabled={running} />
          Small worlds (at most 2 domains, 3 messages)
        </label>
        <details className="explore-properties">
          <summary>Your properties (YAML)</summary>
          <textarea
            aria-label="Your properties (YAML)"
            value={propertiesText}
            onChange={(e) => setPropertiesText(e.target.value)}
            disabled={running}
            rows={6}
            spellCheck={false}
            placeholder={
              "properties:\n  - id: no-smtp-after-429\n    never: smtp.handoff\n    after: { event: attempt.ended, status: 429 }\n    same: actor"
            }
          />
        </details>
        <div className="explore-buttons">
          <button type="submit" className="primary" disabled={running}>
            Start
          </button>
          <button type="button" onClick={control.stop} disabled={state?.phase !== "running"}>
            Stop
          </button>
        </div>
        {problems.length > 0 && (
          <div role="alert" className="error explore-problems">
            <ul>
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </div>
        )}
      </form>

      {state !== undefined && (
        <>
          <section className="panel" aria-labelledby="explore-progress-heading">
            <h3 id="explore-progress-heading">
              Progress{" "}
              <span className="muted" data-testid="explore-phase">
                {state.phase === "running"
                  ? "running"
                  : state.phase === "stopping"
                    ? "stopping after the runs under way"
                    : state.phase === "failed"
                      ? "failed"
                      : "done"}
              </span>
            </h3>
            <progress value={state.runs} max={Math.max(1, state.total)} aria-label="Runs done" />
            <p role="status" data-testid="explore-progress">
              {progressText(state, elapsed)}
            </p>
            {state.error !== undefined && (
              <p role="alert" className="error">
                {state.error}
              </p>
            )}
            {report !== undefined && (
              <p data-testid="explore-coverage">
                Delivery machine: {report.coverage.transitions.covered} of {report.coverage.transitions.total}{" "}
                transitions · rules: {report.coverage.rules.covered} of {report.coverage.rules.total} (
                {report.coverage.rules.percent} %) · gaps: {report.coverage.gaps.join(", ") || "none"}
              </p>
            )}
            <GrowthChart points={points} />
          </section>

          <Violations violations={violations} running={running} onOpenRun={onOpenRun} onOpenEditor={onOpenEditor} />
          <Gallery gallery={gallery} config={config} onOpenRun={onOpenRun} onOpenEditor={onOpenEditor} />
        </>
      )}
    </section>
  );
}

/** Behaviours seen against runs: the coverage's growth (at most 200 points, so Recharts draws little). */
function GrowthChart({ points }: { readonly points: readonly { runs: number; keys: number }[] }) {
  const [ref, width] = useWidth(640);
  return (
    <div ref={ref} className="explore-chart">
      <figure aria-label="Coverage growth: behaviours seen against runs" data-points={points.length}>
        <LineChart width={width} height={200} data={[...points]} margin={{ top: 8, right: 24, bottom: 8, left: 8 }}>
          <CartesianGrid stroke="var(--line)" strokeDasharray="2 4" />
          <XAxis
            dataKey="runs"
            type="number"
            domain={[0, "dataMax"]}
            allowDecimals={false}
            label={{ value: "runs", position: "insideBottomRight", offset: -4 }}
          />
          {/* Centred on the axis: Recharts starts an insideLeft label at the middle, and turned it ran off the top. */}
          <YAxis
            allowDecimals={false}
            width={56}
            label={{ value: "behaviours", angle: -90, position: "insideLeft", style: { textAnchor: "middle" } }}
          />
          <Line
            dataKey="keys"
            name="behaviours"
            stroke="var(--accent)"
            strokeWidth={2}
            dot={false}
            isAnimationActive={false}
          />
          <Tooltip
            formatter={(value) => [`${String(value)} behaviours`, ""]}
            labelFormatter={(label) => `after ${String(label)} runs`}
            contentStyle={{ background: "var(--surface)", borderColor: "var(--line)", color: "var(--fg)" }}
          />
        </LineChart>
      </figure>
    </div>
  );
}

type OpenScenario = (name: string, text: string) => void;

/** Each property violated: how often, first where, and its shrunk scenario to open or edit. */
function Violations({
  violations,
  running,
  onOpenRun,
  onOpenEditor,
}: {
  readonly violations: readonly ExploreViolation[];
  readonly running: boolean;
  readonly onOpenRun: OpenScenario;
  readonly onOpenEditor: OpenScenario;
}) {
  return (
    <section className="panel" aria-labelledby="explore-violations-heading">
      <h3 id="explore-violations-heading">Violations</h3>
      {violations.length === 0 ? (
        <p className="muted">{running ? "None so far." : "None: every property held on every run."}</p>
      ) : (
        <ul className="explore-violations">
          {violations.map((v) => (
            <li key={v.property} data-property={v.property}>
              <p>
                <strong>{v.property}</strong>{" "}
                <span className="muted">
                  {v.count} {v.count === 1 ? "run" : "runs"}; first run {v.index}, seed <code>{v.seed}</code>
                </span>
              </p>
              {v.yaml === "" ? (
                <p className="muted">Shrinking…</p>
              ) : (
                <>
                  <p>
                    Shrunk in {v.shrinkRuns} runs to {sizeWords(v.size)}: {v.detail}
                  </p>
                  <div className="explore-buttons">
                    <button
                      type="button"
                      onClick={() => onOpenRun(violationScenario(v).name, violationScenario(v).text)}
                    >
                      Open shrunk scenario
                    </button>
                    <button
                      type="button"
                      onClick={() => onOpenEditor(violationScenario(v).name, violationScenario(v).text)}
                    >
                      Edit shrunk scenario
                    </button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** For each distinct path through the delivery machine, the smallest world found that takes it. */
function Gallery({
  gallery,
  config,
  onOpenRun,
  onOpenEditor,
}: {
  readonly gallery: readonly ExploreGalleryEntry[];
  readonly config: ExploreConfig | undefined;
  readonly onOpenRun: OpenScenario;
  readonly onOpenEditor: OpenScenario;
}) {
  return (
    <section className="panel" aria-labelledby="explore-gallery-heading">
      <h3 id="explore-gallery-heading">Behaviour gallery</h3>
      <p className="muted">
        For each distinct path through the delivery machine, the smallest world found that takes it ({gallery.length}{" "}
        {gallery.length === 1 ? "path" : "paths"}).
      </p>
      {gallery.length > 0 && config !== undefined && (
        <div className="explore-gallery">
          <Table columns={["Path through the delivery machine", "World", "Run", { hidden: "Open" }]}>
            {gallery.map((g, i) => {
              const open = (to: OpenScenario) => () => {
                const scenario = galleryScenario(g, config.options, String(config.seed));
                if (scenario !== undefined) to(scenario.name, scenario.text);
              };
              return (
                <tr key={g.path} data-seed={g.seed}>
                  <td className="explore-path">{g.path}</td>
                  <td>{sizeWords(g.size)}</td>
                  <td>
                    {g.index} (<code>{g.seed}</code>)
                  </td>
                  <td>
                    <div className="explore-buttons explore-row-buttons">
                      <button
                        type="button"
                        onClick={open(onOpenRun)}
                        aria-label={`Open world ${i + 1} in the run view`}
                      >
                        Open
                      </button>
                      <button type="button" onClick={open(onOpenEditor)} aria-label={`Edit world ${i + 1}`}>
                        Edit
                      </button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </Table>
        </div>
      )}
    </section>
  );
}
