import { useMachine } from "@xstate/react";
import { useEffect, useEffectEvent, useState } from "react";
import type { AppCommand, AppInfo, FileKind, OpenedFile as ShellFile, ScenarioSummary } from "../../main/channels.ts";
import { importTrace } from "../../app/trace/importer.ts";
import { summarizeScenario } from "../../app/sim/scenarioSummary.ts";
import { ErrorBoundary } from "./components/ErrorBoundary.tsx";
import { RulesPanel } from "./components/RulesPanel.tsx";
import type { LibraryEntry } from "./model/library.ts";
import { mergeSettings } from "./model/readings.ts";
import { platform } from "./platform.ts";
import { loadOpened, rememberOpened, type OpenedFile } from "./recent.ts";
import { phaseOf, playbackMachine, type SessionFactory } from "./session/machine.ts";
import { createSimulationWorker, workerSessionPort } from "./session/port.ts";
import type { CompareBase } from "./model/compare.ts";
import { CompareView } from "./views/compare/CompareView.tsx";
import { Library } from "./views/library/Library.tsx";
import { exportFile } from "./views/run/ExportBar.tsx";
import { RunView } from "./views/run/RunView.tsx";

type View = "run" | "rules" | "compare";

const createSession: SessionFactory = (_start, description) =>
  workerSessionPort(createSimulationWorker, description !== undefined ? { description } : {});

/** Keys that belong to the focused control, not to the player. */
function ownsKey(target: EventTarget | null, key: string): boolean {
  if (!(target instanceof HTMLElement)) return false;
  const tag = target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable) return true;
  return key === " " && (tag === "BUTTON" || tag === "SUMMARY" || tag === "A");
}

