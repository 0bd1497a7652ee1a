import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { OpenedFile, RecentFile } from "./channels.ts";

/**
 * Decision 0029: when main opens a scenario for the window (open dialog, Open Recent, a dropped file, the
 * command line), it reads the scenario's `eml:` files as `mailscope run` does and hands their bytes with it.
 * Electron's binary is absent here: the handlers run against a stand-in for the `electron` module.
 */
vi.mock("electron", () => ({ ipcMain: { handle: () => undefined } }));

const { isAppCommand } = await import("./channels.ts");
const { readOpenedFile } = await import("./files.ts");
const { openDropped, openRecent, openWithDialog } = await import("./handlers.ts");
const { emlReader, loadScenario, MAX_MESSAGE_BYTES } = await import("../app/sim/scenario.ts");
const { loadScenarioFile } = await import("../app/node/scenarioLoader.ts");

const EML = new TextEncoder().encode(
  "From: <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: raw\r\nMessage-ID: <hello@a.example>\r\n\r\nHi Bob\r\n",
);

function scenario(eml: string): string {
  return `name: raw
seed: 5
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example, eml: "${eml}" }
expectations:
  - { message: m1, recipient: bob@b.example, outcome: accepted }
`;
}

/** A folder with `raw.yaml` naming `eml`, and the files `files` (paths relative to the folder). */
async function folder(eml: string, files: Record<string, Uint8Array> = {}): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), "mailscope-open-eml-"));
  await mkdir(join(dir, "scenarios", "mail"), { recursive: true });
  for (const [path, bytes] of Object.entries(files)) await writeFile(join(dir, path), bytes);
  const file = join(dir, "scenarios", "raw.yaml");
  await writeFile(file, scenario(eml));
  return { dir, file };
}

/** What the run's `start` does with an opened file (app/sim/session.ts): load it with the bytes main gave. */
function loadAsTheRunDoes(file: OpenedFile) {
  return loadScenario(file.text, { file: file.name, readFile: emlReader(file.emls, file.emlErrors) });
}

describe("main reads an opened scenario's eml: files (decision 0029)", () => {
  it("POST-9: a scenario with an eml: message next to its .eml opens with its bytes, by every way of opening", async () => {
    const { file } = await folder("mail/hello.eml", { "scenarios/mail/hello.eml": EML });
    const remembered: OpenedFile[] = [];
    const remember = (f: OpenedFile) => remembered.push(f);

    const dialogs = {
      showOpenDialog: async () => ({ canceled: false, filePaths: [file] }),
      showSaveDialog: async () => ({ canceled: true }),
    };
    const viaDialog = await openWithDialog(dialogs, undefined, "scenario", remember);
    const viaDrop = await openDropped(file, remember);
    const recent: RecentFile[] = [{ kind: "scenario", name: "raw.yaml", path: file }];
    const viaRecent = await openRecent(recent, file, remember);
    const viaCommandLine = await readOpenedFile(file); // main.ts: files given on the command line or by the OS

    for (const opened of [viaDialog.opened ? viaDialog.file : undefined, viaDrop, viaRecent, viaCommandLine]) {
      expect(opened?.emls).toEqual({ "mail/hello.eml": EML });
      expect(opened?.emlErrors).toBeUndefined();
      expect(opened?.emls?.["mail/hello.eml"]).toBeInstanceOf(Uint8Array);
    }
    expect(remembered).toHaveLength(3);
    // As sent to the window (File ▸ Open Recent sends an "open" command): the renderer takes the shape.
    expect(isAppCommand({ type: "open", file: viaCommandLine })).toBe(true);
    expect(isAppCommand({ type: "open", file: { ...viaCommandLine, emls: { "mail/hello.eml": "Hi" } } })).toBe(false);
    expect(isAppCommand({ type: "open", file: { ...viaCommandLine, emlErrors: { "mail/hello.eml": 1 } } })).toBe(false);

    // The run takes the message main read, as `mailscope run` reads it from disk.
    const run = await loadAsTheRunDoes(viaCommandLine);
    const cli = await loadScenarioFile(file);
    expect(run.ok && cli.ok).toBe(true);
    if (run.ok && cli.ok) expect(run.loaded.emls).toEqual(cli.loaded.emls);
  });

  it("a missing eml: file does not fail the open: the scenario opens without its bytes, and the run names the file and why", async () => {
    const { dir, file } = await folder("mail/hello.eml");
    const opened = await readOpenedFile(file);
    expect(opened.text).toBe(scenario("mail/hello.eml"));
    expect(opened.emls).toBeUndefined();
    const where = join(dir, "scenarios", "mail", "hello.eml");
    expect(opened.emlErrors).toEqual({ "mail/hello.eml": `no such file (${where})` });
    const run = await loadAsTheRunDoes(opened);
    expect(run.ok ? [] : run.errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      `messages[0].eml: cannot read mail/hello.eml: no such file (${where})`,
    ]);
  });

  it("a FIFO named as the eml: file is refused without waiting for a writer; the scenario opens", async () => {
    const { file, dir } = await folder("mail/pipe.eml");
    execFileSync("mkfifo", [join(dir, "scenarios", "mail", "pipe.eml")]);
    // No writer is ever started: a blocking open would wait forever.
    const opened = await readOpenedFile(file);
    expect(opened.emls).toBeUndefined();
    expect(opened.emlErrors).toEqual({ "mail/pipe.eml": "not a regular file (it is a FIFO)" });
  });

  it("an eml: file over the limit of `mailscope run` (100 MiB) is refused at the limit; the scenario opens", async () => {
    const { file, dir } = await folder("mail/huge.eml");
    const huge = join(dir, "scenarios", "mail", "huge.eml");
    await writeFile(huge, "");
    await truncate(huge, MAX_MESSAGE_BYTES + 1); // sparse: nothing written, nothing read
    const opened = await readOpenedFile(file);
    expect(opened.emls).toBeUndefined();
    expect(opened.emlErrors).toEqual({
      "mail/huge.eml": `larger than ${MAX_MESSAGE_BYTES} bytes (the limit for messages)`,
    });
  });

  it("a path with ../ resolves against the scenario's folder as `mailscope run` resolves it: the folder above is read", async () => {
    // `mailscope run` (app/node/scenarioLoader.ts) resolves an eml: path against the scenario's folder and
    // refuses none: ../ leaves it, an absolute path is itself. Main reads the same file, no stricter.
    const { dir, file } = await folder("../shared/hello.eml", {});
    await mkdir(join(dir, "shared"));
    await writeFile(join(dir, "shared", "hello.eml"), EML);
    const opened = await readOpenedFile(file);
    expect(opened.emls).toEqual({ "../shared/hello.eml": EML });
    const cli = await loadScenarioFile(file);
    expect(cli.ok && cli.loaded.emls.get("../shared/hello.eml")).toEqual(EML);
  });

  it("a scenario that does not validate, and a trace, come without eml: files (mailscope run reads none of theirs)", async () => {
    const { dir } = await folder("mail/hello.eml", { "scenarios/mail/hello.eml": EML });
    const broken = join(dir, "scenarios", "broken.yaml");
    await writeFile(broken, `${scenario("mail/hello.eml")}unknownField: 1\n`);
    const opened = await readOpenedFile(broken);
    expect(opened.emls).toBeUndefined();
    expect(opened.emlErrors).toBeUndefined();
    const trace = join(dir, "scenarios", "a.mailscope-trace.json");
    await writeFile(trace, "{}");
    expect(await readOpenedFile(trace)).toEqual({
      kind: "trace",
      name: "a.mailscope-trace.json",
      path: trace,
      text: "{}",
    });
  });
});
