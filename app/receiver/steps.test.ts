import { describe, expect, it } from "vitest";
import { checkOrder, receiverChecks } from "./checks.ts";
import { recipientSteps } from "./recipientSteps.ts";
import { requestSteps } from "./requestSteps.ts";

describe("the receiver's checks written once: one step per check of checks.ts (G10)", () => {
  it("G10: the request-level steps are the R checks, written in checks.ts's order", () => {
    expect(Object.keys(requestSteps)).toEqual(checkOrder("R"));
    expect(checkOrder("R")[0]).toBe("version-path");
  });

  it("SVC-7 ERR-17 ERR-18: the per-recipient steps are the P checks, written in checks.ts's order, store last", () => {
    expect(Object.keys(recipientSteps)).toEqual(checkOrder("P"));
    expect(checkOrder("P").at(-1)).toBe("store");
  });

  it("G10: every check of checks.ts has its step, and the two levels do not overlap", () => {
    expect([...checkOrder("R"), ...checkOrder("P")].sort()).toEqual(receiverChecks.map((c) => c.id).sort());
  });
});
