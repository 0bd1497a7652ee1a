import { useMachine } from "@xstate/react";
import { lazy, Suspense, useCallback, useEffect, useEffectEvent, useMemo, useState } from "react";
import type { AppCommand, AppInfo, FileKind, OpenedFile as ShellFile, ScenarioSummary } from "../../main/channels.ts";
import { bundleEmls, isBundleValue, readBundleValue, type Bundle } from "../../app/trace/bundle.ts";
import { importTrace, importTraceValue } from "../../app/trace/importer.ts";
import { acceptedSuffixes, kindOfFileName } from "../../app/trace/fileNames.ts";
import type { Trace } from "../../app/trace/schema.ts";
import { summarizeScenario } from "../../app/sim/scenarioSummary.ts";
import { ErrorBoundary } from "./components/ErrorBoundary.tsx";
import { RulesPanel } from "./components/RulesPanel.tsx";
import { duplicateDoc, fileDoc, newDoc, type EmlFiles } from "./model/editorDoc.ts";
import { lessonPlace, type LibraryEntry } from "./model/library.ts";
import { mergeSettings } from "./model/readings.ts";
import { COMMANDS, commandOfKey, performMenuCommand, type CommandContext } from "./commands/commands.ts";
import { platform } from "./platform.ts";
import { entryOf, type OpenedEntry } from "./recent.ts";
import { phaseOf, playbackMachine, type SessionFactory } from "./session/machine.ts";
import { createSimulationWorker, workerSessionPort } from "./session/port.ts";
import { workspaceMachine, type View } from "./session/workspace.ts";
import { rerunBundle } from "./session/rerun.ts";
import { BundlePanel } from "./views/run/BundlePanel.tsx";
import { EditorStart } from "./views/editor/EditorStart.tsx";
import { useScenarioEditor } from "./views/editor/useScenarioEditor.tsx";
import type { CompareBase, CompareSide } from "./model/compare.ts";
import type { PointRunStart } from "./model/sweep.ts";
import { CompareView } from "./views/compare/CompareView.tsx";
// Imported with the page, not in a chunk of its own: a chunk shared with the editor's would build zod schemas
// before noEval.ts makes zod jitless, and the page's CSP refuses the eval zod then probes.
import { ExploreView } from "./views/explore/ExploreView.tsx";
import { Library } from "./views/library/Library.tsx";
import { Welcome } from "./views/library/Welcome.tsx";
import { exportFile, exportNote, type ExportWhat, type RunExports } from "./views/run/ExportBar.tsx";
import { RunView } from "./views/run/RunView.tsx";
import { isProbeReport } from "../../app/probe/report.ts";
import { isProbeTrace } from "./model/probe.ts";
import { ProbeView } from "./views/probe/ProbeView.tsx";
import { errorMessage } from "../../app/errorMessage.ts";

// The Sweep view (its charts and the sweep's planning) loads on first use, in a chunk of its own.
const SweepView = lazy(() => import("./views/sweep/SweepView.tsx").then((m) => ({ default: m.SweepView })));

// The editor (CodeMirror and the scenario parser) loads on first use, in a chunk of its own.
const ScenarioEditor = lazy(() =>
  import("./views/editor/ScenarioEditor.tsx").then((m) => ({ default: m.ScenarioEditor })),
);

const createSession: SessionFactory = (_start, description) =>
  workerSessionPort(createSimulationWorker, description !== undefined ? { description } : {});

/** Keys that belong to the focused control, not to the player. */
function ownsKey(target: EventTarget | null, key: string): boolean {
  if (!(target instanceof HTMLElement)) return false;
  const tag = target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable) return true;
  return key === " " && (tag === "BUTTON" || tag === "SUMMARY" || tag === "A");
}

/** The eml: files main read with a scenario it opened (Electron); undefined when there are none. */
function emlFilesOf(file: ShellFile): EmlFiles | undefined {
  if (file.emls === undefined && file.emlErrors === undefined) return undefined;
  return {
    ...(file.emls !== undefined && { emls: file.emls }),
    ...(file.emlErrors !== undefined && { emlErrors: file.emlErrors }),
  };
}

