import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

/** Save and Save As through the typed channel map, against a stand-in for Electron. */

const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
vi.mock("electron", () => ({
  ipcMain: {
    handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => unknown) => handlers.set(channel, fn),
  },
}));

const { channelValidators } = await import("./validators.ts");
const { handle } = await import("./ipc.ts");
const { saveScenario, saveScenarioAs, WritableScenarios } = await import("./handlers.ts");

const noOpen = async () => ({ canceled: true, filePaths: [] });

describe("the editor's save channels", () => {
  beforeEach(() => handlers.clear());

  it("validate their arguments: a YAML path and text for Save, a file name for Save As", () => {
    const save = channelValidators["scenario:save"];
    expect(save.safeParse(["/home/u/s.yaml", "name: s\n"]).success).toBe(true);
    expect(save.safeParse(["/home/u/.bashrc", "x"]).success).toBe(false);
    expect(save.safeParse(["/home/u/s.yaml", 7]).success).toBe(false);
    const saveAs = channelValidators["scenario:save-as"];
    expect(saveAs.safeParse(["s-copy.yaml", "name: s\n"]).success).toBe(true);
    expect(saveAs.safeParse(["../s.yaml", "x"]).success).toBe(false);
  });

  it("Save As: the dialog offers scenario files; the chosen file is written, remembered and may be saved again", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-save-as-"));
    const target = join(dir, "outage.yaml");
    const seen: unknown[] = [];
    const dialogs = {
      showOpenDialog: noOpen,
      showSaveDialog: async (_w: unknown, o: unknown) => {
        seen.push(o);
        return { canceled: false, filePath: target };
      },
    };
    const writable = new WritableScenarios();
    const remembered: unknown[] = [];
    const result = await saveScenarioAs(dialogs, undefined, "my.yaml", "name: a\n", writable, (f) =>
      remembered.push(f),
    );
    expect(result).toEqual({ saved: true, path: target });
    expect(seen[0]).toMatchObject({ defaultPath: "my.yaml", filters: [{ extensions: ["yaml", "yml"] }] });
    expect(await readFile(target, "utf8")).toBe("name: a\n");
    expect(remembered).toEqual([{ kind: "scenario", name: "outage.yaml", path: target, text: "name: a\n" }]);
    // Save writes over it now.
    expect(await saveScenario(target, "name: b\n", writable)).toEqual({ saved: true, path: target });
    expect(await readFile(target, "utf8")).toBe("name: b\n");
    const cancel = { ...dialogs, showSaveDialog: async () => ({ canceled: true }) };
    expect(await saveScenarioAs(cancel, undefined, "x.yaml", "", writable, () => undefined)).toEqual({
      saved: false,
    });
  });

  it("Save refuses a path the window was not given, and leaves the file alone", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailscope-save-"));
    const other = join(dir, "other.yaml");
    await writeFile(other, "keep\n");
    const writable = new WritableScenarios();
    await expect(saveScenario(other, "overwritten", writable)).rejects.toThrow(/other\.yaml was not opened or saved/);
    expect(await readFile(other, "utf8")).toBe("keep\n");
    writable.grant(other);
    await saveScenario(other, "saved\n", writable);
    expect(await readFile(other, "utf8")).toBe("saved\n");
  });

  it("go through handle(): bad arguments never reach the handler", async () => {
    const writable = new WritableScenarios();
    handle(
      "scenario:save",
      () => true,
      (_e, path, contents) => saveScenario(path, contents, writable),
    );
    const fn = handlers.get("scenario:save")!;
    const event = { senderFrame: { url: "app://mailscope/index.html" } };
    await expect(fn(event, "/etc/passwd", "x")).rejects.toThrow(/invalid arguments: a scenario file/);
    await expect(fn(event, "/tmp/never-given.yaml", "x")).rejects.toThrow(/was not opened or saved/);
  });
});