/** The window: a title bar, the scenario library on the left, the run (or the rules) on the right. */
export function App() {
  const [info, setInfo] = useState<AppInfo | undefined>();
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  const [opened, setOpened] = useState<OpenedFile[]>(() => loadOpened());
  const [current, setCurrent] = useState<LibraryEntry | undefined>();
  const [view, setView] = useState<View>("run");
  const [ruleQuery, setRuleQuery] = useState("");
  const [results, setResults] = useState<Record<string, boolean>>({});
  const [settings, setSettings] = useState<[string, string][]>([]);
  const [error, setError] = useState<string | undefined>();
  const [compareBase, setCompareBase] = useState<CompareBase | undefined>();
  const [snapshot, send] = useMachine(playbackMachine, { input: { create: createSession } });
  const phase = phaseOf(snapshot);
  const { context } = snapshot;

  useEffect(() => {
    platform.info().then(setInfo, (e: unknown) => setError(String(e)));
    platform.listScenarios().then(setScenarios, (e: unknown) => setError(String(e)));
  }, []);

  // The last check result of each scenario run in this window: the runs before, and the one shown.
  const shownResults =
    context.result && context.source?.kind === "scenario" && current
      ? { ...results, [current.file]: context.result.passed }
      : results;

  const run = (entry: LibraryEntry, text: string, file: string) => {
    setResults(shownResults);
    setCurrent(entry);
    setSettings([]);
    setView("run");
    setError(undefined);
    send({
      type: "LOAD",
      start: { type: "start", text, file, mailscope: info?.version ?? __MAILSCOPE_VERSION__, recordBodies: true },
      description: entry.description,
    });
  };

  const select = (entry: LibraryEntry) => {
    const own = opened.find((f) => f.file === entry.file);
    if (own) return run(own, own.text, own.file);
    platform.readScenario(entry.file).then(
      (text) => run(entry, text, `scenarios/${entry.file}`),
      (e: unknown) => setError(String(e)),
    );
  };

  const openScenarioText = (name: string, text: string) => {
    const summary = summarizeScenario(name, text);
    const file: OpenedFile = { ...summary, name: summary.name === name ? name : summary.name, text };
    setOpened((list) => rememberOpened(list, file));
    run(file, text, name);
  };

  const openTraceText = (name: string, text: string) => {
    const parsed = importTrace(text);
    if (!parsed.ok) {
      setError(
        `${name} cannot be opened as a trace: ${parsed.violations.map((v) => `${v.path}: ${v.message}`).join("; ")}`,
      );
      return;
    }
    setError(undefined);
    setResults(shownResults);
    const source = parsed.value.scenario.source;
    const description = source !== undefined ? summarizeScenario(name, source).description : "";
    setCurrent({ file: name, name: parsed.value.scenario.name, description });
    setView("run");
    send({ type: "OPEN_TRACE", trace: parsed.value, description });
  };

  const openFile = async (file: File, as?: "scenario" | "trace") => {
    const text = await file.text();
    const kind = as ?? (/\.json$/i.test(file.name) ? "trace" : "scenario");
    if (kind === "trace") openTraceText(file.name, text);
    else openScenarioText(file.name, text);
  };

  const openShellFile = (file: ShellFile) => {
    if (file.kind === "trace") openTraceText(file.name, file.text);
    else openScenarioText(file.name, file.text);
  };

  const save = (name: string, contents: string, type: string) => {
    platform.saveFile(name, contents, type).catch((e: unknown) => setError(String(e)));
  };

  // The menus' commands (Electron), and the files given on the command line.
  const onCommand = useEffectEvent((command: AppCommand) => {
    switch (command.type) {
      case "toggle":
        return send({ type: "TOGGLE" });
      case "step":
        return send({ type: "STEP" });
      case "restart":
        return send({ type: "RESTART" });
      case "speed":
        return send({ type: "SET_SPEED", speed: command.speed });
      case "view":
        return setView(command.view);
      case "open":
        return openShellFile(command.file);
      case "export": {
        if (!context.result) return setError("Nothing to export yet: run a scenario to its end first.");
        const f = exportFile({ ...context.result.trace, events: [...context.events] }, command.what);
        return save(f.name, f.contents, f.type);
      }
      case "close":
        return window.close();
    }
  });
  const onPending = useEffectEvent((files: ShellFile[]) => files.forEach(openShellFile));
  useEffect(() => {
    platform.pendingFiles().then(onPending, (e: unknown) => setError(String(e)));
    return platform.onCommand(onCommand);
  }, []);

  /** In Electron the open buttons show main's dialog (typed IPC); in the browser the file input does. */
  const openWithShell = (e: React.MouseEvent, kind: FileKind) => {
    const dialog = platform.openDialog;
    if (!dialog) return;
    e.preventDefault();
    dialog(kind).then(
      (file) => file && openShellFile(file),
      (err: unknown) => setError(String(err)),
    );
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || ownsKey(e.target, e.key)) return;
      if (e.key === " ") {
        e.preventDefault();
        send({ type: "TOGGLE" });
      } else if (e.key === "ArrowRight") {
        e.preventDefault();
        send({ type: "STEP" });
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [send]);

  const openCompare = (playheadMs: number) => {
    const { summary, source } = context;
    if (!summary || source?.kind !== "scenario") return;
    send({ type: "PAUSE" });
    setCompareBase({
      name: summary.name,
      text: source.start.text,
      file: source.start.file ?? "scenario.yaml",
      seed: summary.seed,
      settings,
      readings: summary.readings,
      startMs: summary.startMs,
      playheadOffsetMs: Math.max(0, playheadMs - summary.startMs),
    });
    setView("compare");
  };

  const showRule = (rule: string) => {
    setRuleQuery(rule);
    setView("rules");
  };

  return (
    <div
      className="app"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        const file = e.dataTransfer.files[0];
        if (file) void openFile(file);
      }}
    >
      <header className="titlebar">
        <h1>Mailscope</h1>
        <span className="subtitle">Inter-Domain Mail Delivery Service simulator</span>
        <div className="open-buttons">
          <label className="button">
            Open scenario…
            <input
              type="file"
              className="visually-hidden"
              accept=".yaml,.yml"
              onClick={(e) => openWithShell(e, "scenario")}
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void openFile(f, "scenario");
                e.target.value = "";
              }}
            />
          </label>
          <label className="button">
            Open trace…
            <input
              type="file"
              className="visually-hidden"
              accept=".json"
              onClick={(e) => openWithShell(e, "trace")}
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void openFile(f, "trace");
                e.target.value = "";
              }}
            />
          </label>
        </div>
        <nav aria-label="Views">
          <button aria-pressed={view === "run"} onClick={() => setView("run")}>
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
        <Library
          scenarios={scenarios}
          opened={opened}
          selected={current?.file}
          results={shownResults}
          onSelect={select}
        />
      </aside>
      <main className="content">
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <ErrorBoundary resetKey={`${view} ${current?.file ?? ""} ${String(context.source?.kind)}`}>
          {view === "compare" && compareBase ? (
            <CompareView
              base={compareBase}
              mailscope={info?.version ?? __MAILSCOPE_VERSION__}
              createWorker={createSimulationWorker}
              onBack={() => setView("run")}
              onSave={save}
            />
          ) : view === "rules" ? (
            <RulesPanel
              key={ruleQuery}
              initialQuery={ruleQuery}
              events={context.events}
              startMs={context.summary?.startMs ?? context.events[0]?.timeMs ?? 0}
              {...(context.summary && { readings: context.summary.readings })}
            />
          ) : phase !== "idle" ? (
            <RunView
              phase={phase}
              context={context}
              title={context.summary?.name ?? current?.name ?? ""}
              description={context.summary?.description || current?.description || ""}
              send={send}
              onReading={(setting) => {
                const next = mergeSettings(settings, setting);
                setSettings(next);
                send({ type: "RESTART", readings: next });
              }}
              onRule={showRule}
              onSave={save}
              onCompare={openCompare}
            />
          ) : (
            <section aria-label="Welcome" className="welcome">
              <h2>Choose a scenario</h2>
              <p>
                Mailscope runs real senders and receivers of the protocol against a simulated DNS and network, on a
                virtual clock, and shows every retry, SMTP fallback and DSN.
              </p>
              <p className="muted">
                Pick one in the library, open a scenario file (YAML) or a trace, or drop one on the window. Space plays
                and pauses, → steps.
              </p>
            </section>
          )}
        </ErrorBoundary>
      </main>
    </div>
  );
}
