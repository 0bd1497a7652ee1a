import { useMachine } from "@xstate/react";
import { lazy, Suspense, useCallback, useState, type MouseEvent } from "react";
import type { AppInfo, FileKind, ScenarioSummary } from "../../main/channels.ts";
import { acceptedSuffixes } from "../../app/trace/fileNames.ts";
import { ErrorBoundary } from "./components/ErrorBoundary.tsx";
import { RulesPanel } from "./components/RulesPanel.tsx";
import { lessonPlace, type LibraryEntry } from "./model/library.ts";
import { mergeSettings } from "./model/readings.ts";
import { baseOfRun } from "./model/runStart.ts";
import type { CompareBase, CompareSide } from "./model/compare.ts";
import type { PointRunStart } from "./model/sweep.ts";
import { COMMANDS, type CommandContext } from "./commands/commands.ts";
import { useAppCommands } from "./hooks/useAppCommands.ts";
import { useEditorActions } from "./hooks/useEditorActions.ts";
import { useOpening } from "./hooks/useOpening.ts";
import { useShell } from "./hooks/useShell.ts";
import { platform } from "./platform.ts";
import { phaseOf, playbackMachine, type SessionFactory } from "./session/machine.ts";
import { createSimulationWorker, workerSessionPort } from "./session/port.ts";
import { workspaceMachine, type View } from "./session/workspace.ts";
import { rerunBundle } from "./session/rerun.ts";
import { BundlePanel } from "./views/run/BundlePanel.tsx";
import { EditorStart } from "./views/editor/EditorStart.tsx";
import { useScenarioEditor, type ScenarioEditorState } from "./views/editor/useScenarioEditor.tsx";
import { CompareView } from "./views/compare/CompareView.tsx";
// Imported with the page, not in a chunk of its own: a chunk shared with the editor's would build zod schemas
// before noEval.ts makes zod jitless, and the page's CSP refuses the eval zod then probes.
import { ExploreView } from "./views/explore/ExploreView.tsx";
import { Library } from "./views/library/Library.tsx";
import { Welcome } from "./views/library/Welcome.tsx";
import { useRunExports } from "./views/run/useRunExports.ts";
import { RunView } from "./views/run/RunView.tsx";
import { ProbeView } from "./views/probe/ProbeView.tsx";

// The Sweep view (its charts and the sweep's planning) loads on first use, in a chunk of its own.
const SweepView = lazy(() => import("./views/sweep/SweepView.tsx").then((m) => ({ default: m.SweepView })));

// The editor (CodeMirror and the scenario parser) loads on first use, in a chunk of its own.
const ScenarioEditor = lazy(() =>
  import("./views/editor/ScenarioEditor.tsx").then((m) => ({ default: m.ScenarioEditor })),
);

const createSession: SessionFactory = (_start, description) =>
  workerSessionPort(createSimulationWorker, description !== undefined ? { description } : {});

/**
 * The window: a title bar, the scenario library on the left, the run (or the rules, the editor, Compare,
 * Sweep, Explore, a probe's report) on the right. What it shows is the workspace machine's, the run the
 * playback machine's (docs/decisions/0140); opening files, the editor's ways in, the commands and the
 * exports are hooks of their own.
 */
