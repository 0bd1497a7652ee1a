/** The browser build opens files with the File System Access API when present, else the file input. */
import { describe, expect, it } from "vitest";
import { filePicker, type FilePickerWindow } from "./filePicker.ts";

describe("the browser's open dialog", () => {
  it("is the File System Access API's picker when the browser has one, filtered by kind", async () => {
    const asked: unknown[] = [];
    const win: FilePickerWindow = {
      showOpenFilePicker: async (options) => {
        asked.push(options);
        return [{ getFile: async () => new File(["name: mine\n"], "mine.yaml") }];
      },
    };
    const pick = filePicker(win);
    expect(pick).toBeDefined();
    expect(await pick?.("scenario")).toEqual({
      kind: "scenario",
      name: "mine.yaml",
      path: "mine.yaml",
      text: "name: mine\n",
    });
    expect(asked[0]).toMatchObject({
      multiple: false,
      types: [{ accept: { "application/yaml": [".yaml", ".yml"] } }],
    });
  });

  it("a cancelled picker opens nothing; other failures are errors", async () => {
    const cancel = filePicker({
      showOpenFilePicker: () => Promise.reject(new DOMException("The user aborted a request.", "AbortError")),
    });
    expect(await cancel?.("trace")).toBeUndefined();
    const refuse = filePicker({
      showOpenFilePicker: () => Promise.reject(new DOMException("Not allowed", "SecurityError")),
    });
    await expect(refuse?.("trace")).rejects.toThrow("Not allowed");
  });

  it("is absent where the browser has no picker: the page's <input type=file> opens files", () => {
    expect(filePicker({})).toBeUndefined();
  });
});
