/**
 * Opening things in the window: a scenario of the library (as a lesson or not), a file (picked, dropped,
 * from the menus, given on the command line, reopened from "Opened"), the editor's text, a sweep's point.
 * It reads the file (model/openedFile.ts says what a trace file is), tells the workspace what it opened and
 * the player what to play (docs/decisions/0140), and keeps what the library shows of the runs: the entry on
 * screen, the last check result of each scenario run in this window, a sweep's point's readings.
 */
import { useState, type MouseEvent } from "react";
import type { FileKind, OpenedFile as ShellFile } from "../../../main/channels.ts";
import { kindOfFileName } from "../../../app/trace/fileNames.ts";
import type { Bundle } from "../../../app/trace/bundle.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { summarizeScenario } from "../../../app/sim/scenarioSummary.ts";
import type { EmlFiles } from "../model/editorDoc.ts";
import type { LibraryEntry } from "../model/library.ts";
import { readTraceFile } from "../model/openedFile.ts";
import { startOfScenario, type PointSettings } from "../model/runStart.ts";
import type { PointRunStart } from "../model/sweep.ts";
import { platform } from "../platform.ts";
import { entryOf, type OpenedEntry } from "../recent.ts";
import type { PlaybackContext, PlaybackEvent } from "../session/machine.ts";
import type { WorkspaceEvent } from "../session/workspace.ts";

/** The eml: files main read with a scenario it opened (Electron); undefined when there are none. */
export function emlFilesOf(file: ShellFile): EmlFiles | undefined {
  if (file.emls === undefined && file.emlErrors === undefined) return undefined;
  return {
    ...(file.emls !== undefined && { emls: file.emls }),
    ...(file.emlErrors !== undefined && { emlErrors: file.emlErrors }),
  };
}

export interface OpeningDeps {
  readonly context: Pick<PlaybackContext, "result" | "source">;
  readonly send: (event: PlaybackEvent) => void;
  readonly tell: (event: WorkspaceEvent) => void;
  readonly mailscope: string;
  /** The files opened before ("Opened"), and how the list changes. */
  readonly opened: readonly OpenedEntry[];
  readonly setOpened: (list: OpenedEntry[]) => void;
  readonly setError: (message: string) => void;
}

export function useOpening({ context, send, tell, mailscope, opened, setOpened, setError }: OpeningDeps) {
  const [current, setCurrent] = useState<LibraryEntry | undefined>();
  const [results, setResults] = useState<Record<string, boolean>>({});
  const [settings, setSettings] = useState<[string, string][]>([]);
  // The run on screen is a sweep's point: the run view offers the way back to the sweep.
  const [sweepPoint, setSweepPoint] = useState<LibraryEntry | undefined>();

  // The last check result of each scenario run in this window: the runs before, and the one shown.
  const shownResults =
    context.result && context.source?.kind === "scenario" && current
      ? { ...results, [current.file]: context.result.passed }
      : results;

  /** Plays `text` (file `file`) as `entry`; a sweep's point with its readings and seed; a lesson pausing at its notes. */
  const run = (
    entry: LibraryEntry,
    text: string,
    file: string,
    emlFiles?: EmlFiles,
    point?: PointSettings,
    asLesson = false,
  ) => {
    setResults(shownResults);
    setCurrent(entry);
    setSweepPoint(point !== undefined ? entry : undefined);
    setSettings(point?.settings.map(([k, v]): [string, string] => [k, v]) ?? []);
    tell({ type: "OPEN_SCENARIO" });
    send({
      type: "LOAD",
      start: startOfScenario(text, file, mailscope, emlFiles, point),
      description: entry.description,
      notePauses: asLesson,
    });
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

  const openTraceText = async (name: string, text: string, path = name) => {
    const read = await readTraceFile(name, text);
    if (read.kind === "cannot-open") {
      // Its error, and nothing of the file shown before under it (its run, a bundle's verdict), which the
      // error would seem to be about.
      setCurrent(undefined);
      send({ type: "CLOSE" });
      tell({ type: "CANNOT_OPEN", message: read.message });
      return;
    }
    remember(entryOf({ kind: "trace", name, path, text }));
    if (read.kind === "probe") tell({ type: "OPEN_PROBE", file: name, trace: read.trace });
    else showTrace(name, read.trace, path, read.kind === "bundle" ? read.bundle : undefined);
  };

  const openFile = async (file: File, as?: FileKind) => {
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

  /**
   * The open buttons show the shell's dialog: main's in Electron (typed IPC), the File System Access
   * API's picker in a browser that has it; elsewhere the file input does.
   */
  const openWithShell = (e: MouseEvent, kind: FileKind) => {
    const dialog = platform.openDialog;
    if (!dialog) return;
    e.preventDefault();
    dialog(kind).then(
      (file) => file && openShellFile(file),
      (err: unknown) => setError(String(err)),
    );
  };

  /** A scenario of the library (or of "Opened"); from the lesson path, played as a lesson (it pauses at its notes). */
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

  /** A sweep's point, in the run view (its scenario text, readings and seed). */
  const openPoint = (start: PointRunStart) => {
    const summary = summarizeScenario(start.file, start.text);
    run({ file: start.file, name: start.name, description: summary.description }, start.text, start.file, undefined, {
      settings: start.settings,
      ...(start.seed !== undefined && { seed: start.seed }),
    });
  };

  return {
    current,
    shownResults,
    settings,
    setSettings,
    /** The run on screen is this sweep's point. */
    isSweepPoint: sweepPoint !== undefined && sweepPoint === current,
    sweepPoint,
    run,
    select,
    openScenarioText,
    openFile,
    openShellFile,
    dropFile,
    openWithShell,
    openPoint,
  };
}
