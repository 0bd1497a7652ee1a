/**
 * The browser build's open dialog: the File System Access API's
 * `showOpenFilePicker` where the browser has it (Chromium), else nothing and
 * the page's `<input type=file>` opens files.
 */
import { acceptedSuffixes } from "../../app/trace/fileNames.ts";
import type { FileKind, OpenedFile } from "../../main/channels.ts";

/** The browser's open dialog: the File System Access API's picker (Chromium), when there is one. */
export interface FilePickerWindow {
  showOpenFilePicker?: (options: {
    types: { description: string; accept: Record<string, string[]> }[];
    excludeAcceptAllOption?: boolean;
    multiple?: boolean;
    id?: string;
  }) => Promise<{ getFile(): Promise<File> }[]>;
}

const PICKER_TYPES: Record<FileKind, { description: string; accept: Record<string, string[]> }[]> = {
  scenario: [{ description: "Mailscope scenario", accept: { "application/yaml": acceptedSuffixes("scenario") } }],
  // A trace (.mstrace), a bug bundle (.msbundle), or JSON written before they had extensions of their own.
  trace: [{ description: "Mailscope trace or bug bundle", accept: { "application/json": acceptedSuffixes("trace") } }],
};

/**
 * The File System Access API's open dialog for a kind of file, or undefined
 * where the browser has none (then the page's `<input type=file>` opens
 * files). A cancelled picker opens nothing.
 */
export function filePicker(win: FilePickerWindow): ((kind: FileKind) => Promise<OpenedFile | undefined>) | undefined {
  const show = win.showOpenFilePicker;
  if (typeof show !== "function") return undefined;
  return async (kind) => {
    let handles;
    try {
      handles = await show.call(win, { types: PICKER_TYPES[kind], multiple: false, id: `mailscope-${kind}` });
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") return undefined;
      throw error;
    }
    const handle = handles[0];
    if (handle === undefined) return undefined;
    const file = await handle.getFile();
    return { kind, name: file.name, path: file.name, text: await file.text() };
  };
}