/** The window: a title bar, the scenario library on the left, the run (or the rules) on the right. */
export function App() {
  const [info, setInfo] = useState<AppInfo | undefined>();
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  const [opened, setOpened] = useState<OpenedEntry[]>([]);
  const [current, setCurrent] = useState<LibraryEntry | undefined>();
  const [ruleQuery, setRuleQuery] = useState("");
  const [results, setResults] = useState<Record<string, boolean>>({});
  const [settings, setSettings] = useState<[string, string][]>([]);
  // The run on screen is a sweep's point: the run view offers the way back to the sweep.
  const [sweepPoint, setSweepPoint] = useState<LibraryEntry | undefined>();
  // "with message bodies", for every export of the run: the export bar's and File ▸ Export's (issue 22).
  const [withBodies, setWithBodies] = useState(false);
  const [exportedNote, setExportedNote] = useState<string | undefined>();
  const [snapshot, send] = useMachine(playbackMachine, { input: { create: createSession } });
  // What the window shows (the document open, the view, Compare's and Sweep's runs, the error): session/workspace.ts.
  const [workspace, tell] = useMachine(workspaceMachine);
  const { view, error, bundle, probe, compare, sweep: sweepBase, exploring } = workspace.context;
  const setView = useCallback((next: View) => tell({ type: "SHOW", view: next }), [tell]);
  const setError = useCallback((message: string) => tell({ type: "FAIL", message }), [tell]);
  const phase = phaseOf(snapshot);
  const { context } = snapshot;
  const editor = useScenarioEditor(info?.shell, setError);
  // The bytes of the run's eml: files, for its bug bundle and Compare: a live run's are its start's (those the
  // desktop app's main read next to the scenario it opened; none in the browser), an opened bundle's the bundle's.
  const bundledEmls = useMemo(() => (bundle ? bundleEmls(bundle.bundle) : undefined), [bundle]);
  const emls =
    context.source?.kind === "scenario"
      ? context.source.start.emls
      : context.source?.kind === "trace"
        ? bundledEmls
        : undefined;

  useEffect(() => {
    platform.info().then(setInfo, (e: unknown) => setError(String(e)));
    platform.listScenarios().then(setScenarios, (e: unknown) => setError(String(e)));
    // The files opened before (kept between launches; in Electron also File ▸ Open Recent).
    platform.recent.list().then(setOpened, (e: unknown) => setError(String(e)));
    return platform.recent.onChange(setOpened);
  }, [setError]);

  // The last check result of each scenario run in this window: the runs before, and the one shown.
  const shownResults =
    context.result && context.source?.kind === "scenario" && current
      ? { ...results, [current.file]: context.result.passed }
      : results;

  const run = (
    entry: LibraryEntry,
    text: string,
    file: string,
    emlFiles?: EmlFiles,
    // A sweep's point: its readings and draft numbers (as --set), and its seed.
    point?: { readonly settings: readonly (readonly [string, string])[]; readonly seed?: number | string },
    /** Opened from the lesson path: it pauses at its notes. */
    asLesson = false,
  ) => {
    setResults(shownResults);
    setCurrent(entry);
    setSweepPoint(point !== undefined ? entry : undefined);
    setSettings(point?.settings.map(([k, v]): [string, string] => [k, v]) ?? []);
    tell({ type: "OPEN_SCENARIO" });
    send({
      type: "LOAD",
      start: {
        type: "start",
        text,
        file,
        ...(point !== undefined && point.settings.length > 0 && { readings: point.settings }),
        ...(point?.seed !== undefined && { seed: point.seed }),
        mailscope: info?.version ?? __MAILSCOPE_VERSION__,
        recordBodies: true,
        ...(emlFiles?.emls !== undefined && { emls: emlFiles.emls }),
        ...(emlFiles?.emlErrors !== undefined && { emlErrors: emlFiles.emlErrors }),
      },
      description: entry.description,
      notePauses: asLesson,
    });
  };

  const select = (entry: LibraryEntry, asLesson = false) => {
    // An entry of "Opened" (the same object), not a bundled scenario of the same file name.
    const own = opened.find((f) => f === entry);
    if (own) {
      platform.recent.open(own).then(openShellFile, (e: unknown) => setError(String(e)));
      return;
    }
    platform.readScenario(entry.file).then(
      (text) => run(entry, text, `scenarios/${entry.file}`, undefined, undefined, asLesson),
      (e: unknown) => setError(String(e)),
    );
  };

  /** Lists a file under "Opened" (the browser keeps it; Electron's main has, and says so). */
  const remember = (entry: OpenedEntry) => {
    const list = platform.recent.remember(entry);
    if (list) setOpened(list);
  };

  /**
   * `path` is the file's key in the "Opened" list: its path in Electron, its name in the browser; `emlFiles`
   * are the scenario's eml: files main read next to it (Electron).
   */
  const openScenarioText = (name: string, text: string, path = name, emlFiles?: EmlFiles) => {
    const entry = entryOf({ kind: "scenario", name, path, text });
    remember(entry);
    run(entry, text, name, emlFiles);
  };

  /**
   * A file that could not be opened: its error, and nothing of the file shown before under it (its run, a
   * bundle's verdict), which the error would seem to be about (issue 22).
   */
  const cannotOpen = (message: string) => {
    setCurrent(undefined);
    send({ type: "CLOSE" });
    tell({ type: "CANNOT_OPEN", message });
  };

  const openTraceText = async (name: string, text: string, path = name) => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    // A bug bundle (its format says so) opens as its trace, with the bundle's panel above it.
    if (isBundleValue(json)) {
      const read = await readBundleValue(json);
      if (!read.ok) {
        cannotOpen(
          `${name} cannot be opened as a bug bundle: ${read.violations.map((v) => `${v.path}: ${v.message}`).join("; ")}`,
        );
        return;
      }
      remember(entryOf({ kind: "trace", name, path, text }));
      showTrace(name, read.value.trace, path, read.value);
      return;
    }
    // A probe's JSON report carries its trace; a probe's trace opens as the report it is.
    const probeReport = isProbeReport(json);
    const parsed =
      json === undefined
        ? importTrace(text)
        : importTraceValue(probeReport ? (json as { trace?: unknown }).trace : json);
    if (parsed.ok && (probeReport || isProbeTrace(parsed.value.events))) {
      remember(entryOf({ kind: "trace", name, path, text }));
      tell({ type: "OPEN_PROBE", file: name, trace: parsed.value });
      return;
    }
    if (!parsed.ok) {
      cannotOpen(
        `${name} cannot be opened as a trace: ${parsed.violations.map((v) => `${v.path}: ${v.message}`).join("; ")}`,
      );
      return;
    }
    remember(entryOf({ kind: "trace", name, path, text }));
    showTrace(name, parsed.value, path);
  };

  /** An opened trace, or a bug bundle's (`bundle`), in the run view. */
  const showTrace = (name: string, trace: Trace, path = name, bundle?: Bundle) => {
    setResults(shownResults);
    const source = trace.scenario.source;
    const summary = source !== undefined ? summarizeScenario(name, source) : undefined;
    setCurrent({ ...summary, file: path, name: trace.scenario.name, description: summary?.description ?? "" });
    const description = summary?.description ?? "";
    tell(bundle ? { type: "OPEN_BUNDLE", bundle, file: name } : { type: "OPEN_TRACE" });
    // For `npm run bench timeline`: the trace is read; from here on its events are the views' to draw.
    performance.mark("mailscope:trace-opened");
    send({ type: "OPEN_TRACE", trace, description });
  };

  const openFile = async (file: File, as?: "scenario" | "trace") => {
    const text = await file.text();
    const kind = as ?? kindOfFileName(file.name) ?? "scenario";
    if (kind === "trace") await openTraceText(file.name, text);
    else openScenarioText(file.name, text);
  };

  const openShellFile = (file: ShellFile) => {
    if (file.kind === "trace") void openTraceText(file.name, file.text, file.path);
    else openScenarioText(file.name, file.text, file.path, emlFilesOf(file));
  };

  /** A dropped file: read by main in Electron (so it joins the recent list), by the page in the browser. */
  const dropFile = (file: File) => {
    if (!platform.openDropped) return void openFile(file);
    platform.openDropped(file).then(
      (read) => (read ? openShellFile(read) : void openFile(file)),
      (e: unknown) => setError(String(e)),
    );
  };

  // The scenario editor (issue 15): a new scenario, a copy of a teaching one, an opened file; Run plays its text.
  const editNew = () => {
    editor.open(newDoc());
    setView("editor");
  };
  const editCopy = (entry: LibraryEntry) => {
    platform.readScenario(entry.file).then(
      (text) => {
        editor.open(duplicateDoc(entry.file, text));
        setView("editor");
      },
      (e: unknown) => setError(String(e)),
    );
  };
  const editOpened = (entry: LibraryEntry) => {
    const own = opened.find((f) => f.file === entry.file);
    if (!own || own.kind !== "scenario") return;
    // Read again (Electron keeps paths, not texts); main then lets the editor save over it.
    platform.recent.open(own).then(
      (file) => {
        editor.open(fileDoc(file.name, file.text, file.path, emlFilesOf(file)));
        setView("editor");
      },
      (e: unknown) => setError(String(e)),
    );
  };
  const runEdited = (text: string) => {
    const doc = editor.current?.doc;
    if (!doc) return;
    const summary = summarizeScenario(doc.name, text);
    run({ ...summary, file: doc.name }, text, doc.name, doc.emlFiles);
  };

  /** File ▸ New Scenario, Save and Save As: the editor's own New, Save and Save as, shown. */
  const scenarioCommand = (what: "new" | "save" | "save-as") => {
    if (what === "new") return editNew();
    if (!editor.current) {
      setError(
        "There is no scenario in the editor to save: start one with File ▸ New Scenario, or Duplicate or Edit one in the library.",
      );
      return;
    }
    setView("editor");
    editor.save(what === "save-as");
  };

  const save = (name: string, contents: string, type: string) => {
    platform.saveFile(name, contents, type).catch((e: unknown) => setError(String(e)));
  };

  /** An export of the run, as "with message bodies" says, and what it left out said under the export bar. */
  const exportRun = (trace: Trace, what: ExportWhat) => {
    setExportedNote(undefined);
    exportFile(trace, what, withBodies, emls)
      .then(async (f) => {
        await platform.saveFile(f.name, f.contents, f.type);
        setExportedNote(exportNote(f, trace, what, withBodies));
      })
      .catch((e: unknown) => setError(`Could not export the run: ${errorMessage(e)}`));
  };
  const exports: RunExports = {
    full: withBodies,
    onFull: (full) => {
      setWithBodies(full);
      setExportedNote(undefined);
    },
    note: exportedNote,
    onExport: exportRun,
  };

  // What the commands act on (commands/commands.ts): the player, and this window.
  const commandContext: CommandContext = {
    playback: context,
    send,
    showView: setView,
    scenario: scenarioCommand,
    open: openShellFile,
    exportRun: (what) => {
      if (context.result) exportRun({ ...context.result.trace, events: [...context.events] }, what);
    },
    refuse: setError,
    close: () => window.close(),
  };
  // The menus' commands (Electron), and the files given on the command line.
  const onCommand = useEffectEvent((command: AppCommand) => performMenuCommand(commandContext, command));
  const onPending = useEffectEvent((files: ShellFile[]) => files.forEach(openShellFile));
  useEffect(() => {
    platform.pendingFiles().then(onPending, (e: unknown) => setError(String(e)));
    return platform.onCommand(onCommand);
  }, [setError]);

  /**
   * The open buttons show the shell's dialog: main's in Electron (typed IPC), the File System Access
   * API's picker in a browser that has it; elsewhere the file input does.
   */
  const openWithShell = (e: React.MouseEvent, kind: FileKind) => {
    const dialog = platform.openDialog;
    if (!dialog) return;
    e.preventDefault();
    dialog(kind).then(
      (file) => file && openShellFile(file),
      (err: unknown) => setError(String(err)),
    );
  };

  // The player's keys (the commands' table): Space plays and pauses, → steps, L changes what a step goes to,
  // B puts a breakpoint on events like the one the run stopped at (or takes it away).
  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (ownsKey(e.target, e.key)) return;
    const asked = commandOfKey(e);
    if (asked === undefined || asked.command.enabled?.(commandContext) === false) return;
    if (asked.binding.preventDefault) e.preventDefault();
    asked.command.perform(commandContext);
  });
  useEffect(() => {
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  /** The run on screen, as Compare and Sweep start from it. */
  const baseOfRun = (playheadMs: number): CompareBase | undefined => {
    const { summary, source } = context;
    if (!summary || source?.kind !== "scenario") return undefined;
    return {
      name: summary.name,
      text: source.start.text,
      file: source.start.file ?? "scenario.yaml",
      seed: summary.seed,
      ...(source.start.emls !== undefined && { emls: source.start.emls }),
      settings,
      readings: summary.readings,
      ...(summary.constants !== undefined && { constants: summary.constants }),
      startMs: summary.startMs,
      playheadOffsetMs: Math.max(0, playheadMs - summary.startMs),
    };
  };

  const openCompare = (playheadMs: number) => {
    const base = baseOfRun(playheadMs);
    if (!base) return;
    send({ type: "PAUSE" });
    tell({ type: "COMPARE", base });
  };

  const openSweep = () => {
    const base = baseOfRun(context.summary?.startMs ?? 0);
    if (!base) return;
    send({ type: "PAUSE" });
    tell({ type: "SWEEP", base });
  };

  /** A sweep's point, in the run view (its scenario text, readings and seed). */
  const openPoint = (start: PointRunStart) => {
    const summary = summarizeScenario(start.file, start.text);
    run({ file: start.file, name: start.name, description: summary.description }, start.text, start.file, undefined, {
      settings: start.settings,
      ...(start.seed !== undefined && { seed: start.seed }),
    });
  };

  /** Compare of a sweep boundary's two sides. */
  const openBoundary = (sides: readonly [CompareSide, CompareSide]) => {
    tell({ type: "BOUNDARY", sides });
  };

  // The run's place in the "Start here" path (issue 24): the next and previous lessons open from the run view.
  const place = current && scenarios ? lessonPlace(scenarios, current) : undefined;
  // Opened from the lesson path (the welcome pane, a lesson's next or previous), a lesson is played as one: its
  // notes are breakpoints (the machine's `notePauses`). Picked in the library, it plays through (its notes still
  // shown; the box turns pausing on).
  const openLesson = (entry: LibraryEntry) => select(entry, true);
  const pickInLibrary = (entry: LibraryEntry) => select(entry);
  const lessonOfRun = place && { ...place, onOpen: openLesson };

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
        if (file) dropFile(file);
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
              accept={acceptedSuffixes("scenario").join(",")}
              onClick={(e) => openWithShell(e, "scenario")}
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void openFile(f, "scenario");
                e.target.value = "";
              }}
            />
          </label>
          <label className="button" title="A trace (.mstrace) or a bug bundle (.msbundle); .json traces open too">
            Open trace…
            <input
              type="file"
              className="visually-hidden"
              accept={acceptedSuffixes("trace").join(",")}
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
          <button aria-pressed={view === "run"} onClick={() => COMMANDS.view.perform(commandContext, "run")}>
            Scenario
          </button>
          <button aria-pressed={view === "rules"} onClick={() => COMMANDS.view.perform(commandContext, "rules")}>
            Rules
          </button>
          <button aria-pressed={view === "editor"} onClick={() => COMMANDS.view.perform(commandContext, "editor")}>
            Editor
          </button>
          <button aria-pressed={view === "explore"} onClick={() => COMMANDS.view.perform(commandContext, "explore")}>
            Explore
          </button>
          {probe && (
            <button aria-pressed={view === "probe"} onClick={() => setView("probe")}>
              Probe
            </button>
          )}
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
          onSelect={pickInLibrary}
          onNew={editNew}
          onDuplicate={editCopy}
          onEdit={editOpened}
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
          <ErrorBoundary resetKey={String(editor.current?.id)}>
            {editor.current ? (
              <Suspense fallback={<p className="muted">Loading the editor…</p>}>
                <ScenarioEditor
                  key={editor.current.id}
                  doc={editor.current.doc}
                  dirty={editor.dirty}
                  onText={editor.onText}
                  onSave={editor.save}
                  onRun={runEdited}
                  onClose={editor.close}
                />
              </Suspense>
            ) : (
              <EditorStart scenarios={scenarios} onNew={editNew} onDuplicate={editCopy} />
            )}
          </ErrorBoundary>
        </div>
        {editor.dialogs}
        {exploring && (
          <div hidden={view !== "explore"}>
            <ErrorBoundary resetKey="explore">
              <ExploreView
                mailscope={info?.version ?? __MAILSCOPE_VERSION__}
                onOpenRun={(name, text) => openScenarioText(name, text)}
                onOpenEditor={(name, text) => {
                  editor.open({ name, savedText: "", text, untitled: true });
                  setView("editor");
                }}
              />
            </ErrorBoundary>
          </div>
        )}
        {/* The Sweep view stays while other views show (a point's run, a boundary's Compare), with its results. */}
        {sweepBase && (
          <div hidden={view !== "sweep"}>
            <ErrorBoundary resetKey={sweepBase.text}>
              <Suspense fallback={<p className="muted">Loading the sweep…</p>}>
                <SweepView
                  key={`${sweepBase.file} ${sweepBase.text.length} ${JSON.stringify(sweepBase.settings)}`}
                  base={sweepBase}
                  mailscope={info?.version ?? __MAILSCOPE_VERSION__}
                  createWorker={createSimulationWorker}
                  onBack={() => setView("run")}
                  onOpenRun={openPoint}
                  onCompare={openBoundary}
                />
              </Suspense>
            </ErrorBoundary>
          </div>
        )}
        <ErrorBoundary resetKey={`${view} ${current?.file ?? ""} ${String(context.source?.kind)}`}>
          {view === "editor" || view === "explore" || view === "sweep" ? null : view === "probe" && probe ? (
            <ProbeView key={probe.file} events={probe.trace.events} file={probe.file} onRule={showRule} onSave={save} />
          ) : view === "compare" && compare ? (
            <CompareView
              key={compare.preset ? `${compare.preset[0].title} / ${compare.preset[1].title}` : "run"}
              base={compare.base}
              mailscope={info?.version ?? __MAILSCOPE_VERSION__}
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
                  rerun={(b) =>
                    rerunBundle(b, info?.version ?? __MAILSCOPE_VERSION__, (start) => createSession(start, undefined))
                  }
                />
              )}
              <RunView
                phase={phase}
                context={context}
                // A sweep's point is titled by its values; its trace has the scenario's own name.
                title={
                  sweepPoint !== undefined && sweepPoint === current
                    ? sweepPoint.name
                    : (current?.title ?? context.summary?.name ?? current?.name ?? "")
                }
                name={context.summary?.name ?? current?.name}
                lesson={lessonOfRun}
                description={context.summary?.description || current?.description || ""}
                send={send}
                commands={commandContext}
                onReading={(setting) => {
                  const next = mergeSettings(settings, setting);
                  setSettings(next);
                  send({ type: "RESTART", readings: next });
                }}
                onRule={showRule}
                onSave={save}
                exports={exports}
                onCompare={openCompare}
                onSweep={openSweep}
                {...(sweepBase &&
                  sweepPoint !== undefined &&
                  sweepPoint === current && { onBackToSweep: () => setView("sweep") })}
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
