import { describe, expect, it } from "vitest";
import { keptAnswers } from "./memo.ts";

describe("kept answers (the receiver's per-delivery questions: G4 key records and keyids, POST-6 media types)", () => {
  it("G4: answers a text asked before without computing it again, and the same object", () => {
    const asked: string[] = [];
    const lengthOf = keptAnswers((text: string) => {
      asked.push(text);
      return { length: text.length };
    }, 4);
    const first = lengthOf("s1._svckey.a.example");
    expect(lengthOf("s1._svckey.a.example")).toBe(first);
    expect(asked).toEqual(["s1._svckey.a.example"]);
  });

  it("G4: keeps at most `capacity` answers, starting over when full, so forged texts cannot grow it without end", () => {
    let computed = 0;
    const upper = keptAnswers((text: string) => {
      computed++;
      return text.toUpperCase();
    }, 3);
    for (const text of ["a", "b", "c"]) upper(text);
    expect(computed).toBe(3);
    upper("d"); // full: everything before is dropped
    upper("a");
    expect(computed).toBe(5);
    upper("d");
    expect(computed).toBe(5);
  });

  it("POST-6: keeps no answer for a text longer than `maxLength`, and none that is undefined", () => {
    let computed = 0;
    const echo = keptAnswers(
      (text: string) => {
        computed++;
        return text === "none" ? undefined : text;
      },
      8,
      5,
    );
    echo("too long");
    echo("too long");
    echo("none");
    echo("none");
    expect(computed).toBe(4);
    echo("short");
    echo("short");
    expect(computed).toBe(5);
  });
});
