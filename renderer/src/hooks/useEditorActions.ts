/**
 * The scenario editor's ways in: a new scenario, a copy of a teaching one, an opened file, a text
 * from elsewhere (Explore's counterexample); File ▸ New Scenario, Save and Save As (the editor's own New, Save
 * and Save as, shown); and Run, which plays the editor's text.
 */
import { summarizeScenario } from "../../../app/sim/scenarioSummary.ts";
import { duplicateDoc, fileDoc, newDoc, type EditorDoc, type EmlFiles } from "../model/editorDoc.ts";
import type { LibraryEntry } from "../model/library.ts";
import { platform } from "../platform.ts";
import type { OpenedEntry } from "../recent.ts";
import type { View } from "../session/workspace.ts";
import type { ScenarioEditorState } from "../views/editor/useScenarioEditor.tsx";
import { emlFilesOf } from "./useOpening.ts";

export interface EditorActionDeps {
  readonly editor: Pick<ScenarioEditorState, "current" | "open" | "save">;
  readonly opened: readonly OpenedEntry[];
  readonly showView: (view: View) => void;
  readonly setError: (message: string) => void;
  /** Plays a scenario's text as the entry given. */
  readonly run: (entry: LibraryEntry, text: string, file: string, emlFiles?: EmlFiles) => void;
}

export function useEditorActions({ editor, opened, showView, setError, run }: EditorActionDeps) {
  const edit = (doc: EditorDoc) => {
    editor.open(doc);
    showView("editor");
  };
  const editNew = () => edit(newDoc());
  const editCopy = (entry: LibraryEntry) => {
    platform.readScenario(entry.file).then(
      (text) => edit(duplicateDoc(entry.file, text)),
      (e: unknown) => setError(String(e)),
    );
  };
  const editOpened = (entry: LibraryEntry) => {
    const own = opened.find((f) => f.file === entry.file);
    if (!own || own.kind !== "scenario") return;
    // Read again (Electron keeps paths, not texts); main then lets the editor save over it.
    platform.recent.open(own).then(
      (file) => edit(fileDoc(file.name, file.text, file.path, emlFilesOf(file))),
      (e: unknown) => setError(String(e)),
    );
  };
  /** A text from elsewhere, untitled. */
  const editText = (name: string, text: string) => edit({ name, savedText: "", text, untitled: true });
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
    showView("editor");
    editor.save(what === "save-as");
  };
  return { editNew, editCopy, editOpened, editText, runEdited, scenarioCommand };
}
