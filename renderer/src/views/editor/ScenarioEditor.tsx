import { EditorView } from "@codemirror/view";
import { useEffect, useRef, useState } from "react";
import { problemCount, scenarioDiagnostics, type EditorDiagnostic } from "../../model/editorDiagnostics.ts";
import type { EditorDoc } from "../../model/editorDoc.ts";
import { editorState, type EditorHost } from "./codemirror.ts";
import "./editor.css";

export interface ScenarioEditorProps {
  readonly doc: EditorDoc;
  readonly dirty: boolean;
  /** Every edit: the editor's whole text. */
  readonly onText: (text: string) => void;
  readonly onSave: (as: boolean) => void;
  /** Runs the text (it parsed without a problem). */
  readonly onRun: (text: string) => void;
  readonly onClose: () => void;
}

const isMac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = isMac ? "⌘" : "Ctrl+";

/** The scenario editor: a toolbar, the YAML text (CodeMirror) and the parser's problems. */
export function ScenarioEditor({ doc, dirty, onText, onSave, onRun, onClose }: ScenarioEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const problemsRef = useRef<HTMLElement>(null);
  const [problems, setProblems] = useState<readonly EditorDiagnostic[] | undefined>();
  const [runRefused, setRunRefused] = useState(false);

  // The host's latest callbacks, for CodeMirror's keymap and plugins (made once per document).
  const latest = useRef({ doc, onText, onSave, onRun });
  useEffect(() => {
    latest.current = { doc, onText, onSave, onRun };
  });

  const run = () => {
    const text = view.current?.state.doc.toString() ?? "";
    const found = scenarioDiagnostics(text, latest.current.doc.name);
    if (found.length > 0) {
      setProblems(found);
      setRunRefused(true);
      problemsRef.current?.focus();
      return;
    }
    setRunRefused(false);
    latest.current.onRun(text);
  };
  const runRef = useRef(run);
  useEffect(() => {
    runRef.current = run;
  });

  useEffect(() => {
    const parent = host.current;
    if (!parent) return;
    const editorHost: EditorHost = {
      fileName: () => latest.current.doc.name,
      onText: (text) => latest.current.onText(text),
      onProblems: (found) => {
        setProblems(found);
        if (found.length === 0) setRunRefused(false);
      },
      save: (as) => latest.current.onSave(as),
      run: () => runRef.current(),
    };
    const created = new EditorView({ state: editorState(latest.current.doc.text, editorHost), parent });
    view.current = created;
    latest.current.onText(latest.current.doc.text);
    return () => {
      created.destroy();
      view.current = undefined;
    };
  }, []);

  const goTo = (p: EditorDiagnostic) => {
    const v = view.current;
    if (!v) return;
    v.dispatch({ selection: { anchor: p.from, head: p.to }, scrollIntoView: true });
    v.focus();
  };

  return (
    <section
      aria-label="Scenario editor"
      className="scenario-editor"
      onKeyDown={(e) => {
        // The toolbar and the problems list: the same keys as in the text.
        if (e.defaultPrevented || !(e.ctrlKey || e.metaKey)) return;
        if (e.key === "s" || e.key === "S") {
          e.preventDefault();
          onSave(e.shiftKey);
        } else if (e.key === "Enter") {
          e.preventDefault();
          run();
        }
      }}
    >
      <header className="editor-toolbar">
        <h2>
          <span className="muted">Editing</span> <span data-testid="editor-file">{doc.name}</span>
          {dirty && (
            <span className="unsaved" data-testid="unsaved" title="Unsaved changes">
              ● unsaved
            </span>
          )}
        </h2>
        <div className="editor-actions">
          <button className="primary" onClick={run} title={`Run the text as it is (${mod}Enter)`}>
            Run
          </button>
          <button onClick={() => onSave(false)} title={`Save (${mod}S)`}>
            Save
          </button>
          <button onClick={() => onSave(true)} title={`Save as (${mod}Shift+S)`}>
            Save as…
          </button>
          <button onClick={onClose}>Close</button>
        </div>
      </header>
      <p className="muted editor-help">
        Completion: Ctrl+Space (keys and values from the scenario schema); hover a key for its docs. {mod}S saves, {mod}
        Enter runs. Esc then Tab leaves the text.
      </p>
      <div className="editor-host" ref={host} />
      <section aria-label="Problems" className="editor-problems" ref={problemsRef} tabIndex={-1} data-testid="problems">
        <h3 aria-live="polite">
          {problems === undefined ? "Checking…" : problemCount(problems.length)}
          {runRefused && problems && problems.length > 0 && (
            <span className="run-refused"> — fix {problems.length === 1 ? "it" : "them"} to run the scenario</span>
          )}
        </h3>
        {problems && problems.length > 0 && (
          <ul>
            {problems.map((p) => (
              <li key={p.text}>
                <button className="problem" data-line={p.line} onClick={() => goTo(p)}>
                  <code>{p.text}</code>
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}
