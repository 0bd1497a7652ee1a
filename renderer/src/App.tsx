import { useEffect, useState } from "react";
import type { AppInfo, ScenarioSummary } from "../../main/channels.ts";
import { ScenarioList } from "./components/ScenarioList.tsx";
import { RulesPanel } from "./components/RulesPanel.tsx";
import { platform } from "./platform.ts";

type View = "scenario" | "rules";

/** The window: a title bar, the scenario library on the left, the selected view on the right. */
export function App() {
  const [info, setInfo] = useState<AppInfo | undefined>();
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [view, setView] = useState<View>("scenario");
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    platform.info().then(setInfo, (e: unknown) => setError(String(e)));
    platform.listScenarios().then(setScenarios, (e: unknown) => setError(String(e)));
  }, []);

  const current = scenarios?.find((s) => s.file === selected);

  return (
    <div className="app">
      <header className="titlebar">
        <h1>Mailscope</h1>
        <span className="subtitle">Inter-Domain Mail Delivery Service simulator</span>
        <nav aria-label="Views">
          <button aria-pressed={view === "scenario"} onClick={() => setView("scenario")}>
            Scenario
          </button>
          <button aria-pressed={view === "rules"} onClick={() => setView("rules")}>
            Rules
          </button>
        </nav>
        <span className="shell" data-testid="shell">
          {info ? `${info.shell}${info.electron ? ` ${info.electron}` : ""} · v${info.version}` : "…"}
        </span>
      </header>
      <aside className="sidebar">
        <ScenarioList scenarios={scenarios} selected={selected} onSelect={setSelected} />
      </aside>
      <main className="content">
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {view === "rules" ? (
          <RulesPanel />
        ) : current ? (
          <section aria-label="Scenario">
            <h2>{current.name}</h2>
            <p>{current.description}</p>
            <p className="muted">Running scenarios arrives with the simulator.</p>
          </section>
        ) : (
          <section aria-label="Welcome" className="welcome">
            <h2>Choose a scenario</h2>
            <p>
              Mailscope runs real senders and receivers of the protocol against a simulated DNS and network, on a
              virtual clock, and charts every retry, SMTP fallback and DSN.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}
