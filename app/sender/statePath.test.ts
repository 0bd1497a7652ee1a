import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { initialStatePath, statePath, statePaths } from "./statePath.ts";

describe("state paths in the trace: dotted from the root, leaf included", () => {
  it("a top-level state is its own name; a nested one names every state down to the leaf", () => {
    expect(statePath("retryScheduled")).toBe("retryScheduled");
    expect(statePath({ attemptingOverService: "posting" })).toBe("attemptingOverService.posting");
    expect(statePath({ a: { b: "c" } })).toBe("a.b.c");
  });

  it("parallel regions give one path each, in order", () => {
    expect(statePaths({ p: { left: "x", right: { deep: "y" } } })).toEqual(["p.left.x", "p.right.deep.y"]);
    expect(statePath({ p: { left: "x", right: "y" } })).toBe("p.left.x,p.right.y");
  });

  it("the initial leaf is read from the definition, without the machine's id", () => {
    const machine = createMachine({
      id: "delivery",
      initial: "outer",
      states: { outer: { initial: "inner", states: { inner: {}, other: {} } }, done: { type: "final" } },
    });
    expect(initialStatePath(machine)).toBe("outer.inner");
    expect(initialStatePath(createMachine({ id: "flat", initial: "only", states: { only: {} } }))).toBe("only");
  });
});