export function App() {
  const [ruleQuery, setRuleQuery] = useState("");
  const [snapshot, send] = useMachine(playbackMachine, { input: { create: createSession } });
  // What the window shows (the document open, the view, Compare's and Sweep's runs, the error): session/workspace.ts.
  const [workspace, tell] = useMachine(workspaceMachine);
  const { view, error, bundle, probe, compare, sweep: sweepBase, exploring } = workspace.context;
  const setView = useCallback((next: View) => tell({ type: "SHOW", view: next }), [tell]);
  const setError = useCallback((message: string) => tell({ type: "FAIL", message }), [tell]);
  const { info, scenarios, opened, setOpened } = useShell(setError);
  const mailscope = info?.version ?? __MAILSCOPE_VERSION__;
  const phase = phaseOf(snapshot);
  const { context } = snapshot;
  const editor = useScenarioEditor(info?.shell, setError);
  const opening = useOpening({ context, send, tell, mailscope, opened, setOpened, setError });
  const { current, settings } = opening;
  const editing = useEditorActions({ editor, opened, showView: setView, setError, run: opening.run });
  const exports = useRunExports(context.source, bundle?.bundle, setError);
  const save = (name: string, contents: string, type: string) => {
    platform.saveFile(name, contents, type).catch((e: unknown) => setError(String(e)));
  };

  // What the commands act on (commands/commands.ts): the player, and this window.
  const commandContext: CommandContext = {
    playback: context,
    send,
    showView: setView,
    scenario: editing.scenarioCommand,
    open: opening.openShellFile,
    exportRun: (what) => {
      if (context.result) exports.onExport({ ...context.result.trace, events: [...context.events] }, what);
    },
    refuse: setError,
    close: () => window.close(),
  };
  useAppCommands(commandContext, (files) => files.forEach(opening.openShellFile), setError);

  /** Compare, or Sweep, of the run on screen (paused). */
  const openOfRun = (type: "COMPARE" | "SWEEP", playheadMs: number) => {
    const base = baseOfRun(context, settings, playheadMs);
    if (!base) return;
    send({ type: "PAUSE" });
    tell({ type, base });
  };

  // The run's place in the "Start here" path: the next and previous lessons open from the run view.
  const place = current && scenarios ? lessonPlace(scenarios, current) : undefined;
  // Opened from the lesson path (the welcome pane, a lesson's next or previous), a lesson is played as one: its
  // notes are breakpoints (the machine's `notePauses`). Picked in the library, it plays through (its notes still
  // shown; the box turns pausing on).
  const openLesson = (entry: LibraryEntry) => opening.select(entry, true);
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
        if (file) opening.dropFile(file);
      }}
    >
      <TitleBar
        info={info}
        view={view}
        probe={probe !== undefined}
        commands={commandContext}
        onOpen={(file, kind) => void opening.openFile(file, kind)}
        onOpenWithShell={opening.openWithShell}
      />
      <aside className="sidebar">
        <Library
          scenarios={scenarios}
          opened={opened}
          selected={current?.file}
          results={opening.shownResults}
          onSelect={(entry) => opening.select(entry)}
          onNew={editing.editNew}
          onDuplicate={editing.editCopy}
          onEdit={editing.editOpened}
        />
      </aside>
      <main className="content">
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {/* The editor stays while other views show, with its text and its undo history. */}
        <div hidden={view !== "editor"}>
          <EditorPane editor={editor} scenarios={scenarios} editing={editing} />
        </div>
        {editor.dialogs}
        {/* Explore, once opened, and Sweep stay mounted (hidden) while other views show, with their results. */}
        <KeptViews
          view={view}
          exploring={exploring}
          sweepBase={sweepBase}
          mailscope={mailscope}
          onOpenRun={(name, text) => opening.openScenarioText(name, text)}
          onOpenEditor={editing.editText}
          onBack={() => setView("run")}
          onOpenPoint={opening.openPoint}
          onBoundary={(sides) => tell({ type: "BOUNDARY", sides })}
        />
        <ErrorBoundary resetKey={`${view} ${current?.file ?? ""} ${String(context.source?.kind)}`}>
          {view === "editor" || view === "explore" || view === "sweep" ? null : view === "probe" && probe ? (
            <ProbeView key={probe.file} events={probe.trace.events} file={probe.file} onRule={showRule} onSave={save} />
          ) : view === "compare" && compare ? (
            <CompareView
              key={compare.preset ? `${compare.preset[0].title} / ${compare.preset[1].title}` : "run"}
              base={compare.base}
              mailscope={mailscope}
              createWorker={createSimulationWorker}
              onBack={() => tell({ type: "BACK" })}
              onSave={save}
              {...(compare.preset && { preset: compare.preset })}
              breakpoints={context.breakpoints}
              onBreakpoints={(breakpoints) => send({ type: "SET_BREAKPOINTS", breakpoints })}
              messages={context.summary?.messages ?? []}
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
            <>
              {bundle && context.source?.kind === "trace" && (
                <BundlePanel
                  key={`${bundle.file} ${bundle.bundle.traceHash}`}
                  bundle={bundle.bundle}
                  file={bundle.file}
                  rerun={(b) => rerunBundle(b, mailscope, (start) => createSession(start, undefined))}
                />
              )}
              <RunView
                phase={phase}
                context={context}
                // A sweep's point is titled by its values; its trace has the scenario's own name.
                title={
                  opening.isSweepPoint && opening.sweepPoint
                    ? opening.sweepPoint.name
                    : (current?.title ?? context.summary?.name ?? current?.name ?? "")
                }
                name={context.summary?.name ?? current?.name}
                lesson={place && { ...place, onOpen: openLesson }}
                description={context.summary?.description || current?.description || ""}
                send={send}
                commands={commandContext}
                onReading={(setting) => {
                  const next = mergeSettings(settings, setting);
                  opening.setSettings(next);
                  send({ type: "RESTART", readings: next });
                }}
                onRule={showRule}
                onSave={save}
                exports={exports}
                onCompare={(playheadMs) => openOfRun("COMPARE", playheadMs)}
                onSweep={() => openOfRun("SWEEP", context.summary?.startMs ?? 0)}
                {...(sweepBase && opening.isSweepPoint && { onBackToSweep: () => setView("sweep") })}
              />
            </>
          ) : (
            <Welcome scenarios={scenarios} onOpen={openLesson} />
          )}
        </ErrorBoundary>
      </main>
    </div>
  );
}

