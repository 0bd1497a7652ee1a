import { describe, expect, it } from "vitest";
import { loadOpened, rememberOpened, type OpenedFile } from "./recent.ts";

function memoryStorage(): Pick<Storage, "getItem" | "setItem"> {
  const items = new Map<string, string>();
  return { getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v) };
}

const file = (n: number): OpenedFile => ({ file: `s${n}.yaml`, name: `s${n}`, description: "", text: `name: s${n}\n` });

describe("opened scenario files, kept between visits", () => {
  it("newest first, once each, at most ten, and read back", () => {
    const storage = memoryStorage();
    let opened: OpenedFile[] = [];
    for (let i = 0; i < 12; i++) opened = rememberOpened(opened, file(i), storage);
    opened = rememberOpened(opened, file(4), storage);
    expect(opened.map((f) => f.name)).toEqual(["s4", "s11", "s10", "s9", "s8", "s7", "s6", "s5", "s3", "s2"]);
    expect(loadOpened(storage)).toEqual(opened);
  });

  it("anything unreadable in storage is no file", () => {
    const storage = memoryStorage();
    storage.setItem("mailscope.opened", "{not json");
    expect(loadOpened(storage)).toEqual([]);
    storage.setItem("mailscope.opened", JSON.stringify([{ file: 1 }, file(1)]));
    expect(loadOpened(storage)).toEqual([file(1)]);
    expect(loadOpened(undefined)).toEqual([]);
  });
});
