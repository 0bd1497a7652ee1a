/**
 * Opened files are listed under "Opened" and kept between launches — in the browser in
 * local storage (with their texts); in Electron the list is main's, the one File ▸ Open Recent shows.
 */
import { describe, expect, it } from "vitest";
import {
  entriesOfRecent,
  entryOf,
  loadOpened,
  MAX_KEPT_TRACE_CHARS,
  rememberOpened,
  type OpenedEntry,
} from "./recent.ts";

function memoryStorage(limitChars = Infinity): Pick<Storage, "getItem" | "setItem"> {
  const items = new Map<string, string>();
  return {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => {
      if (v.length > limitChars) throw new DOMException("full", "QuotaExceededError");
      items.set(k, v);
    },
  };
}

const scenario = (n: number): OpenedEntry =>
  entryOf({
    kind: "scenario",
    name: `s${n}.yaml`,
    path: `s${n}.yaml`,
    text: `name: s${n}\ndescription: number ${n}\n`,
  });

describe("the Opened list (browser: local storage)", () => {
  it("newest first, once each, at most ten, and read back after a reload", () => {
    const storage = memoryStorage();
    let opened: OpenedEntry[] = [];
    for (let i = 0; i < 12; i++) opened = rememberOpened(opened, scenario(i), storage);
    opened = rememberOpened(opened, scenario(4), storage);
    expect(opened.map((f) => f.name)).toEqual(["s4", "s11", "s10", "s9", "s8", "s7", "s6", "s5", "s3", "s2"]);
    expect(opened[0]).toMatchObject({
      kind: "scenario",
      file: "s4.yaml",
      fileName: "s4.yaml",
      description: "number 4",
    });
    expect(loadOpened(storage)).toEqual(opened);
  });

  it("keeps traces too; one too large for storage is listed for this window only", () => {
    const storage = memoryStorage();
    const trace = entryOf({
      kind: "trace",
      name: "run.mailscope-trace.json",
      path: "run.mailscope-trace.json",
      text: "{}",
    });
    const big = entryOf({
      kind: "trace",
      name: "big.json",
      path: "big.json",
      text: "x".repeat(MAX_KEPT_TRACE_CHARS + 1),
    });
    let opened = rememberOpened([], scenario(1), storage);
    opened = rememberOpened(opened, trace, storage);
    opened = rememberOpened(opened, big, storage);
    expect(opened.map((f) => f.file)).toEqual(["big.json", "run.mailscope-trace.json", "s1.yaml"]);
    expect(loadOpened(storage).map((f) => [f.kind, f.file])).toEqual([
      ["trace", "run.mailscope-trace.json"],
      ["scenario", "s1.yaml"],
    ]);
  });

  it("when storage is full, the oldest are dropped until the list fits", () => {
    const one = JSON.stringify([scenario(1)]).length;
    const storage = memoryStorage(one * 2 + 10);
    let opened: OpenedEntry[] = [];
    for (let i = 0; i < 5; i++) opened = rememberOpened(opened, scenario(i), storage);
    expect(opened).toHaveLength(5);
    expect(loadOpened(storage).map((f) => f.name)).toEqual(["s4", "s3"]);
  });

  it("anything unreadable in storage is no file; lists of before traces were kept read as scenarios", () => {
    const storage = memoryStorage();
    storage.setItem("mailscope.opened", "{not json");
    expect(loadOpened(storage)).toEqual([]);
    storage.setItem(
      "mailscope.opened",
      JSON.stringify([{ file: 1 }, { file: "old.yaml", name: "old", description: "", text: "name: old\n" }]),
    );
    expect(loadOpened(storage)).toEqual([
      {
        kind: "scenario",
        file: "old.yaml",
        fileName: "old.yaml",
        name: "old",
        title: "old",
        description: "",
        summary: "",
        text: "name: old\n",
      },
    ]);
    expect(loadOpened(undefined)).toEqual([]);
  });
});

describe("the Opened list (Electron: main's recent list)", () => {
  it("shows main's recent files by their scenario name, keyed by path", () => {
    expect(
      entriesOfRecent([
        { kind: "scenario", name: "a.yaml", path: "/x/a.yaml", title: "alpha", description: "the first" },
        { kind: "trace", name: "t.mailscope-trace.json", path: "/x/t.mailscope-trace.json" },
      ]),
    ).toEqual([
      { kind: "scenario", file: "/x/a.yaml", fileName: "a.yaml", name: "alpha", description: "the first" },
      {
        kind: "trace",
        file: "/x/t.mailscope-trace.json",
        fileName: "t.mailscope-trace.json",
        name: "t.mailscope-trace.json",
        description: "",
      },
    ]);
  });
});