/** An open button: the shell's dialog where there is one, else the file input it wraps. */
function OpenButton({
  kind,
  title,
  onOpen,
  onOpenWithShell,
  children,
}: {
  readonly kind: FileKind;
  readonly title?: string;
  readonly onOpen: (file: File, kind: FileKind) => void;
  readonly onOpenWithShell: (e: MouseEvent, kind: FileKind) => void;
  readonly children: string;
}) {
  return (
    <label className="button" {...(title !== undefined && { title })}>
      {children}
      <input
        type="file"
        className="visually-hidden"
        accept={acceptedSuffixes(kind).join(",")}
        onClick={(e) => onOpenWithShell(e, kind)}
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) onOpen(f, kind);
          e.target.value = "";
        }}
      />
    </label>
  );
}

/** The title bar: the app's name, the open buttons, the views (the commands' buttons) and the shell. */
function TitleBar({
  info,
  view,
  probe,
  commands,
  onOpen,
  onOpenWithShell,
}: {
  readonly info: AppInfo | undefined;
  readonly view: View;
  /** A probe's report is open: its view has a button. */
  readonly probe: boolean;
  readonly commands: CommandContext;
  readonly onOpen: (file: File, kind: FileKind) => void;
  readonly onOpenWithShell: (e: MouseEvent, kind: FileKind) => void;
}) {
  const viewButton = (v: View, label: string) => (
    <button aria-pressed={view === v} onClick={() => COMMANDS.view.perform(commands, v)}>
      {label}
    </button>
  );
  return (
    <header className="titlebar">
      <h1>Mailscope</h1>
      <span className="subtitle">Inter-Domain Mail Delivery Service simulator</span>
      <div className="open-buttons">
        <OpenButton kind="scenario" onOpen={onOpen} onOpenWithShell={onOpenWithShell}>
          Open scenario…
        </OpenButton>
        <OpenButton
          kind="trace"
          title="A trace (.mstrace) or a bug bundle (.msbundle); .json traces open too"
          onOpen={onOpen}
          onOpenWithShell={onOpenWithShell}
        >
          Open trace…
        </OpenButton>
      </div>
      <nav aria-label="Views">
        {viewButton("run", "Scenario")}
        {viewButton("rules", "Rules")}
        {viewButton("editor", "Editor")}
        {viewButton("explore", "Explore")}
        {probe && (
          <button aria-pressed={view === "probe"} onClick={() => commands.showView("probe")}>
            Probe
          </button>
        )}
      </nav>
      <span className="shell" data-testid="shell">
        {info ? `${info.shell}${info.electron ? ` ${info.electron}` : ""} · v${info.version}` : "…"}
      </span>
    </header>
  );
}

/**
 * The views that stay mounted while others show: Explore once opened (an exploration goes on while a run
 * shows), the Sweep view with its results (a point's run, a boundary's Compare, and back).
 */
function KeptViews(p: {
  readonly view: View;
  readonly exploring: boolean;
  readonly sweepBase: CompareBase | undefined;
  readonly mailscope: string;
  readonly onOpenRun: (name: string, text: string) => void;
  readonly onOpenEditor: (name: string, text: string) => void;
  readonly onBack: () => void;
  readonly onOpenPoint: (start: PointRunStart) => void;
  readonly onBoundary: (sides: readonly [CompareSide, CompareSide]) => void;
}) {
  const { view, sweepBase } = p;
  return (
    <>
      {p.exploring && (
        <div hidden={view !== "explore"}>
          <ErrorBoundary resetKey="explore">
            <ExploreView mailscope={p.mailscope} onOpenRun={p.onOpenRun} onOpenEditor={p.onOpenEditor} />
          </ErrorBoundary>
        </div>
      )}
      {sweepBase && (
        <div hidden={view !== "sweep"}>
          <ErrorBoundary resetKey={sweepBase.text}>
            <Suspense fallback={<p className="muted">Loading the sweep…</p>}>
              <SweepView
                key={`${sweepBase.file} ${sweepBase.text.length} ${JSON.stringify(sweepBase.settings)}`}
                base={sweepBase}
                mailscope={p.mailscope}
                createWorker={createSimulationWorker}
                onBack={p.onBack}
                onOpenRun={p.onOpenPoint}
                onCompare={p.onBoundary}
              />
            </Suspense>
          </ErrorBoundary>
        </div>
      )}
    </>
  );
}

/** The scenario editor with its document, or, with none, the ways to start one. */
function EditorPane({
  editor,
  scenarios,
  editing,
}: {
  readonly editor: ScenarioEditorState;
  readonly scenarios: readonly ScenarioSummary[] | undefined;
  readonly editing: ReturnType<typeof useEditorActions>;
}) {
  return (
    <ErrorBoundary resetKey={String(editor.current?.id)}>
      {editor.current ? (
        <Suspense fallback={<p className="muted">Loading the editor…</p>}>
          <ScenarioEditor
            key={editor.current.id}
            doc={editor.current.doc}
            dirty={editor.dirty}
            onText={editor.onText}
            onSave={editor.save}
            onRun={editing.runEdited}
            onClose={editor.close}
          />
        </Suspense>
      ) : (
        <EditorStart scenarios={scenarios} onNew={editing.editNew} onDuplicate={editing.editCopy} />
      )}
    </ErrorBoundary>
  );
}
