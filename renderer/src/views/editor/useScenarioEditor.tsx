import { useEffect, useRef, useState, type ReactNode } from "react";
import { isDirty, saveAsName, savedDoc, type EditorDoc } from "../../model/editorDoc.ts";
import { platform } from "../../platform.ts";
import "./editorShell.css";
import { errorMessage } from "../../../../app/errorMessage.ts";

/** A modal dialog (the platform's <dialog>: focus stays in it, Esc cancels). */
function Modal({ label, onCancel, children }: { label: string; onCancel: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className="editor-dialog"
      aria-label={label}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      {children}
    </dialog>
  );
}

type Ask =
  { readonly kind: "unsaved"; readonly then: () => void } | { readonly kind: "save-as"; readonly then?: () => void };

export interface ScenarioEditorState {
  /** The document in the editor and its generation (a new one makes a new editor). */
  readonly current: { readonly doc: EditorDoc; readonly id: number } | undefined;
  readonly dirty: boolean;
  /** Puts `doc` in the editor; asks first when the one there has unsaved changes. */
  open(doc: EditorDoc): void;
  /** Closes the editor's document; asks first when it has unsaved changes. */
  close(): void;
  save(as: boolean): void;
  onText(text: string): void;
  /** The dialogs to render (the unsaved-changes prompt, the browser's Save as name). */
  readonly dialogs: ReactNode;
}

/**
 * The editor's document and its saving: Save writes over the file (Electron)
 * or downloads it (browser); Save as asks where (Electron's dialog) or for a
 * name (browser); edits not saved are asked about before they would be lost —
 * another document, Close, or leaving the page (beforeunload; Electron asks
 * in main).
 */
export function useScenarioEditor(shell: "electron" | "browser" | undefined, onError: (message: string) => void) {
  const [current, setCurrent] = useState<{ doc: EditorDoc; id: number }>();
  const [dirty, setDirty] = useState(false);
  const [ask, setAsk] = useState<Ask>();
  const [nameInput, setNameInput] = useState("");
  const text = useRef("");
  const nextId = useRef(1);

  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);

  const replace = (doc: EditorDoc | undefined) => {
    setCurrent(doc && { doc, id: nextId.current++ });
    text.current = doc?.text ?? "";
    setDirty(false);
  };

  const guard = (then: () => void) => {
    if (current && isDirty(current.doc, text.current)) setAsk({ kind: "unsaved", then });
    else then();
  };

  const write = async (name: string, as: boolean): Promise<boolean> => {
    if (!current) return false;
    const contents = text.current;
    try {
      const saved = await platform.saveScenario({ name, path: current.doc.path }, contents, as);
      if (!saved) return false;
      setCurrent((c) => c && { ...c, doc: savedDoc(c.doc, contents, saved.name, saved.path) });
      setDirty(text.current !== contents);
      return true;
    } catch (e) {
      onError(`${name} was not saved: ${errorMessage(e)}`);
      return false;
    }
  };

  /** Save (or Save as); `then` runs once it is saved. */
  const save = (as: boolean, then?: () => void) => {
    if (!current) return;
    if (as && shell !== "electron") {
      // The browser has no save dialog: the name is asked here, and the file downloads.
      setNameInput(current.doc.name);
      setAsk({ kind: "save-as", ...(then && { then }) });
      return;
    }
    void write(current.doc.name, as || (current.doc.untitled && shell === "electron")).then((ok) => ok && then?.());
  };

  const onText = (t: string) => {
    text.current = t;
    const d = current ? isDirty(current.doc, t) : false;
    if (d !== dirty) setDirty(d);
  };

  let dialogs: ReactNode = null;
  if (ask?.kind === "unsaved" && current) {
    const cancel = () => setAsk(undefined);
    dialogs = (
      <Modal label="Unsaved changes" onCancel={cancel}>
        <h2>Save changes to {current.doc.name}?</h2>
        <p>The scenario in the editor has changes that are not saved. They are lost if you go on without saving.</p>
        <div className="dialog-buttons">
          <button onClick={cancel}>Cancel</button>
          <button
            onClick={() => {
              setAsk(undefined);
              ask.then();
            }}
          >
            Don’t save
          </button>
          <button
            className="primary"
            autoFocus
            onClick={() => {
              setAsk(undefined);
              save(false, ask.then);
            }}
          >
            Save
          </button>
        </div>
      </Modal>
    );
  } else if (ask?.kind === "save-as" && current) {
    const cancel = () => setAsk(undefined);
    const name = saveAsName(nameInput);
    dialogs = (
      <Modal label="Save as" onCancel={cancel}>
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            if (name === undefined) return;
            setAsk(undefined);
            void write(name, true).then((ok) => ok && ask.then?.());
          }}
        >
          <h2>Save scenario as</h2>
          <label>
            File name
            <input autoFocus value={nameInput} onChange={(e) => setNameInput(e.target.value)} />
          </label>
          <p className="muted">The browser saves it as a download{name ? ` named ${name}` : ""}.</p>
          <div className="dialog-buttons">
            <button type="button" onClick={cancel}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={name === undefined}>
              Save
            </button>
          </div>
        </form>
      </Modal>
    );
  }

  const state: ScenarioEditorState = {
    current,
    dirty,
    open: (doc) => guard(() => replace(doc)),
    close: () => guard(() => replace(undefined)),
    save: (as) => save(as),
    onText,
    dialogs,
  };
  return state;
}
